"""numpy's names over npy-mmap: load, save, savez, savez_compressed,
open_memmap; and what numpy lacks: mapped() with close(), append, live
arrays, take, remote arrays."""

from __future__ import annotations

import ast
import errno
import gc
import io
import math
import operator
import os
import pickle
import pickletools
import sys
import warnings
import weakref
import zipfile
from collections.abc import Iterator, Mapping
from typing import Any, Literal, overload

import numpy as np

from . import _convert, _native

__all__ = [
    "load",
    "save",
    "savez",
    "savez_compressed",
    "open_memmap",
    "memmap",
    "NpzFile",
    "MappedFile",
    "mapped",
    "append",
    "take",
    "LiveArray",
    "open_live",
    "RemoteArray",
    "open_remote",
    "read_header",
]

_ZIP_PREFIX = b"PK\x03\x04"
_ZIP_SUFFIX = b"PK\x05\x06"
_MAGIC = b"\x93NUMPY"
_ENCODINGS = ("ASCII", "latin1", "bytes")

Locking = None | float | Literal["blocking", "nonblocking"]
Sharing = Literal["numpy", "strict"]


def _strict(sharing: str) -> bool:
    """Whether ``sharing`` asks for strict mappings (the one check of the word)."""
    if sharing not in ("numpy", "strict"):
        raise ValueError(f"sharing must be 'numpy' or 'strict', not {sharing!r}")
    return sharing == "strict"


def _is_url(file: Any) -> bool:
    return isinstance(file, str) and _native.is_url(file)


def _path(file: Any) -> str | None:
    """The path of a str or path-like, else None (a file object)."""
    if isinstance(file, (str, bytes, os.PathLike)):
        path = os.fspath(file)
        return os.fsdecode(path)
    return None


class _Closing:
    """``with`` support for objects with a ``close()``."""

    def close(self) -> None:  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class memmap(np.memmap):
    """An array over a file mapped by npy-mmap (what ``load(..., mmap_mode=...)``
    and ``open_memmap`` return): an ``np.memmap`` whose mapping and byte-range
    locks live exactly as long as this array or any view of it.

    Made directly, it is ``np.memmap`` for binary files without a header
    (token files): ``memmap(filename, dtype=np.uint8, mode='r+', offset=0,
    shape=None, order='C')``, numpy's arguments and results, with
    npy-mmap's locks and planner underneath (``windows`` and ``take`` read
    it without the GIL). A URL gives a :class:`RemoteArray` of the object.
    ``.npy`` stays the format npy_mmap writes: ``mode='w+'`` is refused
    (create with :func:`open_memmap`).

    Delete the last view (``del a``) to release the file; for an explicit
    ``close()`` that refuses while views live, use :func:`mapped`.
    """

    def __new__(
        subtype,
        filename: Any,
        dtype: Any = np.uint8,
        mode: str = "r+",
        offset: int = 0,
        shape: Any = None,
        order: str = "C",
        *,
        locking: Locking = None,
        sharing: Sharing = "numpy",
    ):
        mode = _MODE_NAMES.get(mode, mode)
        if mode not in ("r", "r+", "c", "w+"):
            all_modes = ["r", "c", "r+", "w+", *_MODE_NAMES]
            raise ValueError(f"mode must be one of {all_modes!r} (got {mode!r})")
        if mode == "w+":
            raise ValueError(
                "npy_mmap writes .npy files, not headerless ones: create with "
                "npy_mmap.open_memmap(filename, mode='w+', dtype=..., shape=...)"
            )
        dt = np.dtype(dtype)
        if shape is not None:
            shape = (operator.index(shape),) if np.isscalar(shape) else tuple(operator.index(n) for n in shape)
        headerless = (_convert.descr_of(dt), operator.index(offset), shape, order == "F")
        if _is_url(filename):
            return RemoteArray(filename, _headerless=headerless)
        path = _path(filename)
        if path is None:
            raise ValueError("npy_mmap.memmap needs a file name or a URL, not a file object")
        mapped = _open_mapped(path, mode, 10000, None, locking, None, _strict(sharing), headerless)
        result = _memmap(mapped, mode, path)
        result.offset = int(offset)
        return result

    def flush(self) -> None:
        """Write changes to disk and wait for it (``msync``); a no-op unless
        the mapping is read-write."""
        if self._mmap is not None:
            _native.flush(self._mmap)

    # numpy's memmap demotes results (arithmetic, reductions, fancy
    # indexing) to ndarray or a scalar only for its own exact type
    # (``type(self) is not memmap``), so a subclass does it itself: a result
    # that does not share the mapping's memory is not a memmap and keeps
    # nothing of the mapping alive.
    def __array_wrap__(self, arr, context=None, return_scalar=False):
        arr = np.ndarray.__array_wrap__(self, arr, context)
        if self is arr or type(self) is not memmap:
            return arr
        if return_scalar:
            return arr[()]
        return arr.view(np.ndarray)

    def __getitem__(self, index):
        res = np.ndarray.__getitem__(self, index)
        if type(res) is memmap and res._mmap is None:
            return res.view(type=np.ndarray)
        return res


def _memmap(mapped: tuple, mode: str, filename: str) -> memmap:
    buffer, descr, shape, fortran, offset, _rows = mapped
    array = _convert.view(buffer, _convert.dtype_of(descr), shape, fortran)
    result = array.view(memmap)
    result._mmap = buffer
    result.filename = os.path.abspath(filename)
    result.offset = offset
    result.mode = {"r": "r", "r+": "r+", "w+": "r+", "c": "c"}.get(mode, mode)
    return result


def _check_encoding(encoding: str) -> None:
    if encoding not in _ENCODINGS:
        raise ValueError("encoding must be 'ASCII', 'latin1', or 'bytes'")


@overload
def load(
    file: Any,
    mmap_mode: None = None,
    allow_pickle: bool = False,
    fix_imports: bool = True,
    encoding: str = "ASCII",
    *,
    max_header_size: int = 10000,
    locking: Locking = None,
    sharing: Sharing = "numpy",
) -> np.ndarray | NpzFile: ...


@overload
def load(
    file: Any,
    mmap_mode: Literal["r", "r+", "c", "readonly", "readwrite", "copyonwrite"],
    allow_pickle: bool = False,
    fix_imports: bool = True,
    encoding: str = "ASCII",
    *,
    max_header_size: int = 10000,
    locking: Locking = None,
    sharing: Sharing = "numpy",
) -> memmap | NpzFile | RemoteArray: ...


def load(
    file: Any,
    mmap_mode: Literal[None, "r", "r+", "c", "readonly", "readwrite", "copyonwrite"] = None,
    allow_pickle: bool = False,
    fix_imports: bool = True,
    encoding: str = "ASCII",
    *,
    max_header_size: int = 10000,
    locking: Locking = None,
    sharing: Sharing = "numpy",
) -> Any:
    """Load arrays from ``.npy`` or ``.npz`` files, as ``numpy.load`` does.

    Parameters
    ----------
    file : str, path-like, URL or file object
        The file to read. A URL (``s3://``, ``gs://``, ``az://``, ``http(s)://``)
        is read from object storage.
    mmap_mode : {None, 'r', 'r+', 'c'}, optional
        Map the file instead of reading it (see ``numpy.memmap``). Mappings
        share the file as numpy's do (any number of ``'r'``, ``'r+'`` and
        ``'c'`` mappings, in any process), and take npy-mmap's byte-range
        locks so that Rust code holding references to the same bytes and
        these exclude each other (docs/SAFETY.md). For an ``.npz``, ``'r'`` maps every stored
        member without copying (numpy ignores ``mmap_mode`` there). For a
        URL, any mode returns a lazy :class:`RemoteArray`.
    allow_pickle : bool, optional
        Allow object arrays. They are decoded by npy-core's restricted
        unpickler, which reads only what ``np.save`` writes for object arrays
        and never runs code; plain pickle files are refused.
    fix_imports : bool, optional
        Accepted for compatibility; unused.
    encoding : {'ASCII', 'latin1', 'bytes'}, optional
        How Python 2 strings in object arrays are decoded.
    max_header_size : int, optional
        The largest header accepted (numpy's default, 10000). As in numpy,
        ``allow_pickle=True`` (trusting the file) lifts it.
    locking : None, float, 'blocking' or 'nonblocking', optional
        How long to wait for another process's conflicting lock: None waits
        up to 10 s, then raises ``BlockingIOError`` naming what holds it.
    sharing : {'numpy', 'strict'}, optional
        'numpy' (the default) shares as numpy does; 'strict' excludes every
        writer of the mapped bytes, in any process, while the mapping lives
        (and a strict ``'r+'`` every reader too), as Rust references need.

    Returns
    -------
    ndarray, memmap, NpzFile or RemoteArray
        An ``.npy`` gives an ndarray, or with ``mmap_mode`` a :class:`memmap`;
        an ``.npz`` an :class:`NpzFile`; a URL with ``mmap_mode`` a lazy
        :class:`RemoteArray`.

    Raises
    ------
    OSError
        The file cannot be read (``FileNotFoundError`` and so on, with the path).
    ValueError
        The file is not a valid ``.npy`` (numpy's wording), or holds objects
        and ``allow_pickle`` is False.
    EOFError
        The file is empty.
    """
    _check_encoding(encoding)
    mode = _load_mode(mmap_mode)
    limit = _header_limit(max_header_size, allow_pickle)
    if _is_url(file):
        if mode is not None:
            return RemoteArray(file, max_header_size=limit)
        remote = _native.Remote(file, limit, allow_pickle, encoding)
        if remote.descr == "'|O'":
            # A pickle has no rows to range over: fetch it whole, decode it.
            parts, _used = _native.load_bytes(_native.download(file), limit, allow_pickle, encoding)
            return _convert.from_parts(*parts)
        return _convert.from_parts(*remote.read_all())
    path = _path(file)
    if path is None:
        if mode is not None and not _stream_is_zip(file):
            raise ValueError(
                "Filename must be a string or a path-like object.  Memmap cannot use existing file handles."
            )
        # numpy ignores mmap_mode for an npz read from a file object.
        return _load_stream(file, allow_pickle, encoding, max_header_size, fix_imports)
    if mode is not None:
        # The common case first: an .npy mapped in one native call (its
        # magic is checked there); other files are sniffed only on failure.
        try:
            result = _memmap(_open_mapped(path, mode, limit, None, locking, None, _strict(sharing)), mode, path)
        except ValueError:
            with open(path, "rb") as fid:
                if fid.read(len(_MAGIC)) == _MAGIC:
                    raise
        else:
            with open(path, "rb") as fid:
                _warn_if_python2(fid.read(_HEAD_READ))
            return result
    with open(path, "rb") as fid:
        head = fid.read(_HEAD_READ)
    if not head:
        raise EOFError("No data left in file")
    magic = head[: len(_MAGIC)]
    if magic.startswith((_ZIP_PREFIX, _ZIP_SUFFIX)):
        return NpzFile(
            path,
            mmap_mode=mode,
            allow_pickle=allow_pickle,
            encoding=encoding,
            max_header_size=max_header_size,
            fix_imports=fix_imports,
        )
    if magic == _MAGIC:
        if mode is None:
            result = _convert.from_parts(*_native.load(path, limit, allow_pickle, encoding, locking))
        else:
            result = _memmap(_open_mapped(path, mode, limit, None, locking, None, _strict(sharing)), mode, path)
        _warn_if_python2(head)
        return result
    return _refuse_pickle(allow_pickle, path)


def _open_mapped(path: str, mode: str, *args: Any) -> tuple:
    """``_native.open_mapped``, with a directory as ``IsADirectoryError``
    (as ``open()`` says it) rather than npy-mmap's "not a regular file"."""
    try:
        return _native.open_mapped(path, mode, *args)
    except OSError as error:
        if error.errno == errno.EINVAL and os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path) from None
        raise


# How much of a file's beginning is read to sniff it (magic, and a Python 2
# header for the warning): one page, as cheap as reading six bytes.
_HEAD_READ = 4096

# numpy.memmap's modes and their long names.
_MODE_NAMES = {"readonly": "r", "copyonwrite": "c", "readwrite": "r+", "write": "w+"}


def _load_mode(mmap_mode: Any) -> str | None:
    """load's mmap_mode as 'r', 'r+' or 'c' (None: no mapping)."""
    if mmap_mode is None:
        return None
    mode = _MODE_NAMES.get(mmap_mode, mmap_mode)
    if mode not in ("r", "r+", "c", "w+"):
        # numpy.memmap's own words for a mode it does not know.
        raise ValueError(f"mode must be one of {['r', 'c', 'r+', 'w+', *_MODE_NAMES]} (got {mmap_mode!r})")
    if mode == "w+":
        # numpy's load truncates the file to 0 bytes, then fails with
        # "TypeError: object of type 'NoneType' has no len()": refuse first.
        raise ValueError(
            f"mmap_mode={mmap_mode!r} would create (truncate) the file, which load cannot do: "
            "use 'r', 'r+' or 'c' to map an existing file, or open_memmap(..., mode='w+', "
            "dtype=..., shape=...) to create one"
        )
    return mode


def _header_limit(max_header_size: int, allow_pickle: bool) -> int:
    """numpy's rule: ``allow_pickle=True`` trusts the file, so lifts
    ``max_header_size`` (npy-core's header parser is linear in its input)."""
    return sys.maxsize if allow_pickle else max_header_size


_PYTHON2_HEADER = (
    "Reading `.npy` or `.npz` file required additional header parsing as it was created on Python 2. "
    "Save the file again to speed up loading and avoid this warning."
)


def _warn_if_python2(head: bytes) -> None:
    """numpy's UserWarning for a header written by Python 2 (a ``2L`` long in
    the shape), which npy-core reads as numpy does."""
    if len(head) < 10 or not head.startswith(_MAGIC) or head[6] not in (1, 2):
        return
    width = 2 if head[6] == 1 else 4
    length = int.from_bytes(head[8 : 8 + width], "little")
    text = head[8 + width : 8 + width + length]
    if b"L" not in text:
        return
    try:
        ast.literal_eval(text.decode("latin1"))
    except SyntaxError:
        warnings.warn(_PYTHON2_HEADER, UserWarning, stacklevel=3)
    except (ValueError, TypeError, MemoryError, RecursionError):
        pass


def _stream_is_zip(fid: Any) -> bool:
    """Whether a file object holds an npz at its position (left there)."""
    try:
        start = fid.tell()
        magic = fid.read(len(_MAGIC))
        fid.seek(start)
    except (OSError, ValueError, AttributeError):
        return False
    return magic.startswith((_ZIP_PREFIX, _ZIP_SUFFIX))


def _refuse_pickle(allow_pickle: bool, name: str) -> Any:
    if not allow_pickle:
        raise ValueError(
            "This file contains pickled (object) data. If you trust the file you can load it "
            "unsafely using the `allow_pickle=` keyword argument or `pickle.load()`."
        )
    raise pickle.UnpicklingError(
        f"Failed to interpret file {name!r} as a pickle: npy_mmap does not load plain pickles "
        "(unpickling can run code); if you trust the file, use pickle.load()"
    )


def _load_stream(fid: Any, allow_pickle: bool, encoding: str, max_header_size: int, fix_imports: bool = True) -> Any:
    """np.load of a file object: one .npy from its position (the stream is
    left just after it, as numpy leaves it, so several arrays saved into
    one stream, even a pipe, load one by one), or an npz (the rest)."""
    limit = _header_limit(max_header_size, allow_pickle)
    magic = _read_exactly(fid, len(_MAGIC))
    if not magic:
        raise EOFError("No data left in file")
    if magic.startswith((_ZIP_PREFIX, _ZIP_SUFFIX)):
        return NpzFile(
            magic + fid.read(),
            allow_pickle=allow_pickle,
            encoding=encoding,
            max_header_size=max_header_size,
            fix_imports=fix_imports,
            _bytes=True,
        )
    if magic != _MAGIC:
        return _refuse_pickle(allow_pickle, getattr(fid, "name", "<stream>"))
    # The header first (its length is in the prefix), then exactly the data.
    head = magic + _read_exactly(fid, 2)
    width = 2 if head[6:7] == b"\x01" else 4
    head += _read_exactly(fid, width)
    if len(head) == len(_MAGIC) + 2 + width:
        length = int.from_bytes(head[len(_MAGIC) + 2 :], "little")
        if length <= limit * 4 + 64:
            head += _read_exactly(fid, length)
    descr, shape, _fortran, _offset = _native.parse_header(head, limit, allow_pickle)
    _warn_if_python2(head)
    start = _position(fid) if descr == "'|O'" else None
    if descr != "'|O'":
        data = head + _read_exactly(fid, _convert.dtype_of(descr).itemsize * math.prod(shape))
    elif start is not None:
        # A pickle's length is known only once decoded: read the rest,
        # then put the stream back just after the pickle's STOP.
        data = head + fid.read()
    else:
        data = head + _pickle_bytes(fid)
    parts, used = _native.load_bytes(data, limit, allow_pickle, encoding)
    if start is not None:
        fid.seek(start + used - len(head))
    return _convert.from_parts(*parts)


def _position(fid: Any) -> int | None:
    """A seekable stream's position; None for a pipe or socket."""
    try:
        if hasattr(fid, "seekable") and not fid.seekable():
            return None
        return fid.tell()
    except (OSError, ValueError, AttributeError):
        return None


def _read_exactly(fid: Any, count: int) -> bytes:
    """``count`` bytes of a stream (fewer only at its end): a pipe's
    ``read`` may return less than asked."""
    chunks = []
    while count > 0:
        chunk = fid.read(min(count, 1 << 24))
        if not chunk:
            break
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def _pickle_bytes(fid: Any) -> bytes:
    """The bytes of the one pickle at a pipe's position, up to its STOP
    opcode and no further: the opcodes are walked with ``pickletools``
    (which parses, it never runs anything)."""
    recorder = _Recorder(fid)
    _pickle_end(recorder)
    return b"".join(recorder.chunks)


def _pickle_end(stream: Any) -> int | None:
    """Where the pickle at ``stream``'s start ends (after STOP); None when
    it is not a well-formed pickle (the unpickler then says what is wrong)."""
    try:
        for opcode, _arg, _pos in pickletools.genops(stream):
            if opcode.name == "STOP":
                return stream.tell()
    except (ValueError, EOFError, UnicodeDecodeError):
        return None
    return None


class _Recorder:
    """A stream wrapper that keeps what was read (for pickletools)."""

    def __init__(self, fid: Any) -> None:
        self._fid = fid
        self.chunks: list[bytes] = []
        self._pos = 0

    def read(self, n: int = -1) -> bytes:
        data = _read_exactly(self._fid, n) if n >= 0 else self._fid.read()
        self.chunks.append(data)
        self._pos += len(data)
        return data

    def readline(self) -> bytes:
        data = self._fid.readline()
        self.chunks.append(data)
        self._pos += len(data)
        return data

    def tell(self) -> int:
        return self._pos


def _header_args(array: np.ndarray) -> tuple[str, tuple[int, ...], bool]:
    fortran = _convert.saved_order(array)
    return _convert.descr_of(array.dtype), tuple(array.shape), fortran


def save(file: Any, arr: Any, allow_pickle: bool = True, fix_imports: Any = None) -> None:
    """Save an array to a ``.npy`` file, byte for byte as ``numpy.save`` does.

    Parameters
    ----------
    file : str, path-like, URL or file object
        Where to write. ``.npy`` is appended to a path that lacks it. A path
        is written to a temporary file renamed over it (a reader that mapped
        the old file keeps it; nothing is truncated in place). A URL uploads
        to object storage (no object appears if the upload fails).
    arr : array_like
        The array.
    allow_pickle : bool, optional
        Allow object arrays (written with npy-core's pickler, as numpy
        pickles them; only values its unpickler reads back are accepted).
    fix_imports : optional
        Accepted for compatibility; unused.

    Raises
    ------
    ValueError
        An object array with ``allow_pickle=False``.
    TypeError
        An object array holding a value npy_mmap cannot write.
    """
    array = np.asanyarray(arr)
    descr, shape, fortran = _header_args(array)
    values = _object_values(array, fortran, allow_pickle)
    if values is None:
        _warn_format(descr, shape, fortran)
    if values is not None:
        if _is_url(file):
            _native.upload_objects(file, shape, fortran, values)
            return
        path = _path(file)
        if path is None:
            file.write(_native.object_npy_bytes(shape, fortran, values))
            return
        _native.save_objects(_npy_name(path), shape, fortran, values)
        return
    data = _convert.data_bytes(array, fortran)
    if _is_url(file):
        _native.upload(file, descr, shape, fortran, data)
        return
    path = _path(file)
    if path is None:
        file.write(_native.header_bytes(descr, shape, fortran))
        file.write(data.data)
        return
    _native.save(_npy_name(path), descr, shape, fortran, data)


_FORMAT_WARNINGS = {
    # numpy's words, typo included ("beread").
    2: "Stored array in format 2.0. It can only beread by NumPy >= 1.9",
    3: "Stored array in format 3.0. It can only be read by NumPy >= 1.17",
}


def _warn_format(descr: str, shape: tuple[int, ...], fortran: bool) -> None:
    """numpy's UserWarning when the header needs format 2.0 (longer than
    65535 bytes) or 3.0 (a character outside latin-1)."""
    if len(descr) < 65000 and descr.isascii():
        return  # version 1.0 for sure: no need to build the header
    major = _native.header_bytes(descr, shape, fortran)[6]
    if major in _FORMAT_WARNINGS:
        warnings.warn(_FORMAT_WARNINGS[major], UserWarning, stacklevel=3)


def _object_values(array: np.ndarray, fortran: bool, allow_pickle: bool) -> list | None:
    """An object array's values in its saved order; None for other arrays."""
    if not array.dtype.hasobject:
        return None
    if not allow_pickle:
        raise ValueError("Object arrays cannot be saved when allow_pickle=False")
    if array.dtype != object:
        raise TypeError("npy_mmap writes object arrays of dtype object, not records with object fields")
    return list(array.ravel(order="F" if fortran else "C"))


def _npy_name(path: str) -> str:
    return path if path.endswith(".npy") else path + ".npy"


def _savez(file: Any, args: tuple, kwds: dict, compressed: bool, allow_pickle: bool) -> None:
    named = dict(kwds)
    for i, value in enumerate(args):
        key = f"arr_{i}"
        if key in named:
            raise ValueError(f"Cannot use un-named variables and keyword {key}")
        named[key] = value
    path = _path(file)
    if path is not None and not path.endswith(".npz"):
        path += ".npz"
    members = []
    for key, value in named.items():
        array = np.asanyarray(value)
        descr, shape, fortran = _header_args(array)
        values = _object_values(array, fortran, allow_pickle)
        if values is None:
            _warn_format(descr, shape, fortran)
        members.append((_member_name(key), array, descr, shape, fortran, values))
    writer = _native.ArchiveWriter(path, compressed)
    for (key, name), array, descr, shape, fortran, values in members:
        if name is not None:
            # A NUL in the key: zipfile (so numpy) names the member by what
            # precedes it, ".npy" lost; the member still holds the .npy.
            if values is not None:
                content = _native.object_npy_bytes(shape, fortran, values)
            else:
                content = _native.header_bytes(descr, shape, fortran) + _convert.data_bytes(array, fortran).tobytes()
            writer.add_raw(name, content)
        elif values is not None:
            writer.add_objects(key, shape, fortran, values)
        else:
            writer.add(key, descr, shape, fortran, _convert.data_bytes(array, fortran))
    data = writer.finish()
    if path is None:
        file.write(data)


def _member_name(key: str) -> tuple[str, str | None]:
    """A savez key and, when the zip member cannot be named ``key + '.npy'``,
    the name numpy's zipfile gives it (cut at the first NUL); a name too
    long for a zip header is a ValueError (numpy: ``struct.error``)."""
    name = (key + ".npy").split("\x00", 1)[0]
    size = len(name.encode("utf-8", "surrogateescape"))
    if size > 0xFFFF:
        raise ValueError(
            f"cannot save {key[:20]!r}... ({len(key)} characters): a zip member name holds at most "
            f"65535 bytes, and {name[:20]!r}... is {size}"
        )
    return key, (name if name != key + ".npy" else None)


def savez(file: Any, *args: Any, allow_pickle: bool = True, **kwds: Any) -> None:
    """Save several arrays into an uncompressed ``.npz``, byte for byte as
    ``numpy.savez`` does (members stored, so ``load(..., mmap_mode='r')``
    maps them without copying).

    Parameters
    ----------
    file : str, path-like or file object
        ``.npz`` is appended to a path that lacks it; the archive appears
        under its name only once complete.
    *args, **kwds : array_like
        Arrays: keyword arrays first, then positional ones as ``arr_0``, ...
    allow_pickle : bool, optional
        Allow object arrays.
    """
    _savez(file, args, kwds, False, allow_pickle)


def savez_compressed(file: Any, *args: Any, allow_pickle: bool = True, **kwds: Any) -> None:
    """Save several arrays into a deflated ``.npz``, byte for byte as
    ``numpy.savez_compressed`` does. Parameters as :func:`savez`."""
    _savez(file, args, kwds, True, allow_pickle)


class NpzFile(_Closing, Mapping):
    """A lazy ``.npz`` archive, as ``numpy.lib.npyio.NpzFile``: nothing is
    read until a member is asked for. Opened with ``mmap_mode='r'``, every
    stored ``.npy`` member is a read-only view of the archive's mapping
    (zero copy); compressed members are read into memory.

    Attributes
    ----------
    files : list of str
        The member names, one trailing ``.npy`` removed.
    f : object
        Attribute access to members: ``npz.f.x`` is ``npz['x']``.
    zip : zipfile.ZipFile or None
        The archive as a ``zipfile.ZipFile`` (opened on first use, as a
        second reader; None once closed).
    fid : file object or None
        The archive's file when ``load`` opened it from a path (None for a
        file object the caller owns, and once closed), as numpy's.
    allow_pickle, max_header_size, pickle_kwargs
        What ``load`` was given, as numpy's attributes.
    """

    # As numpy's: safe in __del__/__exit__ even if __init__ failed.
    fid = None
    _zip = None
    _archive = None
    _MAX_REPR_ARRAY_COUNT = 5

    def __init__(
        self,
        source: Any,
        *,
        mmap_mode: str | None = None,
        allow_pickle: bool = False,
        encoding: str = "ASCII",
        max_header_size: int = 10000,
        fix_imports: bool = True,
        _bytes: bool = False,
    ) -> None:
        self._closed = False
        self._name = "<bytes>" if _bytes else source
        self._source = source
        self._bytes = _bytes
        self.allow_pickle = allow_pickle
        self.max_header_size = max_header_size
        self.pickle_kwargs = {"encoding": encoding, "fix_imports": fix_imports}
        limit = _header_limit(max_header_size, allow_pickle)
        if _bytes:
            self._archive = _native.NpzReader.from_bytes(source, limit, allow_pickle, encoding)
        elif mmap_mode in ("r", "readonly"):
            self._archive = _native.MappedArchive(source, limit, allow_pickle, encoding)
        else:
            self._archive = _native.NpzReader(source, limit, allow_pickle, encoding)
        if not _bytes:
            # numpy's np.load keeps the file it opened as ``fid``.
            self.fid = open(source, "rb")  # noqa: SIM115 - closed by close()
        self.files = list(self._archive.keys())
        self._names = list(self._archive.member_names())
        self.f = _Attributes(self)

    @property
    def zip(self) -> zipfile.ZipFile | None:
        """The archive as a ``zipfile.ZipFile`` (None once closed)."""
        if self._zip is None and not self._closed:
            self._zip = zipfile.ZipFile(io.BytesIO(self._source) if self._bytes else self.fid)
        return self._zip

    def __getitem__(self, key: str) -> Any:
        if not isinstance(key, str) or (key not in self.files and key not in self._names):
            raise KeyError(f"{key} is not a file in the archive")
        kind, value = self._archive.get(key)
        if kind == "raw":
            return value
        return _convert.from_parts(*value)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (key in self.files or key in self._names)

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def keys(self):  # noqa: D102 - Mapping's
        return super().keys()

    def get(self, key: str, default: Any = None) -> Any:
        """``D[k]`` if ``k`` is in the archive, else ``default``."""
        return super().get(key, default)

    def close(self) -> None:
        """Close the archive and its file (member arrays already returned
        stay valid). ``zip`` and ``fid`` become None, as in numpy."""
        self._closed = True
        if self._zip is not None:
            self._zip.close()
            self._zip = None
        if self.fid is not None:
            self.fid.close()
            self.fid = None
        if self._archive is not None:
            self._archive.close()
        self.f = None  # numpy breaks the reference cycle the same way

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing to report to at collection
            pass

    def __repr__(self) -> str:
        keys = ", ".join(self.files[: self._MAX_REPR_ARRAY_COUNT])
        more = "..." if len(self.files) > self._MAX_REPR_ARRAY_COUNT else ""
        name = self._name if isinstance(self._name, str) else "object"
        return f"NpzFile {name!r} with keys: {keys}{more}"


class _Attributes:
    def __init__(self, npz: NpzFile) -> None:
        self._npz = npz

    def __getattr__(self, key: str) -> Any:
        try:
            return self._npz[key]
        except KeyError:
            raise AttributeError(key) from None

    def __dir__(self) -> list[str]:
        return list(self._npz.files)


def open_memmap(
    filename: Any,
    mode: str = "r+",
    dtype: Any = None,
    shape: tuple[int, ...] | None = None,
    fortran_order: bool = False,
    version: tuple[int, int] | None = None,
    *,
    max_header_size: int = 10000,
    reserve: bool = False,
    locking: Locking = None,
    sharing: Sharing = "numpy",
) -> memmap:
    """Open a ``.npy`` file as a memory-mapped array, as
    ``numpy.lib.format.open_memmap`` does.

    Parameters
    ----------
    filename : str or path-like
        The file.
    mode : {'r+', 'r', 'w+', 'c'}, optional
        'w+' creates (replacing an existing file by a rename, never truncating
        it under another mapping) with ``dtype`` (default float64), ``shape``
        and ``fortran_order``; the data reads as zeros.
    dtype, shape, fortran_order, version
        For 'w+', as numpy.
    max_header_size : int, optional
        The largest header accepted.
    reserve : bool, optional
        For 'w+': allocate every disk block now, so that a full disk is an
        ``OSError`` here instead of a SIGBUS while the array is filled.
    locking : None, float, 'blocking' or 'nonblocking', optional
        How long to wait for another process's conflicting lock.
    sharing : {'numpy', 'strict'}, optional
        As for :func:`load`.

    Returns
    -------
    memmap
        Alive (with its locks) as long as it or any view of it is.
    """
    path = _path(filename)
    if path is None:
        raise ValueError(
            "Filename must be a string or a path-like object.  Memmap cannot use existing file handles."
        )
    mode = _MODE_NAMES.get(mode, mode)
    if "w" in mode:
        dt = np.dtype(np.float64 if dtype is None else dtype)
        if dt.hasobject:
            raise ValueError("Array can't be memory-mapped: Python objects in dtype.")
        if shape is None:
            raise TypeError("open_memmap(mode='w+') needs a shape")
        # numpy.memmap's rule: an int or a tuple of ints (operator.index:
        # a float is a TypeError, numpy integers are fine).
        dims = shape if isinstance(shape, (tuple, list)) else (shape,)
        shape = tuple(operator.index(n) for n in dims)
        if any(n < 0 for n in shape):
            raise ValueError("negative dimensions are not allowed")
        major = None
        if version is not None:
            if tuple(version) not in ((1, 0), (2, 0), (3, 0)):
                raise ValueError(f"we only support format version (1,0), (2,0), and (3,0), not {version}")
            major = version[0]
        descr = _convert.descr_of(dt)
        if major is None:
            _warn_format(descr, shape, bool(fortran_order))
        created = _native.create(
            path, descr, shape, bool(fortran_order), reserve, locking, major, _strict(sharing)
        )
        return _memmap(created, "w+", path)
    return _memmap(
        _open_mapped(path, mode, max_header_size, None, locking, None, _strict(sharing)), mode, path
    )


class MappedFile(_Closing):
    """A mapped ``.npy`` file with an explicit lifetime (:func:`mapped`).

    ``array`` is a numpy view of the mapping. ``close()`` (or leaving a
    ``with`` block) unmaps the file and releases its locks at once, and
    raises ``BufferError`` while anything else still reaches the mapping
    (numpy arrays over it, however made), instead of leaving them pointing
    at unmapped memory.
    """

    def __init__(self, mapped: tuple, mode: str, path: str) -> None:
        self._buffer, self._descr, self._shape, self._fortran, self.offset, self.rows = mapped
        self.mode = mode
        self.filename = path
        self._array: memmap | None = None

    @property
    def array(self) -> memmap:
        """The mapped data (a window's rows for a window)."""
        if self._array is None:
            self._array = _memmap(
                (self._open_buffer(), self._descr, self._shape, self._fortran, self.offset, self.rows),
                self.mode,
                self.filename,
            )
        return self._array

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """numpy's protocol: ``copy=True`` copies (never the mapping itself),
        ``copy=False`` refuses a dtype change with numpy's ``ValueError``."""
        return _convert.array_protocol(self.array, dtype, copy)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` released the mapping."""
        return self._buffer is None

    @property
    def views(self) -> int:
        """How many numpy arrays (memoryviews) view the mapping now."""
        return 0 if self._buffer is None else self._buffer.exports

    def _open_buffer(self) -> Any:
        if self._buffer is None:
            raise ValueError(f"I/O operation on closed mapping of {self.filename}")
        return self._buffer

    def flush(self) -> None:
        """Write changes to disk and wait (read-write mappings)."""
        _native.flush(self._open_buffer())

    def advise(self, advice: str) -> None:
        """Tell the kernel how the data will be read: 'normal', 'random',
        'sequential', 'willneed', 'dontneed', 'populate_read', 'populate_write'."""
        _native.advise(self._open_buffer(), advice)

    def close(self) -> None:
        """Unmap the file and release its locks now.

        The mapping is released only if nothing else reaches it: the bytes
        stay mapped for as long as any object can reach their address
        (``array`` and its views, arrays made with ``np.ndarray(buffer=...)``
        over it, its buffer object), so no array ever outlives its mapping.

        Raises
        ------
        BufferError
            While anything else reaches the mapping: delete those arrays
            first. The mapping is then left open as it was.
        """
        if self._buffer is None:
            return
        self._array = None
        probe = weakref.ref(self._buffer)
        self._buffer = None
        if probe() is not None:
            # Reference cycles are freed by the collector, not at once.
            gc.collect()
        if probe() is not None:
            self._buffer = probe()
            raise BufferError(
                f"cannot close the mapping of {self.filename}: numpy arrays (or other objects) "
                f"that reach it are still alive ({self._buffer.exports} buffer export(s) now); "
                "delete them (del array) first"
            )

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"mode={self.mode!r}"
        return f"<npy_mmap.MappedFile {self.filename!r} {state}>"


def mapped(
    filename: Any,
    mode: Literal["r", "r+", "c"] = "r",
    *,
    rows: tuple[int, int] | None = None,
    max_header_size: int = 10000,
    locking: Locking = None,
    advice: str | None = None,
    sharing: Sharing = "numpy",
) -> MappedFile:
    """Map a ``.npy`` file (or a window of its rows) with an explicit lifetime.

    Parameters
    ----------
    filename : str or path-like
    mode : {'r', 'r+', 'c'}
    rows : (start, stop), optional
        Map only these rows (along the growth axis): each worker of a pool
        maps its own share, and read-write windows of disjoint rows lock
        disjoint bytes, so they write in parallel.
    max_header_size : int, optional
    locking : None, float, 'blocking' or 'nonblocking', optional
    advice : str, optional
        ``madvise`` hint given at open (e.g. 'random' for scattered reads).
    sharing : {'numpy', 'strict'}, optional
        As for :func:`load`.

    Returns
    -------
    MappedFile
        Use as a context manager; ``.array`` is the numpy view.

    Examples
    --------
    >>> with npy_mmap.mapped("big.npy") as m:  # doctest: +SKIP
    ...     total = m.array.sum()
    """
    path = _path(filename)
    if path is None:
        raise ValueError("Filename must be a string or a path-like object.")
    mode = {"readonly": "r", "readwrite": "r+", "copyonwrite": "c"}.get(mode, mode)
    window = None if rows is None else (int(rows[0]), int(rows[1]))
    return MappedFile(
        _open_mapped(path, mode, max_header_size, window, locking, advice, _strict(sharing)), mode, path
    )


def _file_header(path: str, max_header_size: int = 10000) -> tuple[np.dtype, tuple[int, ...], bool, int]:
    with open(path, "rb") as fid:
        head = fid.read(min(max_header_size, 1 << 24) + 12)
    descr, shape, fortran, offset = _native.parse_header(head, max_header_size, True)
    return _convert.dtype_of(descr), tuple(shape), fortran, offset


def read_header(filename: Any, *, max_header_size: int = 10000) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    """A ``.npy`` file's header without touching its data: ``(shape,
    fortran_order, dtype, data_offset)``, as numpy's ``read_array_header_1_0``
    plus where the data starts. One read of the file's first bytes.
    """
    path = _path(filename)
    if path is None:
        raise ValueError("read_header needs a path")
    dtype, shape, fortran, offset = _file_header(path, max_header_size)
    return shape, fortran, dtype, offset


def append(file: Any, rows: Any, *, locking: Locking = None) -> int:
    """Append rows to a ``.npy`` file in place (numpy has no equivalent).

    The header's shape is rewritten in place (numpy leaves room for it) and
    the data written after the old data, under the file's exclusive lock:
    readers and writers using npy-mmap wait, and never see a torn file.

    Parameters
    ----------
    file : str or path-like
    rows : array_like
        Rows with the file's dtype and row shape (one row is accepted too).
        Lists are converted to the file's dtype; arrays must have it.

    Returns
    -------
    int
        The number of rows the file now has.
    """
    path = _path(file)
    if path is None:
        raise ValueError("append needs a path")
    dtype, shape, fortran, _offset = _file_header(path)
    array = rows if isinstance(rows, np.ndarray) else np.asarray(rows, dtype=dtype)
    if array.ndim == len(shape) - 1:
        array = array[..., np.newaxis] if fortran else array[np.newaxis]
    if fortran:
        row_shape = tuple(array.shape[:-1])
        data = np.asfortranarray(array).T.reshape(-1).view(np.uint8) if array.size else np.empty(0, np.uint8)
    else:
        row_shape = tuple(array.shape[1:])
        data = _convert.data_bytes(array, False)
    return _native.append(path, _convert.descr_of(array.dtype), row_shape, data, locking)


def take(a: np.ndarray, indices: Any, axis: int | None = None) -> np.ndarray:
    """``numpy.take`` for mapped arrays, gathering with the GIL released.

    On a read-only mapping (``load(..., mmap_mode='r')``, an npz member),
    the gather runs in Rust without the GIL, so other Python threads go on
    (and a cold file's page faults do not hold them up). Anything else is
    handed to ``numpy.take``.

    Parameters
    ----------
    a : ndarray
    indices : array_like of int
        Negative indices count from the end.
    axis : None or 0
        None gathers from the flattened array, 0 gathers rows.
    """
    found = _convert.native_buffer(a) if isinstance(a, np.ndarray) else None
    if found is None or axis not in (None, 0) or not a.flags.c_contiguous or a.ndim == 0:
        return np.take(a, indices, axis=axis)
    buffer, offset = found
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu":
        return np.take(a, indices, axis=axis)
    idx64 = np.ascontiguousarray(idx, dtype=np.int64)
    if axis is None:
        width, count, shape = a.dtype.itemsize, a.size, idx.shape
    else:
        width = a.dtype.itemsize * math.prod(a.shape[1:])
        count, shape = a.shape[0], idx.shape + a.shape[1:]
    if width == 0:
        return np.take(a, indices, axis=axis)
    out = _native.take(buffer, offset, width, count, idx64.reshape(-1))
    if out is None:
        return np.take(a, indices, axis=axis)
    return _convert.view(out, a.dtype, shape, False)


def _flat_indices(indices: Any, shape: tuple[int, ...], order: str) -> np.ndarray:
    """The flat positions of ``add.at``-style indices (an int array, a
    boolean mask, or a tuple of them, one per axis), every one checked
    before anything is added, with numpy's errors: a float index is an
    ``IndexError``, a mask selects where it is True."""
    key = indices if isinstance(indices, tuple) else (indices,)
    arrays: list[np.ndarray] = []
    for item in key:
        array = np.asarray(item)
        if array.dtype == bool:
            axis = len(arrays)
            for i, n in enumerate(array.shape):
                if axis + i >= len(shape) or shape[axis + i] != n:
                    size = shape[axis + i] if axis + i < len(shape) else 0
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {axis + i}; size of axis "
                        f"is {size} but size of corresponding boolean axis is {n}"
                    )
            arrays.extend(np.nonzero(array))
        elif array.dtype.kind in "iu":
            arrays.append(array)
        else:
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if len(arrays) > len(shape):
        raise IndexError(
            f"too many indices for array: array is {len(shape)}-dimensional, but {len(arrays)} were indexed"
        )
    if len(arrays) < len(shape):
        raise TypeError("index a multi-dimensional live array with a tuple of index arrays, one per axis")
    checked = []
    for axis, (array, n) in enumerate(zip(arrays, shape, strict=True)):
        if array.dtype.kind == "u" and array.size and array.max() >= n:
            raise IndexError(f"index {array.max()} is out of bounds for axis {axis} with size {n}")
        array = array.astype(np.int64)
        bad = (array < -n) | (array >= n)
        if bad.any():
            raise IndexError(f"index {array[bad].flat[0]} is out of bounds for axis {axis} with size {n}")
        checked.append(np.where(array < 0, array + n, array))
    if not checked:
        return np.zeros(1, dtype=np.int64)  # a 0-d array: its one element
    return np.ravel_multi_index(np.broadcast_arrays(*checked), shape, order=order)


class LiveArray(_Closing):
    """An ``.npy`` file of integers or floats mapped for sharing while it
    changes, between threads and processes (Python or Rust): updates are
    atomic, snapshots never tear an element. See :func:`open_live`."""

    def __init__(self, path: str, rows: tuple[int, int] | None, locking: Locking) -> None:
        self._live = _native.Live(path, rows, locking)
        self.dtype = _convert.dtype_of(self._live.descr)
        self.shape = tuple(self._live.shape)
        self._fortran = self._live.fortran
        self.filename = path

    def add(self, indices: Any, values: Any) -> None:
        """Atomically add ``values`` at ``indices`` (like ``np.add.at``),
        with the GIL released.

        Parameters
        ----------
        indices : int array, or tuple of int arrays (one per axis)
        values : array_like, broadcast to the indices
        """
        flat = _flat_indices(indices, self.shape, "F" if self._fortran else "C")
        vals = np.broadcast_to(np.asarray(values, dtype=self.dtype), flat.shape).ravel()
        vals = np.ascontiguousarray(vals).astype(self.dtype.newbyteorder("="), copy=False)
        flat = np.ascontiguousarray(flat, dtype=np.int64).ravel()
        self._live.add(flat.tobytes(), vals.tobytes())

    def snapshot(self) -> np.ndarray:
        """A copy of every element, each read with one atomic load."""
        return _convert.view(self._live.snapshot(), self.dtype.newbyteorder("="), self.shape, self._fortran)

    def flush(self) -> None:
        """Write changes to disk and wait (durability; others see them at once)."""
        self._live.flush()

    def close(self) -> None:
        """Unmap the file and release its locks now."""
        self._live.close()


def open_live(filename: Any, *, rows: tuple[int, int] | None = None, locking: Locking = None) -> LiveArray:
    """Map an existing ``.npy`` of integers or floats (native byte order)
    for live sharing: counters, histograms, "row ready" flags.

    Live mappings of the same bytes are admitted together, in any process;
    plain mappings (``load(..., mmap_mode=...)``) of those bytes are refused
    while they live (they would see writes without atomics).
    """
    path = _path(filename)
    if path is None:
        raise ValueError("open_live needs a path")
    return LiveArray(path, None if rows is None else (int(rows[0]), int(rows[1])), locking)


class RemoteArray:
    """An ``.npy`` array in object storage, opened lazily (one ranged request
    for the header). Indexing the first axis makes ranged requests for just
    those rows; scattered rows that lie close together share a request.

    Examples
    --------
    >>> a = npy_mmap.open_remote("s3://bucket/big.npy")  # doctest: +SKIP
    >>> a[1000:2000]  # one GET of exactly these rows  # doctest: +SKIP
    """

    def __init__(self, url: str, *, max_header_size: int = 10000, _headerless: tuple | None = None) -> None:
        self._remote = _native.Remote(url, max_header_size, headerless=_headerless)
        self.url = url
        self.dtype = _convert.dtype_of(self._remote.descr)
        self.shape = tuple(self._remote.shape)
        self.ndim = len(self.shape)
        self._fortran = self._remote.fortran

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """numpy's protocol. The data must be downloaded into new memory,
        so ``copy=False`` raises numpy's ``ValueError`` (as a Dask array
        does); otherwise the download is the copy."""
        if copy is False:
            raise ValueError(_convert.NO_COPY)
        return _convert.array_protocol(self.read(), dtype, copy, fresh=True)

    def read(self) -> np.ndarray:
        """The whole array."""
        return _convert.from_parts(*self._remote.read_all())

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` (first axis) in one ranged request."""
        return _convert.from_parts(*self._remote.read_rows(start, stop))

    def __getitem__(self, key: Any) -> Any:
        if self._fortran or self.ndim == 0:
            return self.read()[key]
        rest: tuple = ()
        if isinstance(key, tuple):
            key, rest = (key[0], key[1:]) if key else (slice(None), ())
        n = self.shape[0]
        if isinstance(key, (int, np.integer)):
            i = int(key) + n if key < 0 else int(key)
            if not 0 <= i < n:
                raise IndexError(f"index {key} is out of bounds for axis 0 with size {n}")
            row = self.rows(i, i + 1)[0]
            return row[rest] if rest else row
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step == 1:
                block = self.rows(start, max(start, stop))
            else:
                wanted = list(range(start, stop, step))
                block = _convert.from_parts(*self._remote.read_rows_at(wanted)) if wanted else self.rows(0, 0)
        else:
            idx = np.asarray(key)
            if idx.dtype == bool:
                idx = np.flatnonzero(idx)
            idx = np.where(idx < 0, idx + n, idx)
            if idx.size and (idx.min() < 0 or idx.max() >= n):
                raise IndexError(f"index out of bounds for axis 0 with size {n}")
            flat = _convert.from_parts(*self._remote.read_rows_at([int(i) for i in idx.ravel()]))
            block = flat.reshape(idx.shape + self.shape[1:])
            if rest:
                return block[(slice(None),) * idx.ndim + rest]
            return block
        return block[(slice(None),) + rest] if rest else block

    def __repr__(self) -> str:
        return f"<npy_mmap.RemoteArray {self.url!r} shape={self.shape} dtype={self.dtype}>"


def open_remote(url: str) -> RemoteArray:
    """Open an ``.npy`` in object storage lazily (see :class:`RemoteArray`)."""
    return RemoteArray(url)

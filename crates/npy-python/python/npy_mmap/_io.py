"""Reading and writing whole arrays: ``load``, ``save``, ``savez`` and
``savez_compressed``, from paths, URLs and file objects (pipes included)."""

from __future__ import annotations

import io
import math
import os
import pickle
import pickletools
import stat
import sys
from typing import Any, Literal, overload

import numpy as np

from . import _convert, _native
from ._common import (
    _HEAD_READ,
    _MAGIC,
    _ZIP_PREFIX,
    _ZIP_SUFFIX,
    Locking,
    Sharing,
    _check_encoding,
    _header_limit,
    _is_url,
    _load_mode,
    _open_mapped,
    _path,
    _strict,
    _warn_format,
)
from ._mapping import _memmap, memmap
from ._npz import NpzFile
from ._remote import RemoteArray


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
        try:
            if mode is not None:
                return RemoteArray(file, max_header_size=limit)
            remote = _native.Remote(file, limit, allow_pickle, encoding)
        except ValueError:
            if not _url_is_zip(file):
                raise
            # An npz (numpy ignores mmap_mode for those): the archive whole,
            # as np.load reads one from a file object.
            npz = NpzFile(
                _native.download(file),
                allow_pickle=allow_pickle,
                encoding=encoding,
                max_header_size=max_header_size,
                fix_imports=fix_imports,
                _bytes=True,
            )
            npz._name = file  # its repr names the URL
            return npz
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
    # The common case first: an .npy read or mapped in one native call (its
    # magic is checked there, the file opened once); other files are
    # sniffed only on failure.
    try:
        if mode is not None:
            return _memmap(_open_mapped(path, mode, limit, None, locking, None, _strict(sharing)), mode, path)
        return _convert.from_parts(*_native.load(path, limit, allow_pickle, encoding, locking))
    except (ValueError, EOFError, OSError) as error:
        failure = error
    with open(path, "rb") as fid:
        head = fid.read(_HEAD_READ)
    if head.startswith(_MAGIC):
        raise failure
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
    return _refuse_pickle(allow_pickle, path)


def _url_is_zip(url: str) -> bool:
    """Whether the object at ``url`` starts as a zip does (one ranged GET
    of its first bytes, read as a headerless array of bytes)."""
    try:
        head = _native.Remote(url, headerless=("|u1", 0, None, False))
        first = bytes(_convert.from_parts(*head.read_rows(0, min(len(_ZIP_PREFIX), head.shape[0]))))
    except (OSError, ValueError):
        return False
    return first.startswith((_ZIP_PREFIX, _ZIP_SUFFIX))


def _stream_is_zip(fid: Any) -> bool:
    """Whether a file object holds an npz at its position (left there)."""
    try:
        start = fid.tell()
        magic = fid.read(len(_MAGIC))
        fid.seek(start)
    except (OSError, ValueError, AttributeError):
        return False
    return magic.startswith((_ZIP_PREFIX, _ZIP_SUFFIX))


def _reopened(fid: Any) -> str | None:
    """On Linux, a path opening the regular file a stream at its start reads
    (``/proc/self/fd/N``: a new open file description, so the stream's own
    position is left alone), else None."""
    if sys.platform != "linux":
        return None
    try:
        fd = fid.fileno()
        if fid.tell() != 0 or not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return None
    path = f"/proc/self/fd/{fd}"
    return path if os.path.exists(path) else None


def _read_rest(fid: Any) -> Any:
    """The rest of a stream: a file's read straight into a buffer of its
    size (``read()`` would grow one and copy it), anything else's ``read()``."""
    try:
        size = os.fstat(fid.fileno()).st_size - fid.tell()
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return fid.read()
    if size <= 0:
        return fid.read()
    data = bytearray(size)
    view = memoryview(data)
    filled = 0
    while filled < size:
        count = fid.readinto(view[filled:])
        if not count:
            break
        filled += count
    rest = fid.read()  # grown since the stat: keep it too
    if filled < size:
        short = bytes(view[:filled])
        view.release()
        return short
    view.release()
    return data + rest if rest else data


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
    if _stream_is_zip(fid):
        reopened = _reopened(fid)
        if reopened is not None:
            # A regular file from its start: read like a path (members
            # straight from the file into their arrays), the caller's file
            # object left where it is.
            npz = NpzFile(
                reopened,
                allow_pickle=allow_pickle,
                encoding=encoding,
                max_header_size=max_header_size,
                fix_imports=fix_imports,
            )
            npz._name = getattr(fid, "name", "object")
            # The caller owns the file object: no fid, as numpy's.
            npz.fid.close()
            npz.fid = None
            return npz
        # The rest in one read, not copied again (a file straight into memory
        # of its size; a BytesIO read from its start hands over its bytes as
        # they are): the archive's members are read from them in Rust.
        return NpzFile(
            _read_rest(fid),
            allow_pickle=allow_pickle,
            encoding=encoding,
            max_header_size=max_header_size,
            fix_imports=fix_imports,
            _bytes=True,
        )
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
    descr, shape, fortran, _offset = _native.parse_header(head, limit, allow_pickle, True)
    if descr != "'|O'":
        dtype = _convert.dtype_of(descr)
        if not dtype.hasobject and dtype.subdtype is None:
            return _read_array(fid, dtype, shape, fortran)
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


def _read_array(fid: Any, dtype: np.dtype, shape: tuple[int, ...], fortran: bool) -> np.ndarray:
    """The data of an array of ``dtype`` and ``shape`` read from a stream
    straight into the new array's memory (``readinto``, as ``numpy.fromfile``
    reads a file): no chunk goes through Python, nothing past the array's end
    is read (a pipe stays just after it), and a load peaks at one array.
    A stream whose length is known (a ``BytesIO``, a regular file) and
    holds less than the header claims is refused before anything is
    allocated (numpy allocates the claimed size first)."""
    count = math.prod(shape)
    size = count * dtype.itemsize
    remaining = _remaining(fid)
    if remaining is not None and remaining < size:
        _truncated(fid, dtype, shape, remaining)
    flat = np.empty(count, dtype=dtype)
    got = _fill(fid, flat.view(np.uint8)) if size else 0
    if got < size:
        _truncated(fid, dtype, shape, got)
    return flat.reshape(shape, order="F" if fortran else "C")


def _truncated(fid: Any, dtype: np.dtype, shape: tuple[int, ...], got: int) -> None:
    """numpy's ValueError for a stream that ends inside the array's data."""
    if isinstance(fid, (io.FileIO, io.BufferedReader, io.BufferedWriter)):
        # numpy's words: its fromfile reads a real file.
        raise ValueError(
            f"Failed to read all data for array. Expected {tuple(shape)} = {math.prod(shape)} elements, "
            f"could only read {got // dtype.itemsize} elements. (file seems not fully written?)"
        )
    raise ValueError(f"EOF: reading array data, expected {math.prod(shape) * dtype.itemsize} bytes got {got}")


def _remaining(fid: Any) -> int | None:
    """Bytes left in a ``BytesIO`` or a regular file from its position;
    None when that is not known (a pipe, any other stream)."""
    try:
        if isinstance(fid, io.BytesIO):
            # Seeks, not getbuffer(): an export would copy the bytes a
            # BytesIO(b) still shares with b.
            here = fid.tell()
            end = fid.seek(0, io.SEEK_END)
            fid.seek(here)
            return max(end - here, 0)
        if isinstance(fid, (io.FileIO, io.BufferedReader, io.BufferedRandom)):
            info = os.fstat(fid.fileno())
            if stat.S_ISREG(info.st_mode):
                return max(info.st_size - fid.tell(), 0)
    except (OSError, ValueError, AttributeError):
        pass
    return None


def _fill(fid: Any, out: np.ndarray) -> int:
    """Reads into ``out`` (bytes) until it is full or the stream ends; how
    many bytes were read. ``readinto`` where the stream has it (a file, a
    pipe, ``BytesIO``: one copy, into ``out``), else ``read`` a bounded
    chunk at a time."""
    view = memoryview(out)
    size = len(view)
    got = 0
    readinto = getattr(fid, "readinto", None)
    while got < size:
        if readinto is not None:
            count = readinto(view[got:])
        else:
            chunk = fid.read(min(size - got, 1 << 24))
            count = len(chunk)
            view[got : got + count] = chunk
        if not count:
            break
        got += count
    return got


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


def save(file: Any, arr: Any, allow_pickle: bool = True, fix_imports: Any = None, *, durable: bool = False) -> None:
    """Save an array to a ``.npy`` file, byte for byte as ``numpy.save`` does.

    Parameters
    ----------
    file : str, path-like, URL or file object
        Where to write. ``.npy`` is appended to a path that lacks it. A path
        is written to a temporary file renamed over it (a reader that mapped
        the old file keeps it; nothing is truncated in place, and a crash of
        the program leaves the old file or the whole new one, never a
        partial file under the name). A URL uploads to object storage (no
        object appears if the upload fails).
    arr : array_like
        The array.
    allow_pickle : bool, optional
        Allow object arrays (written with npy-core's pickler, as numpy
        pickles them; only values its unpickler reads back are accepted).
    fix_imports : optional
        Accepted for compatibility; unused.
    durable : bool, optional
        Also sync the file and its folder to the disk before returning, so
        the new array survives a power loss or a crash of the system
        (``fsync``; a path only). Off by default, as ``numpy.save`` never
        syncs: syncing writes every byte to the disk before returning, which
        costs the disk's write time (on an SSD about 2-4x ``numpy.save``'s
        time for a large array, and a few milliseconds even for a tiny one).

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
        _native.save_objects(_npy_name(path), shape, fortran, values, durable)
        return
    data = _convert.data_bytes(array, fortran)
    if _is_url(file):
        _native.upload(file, descr, shape, fortran, data)
        return
    path = _path(file)
    if path is None:
        file.write(_native.header_bytes(descr, shape, fortran))
        if isinstance(file, (io.FileIO, io.BufferedReader, io.BufferedWriter)):
            # numpy's way for a real file: tofile allocates the blocks first
            # (fallocate), so closing the file does not wait for ext4 to
            # allocate them (auto_da_alloc): about 2x faster on ext4.
            data.tofile(file)
        else:
            file.write(data.data)
        return
    _native.save(_npy_name(path), descr, shape, fortran, data, durable)


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
    # A seekable file object is written as the members are made (no copy
    # of the whole archive); a pipe gets the archive's bytes at the end.
    writer = _native.ArchiveWriter(path, compressed, None if path is not None else file)
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
    if data is not None:
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

"""numpy's names over npy-mmap: load, save, savez, savez_compressed,
open_memmap; and what numpy lacks: mapped() with close(), append, live
arrays, take, remote arrays."""

from __future__ import annotations

import gc
import io
import math
import os
import pickle
import weakref
from collections.abc import Iterator, Mapping
from typing import Any, Literal

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

    Delete the last view (``del a``) to release the file; for an explicit
    ``close()`` that refuses while views live, use :func:`mapped`.
    """

    def flush(self) -> None:
        """Write changes to disk and wait for it (``msync``); a no-op unless
        the mapping is read-write."""
        if self._mmap is not None:
            _native.flush(self._mmap)


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


def load(
    file: Any,
    mmap_mode: Literal[None, "r", "r+", "c"] = None,
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
        The largest header accepted (numpy's default, 10000). Unlike numpy,
        ``allow_pickle=True`` does not lift it.
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
    if mmap_mode is not None and mmap_mode not in ("r", "r+", "c", "readonly", "readwrite", "copyonwrite"):
        raise ValueError(f"mode must be one of ['r', 'c', 'r+', 'w+'] (got {mmap_mode!r})")
    if _is_url(file):
        if mmap_mode is not None:
            return RemoteArray(file, max_header_size=max_header_size)
        remote = _native.Remote(file, max_header_size, allow_pickle, encoding)
        if remote.descr == "'|O'":
            # A pickle has no rows to range over: fetch it whole, decode it.
            parts, _used = _native.load_bytes(_native.download(file), max_header_size, allow_pickle, encoding)
            return _convert.from_parts(*parts)
        return _convert.from_parts(*remote.read_all())
    path = _path(file)
    if path is None:
        if mmap_mode is not None:
            raise ValueError(
                "Filename must be a string or a path-like object.  Memmap cannot use existing file handles."
            )
        return _load_stream(file, allow_pickle, encoding, max_header_size)
    if mmap_mode is not None:
        # The common case first: an .npy mapped in one native call (its
        # magic is checked there); other files are sniffed only on failure.
        mode = {"readonly": "r", "readwrite": "r+", "copyonwrite": "c"}.get(mmap_mode, mmap_mode)
        try:
            return _memmap(
                _native.open_mapped(path, mode, max_header_size, None, locking, None, _strict(sharing)), mode, path
            )
        except ValueError:
            with open(path, "rb") as fid:
                if fid.read(len(_MAGIC)) == _MAGIC:
                    raise
    with open(path, "rb") as fid:
        magic = fid.read(len(_MAGIC))
    if not magic:
        raise EOFError("No data left in file")
    if magic.startswith((_ZIP_PREFIX, _ZIP_SUFFIX)):
        return NpzFile(
            path, mmap_mode=mmap_mode, allow_pickle=allow_pickle, encoding=encoding, max_header_size=max_header_size
        )
    if magic == _MAGIC:
        if mmap_mode is None:
            return _convert.from_parts(*_native.load(path, max_header_size, allow_pickle, encoding, locking))
        mode = {"readonly": "r", "readwrite": "r+", "copyonwrite": "c"}.get(mmap_mode, mmap_mode)
        return _memmap(
            _native.open_mapped(path, mode, max_header_size, None, locking, None, _strict(sharing)), mode, path
        )
    return _refuse_pickle(allow_pickle, path)


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


def _load_stream(fid: Any, allow_pickle: bool, encoding: str, max_header_size: int) -> Any:
    """np.load of a file object: the rest of the stream holds one .npy (or an npz)."""
    data = fid.read()
    if not data:
        raise EOFError("No data left in file")
    if data.startswith((_ZIP_PREFIX, _ZIP_SUFFIX)):
        return NpzFile(
            data, allow_pickle=allow_pickle, encoding=encoding, max_header_size=max_header_size, _bytes=True
        )
    if not data.startswith(_MAGIC):
        return _refuse_pickle(allow_pickle, getattr(fid, "name", "<stream>"))
    parts, used = _native.load_bytes(data, max_header_size, allow_pickle, encoding)
    # Leave the stream after this array (np.save may have written several).
    if hasattr(fid, "seek"):
        try:
            fid.seek(used - len(data), io.SEEK_CUR)
        except (OSError, ValueError):
            pass
    return _convert.from_parts(*parts)


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
    writer = _native.ArchiveWriter(path, compressed)
    for key, value in named.items():
        array = np.asanyarray(value)
        descr, shape, fortran = _header_args(array)
        values = _object_values(array, fortran, allow_pickle)
        if values is not None:
            writer.add_objects(key, shape, fortran, values)
        else:
            writer.add(key, descr, shape, fortran, _convert.data_bytes(array, fortran))
    data = writer.finish()
    if path is None:
        file.write(data)


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
    """

    def __init__(
        self,
        source: Any,
        *,
        mmap_mode: str | None = None,
        allow_pickle: bool = False,
        encoding: str = "ASCII",
        max_header_size: int = 10000,
        _bytes: bool = False,
    ) -> None:
        self._name = "<bytes>" if _bytes else source
        if _bytes:
            self._archive = _native.NpzReader.from_bytes(source, max_header_size, allow_pickle, encoding)
        elif mmap_mode in ("r", "readonly"):
            self._archive = _native.MappedArchive(source, max_header_size, allow_pickle, encoding)
        else:
            self._archive = _native.NpzReader(source, max_header_size, allow_pickle, encoding)
        self.files = list(self._archive.keys())
        self._names = list(self._archive.member_names())
        self.f = _Attributes(self)

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

    def close(self) -> None:
        """Close the archive (member arrays already returned stay valid)."""
        self._archive.close()

    def __repr__(self) -> str:
        keys = ", ".join(self.files[:5]) + ("..." if len(self.files) > 5 else "")
        return f"NpzFile {self._name!r} with keys: {keys}"


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
    if "w" in mode:
        dt = np.dtype(np.float64 if dtype is None else dtype)
        if dt.hasobject:
            raise ValueError("Array can't be memory-mapped: Python objects in dtype.")
        if shape is None:
            raise TypeError("open_memmap(mode='w+') needs a shape")
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)
        major = None
        if version is not None:
            if tuple(version) not in ((1, 0), (2, 0), (3, 0)):
                raise ValueError(f"we only support format version (1,0), (2,0), and (3,0), not {version}")
            major = version[0]
        created = _native.create(
            path, _convert.descr_of(dt), shape, bool(fortran_order), reserve, locking, major, _strict(sharing)
        )
        return _memmap(created, "w+", path)
    mode = {"readonly": "r", "readwrite": "r+", "copyonwrite": "c"}.get(mode, mode)
    return _memmap(
        _native.open_mapped(path, mode, max_header_size, None, locking, None, _strict(sharing)), mode, path
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
        array = self.array
        return array if dtype is None else array.astype(dtype)

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
        _native.open_mapped(path, mode, max_header_size, window, locking, advice, _strict(sharing)), mode, path
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
    out = _native.take(buffer, offset, width, count, idx64.tobytes())
    if out is None:
        return np.take(a, indices, axis=axis)
    return _convert.view(out, a.dtype, shape, False)


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
        order = "F" if self._fortran else "C"
        if isinstance(indices, tuple):
            arrays = [np.asarray(i, dtype=np.int64) for i in indices]
            arrays = [np.where(i < 0, i + n, i) for i, n in zip(arrays, self.shape, strict=True)]
            try:
                flat = np.ravel_multi_index(arrays, self.shape, order=order)
            except ValueError as error:
                raise IndexError(f"index out of bounds for shape {self.shape}: {error}") from None
        else:
            if len(self.shape) > 1:
                raise TypeError("index a multi-dimensional live array with a tuple of index arrays")
            flat = np.asarray(indices, dtype=np.int64)
        flat = np.ascontiguousarray(flat, dtype=np.int64).ravel()
        vals = np.ascontiguousarray(np.broadcast_to(np.asarray(values, dtype=self.dtype), flat.shape)).astype(
            self.dtype.newbyteorder("="), copy=False
        )
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

    def __init__(self, url: str, *, max_header_size: int = 10000) -> None:
        self._remote = _native.Remote(url, max_header_size)
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
        array = self.read()
        return array if dtype is None else array.astype(dtype)

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

"""Mapped files: the ``memmap`` class (numpy's, over npy-mmap's mappings and
locks), ``open_memmap``, and ``mapped()`` with an explicit ``close()``."""

from __future__ import annotations

import gc
import operator
import os
import sys
import weakref
from typing import Any, Literal

import numpy as np

from . import _convert, _native
from ._common import Locking, Sharing, _Closing, _MODE_NAMES, _is_url, _open_mapped, _path, _strict, _warn_format
from ._remote import RemoteArray


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
        # numpy's own check of `order` (its words: "order must be one of
        # 'C', 'F', 'A', or 'K' (got 'X')"), and its reading of it ('f' and
        # b'F' are Fortran, 'A' and 'K' C for a new array).
        fortran = not np.ndarray((2, 2), dtype=np.uint8, order=order).flags.c_contiguous
        # A subarray dtype (('u2', (3,))) maps items of its whole size; the
        # array appends its shape, as numpy's ndarray(buffer=...) does.
        headerless = (_convert.descr_of(dt), operator.index(offset), shape, fortran)
        if _is_url(filename):
            if mode != "r":
                raise ValueError(
                    f"{filename}: objects in storage are read-only through memmap: mode={mode!r} "
                    "would write, and a RemoteArray cannot; use mode='r'"
                )
            return RemoteArray(filename, _headerless=headerless)
        path = _path(filename)
        if path is None:
            raise ValueError("npy_mmap.memmap needs a file name or a URL, not a file object")
        _refuse_empty(path, mode)
        mapped = _open_mapped(path, mode, 10000, None, locking, None, _strict(sharing), headerless)
        result = _memmap(mapped, mode, path, dtype=dt)
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

    # What numpy's __array_finalize__ sets on an array made from nothing
    # (obj None): read from the class instead, so that making one over a
    # mapping (``_memmap``, which sets them) runs no Python method.
    _mmap = None
    filename = None
    offset = None
    mode = None

    def __array_finalize__(self, obj):
        if obj is not None:
            np.memmap.__array_finalize__(self, obj)

    def __getitem__(self, index):
        res = np.ndarray.__getitem__(self, index)
        if type(res) is memmap and res._mmap is None:
            return res.view(type=np.ndarray)
        return res


def _refuse_empty(path: str, mode: str) -> None:
    """numpy's refusal of an empty file ("cannot mmap an empty file"), in
    every mode: numpy's ``r+`` writes a byte into it first, and npy_mmap
    never changes a file's length to map it."""
    try:
        empty = os.stat(path).st_size == 0
    except OSError:
        return  # the mapping says what is wrong, in its words
    if empty:
        extra = " (numpy's r+ writes a byte into it first; npy_mmap does not write to map)" if mode == "r+" else ""
        raise ValueError(f"cannot mmap an empty file{extra}")


def _memmap(mapped: tuple, mode: str, filename: str, dtype: np.dtype | None = None) -> memmap:
    """The memmap over a native mapping; ``dtype`` (memmap's argument)
    instead of the header's, for a subarray dtype whose shape numpy appends."""
    buffer, descr, shape, fortran, offset, _rows = mapped
    dt = _convert.dtype_of(descr) if dtype is None else dtype
    result = _convert.array_over(buffer, dt, shape, fortran, subtype=memmap)
    result._mmap = buffer
    result.filename = os.path.abspath(filename)
    result.offset = offset
    result.mode = {"r": "r", "r+": "r+", "w+": "r+", "c": "c"}.get(mode, mode)
    return result


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
        """How many references reach the mapping besides this object's own
        (and its cached ``array``'s, when nothing else holds that array):
        each array over it holds one (a memmap two: its ``.base`` and its
        ``_mmap``; a memmap view of it one). :meth:`close` succeeds when it
        is 0."""
        return 0 if self._buffer is None else self._holders()

    def _holders(self) -> int:
        """References to the buffer object other than ``self._buffer`` (and
        the cached array's, if only this object holds that array)."""
        # getrefcount counts its own argument: minus it and self._buffer.
        held = sys.getrefcount(self._buffer) - 2
        if self._array is not None and sys.getrefcount(self._array) == 2:
            held -= 2  # the cached memmap's .base and ._mmap, nobody else's
        return held

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
        What reaches it is counted by reference (CPython's count of the
        object that owns the mapping), after a garbage collection, so an
        array a finalizer brought back to life (``__del__`` storing it
        somewhere) counts too: ``close()`` never returns while the mapping
        stays.

        Raises
        ------
        BufferError
            While anything else reaches the mapping, saying how many
            references and, where Python can tell, what holds them: delete
            those arrays first. The mapping is then left open as it was.
        """
        if self._buffer is None:
            return
        self._array = None
        if self._holders():
            # Reference cycles are freed by the collector, not at once; a
            # finalizer run now may also keep an array alive: counted below.
            gc.collect()
        held = self._holders()
        if held == 0:
            probe = weakref.ref(self._buffer)
            self._buffer = None  # the last reference: the mapping goes now
            if probe() is None:
                return
            self._buffer = probe()  # another thread took one meanwhile
            held = self._holders()
        raise BufferError(
            f"cannot close the mapping of {self.filename}: numpy arrays (or other objects) that "
            f"reach it are still alive ({held} reference(s) besides this MappedFile's"
            f"{_holders_named(self)}: an array's .base, a memmap's ._mmap, or what a finalizer "
            "kept); delete them (del array) first"
        )

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"mode={self.mode!r}"
        return f"<npy_mmap.MappedFile {self.filename!r} {state}>"


def _holders_named(mapped: MappedFile) -> str:
    """What Python's collector can name among the holders of a mapping's
    buffer object (containers, instances, a memmap's attributes; numpy
    arrays themselves it does not track), the mapping's own aside."""
    own = (mapped, mapped.__dict__)
    found = [r for r in gc.get_referrers(mapped._buffer) if not any(r is o for o in own)]
    buffer = mapped._buffer
    names = sorted(
        {
            # A memmap's attributes hold its ._mmap: name the memmap.
            "memmap" if isinstance(r, dict) and r.get("_mmap") is buffer else type(r).__name__
            for r in found
        }
        - {"frame"}
    )
    return f", held by: {', '.join(names)}" if names else ""


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
    mode = _MODE_NAMES.get(mode, mode)
    window = None if rows is None else (int(rows[0]), int(rows[1]))
    return MappedFile(
        _open_mapped(path, mode, max_header_size, window, locking, advice, _strict(sharing)), mode, path
    )

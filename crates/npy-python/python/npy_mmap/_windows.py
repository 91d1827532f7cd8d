"""Windows of rows: ``length`` rows from each of a batch of starts, the way a
training loader draws them from a token array, through npy-mmap's planner
(a cold batch reads exactly its pages, all at once) and npy-remote's
coalesced requests."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import _convert, _native
from ._remote import RemoteArray

__all__ = ["windows", "prefetch_windows", "release_windows"]


def _starts(starts: Any, rows: int) -> list[int]:
    """The starts as non-negative ints (a negative one counts from the end,
    as numpy's indices do), refusing what numpy refuses as an index."""
    array = np.asarray(starts)
    if array.ndim != 1:
        raise ValueError(f"starts must be one-dimensional, not of shape {array.shape}")
    if array.size and array.dtype.kind not in "iu":
        raise IndexError(
            "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
            "integer or boolean arrays are valid indices"
        )
    out = []
    for start in array.tolist():
        if start < -rows:
            raise IndexError(f"index {start} is out of bounds for axis 0 with size {rows}")
        out.append(start + rows if start < 0 else start)
    return out


def _rows_of(a: Any) -> int:
    if not a.shape:
        raise IndexError("too many indices for array: array is 0-dimensional, but 1 were indexed")
    return a.shape[0]


def _over_our_buffer(a: Any) -> tuple[Any, int, int] | None:
    """(buffer, byte offset, row bytes) of an array whose rows are contiguous
    in one of our buffers; None otherwise."""
    if not isinstance(a, np.ndarray) or not a.flags.c_contiguous or not a.shape:
        return None
    found = _convert.native_buffer(a)
    if found is None:
        return None
    buffer, offset = found
    return buffer, offset, a.dtype.itemsize * int(np.prod(a.shape[1:], dtype=np.int64))


def windows(a: Any, starts: Any, length: int) -> np.ndarray:
    """``length`` rows from each of ``starts``, stacked: an array of shape
    ``(len(starts), length) + a.shape[1:]``, numpy's
    ``np.stack([a[s:s + length] for s in starts])``.

    For an array mapped by npy_mmap (``load(..., mmap_mode=...)``,
    ``memmap(...)`` of a token ``.bin``) the batch is gathered in Rust
    without the GIL through npy-mmap's planner: a cold batch reads the
    pages its windows cover all at once (at the disk's queue depth, not a
    page fault at a time), a warm one is one copy per window. For a
    :class:`RemoteArray` (``s3://``, ``https://``) it is one ranged request
    per span the planner makes, concurrent. Anything else is numpy.

    Parameters
    ----------
    a : ndarray or RemoteArray
    starts : 1-D array_like of int
        First row of each window; negative counts from the end.
    length : int
        Rows per window.

    Raises
    ------
    IndexError
        numpy's words for the first row past the end, before anything is
        read.
    """
    length = operator.index(length)
    if length < 0:
        raise ValueError(f"a window holds a non-negative number of rows, not {length}")
    rows = _rows_of(a)
    picked = _starts(starts, rows)
    shape = (len(picked), length, *a.shape[1:])
    if isinstance(a, RemoteArray) and not a._fortran:
        data = a._remote.read_windows(picked, length)
        return _convert.array_over(data, a.dtype, shape, False)
    found = _over_our_buffer(a)
    if found is not None:
        buffer, offset, row_bytes = found
        out = _native.windows("gather", buffer, (offset, row_bytes, rows), picked, length)
        if out is not None:
            return _convert.array_over(out, a.dtype, shape, False)
    for start in picked:
        if start + length > rows:
            first_missing = start if start >= rows and length else rows
            raise IndexError(f"index {first_missing} is out of bounds for axis 0 with size {rows}")
    if not picked:
        return np.empty(shape, dtype=a.dtype)
    return np.stack([np.asarray(a[start : start + length]) for start in picked])


def prefetch_windows(a: Any, starts: Any, length: int) -> None:
    """Start reading the pages of those windows and return at once (the next
    batch's, while this one is used). A no-op for arrays not mapped by
    npy_mmap."""
    found = _over_our_buffer(a)
    if found is not None:
        buffer, offset, row_bytes = found
        rows = _rows_of(a)
        _native.windows("prefetch", buffer, (offset, row_bytes, rows), _starts(starts, rows), operator.index(length))


def release_windows(a: Any, starts: Any, length: int) -> None:
    """Give back the pages of those windows (``MADV_DONTNEED``): a loader that
    copied its batch keeps resident memory flat over an epoch. The bytes stay
    in the file and the page cache. A no-op for copy-on-write mappings and
    arrays not mapped by npy_mmap."""
    found = _over_our_buffer(a)
    if found is not None:
        buffer, offset, row_bytes = found
        rows = _rows_of(a)
        _native.windows("release", buffer, (offset, row_bytes, rows), _starts(starts, rows), operator.index(length))

"""What numpy lacks for rows of a file: ``read_header``, ``append`` in place,
and ``take`` through npy-mmap's planned gather."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _convert, _native
from ._common import Locking, _path


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
    out = _native.take(buffer, offset, width, count, idx64.reshape(-1).view(np.uint8))
    if out is None:
        return np.take(a, indices, axis=axis)
    return _convert.array_over(out, a.dtype, shape, False)


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

"""Arrays in object storage, read lazily by ranged requests (``RemoteArray``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _convert, _native


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

"""Live arrays: shared while written, through atomics (``open_live``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _convert, _native
from ._common import Locking, _Closing, _path
from ._rows import _flat_indices


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
        return _convert.array_over(self._live.snapshot(), self.dtype.newbyteorder("="), self.shape, self._fortran)

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

"""Training data from token arrays: random windows for data-loader workers,
locally and in object storage, with numpy only.

A tokenised corpus is one flat ``uint16``/``uint32`` array (an ``.npy``, or a
headerless ``.bin`` read as ``np.memmap`` reads it); a training step draws a
batch of random windows of ``length`` tokens. Both classes here map the
file once per process (no remap per batch), gather each batch through
npy-mmap's planner (a cold batch reads exactly its pages, all at once),
give the pages back once the batch is copied (resident memory stays flat),
and pickle to their arguments (``spawn`` and ``fork`` workers open their own).

PyTorch (three lines)::

    from torch.utils.data import DataLoader
    from npy_mmap.data import WindowDataset
    loader = DataLoader(WindowDataset("train.bin", 1024, dtype="uint16"), batch_size=64, shuffle=True, num_workers=4)

Or an endless stream of random batches, the next one read ahead while the
current one is used::

    for batch in RandomBatches("s3://corpus/train.npy", 1024, 64, seed=0):
        ...  # batch: ndarray of shape (64, 1024)
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Iterator

import numpy as np

from . import _api, _pin, _windows
from ._common import _is_url

__all__ = ["WindowDataset", "RandomBatches"]


class _Source:
    """A token array opened once per process: an ``.npy`` (mapped, or remote)
    or a headerless file given a ``dtype`` (``np.memmap``'s arguments).

    Pinned when first opened, as ``npy_mmap.dask``'s tasks are (``_pin``):
    a local file by its device, inode and size (an ``.npy`` also by its
    header), an object by its ETag. A worker (a pickled copy, or a forked
    child) that opens it again refuses a file or object that changed since
    with :class:`~npy_mmap.dask.SourceChanged`, rather than read other
    data (another dtype, other tokens) without a word.
    """

    def __init__(self, source: Any, dtype: Any, offset: int, shape: Any) -> None:
        text = os.fspath(source) if not isinstance(source, str) else source
        self.location = text if _is_url(text) else os.path.abspath(text)
        self.dtype = None if dtype is None else np.dtype(dtype)
        self.offset = offset
        self.shape = shape
        self.identity: tuple[int, int, int] | None = None
        self.header: tuple | None = None
        self.e_tag: str | None = None
        self._array: Any = None
        self._pid: int | None = None

    def array(self) -> Any:
        """The array, opened in this process (again after a fork), checked
        to be the one pinned at the first opening."""
        if self._array is None or self._pid != os.getpid():
            self._array = None
            first = self.identity is None and self.e_tag is None
            if _is_url(self.location):
                array = self._open()
                if first:
                    self.e_tag = array._remote.e_tag
                elif self.e_tag is not None and array._remote.e_tag != self.e_tag:
                    raise self._changed(f"ETag {self.e_tag} then, {array._remote.e_tag} now")
            else:
                if first:
                    if self.dtype is None:
                        self.header, self.identity = _pin.header_of(self.location, 10000)
                    else:
                        self.identity = _pin.identity(self.location)
                self._check()
                array = self._open()
                self._check()  # the file mapped is the one checked (not replaced meanwhile)
            self._array, self._pid = array, os.getpid()
        return self._array

    def _open(self) -> Any:
        if self.dtype is not None:
            return _api.memmap(self.location, dtype=self.dtype, mode="r", offset=self.offset, shape=self.shape)
        if _is_url(self.location):
            return _api.RemoteArray(self.location)
        return _api.load(self.location, mmap_mode="r")

    def _check(self) -> None:
        differs = _pin.check_identity(self.location, self.identity)
        if differs is None and self.header is not None:
            with open(self.location, "rb") as fid:
                differs = _pin.check_header(fid.read(self.header[3]), self.header)
        if differs is not None:
            raise self._changed(differs)

    def _changed(self, what: str) -> Exception:
        return _pin.changed(self.location, self.location, what, "the dataset", "it was first opened; make it again")

    def remote(self) -> bool:
        return isinstance(self.array(), _api.RemoteArray)

    def __getstate__(self) -> dict:
        # Workers get the arguments and the pin, and open their own mapping.
        state = dict(self.__dict__)
        state["_array"] = None
        state["_pid"] = None
        return state


def _gather(source: _Source, starts: np.ndarray, length: int, release: bool) -> np.ndarray:
    array = source.array()
    batch = _windows.windows(array, starts, length)
    if release:
        # The batch is a copy: its pages are not needed any more.
        _windows.release_windows(array, starts, length)
    return batch


class WindowDataset:
    """A map-style dataset of windows: item ``i`` is the ``length`` tokens
    (rows) starting at ``i * step`` (``step`` defaults to ``length``:
    windows that do not overlap). ``__getitems__`` (PyTorch's batched fetch)
    gathers a whole batch at once through the planner.

    Parameters
    ----------
    source : path or URL
        An ``.npy``, or with ``dtype`` a headerless file (``np.memmap``'s
        ``dtype``, ``offset`` and ``shape``).
    length : int
        Rows per window (tokens for a 1-D array).
    step : int, optional
        Rows between window starts.
    release : bool, optional
        Give a fetched window's pages back (resident memory stays flat).
    """

    def __init__(
        self,
        source: Any,
        length: int,
        *,
        step: int | None = None,
        dtype: Any = None,
        offset: int = 0,
        shape: Any = None,
        release: bool = True,
    ) -> None:
        if length <= 0:
            raise ValueError(f"length must be positive, not {length}")
        self.length = int(length)
        self.step = self.length if step is None else int(step)
        if self.step <= 0:
            raise ValueError(f"step must be positive, not {self.step}")
        self.release = release
        self._source = _Source(source, dtype, offset, shape)
        self.rows = len(self._source.array())

    def __len__(self) -> int:
        if self.rows < self.length:
            return 0
        return (self.rows - self.length) // self.step + 1

    def _starts(self, indices: Any) -> np.ndarray:
        index = np.asarray(indices, dtype=np.int64).reshape(-1)
        n = len(self)
        bad = (index < -n) | (index >= n)
        if bad.any():
            raise IndexError(f"index {int(index[bad][0])} is out of range for a dataset of {n} windows")
        return np.where(index < 0, index + n, index) * self.step

    def __getitem__(self, index: int) -> np.ndarray:
        return _gather(self._source, self._starts([index]), self.length, self.release)[0]

    def __getitems__(self, indices: list[int]) -> list[np.ndarray]:
        return list(self.batch(indices))

    def batch(self, indices: Any) -> np.ndarray:
        """Windows ``indices`` as one array of shape ``(len(indices), length, ...)``."""
        return _gather(self._source, self._starts(indices), self.length, self.release)

    def __getstate__(self) -> dict:
        return dict(self.__dict__)


def _worker_offset() -> int:
    """The data-loader worker's number (PyTorch's, when it runs us), so that
    workers draw different batches from one seed."""
    torch = sys.modules.get("torch")
    if torch is not None:
        info = torch.utils.data.get_worker_info()
        if info is not None:
            return int(info.id)
    return 0


class RandomBatches:
    """An iterable of random batches: ``batch_size`` windows of ``length``
    rows at uniform random starts, drawn with a seed (per data-loader worker:
    the seed plus the worker's number). The next batch is read ahead while
    the current one is used: its pages asked of the kernel at once (local),
    or its requests in flight (remote). ``batches`` limits the stream
    (``None``: endless). Picklable; each process opens the file once.
    """

    def __init__(
        self,
        source: Any,
        length: int,
        batch_size: int,
        *,
        seed: int | None = None,
        batches: int | None = None,
        dtype: Any = None,
        offset: int = 0,
        shape: Any = None,
        prefetch: bool = True,
        release: bool = True,
    ) -> None:
        if length <= 0 or batch_size < 0:
            raise ValueError("length must be positive and batch_size non-negative")
        self.length = int(length)
        self.batch_size = int(batch_size)
        self.seed = seed
        self.batches = batches
        self.prefetch = prefetch
        self.release = release
        self._source = _Source(source, dtype, offset, shape)
        self.rows = len(self._source.array())
        if self.rows < self.length:
            raise ValueError(f"the array has {self.rows} rows, fewer than a window of {self.length}")

    def __iter__(self) -> Iterator[np.ndarray]:
        seed = None if self.seed is None else self.seed + _worker_offset()
        rng = np.random.default_rng(seed)
        high = self.rows - self.length + 1

        def draw() -> np.ndarray:
            return rng.integers(0, high, size=self.batch_size)

        remote = self._source.remote()
        pool = ThreadPoolExecutor(max_workers=1) if remote and self.prefetch else None
        try:
            upcoming = draw()
            pending: Future | None = None
            if pool is not None:
                pending = pool.submit(_gather, self._source, upcoming, self.length, False)
            elif self.prefetch:
                _windows.prefetch_windows(self._source.array(), upcoming, self.length)
            produced = 0
            while self.batches is None or produced < self.batches:
                starts = upcoming
                batch = pending.result() if pending is not None else None
                upcoming = draw()
                if pool is not None:
                    pending = pool.submit(_gather, self._source, upcoming, self.length, False)
                if batch is None:
                    batch = _gather(self._source, starts, self.length, self.release)
                    if self.prefetch:
                        _windows.prefetch_windows(self._source.array(), upcoming, self.length)
                produced += 1
                yield batch
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

    def __getstate__(self) -> dict:
        return dict(self.__dict__)

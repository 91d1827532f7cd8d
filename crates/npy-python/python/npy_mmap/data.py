"""Training data from token arrays: random windows for data-loader workers,
locally and in object storage, with numpy only.

A tokenised corpus is one flat ``uint16``/``uint32`` array (an ``.npy``, or a
headerless ``.bin`` read as ``np.memmap`` reads it); a training step draws a
batch of random windows of ``length`` tokens. Both classes here map the
file once per process (no remap per batch), gather each batch through
npy-mmap's planner (a cold batch reads exactly its pages, all at once),
give the pages back once the batch is copied (resident memory stays flat),
and pickle to their arguments (``spawn`` and ``fork`` workers open their own).

PyTorch (three lines; ``targets=True``: each item is ``(x, y)``, ``y`` the
tokens after ``x``'s first, as nanoGPT's ``get_batch`` makes them)::

    from torch.utils.data import DataLoader
    from npy_mmap.data import WindowDataset
    loader = DataLoader(WindowDataset("train.bin", 1024, dtype="uint16", targets=True), batch_size=64, shuffle=True, num_workers=4)

Or an endless stream of random batches, the next one read ahead while the
current one is used::

    for batch in RandomBatches("s3://corpus/train.npy", 1024, 64, seed=0):
        ...  # batch: ndarray of shape (64, 1024)

A seed gives each worker process its own stream: PyTorch's data-loader
workers by their number, any process ``multiprocessing`` started (a
``Process``, a ``Pool`` or ``ProcessPoolExecutor`` worker, ``fork`` or
``spawn``) by its identity, so two workers never draw the same batches;
the main process draws ``np.random.default_rng(seed)``'s. A process started
otherwise (``os.fork``) cannot be told apart: it gets a ``RuntimeWarning``
and should be given a seed of its own.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Iterator

import numpy as np

from . import _convert, _io, _mapping, _native, _pin, _remote, _windows
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
        self._file: Any = None

    def array(self) -> Any:
        """The array, opened in this process (again after a fork), checked
        to be the one pinned at the first opening."""
        if self._array is None or self._pid != os.getpid():
            self._array = None
            self._file = None
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
                file = _native.WindowFile(self.location)
                self._check()  # the file mapped is the one checked (not replaced meanwhile)
                if tuple(file.identity) != tuple(self.identity or ())[:2]:
                    raise self._changed("another file opened than the one mapped")
                self._file = file
            self._array, self._pid = array, os.getpid()
        return self._array

    def read_windows(self, starts: np.ndarray, length: int) -> np.ndarray | None:
        """The windows read straight from the file (``pread``, into the
        batch), for a local C-ordered array; ``None`` otherwise. Nothing is
        mapped or faulted in, so resident memory stays flat with no page
        given back and faulted in again per window (warm: 2.5x faster than
        the mapping's copy and release, BENCHMARKS.md); the mapping stays
        open for the locks, the pin and the read-ahead."""
        array = self.array()
        if self._file is None or not isinstance(array, np.ndarray) or not array.flags.c_contiguous or not array.shape:
            return None
        rows = array.shape[0]
        row_bytes = array.dtype.itemsize * int(np.prod(array.shape[1:], dtype=np.int64))
        picked = np.asarray(starts, dtype=np.int64)
        if picked.size and (picked.min() < 0 or picked.max() + length > rows):
            return None  # numpy's errors, from the mapping's path
        data = self._file.read((array.offset, row_bytes, rows), picked.tolist(), length)
        return _convert.array_over(data, array.dtype, (len(picked), length, *array.shape[1:]), False)

    def _open(self) -> Any:
        if self.dtype is not None:
            return _mapping.memmap(self.location, dtype=self.dtype, mode="r", offset=self.offset, shape=self.shape)
        if _is_url(self.location):
            return _remote.RemoteArray(self.location)
        return _io.load(self.location, mmap_mode="r")

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
        return isinstance(self.array(), _remote.RemoteArray)

    def __getstate__(self) -> dict:
        # Workers get the arguments and the pin, and open their own mapping.
        state = dict(self.__dict__)
        state["_array"] = None
        state["_pid"] = None
        state["_file"] = None
        return state


def _gather(source: _Source, starts: np.ndarray, length: int, release: bool, targets: bool = False) -> Any:
    """The windows of ``length`` rows at ``starts``; with ``targets``, the
    pair ``(x, y)`` of windows one row longer, ``y`` shifted by one row
    (views of one gathered batch: each window is read once)."""
    array = source.array()
    span = length + 1 if targets else length
    batch = source.read_windows(starts, span) if release else None
    if batch is None:
        batch = _windows.windows(array, starts, span)
        if release:
            # The batch is a copy: its pages are not needed any more.
            _windows.release_windows(array, starts, span)
    if targets:
        return batch[:, :-1], batch[:, 1:]
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
    targets : bool, optional
        Item ``i`` is the pair ``(x, y)``: ``x`` the window, ``y`` the
        ``length`` rows after ``x``'s first (the next tokens, as nanoGPT's
        ``get_batch`` makes its targets). A window then needs ``length + 1``
        rows. ``x`` and ``y`` are views of one copy of the ``length + 1``
        rows.
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
        targets: bool = False,
    ) -> None:
        if length <= 0:
            raise ValueError(f"length must be positive, not {length}")
        self.length = int(length)
        self.step = self.length if step is None else int(step)
        if self.step <= 0:
            raise ValueError(f"step must be positive, not {self.step}")
        self.release = release
        self.targets = bool(targets)
        self._source = _Source(source, dtype, offset, shape)
        self.rows = len(self._source.array())

    def __len__(self) -> int:
        span = self.length + 1 if self.targets else self.length
        if self.rows < span:
            return 0
        return (self.rows - span) // self.step + 1

    def _starts(self, indices: Any) -> np.ndarray:
        index = np.asarray(indices, dtype=np.int64).reshape(-1)
        n = len(self)
        bad = (index < -n) | (index >= n)
        if bad.any():
            raise IndexError(f"index {int(index[bad][0])} is out of range for a dataset of {n} windows")
        return np.where(index < 0, index + n, index) * self.step

    def __getitem__(self, index: int) -> Any:
        got = self.batch([index])
        return (got[0][0], got[1][0]) if self.targets else got[0]

    def __getitems__(self, indices: list[int]) -> list[Any]:
        got = self.batch(indices)
        return list(zip(*got)) if self.targets else list(got)

    def batch(self, indices: Any) -> Any:
        """Windows ``indices`` as one array of shape ``(len(indices), length, ...)``;
        with ``targets``, the pair ``(x, y)`` of such arrays."""
        return _gather(self._source, self._starts(indices), self.length, self.release, self.targets)

    def __getstate__(self) -> dict:
        return dict(self.__dict__)


def _worker_key() -> tuple[int, ...] | None:
    """This process's number among the workers, for its own stream of one
    seed: PyTorch's data-loader worker id when it runs us, else the identity
    ``multiprocessing`` gave the process (``(k,)``; ``(k, j)`` for a worker
    of a worker), ``fork`` or ``spawn`` alike; ``None`` in a process that
    ``multiprocessing`` did not start (the main one, or an ``os.fork``)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        info = torch.utils.data.get_worker_info()
        if info is not None:
            return (int(info.id),)
    identity = multiprocessing.current_process()._identity
    return tuple(int(k) for k in identity) if identity else None


def _rng(seed: int | None, made_in: int) -> np.random.Generator:
    """The generator of a seed in this process: ``default_rng(seed)`` in the
    process that made the stream, a child stream of the seed
    (``SeedSequence(seed, spawn_key=worker)``) in a numbered worker."""
    if seed is None:
        return np.random.default_rng()
    key = _worker_key()
    if key is None and os.getpid() != made_in:
        warnings.warn(
            f"RandomBatches(seed={seed}) is drawn in process {os.getpid()}, which neither PyTorch nor "
            "multiprocessing numbered: every such process draws the same batches; give each its own seed",
            RuntimeWarning,
            stacklevel=3,
        )
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key or ()))


class RandomBatches:
    """An iterable of random batches: ``batch_size`` windows of ``length``
    rows at uniform random starts, drawn with a seed (each worker process
    its own stream of it: see the module's docs). The next batch is read
    ahead while the current one is used: its pages asked of the kernel at
    once (local), or its requests in flight (remote). ``batches`` limits
    the stream (``None``: endless). ``targets=True`` yields pairs
    ``(x, y)``, ``y`` the ``length`` rows after each of ``x``'s first (as
    :class:`WindowDataset`). Picklable; each process opens the file once.
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
        targets: bool = False,
    ) -> None:
        if length <= 0 or batch_size < 0:
            raise ValueError("length must be positive and batch_size non-negative")
        self.length = int(length)
        self.batch_size = int(batch_size)
        self.seed = seed
        self.batches = batches
        self.prefetch = prefetch
        self.release = release
        self.targets = bool(targets)
        self._made_in = os.getpid()
        self._source = _Source(source, dtype, offset, shape)
        self.rows = len(self._source.array())
        span = self.length + 1 if self.targets else self.length
        if self.rows < span:
            raise ValueError(f"the array has {self.rows} rows, fewer than a window of {span}")

    def __iter__(self) -> Iterator[Any]:
        rng = _rng(self.seed, self._made_in)
        span = self.length + 1 if self.targets else self.length
        high = self.rows - span + 1

        def draw() -> np.ndarray:
            return rng.integers(0, high, size=self.batch_size)

        remote = self._source.remote()
        pool = ThreadPoolExecutor(max_workers=1) if remote and self.prefetch else None
        try:
            upcoming = draw()
            pending: Future | None = None
            if pool is not None:
                pending = pool.submit(_gather, self._source, upcoming, self.length, False, self.targets)
            elif self.prefetch:
                _windows.prefetch_windows(self._source.array(), upcoming, span)
            produced = 0
            while self.batches is None or produced < self.batches:
                starts = upcoming
                batch = pending.result() if pending is not None else None
                upcoming = draw()
                if pool is not None:
                    pending = pool.submit(_gather, self._source, upcoming, self.length, False, self.targets)
                if batch is None:
                    batch = _gather(self._source, starts, self.length, self.release, self.targets)
                    if self.prefetch:
                        _windows.prefetch_windows(self._source.array(), upcoming, span)
                produced += 1
                yield batch
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

    def __getstate__(self) -> dict:
        return dict(self.__dict__)

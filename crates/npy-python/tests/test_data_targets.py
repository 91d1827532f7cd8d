"""`npy_mmap.data` (issue 40): ``(x, y)`` pairs as nanoGPT's ``get_batch``
makes them (``y`` the tokens after ``x``'s first), and one seed giving each
worker process its own batches however the worker was started."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from npy_mmap.data import RandomBatches, WindowDataset

TOKENS = 50_000


@pytest.fixture
def tokens(tmp_path):
    values = ((np.arange(TOKENS, dtype=np.uint32) * 7919) % 50_257).astype("<u2")
    npy = tmp_path / "train.npy"
    np.save(npy, values)
    raw = tmp_path / "train.bin"
    values.tofile(raw)
    return npy, raw, values


def nanogpt_batch(data: np.ndarray, ix, length: int):
    """nanoGPT's get_batch, without torch."""
    x = np.stack([data[i : i + length].astype(np.int64) for i in ix])
    y = np.stack([data[i + 1 : i + 1 + length].astype(np.int64) for i in ix])
    return x, y


@pytest.mark.parametrize("kind", ["npy", "bin"])
def test_window_dataset_targets_are_the_next_tokens(tokens, kind: str) -> None:
    npy, raw, values = tokens
    data = WindowDataset(npy, 1024, targets=True) if kind == "npy" else WindowDataset(raw, 1024, dtype="uint16", targets=True)
    # A window needs 1,025 tokens: the last one fits only if its target does.
    assert len(data) == (TOKENS - 1025) // 1024 + 1
    x, y = data[3]
    want_x, want_y = nanogpt_batch(values, [3 * 1024], 1024)
    assert x.shape == y.shape == (1024,) and x.dtype == values.dtype
    assert (x == want_x[0]).all() and (y == want_y[0]).all()
    pairs = data.__getitems__([0, len(data) - 1, 5])
    assert len(pairs) == 3 and all(isinstance(p, tuple) and len(p) == 2 for p in pairs)
    want_x, want_y = nanogpt_batch(values, [0, (len(data) - 1) * 1024, 5 * 1024], 1024)
    assert (np.stack([p[0] for p in pairs]) == want_x).all() and (np.stack([p[1] for p in pairs]) == want_y).all()
    bx, by = data.batch([1, 2])
    assert bx.shape == by.shape == (2, 1024) and (bx[:, 1:] == by[:, :-1]).all()
    with pytest.raises(IndexError):
        data[len(data)]
    clone = pickle.loads(pickle.dumps(data))
    assert all((a == b).all() for a, b in zip(clone[7], data[7]))
    # Overlapping windows up to the very last token as a target.
    every = WindowDataset(npy, 1024, step=1, targets=True)
    assert len(every) == TOKENS - 1024
    assert every[len(every) - 1][1][-1] == values[-1]


def test_random_batches_targets_are_the_next_tokens(tokens) -> None:
    npy, _raw, values = tokens
    pairs = list(RandomBatches(npy, 256, 8, seed=11, batches=3, targets=True))
    rng = np.random.default_rng(11)
    for x, y in pairs:
        ix = rng.integers(0, TOKENS - 257 + 1, size=8)
        want_x, want_y = nanogpt_batch(values, ix, 256)
        assert x.shape == y.shape == (8, 256)
        assert (x == want_x).all() and (y == want_y).all()
    # Without targets: the same seed, the same starts (drawn below the end
    # of a window of 256 rather than 257).
    plain = next(iter(RandomBatches(npy, 256, 8, seed=11, batches=1)))
    ix = np.random.default_rng(11).integers(0, TOKENS - 256 + 1, size=8)
    assert (plain == nanogpt_batch(values, ix, 256)[0]).all()


def _first_batch(stream: RandomBatches) -> list:
    return next(iter(stream)).tolist()


def _first_batch_to_queue(stream: RandomBatches, queue) -> None:
    queue.put(_first_batch(stream))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_one_seed_gives_each_plain_worker_its_own_batches(tokens, method: str) -> None:
    npy, _raw, _values = tokens
    stream = RandomBatches(npy, 64, 4, seed=0, batches=1)
    context = multiprocessing.get_context(method)
    queue = context.Queue()
    workers = [context.Process(target=_first_batch_to_queue, args=(stream, queue)) for _ in range(2)]
    for worker in workers:
        worker.start()
    got = [queue.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    here = _first_batch(stream)
    assert got[0] != got[1], "two workers drew the same batches from one seed"
    assert here not in got
    # A pool's workers too (numbered by multiprocessing, whatever the pool).
    with ProcessPoolExecutor(2, mp_context=context) as pool:
        pooled = list(pool.map(_first_batch, [stream] * 4))
    assert len({str(b) for b in pooled}) >= 2


def test_the_main_process_draws_the_seeds_own_stream(tokens) -> None:
    npy, _raw, values = tokens
    batch = _first_batch(RandomBatches(npy, 64, 4, seed=5, batches=1))
    ix = np.random.default_rng(5).integers(0, TOKENS - 64 + 1, size=4)
    assert batch == nanogpt_batch(values, ix, 64)[0].tolist()


def test_an_unnumbered_process_is_warned(tokens, tmp_path) -> None:
    npy, _raw, _values = tokens
    stream = RandomBatches(npy, 64, 4, seed=0, batches=1)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # an os.fork child: neither PyTorch nor multiprocessing numbered it
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                _first_batch(stream)
            said = any(issubclass(w.category, RuntimeWarning) and "give each its own seed" in str(w.message) for w in caught)
            os.write(write_fd, b"1" if said else b"0")
        finally:
            os._exit(0)
    os.close(write_fd)
    answer = os.read(read_fd, 1)
    os.close(read_fd)
    os.waitpid(pid, 0)
    assert answer == b"1"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _first_batch(stream)  # the process that made it: no warning


def test_random_batches_read_local_windows_from_the_file(tmp_path, monkeypatch) -> None:
    """A local batch is read from the file into the batch (pread): the
    mapping's pages are neither copied from (faulted in) nor given back
    per window, the cost that made a warm epoch 2.4x slower than numpy's
    fancy index (BENCHMARKS.md); resident memory stays flat all the same."""
    import npy_mmap

    values = ((np.arange(1 << 20, dtype=np.int64) * 7919) % 50_257).astype("<u2")
    path = tmp_path / "big.npy"
    np.save(path, values)
    through_mapping: list[str] = []
    for name in ("windows", "release_windows"):
        real = getattr(npy_mmap._windows, name)

        def spy(*args, real=real, name=name):
            through_mapping.append(name)
            return real(*args)

        monkeypatch.setattr(npy_mmap._windows, name, spy)
    batches = list(RandomBatches(path, 1024, 8, seed=1, batches=20))
    assert through_mapping == []
    rng = np.random.default_rng(1)
    for batch in batches:
        ix = rng.integers(0, len(values) - 1024 + 1, size=8)
        assert (batch == nanogpt_batch(values, ix, 1024)[0]).all()
    # Kept pages (release=False) still go through the mapping's planner.
    list(RandomBatches(path, 1024, 8, seed=1, batches=2, release=False))
    assert through_mapping == ["windows", "windows"]

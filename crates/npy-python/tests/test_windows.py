"""Training-data windows (issue 32): `windows()`, headerless token files
through `memmap(...)`, `npy_mmap.data`'s dataset and random batches, in
this process, in `fork` and `spawn` workers, and over the local S3 server."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import subprocess
import sys
import uuid

import numpy as np
import pytest

import npy_mmap
from npy_mmap.data import RandomBatches, WindowDataset

TOKENS = 100_000


def _reference(a: np.ndarray, starts, length: int) -> np.ndarray:
    return np.stack([a[s : s + length] for s in starts]) if len(starts) else np.empty((0, length) + a.shape[1:], a.dtype)


@pytest.fixture
def token_npy(tmp_path):
    tokens = (np.arange(TOKENS, dtype=np.uint32) * 7919) % 50_257
    path = tmp_path / "train.npy"
    np.save(path, tokens.astype("<u2"))
    return path, tokens.astype("<u2")


@pytest.fixture
def token_bin(tmp_path):
    tokens = ((np.arange(TOKENS, dtype=np.uint32) * 104_729) % 65_000).astype("<u2")
    path = tmp_path / "train.bin"
    tokens.tofile(path)
    return path, tokens


@pytest.mark.parametrize("mode", ["r", "r+", "c"])
def test_windows_at_the_ends_overlapping_and_repeated_equal_numpys(token_npy, mode: str) -> None:
    path, tokens = token_npy
    mapped = npy_mmap.load(path, mmap_mode=mode)
    starts = [0, TOKENS - 1024, 17, 17, 500, 501, -1024]
    batch = npy_mmap.windows(mapped, starts, 1024)
    assert batch.shape == (7, 1024) and batch.dtype == tokens.dtype
    assert (batch == _reference(tokens, [s % TOKENS for s in starts], 1024)).all()
    assert type(batch) is np.ndarray  # a copy, holding nothing of the mapping
    assert npy_mmap.windows(mapped, [], 1024).shape == (0, 1024)
    # Rows of a matrix, and a slice of a mapping (an offset into the buffer).
    grid = np.arange(6000, dtype="<f8").reshape(1000, 6)
    np.save(path.with_name("grid.npy"), grid)
    mapped_grid = npy_mmap.load(path.with_name("grid.npy"), mmap_mode="r")
    assert (npy_mmap.windows(mapped_grid, [3, 990], 10) == _reference(grid, [3, 990], 10)).all()
    assert (npy_mmap.windows(mapped_grid[100:], [0, 5], 3) == _reference(grid[100:], [0, 5], 3)).all()
    # Plain arrays: numpy's way, same result.
    assert (npy_mmap.windows(tokens, [5, 6], 4) == _reference(tokens, [5, 6], 4)).all()


def test_windows_out_of_range_are_numpys_index_error_and_read_nothing(token_npy) -> None:
    path, tokens = token_npy
    mapped = npy_mmap.load(path, mmap_mode="r")
    for source in (mapped, tokens):
        with pytest.raises(IndexError, match=f"index {TOKENS} is out of bounds for axis 0 with size {TOKENS}"):
            npy_mmap.windows(source, [0, TOKENS - 10], 1024)
        with pytest.raises(IndexError, match="out of bounds for axis 0"):
            npy_mmap.windows(source, [-TOKENS - 1], 4)
        with pytest.raises(IndexError):
            npy_mmap.windows(source, [1.5], 4)
    with pytest.raises(ValueError, match="non-negative"):
        npy_mmap.windows(mapped, [0], -1)


def test_a_headerless_token_file_is_np_memmap_with_our_locks(token_bin) -> None:
    path, tokens = token_bin
    ours = npy_mmap.memmap(path, dtype=np.uint16, mode="r")
    theirs = np.memmap(path, dtype=np.uint16, mode="r")
    assert isinstance(ours, np.memmap) and ours.shape == theirs.shape == (TOKENS,)
    assert (ours == theirs).all() and ours.offset == 0 and ours.mode == "r"
    assert (npy_mmap.windows(ours, [3, 99_000], 1000) == _reference(tokens, [3, 99_000], 1000)).all()
    shaped = npy_mmap.memmap(path, dtype="<u2", mode="c", offset=200, shape=(1000, 10))
    assert (shaped == np.memmap(path, dtype="<u2", mode="c", offset=200, shape=(1000, 10))).all()
    fortran = npy_mmap.memmap(path, dtype="<u2", mode="r", shape=(100, 1000), order="F")
    assert (fortran == np.memmap(path, dtype="<u2", mode="r", shape=(100, 1000), order="F")).all()
    # numpy's words.
    with pytest.raises(ValueError, match="Size of available data is not a multiple of the data-type size"):
        npy_mmap.memmap(path, dtype=np.uint16, mode="r", offset=1)
    with pytest.raises(ValueError, match="mmap length is greater than file size"):
        npy_mmap.memmap(path, dtype=np.uint16, mode="r", shape=(TOKENS + 1,))
    with pytest.raises(ValueError, match="open_memmap"):
        npy_mmap.memmap(path, dtype=np.uint16, mode="w+", shape=(10,))
    # The locks are ours: a numpy-style writer keeps a strict reader of
    # another process (one that lends Rust references) out.
    writer = npy_mmap.memmap(path, dtype=np.uint16, mode="r+")
    script = (
        "import sys, npy_mmap\n"
        "try:\n"
        "    npy_mmap.memmap(sys.argv[1], dtype='<u2', mode='r', sharing='strict', locking='nonblocking')\n"
        "    print('opened')\n"
        "except BlockingIOError as error:\n"
        "    print('locked:', error)\n"
    )
    probe = subprocess.run([sys.executable, "-c", script, path], capture_output=True, text=True, check=True, timeout=60)
    assert probe.stdout.startswith("locked:") and "numpy-style read-write" in probe.stdout, probe.stdout
    del writer, ours, shaped, fortran


def test_the_dataset_indexes_windows_and_pickles_to_its_arguments(token_bin) -> None:
    path, tokens = token_bin
    data = WindowDataset(path, 1024, dtype="uint16")
    assert len(data) == TOKENS // 1024
    assert (data[0] == tokens[:1024]).all() and (data[-1] == tokens[(len(data) - 1) * 1024 :][:1024]).all()
    batch = data.__getitems__([3, 0, 3])
    assert len(batch) == 3 and all((b == tokens[i * 1024 : i * 1024 + 1024]).all() for b, i in zip(batch, [3, 0, 3]))
    overlapping = WindowDataset(path, 1024, step=1, dtype="uint16")
    assert len(overlapping) == TOKENS - 1024 + 1
    with pytest.raises(IndexError):
        data[len(data)]
    clone = pickle.loads(pickle.dumps(data))
    assert clone._source._array is None and (clone[5] == data[5]).all()


def test_random_batches_are_seeded_and_read_ahead(token_npy, monkeypatch) -> None:
    path, tokens = token_npy
    first = list(RandomBatches(path, 256, 8, seed=3, batches=4))
    again = list(RandomBatches(path, 256, 8, seed=3, batches=4))
    assert len(first) == 4 and all(b.shape == (8, 256) for b in first)
    assert all((a == b).all() for a, b in zip(first, again))
    # Batch k holds the windows at the k-th draw of the seeded generator.
    rng = np.random.default_rng(3)
    draws = [tuple(rng.integers(0, TOKENS - 256 + 1, size=8).tolist()) for _ in range(5)]
    for batch, starts in zip(first, draws):
        assert (batch == _reference(tokens, starts, 256)).all()
    # Read ahead: when batch k is handed out, the pages of batch k + 1 were
    # already asked of the kernel (prefetch_windows), and each batch is
    # asked for before it is read.
    calls: list = []
    for name in ("prefetch_windows", "windows"):
        real = getattr(npy_mmap._windows, name)

        def recording(a, starts, length, real=real, name=name):
            calls.append((name, tuple(np.asarray(starts).tolist())))
            return real(a, starts, length)

        monkeypatch.setattr(npy_mmap._windows, name, recording)
    # A local batch is read from the file (pread) when its pages are given
    # back: that read is the batch's read too.
    real_read = npy_mmap.data._Source.read_windows

    def recording_read(source, starts, length):
        calls.append(("windows", tuple(np.asarray(starts).tolist())))
        return real_read(source, starts, length)

    monkeypatch.setattr(npy_mmap.data._Source, "read_windows", recording_read)
    stream = iter(RandomBatches(path, 256, 8, seed=3, batches=4))
    for k in range(4):
        next(stream)
        assert ("prefetch_windows", draws[k + 1]) in calls, f"batch {k + 1} not read ahead of batch {k}"
        assert calls.index(("prefetch_windows", draws[k])) < calls.index(("windows", draws[k]))
    calls.clear()
    unprefetched = list(RandomBatches(path, 256, 8, seed=3, batches=4, prefetch=False, release=False))
    assert all((a == b).all() for a, b in zip(first, unprefetched))
    assert [name for name, _ in calls] == ["windows"] * 4


def test_a_worker_refuses_a_token_file_replaced_after_the_dataset_was_made(token_npy, token_bin) -> None:
    # Before: a pickled dataset opened the new file in the worker and read
    # uint32 tokens where uint16 ones were, without a word.
    from npy_mmap.dask import SourceChanged

    npy, tokens = token_npy
    data = WindowDataset(npy, 64)
    batches = RandomBatches(npy, 64, 2, seed=0, batches=1)
    shipped = pickle.dumps((data, batches))
    assert (pickle.loads(shipped)[0][1] == tokens[64:128]).all()  # unchanged: read
    np.save(npy, tokens.astype("<u4"))  # np.save rewrites the file in place
    worker_data, worker_batches = pickle.loads(shipped)
    with pytest.raises(SourceChanged, match="not what the dataset was built from"):
        worker_data[1]
    with pytest.raises(SourceChanged, match="device, inode and size"):
        next(iter(worker_batches))
    # A headerless file replaced by another of the same size (a rename).
    path, raw = token_bin
    tokens_bin = WindowDataset(path, 64, dtype="uint16")
    shipped = pickle.dumps(tokens_bin)
    other = path.with_name("other.bin")
    (raw[::-1].copy()).tofile(other)
    os.replace(other, path)
    with pytest.raises(SourceChanged, match="device, inode and size"):
        pickle.loads(shipped)[0]
    # The parent's own mapping is the file it pinned: it goes on reading it.
    assert (tokens_bin[0] == raw[:64]).all()


def _worker_batches(dataset, indices, queue) -> None:
    """Two batches in a worker, counting the times it maps the file."""
    try:
        from npy_mmap import data as data_module

        opens = []
        real = data_module._Source._open

        def counting(source):
            opens.append(os.getpid())
            return real(source)

        data_module._Source._open = counting
        batch = dataset.__getitems__(indices)
        dataset.__getitems__(indices)
        queue.put(("ok", [w.tolist() for w in batch], len(opens)))
    except BaseException as error:
        queue.put(("error", repr(error), None))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_workers_open_the_file_once_each(token_bin, method: str) -> None:
    path, tokens = token_bin
    data = WindowDataset(path, 512, dtype="uint16")
    data[0]  # the parent has it open: a forked child opens its own
    context = multiprocessing.get_context(method)
    queue = context.Queue()
    workers = [context.Process(target=_worker_batches, args=(data, [k, k + 1], queue)) for k in range(2)]
    for worker in workers:
        worker.start()
    results = sorted((queue.get(timeout=60) for _ in workers), key=lambda r: r[1][0] if r[0] == "ok" else [])
    for worker in workers:
        worker.join(timeout=30)
    assert all(kind == "ok" for kind, _, _ in results), results
    # Each worker mapped the file once (a forked one again, in its own
    # process), for two batches.
    assert [opens for _, _, opens in results] == [1, 1], results
    got = [w for _, windows, _ in results for w in windows]
    expected = [tokens[i * 512 : i * 512 + 512].tolist() for i in (0, 1, 1, 2)]
    assert sorted(got) == sorted(expected)


def test_remote_windows_and_batches(s3_bucket: str, token_npy) -> None:
    _path, tokens = token_npy
    url = f"s3://{s3_bucket}/tokens-{uuid.uuid4().hex}.npy"
    npy_mmap.save(url, tokens)
    remote = npy_mmap.load(url, mmap_mode="r")
    starts = [0, 40_000, TOKENS - 64, 40_010]
    assert (npy_mmap.windows(remote, starts, 64) == _reference(tokens, starts, 64)).all()
    with pytest.raises(IndexError, match="out of bounds"):
        npy_mmap.windows(remote, [TOKENS - 1], 64)
    batches = list(RandomBatches(url, 128, 4, seed=1, batches=3))
    local = list(RandomBatches(_path, 128, 4, seed=1, batches=3))
    assert all((a == b).all() for a, b in zip(batches, local))
    # A headerless object, as np.memmap's arguments describe it.
    raw_url = f"s3://{s3_bucket}/tokens-{uuid.uuid4().hex}.bin"
    import os

    import s3fs

    fs = s3fs.S3FileSystem(
        key=os.environ["AWS_ACCESS_KEY_ID"],
        secret=os.environ["AWS_SECRET_ACCESS_KEY"],
        client_kwargs={"endpoint_url": os.environ["AWS_ENDPOINT_URL"], "region_name": "us-east-1"},
    )
    fs.pipe(raw_url[len("s3://") :], tokens.tobytes())
    raw = npy_mmap.memmap(raw_url, dtype="<u2", mode="r")
    assert isinstance(raw, npy_mmap.RemoteArray) and raw.shape == (TOKENS,)
    assert (npy_mmap.windows(raw, [7, 99_000], 100) == _reference(tokens, [7, 99_000], 100)).all()


def _mapping_rss(path) -> int:
    """Bytes of `path`'s mappings resident in this process (/proc/self/smaps)."""
    total, ours = 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if fields and "-" in fields[0] and not fields[0].endswith(":"):
                ours = len(fields) > 5 and fields[5] == str(path)
            elif ours and fields[0] == "Rss:":
                total += int(fields[1]) * 1024
    return total


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/smaps")
def test_released_windows_leave_the_mapping_flat_on_a_warm_file(tmp_path) -> None:
    # A warm file whose page cache holds large folios (ext4, Linux 6.x): a
    # fault in one window maps up to 2 MiB around it. Releasing only the
    # windows' own pages left the rest mapped (32 MiB of this 64 MiB file
    # resident after 2,000 windows, before the fix); the released 2 MiB
    # blocks cover it.
    path = tmp_path / "warm.npy"
    np.save(path, np.arange(32 << 20, dtype="<u2"))
    with open(path, "rb") as f:
        # Written pages sit in small folios; read back after eviction, in
        # the read-ahead's large ones (as a corpus read once is).
        os.fsync(f.fileno())
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        while f.read(1 << 24):
            pass
    a = npy_mmap.load(path, mmap_mode="r")
    rng = np.random.default_rng(3)
    for _ in range(100):
        starts = rng.integers(len(a) - 1024, size=20)
        batch = npy_mmap.windows(a, starts, 1024)
        npy_mmap.release_windows(a, starts, 1024)
    assert batch[0, 0] == starts[0] % 65536
    assert _mapping_rss(path) <= 4 << 20
    del a, batch

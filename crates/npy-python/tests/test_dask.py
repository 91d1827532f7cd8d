"""npy_mmap.dask on a real distributed.LocalCluster with process workers."""

from __future__ import annotations

import collections
import fcntl
import itertools
import os
import pathlib
import pickle
import signal
import threading
import time
import uuid

import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster
from distributed.diagnostics.plugin import SchedulerPlugin

import npy_mmap
from npy_mmap.dask import NpyTarget, SourceChanged, from_npy, to_npy

WORKER_MEMORY = 400 << 20


class Runs(SchedulerPlugin):
    """What the scheduler saw: the tasks started again before they ran to
    their end (a retry: its worker died, or was killed for memory and
    restarted by its nanny), and which workers left (a result lost with its
    worker is computed again: the worker's leaving is what tells)."""

    name = "npy-runs"

    def __init__(self) -> None:
        self.running: collections.Counter = collections.Counter()
        self.started: collections.Counter = collections.Counter()
        self.removed: list[str] = []

    def transition(self, key, start, finish, *args, **kwargs) -> None:
        if finish == "processing":
            self.running[str(key)] += 1
            self.started[str(key)] = max(self.started[str(key)], self.running[str(key)])
        elif finish in ("memory", "erred", "forgotten"):
            # Ran to its end: a later start is a new run (another compute).
            self.running.pop(str(key), None)

    def remove_worker(self, scheduler, worker, **kwargs) -> None:
        self.removed.append(worker)


def _runs(dask_scheduler, reset: bool = False) -> tuple[dict, list]:
    plugin = dask_scheduler.plugins[Runs.name]
    seen = (dict(plugin.started), list(plugin.removed))
    if reset:
        plugin.running.clear()
        plugin.started.clear()
        plugin.removed.clear()
    return seen


@pytest.fixture(scope="module")
def client():
    """Two worker processes, one thread each, 400 MiB of memory each."""
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        memory_limit=WORKER_MEMORY,
    )
    with Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        pids = client.run(os.getpid)
        assert len(set(pids.values())) == 2 and os.getpid() not in pids.values()
        client.register_plugin(Runs())
        yield client
    cluster.close()


@pytest.fixture(autouse=True)
def ran_once(request, client: Client):
    """Every test: no worker left (none was killed for memory and restarted
    by its nanny) and every task started once, unless the test kills one.
    The same two worker processes before and after."""
    pids = client.run(os.getpid)
    client.run_on_scheduler(_runs, reset=True)
    yield
    started, removed = client.run_on_scheduler(_runs, reset=True)
    if request.node.get_closest_marker("kills_a_worker"):
        assert len(removed) == 1, removed
        client.wait_for_workers(2, timeout=60)
        return
    assert removed == [], f"workers left (killed for memory?): {removed}"
    assert client.run(os.getpid) == pids, "a worker process was restarted"
    again = {key: n for key, n in started.items() if n != 1}
    assert again == {}, f"tasks started more than once: {again}"


def test_reductions_of_a_file_bigger_than_a_workers_memory(client: Client, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "big.npy"
    rows, cols = 1_800_000, 64  # 439 MiB of float32: more than a worker's 400 MiB limit
    created = npy_mmap.open_memmap(path, mode="w+", dtype="<f4", shape=(rows, cols))
    for start in range(0, rows, 200_000):  # 9 blocks of 200,000 rows
        created[start : start + 200_000] = np.arange(start, start + 200_000, dtype="<f4")[:, None] % 1000
    del created
    # Default chunks: Dask's (128 MiB) is too big for these workers; the
    # default follows their memory (an eighth of it per thread).
    array = from_npy(path)
    assert array.shape == (rows, cols) and array.dtype == np.float32
    assert array.chunks[1] == (cols,) and len(array.chunks[0]) > 2  # the slow axis is chunked
    assert max(array.chunks[0]) * cols * 4 <= WORKER_MEMORY // 8
    # No task holds the whole array: each task's input is a small handle.
    graph = dict(array.__dask_graph__())
    assert all(len(repr(task)) < 2000 for task in graph.values())
    expected_sum = float(np.sum(np.arange(rows, dtype=np.float64) % 1000) * cols)
    total, mean = dask.compute(array.sum(dtype="f8"), array.mean(dtype="f8"))
    assert total == pytest.approx(expected_sum, rel=1e-12)
    assert mean == pytest.approx(expected_sum / (rows * cols), rel=1e-12)
    # std makes temporaries of a chunk's size: it fits too (the trial's
    # 128 MiB chunks never finished).
    std = array.std().compute()
    assert std == pytest.approx(float(np.std(np.arange(1000, dtype=np.float64))), rel=1e-3)
    doubled = (array[::1000] * 2 + 1).compute()
    reference = np.load(path, mmap_mode="r")[::1000] * 2 + 1
    assert (doubled == reference).all()


def test_round_trip_read_map_blocks_write_equals_numpy(client: Client, tmp_path: pathlib.Path) -> None:
    data = np.random.default_rng(1).standard_normal((10_000, 12)).astype("<f8")
    source, out = tmp_path / "in.npy", tmp_path / "out.npy"
    np.save(source, data)
    array = from_npy(source, chunks=(1000, 12))
    transformed = array.map_blocks(lambda b: np.sqrt(np.abs(b)) + 1, dtype="<f8")
    to_npy(transformed, out)
    expected = np.sqrt(np.abs(data)) + 1
    result = np.load(out)
    assert (result == expected).all()
    np.save(tmp_path / "ref.npy", expected)
    assert out.read_bytes() == (tmp_path / "ref.npy").read_bytes()
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []
    # Fortran-ordered sources and column chunks read right too.
    np.save(tmp_path / "f.npy", np.asfortranarray(data))
    assert (from_npy(tmp_path / "f.npy", chunks=(5000, 5)).compute() == data).all()


def test_npz_members_and_directories_of_blocks(client: Client, tmp_path: pathlib.Path) -> None:
    data = np.arange(30_000, dtype="<i8").reshape(3000, 10)
    np.savez(tmp_path / "a.npz", x=data, y=np.arange(5))
    member = from_npy(tmp_path / "a.npz", member="x", chunks=(700, 10))
    assert (member.compute() == data).all()
    # Deflated members are streamed per chunk, in C and Fortran order, with
    # chunks across the other axes too.
    np.savez_compressed(tmp_path / "c.npz", c=data, f=np.asfortranarray(data))
    for key in ("c", "f"):
        for chunks in ((700, 10), (700, 3), (3000, 4)):
            deflated = from_npy(tmp_path / "c.npz", member=key, chunks=chunks)
            assert (deflated.compute() == data).all(), (key, chunks)
    blocks = tmp_path / "blocks"
    blocks.mkdir()
    for i, start in enumerate(range(0, 3000, 1100)):
        np.save(blocks / f"{i}.npy", data[start : start + 1100])
    stacked = from_npy(blocks)
    assert stacked.chunks[0] == (1100, 1100, 800)
    assert (stacked.compute() == data).all()
    # A block replaced after the graph was built is refused.
    np.save(blocks / "1.npy", data[1100:2200].astype("<f8"))
    with pytest.raises(SourceChanged, match="1.npy"):
        stacked.compute()


class _Writing:
    """A block whose values are asked for only by the write into the target
    (``window[rows] = block`` in ``NpyTarget.__setitem__``, with the window
    mapped read-write): on the victim, that moment is marked and the task
    waits there to be killed."""

    # A duck array for dask (is_arraylike), so the block reaches the target
    # as it is, and numpy asks for its values only inside the write.
    __array_ufunc__ = None

    def __init__(self, block: np.ndarray, victim: int, marker: str) -> None:
        self.block, self.victim, self.marker = block, victim, marker
        self.shape, self.dtype, self.size, self.ndim = block.shape, block.dtype, block.size, block.ndim

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        if os.getpid() == self.victim:
            pathlib.Path(self.marker).touch()  # writing has started
            time.sleep(120)  # killed before this ends
        return self.block if dtype is None else self.block.astype(dtype)

    def __getitem__(self, index):  # what dask's checks may ask
        return self.block[index]


def _hang_on(block: np.ndarray, victim: int, marker: str) -> _Writing:
    return _Writing(block + 1, victim, marker)


@pytest.mark.kills_a_worker
def test_a_worker_killed_during_to_npy_still_gives_the_right_file(client: Client, tmp_path: pathlib.Path) -> None:
    data = np.arange(40 * 1000, dtype="<i4").reshape(40 * 100, 10)
    np.save(tmp_path / "in.npy", data)
    pids = list(client.run(os.getpid).values())
    marker = tmp_path / "victim-started"
    array = from_npy(tmp_path / "in.npy", chunks=(100, 10)).map_blocks(
        _hang_on, victim=pids[0], marker=str(marker), dtype="<i4"
    )
    killed = threading.Event()
    partial_then: list[str] = []

    def kill_one() -> None:
        # Killed once its task is writing (its window mapped read-write).
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        if marker.exists():
            partial_then.extend(p.name for p in tmp_path.iterdir() if ".out.npy.partial-" in p.name)
            os.kill(pids[0], signal.SIGKILL)
            killed.set()

    killer = threading.Thread(target=kill_one)
    killer.start()
    out = tmp_path / "out.npy"
    to_npy(array, out)
    killer.join()
    assert killed.is_set(), "the victim never started a task"
    assert len(partial_then) == 1, partial_then  # killed while the file was being written
    assert (np.load(out) == data + 1).all()
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []
    client.wait_for_workers(2, timeout=60)


def _fail_on_block(block: np.ndarray, block_info=None) -> np.ndarray:
    if block_info[0]["chunk-location"][0] == 3:
        raise RuntimeError("this block cannot be computed")
    return block


def test_a_failed_computation_leaves_no_file(client: Client, tmp_path: pathlib.Path) -> None:
    array = da.ones((1000, 4), chunks=(100, 4)).map_blocks(_fail_on_block, dtype="f8")
    with pytest.raises(RuntimeError, match="cannot be computed"):
        to_npy(array, tmp_path / "never.npy")
    assert list(tmp_path.iterdir()) == []


def test_s3_read_and_write_on_the_cluster(client: Client, s3_bucket: str) -> None:
    data = np.arange(6 * 1024 * 1024, dtype="<f4").reshape(-1, 256)  # 24 MiB: several 5 MiB parts
    url = f"s3://{s3_bucket}/dask-{uuid.uuid4().hex}.npy"
    npy_mmap.save(url, data)
    remote = from_npy(url, chunks=(4096, 256))
    assert remote.sum(dtype="f8").compute() == pytest.approx(float(data.sum(dtype="f8")))
    out = f"s3://{s3_bucket}/dask-out-{uuid.uuid4().hex}.npy"
    to_npy(remote * 2, out, part_size=5 << 20)
    back = npy_mmap.load(out)
    assert (back == data * 2).all()
    # numpy reads the same bytes np.save writes.
    import io

    buffer = io.BytesIO()
    np.save(buffer, data * 2)
    assert npy_mmap._native.download(out) == buffer.getvalue()

    failing = da.ones((4096, 1024), chunks=(512, 1024), dtype="f4").map_blocks(_fail_on_block, dtype="f4")
    missing = f"s3://{s3_bucket}/dask-failed-{uuid.uuid4().hex}.npy"
    with pytest.raises(RuntimeError, match="cannot be computed"):
        to_npy(failing, missing, part_size=5 << 20)
    with pytest.raises(FileNotFoundError):
        npy_mmap.load(missing)


def test_tasks_refuse_a_file_replaced_after_the_graph(client: Client, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "pinned.npy"
    np.save(path, np.arange(4000, dtype="<f8").reshape(1000, 4))
    array = from_npy(path, chunks=(250, 4))
    # Replaced (rename) by a float32 file of the same shape: another inode.
    np.save(tmp_path / "other.npy", np.arange(4000, dtype="<f4").reshape(1000, 4))
    os.replace(tmp_path / "other.npy", path)
    with pytest.raises(SourceChanged, match="not what the graph was built from"):
        array.compute()
    # Rewritten in place (np.save over it: the same inode and size), with
    # another header.
    array = from_npy(path, chunks=(250, 4))
    np.save(path, np.arange(4000, dtype="<i4").reshape(1000, 4))
    with pytest.raises(SourceChanged, match="header"):
        array.compute()
    # Grown by an append: another size.
    np.save(path, np.arange(4000, dtype="<f8").reshape(1000, 4))
    array = from_npy(path, chunks=(250, 4))
    npy_mmap.append(path, np.zeros((10, 4)))
    with pytest.raises(SourceChanged, match="size"):
        array.compute()
    # A member of a replaced archive, deflated or stored.
    for save in (np.savez, np.savez_compressed):
        save(tmp_path / "a.npz", x=np.arange(100, dtype="<f8"))
        member = from_npy(tmp_path / "a.npz", member="x", chunks=50)
        save(tmp_path / "b.npz", x=np.arange(100, dtype="<f4"))
        os.replace(tmp_path / "b.npz", tmp_path / "a.npz")
        with pytest.raises(SourceChanged):
            member.compute()


def test_tasks_refuse_an_object_replaced_after_the_graph(client: Client, s3_bucket: str) -> None:
    url = f"s3://{s3_bucket}/pinned-{uuid.uuid4().hex}.npy"
    npy_mmap.save(url, np.arange(4000, dtype="<f8").reshape(1000, 4))
    array = from_npy(url, chunks=(250, 4))
    assert array.sum().compute() == sum(range(4000))
    # The same header, other data: only the object's version tells.
    npy_mmap.save(url, np.ones((1000, 4), dtype="<f8"))
    with pytest.raises(SourceChanged, match="ETag"):
        array.compute()
    array = from_npy(url, chunks=(250, 4))
    npy_mmap.save(url, np.ones((1000, 4), dtype="<f4"))
    with pytest.raises(SourceChanged):
        array.compute()


def _s3fs():
    import s3fs

    return s3fs.S3FileSystem(
        key=os.environ["AWS_ACCESS_KEY_ID"],
        secret=os.environ["AWS_SECRET_ACCESS_KEY"],
        client_kwargs={"endpoint_url": os.environ["AWS_ENDPOINT_URL"], "region_name": "us-east-1"},
    )


def _put(s3_bucket: str, path: pathlib.Path) -> str:
    """`path` uploaded as it is (bytes numpy or we wrote), by s3fs: its URL."""
    key = f"{s3_bucket}/members-{uuid.uuid4().hex}/{path.name}"
    _s3fs().put(str(path), key)
    return f"s3://{key}"


def test_members_of_an_archive_in_s3_on_the_cluster(client: Client, s3_bucket: str, tmp_path: pathlib.Path) -> None:
    data = (np.arange(1_500_000, dtype="<i8") % 1009).reshape(-1, 6)  # 11.4 MiB: 12 of our blocks
    fortran = np.asfortranarray(data[:, :5])
    np.savez(tmp_path / "stored.npz", x=data, f=fortran, s=np.float64(2.5))
    np.savez_compressed(tmp_path / "numpy.npz", x=data, f=fortran)
    npy_mmap.savez_compressed(tmp_path / "ours.npz", x=data)
    urls = {name: _put(s3_bucket, tmp_path / f"{name}.npz") for name in ("stored", "numpy", "ours")}
    for name, url in urls.items():
        for chunks in ((40_000, 6), (60_000, 4), "auto"):
            member = from_npy(url, member="x", chunks=chunks)
            assert member.shape == data.shape and member.dtype == data.dtype
            assert (member.compute() == data).all(), (name, chunks)
        assert (from_npy(url, member="x")[123_456:123_460].compute() == data[123_456:123_460]).all()
    for name in ("stored", "numpy"):
        assert (from_npy(urls[name], member="f", chunks=(250_000, 2)).compute() == fortran).all(), name
    assert from_npy(urls["stored"], member="s").compute() == 2.5
    # Our writer's blocks: automatic chunks start where blocks start.
    with dask.config.set({"array.chunk-size": "3MiB"}):
        ours = from_npy(urls["ours"], member="x")
    block_rows = set(npy_mmap._native.LazyMember.open_url(urls["ours"], "x").block_rows())
    starts = set(itertools.accumulate((0,) + ours.chunks[0][:-1]))
    assert len(starts) > 2 and starts <= block_rows
    assert (ours.compute() == data).all()
    with pytest.raises(KeyError, match="nope"):
        from_npy(urls["ours"], member="nope")
    # The archive replaced after the graph: another ETag, refused.
    member = from_npy(urls["numpy"], member="x", chunks=(100_000, 6))
    npy_mmap.savez_compressed(tmp_path / "again.npz", x=data + 1)
    _s3fs().put(str(tmp_path / "again.npz"), urls["numpy"].removeprefix("s3://"))
    with pytest.raises(SourceChanged, match="ETag"):
        member.compute()


def test_empty_arrays_get_one_empty_chunk(client: Client, tmp_path: pathlib.Path) -> None:
    for shape, order in (((5, 0), "C"), ((0, 3), "C"), ((0,), "C"), ((4, 0, 2), "F")):
        path = tmp_path / "empty.npy"
        np.save(path, np.zeros(shape, dtype="<f4", order=order))
        array = from_npy(path)
        assert array.shape == shape and array.dtype == np.float32
        result = array.compute()
        assert result.shape == shape and result.dtype == np.float32


def test_a_relative_path_is_made_absolute(client: Client, tmp_path: pathlib.Path, monkeypatch) -> None:
    data = np.arange(300, dtype="<i8").reshape(100, 3)
    np.save(tmp_path / "rel.npy", data)
    monkeypatch.chdir(tmp_path)  # the workers' working directory is another
    array = from_npy("rel.npy", chunks=(30, 3))
    sources = [task[1] for task in dict(array.__dask_graph__()).values() if isinstance(task, tuple)]
    assert sources and all(os.path.isabs(s.location) for s in sources)
    assert (array.compute() == data).all()
    blocks = tmp_path / "blocks"
    blocks.mkdir()
    np.save(blocks / "0.npy", data)
    monkeypatch.chdir(blocks.parent)
    assert (from_npy("blocks").compute() == data).all()


def test_to_npy_into_a_missing_folder_names_the_target(client: Client, tmp_path: pathlib.Path) -> None:
    target = tmp_path / "missing" / "out.npy"
    with pytest.raises(FileNotFoundError) as raised:
        to_npy(da.ones((10, 2), chunks=5), target)
    assert raised.value.filename == str(target)
    assert str(target) in str(raised.value) and "partial" not in str(raised.value)
    assert "missing" in str(raised.value)


def _held(path: pathlib.Path) -> bool:
    """Whether a process holds the file's lock, as `npy tidy` judges it
    (its structure lock, flock; our own open file is another description)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_a_live_target_is_held_between_tasks(client: Client, tmp_path: pathlib.Path) -> None:
    target = NpyTarget(tmp_path / "out.npy", (100, 3), "<f8")
    partial = pathlib.Path(target.partial)
    assert partial.exists() and _held(partial)  # `npy tidy` calls it in use
    # A worker's copy holds no mapping; the driver's still holds the file.
    copy = pickle.loads(pickle.dumps(target))
    assert copy._created is None and copy.partial == target.partial
    darr = da.arange(300, dtype="<f8", chunks=60).reshape(100, 3).rechunk((20, 3))
    da.store(darr, target, lock=False, compute=True)
    assert _held(partial)
    target.commit()
    assert not partial.exists() and not _held(tmp_path / "out.npy")
    assert (np.load(tmp_path / "out.npy") == np.arange(300).reshape(100, 3)).all()
    aborted = NpyTarget(tmp_path / "never.npy", (10,), "<i4")
    aborted.abort()
    assert list(tmp_path.iterdir()) == [tmp_path / "out.npy"]


def test_a_target_replaces_its_file_through_the_atomic_commit(client: Client, tmp_path: pathlib.Path) -> None:
    """The finished file replaces the old one as np.save's rename would, but
    through the one atomic commit: the old file's mode is kept (os.replace
    left the partial file's), and a reader of the old file keeps its bytes."""
    out = tmp_path / "out.npy"
    np.save(out, np.zeros(4))
    os.chmod(out, 0o640)
    old = np.load(out, mmap_mode="r")
    to_npy(da.arange(10, chunks=5), out)
    assert (np.load(out) == np.arange(10)).all()
    assert os.stat(out).st_mode & 0o777 == 0o640
    assert (old == 0).all() and old.shape == (4,)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.npy"]


def test_fortran_urls_and_deflated_members_read_only_their_chunks(
    client: Client, tmp_path: pathlib.Path, s3_bucket: str
) -> None:
    """Each bigger than a worker's memory: a task that read the whole array
    (or inflated the whole member) would be killed by its nanny."""
    rows, cols = 1000, 110_000  # 440 MB of float32 in Fortran order
    data = np.asfortranarray(np.broadcast_to((np.arange(cols) % 7).astype("<f4"), (rows, cols)))
    assert data.nbytes > WORKER_MEMORY
    expected = float(rows * np.sum(np.arange(cols) % 7))
    url = f"s3://{s3_bucket}/fortran-{uuid.uuid4().hex}.npy"
    npy_mmap.save(url, data)
    np.savez_compressed(tmp_path / "big.npz", x=data)
    del data
    remote = from_npy(url)
    assert len(remote.chunks[1]) > 2 and remote.chunks[0] == (rows,)  # columns
    member = from_npy(tmp_path / "big.npz", member="x")
    assert len(member.chunks[1]) > 2 and member.chunks[0] == (rows,)
    total_remote, total_member = dask.compute(remote.sum(dtype="f8"), member.sum(dtype="f8"))
    assert total_remote == expected and total_member == expected
    assert (remote[:, 99_990:100_010].compute() == (np.arange(99_990, 100_010) % 7)).all()
    assert (member[3, 5:9].compute() == np.arange(5, 9) % 7).all()

"""npy_mmap.dask on a real distributed.LocalCluster with process workers."""

from __future__ import annotations

import os
import pathlib
import signal
import threading
import time
import uuid

import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster

import npy_mmap
from npy_mmap.dask import from_npy, to_npy


@pytest.fixture(scope="module")
def client():
    """Two worker processes, one thread each, 400 MiB of memory each."""
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        memory_limit="400MiB",
    )
    with Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        pids = client.run(os.getpid)
        assert len(set(pids.values())) == 2 and os.getpid() not in pids.values()
        yield client
    cluster.close()


def test_reductions_of_a_file_bigger_than_a_workers_memory(client: Client, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "big.npy"
    rows, cols = 1_800_000, 64  # 439 MiB of float32: more than a worker's 400 MiB limit
    created = npy_mmap.open_memmap(path, mode="w+", dtype="<f4", shape=(rows, cols))
    for start in range(0, rows, 200_000):  # 9 blocks of 200,000 rows
        created[start : start + 200_000] = np.arange(start, start + 200_000, dtype="<f4")[:, None] % 1000
    del created
    # Dask's default chunk (128 MiB) is for bigger workers: 16 MiB chunks.
    with dask.config.set({"array.chunk-size": "16MiB"}):
        array = from_npy(path)
    assert array.shape == (rows, cols) and array.dtype == np.float32
    assert array.chunks[1] == (cols,) and len(array.chunks[0]) > 2  # the slow axis is chunked
    # No task holds the whole array: each task's input is a small handle.
    graph = dict(array.__dask_graph__())
    assert all(len(repr(task)) < 2000 for task in graph.values())
    expected_sum = float(np.sum(np.arange(rows, dtype=np.float64) % 1000) * cols)
    total, mean = dask.compute(array.sum(dtype="f8"), array.mean(dtype="f8"))
    assert total == pytest.approx(expected_sum, rel=1e-12)
    assert mean == pytest.approx(expected_sum / (rows * cols), rel=1e-12)
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
    blocks = tmp_path / "blocks"
    blocks.mkdir()
    for i, start in enumerate(range(0, 3000, 1100)):
        np.save(blocks / f"{i}.npy", data[start : start + 1100])
    stacked = from_npy(blocks)
    assert stacked.chunks[0] == (1100, 1100, 800)
    assert (stacked.compute() == data).all()


def _slow(block: np.ndarray) -> np.ndarray:
    time.sleep(0.3)
    return block + 1


def test_a_worker_killed_during_to_npy_still_gives_the_right_file(client: Client, tmp_path: pathlib.Path) -> None:
    data = np.arange(40 * 1000, dtype="<i4").reshape(40 * 100, 10)
    np.save(tmp_path / "in.npy", data)
    array = from_npy(tmp_path / "in.npy", chunks=(100, 10)).map_blocks(_slow, dtype="<i4")
    pids = list(client.run(os.getpid).values())
    killed = threading.Event()

    def kill_one() -> None:
        time.sleep(1.5)
        os.kill(pids[0], signal.SIGKILL)
        killed.set()

    killer = threading.Thread(target=kill_one)
    killer.start()
    out = tmp_path / "out.npy"
    to_npy(array, out)
    killer.join()
    assert killed.is_set()
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

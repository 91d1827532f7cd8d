"""Deflated ``.npz`` members read by rows (issue 38): ``NpzFile.lazy``, the
block index our writer records, checkpoints for numpy's members, and the
files staying what numpy and zipfile read."""

from __future__ import annotations

import io
import pathlib
import uuid
import zipfile

import numpy as np
import pytest

import npy_mmap


def _signal(n: int) -> np.ndarray:
    i = np.arange(n, dtype=np.float64)
    noise = ((i.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)).astype(np.float64)
    return np.round((np.sin(i * 1e-3) * 100 + noise / (1 << 24)) * 1024) / 1024


def _check_lazy(lazy, x: np.ndarray) -> None:
    assert lazy.shape == x.shape and lazy.dtype == x.dtype and len(lazy) == len(x)
    for a, b in [(0, 10), (131_000, 132_100), (len(x) - 5, len(x)), (7, 7)]:
        np.testing.assert_array_equal(lazy.rows(a, b), x[a:b])
        np.testing.assert_array_equal(lazy[a:b], x[a:b])
    assert lazy[-1].tolist() == x[-1].tolist()
    picks = [5, len(x) - 3, 5, 3]
    np.testing.assert_array_equal(lazy[picks], x[picks])
    np.testing.assert_array_equal(lazy[10:100_000:997], x[10:100_000:997])
    np.testing.assert_array_equal(lazy.read(), x)
    np.testing.assert_array_equal(np.asarray(lazy), x)


def test_members_we_deflate_are_numpys_and_read_by_blocks(tmp_path: pathlib.Path) -> None:
    x = _signal(720_000).reshape(-1, 2)
    path = tmp_path / "ours.npz"
    npy_mmap.savez_compressed(path, x=x, meta=np.arange(3))
    with np.load(path) as theirs:
        assert theirs.files == ["x", "meta"]
        np.testing.assert_array_equal(theirs["x"], x)
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
    with npy_mmap.load(path) as npz:
        np.testing.assert_array_equal(npz["x"], x)  # load(npz)[name]: numpy's result
        lazy = npz.lazy("x")
        assert isinstance(lazy, npy_mmap.RemoteArray)
        _check_lazy(lazy, x)
    # From memory and from a file object, the same.
    with npy_mmap.load(io.BytesIO(path.read_bytes())) as npz:
        _check_lazy(npz.lazy("x"), x)


def test_numpys_members_get_checkpoints_and_an_index_file(tmp_path: pathlib.Path) -> None:
    x = _signal(500_000)
    path = tmp_path / "numpy.npz"
    np.savez_compressed(path, x=x)
    with npy_mmap.load(path) as npz:
        _check_lazy(npz.lazy("x"), x)
        assert npz.save_index() == 1
    sidecar = tmp_path / "numpy.npz.idx"
    assert sidecar.is_file() and sidecar.stat().st_size < 200_000
    with npy_mmap.load(path) as npz:
        np.testing.assert_array_equal(npz.lazy("x")[250_000:250_010], x[250_000:250_010])
    # Rewritten after: the stale file is refused, the reads stay right.
    y = x[::-1].copy()
    np.savez_compressed(path, x=y)
    with npy_mmap.load(path) as npz:
        np.testing.assert_array_equal(npz.lazy("x")[250_000:250_010], y[250_000:250_010])


def test_a_stored_member_is_its_read_only_mapping(tmp_path: pathlib.Path) -> None:
    x = np.arange(1000.0).reshape(100, 10)
    path = tmp_path / "stored.npz"
    np.savez(path, x=x)
    with npy_mmap.load(path) as npz:
        lazy = npz.lazy("x")
        assert isinstance(lazy, np.ndarray) and not lazy.flags.writeable
        np.testing.assert_array_equal(lazy, x)
        with pytest.raises(KeyError):
            npz.lazy("nope")


def test_a_slice_of_a_deflated_member_in_s3_reads_only_its_blocks(s3_bucket: str, tmp_path: pathlib.Path) -> None:
    import os

    import s3fs

    x = _signal(1_500_000)
    path = tmp_path / "remote.npz"
    npy_mmap.savez_compressed(path, x=x)
    key = f"{s3_bucket}/lazy-{uuid.uuid4().hex}.npz"
    fs = s3fs.S3FileSystem(
        key=os.environ["AWS_ACCESS_KEY_ID"],
        secret=os.environ["AWS_SECRET_ACCESS_KEY"],
        client_kwargs={"endpoint_url": os.environ["AWS_ENDPOINT_URL"], "region_name": "us-east-1"},
    )
    fs.put(str(path), key)
    lazy = npy_mmap.LazyMember.open_url(f"s3://{key}", "x")
    np.testing.assert_array_equal(lazy[1_400_000:1_400_100], x[1_400_000:1_400_100])
    np.testing.assert_array_equal(lazy.read(), x)


def test_dask_tasks_inflate_only_their_blocks_and_chunks_follow_them(tmp_path: pathlib.Path) -> None:
    import dask

    from npy_mmap.dask import from_npy

    x = _signal(1_500_000).reshape(-1, 3)  # 11.4 MiB: 12 blocks of our writer's
    npy_mmap.savez_compressed(tmp_path / "ours.npz", x=x)
    np.savez_compressed(tmp_path / "numpy.npz", x=x, f=np.asfortranarray(x))
    with dask.config.set({"array.chunk-size": "3MiB"}):
        ours = from_npy(tmp_path / "ours.npz", member="x")
    # Every chunk boundary is where a block starts (1 MiB of content).
    row_bytes = 3 * 8
    for edge in np.cumsum(ours.chunks[0])[:-1]:
        assert (128 + edge * row_bytes) % (1 << 20) < row_bytes, edge
    assert len(ours.chunks[0]) > 2
    np.testing.assert_array_equal(ours.compute(scheduler="threads"), x)
    assert ours.mean().compute(scheduler="processes") == pytest.approx(x.mean())
    for key in ("x", "f"):
        theirs = from_npy(tmp_path / "numpy.npz", member=key, chunks=(100_000, 3))
        np.testing.assert_array_equal(theirs.compute(scheduler="threads"), x)


def test_archives_from_memory_and_file_objects_read_like_numpys(tmp_path: pathlib.Path) -> None:
    x = _signal(300_000)
    objects = np.array(["a", 1, None], dtype=object)
    for save in (np.savez, np.savez_compressed, npy_mmap.savez_compressed):
        path = tmp_path / f"{save.__name__}.npz"
        save(path, x=x, o=objects, small=np.arange(5, dtype=">i2"))
        data = path.read_bytes()
        buffer = io.BytesIO(data)
        with open(path, "rb") as fid:
            for source in (buffer, fid):
                with npy_mmap.load(source, allow_pickle=True) as ours, np.load(path, allow_pickle=True) as theirs:
                    assert ours.files == theirs.files
                    for key in theirs.files:
                        a, b = ours[key], theirs[key]
                        assert a.dtype == b.dtype and a.shape == b.shape and a.flags.writeable
                        assert a.tolist() == b.tolist(), (save.__name__, key)
        # The BytesIO is not held: it can still be written.
        buffer.seek(0, 2)
        buffer.write(b"more")


def test_numpys_deflated_member_in_s3_gets_checkpoints_on_the_first_slice(s3_bucket: str, tmp_path: pathlib.Path) -> None:
    import os

    import s3fs

    x = _signal(1_500_000)
    np.savez_compressed(tmp_path / "numpy.npz", x=x)
    key = f"{s3_bucket}/lazy-numpy-{uuid.uuid4().hex}.npz"
    fs = s3fs.S3FileSystem(
        key=os.environ["AWS_ACCESS_KEY_ID"],
        secret=os.environ["AWS_SECRET_ACCESS_KEY"],
        client_kwargs={"endpoint_url": os.environ["AWS_ENDPOINT_URL"], "region_name": "us-east-1"},
    )
    fs.put(str(tmp_path / "numpy.npz"), key)
    native = npy_mmap._native.LazyMember.open_url(f"s3://{key}", "x")
    assert native.block_rows() == []  # numpy's member: no index of its own
    lazy = npy_mmap.LazyMember(native, "x")
    np.testing.assert_array_equal(lazy[1_400_000:1_400_100], x[1_400_000:1_400_100])
    starts = native.block_rows()
    assert len(starts) > 5 and starts == sorted(starts)  # checkpoints, kept
    np.testing.assert_array_equal(lazy[10:20], x[10:20])
    np.testing.assert_array_equal(lazy.read(), x)
    # Without build (what Dask's tasks use), rows still read right, from the start.
    plain = npy_mmap._native.LazyMember.open_url(f"s3://{key}", "x", build=False)
    np.testing.assert_array_equal(npy_mmap.LazyMember(plain, "x")[700_000:700_010], x[700_000:700_010])
    assert plain.block_rows() == []


def test_take_and_windows_work_on_a_lazy_member(tmp_path: pathlib.Path) -> None:
    x = (np.arange(3_000_000) % 1009).astype("<i8").reshape(-1, 3)
    npy_mmap.savez_compressed(tmp_path / "ours.npz", x=x)
    np.savez_compressed(tmp_path / "numpy.npz", x=x)
    for name in ("ours", "numpy"):
        lazy = npy_mmap.load(tmp_path / f"{name}.npz").lazy("x")
        rows = np.array([5, 999_999, 12, 500_000, 5])
        np.testing.assert_array_equal(npy_mmap.take(lazy, rows), np.take(x, rows))
        starts = [0, 10, 999_000, 12, 400_000]
        got = npy_mmap.windows(lazy, starts, 5)
        np.testing.assert_array_equal(got, np.stack([x[s : s + 5] for s in starts]))
        assert npy_mmap.windows(lazy, [], 5).shape == (0, 5, 3)
        with pytest.raises(IndexError, match="out of bounds for axis 0 with size 1000000"):
            npy_mmap.windows(lazy, [999_998], 5)

"""What issue 31 found untested: npz through file objects, `take` on npz
members and writable mappings, `append` to Fortran-order files, `advise`,
`read_header`, `open_memmap(version=)`, Python 2 strings, and live arrays
and live windows across processes."""

from __future__ import annotations

import io
import multiprocessing
import pathlib
import warnings

import numpy as np
import pytest

import npy_mmap


def test_savez_and_load_through_file_objects_both_ways() -> None:
    arrays = {"a": np.arange(10.0), "b": np.ones((3, 2), ">i4", order="F")}
    for saver in ("savez", "savez_compressed"):
        ours, theirs = io.BytesIO(), io.BytesIO()
        getattr(npy_mmap, saver)(ours, **arrays)
        getattr(np, saver)(theirs, **arrays)
        for stream in (ours, theirs):
            stream.seek(0)
            with npy_mmap.load(stream) as loaded, np.load(io.BytesIO(stream.getvalue())) as reference:
                assert loaded.files == reference.files == ["a", "b"]
                for key in arrays:
                    assert loaded[key].tobytes(order="A") == reference[key].tobytes(order="A")


def test_take_on_npz_members_and_writable_mappings(tmp_path: pathlib.Path) -> None:
    data = np.arange(4000, dtype="<f8").reshape(1000, 4)
    np.savez(tmp_path / "a.npz", x=data)
    idx = np.array([999, 0, 5, 5, -1])
    with npy_mmap.load(tmp_path / "a.npz", mmap_mode="r") as archive:
        member = archive["x"]
        assert isinstance(member, np.ndarray) and not member.flags.writeable
        assert (npy_mmap.take(member, idx, axis=0) == data[idx]).all()
        del member
    np.save(tmp_path / "w.npy", data)
    for mode in ("r+", "c"):
        writable = npy_mmap.load(tmp_path / "w.npy", mmap_mode=mode)
        writable[0, 0] = -7.0
        expected = data[idx].copy()
        expected[idx == 0, 0] = -7.0
        assert (npy_mmap.take(writable, idx, axis=0) == expected).all(), mode
        del writable
    strict = npy_mmap.load(tmp_path / "w.npy", mmap_mode="r+", sharing="strict")
    assert (npy_mmap.take(strict, idx, axis=0) == np.load(tmp_path / "w.npy")[idx]).all()


def test_append_to_a_fortran_order_file(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "f.npy"
    base = np.asfortranarray(np.arange(12, dtype="<i4").reshape(3, 4))
    np.save(path, base)
    more = np.asfortranarray(np.arange(100, 106, dtype="<i4").reshape(3, 2))
    assert npy_mmap.append(path, more) == 6  # rows of a Fortran array: the last axis
    grown = np.load(path)
    assert grown.shape == (3, 6) and grown.flags.f_contiguous
    assert (grown == np.concatenate([base, more], axis=1)).all()
    np.save(tmp_path / "ref.npy", np.asfortranarray(np.concatenate([base, more], axis=1)))
    assert path.read_bytes() == (tmp_path / "ref.npy").read_bytes()


def test_advise_read_header_and_open_memmap_versions(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "a.npy"
    np.save(path, np.arange(1000, dtype=">f4").reshape(10, 100))
    shape, fortran, dtype, offset = npy_mmap.read_header(path)
    with open(path, "rb") as f:
        np.lib.format.read_magic(f)
        assert (shape, fortran, dtype) == np.lib.format.read_array_header_1_0(f)
        assert offset == f.tell()
    with npy_mmap.mapped(path, "r") as m:
        for advice in ("normal", "random", "sequential", "willneed", "dontneed"):
            m.advise(advice)
        with pytest.raises(ValueError):
            m.advise("sideways")
        assert m.array[9, 99] == 999
    for version in ((1, 0), (2, 0), (3, 0)):
        target = tmp_path / f"v{version[0]}.npy"
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            created = npy_mmap.open_memmap(target, mode="w+", dtype="<i2", shape=(4,), version=version)
            created[:] = 7
            del created
            np.lib.format.open_memmap(tmp_path / "np.npy", mode="w+", dtype="<i2", shape=(4,), version=version)[:] = 7
        assert target.read_bytes() == (tmp_path / "np.npy").read_bytes(), version
    with pytest.raises(ValueError, match="we only support format version"):
        npy_mmap.open_memmap(tmp_path / "bad.npy", mode="w+", dtype="<i2", shape=(4,), version=(4, 0))


def test_python_2_strings_with_latin1_and_bytes(tmp_path: pathlib.Path) -> None:
    # numpy's own test file: an object array pickled by Python 2.
    path = pathlib.Path(np.__file__).parent / "lib" / "tests" / "data" / "py2-objarr.npy"
    for encoding in ("latin1", "bytes"):
        ours = npy_mmap.load(path, allow_pickle=True, encoding=encoding)
        theirs = np.load(path, allow_pickle=True, encoding=encoding)
        assert ours.shape == theirs.shape
        assert [repr(v) for v in ours.ravel()] == [repr(v) for v in theirs.ravel()]
    with pytest.raises(ValueError, match="encoding must be"):
        npy_mmap.load(path, allow_pickle=True, encoding="utf-8")


def _count_live(path: str, rows, total: int, barrier, queue) -> None:
    try:
        with npy_mmap.open_live(path, rows=rows) as live:
            barrier.wait(timeout=30)
            for _ in range(total):
                live.add(np.arange(live.shape[0]), 1)
        queue.put("ok")
    except BaseException as error:
        queue.put(repr(error))


@pytest.mark.parametrize("rows", [None, (2, 6)])
def test_live_arrays_and_windows_count_exactly_across_processes(tmp_path: pathlib.Path, rows) -> None:
    path = tmp_path / "counts.npy"
    np.save(path, np.zeros(8, dtype="<u8"))
    context = multiprocessing.get_context("spawn")
    barrier, queue = context.Barrier(3), context.Queue()
    workers = [context.Process(target=_count_live, args=(str(path), rows, 500, barrier, queue)) for _ in range(3)]
    for worker in workers:
        worker.start()
    results = [queue.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    assert results == ["ok"] * 3, results
    counts = np.load(path)
    expected = np.zeros(8, dtype="<u8")
    expected[slice(*rows) if rows else slice(None)] = 1500
    assert (counts == expected).all(), counts

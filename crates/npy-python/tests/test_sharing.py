"""Lifetimes, locks between Python and Rust processes, the GIL, and what
numpy lacks: close(), windows, append, live arrays, take."""

from __future__ import annotations

import functools
import gc
import io
import multiprocessing
import pathlib
import select
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import npy_mmap


def test_close_refuses_while_views_live_and_releases_after(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "a.npy"
    np.save(path, np.arange(100.0))
    m = npy_mmap.mapped(path, "r")
    a = m.array
    view = a[10:20]
    # Each memmap holds the mapping's owner (m.array as .base and ._mmap,
    # its slice as ._mmap): three references besides the MappedFile's.
    assert m.views == 3 and view[0] == 10.0
    with pytest.raises(BufferError, match="still alive"):
        m.close()
    assert not m.closed
    del a
    with pytest.raises(BufferError):
        m.close()  # the slice still views the mapping
    assert view.sum() == sum(range(10, 20))
    del view
    gc.collect()
    m.close()
    assert m.closed
    with pytest.raises(ValueError, match="closed"):
        m.array
    # The lock is gone: a writer maps the same bytes at once.
    w = npy_mmap.mapped(path, "r+", locking="nonblocking")
    w.array[0] = 5.0
    w.close()
    assert np.load(path)[0] == 5.0


_KEPT: list = []


class _Keeper:
    """In a reference cycle, so freed only by the collector, whose
    finalizer brings what it holds back to life (stores it in _KEPT)."""

    def __init__(self, held) -> None:
        self.held = held
        self.me = self

    def __del__(self) -> None:
        _KEPT.append(self.held)


def test_close_refuses_while_a_finalizer_kept_an_array(tmp_path: pathlib.Path) -> None:
    # Before: close() collected garbage, the collector cleared its weak
    # reference to the buffer object and then ran the finalizer, which kept
    # it: close() returned, and the mapping and its lock stayed.
    path = tmp_path / "kept.npy"
    np.save(path, np.arange(10.0))
    m = npy_mmap.mapped(path, "r", sharing="strict")
    _Keeper(m.array._mmap)  # the object that owns the mapping
    with pytest.raises(BufferError, match=r"still alive \(1 reference\(s\) besides this MappedFile's, held by: list"):
        m.close()
    assert not m.closed and len(_KEPT) == 1
    assert np.ndarray((10,), "<f8", buffer=_KEPT[0])[9] == 9.0
    # The lock is held, as close() said: a writer is kept out.
    with pytest.raises(BlockingIOError):
        npy_mmap.load(path, mmap_mode="r+", locking="nonblocking")
    _KEPT.clear()
    m.close()
    assert m.closed
    npy_mmap.load(path, mmap_mode="r+", locking="nonblocking")


def test_with_block_closes_and_load_mappings_live_as_long_as_views(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "a.npy"
    np.save(path, np.arange(10, dtype="<i8"))
    with npy_mmap.mapped(path) as m:
        assert int(m.array.sum()) == 45
    assert m.closed
    # A mapping from load() holds its lock while any view lives (a strict
    # one keeps numpy-style writers out: docs/SAFETY.md).
    a = npy_mmap.load(path, mmap_mode="r", sharing="strict")
    tail = a[5:]
    del a
    with pytest.raises(BlockingIOError):
        npy_mmap.load(path, mmap_mode="r+", locking="nonblocking")
    del tail
    gc.collect()
    npy_mmap.load(path, mmap_mode="r+", locking="nonblocking")


def test_a_python_reader_makes_a_rust_writer_wait_and_the_other_way_round(
    tmp_path: pathlib.Path, lock_probe: pathlib.Path
) -> None:
    path = tmp_path / "shared.npy"
    np.save(path, np.zeros(1000))
    reader = npy_mmap.load(path, mmap_mode="r")
    probe = subprocess.run([lock_probe, "try-rw", path], capture_output=True, text=True, check=True)
    assert probe.stdout.startswith("locked"), probe.stdout
    # Another reader (Rust) is admitted beside ours.
    probe = subprocess.run([lock_probe, "try-r", path], capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "opened"
    del reader
    gc.collect()
    probe = subprocess.run([lock_probe, "try-rw", path], capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "opened", probe.stdout

    # A Rust writer holds the bytes: Python readers wait for it, or fail at once.
    holder = subprocess.Popen([lock_probe, "hold-rw", path, "1.5"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(BlockingIOError, match="another process"):
            npy_mmap.load(path, mmap_mode="r", locking="nonblocking")
        waited = npy_mmap.load(path, mmap_mode="r", locking=10.0)
        # The reader got the bytes only once the holder let them go: it had
        # said "releasing" already (a reader let in early would find the
        # holder still holding, nothing more on its stdout).
        assert select.select([holder.stdout], [], [], 0)[0], "the reader did not wait for the writer"
        assert holder.stdout.readline().strip() == "releasing"
        assert waited.shape == (1000,)
        del waited
    finally:
        holder.wait(timeout=20)


def _read_in_other_process(path: str, queue) -> None:
    try:
        npy_mmap.load(path, mmap_mode="r+", locking="nonblocking")
        queue.put("opened")
    except BlockingIOError:
        queue.put("locked")


def test_a_strict_python_reader_keeps_writers_of_other_processes_out(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "p.npy"
    np.save(path, np.zeros(10))
    held = npy_mmap.load(path, mmap_mode="r", sharing="strict")
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_read_in_other_process, args=(str(path), queue))
    process.start()
    assert queue.get(timeout=60) == "locked"
    process.join()
    del held


def _write_window(path: str, worker: int, rows: int, barrier, queue) -> None:
    """Maps its own rows read-write (strict: every other mapping of them is
    kept out), then writes them while the other worker writes its own."""
    try:
        window = npy_mmap.mapped(path, "r+", rows=(worker * rows, (worker + 1) * rows), locking="nonblocking", sharing="strict")
        barrier.wait(timeout=60)  # 1: every window is mapped and locked at once
        barrier.wait(timeout=60)  # 2: the parent checked the locks; write
        window.array[:] = worker + 1
        barrier.wait(timeout=60)  # 3: both wrote while both held their windows
        window.flush()
        window.close()
        queue.put(("ok", worker))
    except BaseException as error:
        barrier.abort()
        queue.put(("error", f"{type(error).__name__}: {error}"))


def test_windows_of_disjoint_rows_write_in_parallel(tmp_path: pathlib.Path) -> None:
    # Before, one process wrote one window after the other. Now two
    # processes hold strict read-write windows of disjoint rows at once and
    # write them at the same time (barriers, not sleeps, order the steps).
    path = tmp_path / "w.npy"
    rows = 4096
    npy_mmap.open_memmap(path, mode="w+", dtype="<f4", shape=(2 * rows, 1024), reserve=True)
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(3)
    queue = context.Queue()
    workers = [context.Process(target=_write_window, args=(str(path), k, rows, barrier, queue)) for k in range(2)]
    for worker in workers:
        worker.start()
    try:
        try:
            barrier.wait(timeout=60)
            # Both windows are held: rows across the boundary are kept out.
            with pytest.raises(BlockingIOError):
                npy_mmap.mapped(path, "r", rows=(rows - 10, rows + 10), locking="nonblocking", sharing="strict")
            barrier.wait(timeout=60)
            barrier.wait(timeout=60)
        except threading.BrokenBarrierError:
            pass  # a worker failed: its report says how
        results = [queue.get(timeout=60) for _ in workers]
    finally:
        for worker in workers:
            worker.join(timeout=60)
    assert all(kind == "ok" for kind, _ in results), results
    data = np.load(path)
    assert (data[:rows] == 1).all() and (data[rows:] == 2).all()


def test_append_grows_the_file_in_place(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "log.npy"
    np.save(path, np.arange(6, dtype="<i4").reshape(2, 3))
    assert npy_mmap.append(path, np.arange(6, 12, dtype="<i4").reshape(2, 3)) == 4
    assert npy_mmap.append(path, [12, 13, 14]) == 5
    assert (np.load(path) == np.arange(15).reshape(5, 3)).all()
    with pytest.raises(ValueError, match="cannot append"):
        npy_mmap.append(path, np.zeros((1, 3), dtype="<f8"))
    with pytest.raises(ValueError, match="cannot append"):
        npy_mmap.append(path, np.zeros((1, 4), dtype="<i4"))
    # The header numpy would write for the grown array: growth padding kept.
    np.save(tmp_path / "ref.npy", np.arange(15, dtype="<i4").reshape(5, 3))
    assert path.read_bytes() == (tmp_path / "ref.npy").read_bytes()


def test_live_arrays_count_exactly_across_threads(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "hist.npy"
    np.save(path, np.zeros(16, dtype="<u8"))
    live = npy_mmap.open_live(path)
    other = npy_mmap.open_live(path)  # live mappings share the bytes
    with pytest.raises(BlockingIOError):
        npy_mmap.load(path, mmap_mode="r", locking="nonblocking")
    indices = np.arange(10_000) % 16

    def work(target: npy_mmap.LiveArray) -> None:
        for _ in range(10):
            target.add(indices, 1)

    threads = [threading.Thread(target=work, args=(t,)) for t in (live, other, live, other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    snapshot = live.snapshot()
    assert snapshot.sum() == 4 * 10 * 10_000 and (snapshot == 4 * 10 * 10_000 // 16).all()
    live.close()
    other.close()
    assert np.load(path).sum() == 400_000

    np.save(tmp_path / "f.npy", np.zeros((2, 3), dtype="<f8"))
    with npy_mmap.open_live(tmp_path / "f.npy") as grid:
        grid.add((np.array([0, 1, -1]), np.array([2, 0, 2])), [0.5, 1.5, 2.0])
        assert grid.snapshot().tolist() == [[0, 0, 0.5], [1.5, 0, 2.0]]
        with pytest.raises(IndexError):
            grid.add((np.array([5]), np.array([0])), 1.0)
    np.save(tmp_path / "s.npy", np.zeros(2, dtype="<U2"))
    with pytest.raises(TypeError):
        npy_mmap.open_live(tmp_path / "s.npy").add([0], 1)


def test_take_gathers_like_numpy(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "t.npy"
    data = np.arange(1000 * 4, dtype="<f8").reshape(1000, 4)
    np.save(path, data)
    mapped = npy_mmap.load(path, mmap_mode="r")
    idx = np.array([3, 999, -1, 0, 500])
    assert (npy_mmap.take(mapped, idx, axis=0) == data[idx]).all()
    assert (npy_mmap.take(mapped, idx) == np.take(data, idx)).all()
    inner = np.array([3, 989, -1, 0])
    assert (npy_mmap.take(mapped[10:], inner, axis=0) == data[10:][inner]).all()
    assert (npy_mmap.take(data, idx, axis=0) == data[idx]).all()  # plain arrays: numpy's take
    with pytest.raises(IndexError):
        npy_mmap.take(mapped, [1000], axis=0)


def test_long_calls_release_the_gil(tmp_path: pathlib.Path) -> None:
    """While one thread is inside a long native call (load, save, take),
    another runs Python code: it sees the call in progress.

    The main thread's profiler is ``print`` into a ``StringIO`` (C code: no
    Python frame, so the GIL cannot change hands while it writes): it writes
    a line when the native function is called and another the moment it
    returns. The other thread needs the GIL to run at all; it looks at the
    last line. If that line is the native call's, the main thread is inside
    it (its return would have been written before the GIL could pass) and
    let the GIL go. A call that held the GIL throughout is never seen, on any
    machine; one that releases it is seen as soon as the other thread gets
    a turn, in as many calls as that takes (within a generous deadline).
    """
    path = tmp_path / "big.npy"
    big = np.ones(32 << 20, dtype="<u1").reshape(-1, 1024)  # 32 MiB
    np.save(path, big)
    mapped = npy_mmap.load(path, mmap_mode="r")
    rows = np.random.default_rng(0).integers(0, big.shape[0], size=100_000)
    calls = {
        "load": lambda: npy_mmap.load(path),
        "save": lambda: npy_mmap.save(tmp_path / "copy.npy", big),
        "take": lambda: npy_mmap.take(mapped, rows, axis=0),
    }
    events = io.StringIO()
    profiler = functools.partial(print, file=events)  # (frame, event, arg) -> one line
    seen: set = set()
    stop = threading.Event()

    def watcher() -> None:
        while not stop.is_set():
            lines = events.getvalue().splitlines()
            last = lines[-1] if lines else ""
            for name in calls:
                if "/npy_mmap/" in last and last.endswith(f" c_call <built-in function {name}>"):
                    seen.add(name)
            time.sleep(0)  # gives the GIL back

    thread = threading.Thread(target=watcher)
    thread.start()
    deadline = time.monotonic() + 120
    try:
        for name, call in calls.items():
            tries = 0
            while name not in seen and time.monotonic() < deadline:
                events.seek(0)
                events.truncate()
                sys.setprofile(profiler)
                try:
                    call()
                finally:
                    sys.setprofile(None)
                tries += 1
            assert name in seen, f"{name}: no other thread ran during {tries} calls"
    finally:
        stop.set()
        thread.join()


def _rss() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def test_a_mapped_4_gib_array_adds_no_resident_memory_until_touched(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "huge.npy"
    created = npy_mmap.open_memmap(path, mode="w+", dtype="<f8", shape=(1 << 19, 1024))  # 4 GiB, sparse
    del created
    gc.collect()
    before = _rss()
    array = npy_mmap.load(path, mmap_mode="r")
    assert array.nbytes == 4 << 30
    assert _rss() - before < 16 << 20
    assert float(array[123_456, 7]) == 0.0  # one page touched
    assert float(array[::4096, 0].sum()) == 0.0  # 128 rows: 128 pages
    assert _rss() - before < 32 << 20
    del array

"""numpy's own sharing habits, unchanged, with npy_mmap in place of numpy's
functions (issue 30): workers filling one ``r+`` file while the parent keeps
its ``w+`` array, readers beside writers, re-binding in one process; Rust
mappings that lend references still exclude every writer of their bytes,
both ways. And no array ever outlives its mapping (issue 29): a buffer
reached through ``np.ndarray(buffer=...)`` keeps the bytes mapped.

Every wait here is bounded (a barrier or a queue with a timeout), never a
sleep-and-hope."""

from __future__ import annotations

import gc
import multiprocessing
import pathlib
import subprocess

import numpy as np
import pytest

import npy_mmap

ROWS, COLS = 64, 1024
WAIT = 20.0  # seconds any step may take before the test fails


def _fill_rows(path: str, worker: int, workers: int, barrier, queue) -> None:
    """numpy's pattern: map the whole file r+, write this worker's rows."""
    try:
        array = npy_mmap.open_memmap(path, mode="r+")
        # Every worker has its mapping before any fills: a worker kept out
        # by another's mapping would leave the barrier broken.
        barrier.wait(timeout=WAIT)
        share = ROWS // workers
        array[worker * share : (worker + 1) * share] = worker + 1
        array.flush()
        del array
        queue.put(("ok", worker))
    except BaseException as error:  # reported to the parent, which fails
        queue.put(("error", f"{type(error).__name__}: {error}"))


@pytest.mark.parametrize("method", ["fork", "spawn"])
@pytest.mark.parametrize("workers", [2, 4])
def test_workers_fill_one_file_while_the_parent_keeps_its_array(
    tmp_path: pathlib.Path, method: str, workers: int
) -> None:
    path = tmp_path / "fill.npy"
    parent = npy_mmap.open_memmap(path, mode="w+", dtype="<f4", shape=(ROWS, COLS))
    context = multiprocessing.get_context(method)
    barrier = context.Barrier(workers)
    queue = context.Queue()
    processes = [
        context.Process(target=_fill_rows, args=(str(path), w, workers, barrier, queue)) for w in range(workers)
    ]
    for process in processes:
        process.start()
    results = [queue.get(timeout=60) for _ in processes]
    for process in processes:
        process.join(timeout=WAIT)
    assert all(kind == "ok" for kind, _ in results), results
    # The parent's array sees the workers' rows (one page cache), and numpy
    # reads the file equal.
    expected = np.repeat(np.arange(1, workers + 1, dtype="<f4"), ROWS // workers)[:, None] * np.ones(COLS, "<f4")
    assert (parent == expected).all()
    del parent
    assert (np.load(path) == expected).all()


def _hold_rw(path: str, ready, done) -> None:
    array = npy_mmap.load(path, mmap_mode="r+")
    array[0] = 42.0
    ready.set()
    done.wait(timeout=WAIT)
    del array


def test_readers_beside_a_writer_in_another_process_never_wait(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "rw.npy"
    np.save(path, np.zeros(1000))
    context = multiprocessing.get_context("spawn")
    ready, done = context.Event(), context.Event()
    writer = context.Process(target=_hold_rw, args=(str(path), ready, done))
    writer.start()
    try:
        assert ready.wait(timeout=60)
        # Non-blocking: a reader that would wait raises at once instead.
        reader = npy_mmap.load(path, mmap_mode="r", locking="nonblocking")
        other = npy_mmap.load(path, mmap_mode="r+", locking="nonblocking")
        cow = npy_mmap.load(path, mmap_mode="c", locking="nonblocking")
        assert reader[0] == 42.0 and other[0] == 42.0 and cow[0] == 42.0
        del reader, other, cow
    finally:
        done.set()
        writer.join(timeout=WAIT)
    assert writer.exitcode == 0


def test_rebinding_and_numpys_own_functions_mixed_in_one_process(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "re.npy"
    ma = npy_mmap.open_memmap(path, mode="w+", dtype="<i8", shape=(10,))
    ma[:] = np.arange(10)
    # The second mapping is made before the first name lets go of the first.
    ma = npy_mmap.open_memmap(path, mode="r")
    assert ma.tolist() == list(range(10))
    theirs = np.lib.format.open_memmap(path, mode="r+")
    ours = npy_mmap.load(path, mmap_mode="r+", locking="nonblocking")
    theirs[3] = 30
    ours[4] = 40
    assert ma[3] == 30 and ma[4] == 40 and np.load(path)[4] == 40
    del theirs, ours, ma


def test_strict_mappings_keep_their_promise_within_python(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.npy"
    np.save(path, np.zeros(10))
    reader = npy_mmap.load(path, mmap_mode="r", sharing="strict")
    with pytest.raises(BlockingIOError, match="strict"):
        npy_mmap.load(path, mmap_mode="r+", locking="nonblocking")
    npy_mmap.load(path, mmap_mode="r", locking="nonblocking")  # a numpy-style reader is fine
    del reader
    gc.collect()
    with pytest.raises(ValueError, match="sharing must be"):
        npy_mmap.load(path, mmap_mode="r", sharing="loose")


def _probe(lock_probe: pathlib.Path, verb: str, path: pathlib.Path) -> str:
    return subprocess.run([lock_probe, verb, path], capture_output=True, text=True, check=True, timeout=60).stdout


def test_rust_references_and_numpy_style_writers_exclude_each_other(
    tmp_path: pathlib.Path, lock_probe: pathlib.Path
) -> None:
    path = tmp_path / "x.npy"
    np.save(path, np.zeros(1000))
    # A Python r+ (numpy-style writer) keeps Rust's &[T] and &mut [T] out.
    writer = npy_mmap.load(path, mmap_mode="r+")
    assert _probe(lock_probe, "try-r", path).startswith("locked: ")
    assert "numpy-style read-write mapping" in _probe(lock_probe, "try-rw", path)
    del writer
    gc.collect()
    # A Python r (numpy-style reader): Rust readers are admitted, writers not.
    reader = npy_mmap.load(path, mmap_mode="r")
    assert _probe(lock_probe, "try-r", path).strip() == "opened"
    assert "numpy-style mapping" in _probe(lock_probe, "try-rw", path)
    del reader
    gc.collect()
    assert _probe(lock_probe, "try-rw", path).strip() == "opened"

    # The other way: a Rust reader keeps Python writers out, not readers.
    holder = subprocess.Popen([lock_probe, "hold-r", path, "30"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(BlockingIOError) as refused:
            npy_mmap.load(path, mmap_mode="r+", locking="nonblocking")
        message = str(refused.value)
        assert "strict (Rust-reference) read-only mapping" in message and "Locking::" not in message
        for mode in ("r", "c"):
            npy_mmap.load(path, mmap_mode=mode, locking="nonblocking")
    finally:
        holder.kill()
        holder.wait(timeout=WAIT)
    # A Rust writer keeps every Python mapping out.
    holder = subprocess.Popen([lock_probe, "hold-rw", path, "30"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        for mode in ("r", "r+", "c"):
            with pytest.raises(BlockingIOError, match="strict"):
                npy_mmap.load(path, mmap_mode=mode, locking="nonblocking")
    finally:
        holder.kill()
        holder.wait(timeout=WAIT)


def test_a_lock_message_in_python_names_pythons_switch(tmp_path: pathlib.Path, lock_probe: pathlib.Path) -> None:
    path = tmp_path / "m.npy"
    np.save(path, np.zeros(10))
    holder = subprocess.Popen([lock_probe, "hold-rw", path, "30"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(BlockingIOError) as refused:
            npy_mmap.load(path, mmap_mode="r", locking=0.2)
        message = str(refused.value)
        assert "locking='blocking'" in message and "Locking::" not in message, message
    finally:
        holder.kill()
        holder.wait(timeout=WAIT)


# ---- issue 29: no array outlives its mapping -------------------------------


def _stale_arrays(m: npy_mmap.MappedFile) -> list[np.ndarray]:
    """Arrays over the mapping that hold no buffer export, every way numpy
    allows: ``np.ndarray(buffer=obj)`` with obj a memmap's ``_mmap``, and
    with obj the ``memoryview.obj`` at the end of a ``.base`` chain."""
    array = m.array
    base = array
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    owner = base.obj if isinstance(base, memoryview) else base
    made = [
        np.ndarray(array.shape, array.dtype, buffer=array._mmap),
        np.ndarray(array.shape, array.dtype, buffer=owner),
    ]
    del array, base, owner
    return made


@pytest.mark.parametrize("mode", ["r", "r+"])
def test_an_array_made_from_the_buffer_object_keeps_the_mapping(tmp_path: pathlib.Path, mode: str) -> None:
    path = tmp_path / "stale.npy"
    np.save(path, np.arange(1000.0))
    m = npy_mmap.mapped(path, mode)
    stale = _stale_arrays(m)
    gc.collect()
    # numpy released the stale arrays' buffer exports at once (counting
    # exports cannot see them), but each holds the owner as its .base.
    assert m.views == 2
    for made in stale:
        with pytest.raises(BufferError, match="still alive"):
            m.close()
        assert not m.closed
        # Still mapped: the array reads the file's bytes, no SIGSEGV.
        assert made[999] == 999.0
    # A same-size file mapped r+ now cannot land at the stale address.
    other_path = tmp_path / "other.npy"
    np.save(other_path, np.zeros(1000))
    other = npy_mmap.load(other_path, mmap_mode="r+")
    if mode == "r+":
        stale[0][0] = -1.0
    assert np.load(other_path)[0] == 0.0
    del other, stale, made
    gc.collect()
    m.close()
    assert m.closed
    if mode == "r+":
        assert np.load(path)[0] == -1.0


def test_the_buffer_objects_close_never_unmaps(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "b.npy"
    np.save(path, np.arange(10.0))
    m = npy_mmap.load(path, mmap_mode="r")
    made = np.ndarray(m.shape, m.dtype, buffer=m._mmap)
    with pytest.raises(BufferError, match="released when the last reference goes"):
        m._mmap.close()
    assert made[9] == 9.0 and m[9] == 9.0


def _try_strict_rw(path: str, queue) -> None:
    try:
        npy_mmap.load(path, mmap_mode="r+", sharing="strict", locking="nonblocking")
        queue.put("opened")
    except BlockingIOError as error:
        queue.put(str(error))


def test_a_forked_child_knows_what_it_inherited(tmp_path: pathlib.Path) -> None:
    """The registry a forked child starts with describes the child: the
    parent's mappings it inherited (still mapped in the child, with their
    locks) are named as inherited, not as the child's own doing."""
    path = tmp_path / "f.npy"
    np.save(path, np.zeros(10))
    held = npy_mmap.load(path, mmap_mode="r", sharing="strict")
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_try_strict_rw, args=(str(path), queue))
    child.start()
    said = queue.get(timeout=60)
    child.join(timeout=WAIT)
    assert "inherited from its parent through fork" in said, said
    del held

"""The two doors of the extension (issue 39).

Out: every array over memory Rust owns (or maps) has that owner as its
``.base``, with nothing between that Python code can release: releasing
every ``memoryview`` on the chain frees nothing under a live array.

In: every Python buffer Rust reads goes through one function, which copies
bytes another process may write in bounded chunks with atomic loads, and
checksums, compresses and writes what must match its checksum from one
copy per chunk: an archive of a mapping another process writes meanwhile
is always readable.
"""

from __future__ import annotations

import multiprocessing
import pathlib
import subprocess
import sys
import uuid
import zipfile

import numpy as np
import pytest

import npy_mmap

KINDS = pathlib.Path(__file__).with_name("_door_out_kinds.py")
WAIT = 60.0

LOCAL_KINDS = [
    "load",
    "load_stream",
    "load_r",
    "load_r+",
    "load_c",
    "load_r_strict",
    "load_r+_strict",
    "load_c_strict",
    "open_memmap_r+",
    "open_memmap_w+",
    "mapped",
    "memmap",
    "take_flat",
    "take_rows",
    "take_strict",
    "windows",
    "npz_stored",
    "npz_deflated",
    "npz_mapped",
    "npz_mapped_deflated",
    "live_snapshot",
    "objects_nested",
    "window_dataset",
    "random_batches",
]
REMOTE_KINDS = ["remote_load", "remote_rows", "remote_rows_at", "remote_windows"]


def _run_kind(kind: str, directory: pathlib.Path, url: str | None = None) -> None:
    args = [sys.executable, str(KINDS), kind, str(directory)] + ([url] if url else [])
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    said = (done.stdout + done.stderr)[-2000:]
    # A crash (SIGSEGV: a negative return code) or garbage read back fails.
    assert done.returncode == 0, f"{kind}: exit {done.returncode}: {said}"
    # Nothing on the chain could be released: the owner is the base itself.
    assert f"ok {kind} (0 memoryview(s) released)" in done.stdout, said


@pytest.mark.parametrize("kind", LOCAL_KINDS)
def test_no_memoryview_stands_between_an_array_and_its_owner(tmp_path: pathlib.Path, kind: str) -> None:
    _run_kind(kind, tmp_path)


@pytest.mark.parametrize("kind", REMOTE_KINDS)
def test_no_memoryview_stands_between_a_remote_read_and_its_owner(
    tmp_path: pathlib.Path, s3_bucket: str, kind: str
) -> None:
    _run_kind(kind, tmp_path, f"s3://{s3_bucket}/door-{uuid.uuid4().hex}.npy")


# ------------------------------------------------------------ the door in

SHAPE = (1 << 20,)  # 8 MiB of int64: each save reads it for a while


def _scribble(path: str, how: str, started, stop) -> None:
    """Another process writing every element of ``path``'s data, over and
    over, through a numpy-style ``r+`` mapping, until told to stop."""
    if how == "numpy":
        array = np.memmap(path, dtype="<i8", mode="r+", offset=128, shape=SHAPE)
    else:
        array = npy_mmap.load(path, mmap_mode="r+")
    value = 0
    array[:] = value
    started.set()
    while not stop.is_set():
        value += 1
        array[:] = value
    del array


@pytest.mark.parametrize("writer", ["numpy", "npy_mmap"])
@pytest.mark.parametrize("reader", ["numpy", "npy_mmap"])
@pytest.mark.parametrize("compressed", [False, True], ids=["savez", "savez_compressed"])
def test_an_archive_of_a_mapping_another_process_writes_is_always_readable(
    tmp_path: pathlib.Path, writer: str, reader: str, compressed: bool
) -> None:
    path = tmp_path / "busy.npy"
    np.save(path, np.zeros(SHAPE, dtype="<i8"))
    assert np.load(path, mmap_mode="r").offset == 128
    context = multiprocessing.get_context("spawn")
    started, stop = context.Event(), context.Event()
    process = context.Process(target=_scribble, args=(str(path), writer, started, stop))
    process.start()
    try:
        assert started.wait(WAIT)
        if reader == "numpy":
            view = np.load(path, mmap_mode="r")
        else:
            view = npy_mmap.load(path, mmap_mode="r")
        save = npy_mmap.savez_compressed if compressed else npy_mmap.savez
        bad = []
        tries = 5
        for k in range(tries):
            archive = tmp_path / f"busy-{k}.npz"
            save(archive, x=view, y=np.arange(3))
            with zipfile.ZipFile(archive) as opened:
                found = opened.testzip()
            if found is not None:
                bad.append(found)
        del view
    finally:
        stop.set()
        process.join(WAIT)
    assert bad == [], f"{len(bad)} of {tries} archives fail their CRC ({bad})"


def _peak_growth(script: str, tmp_path: pathlib.Path) -> int:
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=300, check=True
    )
    return int(done.stdout.split()[-1])


BIG = 256 << 20  # bytes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/status")
@pytest.mark.parametrize("call", ["save", "savez", "savez_compressed", "save_from_mapping", "savez_from_mapping"])
def test_saving_copies_a_bounded_chunk_at_a_time(tmp_path: pathlib.Path, call: str) -> None:
    """Peak resident memory grows by far less than the array while it is
    saved: no whole-array copy on the way in."""
    script = f"""
import sys, pathlib, numpy as np, npy_mmap
def peak():  # VmHWM: this process's own peak (ru_maxrss keeps the parent's across exec)
    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:'))
d = pathlib.Path(sys.argv[1])
call = {call!r}
if call == 'savez_compressed':  # deflate is slow in a debug build: half the size, mostly zeros
    a = np.zeros({BIG // 16}, dtype='<i8')
    a[::4096] = 7
else:
    a = np.arange({BIG // 8}, dtype='<i8')
if call.endswith('_from_mapping'):
    np.save(d / 'src.npy', a)
    del a
    a = npy_mmap.load(d / 'src.npy', mmap_mode='r')
    call = call[: -len('_from_mapping')]
int(a.sum())  # every page resident before: a mapping's pages count in RSS
before = peak()
if call == 'save':
    npy_mmap.save(d / 'out.npy', a)
else:
    getattr(npy_mmap, call)(d / 'out.npz', x=a)
print((peak() - before) * 1024)
"""
    growth = _peak_growth(script, tmp_path)
    size = BIG // 2 if call == "savez_compressed" else BIG
    assert growth < size // 4, f"{call}: peak RSS grew by {growth >> 20} MiB for a {size >> 20} MiB array"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/status")
def test_rss_probe_sees_a_whole_copy(tmp_path: pathlib.Path) -> None:
    """The measure above can fail: a whole copy shows as the array's size."""
    script = f"""
import numpy as np
def peak():
    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:'))
a = np.arange({BIG // 8}, dtype='<i8')
before = peak()
b = a.copy()
print((peak() - before) * 1024)
"""
    assert _peak_growth(script, tmp_path) >= BIG * 3 // 4

"""numpy's own functions at numpy's speed (issue 40): what each path does,
observed from outside.

- ``save`` to a path is atomic (a temporary file renamed over the name) and
  syncs nothing unless asked (``durable=True``): the system calls are
  counted under ``gdb``.
- ``load`` of a file object reads the array's data straight into the new
  array (``readinto``), never a chunk through Python, and peaks at one
  array's size.
- ``load(..., mmap_mode='r')`` opens the file once (the Python-2 header
  warning comes from the one parse).
"""

from __future__ import annotations

import io
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import warnings
import zipfile

import numpy as np
import pytest

import npy_mmap

NUMPY_DATA = pathlib.Path(np.__file__).parent / "lib" / "tests" / "data"

_GDB_SCRIPT = """\
set pagination off
set $n = 0
catch syscall fsync fdatasync
commands
silent
set $n = $n + 1
continue
end
run
printf "SYNC-CALLS %d\\n", $n
"""


def sync_calls(tmp_path: pathlib.Path, code: str) -> int:
    """How many fsync/fdatasync calls ``code`` makes (in a fresh
    interpreter under gdb; imports first, so only the code's own count)."""
    gdb = shutil.which("gdb")
    assert gdb is not None, "these tests need gdb (Debian's gdb package) to count system calls"
    script = tmp_path / "count.gdb"
    script.write_text(_GDB_SCRIPT)
    program = "import numpy as np, npy_mmap, io, os\n" + textwrap.dedent(code)
    out = subprocess.run(
        [gdb, "-q", "-batch", "-x", str(script), "--args", sys.executable, "-c", program],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("SYNC-CALLS ")]
    assert lines and "exited normally" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]
    # A caught system call stops at its entry and at its exit.
    return int(lines[-1].split()[1]) // 2


def test_save_to_a_path_syncs_only_when_durable(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "a.npy"
    plain = f"npy_mmap.save({str(target)!r}, np.arange(1000.0))"
    assert sync_calls(tmp_path, plain) == 0
    assert np.load(target).tolist() == np.arange(1000.0).tolist()
    durable = f"npy_mmap.save({str(target)!r}, np.arange(7.0), durable=True)"
    # The file, then its folder (the rename).
    assert sync_calls(tmp_path, durable) == 2
    assert np.load(target).tolist() == np.arange(7.0).tolist()
    objects = f"npy_mmap.save({str(target)!r}, np.array([1, 'a'], dtype=object))"
    assert sync_calls(tmp_path, objects) == 0
    assert sync_calls(tmp_path, objects.replace("))", "), durable=True)")) == 2
    assert np.load(target, allow_pickle=True).tolist() == [1, "a"]


def test_savez_to_a_path_syncs_nothing(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "a.npz"
    for how in ("savez", "savez_compressed"):
        assert sync_calls(tmp_path, f"npy_mmap.{how}({str(target)!r}, x=np.arange(9))") == 0
        with np.load(target) as archive:
            assert archive["x"].tolist() == list(range(9))


def test_save_unsynced_bytes_are_numpys(tmp_path: pathlib.Path) -> None:
    for a in (np.arange(12.0).reshape(3, 4), np.asfortranarray(np.ones((2, 3), ">i4")), np.zeros(0)):
        np.save(tmp_path / "n.npy", a)
        npy_mmap.save(tmp_path / "o.npy", a)
        npy_mmap.save(tmp_path / "d.npy", a, durable=True)
        theirs = (tmp_path / "n.npy").read_bytes()
        assert (tmp_path / "o.npy").read_bytes() == theirs == (tmp_path / "d.npy").read_bytes()
    # Only the files asked for: no temporary left beside them.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.npy", "n.npy", "o.npy"]


class Spy(io.RawIOBase):
    """A stream over bytes that records every read and readinto size."""

    def __init__(self, data: bytes, readinto: bool = True) -> None:
        self._inner = io.BytesIO(data)
        self.reads: list[int] = []
        self.intos: list[int] = []
        if not readinto:
            self.readinto = None  # type: ignore[assignment]

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        data = self._inner.read(n)
        self.reads.append(len(data))
        return data

    def readinto(self, buffer) -> int:  # type: ignore[override]
        count = self._inner.readinto(buffer)
        self.intos.append(count)
        return count


def npy_bytes(a: np.ndarray) -> bytes:
    stream = io.BytesIO()
    np.save(stream, a)
    return stream.getvalue()


def test_load_of_a_stream_reads_into_the_array() -> None:
    a = np.arange(1 << 20, dtype="<f8").reshape(1024, 1024)  # 8 MiB
    data = npy_bytes(a) + b"after"
    spy = Spy(data)
    loaded = npy_mmap.load(spy)
    assert np.array_equal(loaded, a) and loaded.dtype == a.dtype
    # The header through read (a few small reads), the data in one readinto
    # of exactly its size: nothing chunked through Python, nothing past it.
    assert sum(spy.reads) == len(data) - a.nbytes - len(b"after")
    assert spy.intos == [a.nbytes]
    assert spy.read() == b"after"
    assert loaded.flags.writeable and loaded.flags.c_contiguous


def test_load_of_a_stream_without_readinto_reads_bounded_chunks() -> None:
    a = np.asfortranarray(np.arange(6 << 20, dtype="<i4").reshape(2048, 3072))  # 24 MiB
    spy = Spy(npy_bytes(a), readinto=False)
    loaded = npy_mmap.load(spy)
    assert np.array_equal(loaded, a) and loaded.flags.f_contiguous
    assert max(spy.reads) <= 16 << 20 and sum(spy.reads) == len(npy_bytes(a))


@pytest.mark.parametrize("kind", ["bytesio", "file"])
def test_truncated_stream_is_numpys_error(tmp_path: pathlib.Path, kind: str) -> None:
    data = npy_bytes(np.arange(1000, dtype="<i8"))[:-100]
    path = tmp_path / "t.npy"
    path.write_bytes(data)

    def error(module) -> str:
        with open(path, "rb") if kind == "file" else io.BytesIO(data) as stream:
            with pytest.raises(ValueError) as caught:
                module.load(stream)
        return str(caught.value)

    assert error(npy_mmap) == error(np)


_PEAK = """
import io, sys, numpy as np, npy_mmap
def hwm():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) * 1024
path, how = sys.argv[1], sys.argv[2]
data = open(path, 'rb').read() if how == 'bytesio' else None
before = hwm()
if how == 'file':
    with open(path, 'rb') as f:
        a = npy_mmap.load(f)
else:
    a = npy_mmap.load(io.BytesIO(data))
assert a.nbytes == 64 << 20
print(hwm() - before)
"""


@pytest.mark.parametrize("how", ["file", "bytesio"])
def test_load_of_a_stream_peaks_at_one_array(tmp_path: pathlib.Path, how: str) -> None:
    path = tmp_path / "big.npy"
    np.save(path, np.ones(8 << 20))  # 64 MiB
    out = subprocess.run([sys.executable, "-c", _PEAK, str(path), how], capture_output=True, text=True, check=True)
    growth = int(out.stdout)
    assert growth < (64 << 20) * 1.25, f"peak grew {growth >> 20} MiB for a 64 MiB array"


class _Opens:
    """Records the files Python code opens (audit events) while active."""

    paths: list[str] = []
    active = False
    installed = False

    @classmethod
    def hook(cls, event: str, args: tuple) -> None:
        if cls.active and event == "open":
            cls.paths.append(os.fsdecode(args[0]) if isinstance(args[0], (str, bytes)) else str(args[0]))


def test_mapped_open_reads_the_header_once(tmp_path: pathlib.Path) -> None:
    if not _Opens.installed:
        sys.addaudithook(_Opens.hook)
        _Opens.installed = True
    path = tmp_path / "small.npy"
    np.save(path, np.arange(128.0))
    _Opens.paths, _Opens.active = [], True
    try:
        mapped = npy_mmap.load(path, mmap_mode="r")
    finally:
        _Opens.active = False
    assert mapped.tolist() == list(np.arange(128.0))
    # Rust opens, reads and maps it once; Python opens nothing.
    assert str(path) not in _Opens.paths, _Opens.paths
    del mapped
    # The Python-2 header warning still comes, from the same parse.
    _Opens.paths, _Opens.active = [], True
    try:
        with pytest.warns(UserWarning, match="created on Python 2"):
            old = npy_mmap.load(NUMPY_DATA / "win64python2.npy", mmap_mode="r")
    finally:
        _Opens.active = False
    assert not _Opens.paths, _Opens.paths
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert old.tolist() == np.load(NUMPY_DATA / "win64python2.npy").tolist()


class WriteSpy(io.BytesIO):
    """A BytesIO that records the size of every write."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def write(self, data) -> int:  # type: ignore[override]
        self.sizes.append(memoryview(data).nbytes)
        return super().write(data)


@pytest.mark.parametrize("compressed", [False, True])
def test_savez_into_a_stream_writes_as_members_are_made(compressed: bool) -> None:
    a = np.arange(6 << 20, dtype="<f8")  # 48 MiB
    how = "savez_compressed" if compressed else "savez"
    ours, theirs = WriteSpy(), io.BytesIO()
    ours.write(b"prefix")
    theirs.write(b"prefix")
    getattr(npy_mmap, how)(ours, a=a, b=np.arange(3))
    getattr(np, how)(theirs, a=a, b=np.arange(3))
    # Never the archive in one piece: bounded writes (numpy's 16 MiB chunks).
    assert max(ours.sizes) <= 16 << 20
    ours.seek(6)
    with np.load(ours) as archive:
        assert np.array_equal(archive["a"], a) and archive["b"].tolist() == [0, 1, 2]
    theirs.seek(6)
    with zipfile.ZipFile(ours) as o, zipfile.ZipFile(theirs) as t:
        assert o.namelist() == t.namelist() == ["a.npy", "b.npy"]
        assert all(o.read(name) == t.read(name) for name in o.namelist())


def test_savez_into_a_failing_stream_raises_its_error() -> None:
    class Full(io.BytesIO):
        def write(self, data) -> int:  # type: ignore[override]
            if self.tell() > 1000:
                raise OSError(28, "No space left on device (test)")
            return super().write(data)

    with pytest.raises(OSError, match="No space left on device \\(test\\)") as caught:
        npy_mmap.savez(Full(), x=np.arange(10_000))
    assert caught.value.errno == 28


def test_savez_into_a_pipe_still_works() -> None:
    read_fd, write_fd = os.pipe()
    with os.fdopen(write_fd, "wb") as w, os.fdopen(read_fd, "rb") as r:
        assert not w.seekable()
        import threading

        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(r.read()))
        reader.start()
        npy_mmap.savez(w, x=np.arange(5))
        w.close()
        reader.join()
    with np.load(io.BytesIO(got[0])) as archive:
        assert archive["x"].tolist() == list(range(5))


_CLAIM = """
import io, sys, numpy as np, npy_mmap
def peak():
    for line in open('/proc/self/status'):
        if line.startswith('VmPeak:'):
            return int(line.split()[1]) * 1024
stream = io.BytesIO()
header = {"descr": "<f8", "fortran_order": False, "shape": (8589934592,)}  # 64 GiB claimed
np.lib.format.write_array_header_1_0(stream, header)
data = stream.getvalue() + bytes(32)  # 32 bytes there
f = open(sys.argv[1], 'wb'); f.write(data); f.close()
before = peak()
for source in (io.BytesIO(data), open(sys.argv[1], 'rb')):
    try:
        npy_mmap.load(source)
    except ValueError as error:
        print(type(source).__name__, error)
print(peak() - before)
"""


def test_a_stream_shorter_than_its_header_claims_allocates_nothing(tmp_path: pathlib.Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _CLAIM, str(tmp_path / "claim.npy")], capture_output=True, text=True, check=True
    )
    lines = out.stdout.splitlines()
    assert lines[0] == "BytesIO EOF: reading array data, expected 68719476736 bytes got 32", out.stdout
    assert lines[1].startswith("BufferedReader Failed to read all data for array. Expected (8589934592,)")
    assert "could only read 4 elements" in lines[1]
    # Not the claimed 64 GiB, even as untouched virtual memory.
    assert int(lines[2]) < 1 << 30, f"virtual peak grew {int(lines[2]) >> 20} MiB"

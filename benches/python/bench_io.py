"""numpy's own functions, numpy's and ours side by side in one run (issue 40):
``save``/``load``/``savez`` to paths, file objects and ``BytesIO``, object
arrays, the mapped open of a small file, ``savez_compressed``, and the peak
memory of each load (a fresh process per figure).

    .venv/bin/python benches/python/bench.py --only io --dir /tmp/npy-io --repeat 3

``--only io-small`` runs only the mapped open of a small file and the
object arrays (medians, numpy's and ours taking turns). Otherwise best of
``--repeat`` runs per row (the issue's table is best of 3); the
memory rows are the growth of the peak RSS (``VmHWM``) over one call in a
fresh interpreter.
"""

from __future__ import annotations

import inspect
import io
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np

import npy_mmap


_PEAK = """
import io, sys, numpy as np, npy_mmap
def hwm():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) * 1024
module = np if sys.argv[1] == 'numpy' else npy_mmap
how, path = sys.argv[2], sys.argv[3]
data = open(path, 'rb').read() if how == 'bytesio' else None
before = hwm()
if how == 'path':
    a = module.load(path)
elif how == 'file':
    with open(path, 'rb') as f:
        a = module.load(f)
else:
    a = module.load(io.BytesIO(data))
print(hwm() - before)
"""


def peak(module: str, how: str, path: pathlib.Path) -> int:
    """Growth of the peak RSS over one load in a fresh interpreter (bytes)."""
    out = subprocess.run([sys.executable, "-c", _PEAK, module, how, str(path)], capture_output=True, text=True,
                         check=True)
    return int(out.stdout)


def io_part(root: pathlib.Path, repeat: int, row, timed) -> None:
    def best(fn, runs: int):
        return timed(fn, runs, reduce=min)

    def pair(what: str, theirs, ours, note: str = "", runs: int = repeat) -> None:
        """numpy's and ours alternately (the page cache's writeback of one
        run lands on the next: taking turns spreads it evenly), best of each."""
        times: tuple[list, list] = ([], [])
        for _ in range(runs):
            for k, fn in enumerate((theirs, ours)):
                times[k].append(best(fn, 1))
        row("io", what, min(times[0]), min(times[1]), note)

    a = np.random.default_rng(0).random(32 << 20)  # 256 MiB float64
    path, theirs, ours = root / "a.npy", root / "theirs.npy", root / "ours.npy"
    np.save(path, a)
    blob = path.read_bytes()
    big = "256 MiB float64"

    def save_file(module, p):
        with open(p, "wb") as f:
            module.save(f, a)

    def load_file(module):
        with open(path, "rb") as f:
            return module.load(f)

    pair(f"save(path, a), {big}", lambda: np.save(theirs, a), lambda: npy_mmap.save(ours, a),
         "ours: temporary file renamed over the name")
    if "durable" in inspect.signature(npy_mmap.save).parameters:
        pair(f"save(path, a, durable=True), {big}", lambda: np.save(theirs, a),
             lambda: npy_mmap.save(ours, a, durable=True), "ours: + fsync of the file and folder")
    pair(f"save(open(path, 'wb'), a), {big}", lambda: save_file(np, theirs), lambda: save_file(npy_mmap, ours))
    pair(f"load(path), {big}", lambda: np.load(path), lambda: npy_mmap.load(path))
    pair(f"load(open(path, 'rb')), {big}", lambda: load_file(np), lambda: load_file(npy_mmap))
    pair(f"load(io.BytesIO(b)), {big}", lambda: np.load(io.BytesIO(blob)), lambda: npy_mmap.load(io.BytesIO(blob)))
    pair(f"save(io.BytesIO(), a), {big}", lambda: np.save(io.BytesIO(), a), lambda: npy_mmap.save(io.BytesIO(), a))
    pair(f"savez(path, x=a), {big}", lambda: np.savez(root / "theirs.npz", x=a),
         lambda: npy_mmap.savez(root / "ours.npz", x=a))
    pair(f"savez(io.BytesIO(), x=a), {big}", lambda: np.savez(io.BytesIO(), x=a),
         lambda: npy_mmap.savez(io.BytesIO(), x=a))
    blob = b""

    small = np.arange(128, dtype="<f8")  # 1 KiB
    small_path = root / "small.npy"
    np.save(small_path, small)

    def many(fn):
        def run():
            for _ in range(2000):
                fn()
        return run

    pair("save(path, 1 KiB array) x 2,000", many(lambda: np.save(theirs, small)), many(lambda: npy_mmap.save(ours, small)))
    pair("load(path), 1 KiB array x 2,000", many(lambda: np.load(small_path)), many(lambda: npy_mmap.load(small_path)))

    for how in ("path", "file", "bytesio"):
        numpy_peak, ours_peak = peak("numpy", how, path), peak("ours", how, path)
        print(f"peak RSS growth, load({how}) of {big}: numpy +{numpy_peak >> 20} MiB, "
              f"npy_mmap +{ours_peak >> 20} MiB", flush=True)
    small_part(root, repeat, row, timed)

    # 512 MiB compressible: npy-compare's npz data (a smooth signal plus
    # noise, rounded to 1/1024; deflates about 3:1).
    i = np.arange(64 << 20, dtype=np.uint64)
    noise = (i * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
    smooth = np.sin(i * 1e-3) * 100.0 + noise / float(1 << 24)
    smooth = np.round(smooth * 1024.0) / 1024.0
    del i, noise
    pair("savez_compressed(path, x=a), 512 MiB compressible", lambda: np.savez_compressed(root / "theirs.npz", x=smooth),
         lambda: npy_mmap.savez_compressed(root / "ours.npz", x=smooth), "deflates about 3:1")
    for p in root.iterdir():
        p.unlink()


def _short(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.1f} ms"


def small_part(root: pathlib.Path, repeat: int, row, timed) -> None:
    """The mapped open of a small file and the object arrays (``--only
    io-small``): medians of numpy's and ours taking turns, and the best."""
    def turns(what: str, theirs, ours, runs: int, note: str = "") -> None:
        times: tuple[list, list] = ([], [])
        for _ in range(runs):
            for k, fn in enumerate((theirs, ours)):
                start = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - start)
        numpy_s, ours_s = statistics.median(times[0]), statistics.median(times[1])
        row("io", what, numpy_s, ours_s,
            f"median of {runs}, taking turns (best: numpy {_short(min(times[0]))}, ours "
            f"{_short(min(times[1]))}, {min(times[0]) / min(times[1]):.2f}x){'; ' + note if note else ''}")

    small_path = root / "small.npy"
    np.save(small_path, np.arange(128, dtype="<f8"))  # 1 KiB
    for _ in range(200):  # warm: imports, caches, the page cache
        np.load(small_path, mmap_mode="r")
        npy_mmap.load(small_path, mmap_mode="r")
    turns("load(path, mmap_mode='r'), 1 KiB array", lambda: np.load(small_path, mmap_mode="r"),
          lambda: npy_mmap.load(small_path, mmap_mode="r"), repeat * 400)

    strings = np.array([f"item-{i}" for i in range(1_000_000)], dtype=object)
    objects, theirs, ours = root / "objects.npy", root / "theirs.npy", root / "ours.npy"
    np.save(objects, strings)
    turns("load(allow_pickle=True), 1,000,000 strings", lambda: np.load(objects, allow_pickle=True),
          lambda: npy_mmap.load(objects, allow_pickle=True), repeat * 3, "ours never runs code")
    fewer = strings[:300_000]
    turns("save of 300,000 strings", lambda: np.save(theirs, fewer), lambda: npy_mmap.save(ours, fewer), repeat * 3)

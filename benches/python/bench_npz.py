"""The rows of issue 38 (deflated npz members read by blocks; archives from
memory and file objects), for bench.py's ``--only npz``.

    .venv/bin/python benches/python/bench.py --only npz --npz-mib 512
"""

from __future__ import annotations

import io
import pathlib
import time

import numpy as np

import npy_mmap


def _signal(n: int) -> np.ndarray:
    """The benchmarks' compressible signal: smooth, plus noise, rounded."""
    i = np.arange(n, dtype=np.float64)
    noise = ((i.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)).astype(np.float64)
    return np.round((np.sin(i * 1e-3) * 100 + noise / (1 << 24)) * 1024) / 1024


def npz_part(root: pathlib.Path, mib: int, repeat: int, row, timed) -> None:
    n = mib * (1 << 20) // 8
    x = _signal(n)
    ours = root / f"npz-ours-{mib}.npz"
    theirs = root / f"npz-numpy-{mib}.npz"
    t_numpy = timed(lambda: np.savez_compressed(theirs, x=x), 1)
    t_ours = timed(lambda: npy_mmap.savez_compressed(ours, x=x), 1)
    size_ours, size_theirs = ours.stat().st_size, theirs.stat().st_size
    row("npz", f"savez_compressed of {mib} MiB float64", t_numpy, t_ours,
        f"sizes: numpy {size_theirs:,}, ours {size_ours:,} ({(size_ours / size_theirs - 1) * 100:+.2f} %)")

    rows_per_mib = (1 << 20) // 8
    start = n // 2 + 12345
    wanted = slice(start, start + rows_per_mib)
    expected = x[wanted]

    def numpy_slice(path):
        with np.load(path) as z:
            return z["x"][wanted]

    def lazy_slice(path):
        with npy_mmap.load(path) as z:
            part = z.lazy("x")[wanted]
        assert np.array_equal(part, expected)
        return part

    # numpy at its best: its own file (np.load of ours is slower, not ours to count).
    t_numpy_slice = timed(lambda: numpy_slice(theirs), max(1, repeat // 2))
    row("npz", "deflated member: 1 MiB row slice (ours written)", t_numpy_slice, timed(lambda: lazy_slice(ours), repeat),
        "np.load(path)['x'][a:b] against load(path).lazy('x')[a:b], archive opened each time")

    # numpy's member: the first use builds the checkpoints (one pass).
    sidecar = pathlib.Path(str(theirs) + ".idx")
    sidecar.unlink(missing_ok=True)
    t_whole_numpy = timed(lambda: np.load(theirs)["x"], max(1, repeat // 2))
    t_first = timed(lambda: lazy_slice(theirs), max(1, repeat // 2))
    row("npz", "first use of a numpy-written member (index build + slice)", t_whole_numpy, t_first,
        "one full np.load(path)['x'] against the first load(path).lazy('x')[a:b] (a pass building checkpoints)")
    with npy_mmap.load(theirs) as z:
        lazy = z.lazy("x")
        lazy[0:1]  # first use
        t_after = timed(lambda: lazy[wanted], repeat)
        assert z.save_index() == 1
    row("npz", "same, numpy-written member, after its first use", t_numpy_slice, t_after,
        f"the archive kept open; index file {sidecar.stat().st_size:,} bytes")
    t_sidecar = timed(lambda: lazy_slice(theirs), repeat)
    row("npz", "same, numpy-written member, index file saved", t_numpy_slice, t_sidecar,
        "load(path).lazy('x')[a:b] opening the archive and its .idx each time")
    sidecar.unlink()

    t_whole_ours = timed(lambda: npy_mmap.load(ours)["x"], repeat)
    row("npz", "deflated member: whole (ours written)", t_whole_numpy, t_whole_ours,
        "np.load of numpy's file against npy_mmap.load(path)['x'] of ours: blocks inflated on every core")
    row("npz", "deflated member: whole (numpy written)", t_whole_numpy, timed(lambda: npy_mmap.load(theirs)["x"], max(1, repeat // 2)),
        "no index: one stream, as numpy")

    _dask_row(ours, theirs, row)

    # Archives from memory and file objects: a 140 MiB sample, as a data loader gets it.
    sample = _signal(140 * (1 << 20) // 8)
    for kind, save in (("stored", np.savez), ("deflated", np.savez_compressed)):
        path = root / f"sample-{kind}.npz"
        save(path, x=sample)
        data = path.read_bytes()
        t_np = timed(lambda: np.load(io.BytesIO(data))["x"], repeat)
        t_us = timed(lambda: npy_mmap.load(io.BytesIO(data))["x"], repeat)
        row("npz", f"npz from bytes: {kind} (140 MiB, numpy-written)", t_np, t_us, "np.load(io.BytesIO(b))['x']")

        def from_file(load):
            with open(path, "rb") as fid:
                return load(fid)["x"]

        row("npz", f"npz from an open file: {kind} (140 MiB)", timed(lambda: from_file(np.load), repeat),
            timed(lambda: from_file(npy_mmap.load), repeat), "np.load(open(path, 'rb'))['x'], page cache")


def _dask_row(path: pathlib.Path, numpys: pathlib.Path, row) -> None:
    from distributed import Client, LocalCluster

    from npy_mmap.dask import from_npy

    start = time.perf_counter()
    with np.load(numpys) as z:
        expected = z["x"].mean()
    t_numpy = time.perf_counter() - start
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, memory_limit="4GiB") as cluster, Client(cluster) as client:
        client.compute(from_npy(path, member="x")[:10].sum()).result()  # workers warm
        start = time.perf_counter()
        value = client.compute(from_npy(path, member="x").mean()).result()
        t_ours = time.perf_counter() - start
    assert abs(value - expected) < 1e-9 * max(1.0, abs(expected))
    row("npz", "Dask mean of a deflated member (ours written), 2 process workers", t_numpy, t_ours,
        "np.load(path)['x'].mean() against from_npy(path, member='x').mean()")

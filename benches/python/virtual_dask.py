"""Issue 33's Dask row: the mean of a 4 GiB float32 array read through
xarray + Dask on kerchunk references to the `.npy`, against
`npy_mmap.dask.from_npy` on the same file; 2 process workers; time and the
workers' peak RSS. Cold: the file is evicted before each way.

    .venv/bin/python benches/python/virtual_dask.py --dir /work/bench-tmp --gib 4
"""

from __future__ import annotations

import argparse
import os
import pathlib
import time

import numpy as np
import xarray as xr
from distributed import Client, LocalCluster
from distributed.diagnostics import MemorySampler

import npy_mmap
from npy_mmap.dask import from_npy


def evict(path: pathlib.Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", default="/tmp/npy-virtual-bench")
    parser.add_argument("--gib", type=float, default=4.0)
    args = parser.parse_args()
    root = pathlib.Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    path = root / "big.npy"
    rows = int(args.gib * (1 << 30)) // (1024 * 4)
    created = npy_mmap.open_memmap(path, mode="w+", dtype="<f4", shape=(rows, 1024), reserve=True)
    for start in range(0, rows, 1 << 14):
        created[start : start + (1 << 14)] = np.float32(start % 7)
    del created
    refs = npy_mmap.virtualize([str(path)])  # chunks of ~64 MiB, whole rows

    def compute(name: str) -> float:
        if name.startswith("xarray"):
            ds = xr.open_dataset(
                "reference://",
                engine="zarr",
                chunks={},
                backend_kwargs={"consolidated": False, "storage_options": {"fo": refs}},
            )
            return float(ds["big"].mean().compute())
        return float(from_npy(str(path)).mean().compute())

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit="2GiB")
    with cluster, Client(cluster) as client:
        results = {}
        for name in ("xarray + Dask on the references", "npy_mmap.dask.from_npy"):
            evict(path)
            client.restart()
            sampler = MemorySampler()
            started = time.perf_counter()
            with sampler.sample(name, interval=0.05):
                value = compute(name)
            elapsed = time.perf_counter() - started
            # Dask's own measure of the workers' process memory, summed.
            peak = float(sampler.to_pandas().max().iloc[0])
            results[name] = (elapsed, peak, value)
            print(f"{name:<36} {elapsed:6.2f} s  peak memory of both workers {peak / 2**20:7.0f} MiB  mean {value:.4f}", flush=True)
        assert len({value for _, _, value in results.values()}) == 1, results
    path.unlink()


if __name__ == "__main__":
    main()

"""Cold batches in one process: RandomBatches (with and without its
prefetch of the next batch) and windows() over a mapping, ms per batch of
64 windows of 1,024 tokens, the token file evicted before each run
(docs/BENCHMARKS.md, "Training windows"). Run after bench.py --only
windows-local has written the token file:

    .venv/bin/python benches/python/random_batches_cold.py [TOKENS.npy]
"""

import os, time, sys, numpy as np
from npy_mmap.data import RandomBatches
import npy_mmap
path = sys.argv[1] if len(sys.argv) > 1 else "target/bench-data/tokens.npy"
def evict(p):
    fd = os.open(p, os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)
for prefetch in (True, False):
    res=[]
    for run in range(3):
        evict(path)
        it = iter(RandomBatches(path, 1024, 64, seed=run, prefetch=prefetch))
        t=time.perf_counter()
        for _ in range(20): next(it)
        res.append((time.perf_counter()-t)/20*1e3)
    print("RandomBatches prefetch=%s cold ms/batch" % prefetch, [round(r,2) for r in res])
res=[]
for run in range(3):
    evict(path)
    a = npy_mmap.load(path, mmap_mode="r")
    rng=np.random.default_rng(run)
    t=time.perf_counter()
    for _ in range(20):
        npy_mmap.windows(a, rng.integers(0, len(a)-1024, 64), 1024)
    res.append((time.perf_counter()-t)/20*1e3)
    del a
print("windows() over mapping cold ms/batch", [round(r,2) for r in res])

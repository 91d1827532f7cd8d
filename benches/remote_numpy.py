"""numpy + s3fs's side of `npy-remote-compare` (crates/npy-bench).

Reads the array the harness uploaded, the way a numpy user reads from S3:
s3fs file objects handed to numpy. Requests and bytes are counted at
s3fs's one ranged-GET method (S3File._fetch_range). Prints one JSON object:
{case: {"seconds": [...], "requests": n, "bytes": n}}.

    python benches/remote_numpy.py s3://bucket/key ROWS ROW_BYTES REPS < picks.json

The 1000 random rows come on standard input (a JSON list), the same rows
the Rust side reads.
"""

import json
import os
import sys
import time

import numpy as np
import s3fs

url, rows, row_bytes, reps = sys.argv[1], *map(int, sys.argv[2:5])
path = url.removeprefix("s3://")
fs = s3fs.S3FileSystem(client_kwargs={"endpoint_url": os.environ["AWS_ENDPOINT_URL"]})

counts = {"requests": 0, "bytes": 0}
original = s3fs.core.S3File._fetch_range


def counted(self, start, end):
    data = original(self, start, end)
    counts["requests"] += 1
    counts["bytes"] += len(data)
    return data


s3fs.core.S3File._fetch_range = counted


def measure(case, run, reps=reps):
    seconds = []
    for _ in range(reps):
        counts.update(requests=0, bytes=0)
        fs.invalidate_cache()
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    results[case] = {"seconds": seconds, **counts}


def open_header(**options):
    f = fs.open(path, "rb", **options)
    version = np.lib.format.read_magic(f)
    read_header = {
        (1, 0): np.lib.format.read_array_header_1_0,
        (2, 0): np.lib.format.read_array_header_2_0,
    }[version]
    shape, fortran, dtype = read_header(f)
    return f, f.tell(), dtype


results = {}
# Open with s3fs's defaults (a 50 MiB read-ahead block).
measure("open", lambda: open_header())


def row_range():
    # No read-ahead: the best case for a ranged read through s3fs.
    f, offset, dtype = open_header(cache_type="none")
    counts.update(requests=0, bytes=0)
    start = rows // 2
    count = (1 << 20) // row_bytes
    f.seek(offset + start * row_bytes)
    np.frombuffer(f.read(count * row_bytes), dtype=dtype)


measure("rows_1mib", row_range)
measure("whole", lambda: np.load(fs.open(path, "rb")))

picks = json.load(sys.stdin)


def random_rows():
    f, offset, dtype = open_header(cache_type="none")
    counts.update(requests=0, bytes=0)
    for row in picks:
        f.seek(offset + row * row_bytes)
        np.frombuffer(f.read(row_bytes), dtype=dtype)


# One run: 1000 sequential GETs take minutes on moto (each request costs it
# time in proportion to the object's size); the run is itself an aggregate.
measure("random_rows", random_rows, reps=1)
print(json.dumps(results))

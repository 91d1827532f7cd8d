"""numpy's side of the header-parse benchmark (crates/npy-core/benches/header.rs).

Times numpy.lib.format.read_magic + read_array_header_1_0 on the same two
headers the Rust bench parses and prints the median of 7 runs in microseconds.

Run: `.venv/bin/python benches/numpy/header.py` (after scripts/setup-venv.sh).
"""

import io
import timeit

import numpy as np
from numpy.lib import format as fmt


def saved(arr):
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


CASES = {
    "parse <f8 (1000, 1000)": saved(np.zeros((1000, 1000))),
    "parse 50-field record": saved(
        np.zeros(1000, dtype=[(f"field_{i}", "<f8") for i in range(50)])
    ),
}

for name, data in CASES.items():

    def parse():
        buf = io.BytesIO(data)
        fmt.read_magic(buf)
        fmt.read_array_header_1_0(buf)

    runs = 2000
    times = sorted(timeit.timeit(parse, number=runs) / runs for _ in range(7))
    print(f"{name}: median {times[3] * 1e6:.1f} us (numpy {np.__version__})")

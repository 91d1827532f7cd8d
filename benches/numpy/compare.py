"""numpy's side of the side-by-side comparison (`just compare`).

The harness (crates/npy-bench, `npy-compare`) creates the data, then runs

    python compare.py <workload> '<json parameters>'

right after timing the Rust contenders on the same files, and merges what
this prints: {"rows": {row_id: [seconds per operation, ...]}, "notes": {...}}.
Each workload is done the way numpy's documentation shows.
"""

import io
import json
import multiprocessing
import mmap
import os
import sys
import time

import numpy as np
from numpy.lib import format as fmt


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def micro(fn, samples=11, target=0.02):
    """Seconds per call; each sample runs enough calls to last ~20 ms."""
    once = max(timed(fn), 1e-9)
    calls = max(1, min(1_000_000, int(target / once)))
    out = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - start) / calls)
    return out


def saved(arr):
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def header(p):
    cases = {
        "header.simple": saved(np.zeros((1000, 1000))),
        "header.record": saved(
            np.zeros(1000, dtype=[(f"field_{i}", "<f8") for i in range(50)])
        ),
    }
    rows = {}
    for key, data in cases.items():

        def parse(data=data):
            buf = io.BytesIO(data)
            fmt.read_magic(buf)
            fmt.read_array_header_1_0(buf)

        rows[key] = micro(parse, p["runs"])
    return rows, {}


def open_(p):
    rows = {}
    for key, path in (("open.4k", p["small"]), ("open.big", p["big"])):

        def load(path=path):
            a = np.load(path, mmap_mode="r")
            del a

        rows[key] = micro(load)
    return rows, {}


def check(got, expected):
    if got != expected:
        raise SystemExit(f"sum {got} != {expected}")


def sum_(p):
    runs, expected = p["runs"], p["expected"]
    warm, mapped, ram = [], [], []
    for _ in range(runs):

        def open_and_sum():
            check(float(np.load(p["big"], mmap_mode="r").sum()), expected)

        warm.append(timed(open_and_sum))
    m = np.load(p["big"], mmap_mode="r")
    check(float(m.sum()), expected)
    for _ in range(runs):
        mapped.append(timed(lambda: check(float(m.sum()), expected)))
    del m
    in_ram = np.arange(len(np.load(p["big"], mmap_mode="r")), dtype=np.int64) % 1024
    in_ram = in_ram.astype(np.float64)
    for _ in range(runs):
        ram.append(timed(lambda: check(float(in_ram.sum()), expected)))
    return {"sum.warm": warm, "sum.mapped": mapped, "sum.ram": ram}, {}


def reads(p):
    a = np.load(p["big"], mmap_mode="r")
    a.sum()  # fault every page in: the figure is for a warm mapping
    indices = np.load(p["indices"]).tolist()
    out = []
    for _ in range(p["runs"]):

        def read_all():
            total = 0.0
            for i in indices:
                total += a[i]
            return total

        out.append(timed(read_all) / max(1, len(indices)))
    # A batch: numpy's own gather, fancy indexing, into a new array.
    index_array = np.asarray(indices, dtype=np.intp)
    a[index_array]  # the same start as the other contenders: one untimed pass
    gather = [timed(lambda: a[index_array]) / max(1, len(indices)) for _ in range(p["runs"])]
    # Whole rows of 64 float64 (512 bytes): `a.reshape(-1, 64)[rows]`, the
    # same 100,000 rows as the other contenders.
    row_count = len(a) // 64
    grid = a[: row_count * 64].reshape(-1, 64)
    rows = (index_array[:100_000] // 64) % max(1, row_count)
    grid[rows]
    outer = [timed(lambda: grid[rows]) / max(1, len(rows)) for _ in range(p["runs"])]
    return {"reads.random": out, "reads.gather": gather, "reads.gather_outer": outer}, {}


def read(p):
    rows = {}
    np.load(p["native"])
    np.load(p["big_endian"])  # warm the page cache

    def native():
        np.load(p["native"])

    def big_endian():
        # Native values, the cheapest numpy way: swap in place, relabel.
        a = np.load(p["big_endian"])
        a.byteswap(inplace=True)
        a = a.view(a.dtype.newbyteorder())

    rows["read.native"] = [timed(native) for _ in range(p["runs"])]
    rows["read.be"] = [timed(big_endian) for _ in range(p["runs"])]
    return rows, {}


def save(p):
    a = np.arange(p["len"], dtype=np.float64) * 0.5
    out = []
    for _ in range(p["runs"]):
        if os.path.exists(p["out"]):
            os.remove(p["out"])
        os.sync()  # untimed: the last run's writeback must not slow this one
        out.append(timed(lambda: np.save(p["out"], a)))
    os.remove(p["out"])
    return {"save": out}, {}


CHUNK = 1 << 20


def fill_rows(path, start, end):
    m = np.load(path, mmap_mode="r+")
    for s in range(start, end, CHUNK):
        e = min(end, s + CHUNK)
        m[s:e] = np.arange(s, e, dtype=np.float64)
    m.flush()
    del m


def fill(p):
    path, n = p["path"], p["len"]
    ctx = multiprocessing.get_context("fork")  # the cheapest start numpy has
    create, fills = [], {1: [], 2: []}
    for _ in range(p["runs"]):
        for processes in (1, 2):
            if os.path.exists(path):
                os.remove(path)

            def make():
                m = fmt.open_memmap(path, mode="w+", dtype="<f8", shape=(n,))
                del m

            create.append(timed(make))

            def run():
                workers = [
                    ctx.Process(
                        target=fill_rows,
                        args=(path, n * k // processes, n * (k + 1) // processes),
                    )
                    for k in range(processes)
                ]
                for w in workers:
                    w.start()
                for w in workers:
                    w.join()
                    if w.exitcode != 0:
                        raise SystemExit("a fill worker failed")

            fills[processes].append(timed(run))
            m = np.load(path, mmap_mode="r")
            for i in (0, n // 2, n - 1):
                if m[i] != i:
                    raise SystemExit(f"fill left element {i} = {m[i]}")
            del m
            os.remove(path)
    return {"create": create, "fill.1": fills[1], "fill.2": fills[2]}, {}


def npz(p):
    big, small = np.load(p["big"]), np.load(p["small"])
    raw = big.nbytes + small.nbytes
    rows, notes = {}, {}
    for kind, save_fn in (("stored", np.savez), ("deflate", np.savez_compressed)):
        out = os.path.join(p["dir"], f"numpy-{kind}.npz")
        rows[f"npz.{kind}.write"] = [
            timed(lambda: save_fn(out, big=big, small=small)) for _ in range(p["runs"])
        ]
        if kind == "deflate":
            notes["compression ratio (raw / archive)"] = round(
                raw / os.path.getsize(out), 2
            )
        os.remove(out)

        # Reads use the archives npy-mmap wrote, like every contender.
        path = p[kind]

        def read_all(path=path):
            with np.load(path) as z:
                z["big"]
                z["small"]

        rows[f"npz.{kind}.read"] = [timed(read_all) for _ in range(p["runs"])]

        def member(path=path):
            with np.load(path) as z:
                z["small"]

        rows[f"npz.member.{kind}"] = micro(member)
    return rows, notes


def objects(p):
    """An object array of short strings: np.save writes it (numpy's pickle),
    np.load(allow_pickle=True) reads it back; the file is left for ours."""
    path, count, runs = p["path"], p["count"], p["runs"]
    arr = np.array([f"s{i % 1000}x{i}" for i in range(count)], dtype=object)
    save_times = [timed(lambda: np.save(path, arr)) for _ in range(runs)]
    load_times = []
    for _ in range(runs):
        start = time.perf_counter()
        back = np.load(path, allow_pickle=True)
        load_times.append(time.perf_counter() - start)
    check(back.shape, arr.shape)
    check(back[count - 1], arr[count - 1])
    return {"objects.load": load_times, "objects.save": save_times}, {}


def resident_fraction(path):
    """The fraction of the file's pages in the page cache (mincore of a
    private mapping that is only asked about, never read)."""
    import ctypes
    import mmap

    size = os.path.getsize(path)
    pages = (size + 4095) // 4096
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    status = (ctypes.c_ubyte * pages)()
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY)
        anchor = ctypes.c_char.from_buffer(m)
        result = libc.mincore(ctypes.addressof(anchor), size, status)
        del anchor
        m.close()
    if result != 0:
        raise OSError(ctypes.get_errno(), "mincore")
    return sum(b & 1 for b in status) / pages


def evicted(path):
    """Drops the file's pages from the page cache; returns what is left."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return resident_fraction(path)


def cold(p):
    """Random reads of an evicted file: numpy's fancy indexing on
    np.load(mmap_mode="r"), for elements and for rows of 4 KiB, at its best:
    with `madvise(MADV_RANDOM)`, the one line its users add."""
    elements = np.load(p["elements"]).astype(np.intp)
    rows = np.load(p["rows"]).astype(np.intp)
    per_row = p["row_bytes"] // 8
    notes = {}
    out = {"cold.gather": [], "cold.rows": []}
    for _ in range(p["runs"]):
        for row_id, run in (
            ("cold.gather", lambda a: (a[elements], len(elements))),
            ("cold.rows", lambda a: (a[: len(a) // per_row * per_row].reshape(-1, per_row)[rows], len(rows))),
        ):
            left = evicted(p["big"])
            if left > 0.01:
                notes[row_id] = f"a run was discarded: {left:.1%} still resident"
                continue
            a = np.load(p["big"], mmap_mode="r")
            a._mmap.madvise(mmap.MADV_RANDOM)
            start = time.perf_counter()
            _, count = run(a)
            out[row_id].append((time.perf_counter() - start) / count)
            del a
    return out, notes


def windows(p):
    """Training windows (issue 32): batches of random windows of a uint16
    token file, cold (evicted before each run) and warm. numpy's way,
    `np.load(mmap_mode="r")` + fancy indexing, and nanoGPT's `get_batch`
    (a new np.memmap per batch, `np.stack` of the slices; torch left out),
    each also at its best cold: `madvise(MADV_RANDOM)` on the mapping, the
    one line their users add for scattered reads."""
    batch, length = p["batch"], p["length"]
    cold = np.load(p["cold"]).astype(np.intp).reshape(-1, batch)
    warm = np.load(p["warm"]).astype(np.intp).reshape(-1, batch)
    span = np.arange(length)

    def fancy(batches, a=None, random=False):
        # Cold: a fresh np.load per run. Warm: one mapping for every run, as
        # the Rust contenders keep theirs (its pages stay mapped).
        a = np.load(p["tokens"], mmap_mode="r") if a is None else a
        if random:
            a._mmap.madvise(mmap.MADV_RANDOM)
        for ix in batches:
            x = a[ix[:, None] + span]
        return x

    def nanogpt(batches, random=False):
        for ix in batches:
            data = np.memmap(p["tokens"], dtype=np.uint16, mode="r", offset=p["offset"])
            if random:
                data._mmap.madvise(mmap.MADV_RANDOM)
            x = np.stack([data[i : i + length] for i in ix])
        return x

    def check(x, ix):
        expect = (ix[:, None] + span) % 65521
        if not np.array_equal(x, expect):
            raise SystemExit("windows: wrong tokens")

    notes = {}
    cold_ways = (
        ("windows.cold", lambda b: fancy(b, random=True)),
        ("windows.cold_nanogpt_random", lambda b: nanogpt(b, random=True)),
        ("windows.cold_default", fancy),
        ("windows.cold_nanogpt", nanogpt),
    )
    out = {k: [] for k in [row_id for row_id, _ in cold_ways] + ["windows.warm", "windows.warm_nanogpt"]}
    # `npy-compare --warm-only`: the warm rows alone.
    for _ in range(0 if p.get("warm_only") else p["runs"]):
        for row_id, fn in cold_ways:
            left = evicted(p["tokens"])
            if left > 0.01:
                notes[row_id] = f"a run was discarded: {left:.1%} still resident"
                continue
            start = time.perf_counter()
            x = fn(cold)
            out[row_id].append((time.perf_counter() - start) / len(cold))
            check(x, cold[-1])
    # Warm: the whole file read once (the harness did too), one untimed pass each.
    with open(p["tokens"], "rb") as f:
        while f.read(1 << 24):
            pass
    mapped = np.load(p["tokens"], mmap_mode="r")
    fancy(warm, mapped)
    nanogpt(warm)
    for _ in range(p["runs"]):
        for row_id, fn in (("windows.warm", lambda b: fancy(b, mapped)), ("windows.warm_nanogpt", nanogpt)):
            start = time.perf_counter()
            x = fn(warm)
            out[row_id].append((time.perf_counter() - start) / len(warm))
            check(x, warm[-1])
    return out, notes


WORKLOADS = {
    "header": header,
    "open": open_,
    "sum": sum_,
    "reads": reads,
    "cold": cold,
    "windows": windows,
    "read": read,
    "save": save,
    "fill": fill,
    "npz": npz,
    "objects": objects,
}

if __name__ == "__main__":
    workload, params = sys.argv[1], json.loads(sys.argv[2])
    rows, notes = WORKLOADS[workload](params)
    print(json.dumps({"rows": rows, "notes": notes}))

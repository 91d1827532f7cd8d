"""npy_mmap against numpy (and Dask's own ways), side by side on the same
files in one run. Prints a Markdown table per part (docs/BENCHMARKS.md).

    scripts/s3-server.sh start; eval "$(scripts/s3-server.sh env)"
    .venv/bin/python benches/python/bench.py --dir /tmp/npy-bench            # everything
    .venv/bin/python benches/python/bench.py --only numpy --big-gib 1        # smaller, no Dask

Needs a release build of the package (pip install ./crates/npy-python).
Cold reads drop the file's pages with posix_fadvise(DONTNEED) first.
Times are medians of --repeat runs (one run for the Dask rows).
"""

from __future__ import annotations

import argparse
import gc
import mmap
import os
import pathlib
import statistics
import subprocess
import sys
import time
import uuid

import numpy as np
from numpy.lib import format as npformat

import npy_mmap

ROWS: list[tuple[str, str, float, float, str]] = []


def evict(path: pathlib.Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def timed(fn, repeat: int, setup=None, reduce=statistics.median) -> float:
    # One collection before, none between runs: a collection right before
    # a microsecond call leaves the CPU caches cold and triples its time.
    gc.collect()
    times = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
        del result
    return reduce(times)


def row(part: str, what: str, numpy_s: float, ours_s: float, note: str = "") -> None:
    ROWS.append((part, what, numpy_s, ours_s, note))
    ratio = numpy_s / ours_s if ours_s else float("inf")
    print(f"{what:<58} numpy {fmt(numpy_s):>10}  npy_mmap {fmt(ours_s):>10}  {ratio:8.1f}x  {note}", flush=True)


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def numpy_part(root: pathlib.Path, big_gib: float, repeat: int) -> None:
    small = root / "small.npy"
    np.save(small, np.arange(512, dtype="<f8"))  # 4 KiB of data
    big = root / "big.npy"
    rows = int(big_gib * (1 << 30)) // (1024 * 4)
    created = npy_mmap.open_memmap(big, mode="w+", dtype="<f4", shape=(rows, 1024), reserve=True)
    for start in range(0, rows, 1 << 14):
        created[start : start + (1 << 14)] = np.float32(start)
    del created

    for name, path in (("4 KiB", small), (f"{big_gib:g} GiB", big)):
        row(
            "numpy",
            f"open with mmap_mode='r', {name}",
            timed(lambda p=path: np.load(p, mmap_mode="r"), repeat * 20),
            timed(lambda p=path: npy_mmap.load(p, mmap_mode="r"), repeat * 20),
        )

    def numpy_header(p=big):
        with open(p, "rb") as f:
            version = npformat.read_magic(f)
            return npformat.read_array_header_1_0(f) if version == (1, 0) else npformat.read_array_header_2_0(f)

    row(
        "numpy",
        "header-only inspection",
        timed(numpy_header, repeat * 20),
        timed(lambda: npy_mmap.read_header(big), repeat * 20),
        "numpy: read_magic + read_array_header",
    )

    gib = root / "one.npy"
    np.save(gib, np.ones(1 << 28, dtype="<f4"))  # 1 GiB
    row(
        "numpy",
        "load of a 1 GiB array (warm page cache)",
        timed(lambda: np.load(gib), repeat),
        timed(lambda: npy_mmap.load(gib), repeat),
    )

    rng = np.random.default_rng(7)
    flat_count = rows * 1024
    indices = rng.integers(0, flat_count, size=20_000)

    def numpy_best():
        # The one line numpy users add for scattered reads.
        a = np.load(big, mmap_mode="r")
        a._mmap.madvise(mmap.MADV_RANDOM)
        return a.reshape(-1)[indices].copy()

    def ours_take():
        return npy_mmap.take(npy_mmap.load(big, mmap_mode="r"), indices)

    cold = {"setup": lambda: evict(big)}
    ours_cold = timed(ours_take, repeat, **cold)
    what = f"cold random gather of 20,000 elements ({big_gib:g} GiB file)"
    row(
        "numpy",
        what,
        timed(lambda: np.load(big, mmap_mode="r").reshape(-1)[indices].copy(), repeat, **cold),
        ours_cold,
        "numpy: np.load(mmap_mode='r')[idx]; ours: take() (the planner, default advice)",
    )
    row("numpy", what + ", numpy with madvise(MADV_RANDOM)", timed(numpy_best, repeat, **cold), ours_cold)
    gather = pathlib.Path(__file__).resolve().parents[2] / "target" / "release" / "npy-gather"
    if gather.exists():
        index_file = root / "indices.bin"
        index_file.write_bytes(indices.astype("<u8").tobytes())

        def rust_gather() -> float:
            evict(big)
            out = subprocess.run([gather, big, index_file], capture_output=True, text=True, check=True)
            return float(out.stdout.split()[0])

        rust_s = statistics.median(rust_gather() for _ in range(repeat))
        row("numpy", what + ", vs the Rust gather (npy-gather)", rust_s, ours_cold, "theirs: the Rust crate's gather_bytes")
    else:
        print(f"(no {gather}: cargo build --release -p npy-bench --bin npy-gather for the Rust row)")

    # A training batch: 64 random windows of 1,024 float32 (warm).
    flat = np.load(big, mmap_mode="r").reshape(-1)
    starts = rng.integers(0, flat_count - 1024, size=64)
    window_idx = (starts[:, None] + np.arange(1024)).reshape(-1)
    mapped_flat = npy_mmap.load(big, mmap_mode="r").reshape(-1)
    flat[window_idx].sum()  # warm
    row(
        "numpy",
        "warm batch of 64 windows of 1,024 elements",
        timed(lambda: flat[window_idx].copy(), repeat * 20),
        timed(lambda: npy_mmap.take(mapped_flat, window_idx), repeat * 20),
        "numpy fancy indexing vs take()",
    )
    del flat, mapped_flat

    many = root / "many.npz"
    np.savez(many, **{f"m{i}": np.arange(16, dtype="<f8") for i in range(6000)})

    def every_member(load) -> float:
        archive = load(many, mmap_mode="r")
        total = sum(float(archive[key][0]) for key in archive.files)
        archive.close()
        return total

    row(
        "numpy",
        "npz of 6,000 members: read every member (mmap_mode='r')",
        timed(lambda: every_member(np.load), max(3, repeat // 2)),
        timed(lambda: every_member(npy_mmap.load), max(3, repeat // 2)),
        "numpy reads each member; we map each (the directory is parsed once)",
    )
    many.unlink()

    objects = root / "objects.npy"
    strings = np.array([f"item-{i}" for i in range(1_000_000)], dtype=object)
    np.save(objects, strings)
    row(
        "numpy",
        "object array of 1,000,000 strings",
        timed(lambda: np.load(objects, allow_pickle=True), repeat),
        timed(lambda: npy_mmap.load(objects, allow_pickle=True), repeat),
        "ours never runs code (restricted unpickler)",
    )

    npz = root / "member.npz"
    np.savez(npz, x=np.ones(1 << 28, dtype="<f4"))  # a 1 GiB stored member
    del strings
    row(
        "numpy",
        "npz: first element of a 1 GiB stored member",
        timed(lambda: float(np.load(npz, mmap_mode="r")["x"][0]), repeat),
        timed(lambda: float(npy_mmap.load(npz, mmap_mode="r")["x"][0]), repeat),
        "numpy reads the member whole; we map it",
    )
    for p in (big, gib, objects, npz):
        p.unlink()


def remote_part(repeat: int) -> None:
    import s3fs

    bucket = os.environ.get("NPY_S3_BUCKET")
    if not bucket:
        raise SystemExit("the remote part needs the local S3 server (scripts/s3-server.sh)")
    url = f"s3://{bucket}/bench-{uuid.uuid4().hex}.npy"
    data = np.arange(16 << 20, dtype="<f4").reshape(-1, 1024)  # 64 MiB, 4 KiB rows
    npy_mmap.save(url, data)
    fs = s3fs.S3FileSystem(
        key=os.environ["AWS_ACCESS_KEY_ID"],
        secret=os.environ["AWS_SECRET_ACCESS_KEY"],
        client_kwargs={"endpoint_url": os.environ["AWS_ENDPOINT_URL"], "region_name": "us-east-1"},
        default_cache_type="none",
    )
    start, stop = 5000, 5256  # 1 MiB of rows

    def numpy_s3fs():
        with fs.open(url, "rb") as f:
            version = npformat.read_magic(f)
            shape, fortran, dtype = npformat.read_array_header_1_0(f)
            row_bytes = dtype.itemsize * int(np.prod(shape[1:]))
            f.seek(f.tell() + start * row_bytes)
            raw = f.read((stop - start) * row_bytes)
        return np.frombuffer(raw, dtype).reshape((stop - start,) + shape[1:])

    def ours():
        return npy_mmap.open_remote(url)[start:stop]

    assert (numpy_s3fs() == ours()).all()
    row(
        "remote",
        "remote 1 MiB row range (open + read), local S3 server",
        timed(numpy_s3fs, repeat),
        timed(ours, repeat),
        "numpy + s3fs: read_magic, read_array_header, seek, read",
    )


def _worker_peak() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def dask_part(root: pathlib.Path, gib: float, limit: float, s3_only: bool = False) -> None:
    import contextlib

    import dask.array as da
    from distributed import Client, LocalCluster

    from npy_mmap.dask import from_npy, to_npy

    @contextlib.contextmanager
    def fresh():
        """A new 2-process cluster per measurement: a failing way must not
        take the next one's workers down with it."""
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None, memory_limit="4GiB") as cluster, Client(cluster) as client:
            yield client

    def measure(make):
        """(seconds, peak worker RSS, value or failure) of one computation; a
        way that does not finish within `limit` seconds is reported as such."""
        with fresh() as client:
            start = time.perf_counter()
            try:
                value = client.compute(make()).result(timeout=limit)
            except Exception as error:  # the Dask way may fail outright: say so
                return float("nan"), 0, f"{type(error).__name__}"
            elapsed = time.perf_counter() - start
            return elapsed, max(client.run(_worker_peak).values()), value

    def note(ours, theirs, how):
        if theirs[0] != theirs[0]:  # NaN: it failed
            return f"the Dask way failed ({theirs[2]} after ≤ {limit:g} s); ours: peak worker RSS {ours[1] >> 20} MiB; Dask: {how}"
        return f"peak worker RSS: Dask {theirs[1] >> 20} MiB, ours {ours[1] >> 20} MiB; Dask: {how}"

    chunks = (1 << 14, 1024)  # 64 MiB
    for size in [] if s3_only else sorted({1.0, gib}):
        path = root / f"dask-{size:g}.npy"
        rows = int(size * (1 << 30)) // (1024 * 4)
        created = npy_mmap.open_memmap(path, mode="w+", dtype="<f4", shape=(rows, 1024), reserve=True)
        for start in range(0, rows, 1 << 14):
            created[start : start + (1 << 14)] = 1
        del created
        ours = measure(lambda p=path: from_npy(p, chunks=chunks).sum(dtype="f8"))
        theirs = measure(lambda p=path: da.from_array(np.load(p, mmap_mode="r"), chunks=chunks).sum(dtype="f8"))
        row("dask", f"sum of a {size:g} GiB float32 file, 2 process workers", theirs[0], ours[0],
            note(ours, theirs, "da.from_array(np.load(path, mmap_mode='r'))"))

    stack = root / "stack"
    if not s3_only:
        path, out = root / f"dask-{gib:g}.npy", root / "out.npy"
        with fresh():
            start = time.perf_counter()
            to_npy(from_npy(path, chunks=chunks) + 1, out)
            ours_write = time.perf_counter() - start
        with fresh():
            start = time.perf_counter()
            da.to_npy_stack(stack, from_npy(path, chunks=chunks) + 1)
            parts = [np.load(stack / f"{i}.npy", mmap_mode="r") for i in range(len(os.listdir(stack)) - 1)]
            np.save(root / "joined.npy", np.concatenate(parts))
            theirs_write = time.perf_counter() - start
            del parts
        row("dask", f"write {gib:g} GiB (x + 1) as one .npy", theirs_write, ours_write,
            "the same computed array; Dask: to_npy_stack + np.concatenate + np.save")

    bucket = os.environ.get("NPY_S3_BUCKET")
    if bucket:
        import s3fs

        url = f"s3://{bucket}/dask-bench-{uuid.uuid4().hex}.npy"
        npy_mmap.save(url, np.ones(((256 << 20) // 4096, 1024), dtype="<f4"))
        fs = s3fs.S3FileSystem(
            key=os.environ["AWS_ACCESS_KEY_ID"], secret=os.environ["AWS_SECRET_ACCESS_KEY"],
            client_kwargs={"endpoint_url": os.environ["AWS_ENDPOINT_URL"], "region_name": "us-east-1"},
        )

        def s3fs_array():
            # Dask over an s3fs file: np.load reads it whole on the driver.
            with fs.open(url, "rb") as f:
                return da.from_array(np.load(f), chunks=chunks).sum(dtype="f8")

        ours_s3 = measure(lambda: from_npy(url, chunks=chunks).sum(dtype="f8"))
        theirs_s3 = measure(s3fs_array)
        row("dask", "sum of 256 MiB from the local S3 server", theirs_s3[0], ours_s3[0],
            note(ours_s3, theirs_s3, "da.from_array(np.load(s3fs file))"))
    import shutil

    shutil.rmtree(stack, ignore_errors=True)
    for p in root.glob("*.npy"):
        p.unlink()


def _fill_worker(module: str, path: str, worker: int, workers: int) -> None:
    """numpy's pattern in a worker: map the whole file r+, fill its rows."""
    open_memmap = npformat.open_memmap if module == "numpy" else npy_mmap.open_memmap
    array = open_memmap(path, mode="r+")
    share = array.shape[0] // workers
    block = 1 << 14
    for start in range(worker * share, (worker + 1) * share, block):
        array[start : min(start + block, (worker + 1) * share)] = worker + 1
    array.flush()
    del array


def sharing_part(root: pathlib.Path, gib: float, workers: int, repeat: int) -> None:
    """Issue 30: numpy's parallel fill (the parent keeps its w+ array while
    worker processes map the file r+ and fill their rows), with numpy's
    open_memmap and with ours, in one run."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    rows = int(gib * (1 << 30)) // (1024 * 4)
    path = root / "fill.npy"

    def run(module: str, reserve: bool = False) -> float:
        if path.exists():
            path.unlink()
        os.sync()  # the last run's writeback is not this run's to wait for
        started = time.perf_counter()
        if module == "numpy":
            parent = npformat.open_memmap(path, mode="w+", dtype="<f4", shape=(rows, 1024))
        else:
            parent = npy_mmap.open_memmap(path, mode="w+", dtype="<f4", shape=(rows, 1024), reserve=reserve)
        processes = [
            context.Process(target=_fill_worker, args=(module, str(path), w, workers)) for w in range(workers)
        ]
        for process in processes:
            process.start()
        for process in processes:
            process.join()
            assert process.exitcode == 0, process.exitcode
        elapsed = time.perf_counter() - started
        assert float(parent[-1, -1]) == workers
        del parent
        gc.collect()
        return elapsed

    # Interleaved (numpy, ours, ours reserved; again), so that a change in
    # the machine's load during the run falls on every way alike.
    times: dict[str, list[float]] = {"numpy": [], "ours": [], "reserved": []}
    for _ in range(repeat):
        times["numpy"].append(run("numpy"))
        times["ours"].append(run("ours"))
        times["reserved"].append(run("ours", reserve=True))
    print("sharing: each run (s):", {way: [round(t, 2) for t in ts] for way, ts in times.items()}, flush=True)
    numpy_s, ours_s, reserved_s = (statistics.median(times[way]) for way in ("numpy", "ours", "reserved"))
    what = f"parallel fill of {gib:g} GiB, {workers} worker processes (r+ beside the parent's w+)"
    row("sharing", what, numpy_s, ours_s, "numpy's open_memmap vs ours, same pattern")
    row("sharing", what + ", reserve=True", numpy_s, reserved_s, "blocks reserved at creation")
    path.unlink()

# --- Training windows (issue 32) ---------------------------------------------

TOKENS_PER_WINDOW = 1024
WINDOWS_PER_BATCH = 64


def _memory() -> tuple[int, int]:
    """(USS, RSS) of this process in bytes: USS = Private_Clean + Private_Dirty."""
    uss = rss = 0
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("Private_Clean", "Private_Dirty"):
                uss += int(rest.split()[0]) * 1024
            elif key == "Rss":
                rss = int(rest.split()[0]) * 1024
    return uss, rss


def _window_batches(contender: str, npy: str, raw: str, seed: int):
    """An endless iterator of (64, 1024) batches, the contender's way."""
    length, size = TOKENS_PER_WINDOW, WINDOWS_PER_BATCH
    rng = np.random.default_rng(seed)
    random = contender.endswith(" + MADV_RANDOM")
    if contender.startswith("nanoGPT get_batch"):
        tokens = os.path.getsize(raw) // 2

        def get_batch():
            # nanoGPT's train.py (torch left out: its int64 copies of x and
            # y are not the reading): a new np.memmap per batch, np.stack of
            # slices; the mapping goes when the function returns.
            data = np.memmap(raw, dtype=np.uint16, mode="r")
            if random:
                data._mmap.madvise(mmap.MADV_RANDOM)
            ix = rng.integers(tokens - length, size=size)
            return np.stack([data[i : i + length] for i in ix])

        while True:
            yield get_batch()
    elif contender.startswith("np.load(mmap_mode='r') + fancy indexing"):
        a = np.load(npy, mmap_mode="r")
        if random:
            a._mmap.madvise(mmap.MADV_RANDOM)
        span = np.arange(length)
        while True:
            ix = rng.integers(len(a) - length + 1, size=size)
            yield a[ix[:, None] + span]
    elif contender == "npy_mmap.windows on memmap(.bin)":
        a = npy_mmap.memmap(raw, dtype=np.uint16, mode="r")
        while True:
            ix = rng.integers(len(a) - length + 1, size=size)
            yield npy_mmap.windows(a, ix, length)
    elif contender == "npy_mmap.data.RandomBatches":
        from npy_mmap.data import RandomBatches

        yield from RandomBatches(npy, length, size, seed=seed)
    else:
        raise ValueError(contender)


def _window_worker(contender, npy, raw, seed, batches, barrier, results) -> None:
    stream = _window_batches(contender, npy, raw, seed)
    barrier.wait()
    start = time.perf_counter()
    times = []
    first = None
    checksum = 0
    for k in range(batches):
        t = time.perf_counter()
        batch = next(stream)
        times.append(time.perf_counter() - t)
        checksum += int(batch[0, 0])
        if k == 0:
            first = _memory()
    wall = time.perf_counter() - start
    assert batch.shape == (WINDOWS_PER_BATCH, TOKENS_PER_WINDOW) and batch.dtype == np.uint16
    results.put({"wall": wall, "times": times, "first": first, "last": _memory(), "checksum": checksum})


def _run_windows(contender: str, npy, raw, batches: int, workers: int = 2) -> list[dict]:
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(workers)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_window_worker, args=(contender, str(npy), str(raw), 1000 + w, batches, barrier, results))
        for w in range(workers)
    ]
    for p in procs:
        p.start()
    out = [results.get() for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode:
            raise SystemExit(f"{contender}: a worker failed")
    return out


def _write_tokens(npy: pathlib.Path, raw: pathlib.Path, gib: float) -> int:
    tokens = int(gib * (1 << 30)) // 2
    chunk = 1 << 24
    header = npformat.header_data_from_array_1_0(np.zeros(0, np.uint16))
    header["shape"] = (tokens,)
    for path, npy_header in ((npy, True), (raw, False)):
        if path.exists() and path.stat().st_size == tokens * 2 + (128 if npy_header else 0):
            continue
        with open(path, "wb") as f:
            if npy_header:
                npformat.write_array_header_1_0(f, header)
            for start in range(0, tokens, chunk):
                np.arange(start, min(start + chunk, tokens), dtype=np.int64).__imod__(65521).astype("<u2").tofile(f)
            f.flush()
            os.fsync(f.fileno())
    return tokens


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def windows_part(root: pathlib.Path, gib: float, repeat: int, memory_batches: int, cold_batches: int) -> None:
    npy, raw = root / "tokens.npy", root / "tokens.bin"
    _write_tokens(npy, raw, gib)
    assert os.path.getsize(npy) - os.path.getsize(raw) == 128
    # numpy's ways first, each as its users write it and at its best cold
    # (the one line they add for scattered reads: madvise(MADV_RANDOM)).
    numpy_ways = [
        "nanoGPT get_batch",
        "nanoGPT get_batch + MADV_RANDOM",
        "np.load(mmap_mode='r') + fancy indexing",
        "np.load(mmap_mode='r') + fancy indexing + MADV_RANDOM",
    ]
    contenders = numpy_ways + ["npy_mmap.windows on memmap(.bin)", "npy_mmap.data.RandomBatches"]
    batch_tokens = TOKENS_PER_WINDOW * WINDOWS_PER_BATCH
    print(f"\nwindows: {gib:g} GiB uint16 ({npy}, and the same bytes as {raw}), 2 spawn workers, "
          f"batches of {WINDOWS_PER_BATCH} x {TOKENS_PER_WINDOW} tokens", flush=True)
    cold: dict[str, list[float]] = {c: [] for c in contenders}
    for run in range(repeat):
        for k in range(len(contenders)):
            contender = contenders[(run + k) % len(contenders)]
            evict(npy)
            evict(raw)
            results = _run_windows(contender, npy, raw, cold_batches)
            wall = max(r["wall"] for r in results)
            cold[contender].append(2 * cold_batches * batch_tokens / wall)
    warm: dict[str, float] = {}
    memory: dict[str, list[dict]] = {}
    for contender in contenders:
        for path in (npy, raw):
            with open(path, "rb") as f:
                while f.read(1 << 24):
                    pass
        results = _run_windows(contender, npy, raw, memory_batches)
        wall = max(r["wall"] for r in results)
        warm[contender] = 2 * memory_batches * batch_tokens / wall
        memory[contender] = results
    best_cold = max(statistics.median(cold[c]) for c in numpy_ways)
    best_warm = max(warm[c] for c in numpy_ways)
    print(f"\nCold: {cold_batches} batches per worker after evicting both files, median of {repeat} runs; "
          f"warm: {memory_batches} batches per worker, files read first; tokens/s over both workers.\n")
    print("| contender | cold tokens/s | cold ms per batch per worker | warm tokens/s | vs best numpy way (cold / warm) "
          "| USS per worker after batch 1 → 2,000 | RSS per worker after batch 1 → 2,000 |")
    print("| --- | ---: | ---: | ---: | ---: | --- | --- |")
    for c in contenders:
        cold_tps = statistics.median(cold[c])
        uss = " / ".join(f"{_mib(r['first'][0])} → {_mib(r['last'][0])}" for r in memory[c])
        rss = " / ".join(f"{_mib(r['first'][1])} → {_mib(r['last'][1])}" for r in memory[c])
        print(f"| {c} | {cold_tps / 1e6:.2f} M | {2 * batch_tokens / cold_tps * 1e3:.2f} | {warm[c] / 1e6:.1f} M "
              f"| {cold_tps / best_cold:.1f}× / {warm[c] / best_warm:.1f}× | {uss} | {rss} |", flush=True)


def _planned_spans(starts, length: int, offset: int = 128, gap: int = 1 << 20) -> int:
    """The ranged requests npy-remote plans for a batch: the windows' byte
    spans sorted, merged when closer than object_store's 1 MiB gap."""
    s = np.sort(np.asarray(starts))
    spans, end = 0, None
    for start in s:
        first = offset + 2 * int(start)
        if end is None or first - end > gap:
            spans += 1
            end = first + 2 * length
        else:
            end = max(end, first + 2 * length)
    return spans


def _requests(log: pathlib.Path, key: str, since: int) -> int:
    # The server logs a request after answering it: wait for the log to settle.
    size = -1
    while size != log.stat().st_size:
        size = log.stat().st_size
        time.sleep(1.0)
    with open(log, "rb") as f:
        f.seek(since)
        return sum(1 for line in f if b"GET" in line and key.encode() in line)


def remote_windows_part(gib: float, batches: int) -> None:
    import s3fs

    bucket = os.environ.get("NPY_S3_BUCKET")
    if not bucket:
        raise SystemExit("the remote part needs the local S3 server (scripts/s3-server.sh)")
    log = pathlib.Path(__file__).resolve().parents[2] / "target" / "s3-server" / "log"
    key = f"windows-{uuid.uuid4().hex}.npy"
    url = f"s3://{bucket}/{key}"
    tokens = int(gib * (1 << 30)) // 2
    npy_mmap.save(url, (np.arange(tokens, dtype=np.int64) % 65521).astype("<u2"))
    fs = s3fs.S3FileSystem(
        key=os.environ["AWS_ACCESS_KEY_ID"],
        secret=os.environ["AWS_SECRET_ACCESS_KEY"],
        client_kwargs={"endpoint_url": os.environ["AWS_ENDPOINT_URL"], "region_name": "us-east-1"},
        default_cache_type="none",
        skip_instance_cache=True,
    )
    length, size = TOKENS_PER_WINDOW, WINDOWS_PER_BATCH
    offset = 128
    span = np.arange(length)

    def s3fs_numpy(n):
        # A range read per window through s3fs (np.frombuffer on the bytes).
        rng = np.random.default_rng(7)
        with fs.open(url, "rb") as f:
            for _ in range(n):
                ix = rng.integers(tokens - length + 1, size=size)
                out = []
                for i in ix:
                    f.seek(offset + 2 * int(i))
                    out.append(np.frombuffer(f.read(2 * length), "<u2"))
                batch = np.stack(out)
        return batch, ix

    def megatron(n):
        # Megatron's S3 reader: one 256 MiB chunk cached; a read outside it
        # fetches the 256 MiB from the read's offset.
        chunk = 256 << 20
        rng = np.random.default_rng(7)
        cache_start, cache = -1, b""
        with fs.open(url, "rb") as f:
            for _ in range(n):
                ix = rng.integers(tokens - length + 1, size=size)
                out = []
                for i in ix:
                    begin = offset + 2 * int(i)
                    if not (cache_start <= begin and begin + 2 * length <= cache_start + len(cache)):
                        f.seek(begin)
                        cache_start, cache = begin, f.read(chunk)
                    out.append(np.frombuffer(cache[begin - cache_start : begin - cache_start + 2 * length], "<u2"))
                batch = np.stack(out)
        return batch, ix

    def ours(n):
        from npy_mmap.data import RandomBatches

        rng = np.random.default_rng(7)
        for batch in RandomBatches(url, length, size, seed=7, batches=n):
            ix = rng.integers(tokens - length + 1, size=size)
            planned.append(_planned_spans(ix, length))
        # The batch read ahead after the last one.
        planned.append(_planned_spans(rng.integers(tokens - length + 1, size=size), length))
        return batch, ix

    planned: list[int] = []

    print(f"\nremote windows: {gib:g} GiB uint16 .npy on the local S3 server, 1 process, cold (new reader per run)")
    print("| contender | batches | tokens/s | ms per batch | GET requests per batch | planned spans per batch |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    since = log.stat().st_size
    npy_mmap.open_remote(url)
    open_gets = _requests(log, key, since)
    results = {}
    for name, fn, n in (("s3fs + numpy, a range read per window", s3fs_numpy, batches),
                        ("Megatron-style 256 MiB chunk cache", megatron, 1),
                        ("npy_mmap.data.RandomBatches (s3://)", ours, batches)):
        since = log.stat().st_size
        start = time.perf_counter()
        batch, ix = fn(n)
        seconds = time.perf_counter() - start
        gets = _requests(log, key, since)
        if name.startswith("npy_mmap"):
            # Less the open's header read. (Measured: the GETs are exactly
            # the planned spans of the n batches returned; the batch read
            # ahead after the last one adds none to the log.)
            gets -= open_gets
        assert np.array_equal(batch, (ix[:, None] + span) % 65521), name
        results[name] = n * size * length / seconds
        spans = f"{sum(planned[:n]) / n:.1f}" if name.startswith("npy_mmap") else "—"
        print(f"| {name} | {n} | {results[name] / 1e6:.4f} M | {seconds / n * 1e3:.0f} | {gets / n:.1f} | {spans} |",
              flush=True)
    fs.rm(url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", default="/tmp/npy-python-bench")
    parser.add_argument("--big-gib", type=float, default=4.0, help="size of the big file (GiB)")
    parser.add_argument("--dask-gib", type=float, default=4.0)
    parser.add_argument("--dask-limit", type=float, default=120.0, help="seconds a Dask way may take")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fill-gib", type=float, default=2.0, help="size of the parallel fill (GiB)")
    parser.add_argument("--only", choices=["numpy", "remote", "dask", "dask-s3", "sharing", "windows", "windows-local", "windows-remote", "npz", "io", "io-small"])
    parser.add_argument("--npz-mib", type=int, default=512, help="size of the deflated npz member (MiB)")
    parser.add_argument("--tokens-gib", type=float, default=4.0, help="size of the token file of the windows part (GiB)")
    parser.add_argument("--remote-tokens-gib", type=float, default=1.0, help="size of the remote token file (GiB)")
    parser.add_argument("--memory-batches", type=int, default=2000, help="warm batches per worker (memory)")
    parser.add_argument("--cold-batches", type=int, default=20, help="batches per worker of a cold run")
    args = parser.parse_args()
    root = pathlib.Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    print(f"numpy {np.__version__}, npy_mmap {npy_mmap.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} cores")
    if args.only in (None, "numpy"):
        numpy_part(root, args.big_gib, args.repeat)
    if args.only in (None, "io"):
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
        from bench_io import io_part

        io_part(root, args.repeat, row, timed)
    if args.only == "io-small":
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
        from bench_io import small_part

        small_part(root, args.repeat, row, timed)
    if args.only in (None, "sharing"):
        sharing_part(root, args.fill_gib, 2, max(3, args.repeat // 2))
    if args.only in (None, "remote"):
        remote_part(args.repeat)
    if args.only in (None, "windows", "windows-local"):
        windows_part(root, args.tokens_gib, args.repeat, args.memory_batches, args.cold_batches)
    if args.only in (None, "windows", "windows-remote"):
        remote_windows_part(args.remote_tokens_gib, 3)
    if args.only in (None, "npz"):
        sys.path.insert(0, str(pathlib.Path(__file__).parent))
        from bench_npz import npz_part

        npz_part(root, args.npz_mib, args.repeat, row, timed)
    if args.only in (None, "dask", "dask-s3"):
        dask_part(root, args.dask_gib, args.dask_limit, s3_only=args.only == "dask-s3")
    print("\n| what | numpy / Dask | npy_mmap | speed-up | note |\n| --- | ---: | ---: | ---: | --- |")
    for _part, what, theirs, ours, note in ROWS:
        ratio = theirs / ours if ours else float("inf")
        print(f"| {what} | {fmt(theirs)} | {fmt(ours)} | {ratio:.1f}× | {note} |")


if __name__ == "__main__":
    main()

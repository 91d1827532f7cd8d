"""Run by test_doors.py in a child process (a SIGSEGV fails the test, it
does not kill pytest): make one kind of array the package returns, walk
its ``.base`` chain releasing every ``memoryview`` on it, collect garbage,
allocate a lot, and read the array back.

    python _door_out_kinds.py KIND DIRECTORY [URL]

Prints ``ok KIND (N memoryview(s) released)`` and exits 0 when the array
still reads its values; anything else (garbage, a crash) fails.
"""

from __future__ import annotations

import gc
import io
import pathlib
import sys

import numpy as np

import npy_mmap
from npy_mmap.data import RandomBatches, WindowDataset

ROWS, COLS = 4096, 16


def values() -> np.ndarray:
    return (np.arange(ROWS * COLS, dtype="<i8") * 7919 % 100_003).reshape(ROWS, COLS)


def release_chain(array: object) -> int:
    """Release every memoryview on the array's ``.base`` chain (and on its
    memmap's ``_mmap``); how many were released."""
    released = 0
    node = array
    seen = set()
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        if isinstance(node, memoryview):
            following = node.obj
            node.release()
            released += 1
            node = following
        elif isinstance(node, np.ndarray):
            mmap = getattr(node, "_mmap", None)
            if isinstance(mmap, memoryview):
                mmap.release()
                released += 1
            node = node.base
        else:
            break
    return released


def churn() -> None:
    """Free what can be freed, then allocate and write a lot of memory
    (what was freed under a live array gets reused and overwritten)."""
    gc.collect()
    hold = [np.full(ROWS * COLS, 0x5A5A5A5A5A5A5A5A, dtype="<u8") for _ in range(32)]
    hold += [bytearray(b"\xa5" * (ROWS * COLS * 8)) for _ in range(8)]
    hold += [np.full(n, -1, dtype="<i8") for n in (8, 64, 512, 4096, 1 << 15) for _ in range(16)]
    del hold


def kinds(directory: pathlib.Path, url: str | None) -> dict:
    """KIND -> a function making (array, expected)."""
    data = values()
    npy = directory / "a.npy"
    np.save(npy, data)
    npz = directory / "a.npz"
    np.savez(npz, x=data)
    npzc = directory / "c.npz"
    np.savez_compressed(npzc, x=data)
    tokens = (np.arange(100_000, dtype="<u4") * 104_729 % 65_000).astype("<u2")
    tokens_bin = directory / "t.bin"
    tokens.tofile(tokens_bin)
    starts = [3, 5000, 99_000, 17]

    def stack(source, picked, length):
        return np.stack([source[s : s + length] for s in picked])

    def mapped(mode, sharing):
        return lambda: (npy_mmap.load(npy, mmap_mode=mode, sharing=sharing), data)

    def created():
        array = npy_mmap.open_memmap(directory / "w.npy", mode="w+", dtype="<i8", shape=data.shape)
        array[:] = data
        return array, data

    def objects():
        nested = np.empty(3, dtype=object)
        nested[:] = [data[:5], data[5:9].astype("<f4"), "text"]
        np.save(directory / "o.npy", nested, allow_pickle=True)
        back = npy_mmap.load(directory / "o.npy", allow_pickle=True)
        return back[1], data[5:9].astype("<f4")

    def live():
        np.save(directory / "live.npy", data)
        with npy_mmap.open_live(directory / "live.npy") as shared:
            return shared.snapshot(), data

    def npz_member(path, mode):
        def make():
            archive = npy_mmap.load(path, mmap_mode=mode)
            member = archive["x"]
            archive.close()
            return member, data

        return make

    made = {
        "load": lambda: (npy_mmap.load(npy), data),
        "load_stream": lambda: (npy_mmap.load(io.BytesIO(npy.read_bytes())), data),
        "load_r": mapped("r", "numpy"),
        "load_r+": mapped("r+", "numpy"),
        "load_c": mapped("c", "numpy"),
        "load_r_strict": mapped("r", "strict"),
        "load_r+_strict": mapped("r+", "strict"),
        "load_c_strict": mapped("c", "strict"),
        "open_memmap_r+": lambda: (npy_mmap.open_memmap(npy, mode="r+"), data),
        "open_memmap_w+": created,
        "mapped": lambda: (npy_mmap.mapped(npy, "r").array, data),
        "memmap": lambda: (npy_mmap.memmap(tokens_bin, dtype="<u2", mode="r"), tokens),
        "take_flat": lambda: (npy_mmap.take(npy_mmap.load(npy, mmap_mode="r"), [5, 1, 900]), data.ravel()[[5, 1, 900]]),
        "take_rows": lambda: (npy_mmap.take(npy_mmap.load(npy, mmap_mode="r"), [7, 3], axis=0), data[[7, 3]]),
        "take_strict": lambda: (
            npy_mmap.take(npy_mmap.load(npy, mmap_mode="r", sharing="strict"), [7, 3], axis=0),
            data[[7, 3]],
        ),
        "windows": lambda: (
            npy_mmap.windows(npy_mmap.memmap(tokens_bin, dtype="<u2", mode="r"), starts, 1000),
            stack(tokens, starts, 1000),
        ),
        "npz_stored": npz_member(npz, None),
        "npz_deflated": npz_member(npzc, None),
        "npz_mapped": npz_member(npz, "r"),
        "npz_mapped_deflated": npz_member(npzc, "r"),
        "live_snapshot": live,
        "objects_nested": objects,
        "window_dataset": lambda: (
            WindowDataset(tokens_bin, 1000, dtype="uint16").batch([0, 3]),
            stack(tokens, [0, 3000], 1000),
        ),
        "random_batches": lambda: (
            next(iter(RandomBatches(tokens_bin, 1000, 4, seed=3, batches=1, dtype="uint16"))),
            stack(tokens, np.random.default_rng(3).integers(0, 100_000 - 1000 + 1, size=4), 1000),
        ),
    }
    if url is not None:
        npy_mmap.save(url, data)
        made.update(
            {
                "remote_load": lambda: (npy_mmap.load(url), data),
                "remote_rows": lambda: (npy_mmap.open_remote(url)[10:20], data[10:20]),
                "remote_rows_at": lambda: (npy_mmap.open_remote(url)[[9, 2, 400]], data[[9, 2, 400]]),
                "remote_windows": lambda: (
                    npy_mmap.windows(npy_mmap.open_remote(url), [0, 7, 4000], 50),
                    stack(data, [0, 7, 4000], 50),
                ),
            }
        )
    return made


def main() -> None:
    kind, directory = sys.argv[1], pathlib.Path(sys.argv[2])
    url = sys.argv[3] if len(sys.argv) > 3 else None
    array, expected = kinds(directory, url)[kind]()
    expected = np.array(expected, copy=True)
    released = release_chain(array)
    churn()
    if not np.array_equal(np.asarray(array), expected):
        print(f"garbage {kind}: {released} memoryview(s) released, then read {np.asarray(array).ravel()[:4]}")
        sys.exit(1)
    print(f"ok {kind} ({released} memoryview(s) released)")


if __name__ == "__main__":
    main()

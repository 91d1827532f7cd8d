//! `npy-gather FILE INDICES`: maps the `.npy` FILE read-only, gathers the
//! elements at the flat indices in INDICES (little-endian `u64`s) with
//! `MappedArray::gather_bytes` (the planner: a cold batch is read ahead all
//! at once), and prints the seconds it took, open included, and a checksum
//! of the bytes gathered. The Rust row beside Python's `take` and numpy's
//! fancy indexing in benches/python/bench.py.

use std::time::Instant;

use anyhow::{Context, Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, indices] = args.as_slice() else {
        bail!("usage: npy-gather FILE INDICES");
    };
    let raw = std::fs::read(indices).with_context(|| format!("reading {indices}"))?;
    let started = Instant::now();
    let array = npy_mmap::open(file)?;
    let width = array.dtype().itemsize();
    let offsets: Vec<usize> = raw
        .chunks_exact(8)
        .map(|bytes| {
            let index = u64::from_le_bytes(bytes.try_into().unwrap_or_default());
            usize::try_from(index)
                .unwrap_or(usize::MAX)
                .saturating_mul(width)
        })
        .collect();
    let mut out = vec![0u8; offsets.len() * width];
    array.gather_bytes(&offsets, width, &mut out)?;
    let seconds = started.elapsed().as_secs_f64();
    let checksum = out
        .iter()
        .fold(0u64, |sum, &byte| sum.wrapping_add(u64::from(byte)));
    println!("{seconds} {checksum}");
    Ok(())
}

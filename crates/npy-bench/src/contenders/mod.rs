//! The workloads, each done the way its crate's documentation shows; numpy's
//! side is `benches/numpy/compare.py`, run right after ours.
//!
//! ndarray-npy and npyz take buffers, not files, for mapped access: they get
//! a `memmap2` mapping, as their documentation suggests ([`map_file`]).

mod cold;
mod fill;
mod header;
mod npz;
mod objects;
mod open;
mod random;
mod save;
mod sum;
mod whole_read;
mod windows;

pub use cold::cold;
pub use fill::{fill, fill_worker};
pub use header::header;
pub use npz::npz;
pub use objects::objects;
pub use open::open;
pub use random::random_reads;
pub use save::save;
pub use sum::sum;
pub use whole_read::whole_read;
pub use windows::windows;

use std::fs::File;
use std::hint::black_box;
use std::path::Path;

use anyhow::{Context as _, Result};
use memmap2::Mmap;
use npy_bench::{Contender, Row, Samples};

use crate::time;

/// Maps a whole file read-only, for the crates that view a buffer.
fn map_file(path: &Path) -> Result<Mmap> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    // SAFETY: the harness's data files are not changed while mapped.
    Ok(unsafe { Mmap::map(&file)? })
}

/// [`map_file`] at its best for scattered reads of a cold file: with
/// `madvise(MADV_RANDOM)`, the one line the crates' users add (each fault
/// then reads its page, not the kernel's read-ahead around it).
fn map_file_random(path: &Path) -> Result<Mmap> {
    let map = map_file(path)?;
    map.advise(memmap2::Advice::Random)?;
    Ok(map)
}

/// Seconds `f` takes; its result is kept from the optimizer.
fn timed<R>(f: impl FnOnce() -> Result<R>) -> Result<f64> {
    let (seconds, result) = time(f);
    black_box(result?);
    Ok(seconds)
}

/// Seconds per read of summing `read(i)` over `indices` (the sum keeps the
/// reads from being optimised away).
///
/// The same reads run once untimed first: on a 4 GiB working set every read
/// walks the page tables, and whether those tables are in the CPU caches
/// depends on who touched the mapping last (another contender reading the
/// same mapping just before would warm them). The warm-up pass gives every
/// contender the same start.
fn seconds_per_read(indices: &[usize], mut read: impl FnMut(usize) -> Result<f64>) -> Result<f64> {
    let mut pass = || -> Result<f64> {
        let mut total = 0.0;
        for &i in indices {
            total += read(i)?;
        }
        Ok(total)
    };
    black_box(pass()?);
    let seconds = timed(pass)?;
    Ok(seconds / indices.len().max(1) as f64)
}

/// A contender's operation for one run, returning the seconds it took.
type Op<'a> = (Contender, Box<dyn FnMut() -> Result<f64> + 'a>);

/// Runs every contender's operation `runs` times, interleaved, into `row`.
fn interleaved(runs: usize, row: &mut Row, ops: Vec<Op<'_>>) -> Result<()> {
    run_ops(runs, row, ops, Schedule::Interleaved)
}

/// The order of a row's runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Schedule {
    /// Round-robin, starting one contender later each run: machine drift
    /// spreads over every contender alike, and each follows every other in
    /// turn (what one run leaves behind, such as freed memory the kernel
    /// has not handed out again yet, then favours no one).
    Interleaved,
    /// Each contender's runs back to back, as numpy's side runs them: for
    /// workloads whose speed depends on reusing memory the previous run
    /// freed (see `whole_read`).
    Consecutive,
}

fn run_ops(runs: usize, row: &mut Row, mut ops: Vec<Op<'_>>, schedule: Schedule) -> Result<()> {
    let mut samples = vec![Vec::new(); ops.len()];
    let order: Vec<(usize, usize)> = match schedule {
        Schedule::Interleaved => {
            let count = ops.len();
            (0..runs)
                .flat_map(|run| (0..count).map(move |k| (run, (run + k) % count)))
                .collect()
        }
        Schedule::Consecutive => (0..ops.len())
            .flat_map(|k| (0..runs).map(move |run| (run, k)))
            .collect(),
    };
    for (run, k) in order {
        let (who, op) = &mut ops[k];
        let seconds = op().with_context(|| format!("{} {} run {run}", who.name(), row.id))?;
        samples[k].push(seconds);
    }
    for ((who, _), samples) in ops.into_iter().zip(samples) {
        row.set(who, Samples::new(samples));
    }
    Ok(())
}

fn gib(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else {
        format!("{} MiB", bytes >> 20)
    }
}

fn path_str(path: &Path) -> String {
    path.display().to_string()
}

//! Random reads of a cold file: its pages evicted from the page cache
//! before every timed run (`posix_fadvise(DONTNEED)`, while nothing maps
//! it) and checked with `mincore`; a run that finds more than 1% of the
//! file resident is discarded and says so. The file is the big one on the
//! disk (`--dir`, never tmpfs: a tmpfs cannot be evicted). Every
//! contender is at its best: the crates' mappings and numpy's with
//! `madvise(MADV_RANDOM)`, the one line their users add for scattered reads
//! (ours takes its default: the planner).
//!
//! Rows: `cold random gather` (random float64 elements, per element),
//! `cold random rows` (random rows of 4 KiB, per row) and `cold 4 KiB reads
//! at queue depth 32 (limit)`: 32 threads reading 4 KiB at random with
//! `O_DIRECT`, what the disk gives at that depth (its column is "ours" only
//! because the table has one per contender).

use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context as _, Result, bail};
use ndarray::ArrayView1;
use ndarray_npy::ViewNpyExt as _;
use npy_bench::{Contender, Row, Samples, random_indices};
use serde_json::json;

use crate::Harness;
use crate::data::BigFiles;

use super::random::read_loop;
use super::{map_file_random, path_str, timed};
use Contender::{NdarrayNpy, Npyz, Ours};

/// Elements per gather and rows per row read (the workloads).
const ELEMENTS: usize = 20_000;
const ROWS: usize = 2_000;
const ROW_BYTES: usize = 4096;
/// Reads per thread-and-depth run of the limit row.
const LIMIT_READS: usize = 20_000;
const DEPTH: usize = 32;

/// Evicts `path` from the page cache and returns the fraction still resident.
pub(super) fn evict(path: &Path) -> Result<f64> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)?;
    resident(&file)
}

/// The fraction of `file`'s pages in the page cache (`mincore` of a fresh
/// mapping, which itself touches nothing).
pub(super) fn resident(file: &File) -> Result<f64> {
    let len = file.metadata()?.len() as usize;
    if len == 0 {
        return Ok(0.0);
    }
    // SAFETY: the mapping is only asked about, never read.
    let map = unsafe { memmap2::Mmap::map(file)? };
    let pages = len.div_ceil(4096);
    let mut status = vec![0u8; pages];
    // SAFETY: `map` covers `len` bytes from a page-aligned address;
    // `status` has one byte per page of it.
    let result =
        unsafe { libc::mincore(map.as_ptr() as *mut libc::c_void, len, status.as_mut_ptr()) };
    if result != 0 {
        bail!("mincore: {}", std::io::Error::last_os_error());
    }
    Ok(status.iter().filter(|&&s| s & 1 == 1).count() as f64 / pages as f64)
}

/// Runs `op` `runs` times, each on a freshly evicted file; returns the
/// samples (seconds per operation) and notes about discarded runs.
pub(super) fn cold_runs(
    path: &Path,
    runs: usize,
    per: usize,
    who: &str,
    notes: &mut Vec<String>,
    mut op: impl FnMut() -> Result<f64>,
) -> Result<Samples> {
    let mut samples = Vec::new();
    for run in 0..runs {
        let left = evict(path)?;
        if left > 0.01 {
            notes.push(format!(
                "cold: {who} run {run} discarded: {:.1}% of the file was still resident",
                left * 100.0
            ));
            continue;
        }
        samples.push(op()? / per as f64);
    }
    Ok(Samples::new(samples))
}

pub fn cold(h: &mut Harness, files: &BigFiles) -> Result<()> {
    let runs = h.args.runs;
    let path = &files.big;
    let len = files.big_len;
    let elements: Vec<usize> = random_indices(ELEMENTS, len);
    let rows_in_file = len * 8 / ROW_BYTES;
    let rows: Vec<usize> = random_indices(ROWS, rows_in_file);
    // numpy gets the same indices through files (too long for an argument).
    let index_file = |name: &str, values: &[usize]| -> Result<std::path::PathBuf> {
        let file = h.args.dir.join(name);
        let values: Vec<i64> = values.iter().map(|&v| v as i64).collect();
        npy_mmap::save(&file, &values)?;
        Ok(file)
    };
    let element_file = index_file("cold-elements.npy", &elements)?;
    let row_file = index_file("cold-rows.npy", &rows)?;
    let report = h.numpy(
        "cold",
        json!({
            "big": path_str(path),
            "elements": path_str(&element_file),
            "rows": path_str(&row_file),
            "row_bytes": ROW_BYTES,
            "runs": runs,
        }),
    );
    h.cleanup(&[element_file, row_file])?;
    let mut notes = Vec::new();

    let mut gather = Row::new(
        "cold.gather",
        format!(
            "cold random gather ({ELEMENTS} float64 of a {} GiB file, per element; theirs with MADV_RANDOM)",
            (len * 8) >> 30
        ),
    );
    let expected: Vec<f64> = elements.iter().map(|&i| (i % 1024) as f64).collect();
    let check = |got: &[f64]| -> Result<()> {
        if got != expected.as_slice() {
            bail!("cold gather read wrong values");
        }
        Ok(())
    };
    let mut out = vec![0.0; ELEMENTS];
    let ours = cold_runs(path, runs, ELEMENTS, "ours", &mut notes, || {
        let array = npy_mmap::open(path)?;
        let seconds = timed(|| Ok(array.gather(&elements, &mut out)?))?;
        check(&out)?;
        Ok(seconds)
    })?;
    gather.set(Ours, ours);
    let theirs = cold_runs(path, runs, ELEMENTS, "ndarray-npy", &mut notes, || {
        let map = map_file_random(path)?;
        let view = ArrayView1::<f64>::view_npy(&map)?;
        let seconds = read_loop(&elements, &mut out, |i| Ok(view[i]))?;
        check(&out)?;
        Ok(seconds)
    })?;
    gather.set(NdarrayNpy, theirs);
    let npyz = cold_runs(path, runs, ELEMENTS, "npyz", &mut notes, || {
        let map = map_file_random(path)?;
        let mut reader = npyz::NpyFile::new(std::io::Cursor::new(&map[..]))?.data::<f64>()?;
        let seconds = read_loop(&elements, &mut out, |i| Ok(reader.read_at(i as u64)?))?;
        check(&out)?;
        Ok(seconds)
    })?;
    gather.set(Npyz, npyz);
    h.push(gather, report.as_ref());

    let mut row_reads = Row::new(
        "cold.rows",
        format!("cold random rows ({ROWS} rows of 4 KiB, per row; theirs with MADV_RANDOM)"),
    );
    let offsets: Vec<usize> = rows.iter().map(|&r| r * ROW_BYTES).collect();
    let mut out = vec![0u8; ROWS * ROW_BYTES];
    let ours = cold_runs(path, runs, ROWS, "ours", &mut notes, || {
        let array = npy_mmap::open(path)?;
        timed(|| Ok(array.gather_bytes(&offsets, ROW_BYTES, &mut out)?))
    })?;
    row_reads.set(Ours, ours);
    let per_row = ROW_BYTES / 8;
    let mut out_f64 = vec![0.0f64; ROWS * per_row];
    let theirs = cold_runs(path, runs, ROWS, "ndarray-npy", &mut notes, || {
        let map = map_file_random(path)?;
        let view = ArrayView1::<f64>::view_npy(&map)?;
        let data = view.as_slice().context("contiguous")?;
        timed(|| {
            for (slot, &r) in out_f64.chunks_exact_mut(per_row).zip(&rows) {
                slot.copy_from_slice(&data[r * per_row..(r + 1) * per_row]);
            }
            Ok(())
        })
    })?;
    row_reads.set(NdarrayNpy, theirs);
    let npyz = cold_runs(path, runs, ROWS, "npyz", &mut notes, || {
        let map = map_file_random(path)?;
        let mut reader = npyz::NpyFile::new(std::io::Cursor::new(&map[..]))?.data::<f64>()?;
        timed(|| {
            for (slot, &r) in out_f64.chunks_exact_mut(per_row).zip(&rows) {
                for (k, value) in slot.iter_mut().enumerate() {
                    *value = reader.read_at((r * per_row + k) as u64)?;
                }
            }
            Ok(())
        })
    })?;
    row_reads.set(Npyz, npyz);
    h.push(row_reads, report.as_ref());

    let mut limit = Row::new(
        "cold.limit",
        format!("cold 4 KiB reads at queue depth {DEPTH} (limit, per read)"),
    );
    let pages = (len * 8 / 4096).max(1);
    let targets: Vec<usize> = random_indices(LIMIT_READS, pages);
    let samples = cold_runs(path, runs, LIMIT_READS, "limit", &mut notes, || {
        direct_reads(path, &targets)
    })?;
    limit.set(Ours, samples);
    h.push(limit, None);
    for note in notes {
        h.note(note);
    }
    Ok(())
}

/// Seconds that `DEPTH` threads take to read the 4 KiB pages `targets`
/// with `O_DIRECT` (nothing cached, nothing read ahead).
fn direct_reads(path: &Path, targets: &[usize]) -> Result<f64> {
    let offsets: Vec<usize> = targets.iter().map(|&t| t * 4096).collect();
    read_at_depth(path, &offsets, 4096, DEPTH)
}

/// Seconds that `depth` threads take to read `width` bytes at each of
/// `offsets` with `O_DIRECT` (offsets and width aligned to the device's
/// logical block).
pub(super) fn read_at_depth(
    path: &Path,
    offsets: &[usize],
    width: usize,
    depth: usize,
) -> Result<f64> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .with_context(|| format!("opening {} with O_DIRECT", path.display()))?;
    let next = AtomicUsize::new(0);
    timed(|| {
        std::thread::scope(|scope| -> Result<()> {
            let workers: Vec<_> = (0..depth)
                .map(|_| {
                    scope.spawn(|| -> Result<()> {
                        // O_DIRECT needs an aligned buffer: anonymous pages.
                        let mut buffer = memmap2::MmapMut::map_anon(width.max(4096))?;
                        loop {
                            let k = next.fetch_add(1, Ordering::Relaxed);
                            let Some(&offset) = offsets.get(k) else {
                                return Ok(());
                            };
                            file.read_exact_at(&mut buffer[..width], offset as u64)?;
                        }
                    })
                })
                .collect();
            for worker in workers {
                worker.join().expect("reader thread")?;
            }
            Ok(())
        })
    })
}

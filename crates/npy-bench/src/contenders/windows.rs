//! Training windows (issue 32): batches of 64 random windows of 1,024
//! `uint16` tokens from a big token file, cold (evicted before every run)
//! and warm, and the disk's limit for reads of the window size.
//!
//! Ours: `MappedArray::gather_windows`. The Rust peers: a loop copying each
//! window (ndarray-npy's view of a `memmap2` mapping; npyz's `read_at` per
//! token, as its documentation shows for random access). numpy (in
//! compare.py): `np.load(mmap_mode="r")` + fancy indexing, and nanoGPT's
//! `get_batch` (a new `np.memmap` per batch, `np.stack` of the slices),
//! which the table shows in the numpy column of its own rows.

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result, bail};
use ndarray::ArrayView1;
use ndarray_npy::ViewNpyExt as _;
use npy_bench::{Contender, Row, Samples, random_indices};
use serde_json::json;

use crate::Harness;
use crate::data::TokenFile;

use super::cold::{cold_runs, read_at_depth};
use super::{gib, interleaved, map_file, map_file_random, path_str, timed};
use Contender::{NdarrayNpy, Npyz, Ours};

/// Windows per batch and tokens per window (the issue's batch).
const BATCH: usize = 64;
const LENGTH: usize = 1024;
/// Batches per cold run (each run evicts the file once) and per warm run.
const COLD_BATCHES: usize = 16;
const WARM_BATCHES: usize = 200;
/// Reads per run of the limit row.
const LIMIT_READS: usize = 20_000;
const DEPTH: usize = 32;
const WINDOW_BYTES: usize = LENGTH * 2;

pub fn windows(h: &mut Harness, file: &TokenFile) -> Result<()> {
    let runs = h.args.runs;
    let path = &file.path;
    let tokens = file.len;
    let bound = tokens - LENGTH + 1;
    let cold_starts = random_indices(COLD_BATCHES * BATCH, bound);
    // A different stream for the warm batches (the seed is fixed).
    let warm_starts: Vec<usize> =
        random_indices(COLD_BATCHES * BATCH + WARM_BATCHES * BATCH, bound)[COLD_BATCHES * BATCH..]
            .to_vec();
    let index_file = |name: &str, values: &[usize]| -> Result<std::path::PathBuf> {
        let file = h.args.dir.join(name);
        let values: Vec<i64> = values.iter().map(|&v| v as i64).collect();
        npy_mmap::save(&file, &values)?;
        Ok(file)
    };
    let cold_file = index_file("windows-cold.npy", &cold_starts)?;
    let warm_file = index_file("windows-warm.npy", &warm_starts)?;
    let report = h.numpy(
        "windows",
        json!({
            "tokens": path_str(path),
            "offset": file.data_offset,
            "cold": path_str(&cold_file),
            "warm": path_str(&warm_file),
            "batch": BATCH,
            "length": LENGTH,
            "runs": runs,
            "warm_only": h.args.warm_only,
        }),
    );
    h.cleanup(&[cold_file, warm_file])?;
    let mut notes = Vec::new();
    let size = gib(file.bytes);

    // Each batch's first token of each window is checked: token i = i % 65521.
    let check = |starts: &[usize], out: &[u16]| -> Result<()> {
        for (k, &s) in starts.iter().enumerate() {
            let (first, last) = (out[k * LENGTH], out[k * LENGTH + LENGTH - 1]);
            if first != TokenFile::token(s) || last != TokenFile::token(s + LENGTH - 1) {
                bail!("window {k} at {s} read wrong tokens");
            }
        }
        Ok(())
    };
    let mut bytes_out = vec![0u8; BATCH * WINDOW_BYTES];
    let mut out = vec![0u16; BATCH * LENGTH];
    let as_u16 = |bytes: &[u8], out: &mut [u16]| {
        for (t, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            *t = u16::from_le_bytes([b[0], b[1]]);
        }
    };
    let batches = |starts: &[usize]| -> Vec<Vec<usize>> {
        starts.chunks(BATCH).map(<[usize]>::to_vec).collect()
    };
    let cold_batches = batches(&cold_starts);
    let warm_batches = batches(&warm_starts);

    // Ours: one gather per batch into the caller's buffer.
    let ours_batches = |array: &npy_mmap::MappedArray<npy_mmap::ReadOnly>,
                        batches: &[Vec<usize>],
                        bytes_out: &mut [u8]|
     -> Result<f64> {
        timed(|| {
            for starts in batches {
                array.gather_windows(starts, LENGTH, bytes_out)?;
            }
            Ok(())
        })
    };
    // ndarray-npy: a view of the mapping, one slice copy per window.
    let ndarray_batches = |view: &ArrayView1<u16>, batches: &[Vec<usize>], out: &mut [u16]| {
        let data = view.as_slice().context("contiguous")?;
        timed(|| {
            for starts in batches {
                for (slot, &s) in out.chunks_exact_mut(LENGTH).zip(starts) {
                    slot.copy_from_slice(&data[s..s + LENGTH]);
                }
            }
            Ok(())
        })
    };
    // npyz: `read_at` per token.
    let npyz_batches = |map: &memmap2::Mmap, batches: &[Vec<usize>], out: &mut [u16]| {
        let mut reader = npyz::NpyFile::new(std::io::Cursor::new(&map[..]))?.data::<u16>()?;
        timed(|| {
            for starts in batches {
                for (slot, &s) in out.chunks_exact_mut(LENGTH).zip(starts) {
                    for (k, value) in slot.iter_mut().enumerate() {
                        *value = reader.read_at((s + k) as u64)?;
                    }
                }
            }
            Ok(())
        })
    };
    let batch_bytes = (BATCH * WINDOW_BYTES) as u64;
    // The cold rows and the disk's limit (`--warm-only` leaves them out).
    if !h.args.warm_only {
        let last = cold_batches.last().expect("batches").clone();

        let mut cold = Row::new(
            "windows.cold",
            "cold random windows (theirs with MADV_RANDOM)",
        )
        .with_bytes(batch_bytes);
        let ours = cold_runs(path, runs, COLD_BATCHES, "ours", &mut notes, || {
            let array = npy_mmap::open(path)?;
            let seconds = ours_batches(&array, &cold_batches, &mut bytes_out)?;
            as_u16(&bytes_out, &mut out);
            check(&last, &out)?;
            Ok(seconds)
        })?;
        cold.set(Ours, ours.clone());
        let theirs = cold_runs(path, runs, COLD_BATCHES, "ndarray-npy", &mut notes, || {
            let map = map_file_random(path)?;
            let view = ArrayView1::<u16>::view_npy(&map)?;
            let seconds = ndarray_batches(&view, &cold_batches, &mut out)?;
            check(&last, &out)?;
            Ok(seconds)
        })?;
        cold.set(NdarrayNpy, theirs);
        let npyz = cold_runs(path, runs, COLD_BATCHES, "npyz", &mut notes, || {
            let map = map_file_random(path)?;
            let seconds = npyz_batches(&map, &cold_batches, &mut out)?;
            check(&last, &out)?;
            Ok(seconds)
        })?;
        cold.set(Npyz, npyz);
        h.push(cold, report.as_ref());
        // Every contender above at its best (`madvise(MADV_RANDOM)`, the
        // one line their users add); numpy's other ways in the numpy
        // column below, nanoGPT's at its best and both as written without
        // the line; ours repeated for the ratio.
        for (id, what) in [
            (
                "windows.cold_nanogpt_random",
                "nanoGPT's get_batch with madvise(MADV_RANDOM)",
            ),
            ("windows.cold_default", "numpy without advice"),
            ("windows.cold_nanogpt", "nanoGPT's get_batch without advice"),
        ] {
            let mut row = Row::new(id, format!("cold random windows (numpy column: {what})"))
                .with_bytes(batch_bytes);
            row.set(Ours, ours.clone());
            h.push(row, report.as_ref());
        }

        // The limit: fio's random reads of the window size at queue depth 32
        // (or 32 threads of O_DIRECT pread when fio is not installed), per
        // batch of 64 reads.
        let mut limit = Row::new(
            "windows.limit",
            format!("cold window reads at queue depth {DEPTH} (limit)"),
        )
        .with_bytes(batch_bytes);
        let slots = (file.bytes as usize / WINDOW_BYTES).max(1);
        let targets: Vec<usize> = random_indices(LIMIT_READS, slots)
            .into_iter()
            .map(|t| t * WINDOW_BYTES)
            .collect();
        let samples = match fio_version() {
            Some(version) => {
                notes.push(format!(
                    "windows limit row: {version}, --rw=randread --bs=2k --direct=1 --iodepth={DEPTH} \
                     --ioengine=io_uring --number_ios={LIMIT_READS}, per {BATCH} reads"
                ));
                let mut samples = Vec::new();
                for _ in 0..runs {
                    samples.push(fio_seconds_per_read(path, file.bytes)? * BATCH as f64);
                }
                Samples::new(samples)
            }
            None => {
                notes.push(format!(
                    "windows limit row: fio not installed; {DEPTH} threads of 2 KiB O_DIRECT pread, \
                     per {BATCH} reads"
                ));
                let per_read = cold_runs(path, runs, LIMIT_READS, "limit", &mut notes, || {
                    read_at_depth(path, &targets, WINDOW_BYTES, DEPTH)
                })?;
                Samples::new(
                    per_read
                        .seconds()
                        .iter()
                        .map(|s| s * BATCH as f64)
                        .collect(),
                )
            }
        };
        limit.set(Ours, samples);
        h.push(limit, None);
    }

    // Warm: the whole file read once, then every contender's runs
    // interleaved, each run WARM_BATCHES batches.
    let warm_up = npy_mmap::open(path)?;
    let mut touched = 0u64;
    for chunk in warm_up.bytes().chunks(1 << 20) {
        touched = touched.wrapping_add(chunk.iter().step_by(4096).map(|&b| b as u64).sum());
    }
    std::hint::black_box(touched);
    let left = resident_fraction(path)?;
    if left < 0.99 {
        notes.push(format!(
            "warm windows: only {:.1}% of the file was resident",
            left * 100.0
        ));
    }
    let mut warm = Row::new("windows.warm", "warm random windows").with_bytes(batch_bytes);
    let array = npy_mmap::open(path)?;
    let map = map_file(path)?;
    let view = ArrayView1::<u16>::view_npy(&map)?;
    let mut out_theirs = vec![0u16; BATCH * LENGTH];
    let mut out_npyz = vec![0u16; BATCH * LENGTH];
    let last_warm = warm_batches.last().expect("batches").clone();
    // One untimed pass each: the page tables, as in the other warm rows.
    ours_batches(&array, &warm_batches, &mut bytes_out)?;
    ndarray_batches(&view, &warm_batches, &mut out_theirs)?;
    let per_batch = |s: f64| s / WARM_BATCHES as f64;
    interleaved(
        runs,
        &mut warm,
        vec![
            (
                Ours,
                Box::new(|| ours_batches(&array, &warm_batches, &mut bytes_out).map(per_batch)),
            ),
            (
                NdarrayNpy,
                Box::new(|| ndarray_batches(&view, &warm_batches, &mut out_theirs).map(per_batch)),
            ),
            (
                Npyz,
                Box::new(|| npyz_batches(&map, &warm_batches, &mut out_npyz).map(per_batch)),
            ),
        ],
    )?;
    as_u16(&bytes_out, &mut out);
    check(&last_warm, &out)?;
    check(&last_warm, &out_theirs)?;
    check(&last_warm, &out_npyz)?;
    let ours_warm = warm.get(Ours).cloned();
    h.push(warm, report.as_ref());
    let mut warm_nanogpt = Row::new(
        "windows.warm_nanogpt",
        "warm random windows (numpy column: nanoGPT's get_batch)",
    )
    .with_bytes(batch_bytes);
    if let Some(samples) = ours_warm {
        warm_nanogpt.set(Ours, samples);
    }
    h.push(warm_nanogpt, report.as_ref());
    h.note(format!(
        "windows: a {size} uint16 token file; a batch is {BATCH} random windows of {LENGTH} \
         tokens ({} KiB); cells are per batch (tokens/s = GB/s × 1e9 / 2); cold runs evict \
         the file and read {COLD_BATCHES} batches, warm runs read {WARM_BATCHES}",
        batch_bytes >> 10
    ));
    if let Some(report) = &report {
        for (key, note) in &report.notes {
            if key.starts_with("windows") {
                notes.push(format!("numpy {key}: {note}"));
            }
        }
    }
    for note in notes {
        h.note(note);
    }
    Ok(())
}

/// The fraction of `path` resident, without evicting it.
fn resident_fraction(path: &Path) -> Result<f64> {
    let file = std::fs::File::open(path)?;
    super::cold::resident(&file)
}

fn fio_version() -> Option<String> {
    let out = Command::new("fio").arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Seconds per read of one fio run: 2 KiB random reads with O_DIRECT at
/// queue depth 32 over the whole file.
fn fio_seconds_per_read(path: &Path, size: u64) -> Result<f64> {
    // Whole 2 KiB blocks only: fio reads within `--size`.
    let size = size / WINDOW_BYTES as u64 * WINDOW_BYTES as u64;
    let out = Command::new("fio")
        .args([
            "--name=windows-limit",
            &format!("--filename={}", path.display()),
            "--rw=randread",
            "--bs=2k",
            "--direct=1",
            &format!("--iodepth={DEPTH}"),
            "--ioengine=io_uring",
            &format!("--size={size}"),
            &format!("--number_ios={LIMIT_READS}"),
            "--readonly",
            "--output-format=json",
        ])
        .output()
        .context("running fio")?;
    if !out.status.success() {
        bail!(
            "fio failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // fio may print notes before its JSON.
    let json_start = text.find('{').context("fio printed no JSON")?;
    let value: serde_json::Value = serde_json::from_str(&text[json_start..])?;
    let iops = value["jobs"][0]["read"]["iops"]
        .as_f64()
        .context("fio's JSON has no read iops")?;
    if iops <= 0.0 {
        bail!("fio measured no reads");
    }
    Ok(1.0 / iops)
}

//! Many processes, one file: real OS processes fill disjoint row windows of
//! one preallocated file; a worker killed mid-fill harms nobody else.
//!
//! The workers are this test binary itself, re-run with an environment
//! variable that makes `worker_process_entry_point` do a worker's job.

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result, ensure};
use npy_core::DType;
use npy_mmap::{Advice, CreateOptions, OpenOptions};
use support::TempDir;

const WORKER_ENV: &str = "NPY_MMAP_TEST_WORKER";
const COLS: usize = 257;

fn value(row: usize, col: usize) -> f64 {
    (row * COLS + col) as f64
}

fn element(bytes: &[u8], k: usize) -> f64 {
    f64::from_ne_bytes(bytes[k * 8..k * 8 + 8].try_into().unwrap())
}

fn native_f8() -> DType {
    DType::parse(if cfg!(target_endian = "little") {
        "<f8"
    } else {
        ">f8"
    })
    .unwrap()
}

/// Fills rows `start..end` of the file, one row at a time; after each row is
/// flushed prints `done <row>` (so a parent can tell how far it got), and
/// sleeps `pause_ms` between rows.
fn work(path: &Path, start: usize, end: usize, pause_ms: u64) -> Result<()> {
    let mut window = OpenOptions::new()
        .rows(start..end)
        .advice(Advice::Sequential)
        .open_rw(path)?;
    let row_bytes = window.row_bytes();
    for local in 0..end - start {
        let row = start + local;
        let bytes = &mut window.bytes_mut()[local * row_bytes..(local + 1) * row_bytes];
        for (col, chunk) in bytes.chunks_exact_mut(8).enumerate() {
            chunk.copy_from_slice(&value(row, col).to_ne_bytes());
        }
        window.flush_rows(local..local + 1)?;
        println!("done {row}");
        if pause_ms > 0 {
            std::thread::sleep(std::time::Duration::from_millis(pause_ms));
        }
    }
    Ok(())
}

/// The body of a worker process, when the parent set
/// `NPY_MMAP_TEST_WORKER=path:start:end:pause_ms`. Run as a test of its own
/// (without the variable), it checks that mechanism: a worker started
/// through it fills its rows and reports each one.
#[test]
fn worker_process_entry_point() -> Result<()> {
    let Ok(job) = std::env::var(WORKER_ENV) else {
        let dir = TempDir::new("mmap-procs-entry");
        let path = dir.0.join("shared.npy");
        create(&path, 4)?;
        let output = spawn_worker(&path, 1..3, 0)?.wait_with_output()?;
        ensure!(output.status.success(), "worker: {}", output.status);
        let done: Vec<usize> = String::from_utf8(output.stdout)?
            .lines()
            .filter_map(reported_row)
            .collect();
        ensure!(done == [1, 2], "reported {done:?}");
        let array = npy_mmap::open(&path)?;
        let bytes = array.bytes();
        ensure!((0..COLS).all(|c| element(bytes, COLS + c) == value(1, c)));
        ensure!(
            (0..COLS).all(|c| element(bytes, c) == 0.0),
            "row 0 is not the worker's"
        );
        return Ok(());
    };
    let mut parts = job.rsplitn(4, ':');
    let pause: u64 = parts.next().context("pause")?.parse()?;
    let end: usize = parts.next().context("end")?.parse()?;
    let start: usize = parts.next().context("start")?.parse()?;
    let path = PathBuf::from(parts.next().context("path")?);
    work(&path, start, end, pause)
}

/// The row a worker's output line reports as done. (The test harness
/// prints its own text without a newline before the first line.)
fn reported_row(line: &str) -> Option<usize> {
    let (_, row) = line.rsplit_once("done ")?;
    row.parse().ok()
}

fn spawn_worker(path: &Path, rows: std::ops::Range<usize>, pause_ms: u64) -> Result<Child> {
    let job = format!("{}:{}:{}:{pause_ms}", path.display(), rows.start, rows.end);
    Ok(Command::new(std::env::current_exe()?)
        .args([
            "worker_process_entry_point",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(WORKER_ENV, job)
        .stdout(Stdio::piped())
        .spawn()?)
}

fn create(path: &Path, rows: usize) -> Result<()> {
    CreateOptions::new(native_f8(), [rows, COLS])
        .reserve(true)
        .preallocate(path)?;
    Ok(())
}

#[test]
fn processes_fill_disjoint_windows_of_one_file() -> Result<()> {
    let dir = TempDir::new("mmap-procs-fill");
    let path = dir.0.join("shared.npy");
    let rows = 4000;
    create(&path, rows)?;
    let workers = 4;
    let bounds: Vec<usize> = (0..=workers).map(|w| w * rows / workers).collect();
    let children: Vec<Child> = bounds
        .windows(2)
        .map(|b| spawn_worker(&path, b[0]..b[1], 0))
        .collect::<Result<_>>()?;
    for child in children {
        let output = child.wait_with_output()?;
        ensure!(
            output.status.success(),
            "worker failed: {:?}",
            output.status
        );
        let done = String::from_utf8(output.stdout)?;
        ensure!(done.lines().filter_map(reported_row).count() == rows / workers);
    }
    let array = npy_mmap::open(&path)?;
    assert_eq!(array.shape(), [rows, COLS]);
    let bytes = array.bytes();
    for row in 0..rows {
        for col in 0..COLS {
            assert_eq!(
                element(bytes, row * COLS + col),
                value(row, col),
                "[{row}, {col}]"
            );
        }
    }
    Ok(())
}

#[test]
#[cfg(unix)]
fn a_worker_killed_mid_fill_harms_no_one_else() -> Result<()> {
    let dir = TempDir::new("mmap-procs-kill");
    let path = dir.0.join("shared.npy");
    let rows = 600;
    create(&path, rows)?;
    let header_before = std::fs::read(&path)?[..128].to_vec();

    // Two steady workers finish; the third is slow and gets killed after
    // it reported a few rows.
    let steady: Vec<Child> = [0..200, 200..400]
        .into_iter()
        .map(|r| spawn_worker(&path, r, 0))
        .collect::<Result<_>>()?;
    let mut victim = spawn_worker(&path, 400..600, 20)?;
    let mut lines = BufReader::new(victim.stdout.take().context("stdout")?).lines();
    let mut reported = Vec::new();
    while reported.len() < 5 {
        let line = lines.next().context("victim ended early")??;
        reported.extend(reported_row(&line));
    }
    victim.kill()?; // SIGKILL
    let status = victim.wait()?;
    assert!(!status.success(), "killed: {status:?}");
    for child in steady {
        assert!(child.wait_with_output()?.status.success());
    }

    // The file still opens, its header is untouched.
    let array = npy_mmap::open(&path)?;
    assert_eq!(std::fs::read(&path)?[..128], header_before[..]);
    assert_eq!(array.shape(), [rows, COLS]);
    let bytes = array.bytes();
    let row_ok = |row: usize| (0..COLS).all(|c| element(bytes, row * COLS + c) == value(row, c));
    // The steady workers' rows and the victim's reported rows are complete.
    assert!((0..400).all(row_ok));
    assert!(
        reported.iter().all(|&r| row_ok(r)),
        "reported rows {reported:?}"
    );
    // Whatever the victim did not finish is zero or right, never garbage.
    for row in 400..600 {
        for col in 0..COLS {
            let v = element(bytes, row * COLS + col);
            assert!(v == 0.0 || v == value(row, col), "[{row}, {col}] = {v}");
        }
    }
    Ok(())
}

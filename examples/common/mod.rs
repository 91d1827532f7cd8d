//! Pieces the mapping examples share: sizes, the fill rule, worker windows,
//! RSS, a small random generator. (Each example uses a subset.)
#![allow(dead_code)]

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use npy_core::DType;
use npy_mmap::{Advice, OpenOptions};

/// Columns of the examples' float64 arrays: 8 KiB rows.
pub const COLS: usize = 1024;

/// float64 in this machine's byte order, so views are plain `f64`.
pub fn native_f8() -> DType {
    DType::parse(if cfg!(target_endian = "little") {
        "<f8"
    } else {
        ">f8"
    })
    .expect("a valid descr")
}

/// The value every example stores at `[row, col]`: its flat C-order index.
pub fn value(row: usize, col: usize, cols: usize) -> f64 {
    (row * cols + col) as f64
}

/// Parses `1G`, `256M`, `64MiB`, `512k`, `1000000` (binary units) into bytes.
pub fn parse_size(text: &str) -> Result<u64> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number
        .parse()
        .with_context(|| format!("size {text:?}: no number"))?;
    let shift = match unit
        .trim()
        .to_ascii_lowercase()
        .trim_end_matches("ib")
        .trim_end_matches('b')
    {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        other => bail!("size {text:?}: unknown unit {other:?} (use K, M, G or T)"),
    };
    number
        .checked_mul(1 << shift)
        .with_context(|| format!("size {text:?} is too large"))
}

/// `1073741824` → `1.00 GiB`.
pub fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.2} {}", units[unit])
    }
}

/// Bytes per second as `1.23 GB/s` (decimal, like numpy benchmarks report).
pub fn rate(bytes: u64, seconds: f64) -> String {
    format!("{:.2} GB/s", bytes as f64 / seconds / 1e9)
}

/// This process's `(VmRSS, VmHWM)` in bytes, where /proc says (Linux).
pub fn rss() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// `RSS 12.00 MiB, peak 1.00 GiB`, or a note where /proc is missing.
pub fn rss_report() -> String {
    match rss() {
        Some((now, peak)) => format!("RSS {}, peak {}", human(now), human(peak)),
        None => "RSS not available on this platform".to_string(),
    }
}

/// `count` row ranges that split `rows` as evenly as possible.
pub fn split_rows(rows: usize, count: usize) -> Vec<Range<usize>> {
    let count = count.max(1);
    (0..count)
        .map(|w| w * rows / count..(w + 1) * rows / count)
        .filter(|r| !r.is_empty())
        .collect()
}

/// Fills `slice`, holding whole rows `first_row..` of a C-order array with
/// `cols` columns, with the value rule, sequentially.
pub fn fill_rows(slice: &mut [f64], first_row: usize, cols: usize) {
    for (local, row) in slice.chunks_exact_mut(cols).enumerate() {
        let base = value(first_row + local, 0, cols);
        for (col, x) in row.iter_mut().enumerate() {
            *x = base + col as f64;
        }
    }
}

/// Checks that `slice` (rows `first_row..`) holds the value rule; names the
/// first wrong element.
pub fn check_rows(slice: &[f64], first_row: usize, cols: usize) -> Result<()> {
    for (local, row) in slice.chunks_exact(cols).enumerate() {
        let base = value(first_row + local, 0, cols);
        if let Some(col) = (0..cols).find(|&col| row[col] != base + col as f64) {
            bail!(
                "element [{}, {col}] is {}, expected {}",
                first_row + local,
                row[col],
                base + col as f64
            );
        }
    }
    Ok(())
}

/// A worker's whole job: map only `rows` of the file read-write, fill them
/// block by block (`fill_blocks` starts each block's writeback as soon as it
/// is filled, so the disk works while the next block fills), flush. Returns
/// the seconds spent after the open.
pub fn fill_window(path: &Path, rows: Range<usize>) -> Result<f64> {
    let mut window = OpenOptions::new()
        .rows(rows.clone())
        .advice(Advice::Sequential)
        .open_rw(path)?;
    let cols = window.row_bytes() / 8;
    let block = (FILL_BLOCK_BYTES / window.row_bytes().max(1)).max(1);
    let start = Instant::now();
    window.fill_blocks::<f64>(block, |local, mut part| {
        let slice = part
            .as_c_slice_mut()
            .context("rows of a Fortran-order file are not contiguous")?;
        fill_rows(slice, rows.start + local.start, cols);
        Ok(())
    })?;
    Ok(start.elapsed().as_secs_f64())
}

/// How much a worker fills before starting that block's writeback.
const FILL_BLOCK_BYTES: usize = 64 << 20;

/// The hidden subcommand the fill examples re-run themselves with:
/// `<program> worker FILE START END`.
#[derive(clap::Subcommand)]
pub enum WorkerRole {
    /// (internal) Fill rows START..END of FILE: what each worker process runs.
    #[command(hide = true)]
    Worker {
        file: PathBuf,
        start: usize,
        end: usize,
    },
}

impl WorkerRole {
    /// Does the worker's job.
    pub fn run(&self) -> Result<()> {
        let WorkerRole::Worker { file, start, end } = self;
        worker_main(file, *start..*end)
    }
}

/// What a worker process prints when done: its fill+flush seconds and
/// peak RSS in bytes.
pub fn worker_main(file: &Path, rows: Range<usize>) -> Result<()> {
    let seconds = fill_window(file, rows)?;
    let peak = rss().map_or(0, |(_, peak)| peak);
    println!("{seconds} {peak}");
    Ok(())
}

/// How a set of worker processes did.
pub struct FillReport {
    /// The row windows, one per worker.
    pub windows: Vec<Range<usize>>,
    /// From the first spawn to the last exit.
    pub wall_seconds: f64,
    /// The slowest worker's fill + flush (after its open).
    pub slowest_fill_seconds: f64,
    /// The largest worker peak RSS.
    pub worker_peak_rss: u64,
}

/// Starts `workers` copies of this program as `<program> worker FILE START
/// END` (the hidden subcommand each example declares), one window of rows
/// each, and waits for all of them.
pub fn run_fill_workers(path: &Path, rows: usize, workers: usize) -> Result<FillReport> {
    let windows = split_rows(rows, workers);
    let start = Instant::now();
    let children = windows
        .iter()
        .map(|w| {
            this_program()?
                .args(["worker".as_ref(), path.as_os_str()])
                .args([w.start.to_string(), w.end.to_string()])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .context("starting a worker")
        })
        .collect::<Result<Vec<_>>>()?;
    let mut report = FillReport {
        windows,
        wall_seconds: 0.0,
        slowest_fill_seconds: 0.0,
        worker_peak_rss: 0,
    };
    for child in children {
        let out = wait_ok(child, "a worker")?;
        let mut fields = out.split_whitespace();
        let fill: f64 = fields.next().context("worker report")?.parse()?;
        let peak: u64 = fields.next().context("worker report")?.parse()?;
        report.slowest_fill_seconds = report.slowest_fill_seconds.max(fill);
        report.worker_peak_rss = report.worker_peak_rss.max(peak);
    }
    report.wall_seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

/// Opens the file read-only and checks every value; returns the seconds.
pub fn verify_file(path: &Path) -> Result<f64> {
    let start = Instant::now();
    let array = OpenOptions::new().advice(Advice::Sequential).open(path)?;
    let cols = array.row_bytes() / 8;
    let view = array.view::<f64>()?;
    check_rows(view.as_c_slice().context("C order is contiguous")?, 0, cols)?;
    Ok(start.elapsed().as_secs_f64())
}

/// A directory for the example's files: `dir` if given, else a fresh one
/// under the system temp dir. Returns it and whether we made it.
pub fn work_dir(dir: Option<&Path>, name: &str) -> Result<(PathBuf, bool)> {
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        return Ok((dir.to_path_buf(), false));
    }
    let dir = std::env::temp_dir().join(format!("npy-mmap-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok((dir, true))
}

/// Removes `file`, and `dir` too when the example made it.
pub fn clean_up(file: &Path, dir: &Path, made_dir: bool) -> Result<()> {
    std::fs::remove_file(file).with_context(|| format!("removing {}", file.display()))?;
    if made_dir {
        std::fs::remove_dir(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    Ok(())
}

/// Runs this example's own binary with `args` (for worker processes).
pub fn this_program() -> Result<std::process::Command> {
    let exe = std::env::current_exe().context("finding this program")?;
    Ok(std::process::Command::new(exe))
}

/// Waits for a child and fails with its stderr when it failed.
pub fn wait_ok(child: std::process::Child, what: &str) -> Result<String> {
    let output = child.wait_with_output()?;
    ensure!(
        output.status.success(),
        "{what} failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(String::from_utf8(output.stdout)?)
}

/// xorshift64*: a fast, seedable generator, good enough to pick indices.
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 11) as u128 * n as u128) >> 53) as usize
    }
}

/// Median of per-batch mean times: robust against a few slow batches
/// (page faults, preemption) without hiding a slow steady state.
pub fn median_ns_per_op(batches: &mut [f64]) -> f64 {
    batches.sort_by(f64::total_cmp);
    batches.get(batches.len() / 2).copied().unwrap_or(f64::NAN)
}

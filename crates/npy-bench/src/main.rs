//! `npy-compare`: runs each workload for npy-mmap, numpy, ndarray-npy and
//! npyz in one run, on data it creates once, and prints one table.
//!
//! Run it through `just compare [OPTIONS]` (which finds the Python with
//! numpy); `--help` lists the sizes. See docs/BENCHMARKS.md for what each
//! workload means.

mod contenders;
mod data;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use clap::{Parser, Subcommand};
use npy_bench::{Contender, NumpyReport, Row, Samples, parse_size, render_table};

/// Side-by-side benchmarks against numpy, ndarray-npy and npyz.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Where the data files go (created and, unless --keep, removed).
    #[arg(long, default_value = "target/npy-bench-data")]
    dir: PathBuf,
    /// Size of the big float64 file (open, sums, random reads, cold reads).
    #[arg(long, default_value = "4G", value_parser = parse_size)]
    big: u64,
    /// Size of the arrays read whole and saved.
    #[arg(long, default_value = "1G", value_parser = parse_size)]
    whole: u64,
    /// Size of the preallocated file the workers fill.
    #[arg(long, default_value = "4G", value_parser = parse_size)]
    fill: u64,
    /// Size of the big npz member (numpy compresses at ~20 MB/s).
    #[arg(long, default_value = "64M", value_parser = parse_size)]
    npz: u64,
    /// Size of the uint16 token file of the windows workload.
    #[arg(long, default_value = "4G", value_parser = parse_size)]
    tokens: u64,
    /// Random scalar reads per run.
    #[arg(long, default_value_t = 1_000_000)]
    reads: usize,
    /// Runs per workload (the heavy fill workload uses at most 3).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Python with numpy (default: $NPY_PYTHON, else python3).
    #[arg(long)]
    python: Option<String>,
    /// Elements of the object array (short strings) decoded and saved.
    #[arg(long, default_value_t = 1_000_000)]
    objects: usize,
    /// Only these workloads (header,open,sum,reads,cold,windows,read,save,fill,npz,objects).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Keep the data files.
    #[arg(long)]
    keep: bool,
    /// Fail when a warm row where ours leads (npy_bench::CHECKED_ROWS)
    /// finds ours slower than the best other contender by more than the
    /// noise measured in this run (needs --runs 3 or more). A row that
    /// fails is measured again (its workload) up to --attempts times in
    /// all, and fails the check only when it fails every time: a real
    /// loss shows in every run, a loaded machine's hiccup does not.
    #[arg(long)]
    check: bool,
    /// Runs of a failing row's workload before --check gives up on it.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    attempts: u32,
    /// Only the warm rows of the windows workload (its cold rows evict the
    /// file and read from the disk, for minutes): what --check guards.
    #[arg(long)]
    warm_only: bool,
    #[command(subcommand)]
    worker: Option<Worker>,
}

/// The fill workload's worker processes (the harness starts itself).
#[derive(Subcommand, Debug)]
enum Worker {
    #[command(hide = true)]
    FillWorker {
        contender: String,
        path: PathBuf,
        start: usize,
        end: usize,
    },
}

const WORKLOADS: [&str; 11] = [
    "header", "open", "sum", "reads", "cold", "windows", "read", "save", "fill", "npz", "objects",
];

fn main() -> Result<()> {
    let args = Args::parse();
    if let Some(Worker::FillWorker {
        contender,
        path,
        start,
        end,
    }) = &args.worker
    {
        return contenders::fill_worker(contender, path, *start..*end);
    }
    for name in &args.only {
        if !WORKLOADS.contains(&name.as_str()) {
            bail!("unknown workload {name:?}; known: {}", WORKLOADS.join(","));
        }
    }
    if args.check && args.runs < 3 {
        bail!("--check needs --runs 3 or more: the noise is measured from the runs' spread");
    }
    let check = args.check;
    let mut harness = Harness::new(args)?;
    harness.run_all()?;
    harness.report();
    if check {
        harness.check()?;
    }
    Ok(())
}

/// The run: options, numpy's script, and the rows measured so far.
struct Harness {
    args: Args,
    python: String,
    script: PathBuf,
    rows: Vec<Row>,
    notes: Vec<String>,
}

impl Harness {
    fn new(args: Args) -> Result<Harness> {
        let python = args
            .python
            .clone()
            .or_else(|| std::env::var("NPY_PYTHON").ok())
            .unwrap_or_else(|| "python3".to_owned());
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches/numpy/compare.py");
        std::fs::create_dir_all(&args.dir)
            .with_context(|| format!("creating {}", args.dir.display()))?;
        Ok(Harness {
            args,
            python,
            script,
            rows: Vec::new(),
            notes: Vec::new(),
        })
    }

    fn wants(&self, workload: &str) -> bool {
        self.args.only.is_empty() || self.args.only.iter().any(|w| w == workload)
    }

    fn run_all(&mut self) -> Result<()> {
        self.note(format!("machine: {}", machine()));
        self.note(format!("load average at start: {}", load_average()));
        let numpy_version = self.numpy_version();
        self.notes.push(format!(
            "numpy: {} ({})",
            numpy_version.as_deref().unwrap_or("NOT AVAILABLE"),
            self.python
        ));
        // Data is made per group and removed after it, so the disk never
        // holds more than the biggest group (the big file, or the fill file).
        if self.wants("header") {
            contenders::header(self)?;
        }
        if self.wants("open") || self.wants("sum") || self.wants("reads") || self.wants("cold") {
            let files = data::big_files(&self.args.dir, self.args.big, self.args.reads)?;
            if self.wants("open") {
                contenders::open(self, &files)?;
            }
            if self.wants("sum") {
                contenders::sum(self, &files)?;
            }
            if self.wants("reads") {
                contenders::random_reads(self, &files)?;
            }
            if self.wants("cold") {
                contenders::cold(self, &files)?;
            }
            self.cleanup(&files.paths())?;
        }
        if self.wants("windows") {
            let file = data::token_file(&self.args.dir, self.args.tokens)?;
            contenders::windows(self, &file)?;
            self.cleanup(std::slice::from_ref(&file.path))?;
        }
        if self.wants("read") || self.wants("save") {
            let files = data::whole_files(&self.args.dir, self.args.whole)?;
            if self.wants("read") {
                contenders::whole_read(self, &files)?;
            }
            if self.wants("save") {
                contenders::save(self, &files)?;
            }
            self.cleanup(&files.paths())?;
        }
        if self.wants("fill") {
            contenders::fill(self)?;
        }
        if self.wants("npz") {
            let files = data::npz_files(&self.args.dir, self.args.npz)?;
            contenders::npz(self, &files)?;
            self.cleanup(&files.paths())?;
        }
        if self.wants("objects") {
            contenders::objects(self)?;
        }
        self.note(format!("load average at end: {}", load_average()));
        Ok(())
    }

    fn cleanup(&self, paths: &[PathBuf]) -> Result<()> {
        if self.args.keep {
            return Ok(());
        }
        for path in paths {
            remove_if_exists(path)?;
        }
        Ok(())
    }

    fn numpy_version(&self) -> Option<String> {
        let out = Command::new(&self.python)
            .args(["-c", "import numpy; print(numpy.__version__)"])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Runs numpy's side of `workload` with `params` and returns its report;
    /// a failure is reported loudly and leaves numpy's cells empty.
    fn numpy(&mut self, workload: &str, params: serde_json::Value) -> Option<NumpyReport> {
        eprintln!("  numpy: {workload}");
        let output = Command::new(&self.python)
            .arg(&self.script)
            .arg(workload)
            .arg(params.to_string())
            .output();
        let failure = match output {
            Ok(out) if out.status.success() => {
                match npy_bench::parse_numpy_report(&String::from_utf8_lossy(&out.stdout)) {
                    Ok(report) => return Some(report),
                    Err(e) => e,
                }
            }
            Ok(out) => format!(
                "exited with {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Err(e) => format!("could not start {}: {e}", self.python),
        };
        eprintln!("WARNING: numpy's {workload} workload failed: {failure}");
        self.notes
            .push(format!("numpy's {workload} workload FAILED: {failure}"));
        None
    }

    /// Adds `row` with numpy's samples for its id (from `report`).
    fn push(&mut self, mut row: Row, report: Option<&NumpyReport>) {
        if let Some(samples) = report.and_then(|r| r.rows.get(&row.id)) {
            row.set(Contender::Numpy, Samples::new(samples.clone()));
        }
        // The table so far, so that a long run shows progress.
        eprintln!("{}", render_table(std::slice::from_ref(&row)));
        self.rows.push(row);
    }

    /// `--check`: each guarded row against the noise of its run; a row
    /// that fails is measured again, up to `--attempts` runs in all, and
    /// the error names the rows that failed every one.
    fn check(&mut self) -> Result<()> {
        let mut failing = self.check_rows(1)?;
        for attempt in 2..=self.args.attempts {
            if failing.is_empty() {
                break;
            }
            let mut workloads: Vec<String> = failing
                .iter()
                .filter_map(|id| id.split('.').next())
                .map(str::to_owned)
                .collect();
            workloads.sort();
            workloads.dedup();
            println!(
                "\n--check: measuring {} again (attempt {attempt} of {})",
                workloads.join(", "),
                self.args.attempts
            );
            self.args.only = workloads;
            self.rows.clear();
            self.run_all()?;
            let again = self.check_rows(attempt)?;
            failing.retain(|id| again.contains(id));
        }
        if !failing.is_empty() {
            bail!(
                "--check: ours is slower than the best other contender beyond the noise, in every one of {} runs, in {}",
                self.args.attempts,
                failing.join(", ")
            );
        }
        Ok(())
    }

    /// The guarded rows of this run that lost their lead beyond its noise,
    /// each printed with its verdict; an error when no row was compared.
    fn check_rows(&self, attempt: u32) -> Result<Vec<String>> {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "\n--check, run {attempt}: ours against the best other contender, failing beyond the noise of this run"
        );
        let mut failed = Vec::new();
        let mut checked = 0;
        for row in &self.rows {
            if !npy_bench::CHECKED_ROWS.contains(&row.id.as_str()) {
                continue;
            }
            let Some(check) = npy_bench::check_row(row) else {
                let _ = writeln!(out, "- {}: nothing to compare (a side did not run)", row.id);
                continue;
            };
            checked += 1;
            let verdict = if check.failed() {
                failed.push(row.id.clone());
                "FAILED"
            } else {
                "ok"
            };
            let _ = writeln!(
                out,
                "- {}: {:.2}× {} (noise {:.0}%): {verdict}",
                row.id,
                check.ratio,
                check.best.name(),
                check.noise * 100.0
            );
        }
        if checked == 0 {
            bail!(
                "--check compared no row: run one of the workloads of its rows ({})",
                npy_bench::CHECKED_ROWS.join(", ")
            );
        }
        Ok(failed)
    }

    fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    fn report(&self) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "\n{}", render_table(&self.rows));
        let _ = writeln!(
            out,
            "Cells: median per operation (GB/s where data moves) ±half the min–max range."
        );
        for note in &self.notes {
            let _ = writeln!(out, "- {note}");
        }
    }
}

/// The 1, 5 and 15 minute load averages (other work on the machine skews
/// every figure; the table is only as good as this).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// CPU model, cores, RAM and kernel, from /proc.
fn machine() -> String {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split(':').nth(1))
        .unwrap_or("unknown CPU")
        .trim()
        .to_owned();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let ram_kib: u64 = read("/proc/meminfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("MemTotal:")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0);
    let kernel = read("/proc/sys/kernel/osrelease");
    format!(
        "{model}, {cores} cores, {:.1} GiB RAM, Linux {}",
        ram_kib as f64 / (1 << 20) as f64,
        kernel.trim()
    )
}

/// Removes `path` if it is there.
fn remove_if_exists(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Seconds one call of `f` takes.
fn time<R>(f: impl FnOnce() -> R) -> (f64, R) {
    let start = Instant::now();
    let result = f();
    (start.elapsed().as_secs_f64(), result)
}

/// Samples of a fast operation: each sample times enough calls to last
/// about 20 ms and divides.
fn micro(samples: usize, mut f: impl FnMut()) -> Samples {
    let (once, ()) = time(&mut f);
    let calls = ((0.02 / once.max(1e-9)) as usize).clamp(1, 1_000_000);
    Samples::new(
        (0..samples.max(11))
            .map(|_| {
                let (t, ()) = time(|| (0..calls).for_each(|_| f()));
                t / calls as f64
            })
            .collect(),
    )
}

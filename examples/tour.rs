//! The main job, end to end: preallocate a float64 `.npy` file, let worker
//! *processes* fill it (each maps only its own rows), verify every value,
//! time random reads, and print how numpy can check the file.
//!
//! ```sh
//! cargo run --release --example tour                      # 1 GiB, one worker per core
//! cargo run --release --example tour -- --size 8G --workers 4 --dir /data --keep
//! ```

mod common;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use clap::Parser;
use npy_mmap::{CreateOptions, OpenOptions};

use common::{COLS, XorShift};

/// Preallocate a float64 .npy file, fill it from worker processes (each maps
/// only its rows), verify it, and time random reads.
#[derive(Parser)]
#[command(name = "tour")]
struct Args {
    /// Size of the array data: 1G, 256M, 64MiB, ...
    #[arg(long, default_value = "1G", value_parser = common::parse_size)]
    size: u64,
    /// Worker processes [default: number of cores].
    #[arg(long)]
    workers: Option<usize>,
    /// Directory for the file [default: a fresh directory under the system temp dir].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Keep the file (and print a numpy command that checks it).
    #[arg(long)]
    keep: bool,
    /// Random reads to time.
    #[arg(long, default_value_t = 1_000_000)]
    reads: usize,
    #[command(subcommand)]
    role: Option<common::WorkerRole>,
}

fn main() -> Result<()> {
    let args = Args::parse();
    match &args.role {
        Some(role) => role.run(),
        None => parent(&args),
    }
}

fn parent(args: &Args) -> Result<()> {
    let workers = match args.workers {
        Some(n) => n.max(1),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let row_bytes = (COLS * 8) as u64;
    let rows = usize::try_from((args.size / row_bytes).max(1))?;
    let (dir, made_dir) = common::work_dir(args.dir.as_deref(), "tour")?;
    let path = dir.join("tour.npy");
    let data_bytes = rows as u64 * row_bytes;
    println!(
        "npy-mmap tour: float64 ({rows}, {COLS}) = {} in {}",
        common::human(data_bytes),
        path.display()
    );

    // 1. Preallocate: header + reserved blocks, no data written.
    let start = Instant::now();
    let layout = CreateOptions::new(common::native_f8(), [rows, COLS])
        .reserve(true)
        .preallocate(&path)
        .with_context(|| format!("creating {}", path.display()))?;
    let create_time = start.elapsed();
    println!(
        "  create     {:>10.3} ms  header {} B, data reserved on disk",
        create_time.as_secs_f64() * 1e3,
        layout.data_offset
    );

    // 2. Worker processes, one window of rows each.
    let fill = common::run_fill_workers(&path, rows, workers)?;
    println!(
        "  fill       {:>10.3} ms  {} workers, {}, each mapped {} (its rows); \
         slowest fill+flush {:.3} ms; worker peak RSS {}",
        fill.wall_seconds * 1e3,
        fill.windows.len(),
        common::rate(data_bytes, fill.wall_seconds),
        common::human(data_bytes / fill.windows.len() as u64),
        fill.slowest_fill_seconds * 1e3,
        common::human(fill.worker_peak_rss)
    );

    // 3. Verify every value.
    let verify_time = common::verify_file(&path)?;
    println!(
        "  verify     {:>10.3} ms  all {} values right, {}",
        verify_time * 1e3,
        rows * COLS,
        common::rate(data_bytes, verify_time)
    );

    // 4. Random reads through a fresh read-only mapping: first a batch on
    // a cold file (its pages dropped from the page cache, as after a
    // reboot), gathered at the disk's speed; then single reads, warm.
    let open_start = Instant::now();
    let array = OpenOptions::new().open(&path)?;
    let open_time = open_start.elapsed();
    println!(
        "  open       {:>10.3} us  read-only, header only",
        open_time.as_secs_f64() * 1e6
    );
    // Nothing of the data is mapped in yet: its pages can all go.
    evict(&path)?;
    let mut rng = XorShift::new(0x5eed);
    let cold_reads = args.reads.min(20_000);
    let picks: Vec<[usize; 2]> = (0..cold_reads)
        .map(|_| [rng.below(rows), rng.below(COLS)])
        .collect();
    let mut values = vec![0.0f64; picks.len()];
    let start = Instant::now();
    array.gather(&picks, &mut values)?;
    let gather_time = start.elapsed().as_secs_f64();
    let right = picks
        .iter()
        .zip(&values)
        .all(|(&[r, c], &v)| v == common::value(r, c, COLS));
    ensure!(right, "the gather returned wrong values");
    println!(
        "  gather cold {:>9.1} us/read  ({cold_reads} random reads of the evicted file in one batch, values checked)",
        gather_time * 1e6 / cold_reads.max(1) as f64
    );
    let view = array.view::<f64>()?;
    let mut timed_pass = |label: &str| -> Result<()> {
        const BATCH: usize = 1000;
        let mut batches = Vec::with_capacity(args.reads / BATCH + 1);
        let mut remaining = args.reads;
        while remaining > 0 {
            let n = remaining.min(BATCH);
            let picks: Vec<[usize; 2]> =
                (0..n).map(|_| [rng.below(rows), rng.below(COLS)]).collect();
            let start = Instant::now();
            let mut sum = 0.0;
            for index in &picks {
                sum += *view.get(index).context("index in bounds")?;
            }
            batches.push(start.elapsed().as_secs_f64() * 1e9 / n as f64);
            let expected: f64 = picks.iter().map(|&[r, c]| common::value(r, c, COLS)).sum();
            ensure!(sum == expected, "random reads returned wrong values");
            remaining -= n;
        }
        println!(
            "  {label} {:>10.1} ns/read  (median of {}-read batches, {} reads, values checked)",
            common::median_ns_per_op(&mut batches),
            BATCH,
            args.reads
        );
        Ok(())
    };
    // Every page once, so the figure is the warm one.
    let warm: f64 = array
        .view::<f64>()?
        .as_slice()
        .map_or(0.0, |s| s.iter().step_by(512).sum());
    std::hint::black_box(warm);
    timed_pass("reads warm")?;
    println!("  this process: {}", common::rss_report());
    drop(view);
    drop(array);

    if args.keep {
        println!("kept {}; check it with numpy:", path.display());
        println!(
            "  python -c \"import numpy as np; a=np.load('{}', mmap_mode='r'); r,c=a.shape; \
             print(all((a[k:k+4096]==np.arange(k*c,min(k+4096,r)*c).reshape(-1,c)).all() \
             for k in range(0,r,4096)))\"",
            path.display()
        );
    } else {
        common::clean_up(&path, &dir, made_dir)?;
        println!("removed {} (use --keep to keep it)", path.display());
    }
    Ok(())
}

/// Drops the file's pages from the page cache (`posix_fadvise(DONTNEED)`;
/// nothing maps it now), so that the next reads go to the disk. A tmpfs
/// keeps its pages: there the "cold" figure is a warm one.
fn evict(path: &std::path::Path) -> Result<()> {
    let file = std::fs::File::open(path)?;
    rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)?;
    Ok(())
}

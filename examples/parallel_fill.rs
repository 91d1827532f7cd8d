//! Fill one float64 `.npy` file in parallel, two ways: threads sharing one
//! mapping (disjoint row chunks of the mutable view), and processes each
//! mapping only their own rows. Every value is verified afterwards.
//!
//! ```sh
//! cargo run --release --example parallel_fill                       # both, 256 MiB, one worker per core
//! cargo run --release --example parallel_fill -- --mode processes --size 2G --workers 2
//! ```

mod common;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Parser, ValueEnum};
use npy_mmap::{Advice, CreateOptions};

use common::COLS;

/// Fill a float64 .npy file from several threads or processes, disjoint
/// rows each, value = row * cols + col; then verify every value.
#[derive(Parser)]
#[command(name = "parallel_fill")]
struct Args {
    /// Size of the array data: 256M, 1G, ...
    #[arg(long, default_value = "256M", value_parser = common::parse_size)]
    size: u64,
    /// Threads or processes [default: number of cores].
    #[arg(long)]
    workers: Option<usize>,
    /// Which kind of parallelism to run.
    #[arg(long, value_enum, default_value_t = Mode::Both)]
    mode: Mode,
    /// Directory for the files [default: a fresh directory under the system temp dir].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Keep the files.
    #[arg(long)]
    keep: bool,
    #[command(subcommand)]
    role: Option<common::WorkerRole>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Threads in this process, one shared mapping split into row chunks.
    Threads,
    /// Worker processes, each mapping only its rows.
    Processes,
    /// Threads, then processes.
    Both,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if let Some(role) = &args.role {
        return role.run();
    }
    let workers = match args.workers {
        Some(n) => n.max(1),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let rows = usize::try_from((args.size / (COLS as u64 * 8)).max(1))?;
    let data_bytes = (rows * COLS * 8) as u64;
    let (dir, made_dir) = common::work_dir(args.dir.as_deref(), "parallel-fill")?;
    println!(
        "float64 ({rows}, {COLS}) = {}, {workers} workers, in {}",
        common::human(data_bytes),
        dir.display()
    );
    let mut files = Vec::new();

    if args.mode != Mode::Processes {
        let path = dir.join("threads.npy");
        let start = Instant::now();
        let mut array = CreateOptions::new(common::native_f8(), [rows, COLS])
            .reserve(true)
            .advice(Advice::Sequential)
            .create(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        let chunks = array.row_chunks_mut::<f64>(rows.div_ceil(workers))?;
        std::thread::scope(|scope| -> Result<()> {
            let handles: Vec<_> = chunks
                .into_iter()
                .map(|(range, mut chunk)| {
                    scope.spawn(move || -> Result<()> {
                        let slice = chunk
                            .as_c_slice_mut()
                            .context("rows of a C-order file are contiguous")?;
                        common::fill_rows(slice, range.start, COLS);
                        Ok(())
                    })
                })
                .collect();
            for handle in handles {
                handle.join().expect("a fill thread panicked")?;
            }
            Ok(())
        })?;
        array.flush()?;
        drop(array);
        let seconds = start.elapsed().as_secs_f64();
        let verify = common::verify_file(&path)?;
        println!(
            "  threads:   create+fill+flush {:>9.3} ms, {}; verified in {:.3} ms",
            seconds * 1e3,
            common::rate(data_bytes, seconds),
            verify * 1e3
        );
        files.push(path);
    }

    if args.mode != Mode::Threads {
        let path = dir.join("processes.npy");
        let start = Instant::now();
        CreateOptions::new(common::native_f8(), [rows, COLS])
            .reserve(true)
            .preallocate(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        let report = common::run_fill_workers(&path, rows, workers)?;
        let seconds = start.elapsed().as_secs_f64();
        let verify = common::verify_file(&path)?;
        println!(
            "  processes: create+fill+flush {:>9.3} ms, {}; each mapped {}; worker peak RSS {}; verified in {:.3} ms",
            seconds * 1e3,
            common::rate(data_bytes, seconds),
            common::human(data_bytes / report.windows.len() as u64),
            common::human(report.worker_peak_rss),
            verify * 1e3
        );
        files.push(path);
    }

    if args.keep {
        for file in &files {
            println!("kept {}", file.display());
        }
    } else {
        for (i, file) in files.iter().enumerate() {
            // The directory goes with the last file.
            common::clean_up(file, &dir, made_dir && i + 1 == files.len())?;
        }
    }
    Ok(())
}

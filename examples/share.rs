//! One process writes, others read, at the same time: every process maps
//! the file *live* (`OpenOptions::open_live`) and sees the elements as
//! atomics, so the writer may store while readers load, soundly (a plain
//! `&[i64]` view of bytes another process writes would be a data race; the
//! crate refuses to hand one out while a writer maps them). Each store is
//! seen at once (all mappings of a file share the page cache; `flush` is for
//! durability).
//!
//! The writer stores a row (`Release`), then tells the readers (over their
//! stdin) which row to read; they load it (`Acquire`) and answer.
//!
//! ```sh
//! cargo run --release --example share -- --readers 3 --steps 5
//! ```

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ChildStdout, Stdio};
use std::time::Instant;

use std::sync::atomic::Ordering;

use anyhow::{Context, Result, bail, ensure};
use clap::{Parser, Subcommand};
use npy_core::DType;
use npy_mmap::{CreateOptions, OpenOptions};

const COLS: usize = 4;

/// One process writes rows of an int64 .npy file; reader processes map it
/// live and see each row right after it is written.
#[derive(Parser)]
#[command(name = "share")]
struct Args {
    /// Reader processes.
    #[arg(long, default_value_t = 3)]
    readers: usize,
    /// Rows to write, one per step.
    #[arg(long, default_value_t = 5)]
    steps: usize,
    /// Directory for the file [default: a fresh directory under the system temp dir].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Keep the file.
    #[arg(long)]
    keep: bool,
    #[command(subcommand)]
    role: Option<Role>,
}

#[derive(Subcommand)]
enum Role {
    /// (internal) Read rows of FILE when told to on stdin: what each reader runs.
    #[command(hide = true)]
    Reader { file: PathBuf },
}

fn row_values(step: usize) -> [i64; COLS] {
    std::array::from_fn(|col| (step * 100 + col) as i64)
}

fn main() -> Result<()> {
    let args = Args::parse();
    match &args.role {
        Some(Role::Reader { file }) => reader(file),
        None => writer(&args),
    }
}

/// A reader: map the file live once; for each `read N` line on stdin, load
/// row N and the rows after it, and answer on stdout.
fn reader(file: &Path) -> Result<()> {
    let array = OpenOptions::new().open_live(file)?;
    let cells = array.atomics::<i64>()?;
    let rows = array.shape()[0];
    println!("ready {}", std::process::id());
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let step: usize = line
            .strip_prefix("read ")
            .context("expected `read N`")?
            .parse()?;
        let load = |row: usize, col: usize| cells[row * COLS + col].load(Ordering::Acquire);
        let row: Vec<i64> = (0..COLS).map(|col| load(step, col)).collect();
        let later_rows_empty = (step + 1..rows).all(|r| (0..COLS).all(|c| load(r, c) == 0));
        println!("row {step} {row:?} later-rows-empty={later_rows_empty}");
    }
    Ok(())
}

struct Reader {
    stdin: ChildStdin,
    stdout: std::io::Lines<BufReader<ChildStdout>>,
    child: std::process::Child,
}

impl Reader {
    fn answer(&mut self) -> Result<String> {
        match self.stdout.next() {
            Some(line) => Ok(line?),
            None => bail!("a reader exited early"),
        }
    }
}

fn writer(args: &Args) -> Result<()> {
    let (dir, made_dir) = common::work_dir(args.dir.as_deref(), "share")?;
    let path = dir.join("share.npy");
    let native_i8 = if cfg!(target_endian = "little") {
        "<i8"
    } else {
        ">i8"
    };
    CreateOptions::new(DType::parse(native_i8)?, [args.steps, COLS])
        .preallocate(&path)
        .with_context(|| format!("creating {}", path.display()))?;
    let array = OpenOptions::new().open_live(&path)?;
    let cells = array.atomics::<i64>()?;
    println!(
        "writer {}: created {} int64 {:?}; starting {} readers",
        std::process::id(),
        path.display(),
        array.shape(),
        args.readers
    );

    let mut readers = (0..args.readers)
        .map(|_| -> Result<Reader> {
            let mut child = common::this_program()?
                .args(["reader".as_ref(), path.as_os_str()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .context("starting a reader")?;
            let stdin = child.stdin.take().context("reader stdin")?;
            let stdout = BufReader::new(child.stdout.take().context("reader stdout")?).lines();
            Ok(Reader {
                stdin,
                stdout,
                child,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    for reader in &mut readers {
        let ready = reader.answer()?;
        ensure!(ready.starts_with("ready "), "unexpected {ready:?}");
        println!("  reader {} mapped the file live", &ready[6..]);
    }

    for step in 0..args.steps {
        for (col, value) in row_values(step).into_iter().enumerate() {
            cells[step * COLS + col].store(value, Ordering::Release);
        }
        array.flush()?;
        let written = Instant::now();
        for reader in &mut readers {
            writeln!(reader.stdin, "read {step}")?;
        }
        let expected = format!("row {step} {:?} later-rows-empty=true", row_values(step));
        for reader in &mut readers {
            let answer = reader.answer()?;
            ensure!(
                answer == expected,
                "reader saw {answer:?}, expected {expected:?}"
            );
        }
        println!(
            "  step {step}: wrote row {step} = {:?}, flushed; all {} readers saw it ({:.0} us round trip)",
            row_values(step),
            readers.len(),
            written.elapsed().as_secs_f64() * 1e6
        );
    }

    for reader in readers {
        drop(reader.stdin); // EOF: the reader exits
        common::wait_ok(reader.child, "a reader")?;
    }
    drop(array);
    println!("all readers saw every row as soon as it was written");
    if args.keep {
        println!("kept {}", path.display());
    } else {
        common::clean_up(&path, &dir, made_dir)?;
    }
    Ok(())
}

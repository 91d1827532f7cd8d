//! Crash safety of saving to a path: a process killed with SIGKILL at any
//! moment of a save leaves either the old file or the new one, complete,
//! never a mix or a torn file. (That a save leaves a reader's mapping of the
//! old file intact is `crates/npy-mmap/tests/save.rs`.)
//!
//! The saving processes are this test binary itself, re-run with an
//! environment variable that makes `saver_process_entry_point` save in a loop.
//!
//! `.npy` saves go through `npy_mmap::save`, `.npz` saves through
//! `NpzWriter::create` + `commit`, and overwriting creates and streams
//! through `CreateOptions::overwrite(true)`; all write through
//! `npy_mmap::AtomicFile`. (An overwrite used to truncate the old file in
//! place: a kill then left a 0-byte file.)

#![cfg(unix)]

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail, ensure};
use npy_core::{DType, ReadOptions, read_npy};
use npy_mmap::CreateOptions;
use npy_mmap::npz::NpzWriter;
use support::TempDir;

const SAVER_ENV: &str = "NPY_CRASH_TEST_SAVER";
/// Elements per saved array: 4 MiB of f64, so a save takes long enough for
/// kills to land in the middle of writing as well as around the rename.
const LEN: usize = 1 << 19;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Format {
    Npy,
    Npz,
    /// `CreateOptions::overwrite(true).create`: version `n` is an empty
    /// (sparse) array of `n + 1` elements.
    Create,
    /// `CreateOptions::overwrite(true).stream`: version `n` is `LEN` rows,
    /// every one equal to `n`, written in batches (a killed stream leaves a
    /// new file with fewer rows, all equal to its version).
    Stream,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Npy => "npy",
            Format::Npz => "npz",
            Format::Create => "create",
            Format::Stream => "stream",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Format::Npz => "npz",
            _ => "npy",
        }
    }
}

/// Saves version `n`: `LEN` elements, every one equal to `n`.
fn save(format: Format, path: &Path, n: u64) -> Result<()> {
    let data = vec![n as f64; LEN];
    match format {
        Format::Npy => {
            npy_mmap::save(path, &data)?;
        }
        Format::Npz => {
            let mut writer = NpzWriter::create(path)?;
            writer.add("a", &data)?;
            writer.finish()?;
        }
        Format::Create => {
            CreateOptions::new(DType::parse("<f8")?, [n as usize + 1])
                .overwrite(true)
                .create(path)?;
        }
        Format::Stream => {
            let mut writer = CreateOptions::new(DType::parse("<f8")?, [0])
                .overwrite(true)
                .stream(path)?;
            for batch in data.chunks(LEN / 4) {
                writer.write_rows(batch)?;
                writer.sync()?;
            }
            writer.finish()?;
        }
    }
    Ok(())
}

/// Reads the file at `path` back: it must be complete, with every element
/// equal; returns that version.
fn load(format: Format, path: &Path) -> Result<u64> {
    let array = match format {
        Format::Npz => npy_mmap::OpenOptions::new().open_npz(path)?.load("a")?,
        _ => read_npy(std::fs::File::open(path)?, &ReadOptions::default())?,
    };
    let shape = array.header().shape.clone();
    match format {
        Format::Create => return Ok(shape[0] as u64 - 1),
        // A stream killed before its first rows: a new, empty file.
        Format::Stream if shape == [0] => return Ok(u64::MAX),
        Format::Stream => ensure!(shape[0] <= LEN, "{shape:?}"),
        _ => ensure!(shape == [LEN], "{:?}", array.header()),
    }
    let view = array.view::<f64>()?;
    let values = view.as_slice().context("contiguous")?;
    let first = values[0];
    ensure!(
        values.iter().all(|&v| v == first),
        "a torn file: mixed versions"
    );
    Ok(first as u64)
}

/// Not a test of its own: the body of a saving process. Does nothing unless
/// the parent set `NPY_CRASH_TEST_SAVER=format:path:first`; then saves
/// versions first, first+1, ... forever, printing `saved <n>` after each.
#[test]
fn saver_process_entry_point() -> Result<()> {
    let Ok(job) = std::env::var(SAVER_ENV) else {
        return Ok(());
    };
    let mut parts = job.splitn(3, ':');
    let format = match parts.next() {
        Some("npy") => Format::Npy,
        Some("npz") => Format::Npz,
        Some("create") => Format::Create,
        Some("stream") => Format::Stream,
        other => bail!("format {other:?}"),
    };
    let path = PathBuf::from(parts.next().context("path")?);
    let first: u64 = parts.next().context("first")?.parse()?;
    for n in first.. {
        save(format, &path, n)?;
        println!("saved {n}");
    }
    Ok(())
}

/// A small xorshift generator: kill delays vary from run to run; the seed
/// is printed so a failure can be replayed with `NPY_CRASH_SEED`.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let seed = std::env::var("NPY_CRASH_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
                    | 1
            });
        eprintln!("NPY_CRASH_SEED={seed}");
        Rng(seed)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn kill_savers_at_random_points(format: Format) -> Result<()> {
    let dir = TempDir::new(&format!("crash-{}", format.name()));
    let path = dir.0.join(format!("data.{}", format.extension()));
    save(format, &path, 0)?;
    let mut rng = Rng::new();
    let mut committed = 0u64;
    let kills = 12;
    for round in 0..kills {
        let mut child = Command::new(std::env::current_exe()?)
            .args([
                "saver_process_entry_point",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(
                SAVER_ENV,
                format!("{}:{}:{}", format.name(), path.display(), committed + 1),
            )
            .stdout(Stdio::piped())
            .spawn()?;
        let stdout = child.stdout.take().context("stdout")?;
        // Collect `saved <n>` lines on a thread, so the kill is not tied to
        // a line arriving: it lands wherever the saver happens to be.
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .filter_map(|l| l.rsplit_once("saved ")?.1.parse::<u64>().ok())
                .max()
        });
        // Half the rounds kill early (often mid-write of the first save),
        // half after several saves.
        let delay = if round % 2 == 0 {
            rng.below(60)
        } else {
            60 + rng.below(400)
        };
        std::thread::sleep(Duration::from_millis(delay));
        child.kill()?; // SIGKILL
        let status = child.wait()?;
        ensure!(
            !status.success(),
            "the saver must have been killed: {status:?}"
        );
        let reported = reader.join().expect("reader thread");

        // The file is complete: the last save it reported, or the one in
        // flight if that one got as far as its rename.
        let floor = reported.unwrap_or(committed);
        let found =
            load(format, &path).with_context(|| format!("round {round}, delay {delay} ms"))?;
        // An empty streamed file is the new version, killed before its rows.
        let found = if found == u64::MAX { floor + 1 } else { found };
        ensure!(
            found == floor || found == floor + 1,
            "round {round}: found version {found}, last reported {floor}"
        );
        eprintln!("round {round}: killed after {delay} ms, {reported:?} reported, found {found}");
        committed = found;
    }
    // Killed saves may leave their temporary files behind (nothing can
    // remove them after SIGKILL), but never anything under the real name.
    for entry in std::fs::read_dir(&dir.0)? {
        let name = entry?.file_name().into_string().unwrap();
        ensure!(
            name == format!("data.{}", format.extension()) || name.ends_with(".tmp"),
            "unexpected file {name}"
        );
    }
    Ok(())
}

#[test]
fn a_npy_save_killed_at_any_moment_leaves_the_old_or_the_new_file() -> Result<()> {
    kill_savers_at_random_points(Format::Npy)
}

#[test]
fn a_npz_save_killed_at_any_moment_leaves_the_old_or_the_new_file() -> Result<()> {
    kill_savers_at_random_points(Format::Npz)
}

#[test]
fn an_overwriting_create_killed_at_any_moment_leaves_the_old_or_the_new_file() -> Result<()> {
    kill_savers_at_random_points(Format::Create)
}

#[test]
fn an_overwriting_stream_killed_at_any_moment_leaves_the_old_or_the_new_file() -> Result<()> {
    kill_savers_at_random_points(Format::Stream)
}

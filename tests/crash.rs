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

/// The body of a saving process, when the parent set
/// `NPY_CRASH_TEST_SAVER=format:path:first`: saves versions first,
/// first+1, ... forever, printing `saving <n>` before and `saved <n>` after
/// each. Run as a test of its own (without the variable), it checks that
/// mechanism: a saver started through it reports saves and writes the file.
#[test]
fn saver_process_entry_point() -> Result<()> {
    let Ok(job) = std::env::var(SAVER_ENV) else {
        let dir = TempDir::new("crash-entry");
        let path = dir.0.join("data.npy");
        let mut saver = start_saver(Format::Npy, &path, 1)?;
        let mut lines = BufReader::new(saver.stdout.take().context("stdout")?).lines();
        let mut seen = Vec::new();
        while seen.len() < 4 {
            seen.push(lines.next().context("the saver ended")??);
        }
        saver.kill()?;
        saver.wait()?;
        ensure!(
            seen.iter().any(|l| l.ends_with("saving 1"))
                && seen.iter().any(|l| l.ends_with("saved 1")),
            "{seen:?}"
        );
        ensure!(load(Format::Npy, &path)? >= 1, "the saver's file");
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
        println!("saving {n}");
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

/// Starts a saving process (see `saver_process_entry_point`).
fn start_saver(format: Format, path: &Path, first: u64) -> Result<std::process::Child> {
    Ok(Command::new(std::env::current_exe()?)
        .args([
            "saver_process_entry_point",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(
            SAVER_ENV,
            format!("{}:{}:{first}", format.name(), path.display()),
        )
        .stdout(Stdio::piped())
        .spawn()?)
}

/// Kills this many savers in the middle of a save (between its `saving`
/// and `saved` lines) at least, or the test fails: kills that all land
/// between saves would prove nothing.
const MID_SAVE_KILLS: usize = 4;
/// Rounds before giving up on reaching `MID_SAVE_KILLS`.
const MAX_ROUNDS: usize = 80;

fn kill_savers_at_random_points(format: Format) -> Result<()> {
    let dir = TempDir::new(&format!("crash-{}", format.name()));
    let path = dir.0.join(format!("data.{}", format.extension()));
    save(format, &path, 0)?;
    let mut rng = Rng::new();
    let mut committed = 0u64;
    let mut mid_save = 0;
    let mut round = 0;
    while round < 12 || mid_save < MID_SAVE_KILLS {
        ensure!(
            round < MAX_ROUNDS,
            "only {mid_save} of {round} kills landed mid-save"
        );
        let mut child = start_saver(format, &path, committed + 1)?;
        let stdout = child.stdout.take().context("stdout")?;
        // Collect the lines on a thread, so the kill is not tied to a line
        // arriving: it lands wherever the saver happens to be. Returns the
        // last save reported done, and whether one had started since.
        let reader = std::thread::spawn(move || {
            let mut reported = None;
            let mut saving = false;
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some((_, n)) = line.rsplit_once("saved ") {
                    reported = n.parse::<u64>().ok().or(reported);
                    saving = false;
                } else if line.contains("saving ") {
                    saving = true;
                }
            }
            (reported, saving)
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
        let (reported, killed_mid_save) = reader.join().expect("reader thread");
        mid_save += usize::from(killed_mid_save);

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
        eprintln!(
            "round {round}: killed after {delay} ms{}, {reported:?} reported, found {found}",
            if killed_mid_save { " (mid-save)" } else { "" }
        );
        committed = found;
        round += 1;
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

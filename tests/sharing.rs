//! Sound sharing, proven: which pairs of mappings of one file are admitted
//! at the same time, in one process and across two, blocking and not; live
//! mappings counting into one histogram from four processes; snapshots that
//! never see a torn element while a writer works.
//!
//! Child processes are this test binary itself, re-run with an environment
//! variable that makes `child_entry_point` hold a mapping (or count, or
//! write) and report on stdout.

#![cfg(target_os = "linux")]

mod support;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use npy_core::DType;
use npy_mmap::{CreateOptions, ErrorKind, Locking, OpenOptions};

const CHILD_ENV: &str = "NPY_SHARING_TEST_CHILD";

/// One test of this file at a time. A child is started with `fork`, which
/// for a moment (until `exec` closes them) holds copies of every descriptor
/// of this process, and with them its locks: a test that expects an exact
/// lock outcome must not run while another test is starting children.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
/// Rows of the shared test file (4 rows of 512 float64: 4 KiB per row).
const ROWS: usize = 4;

/// One way of holding (or asking for) the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Use {
    R,
    Rw,
    C,
    /// Read-write window of rows 0..2.
    RwLow,
    /// Read-write window of rows 2..4.
    RwHigh,
    Live,
    /// Live window of rows 2..4.
    LiveHigh,
    /// A file created (overwrite) and mapped read-write: held only.
    Create,
    /// Appending rows: asked for only.
    Append,
}

const HELD: [Use; 8] = [
    Use::R,
    Use::Rw,
    Use::C,
    Use::RwLow,
    Use::RwHigh,
    Use::Live,
    Use::LiveHigh,
    Use::Create,
];
const WANTED: [Use; 8] = [
    Use::R,
    Use::Rw,
    Use::C,
    Use::RwLow,
    Use::RwHigh,
    Use::Live,
    Use::LiveHigh,
    Use::Append,
];

impl Use {
    fn name(self) -> &'static str {
        match self {
            Use::R => "r",
            Use::Rw => "r+",
            Use::C => "c",
            Use::RwLow => "r+[0..2]",
            Use::RwHigh => "r+[2..4]",
            Use::Live => "live",
            Use::LiveHigh => "live[2..4]",
            Use::Create => "create",
            Use::Append => "append",
        }
    }

    fn parse(name: &str) -> Result<Use> {
        HELD.iter()
            .chain(&WANTED)
            .copied()
            .find(|u| u.name() == name)
            .with_context(|| format!("use {name:?}"))
    }

    fn rows(self) -> std::ops::Range<usize> {
        match self {
            Use::RwLow => 0..2,
            Use::RwHigh | Use::LiveHigh => 2..ROWS,
            _ => 0..ROWS,
        }
    }

    fn group(self) -> Group {
        match self {
            Use::R | Use::C => Group::Read,
            Use::Live | Use::LiveHigh => Group::Live,
            Use::Append => Group::Structure,
            _ => Group::Write,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    Read,
    Write,
    Live,
    Structure,
}

/// The rule under test: overlapping bytes are shared only by readers with
/// readers and live with live; a change of structure waits for every mapping.
fn admitted(held: Use, wanted: Use) -> bool {
    if wanted.group() == Group::Structure {
        return false;
    }
    let (a, b) = (held.rows(), wanted.rows());
    let overlap = a.start < b.end && b.start < a.end;
    !overlap
        || matches!(
            (held.group(), wanted.group()),
            (Group::Read, Group::Read) | (Group::Live, Group::Live)
        )
}

/// A mapping (or appender) of the file, kept alive by its owner.
type Holding = Box<dyn std::any::Any>;

fn f8() -> DType {
    DType::parse("<f8").unwrap()
}

fn prepare(path: &Path) -> Result<()> {
    CreateOptions::new(f8(), [ROWS, 512])
        .overwrite(true)
        .reserve(true)
        .preallocate(path)?;
    Ok(())
}

/// Takes `what` on `path`; an error is the refusal.
fn take(what: Use, path: &Path, locking: Locking) -> npy_mmap::Result<Holding> {
    let mut options = OpenOptions::new();
    options.locking(locking);
    if what.rows() != (0..ROWS) {
        options.window(what.rows());
    }
    Ok(match what {
        Use::R => Box::new(options.open(path)?),
        Use::C => Box::new(options.open_cow(path)?),
        Use::Rw | Use::RwLow | Use::RwHigh => Box::new(options.open_rw(path)?),
        Use::Live | Use::LiveHigh => Box::new(options.open_live(path)?),
        Use::Create => Box::new(
            CreateOptions::new(f8(), [ROWS, 512])
                .overwrite(true)
                .locking(locking)
                .create(path)?,
        ),
        Use::Append => {
            let mut appender = npy_mmap::OpenOptions::new().locking(locking).append(path)?;
            appender.append(&[0.0f64; 512])?;
            Box::new(appender)
        }
    })
}

/// Not a test of its own: a child process holding a mapping, counting into
/// a histogram, or writing rows for a snapshot reader.
#[test]
fn child_entry_point() -> Result<()> {
    let Ok(job) = std::env::var(CHILD_ENV) else {
        return Ok(());
    };
    let mut parts = job.splitn(3, ':');
    let (verb, arg, path) = (
        parts.next().context("verb")?,
        parts.next().context("arg")?,
        PathBuf::from(parts.next().context("path")?),
    );
    match verb {
        "hold" => {
            let held = take(Use::parse(arg)?, &path, Locking::NonBlocking)?;
            println!("ready");
            // Hold until the parent closes our stdin.
            std::io::stdin().read_to_end(&mut Vec::new())?;
            drop(held);
        }
        "count" => {
            let updates: u64 = arg.parse()?;
            let live = OpenOptions::new().open_live(&path)?;
            let bins: &[AtomicU64] = live.atomics::<u64>()?;
            println!("ready");
            // Start together: the parent sends a byte to every counter.
            std::io::stdin().read_exact(&mut [0u8])?;
            let mut state = std::process::id() as u64 | 1;
            for _ in 0..updates {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                bins[(state % bins.len() as u64) as usize].fetch_add(1, Ordering::Relaxed);
            }
        }
        "write" => {
            let millis: u64 = arg.parse()?;
            let live = OpenOptions::new().open_live(&path)?;
            let cells: &[AtomicU64] = live.atomics::<u64>()?;
            println!("ready");
            let until = Instant::now() + Duration::from_millis(millis);
            let mut round = 0u64;
            while Instant::now() < until {
                round = round.wrapping_add(1);
                // Every byte of the value equal: a torn read would mix two.
                let value = (round & 0xff).wrapping_mul(0x0101_0101_0101_0101);
                for cell in cells {
                    cell.store(value, Ordering::Relaxed);
                }
            }
        }
        other => bail!("verb {other}"),
    }
    Ok(())
}

fn spawn(
    verb: &str,
    arg: &str,
    path: &Path,
) -> Result<(Child, BufReader<std::process::ChildStdout>)> {
    let mut child = Command::new(std::env::current_exe()?)
        .args([
            "child_entry_point",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, format!("{verb}:{arg}:{}", path.display()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut stdout = BufReader::new(child.stdout.take().context("stdout")?);
    let mut line = String::new();
    loop {
        line.clear();
        if stdout.read_line(&mut line)? == 0 {
            let status = child.wait()?;
            bail!("child {verb} {arg} ended before it was ready: {status}");
        }
        if line.trim_end().ends_with("ready") {
            return Ok((child, stdout));
        }
    }
}

fn finish(mut child: Child) -> Result<()> {
    drop(child.stdin.take());
    let status = child.wait()?;
    ensure!(status.success(), "child failed: {status}");
    Ok(())
}

#[test]
fn every_pairing_in_one_process_is_admitted_or_refused_at_once() -> Result<()> {
    let _serial = serial();
    let dir = support::temp_dir("sharing-one-process");
    let path = dir.join("a.npy");
    let mut table = String::new();
    for held in HELD {
        for wanted in WANTED {
            prepare(&path)?;
            let first = take(held, &path, Locking::NonBlocking)
                .map_err(|error| anyhow::anyhow!("holding {}: {error}", held.name()))?;
            for locking in [Locking::NonBlocking, Locking::Blocking] {
                // Blocking or not, a conflict with this process's own
                // mapping fails at once: waiting for ourselves never ends.
                let started = Instant::now();
                let result = take(wanted, &path, locking);
                let took = started.elapsed();
                let expected = admitted(held, wanted);
                match (&result.as_ref().map_err(|e| e.kind()), expected) {
                    (Ok(_), true) => {}
                    (Err(ErrorKind::Conflict { .. }), false) => {}
                    (other, _) => bail!(
                        "{} then {} ({locking:?}): expected {}, got {:?}",
                        held.name(),
                        wanted.name(),
                        if expected { "admitted" } else { "Conflict" },
                        other.as_ref().err()
                    ),
                }
                ensure!(took < Duration::from_secs(5), "{:?} waited", locking);
                drop(result);
            }
            table.push_str(&format!(
                "{:>9} then {:<9} {}\n",
                held.name(),
                wanted.name(),
                if admitted(held, wanted) {
                    "admitted"
                } else {
                    "refused"
                }
            ));
            drop(first);
        }
    }
    eprintln!("{table}");
    Ok(())
}

#[test]
fn every_pairing_across_two_processes_is_admitted_refused_or_waited_for() -> Result<()> {
    let _serial = serial();
    let dir = support::temp_dir("sharing-two-processes");
    let path = dir.join("a.npy");
    for held in HELD {
        for wanted in WANTED {
            prepare(&path)?;
            let (child, _stdout) = spawn("hold", held.name(), &path)?;
            let result = take(wanted, &path, Locking::NonBlocking);
            let expected = admitted(held, wanted);
            match (&result.as_ref().map_err(|e| e.kind()), expected) {
                (Ok(_), true) | (Err(ErrorKind::Locked { .. }), false) => {}
                (other, _) => bail!(
                    "{} in another process, then {}: expected {}, got {:?}",
                    held.name(),
                    wanted.name(),
                    if expected { "admitted" } else { "Locked" },
                    other.as_ref().err()
                ),
            }
            drop(result);
            if !expected {
                // Blocking: waits while the other process holds it, then
                // gets it once the holder lets go.
                let waiter = {
                    let path = path.clone();
                    std::thread::spawn(move || {
                        take(wanted, &path, Locking::Blocking).map(|held| {
                            drop(held);
                        })
                    })
                };
                std::thread::sleep(Duration::from_millis(150));
                ensure!(
                    !waiter.is_finished(),
                    "{} then {}: a blocking open did not wait",
                    held.name(),
                    wanted.name()
                );
                finish(child)?;
                waiter.join().expect("waiter thread").with_context(|| {
                    format!("{} then {} after release", held.name(), wanted.name())
                })?;
            } else {
                finish(child)?;
            }
        }
    }
    Ok(())
}

#[test]
fn the_issue_example_fails_cleanly() {
    let _serial = serial();
    let dir = support::temp_dir("sharing-example");
    let path = dir.join("a.npy");
    prepare(&path).unwrap();
    let _w = npy_mmap::open_rw(&path).unwrap();
    let error = npy_mmap::open(&path).unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Conflict { .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains(
            "a read-only mapping conflicts with a read-write mapping of the same bytes that this process holds"
        ),
        "{error}"
    );
}

/// Counts `total` updates into a 256-bin u64 histogram from `processes`
/// processes at once; returns the updates per second.
fn histogram(processes: usize, total: u64) -> Result<f64> {
    let dir = support::temp_dir(&format!("sharing-histogram-{processes}"));
    let path = dir.join("histogram.npy");
    CreateOptions::new(DType::parse("<u8")?, [256]).preallocate(&path)?;
    let each = total / processes as u64;
    let mut children = Vec::new();
    for _ in 0..processes {
        children.push(spawn("count", &each.to_string(), &path)?);
    }
    let started = Instant::now();
    for (child, _) in &mut children {
        use std::io::Write;
        child.stdin.as_mut().context("stdin")?.write_all(b"g")?;
    }
    for (child, _) in children {
        finish(child)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let live = OpenOptions::new().open_live(&path)?;
    let mut counts = vec![0u64; 256];
    live.copy_to(&mut counts)?;
    let sum: u64 = counts.iter().sum();
    ensure!(sum == each * processes as u64, "lost updates: {sum}");
    ensure!(
        counts.iter().filter(|&&c| c > 0).count() > 200,
        "{counts:?}"
    );
    Ok(total as f64 / seconds)
}

#[test]
fn four_processes_count_into_one_histogram_exactly() -> Result<()> {
    let _serial = serial();
    let one = histogram(1, 1_000_000)?;
    let four = histogram(4, 1_000_000)?;
    // Figures for the record (debug build; see docs/BENCHMARKS.md for release).
    eprintln!("histogram updates/s: 1 process {one:.0}, 4 processes {four:.0}");
    Ok(())
}

#[test]
fn snapshots_never_see_a_torn_element() -> Result<()> {
    let _serial = serial();
    let dir = support::temp_dir("sharing-snapshot");
    let path = dir.join("rows.npy");
    CreateOptions::new(DType::parse("<u8")?, [64, 64]).preallocate(&path)?;
    let reader = OpenOptions::new().open_live(&path)?;
    let (writer, _stdout) = spawn("write", "1500", &path)?;
    let mut snapshot = vec![0u64; 64 * 64];
    let mut seen = std::collections::BTreeSet::new();
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(1000) {
        reader.copy_to(&mut snapshot)?;
        for &value in &snapshot {
            let low = value & 0xff;
            ensure!(
                value == low.wrapping_mul(0x0101_0101_0101_0101),
                "torn element {value:#018x}"
            );
            seen.insert(low);
        }
    }
    finish(writer)?;
    ensure!(seen.len() > 2, "the writer was not seen at work: {seen:?}");
    Ok(())
}

#[test]
fn live_views_need_the_exact_native_type() -> Result<()> {
    let _serial = serial();
    let dir = support::temp_dir("sharing-live-types");
    let big_endian = dir.join("be.npy");
    CreateOptions::new(DType::parse(">u8")?, [8]).preallocate(&big_endian)?;
    let live = OpenOptions::new().open_live(&big_endian)?;
    let error = live.atomics::<u64>().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::LiveType { .. }),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("live data of dtype >u8 cannot be viewed as u64"),
        "{error}"
    );

    let floats = dir.join("f8.npy");
    CreateOptions::new(f8(), [4, 2]).preallocate(&floats)?;
    let live = OpenOptions::new().open_live(&floats)?;
    for wrong in [
        live.atomics::<u64>().map(drop),
        live.atomics::<f32>().map(drop),
        live.atomics::<i64>().map(drop),
    ] {
        assert!(
            matches!(
                (wrong).as_ref().map_err(|e| e.kind()),
                Err(ErrorKind::LiveType { .. })
            ),
            "{wrong:?}"
        );
    }
    let cells = live.atomics::<f64>()?;
    assert_eq!(cells.len(), 8);
    cells[5].fetch_add(1.5, Ordering::Relaxed);
    cells[5].fetch_add(1.0, Ordering::Relaxed);
    assert_eq!(cells[5].swap(-2.0, Ordering::AcqRel), 2.5);
    let mut snapshot = [0.0f64; 8];
    live.copy_to(&mut snapshot)?;
    assert_eq!(snapshot[5], -2.0);
    assert!(
        live.copy_to(&mut [0.0f64; 7]).is_err(),
        "lengths must match"
    );
    live.flush()?;
    drop(live);
    // What live mappings stored is in the file for everyone.
    assert_eq!(npy_mmap::load(&floats)?.view::<f64>()?.to_vec()[5], -2.0);
    // A window maps (and locks) only its rows.
    let window = OpenOptions::new().window(2..4).open_live(&floats)?;
    assert_eq!(window.shape(), [2, 2]);
    assert_eq!(window.rows(), 2..4);
    let _plain_rows = OpenOptions::new().window(0..2).open(&floats)?;
    Ok(())
}

//! The lock model's faults of round 5, each shown through the public API:
//! a writer that gets in at once never makes a reader wait (its turn is
//! taken only when it has to wait), a child forked while threads open and
//! drop mappings is consistent, and a same-process opener never meets a
//! lock that its own closing mapping leaves behind.
//!
//! Child processes are this test binary itself, re-run with an environment
//! variable (see `child_entry_point`), except the forked ones.

#![cfg(target_os = "linux")]

mod support;

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use npy_core::DType;
use npy_mmap::{CreateOptions, ErrorKind, ForeignMode, Locking, OpenOptions};

const CHILD_ENV: &str = "NPY_LOCK_FAULTS_CHILD";

use support::serial;

fn prepare(path: &Path) -> Result<()> {
    CreateOptions::new(DType::parse("<f8")?, [4, 512])
        .overwrite(true)
        .reserve(true)
        .preallocate(path)?;
    Ok(())
}

/// Opens `path` in the mode named: a strict `r`, `c` or `r+`, `live`, or
/// numpy-style `foreign-r` / `foreign-r+`.
fn open(kind: &str, path: &Path, locking: Locking) -> npy_mmap::Result<Box<dyn std::any::Any>> {
    let mut options = OpenOptions::new();
    options.locking(locking);
    Ok(match kind {
        "r" => Box::new(options.open(path)?),
        "c" => Box::new(options.open_cow(path)?),
        "r+" => Box::new(options.open_rw(path)?),
        "live" => Box::new(options.open_live(path)?),
        "foreign-r" => Box::new(options.open_foreign(path, ForeignMode::ReadOnly)?),
        "foreign-r+" => Box::new(options.open_foreign(path, ForeignMode::ReadWrite)?),
        other => panic!("no mode {other}"),
    })
}

/// The cells of a race's barrier file (a live mapping both sides share):
/// arrivals, the child's result of the round (1 admitted, 2 refused), the
/// child's reports, the parent's reads of them (each side holds what it got
/// until both are known, so "both admitted" means both at once).
const ARRIVED: usize = 0;
const RESULT: usize = 1;
const REPORTED: usize = 2;
const READ: usize = 3;

fn spin_until(cell: &AtomicU64, at_least: u64) {
    while cell.load(Ordering::Acquire) < at_least {
        std::hint::spin_loop();
    }
}

/// A child, as the job in [`CHILD_ENV`] says:
/// - `reopen:MILLIS:PATH` opens the file numpy-style read-write and drops
///   it, in a loop, for MILLIS after the parent's go (a byte on stdin);
/// - `race:KIND:ROUNDS:PATH:BARRIER` tries to open PATH as KIND at the
///   same instant as the parent, ROUNDS times (see [`race`]);
/// - `scribble:MILLIS:PATH` stores, through the address of a numpy-style
///   read-write mapping, rounds of words whose 8 bytes are equal.
#[test]
fn child_entry_point() -> Result<()> {
    let Ok(job) = std::env::var(CHILD_ENV) else {
        return Ok(());
    };
    let parts: Vec<&str> = job.split(':').collect();
    match parts[..] {
        ["reopen", millis, path] => {
            println!("ready");
            std::io::stdin().read_exact(&mut [0u8])?;
            let until = Instant::now() + Duration::from_millis(millis.parse()?);
            let mut opened = 0u64;
            while Instant::now() < until {
                drop(open("foreign-r+", Path::new(path), Locking::Blocking)?);
                opened += 1;
            }
            println!("opened {opened}");
        }
        ["race", kind, rounds, path, barrier] => {
            let live = OpenOptions::new().open_live(barrier)?;
            let cells = live.atomics::<u64>()?;
            println!("ready");
            for round in 0..rounds.parse::<u64>()? {
                cells[ARRIVED].fetch_add(1, Ordering::AcqRel);
                spin_until(&cells[ARRIVED], 2 * (round + 1));
                let held = open(kind, Path::new(path), Locking::NonBlocking);
                cells[RESULT].store(if held.is_ok() { 1 } else { 2 }, Ordering::Release);
                cells[REPORTED].fetch_add(1, Ordering::AcqRel);
                spin_until(&cells[READ], round + 1);
                drop(held);
            }
        }
        ["scribble", millis, path] => {
            let array = open_foreign_rw(Path::new(path))?;
            let address = array.as_mut_ptr().context("writable")?;
            let words = array.len() / 8;
            println!("ready");
            let until = Instant::now() + Duration::from_millis(millis.parse()?);
            let mut round = 0u64;
            while Instant::now() < until {
                round += 1;
                let value = (round & 0xff) * 0x0101_0101_0101_0101;
                for word in 0..words {
                    // SAFETY: word `word` of the mapping, 8-aligned (the
                    // data starts at a multiple of 64), valid while `array`
                    // lives; every access to it is atomic.
                    unsafe { AtomicU64::from_ptr(address.add(8 * word).cast::<u64>()) }
                        .store(value, Ordering::Relaxed);
                }
            }
            println!("rounds {round}");
        }
        _ => bail!("job {job}"),
    }
    Ok(())
}

fn open_foreign_rw(path: &Path) -> npy_mmap::Result<npy_mmap::ForeignArray> {
    OpenOptions::new().open_foreign(path, ForeignMode::ReadWrite)
}

fn spawn(job: &str) -> Result<(Child, BufReader<std::process::ChildStdout>)> {
    Ok(support::spawn_child(CHILD_ENV, job)?)
}

/// Item 5 of round 5: numpy-style writers admit numpy-style readers, so a
/// reader opening beside two processes that open `r+` in a loop is never
/// refused. Before, every writer took the writers' turn on every open,
/// even one that got in at once, and a non-blocking reader that holds
/// nothing met it: 407–1,144 refusals in 1,500 ("a writer waiting").
#[test]
fn writers_that_get_in_at_once_never_make_a_reader_wait() -> Result<()> {
    let _serial = serial();
    let dir = support::temp_dir("lock-faults-turn");
    let path = dir.join("a.npy");
    prepare(&path)?;
    let job = format!("reopen:3000:{}", path.display());
    let mut writers = vec![spawn(&job)?, spawn(&job)?];
    for (child, _) in &mut writers {
        use std::io::Write;
        child.stdin.as_mut().context("stdin")?.write_all(&[1])?;
    }
    let (mut tries, mut refused) = (0, Vec::new());
    let until = Instant::now() + Duration::from_millis(2500);
    while Instant::now() < until {
        tries += 1;
        match OpenOptions::new()
            .locking(Locking::NonBlocking)
            .open_foreign(&path, ForeignMode::ReadOnly)
        {
            Ok(reader) => drop(reader),
            Err(error) => refused.push(error.to_string()),
        }
    }
    let mut opened = Vec::new();
    for (mut child, mut stdout) in writers {
        let mut out = String::new();
        stdout.read_to_string(&mut out)?;
        ensure!(child.wait()?.success(), "a writer failed: {out}");
        opened.push(out.trim().to_string());
    }
    ensure!(
        refused.is_empty(),
        "{} of {tries} readers refused beside writers ({opened:?}); first: {}",
        refused.len(),
        refused[0]
    );
    ensure!(tries > 100, "only {tries} readers tried");
    Ok(())
}

/// Item 8: a same-process opener never meets a lock of its own closing
/// mapping without the registry explaining it. One thread maps the file
/// read-write and drops the mapping in a loop; another tries, without
/// waiting: admitted, or `Conflict` (this process holds it), never
/// `Locked` (which blamed "another process"; before, the mapping forgot
/// its range before its file closed, and a try in that instant met the
/// lock left behind).
#[test]
fn a_same_process_opener_never_blames_another_process_for_its_own_mapping() -> Result<()> {
    let _serial = serial();
    let dir = support::temp_dir("lock-faults-own");
    let path = dir.join("a.npy");
    prepare(&path)?;
    let stop = Arc::new(AtomicBool::new(false));
    let dropper = {
        let (path, stop) = (path.clone(), stop.clone());
        std::thread::spawn(move || -> Result<u64> {
            let mut rounds = 0;
            while !stop.load(Ordering::Relaxed) {
                if let Ok(array) = OpenOptions::new()
                    .locking(Locking::NonBlocking)
                    .open_rw(&path)
                {
                    drop(array);
                    rounds += 1;
                }
            }
            Ok(rounds)
        })
    };
    let (mut tries, mut admitted, mut locked) = (0u64, 0u64, Vec::new());
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        tries += 1;
        match OpenOptions::new()
            .locking(Locking::NonBlocking)
            .open_rw(&path)
        {
            Ok(array) => {
                admitted += 1;
                drop(array);
            }
            Err(error) => match error.kind() {
                ErrorKind::Conflict { .. } => {}
                _ => locked.push(error.to_string()),
            },
        }
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = dropper.join().expect("dropper thread")?;
    ensure!(
        locked.is_empty(),
        "{} of {tries} tries failed with something other than a Conflict; first: {}",
        locked.len(),
        locked[0]
    );
    ensure!(
        rounds > 100 && admitted > 100,
        "too little overlap to show anything: {rounds} drops, {admitted} admitted"
    );
    Ok(())
}

/// What a forked child finds when it asks for the file read-write after
/// the parent let go of everything: admitted; or refused as inherited,
/// with the inherited mapping really there (in /proc/self/maps). A `Locked`
/// is a lock with no entry (a descriptor kept from an open or a drop under
/// way in another thread), an inherited conflict without a mapping is an
/// entry with none.
fn check_in_child(paths: &[PathBuf]) -> std::result::Result<(), String> {
    let maps = std::fs::read_to_string("/proc/self/maps").map_err(|e| e.to_string())?;
    for path in paths {
        let mapped = maps
            .lines()
            .any(|line| line.ends_with(&*path.to_string_lossy()));
        match OpenOptions::new()
            .locking(Locking::NonBlocking)
            .open_rw(path)
        {
            Ok(_) => {}
            Err(error) => match error.kind() {
                ErrorKind::Conflict {
                    inherited: true, ..
                } if mapped => {}
                _ => {
                    return Err(format!(
                        "{} (mapped here: {mapped}): {error}",
                        path.display()
                    ));
                }
            },
        }
    }
    Ok(())
}

/// Item 6: fork while other threads open and drop mappings. The child
/// must be consistent: every lock it inherited has a registry entry and
/// every entry a mapping. Before, a fork in the middle of an open or a
/// drop left the child a descriptor holding locks with no entry (it then
/// waited for its own lock: 10 s, "another process") or an entry with no
/// mapping (a spurious "inherited" conflict for its whole life).
#[test]
fn a_child_forked_while_threads_open_and_drop_is_consistent() -> Result<()> {
    let _serial = serial();
    let dir = support::temp_dir("lock-faults-fork");
    let paths = [dir.join("a.npy"), dir.join("b.npy")];
    for path in &paths {
        prepare(path)?;
    }
    let rounds: usize = 300;
    let mut failures = Vec::new();
    let opened = Arc::new(AtomicUsize::new(0));
    for round in 0..rounds {
        let stop = Arc::new(AtomicBool::new(false));
        let workers: Vec<_> = paths
            .iter()
            .enumerate()
            .map(|(which, path)| {
                let (path, stop, opened) = (path.clone(), stop.clone(), opened.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let mut options = OpenOptions::new();
                        options.locking(Locking::NonBlocking);
                        let held: Option<Box<dyn std::any::Any>> = if which == 0 {
                            options.open(&path).ok().map(|a| Box::new(a) as _)
                        } else {
                            options
                                .open_foreign(&path, ForeignMode::ReadWrite)
                                .ok()
                                .map(|a| Box::new(a) as _)
                        };
                        if held.is_some() {
                            opened.fetch_add(1, Ordering::Relaxed);
                        }
                        drop(held);
                    }
                })
            })
            .collect();
        // Somewhere inside the workers' loops.
        std::thread::sleep(Duration::from_micros(200 + (round as u64 % 7) * 37));
        let mut go = [0 as libc::c_int; 2];
        // SAFETY: a pipe of two descriptors into a local array.
        ensure!(unsafe { libc::pipe(go.as_mut_ptr()) } == 0, "pipe");
        // SAFETY: the child runs only `check_in_child` (std file I/O and
        // this crate's open, which take no lock a vanished thread holds:
        // the crate's registry lock is held by this thread around fork)
        // and then `_exit`, never returning into the test harness.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let mut byte = 0u8;
            // SAFETY: reads one byte into a local from the pipe's read end.
            unsafe { libc::read(go[0], (&mut byte as *mut u8).cast(), 1) };
            let code = match check_in_child(&paths) {
                Ok(()) => 0,
                Err(message) => {
                    eprintln!("child of round {round}: {message}");
                    1
                }
            };
            // SAFETY: ends the child without running the parent's atexit
            // handlers or the test harness.
            unsafe { libc::_exit(code) };
        }
        ensure!(pid > 0, "fork failed");
        stop.store(true, Ordering::Relaxed);
        for worker in workers {
            worker.join().expect("worker thread");
        }
        // Every mapping of the parent is gone: the child may look.
        // SAFETY: writes one byte from a local to the pipe's write end,
        // then closes both ends, which this process owns.
        unsafe {
            libc::write(go[1], [1u8].as_ptr().cast(), 1);
            libc::close(go[0]);
            libc::close(go[1]);
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked, into a local.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
            failures.push(round);
        }
    }
    ensure!(
        failures.is_empty(),
        "{} of {rounds} forked children were inconsistent (rounds {failures:?}; their messages above)",
        failures.len()
    );
    ensure!(
        opened.load(Ordering::Relaxed) > rounds,
        "the workers hardly opened anything"
    );
    Ok(())
}

/// Two openers whose accesses exclude each other, in two processes,
/// starting each attempt at the same instant (a spin barrier on a shared
/// live mapping), many rounds per pair: never both admitted. Take-then-check
/// makes every refused pair either collide in the kernel or find each other
/// (`lock::table::check`); this is the race itself.
#[test]
fn two_excluding_openers_racing_never_both_get_in() -> Result<()> {
    let _serial = serial();
    let dir = support::temp_dir("lock-faults-race");
    let path = dir.join("a.npy");
    prepare(&path)?;
    let rounds = 600u64;
    let mut report = Vec::new();
    for (mine, theirs) in [
        ("r", "foreign-r+"),
        ("foreign-r+", "r"),
        ("r", "live"),
        ("c", "foreign-r+"),
        ("foreign-r", "r+"),
        ("foreign-r", "live"),
        ("live", "foreign-r+"),
        ("r+", "foreign-r+"),
    ] {
        let barrier = dir.join(format!("barrier-{mine}-{theirs}.npy"));
        CreateOptions::new(DType::parse("<u8")?, [8]).preallocate(&barrier)?;
        let live = OpenOptions::new().open_live(&barrier)?;
        let cells = live.atomics::<u64>()?;
        let job = format!(
            "race:{theirs}:{rounds}:{}:{}",
            path.display(),
            barrier.display()
        );
        let (mut child, _stdout) = spawn(&job)?;
        let (mut both, mut one, mut none) = (0, 0, 0);
        for round in 0..rounds {
            cells[ARRIVED].fetch_add(1, Ordering::AcqRel);
            spin_until(&cells[ARRIVED], 2 * (round + 1));
            let held = open(mine, &path, Locking::NonBlocking);
            spin_until(&cells[REPORTED], round + 1);
            let theirs_got = cells[RESULT].load(Ordering::Acquire) == 1;
            cells[READ].fetch_add(1, Ordering::AcqRel);
            match (held.is_ok(), theirs_got) {
                (true, true) => both += 1,
                (false, false) => none += 1,
                _ => one += 1,
            }
            drop(held);
        }
        ensure!(child.wait()?.success(), "the {theirs} racer failed");
        report.push(format!(
            "{mine} vs {theirs}: both {both}, one {one}, none {none}"
        ));
        ensure!(
            both == 0,
            "both admitted in {both} of {rounds} rounds: {report:?}"
        );
    }
    eprintln!("{report:#?}");
    Ok(())
}

/// A numpy-style reader copies (atomic loads) while another process
/// stores through a numpy-style read-write mapping of the same bytes: every
/// aligned word it reads is one the writer stored whole (its 8 bytes
/// equal), and it sees the writer's progress.
#[test]
fn foreign_reads_while_another_process_writes_see_whole_words() -> Result<()> {
    let _serial = serial();
    let dir = support::temp_dir("lock-faults-scribble");
    let path = dir.join("a.npy");
    prepare(&path)?;
    let (mut child, mut stdout) = spawn(&format!("scribble:1500:{}", path.display()))?;
    let reader = OpenOptions::new().open_foreign(&path, ForeignMode::ReadOnly)?;
    let mut buffer = vec![0u8; reader.len()];
    let mut seen = std::collections::BTreeSet::new();
    let until = Instant::now() + Duration::from_millis(1000);
    let mut reads = 0;
    while Instant::now() < until {
        reads += 1;
        reader.copy_to(0, &mut buffer)?;
        for word in buffer.chunks_exact(8) {
            ensure!(
                word.iter().all(|b| *b == word[0]),
                "a torn word {word:?} after {reads} reads"
            );
            seen.insert(word[0]);
        }
        // And the planned gather of single words.
        let mut two = [0u8; 16];
        reader.gather_bytes(&[0, reader.len() - 8], 8, &mut two)?;
        ensure!(two[..8].iter().all(|b| *b == two[0]) && two[8..].iter().all(|b| *b == two[8]));
    }
    let mut out = String::new();
    stdout.read_to_string(&mut out)?;
    ensure!(child.wait()?.success(), "the writer failed: {out}");
    ensure!(
        seen.len() > 10,
        "only {} distinct rounds seen in {reads} reads: the reads did not overlap the writes",
        seen.len()
    );
    Ok(())
}

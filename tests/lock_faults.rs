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

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use npy_core::DType;
use npy_mmap::{CreateOptions, ErrorKind, ForeignMode, Locking, OpenOptions};

const CHILD_ENV: &str = "NPY_LOCK_FAULTS_CHILD";

/// One test of this file at a time: a forked child holds copies of every
/// descriptor of this process (and so its locks) until it ends.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn prepare(path: &Path) -> Result<()> {
    CreateOptions::new(DType::parse("<f8")?, [4, 512])
        .overwrite(true)
        .reserve(true)
        .preallocate(path)?;
    Ok(())
}

/// A child: `reopen:MILLIS:PATH` opens the file numpy-style read-write and
/// drops it, in a loop, for MILLIS after the parent's go (a byte on stdin).
#[test]
fn child_entry_point() -> Result<()> {
    let Ok(job) = std::env::var(CHILD_ENV) else {
        return Ok(());
    };
    let mut parts = job.splitn(3, ':');
    let (verb, millis, path) = (
        parts.next().context("verb")?,
        parts.next().context("millis")?.parse::<u64>()?,
        PathBuf::from(parts.next().context("path")?),
    );
    ensure!(verb == "reopen", "verb {verb}");
    println!("ready");
    std::io::stdin().read_exact(&mut [0u8])?;
    let until = Instant::now() + Duration::from_millis(millis);
    let mut opened = 0u64;
    while Instant::now() < until {
        let array = OpenOptions::new()
            .locking(Locking::Blocking)
            .open_foreign(&path, ForeignMode::ReadWrite)?;
        drop(array);
        opened += 1;
    }
    println!("opened {opened}");
    Ok(())
}

fn spawn(job: &str) -> Result<(Child, BufReader<std::process::ChildStdout>)> {
    let mut child = Command::new(std::env::current_exe()?)
        .args([
            "child_entry_point",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, job)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut stdout = BufReader::new(child.stdout.take().context("stdout")?);
    let mut line = String::new();
    loop {
        line.clear();
        if stdout.read_line(&mut line)? == 0 {
            bail!("child {job} ended before it was ready: {}", child.wait()?);
        }
        if line.trim_end().ends_with("ready") {
            return Ok((child, stdout));
        }
    }
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

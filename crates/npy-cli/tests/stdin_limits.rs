//! Issue 29: standard input is never held whole. An `.npy` stream's data
//! is copied to a temporary file (refused from its header when it is longer
//! than the cap), an `.npz` archive is copied up to the cap, and an endless
//! pipe ends in an error that names the cap and how to raise it.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{assert_exit, npy_bytes, scratch, stderr, stdout};

/// The header of a 1-D `<f8` array of `n` elements, as np.save writes it.
fn f8_header(n: u64) -> Vec<u8> {
    let dict = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({n},), }}");
    npy_bytes(&dict, 21 - n.to_string().len(), &[])
}

/// What a run of the binary did: its output, the bytes it accepted from
/// its standard input (read, or taken into the pipe's buffer), and the
/// files it held open under `TMPDIR` when it had read `probe_after` bytes.
struct Run {
    output: std::process::Output,
    accepted: u64,
    open_under_tmp: Vec<String>,
}

/// The pipe's buffer (Linux's default): bytes accepted without being read.
const PIPE_BUFFER: u64 = 64 << 10;

/// Runs `npy args` (in a shell, with `prefix` before it, e.g. a `ulimit`)
/// with `TMPDIR` at `tmp`, writing `input` to its standard input and then,
/// when `endless`, zeros until it stops reading. Once `probe_after` bytes
/// are accepted (more than the pipe holds: the command has read them), the
/// command's open files under `tmp` are listed (`/proc/PID/fd`).
fn run(
    prefix: &str,
    args: &[&str],
    env: &[(&str, &str)],
    tmp: &Path,
    input: &[u8],
    extra_zeros: Option<u64>,
    probe_after: Option<u64>,
) -> Run {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("{prefix} exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_npy"))
        .args(args)
        .envs(env.iter().copied())
        .env("TMPDIR", tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let fds = format!("/proc/{}/fd", child.id());
    let tmp = tmp.to_owned();
    // A writer thread: the child may stop reading (and exit) at any point.
    // Small writes, so that what it accepted is known to a pipe buffer.
    let writer = std::thread::spawn(move || {
        let mut accepted = 0u64;
        let mut open_under_tmp = Vec::new();
        let zeros = vec![0u8; PIPE_BUFFER as usize];
        let mut left = extra_zeros.unwrap_or(u64::MAX);
        let mut next: &[u8] = &input;
        loop {
            if next.is_empty() {
                if left == 0 {
                    break;
                }
                let n = left.min(zeros.len() as u64) as usize;
                left -= n as u64;
                next = &zeros[..n];
            }
            let n = next.len().min(PIPE_BUFFER as usize);
            if stdin.write_all(&next[..n]).is_err() {
                break; // the child stopped reading: the endless case ends here
            }
            next = &next[n..];
            let before = accepted;
            accepted += n as u64;
            if probe_after.is_some_and(|at| before < at && accepted >= at) {
                open_under_tmp = open_files_under(&fds, &tmp);
            }
        }
        (accepted, open_under_tmp)
    });
    let output = child.wait_with_output().unwrap();
    let (accepted, open_under_tmp) = writer.join().unwrap();
    Run {
        output,
        accepted,
        open_under_tmp,
    }
}

/// The targets of the descriptors in `fds` (a `/proc/PID/fd`) under `tmp`.
fn open_files_under(fds: &str, tmp: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(fds) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter(|target| target.starts_with(tmp))
        .map(|target| target.display().to_string())
        .collect()
}

#[test]
#[cfg(target_os = "linux")]
fn a_piped_array_is_read_in_bounded_memory() {
    let dir = scratch("stdin_bounded_memory");
    // 160 MiB of float64 zeros on a pipe; the command's heap is limited to
    // 64 MiB (RLIMIT_DATA: the heap and private writable mappings count),
    // so holding the data would abort it.
    let n = 20 << 20;
    let header = f8_header(n);
    for command in ["stats", "show"] {
        let run = run(
            "ulimit -d 65536 &&",
            &[command, "-"],
            &[],
            &dir,
            &header,
            Some(n * 8),
            Some(n * 4),
        );
        assert_exit(&run.output, 0);
        assert_eq!(run.accepted, header.len() as u64 + n * 8);
        // Halfway through, the data was going to a file in TMPDIR: an
        // unnamed one (O_TMPFILE), "#<inode> (deleted)" in /proc.
        assert!(
            run.open_under_tmp.len() == 1 && run.open_under_tmp[0].ends_with("(deleted)"),
            "{command}: open under {}: {:?}",
            dir.display(),
            run.open_under_tmp
        );
        let text = stdout(&run.output);
        match command {
            "stats" => assert!(text.contains("20971520"), "{text}"),
            _ => assert!(text.starts_with("[0. 0. 0. ... 0. 0. 0.]"), "{text}"),
        }
    }
    // The limit bites: the same data, held whole, does not fit in it
    // (--allow-pickle reads a stream into memory for its objects): the
    // allocation fails.
    let run = run(
        "ulimit -d 65536 &&",
        &["show", "--allow-pickle", "-"],
        &[],
        &dir,
        &header,
        Some(n * 8),
        None,
    );
    assert_ne!(run.output.status.code(), Some(0));
    assert!(
        stderr(&run.output).contains("cannot allocate"),
        "{}",
        stderr(&run.output)
    );
    // No spool is left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn a_piped_array_longer_than_the_cap_is_refused_from_its_header() {
    let dir = scratch("stdin_declared_huge");
    // 10^12 float64 (8 TB) declared, then zeros without end: refused at
    // once, from the header, naming the cap (4 GiB by default).
    let header = f8_header(1_000_000_000_000);
    for command in ["show", "stats"] {
        let run = run("", &[command, "-"], &[], &dir, &header, None, None);
        let output = run.output;
        assert_exit(&output, 1);
        // At once: nothing of the data was read (what it accepted is the
        // header and what its reader and the pipe's buffer took at most).
        assert!(
            run.accepted <= header.len() as u64 + 2 * PIPE_BUFFER,
            "{command} read {} bytes",
            run.accepted
        );
        assert_eq!(
            stderr(&output),
            "npy: error: the array on standard input (8000000000000 bytes of data, its header \
             says) is larger than the 4 GiB limit for standard input (it is copied to a \
             temporary file); raise it with --stdin-limit SIZE or NPY_STDIN_LIMIT=SIZE, or \
             give a file\n"
        );
    }
    // A smaller cap, by option or environment, is the one named.
    let header = f8_header(1 << 17); // 1 MiB of data
    let output = run(
        "",
        &["stats", "--stdin-limit", "512K", "-"],
        &[],
        &dir,
        &header,
        Some(1 << 20),
        None,
    )
    .output;
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("larger than the 512 KiB limit"),
        "{}",
        stderr(&output)
    );
    let env = [("NPY_STDIN_LIMIT", "1M")];
    let output = run(
        "",
        &["stats", "-"],
        &env,
        &dir,
        &header,
        Some(1 << 20),
        None,
    )
    .output;
    assert_exit(&output, 0);
    let output = run(
        "",
        &["stats", "--stdin-limit", "lots", "-"],
        &[],
        &dir,
        &header,
        Some(0),
        None,
    )
    .output;
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("is not a size"),
        "{}",
        stderr(&output)
    );
    // A stream shorter than its header says: numpy's words.
    let output = run("", &["stats", "-"], &[], &dir, &header, Some(1000), None).output;
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("standard input is not a valid .npy stream"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_endless_archive_on_a_pipe_stops_at_the_cap() {
    let dir = scratch("stdin_endless_npz");
    // A zip's first bytes, then zeros for ever: the spool stops at the cap
    // (8 MiB here) with an error naming it and how to raise it.
    for (args, env) in [
        (&["ls", "--stdin-limit", "8M", "-"][..], &[][..]),
        (&["ls", "-"][..], &[("NPY_STDIN_LIMIT", "8M")][..]),
    ] {
        let run = run("", args, env, &dir, b"PK\x03\x04", None, Some(4 << 20));
        let output = run.output;
        assert_exit(&output, 1);
        // It read up to the cap and stopped there (give or take its
        // reader's and the pipe's buffers), into a file in TMPDIR.
        let cap = 8u64 << 20;
        assert!(
            (cap..=cap + 2 * PIPE_BUFFER + (1 << 20)).contains(&run.accepted),
            "accepted {} bytes",
            run.accepted
        );
        assert_eq!(run.open_under_tmp.len(), 1, "{:?}", run.open_under_tmp);
        assert_eq!(
            stderr(&output),
            "npy: error: cannot read the archive -: the archive on standard input is larger \
             than the 8 MiB limit for \
             standard input (it is copied to a temporary file); raise it with --stdin-limit \
             SIZE or NPY_STDIN_LIMIT=SIZE, or give a file\n"
        );
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

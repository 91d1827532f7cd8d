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

/// Runs `npy args` (in a shell, with `prefix` before it, e.g. a `ulimit`)
/// with `TMPDIR` at `tmp`, writing `input` to its standard input and then,
/// when `endless`, zeros until it stops reading. Returns the output.
fn run(
    prefix: &str,
    args: &[&str],
    env: &[(&str, &str)],
    tmp: &Path,
    input: &[u8],
    extra_zeros: Option<u64>,
) -> std::process::Output {
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
    // A writer thread: the child may stop reading (and exit) at any point.
    let writer = std::thread::spawn(move || {
        if stdin.write_all(&input).is_err() {
            return;
        }
        let zeros = vec![0u8; 1 << 20];
        let mut left = extra_zeros.unwrap_or(u64::MAX);
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            if stdin.write_all(&zeros[..n]).is_err() {
                return; // the child stopped reading: the endless case ends here
            }
            left -= n as u64;
        }
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
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
        let output = run(
            "ulimit -d 65536 &&",
            &[command, "-"],
            &[],
            &dir,
            &header,
            Some(n * 8),
        );
        assert_exit(&output, 0);
        let text = stdout(&output);
        match command {
            "stats" => assert!(text.contains("20971520"), "{text}"),
            _ => assert!(text.starts_with("[0. 0. 0. ... 0. 0. 0.]"), "{text}"),
        }
    }
    // The limit bites: the same data, held whole, does not fit in it
    // (--allow-pickle reads a stream into memory for its objects).
    let output = run(
        "ulimit -d 65536 &&",
        &["show", "--allow-pickle", "-"],
        &[],
        &dir,
        &header,
        Some(n * 8),
    );
    assert_ne!(output.status.code(), Some(0), "{}", stderr(&output));
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
        let output = run("", &[command, "-"], &[], &dir, &header, None);
        assert_exit(&output, 1);
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
    );
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("larger than the 512 KiB limit"),
        "{}",
        stderr(&output)
    );
    let env = [("NPY_STDIN_LIMIT", "1M")];
    let output = run("", &["stats", "-"], &env, &dir, &header, Some(1 << 20));
    assert_exit(&output, 0);
    let output = run(
        "",
        &["stats", "--stdin-limit", "lots", "-"],
        &[],
        &dir,
        &header,
        Some(0),
    );
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("is not a size"),
        "{}",
        stderr(&output)
    );
    // A stream shorter than its header says: numpy's words.
    let output = run("", &["stats", "-"], &[], &dir, &header, Some(1000));
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
        let output = run("", args, env, &dir, b"PK\x03\x04", None);
        assert_exit(&output, 1);
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

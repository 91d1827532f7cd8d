//! One rule decides what a file is and whether it is valid, and every
//! command follows it: the first bytes say `.npy` or `.npz`
//! (`npy_core::npz::is_zip_start`, `np.load`'s test), and an archive whose
//! stored member declares another size than its bytes is refused when it
//! opens. Before, `ls`/`extract` saw an archive in an `.npy` with a zip
//! appended and in a zip with a prefix, where `validate`/`show` saw an
//! `.npy`; and `validate --strict` and `extract` passed a stored member
//! declaring 1 GiB in 160 bytes, which `show` and `stats` refused.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{arange_3x4, npy, scratch, write};

/// A one-member stored archive of `arange_3x4`, written by `npy pack`.
fn packed(dir: &Path) -> Vec<u8> {
    let member = write(dir, "a.npy", &arange_3x4());
    let archive = dir.join("packed.npz");
    let output = npy([
        OsString::from("pack"),
        archive.clone().into(),
        member.into(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    std::fs::read(archive).unwrap()
}

/// Every command that reads a file, as (name, arguments before and after the
/// path); `extract` writes into `out`.
fn commands(out: &Path) -> Vec<(&'static str, Vec<OsString>, Vec<OsString>)> {
    let none = Vec::new;
    vec![
        ("info", vec!["info".into()], none()),
        ("show", vec!["show".into()], none()),
        ("stats", vec!["stats".into()], none()),
        ("validate", vec!["validate".into()], none()),
        (
            "validate --strict",
            vec!["validate".into(), "--strict".into()],
            none(),
        ),
        ("ls", vec!["ls".into()], none()),
        ("extract", vec!["extract".into()], vec![out.into()]),
    ]
}

fn run(path: &Path, (before, after): (&[OsString], &[OsString])) -> Output {
    let mut args = before.to_vec();
    args.push(path.into());
    args.extend_from_slice(after);
    npy(args)
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Runs every command on `path`; `expect(command)` is `(exit code, words)`.
fn every_command(path: &Path, out: &Path, expect: impl Fn(&str) -> (i32, &'static str)) {
    for (name, before, after) in commands(out) {
        let output = run(path, (&before, &after));
        let (code, words) = expect(name);
        let said = text(&output);
        assert_eq!(
            output.status.code(),
            Some(code),
            "{name} {}: {said}",
            path.display()
        );
        assert!(said.contains(words), "{name} {}: {said}", path.display());
    }
}

#[test]
fn a_stored_member_declaring_another_size_is_refused_by_every_command() {
    let dir = scratch("kind-stored-sizes");
    let mut bytes = packed(&dir);
    // The uncompressed size of the one member, in its local header (offset
    // 22) and its central directory entry (offset 24): 1 GiB, where 160+
    // bytes are stored.
    let gib = (1u32 << 30).to_le_bytes();
    bytes[22..26].copy_from_slice(&gib);
    let central = bytes
        .windows(4)
        .position(|w| w == b"PK\x01\x02")
        .expect("a central directory entry");
    bytes[central + 24..central + 28].copy_from_slice(&gib);
    let path = write(&dir, "sizes.npz", &bytes);
    let out = dir.join("out");
    every_command(&path, &out, |_| {
        (1, "stored member claims 1073741824 bytes of content in")
    });
    assert!(!out.join("a.npy").exists());
}

#[test]
fn an_npy_file_with_a_zip_appended_is_an_npy_file_to_every_command() {
    let dir = scratch("kind-npy-then-zip");
    let zip = packed(&dir);
    let path = write(&dir, "npy-then-zip.npy", &[arange_3x4(), zip].concat());
    let out = dir.join("out");
    every_command(&path, &out, |command| match command {
        "info" => (0, "(3, 4)"),
        "show" => (0, "[[ 0.  1.  2.  3.]"),
        "stats" => (0, "count: 12"),
        // Bytes after the data: a note (numpy ignores them), a problem with --strict.
        "validate" => (0, "trailing bytes after the 96 bytes of data"),
        "validate --strict" => (1, "trailing bytes after the 96 bytes of data"),
        _ => (1, "is an .npy file, not an .npz archive"),
    });
}

#[test]
fn a_zip_after_other_bytes_is_neither_to_every_command() {
    let dir = scratch("kind-prefixed-zip");
    let zip = packed(&dir);
    let path: PathBuf = write(
        &dir,
        "prefixed.npz",
        &[&b"#!/bin/sh\nexit 0\n"[..], &zip].concat(),
    );
    let out = dir.join("out");
    every_command(&path, &out, |command| match command {
        "ls" | "extract" => (
            1,
            "File is not a zip file: it does not start with a zip header",
        ),
        _ => (1, "the magic string is not correct"),
    });
    assert!(!out.exists());
}

//! Issue 29: without `--force`, a destination that appears while a command
//! works (after its check, before its rename) is refused at the rename, not
//! replaced. The moment is made exact by the debug build's
//! `NPY_TEST_AFTER_TEMPORARY` hook, a shell command the binary runs once
//! its temporary exists: here it plants the destination, as another
//! process might.

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{assert_exit, names, npy_bytes, scratch, stderr, write};

/// `np.arange(n, dtype='<i8')` as np.save writes it.
fn arange_i8(dir: &Path, name: &str, n: usize) -> PathBuf {
    let dict = format!("{{'descr': '<i8', 'fortran_order': False, 'shape': ({n},), }}");
    let data: Vec<u8> = (0..n as i64).flat_map(|v| v.to_le_bytes()).collect();
    write(
        dir,
        name,
        &npy_bytes(&dict, 21 - n.to_string().len(), &data),
    )
}

/// Runs `npy args` with the hook planting "theirs" at `plant` (once: only
/// if nothing is there yet). When it plants, the hook also records the
/// names in `plant`'s folder at that moment in `SEEN` (beside the folder),
/// so a test can show that the command's temporary existed then: the plant
/// happened mid-command, after every check and before the rename.
fn npy_planting(args: &[&OsStr], plant: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_npy"))
        .args(args)
        .env(
            "NPY_TEST_AFTER_TEMPORARY",
            r#"[ -e "$PLANT" ] || { ls -A "$(dirname "$PLANT")" > "$SEEN"; printf theirs > "$PLANT"; }"#,
        )
        .env("PLANT", plant)
        .env("SEEN", seen_file(plant))
        .output()
        .expect("the npy binary runs")
}

/// Where the hook records what it saw when it planted `plant`.
fn seen_file(plant: &Path) -> PathBuf {
    let folder = plant.parent().unwrap();
    folder.with_file_name(format!(
        "{}.seen",
        folder.file_name().unwrap().to_string_lossy()
    ))
}

/// The command's temporaries the hook saw beside `plant` when it planted it
/// (AtomicFile's `.NAME.<16 hex>.tmp`).
fn temporaries_seen(plant: &Path) -> Vec<String> {
    std::fs::read_to_string(seen_file(plant))
        .unwrap()
        .lines()
        .filter(|name| name.starts_with('.') && name.ends_with(".tmp"))
        .map(str::to_owned)
        .collect()
}

/// `args` run with `target` appearing mid-command: refused, naming it,
/// leaving it as it was; with `--force`, replaced.
#[track_caller]
fn refused_at_the_rename(args: &[&OsStr], target: &Path) {
    let _ = std::fs::remove_file(target);
    let _ = std::fs::remove_file(seen_file(target));
    let output = npy_planting(args, target);
    assert_exit(&output, 1);
    // Planted while the command's temporary existed: mid-command.
    assert_eq!(temporaries_seen(target).len(), 1, "{args:?}");
    let expected = format!(
        "{} exists; remove it first, or replace it with --force",
        target.display()
    );
    assert!(
        stderr(&output).contains(&expected),
        "{args:?}: {}",
        stderr(&output)
    );
    assert_eq!(std::fs::read(target).unwrap(), b"theirs", "{args:?}");
    let dir = target.parent().unwrap();
    assert!(
        names(dir).iter().all(|name| !name.ends_with(".tmp")),
        "{args:?}: {:?}",
        names(dir)
    );
    // --force: the planted file is replaced, as before (by the command's
    // output: an .npy, an archive, a picture or references).
    std::fs::remove_file(target).unwrap();
    let mut forced = args.to_vec();
    forced.push("--force".as_ref());
    assert_exit(&npy_planting(&forced, target), 0);
    assert_eq!(temporaries_seen(target).len(), 1, "{args:?}");
    let bytes = std::fs::read(target).unwrap();
    assert!(
        [&b"\x93NUMPY"[..], b"PK", b"\x89PNG", b"{\"version\":1"]
            .iter()
            .any(|magic| bytes.starts_with(magic)),
        "{args:?}"
    );
}

#[test]
fn a_destination_appearing_mid_command_is_not_replaced_without_force() {
    let dir = scratch("no_replace_mid_command");
    let a = arange_i8(&dir, "a.npy", 3);
    let b = arange_i8(&dir, "b.npy", 5);
    let converted = dir.join("converted.npy");
    refused_at_the_rename(
        &["convert".as_ref(), a.as_os_str(), converted.as_os_str()],
        &converted,
    );
    let unsynced = dir.join("unsynced.npy");
    refused_at_the_rename(
        &[
            "convert".as_ref(),
            "--no-sync".as_ref(),
            a.as_os_str(),
            unsynced.as_os_str(),
        ],
        &unsynced,
    );
    let packed = dir.join("packed.npz");
    refused_at_the_rename(
        &[
            "pack".as_ref(),
            packed.as_os_str(),
            a.as_os_str(),
            b.as_os_str(),
        ],
        &packed,
    );
    // extract: b.npy appears while a.npy is written (every destination was
    // checked before): a.npy is extracted, b.npy is refused.
    std::fs::rename(&packed, dir.join("run.npz")).unwrap();
    let archive = dir.join("run.npz");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let args = [
        "extract".as_ref(),
        archive.as_os_str(),
        "--dir".as_ref(),
        out.as_os_str(),
    ];
    refused_at_the_rename(&args, &out.join("b.npy"));
    assert_eq!(
        std::fs::read(out.join("a.npy")).unwrap(),
        std::fs::read(&a).unwrap(),
        "a.npy, committed before b.npy appeared, is extracted"
    );
    // render (a picture) and virtualize (references).
    let picture = dir.join("picture.png");
    refused_at_the_rename(
        &["render".as_ref(), b.as_os_str(), picture.as_os_str()],
        &picture,
    );
    let refs = dir.join("refs.json");
    refused_at_the_rename(
        &[
            "virtualize".as_ref(),
            a.as_os_str(),
            "-o".as_ref(),
            refs.as_os_str(),
        ],
        &refs,
    );
    // cp: a download (from a file:// URL) and a file:// destination.
    let url = format!("file://{}", a.display());
    let downloaded = dir.join("downloaded.npy");
    refused_at_the_rename(
        &["cp".as_ref(), url.as_ref(), downloaded.as_os_str()],
        &downloaded,
    );
    let copied = dir.join("copied.npy");
    let copied_url = format!("file://{}", copied.display());
    refused_at_the_rename(
        &["cp".as_ref(), a.as_os_str(), copied_url.as_ref()],
        &copied,
    );
}

/// Issue 39: `npy render` follows the same rule as every command that
/// writes: an existing picture is refused without `--force` (it was
/// replaced), a symbolic link is never written through, and the input is
/// never the output, even with `--force`.
#[test]
fn render_refuses_an_existing_picture_a_link_and_its_input() {
    let dir = scratch("no_replace_render");
    let input = arange_i8(&dir, "a.npy", 3);
    let original = std::fs::read(&input).unwrap();
    let picture = write(&dir, "a.png", b"old picture");
    let render = |output: &Path, force: bool| {
        let mut args: Vec<&OsStr> = vec!["render".as_ref(), input.as_os_str(), output.as_os_str()];
        if force {
            args.push("--force".as_ref());
        }
        common::npy(args)
    };
    let output = render(&picture, false);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("a.png exists; remove it first, or replace it with --force"),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read(&picture).unwrap(), b"old picture");
    let link = dir.join("link.png");
    std::os::unix::fs::symlink(&picture, &link).unwrap();
    let output = render(&link, false);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("is a symbolic link"),
        "{}",
        stderr(&output)
    );
    assert_exit(&render(&link, true), 0);
    assert!(link.symlink_metadata().unwrap().is_file());
    assert_eq!(std::fs::read(&picture).unwrap(), b"old picture");
    let output = render(&input, true);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("is an input") && stderr(&output).contains("--force never"),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read(&input).unwrap(), original);
    assert_eq!(names(&dir), ["a.npy", "a.png", "link.png"]);
}

//! Issue 24, "silent or wrong answers" and "errors that don't help": what a
//! first user of the CLI met, each through the `npy` binary.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_exit, npy, npy_bytes, scratch, stderr, stdout, write};

/// A 1-D `<f8` array of `values`, as np.save writes it.
fn f8_file(dir: &Path, name: &str, values: &[f64]) -> PathBuf {
    let n = values.len();
    let dict = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({n},), }}");
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    write(
        dir,
        name,
        &npy_bytes(&dict, 21 - n.to_string().len(), &data),
    )
}

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

/// The one line `npy` printed as its error.
#[track_caller]
fn error_line(output: &std::process::Output) -> String {
    let text = stderr(output);
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    text.trim_end().to_string()
}

// ---- show --rows ----------------------------------------------------------

#[test]
fn show_refuses_rows_past_the_end_or_reversed_instead_of_printing_nothing() {
    let dir = scratch("first_use_rows");
    let path = arange_i8(&dir, "a.npy", 1000);
    let past = npy([
        "show".as_ref(),
        path.as_os_str(),
        "--rows=5000:6000".as_ref(),
    ]);
    assert_exit(&past, 1);
    assert_eq!(stdout(&past), "");
    assert_eq!(
        error_line(&past),
        "npy: error: range 5000..6000 is out of bounds for axis 0 with size 1000 (--rows 5000:6000)"
    );
    let reversed = npy(["show".as_ref(), path.as_os_str(), "--rows=10:5".as_ref()]);
    assert_exit(&reversed, 1);
    assert_eq!(
        error_line(&reversed),
        "npy: error: range 10..5 is reversed: its start is past its end (--rows 10:5)"
    );
    let before = npy(["show".as_ref(), path.as_os_str(), "--rows=-2000:".as_ref()]);
    assert_exit(&before, 1);
    assert_eq!(
        error_line(&before),
        "npy: error: index -2000 is out of bounds for axis 0 with size 1000 (--rows -2000:)"
    );
    // Within the rows, Python's slices still work, negative bounds too.
    let tail = npy(["show".as_ref(), path.as_os_str(), "--rows=-3:".as_ref()]);
    assert_exit(&tail, 0);
    assert_eq!(stdout(&tail), "[997 998 999]\n");
    let empty = npy(["show".as_ref(), path.as_os_str(), "--rows=7:7".as_ref()]);
    assert_exit(&empty, 0);
    assert_eq!(stdout(&empty), "[]\n");
}

// ---- stats: the types it supports -------------------------------------------

#[test]
fn stats_of_strings_lists_every_type_it_supports_float16_and_complex_included() {
    let dir = scratch("first_use_stats_types");
    let path = write(
        &dir,
        "u.npy",
        &npy_bytes(
            "{'descr': '<U2', 'fortran_order': False, 'shape': (1,), }",
            20,
            &[0u8; 8],
        ),
    );
    let output = npy(["stats".as_ref(), path.as_os_str()]);
    assert_exit(&output, 1);
    assert_eq!(
        error_line(&output),
        "npy: error: stats supports bool, integer, float16, float32, float64, complex64 \
         and complex128 arrays, not '<U2'"
    );
    // The list is the help's list.
    let help = stdout(&npy(["stats", "--help"]));
    assert!(
        help.replace('\n', " ")
            .contains("bool, integer, float16, float32, float64, complex64 and complex128 arrays"),
        "{help}"
    );
}

// ---- a missing npz member ---------------------------------------------------

/// `dir/run.npz` with members `a` (arange 3) and `b` (arange 5), packed by `npy pack`.
fn two_member_archive(dir: &Path) -> PathBuf {
    let a = arange_i8(dir, "a.npy", 3);
    let b = arange_i8(dir, "b.npy", 5);
    let archive = dir.join("run.npz");
    assert_exit(
        &npy([
            "pack".as_ref(),
            archive.as_os_str(),
            a.as_os_str(),
            b.as_os_str(),
        ]),
        0,
    );
    archive
}

#[test]
fn a_missing_member_names_the_archive_and_its_members() {
    let dir = scratch("first_use_missing_member");
    let archive = two_member_archive(&dir);
    let expected = format!(
        "npy: error: nope is not a file in the archive {} (members: a, b)",
        archive.display()
    );
    for command in ["show", "stats"] {
        let output = npy([
            command.as_ref(),
            archive.as_os_str(),
            "--member".as_ref(),
            "nope".as_ref(),
        ]);
        assert_exit(&output, 1);
        assert_eq!(error_line(&output), expected, "{command}");
    }
    let out = dir.join("out");
    let output = npy([
        "extract".as_ref(),
        archive.as_os_str(),
        "a".as_ref(),
        "nope".as_ref(),
        "--dir".as_ref(),
        out.as_os_str(),
    ]);
    assert_exit(&output, 1);
    assert_eq!(error_line(&output), expected);
    assert!(!out.join("a.npy").exists(), "nothing is extracted");
}

// ---- nothing is replaced without --force -------------------------------------

/// Runs `args` twice over an existing `target` holding "old": refused without
/// `--force` (naming the file, leaving it as it was), replaced with it.
#[track_caller]
fn refused_then_forced(args: &[&std::ffi::OsStr], target: &Path) {
    std::fs::write(target, b"old").unwrap();
    let output = npy(args);
    assert_exit(&output, 1);
    assert_eq!(
        error_line(&output),
        format!(
            "npy: error: {} exists; remove it first, or replace it with --force",
            target.display()
        ),
        "{args:?}"
    );
    assert_eq!(std::fs::read(target).unwrap(), b"old", "{args:?}");
    let mut forced = args.to_vec();
    forced.push("--force".as_ref());
    assert_exit(&npy(&forced), 0);
    let bytes = std::fs::read(target).unwrap();
    assert!(
        bytes.starts_with(b"\x93NUMPY") || bytes.starts_with(b"PK"),
        "{args:?}"
    );
}

#[test]
fn every_command_that_writes_a_file_refuses_to_replace_one_without_force() {
    let dir = scratch("first_use_force");
    let archive = two_member_archive(&dir);
    let a = dir.join("a.npy");
    // extract: every destination is checked before anything is written.
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    refused_then_forced(
        &[
            "extract".as_ref(),
            archive.as_os_str(),
            "--dir".as_ref(),
            out.as_os_str(),
        ],
        &out.join("b.npy"),
    );
    std::fs::remove_file(out.join("a.npy")).unwrap();
    std::fs::write(out.join("b.npy"), b"old").unwrap();
    let output = npy([
        "extract".as_ref(),
        archive.as_os_str(),
        "--dir".as_ref(),
        out.as_os_str(),
    ]);
    assert_exit(&output, 1);
    assert!(!out.join("a.npy").exists(), "a.npy was not written either");
    // convert, pack, create.
    let converted = dir.join("converted.npy");
    refused_then_forced(
        &["convert".as_ref(), a.as_os_str(), converted.as_os_str()],
        &converted,
    );
    let packed = dir.join("packed.npz");
    refused_then_forced(
        &["pack".as_ref(), packed.as_os_str(), a.as_os_str()],
        &packed,
    );
    let created = dir.join("created.npy");
    refused_then_forced(
        &[
            "create".as_ref(),
            created.as_os_str(),
            "--dtype".as_ref(),
            "<f8".as_ref(),
            "--shape".as_ref(),
            "3".as_ref(),
        ],
        &created,
    );
    // cp to a local destination: a download (here from a file:// URL), and a
    // file:// destination.
    let url = format!("file://{}", a.display());
    let downloaded = dir.join("downloaded.npy");
    refused_then_forced(
        &["cp".as_ref(), url.as_ref(), downloaded.as_os_str()],
        &downloaded,
    );
    let copied = dir.join("copied.npy");
    let copied_url = format!("file://{}", copied.display());
    refused_then_forced(
        &["cp".as_ref(), a.as_os_str(), copied_url.as_ref()],
        &copied,
    );
}

// ---- stats: one rule for NaN, said in the output ---------------------------

fn stats_json(path: &Path) -> serde_json::Value {
    let output = npy(["stats".as_ref(), "--json".as_ref(), path.as_os_str()]);
    assert_exit(&output, 0);
    serde_json::from_str(&stdout(&output)).unwrap()
}

#[test]
fn stats_leave_nan_out_of_every_statistic_and_say_so() {
    let dir = scratch("first_use_stats_nan");
    // More than one chunk (1 MiB of f64), an infinity in the first: numpy's
    // nanmean is inf and nanstd nan (the mean used to come out nan, while
    // max said inf).
    let mut values: Vec<f64> = (0..300_000).map(|i| f64::from(i % 1000)).collect();
    values[10] = f64::INFINITY;
    values[200_000] = f64::NAN;
    let path = f8_file(&dir, "inf.npy", &values);
    let stats = stats_json(&path);
    assert_eq!(stats["count"], 300_000);
    assert_eq!(stats["nan"], 1);
    assert_eq!(stats["nan_policy"], "omit");
    assert_eq!(stats["min"], 0.0);
    assert_eq!(stats["max"], "inf");
    assert_eq!(stats["mean"], "inf");
    assert_eq!(stats["std"], "nan");
    // Both infinities: the mean is nan (inf + -inf), as np.nanmean says.
    values[250_000] = f64::NEG_INFINITY;
    let both = f8_file(&dir, "both.npy", &values);
    let stats = stats_json(&both);
    assert_eq!(stats["min"], "-inf");
    assert_eq!(stats["mean"], "nan");
    // NaNs only: leaving them out leaves nothing.
    let nans = f8_file(&dir, "nans.npy", &[f64::NAN; 3]);
    let stats = stats_json(&nans);
    assert_eq!(stats["nan"], 3);
    assert_eq!(stats["min"], serde_json::Value::Null);
    assert_eq!(stats["mean"], serde_json::Value::Null);
    // The text says the rule on the nan line.
    let output = npy(["stats".as_ref(), path.as_os_str()]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    assert!(
        text.contains(
            "nan:   1 (left out of min, max, mean and std, as by numpy's nanmin, nanmax, nanmean, nanstd)"
        ),
        "{text}"
    );
    assert!(text.contains("mean:  inf\n"), "{text}");
}

/// numpy's nanmin, nanmax, nanmean and nanstd of arrays with NaN and
/// infinities, against `npy stats --json` (live: `NPY_PYTHON`).
#[test]
#[ignore = "needs numpy (NPY_PYTHON)"]
fn stats_agree_with_numpys_nan_functions() {
    let dir = scratch("first_use_stats_numpy");
    let script = r#"
import json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
out = sys.argv[1]
n = 300_000
base = (np.arange(n) % 1000).astype(np.float64)
cases = {}
a = base.copy(); a[10] = np.inf; a[200_000] = np.nan; cases["inf"] = a
b = a.copy(); b[250_000] = -np.inf; cases["both"] = b
c = base.copy(); c[5] = np.nan; c[299_999] = np.nan; cases["nan"] = c
cases["f4"] = (base / 7).astype(np.float32)
d = base.astype(np.float32); d[7] = -np.inf; cases["f4_neginf"] = d
answers = {}
def js(x):
    x = float(x)
    return x if np.isfinite(x) else str(x)
for name, arr in cases.items():
    np.save(f"{out}/{name}.npy", arr)
    answers[name] = {
        "nan": int(np.isnan(arr).sum()),
        "min": js(np.nanmin(arr)), "max": js(np.nanmax(arr)),
        "mean": js(np.nanmean(arr.astype(np.float64))),
        "std": js(np.nanstd(arr.astype(np.float64))),
    }
json.dump(answers, open(f"{out}/answers.json", "w"))
"#;
    let answers = common::numpy_answers(script, &dir, "answers.json");
    for (name, numpy) in answers.as_object().unwrap() {
        let ours = stats_json(&dir.join(format!("{name}.npy")));
        assert_eq!(ours["nan"], numpy["nan"], "{name}");
        for key in ["min", "max", "mean", "std"] {
            match (&ours[key], &numpy[key]) {
                (serde_json::Value::Number(a), serde_json::Value::Number(b)) => {
                    let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
                    assert!(
                        (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                        "{name} {key}: {a} {b}"
                    );
                }
                (a, b) => assert_eq!(a, b, "{name} {key}"),
            }
        }
    }
}

// ---- archives on standard input ---------------------------------------------

/// Runs `npy args` with `input`'s bytes piped to its standard input.
fn npy_with_stdin(args: &[&std::ffi::OsStr], input: &Path) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_npy"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = std::fs::read(input).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Written from a thread: a command that stops reading early must not
    // leave the test blocked on a full pipe.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&bytes);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
}

#[test]
fn archives_are_read_from_standard_input() {
    let dir = scratch("first_use_stdin_npz");
    let archive = two_member_archive(&dir);
    let expected = stdout(&npy(["ls".as_ref(), archive.as_os_str()]));
    let ls = npy_with_stdin(&["ls".as_ref(), "-".as_ref()], &archive);
    assert_exit(&ls, 0);
    assert_eq!(stdout(&ls), expected);
    assert!(expected.starts_with("name"), "{expected}");
    let info = npy_with_stdin(
        &["info".as_ref(), "--json".as_ref(), "-".as_ref()],
        &archive,
    );
    assert_exit(&info, 0);
    assert!(
        stdout(&info).starts_with("{\"members\":["),
        "{}",
        stdout(&info)
    );
    let show = npy_with_stdin(
        &[
            "show".as_ref(),
            "-".as_ref(),
            "--member".as_ref(),
            "b".as_ref(),
        ],
        &archive,
    );
    assert_exit(&show, 0);
    assert_eq!(stdout(&show), "[0 1 2 3 4]\n");
    let out = dir.join("out");
    let extract = npy_with_stdin(
        &[
            "extract".as_ref(),
            "-".as_ref(),
            "--dir".as_ref(),
            out.as_os_str(),
        ],
        &archive,
    );
    assert_exit(&extract, 0);
    assert_eq!(
        std::fs::read(out.join("a.npy")).unwrap(),
        std::fs::read(dir.join("a.npy")).unwrap()
    );
    for pickle in [&[][..], &["--allow-pickle".as_ref()][..]] {
        let mut args = vec!["validate".as_ref(), "-".as_ref()];
        args.extend_from_slice(pickle);
        let validate = npy_with_stdin(&args, &archive);
        assert_exit(&validate, 0);
    }
    // Object members of an archive on a pipe are not decoded by show: said so.
    let show = npy_with_stdin(
        &[
            "show".as_ref(),
            "-".as_ref(),
            "--allow-pickle".as_ref(),
            "--member".as_ref(),
            "a".as_ref(),
        ],
        &archive,
    );
    assert_exit(&show, 1);
    assert!(
        error_line(&show).contains("not an .npz archive: save the archive to a file"),
        "{}",
        stderr(&show)
    );
    // .npy data still streams as before.
    let npy_file = dir.join("a.npy");
    let show = npy_with_stdin(&["show".as_ref(), "-".as_ref()], &npy_file);
    assert_exit(&show, 0);
    assert_eq!(stdout(&show), "[0 1 2]\n");
}

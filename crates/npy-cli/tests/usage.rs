//! Help texts, usage errors and error formatting of the real binary.

mod common;

use common::{assert_exit, npy, scratch, stderr, stdout};

const SUBCOMMANDS: [&str; 10] = [
    "info", "validate", "show", "stats", "convert", "ls", "extract", "pack", "create", "render",
];

#[test]
fn top_level_help_lists_every_subcommand_with_examples() {
    let output = npy(["--help"]);
    assert_exit(&output, 0);
    let help = stdout(&output);
    for name in SUBCOMMANDS {
        assert!(
            help.contains(&format!("  {name} ")),
            "{name} missing from:\n{help}"
        );
    }
    assert!(help.contains("Examples:"), "{help}");
}

#[test]
fn every_subcommand_help_has_examples() {
    for name in SUBCOMMANDS {
        let output = npy([name, "--help"]);
        assert_exit(&output, 0);
        let help = stdout(&output);
        assert!(help.contains("Examples:"), "{name}:\n{help}");
        assert!(help.contains(&format!("npy {name}")), "{name}:\n{help}");
    }
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        vec!["frobnicate"],
        vec!["info"],
        vec!["validate"],
        vec!["create", "x.npy", "--dtype", "<f8", "--shape", "2,-1"],
        vec!["convert", "a.npy", "b.npy", "--version", "4"],
        vec!["convert", "a.npy", "b.npy", "--byte-order", "middle"],
        vec!["show", "a.npy", "--rows", "3"],
    ] {
        let output = npy(&args);
        assert_exit(&output, 2);
        assert!(stdout(&output).is_empty(), "{args:?}");
        assert!(stderr(&output).contains("error"), "{args:?}");
    }
}

#[test]
fn a_missing_file_is_one_error_line() {
    let dir = scratch("a_missing_file_is_one_error_line");
    let missing = dir.join("nope.npy");
    let output = npy([std::ffi::OsStr::new("info"), missing.as_os_str()]);
    assert_exit(&output, 1);
    let err = stderr(&output);
    assert!(err.starts_with("npy: error: cannot open "), "{err}");
    assert!(err.contains("nope.npy"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

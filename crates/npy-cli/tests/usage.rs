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
    // Each bad command line, and the words that say what is wrong with it.
    for (args, words) in [
        (vec!["frobnicate"], "unrecognized subcommand 'frobnicate'"),
        (
            vec!["info"],
            "the following required arguments were not provided:\n  <PATH>",
        ),
        (
            vec!["validate"],
            "the following required arguments were not provided:\n  <PATHS>...",
        ),
        (
            vec!["create", "x.npy", "--dtype", "<f8", "--shape", "2,-1"],
            "invalid value '2,-1' for '--shape <DIMS>': '-1' is not a dimension",
        ),
        (
            vec!["convert", "a.npy", "b.npy", "--version", "4"],
            "invalid value '4' for '--version <1|2|3>': 4 is not in 1..=3",
        ),
        (
            vec!["convert", "a.npy", "b.npy", "--byte-order", "middle"],
            "invalid value 'middle' for '--byte-order <ORDER>'",
        ),
        (
            vec!["show", "a.npy", "--rows", "3"],
            "invalid value '3' for '--rows <A:B>': '3' is not a range A:B",
        ),
        (
            vec!["info", "a.npy", "--timeout", "0"],
            "the timeout must be a positive number of seconds",
        ),
    ] {
        let output = npy(&args);
        assert_exit(&output, 2);
        assert!(stdout(&output).is_empty(), "{args:?}");
        let message = stderr(&output);
        assert!(message.starts_with("error: "), "{args:?}: {message}");
        assert!(message.contains(words), "{args:?}: {message}");
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

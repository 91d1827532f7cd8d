//! The `npy` command-line tool: look at, check and reshape NumPy `.npy`/`.npz`
//! files without starting Python. See `npy --help`.

mod cli;
mod commands;
mod describe;
mod npy_file;
mod print;
mod progress;
mod remote;
mod render;
mod source;
mod stats;
mod transpose;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help/version to stdout (exit 0) and usage errors to
            // stderr (exit 2).
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { 2 } else { 0 });
        }
    };
    remote::set_options(npy_remote::StoreOptions {
        timeout: std::time::Duration::from_secs_f64(cli.timeout),
    });
    let mut stdout = std::io::stdout().lock();
    let result = commands::run(cli.command, &mut stdout).and_then(|code| {
        stdout.flush()?;
        Ok(code)
    });
    match result {
        Ok(code) => code,
        // `npy show big.npy | head` closes the pipe early: not an error.
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "npy: error: {}", error_text(&err));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, `outer: inner: ...`. Nothing is
/// skipped: the libraries' errors print a cause or return it from
/// `source()`, never both (docs/ARCHITECTURE.md, "Errors").
pub fn error_text(err: &anyhow::Error) -> String {
    if let Some(text) = remote::not_found_text(err) {
        return text;
    }
    chain_text(err.chain())
}

/// A library error and its causes on one line, `outer: inner: ...`: a
/// message alone may leave its cause to `source()` (numpy's invalid descr
/// does: `descr is not a valid dtype descriptor: '<x4': data type '<x4' not
/// understood`).
pub fn cause_text(err: &(dyn std::error::Error + 'static)) -> String {
    chain_text(std::iter::successors(Some(err), |cause| cause.source()))
}

fn chain_text<'a>(chain: impl Iterator<Item = &'a (dyn std::error::Error + 'static)>) -> String {
    chain
        .map(|cause| one_line(&cause.to_string()))
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
}

/// Error messages are one line each (some of numpy's wordings span several).
pub fn one_line(text: &str) -> String {
    text.split('\n')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

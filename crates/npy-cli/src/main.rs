//! The `npy` command-line tool: look at, check and reshape NumPy `.npy`/`.npz`
//! files without starting Python. See `npy --help`.

mod cli;
mod commands;
mod describe;
mod member;
mod message;
mod npy_file;
mod output;
mod print;
mod progress;
mod remote;
mod render;
mod source;
mod stats;
mod stdin;
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
    if let Err(err) = stdin::set_limit(cli.stdin_limit) {
        let _ = writeln!(std::io::stderr(), "npy: error: {err}");
        return ExitCode::from(2);
    }
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
            let _ = writeln!(
                std::io::stderr(),
                "npy: error: {}",
                message::error_text(&err)
            );
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

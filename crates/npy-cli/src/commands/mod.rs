//! One module per subcommand.

pub mod archive;
mod info;
mod validate;

use std::io::Write;
use std::process::ExitCode;

use crate::cli::Command;

pub use validate::Verdict;

/// Runs one subcommand, writing its normal output to `out`.
pub fn run(command: Command, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match command {
        Command::Info(args) => info::run(&args, out)?,
        Command::Validate(args) => return validate::run(&args, out),
        Command::Show(_)
        | Command::Stats(_)
        | Command::Convert(_)
        | Command::Ls(_)
        | Command::Extract(_)
        | Command::Pack(_)
        | Command::Create(_) => anyhow::bail!("not yet implemented"),
    }
    Ok(ExitCode::SUCCESS)
}

//! One module per subcommand.

use std::io::Write;
use std::process::ExitCode;

use crate::cli::Command;

/// Runs one subcommand, writing its normal output to `out`.
pub fn run(command: Command, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let _ = (command, out);
    anyhow::bail!("not yet implemented")
}

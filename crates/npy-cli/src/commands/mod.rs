//! One module per subcommand.

pub mod archive;
mod convert;
mod cp;
mod create;
mod info;
mod objects;
mod show;
mod stats;
mod tidy;
mod validate;
mod verdict;
mod virtualize;

use std::io::Write;
use std::process::ExitCode;

use crate::cli::Command;

/// Runs one subcommand, writing its normal output to `out`.
pub fn run(command: Command, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match command {
        Command::Info(args) => info::run(&args, out)?,
        Command::Validate(args) => return validate::run(&args, out),
        Command::Show(args) => show::run(&args, out)?,
        Command::Stats(args) => stats::run(&args, out)?,
        Command::Convert(args) => convert::run(&args, out)?,
        Command::Create(args) => create::run(&args)?,
        Command::Ls(args) => archive::ls(&args, out)?,
        Command::Extract(args) => archive::extract(&args, out)?,
        Command::Pack(args) => archive::pack(&args)?,
        Command::Index(args) => archive::index(&args, out)?,
        Command::Render(args) => crate::render::run(&args, out)?,
        Command::Cp(args) => cp::cp(&args, out)?,
        Command::Tidy(args) => tidy::run(&args, out)?,
        Command::Virtualize(args) => virtualize::run(&args, out)?,
    }
    Ok(ExitCode::SUCCESS)
}

//! One module per subcommand.

pub mod archive;
mod convert;
mod create;
mod info;
mod objects;
mod show;
mod stats;
mod validate;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;

use crate::cli::Command;
use crate::source::{self, Kind, OpenedArray};

pub use validate::Verdict;

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
        Command::Render(args) => crate::render::run(&args, out)?,
        Command::Cp(args) => crate::remote::cp(&args, out)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Opens `path` (an .npy, or the `member` of an .npz) for reading values;
/// `advice` says how a mapped file will be read.
pub fn open_array(
    path: &Path,
    member: Option<&str>,
    advice: npy_mmap::Advice,
) -> anyhow::Result<OpenedArray> {
    match (source::sniff(path)?, member) {
        (Kind::Npy, None) if source::is_stdin(path) => OpenedArray::stdin(),
        (Kind::Npy, None) if let Some(url) = crate::remote::url_of(path) => {
            crate::remote::open_array(url)
        }
        (Kind::Npy, None) => OpenedArray::map(path, advice),
        (Kind::Npy, Some(_)) => bail!(
            "{} is an .npy file, not an .npz archive: --member does not apply",
            path.display()
        ),
        (Kind::Npz, member) => archive::open_member(path, member),
    }
}

//! One module per subcommand.

pub mod archive;
mod convert;
mod info;
mod show;
mod stats;
mod validate;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use npy_core::{Header, ParseOptions};

use crate::cli::Command;
use crate::source::{self, DataBytes, Kind, NpyFile};

pub use validate::Verdict;

/// Runs one subcommand, writing its normal output to `out`.
pub fn run(command: Command, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match command {
        Command::Info(args) => info::run(&args, out)?,
        Command::Validate(args) => return validate::run(&args, out),
        Command::Show(args) => show::run(&args, out)?,
        Command::Stats(args) => stats::run(&args, out)?,
        Command::Convert(args) => convert::run(&args, out)?,
        Command::Ls(_) | Command::Extract(_) | Command::Pack(_) | Command::Create(_) => {
            bail!("not yet implemented")
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// An array to read: its header and where its data bytes are.
pub struct OpenedArray {
    pub header: Header,
    pub data: Box<dyn DataBytes>,
}

/// Opens `path` (an .npy, or the `member` of an .npz) for reading values,
/// refusing files whose data is shorter than the header promises.
pub fn open_array(path: &Path, member: Option<&str>) -> anyhow::Result<OpenedArray> {
    let options = ParseOptions {
        max_header_size: source::INSPECT_MAX_HEADER,
    };
    match (source::sniff(path)?, member) {
        (Kind::Npy, None) => {
            let file = NpyFile::open(path, &options)?;
            if file.surplus() < 0 {
                let problem = validate::data_length_problem(
                    &file.header,
                    file.layout.data_len,
                    file.surplus(),
                )
                .unwrap_or_default();
                bail!("{}: {problem}", path.display());
            }
            let data = Box::new(file.data()?);
            Ok(OpenedArray {
                header: file.header,
                data,
            })
        }
        (Kind::Npy, Some(_)) => bail!(
            "{} is an .npy file, not an .npz archive: --member does not apply",
            path.display()
        ),
        (Kind::Npz, member) => archive::open_member(path, member, &options),
    }
}

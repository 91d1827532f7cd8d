//! `npy validate`: strict checks, one line per bad file, exit 0/1/2.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use npy_core::ParseOptions;

use crate::cli::ValidateArgs;
use crate::source::{self, Kind, NpyFile};

/// The outcome of checking one file.
pub enum Verdict {
    Valid,
    /// The file is readable but wrong: what is wrong, one line each.
    Invalid(Vec<String>),
}

pub fn run(args: &ValidateArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let options = ParseOptions {
        max_header_size: args.max_header_size,
    };
    let mut any_invalid = false;
    let mut any_unreadable = false;
    for path in &args.paths {
        match check(path, &options) {
            Ok(Verdict::Valid) => {}
            Ok(Verdict::Invalid(problems)) => {
                any_invalid = true;
                for problem in problems {
                    writeln!(out, "{}: {problem}", path.display())?;
                }
            }
            Err(err) => {
                any_unreadable = true;
                writeln!(std::io::stderr(), "npy: error: {err:#}")?;
            }
        }
    }
    Ok(if any_unreadable {
        ExitCode::from(2)
    } else if any_invalid {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Checks one path; `Err` only when it cannot be read at all.
fn check(path: &Path, options: &ParseOptions) -> anyhow::Result<Verdict> {
    match source::sniff(path)? {
        Kind::Npy => Ok(check_npy(path, options)),
        Kind::Npz => crate::commands::archive::validate(path, options),
    }
}

fn check_npy(path: &Path, options: &ParseOptions) -> Verdict {
    let file = match NpyFile::open(path, options) {
        Ok(file) => file,
        // The path opened a moment ago, so a failure here is the header's.
        Err(err) => return Verdict::Invalid(vec![format!("{:#}", err.root_cause())]),
    };
    match data_length_problem(&file.header, file.layout.data_len, file.surplus()) {
        Some(problem) => Verdict::Invalid(vec![problem]),
        None => Verdict::Valid,
    }
}

/// What is wrong with the amount of data after the header: `surplus` is the
/// bytes present minus the bytes the header promises.
pub fn data_length_problem(
    header: &npy_core::Header,
    data_len: usize,
    surplus: i128,
) -> Option<String> {
    if surplus < 0 {
        let itemsize = header.dtype.itemsize() as i128;
        let present = data_len as i128 + surplus;
        let expected = if itemsize == 0 {
            0
        } else {
            data_len as i128 / itemsize
        };
        let read = if itemsize == 0 { 0 } else { present / itemsize };
        // numpy's wording for a short file.
        Some(format!(
            "Failed to read all data for array. Expected {} = {expected} elements, could only read {read} elements. (file seems not fully written?)",
            crate::describe::shape_text(&header.shape)
        ))
    } else if surplus > 0 {
        Some(format!(
            "{surplus} trailing bytes after the {data_len} bytes of data"
        ))
    } else {
        None
    }
}

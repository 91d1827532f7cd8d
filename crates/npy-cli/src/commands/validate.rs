//! `npy validate`: strict checks, one line per bad file, exit 0/1/2.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use npy_core::{DType, ParseOptions, ReadOptions};

use crate::cli::ValidateArgs;
use crate::source::{self, Kind, NpyFile};

/// The outcome of checking one file.
pub enum Verdict {
    Valid,
    /// The file is readable but wrong: what is wrong, one line each.
    Invalid(Vec<String>),
}

pub fn run(args: &ValidateArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let parse = ParseOptions {
        max_header_size: args.max_header_size,
        ..Default::default()
    };
    let options = super::objects::read_options(&args.pickle, parse);
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
                let message = crate::error_text(&err);
                writeln!(std::io::stderr(), "npy: error: {message}")?;
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
fn check(path: &Path, options: &ReadOptions) -> anyhow::Result<Verdict> {
    match source::sniff(path)? {
        Kind::Npy => Ok(check_npy(path, options)),
        Kind::Npz => crate::commands::archive::validate(path, options),
    }
}

fn check_npy(path: &Path, options: &ReadOptions) -> Verdict {
    let file = match NpyFile::open(path, &options.parse) {
        Ok(file) => file,
        // The path opened a moment ago, so a failure here is the header's.
        Err(err) => return Verdict::Invalid(vec![header_problem(&err)]),
    };
    if file.header.dtype == DType::Object {
        return super::objects::check_pickle(path, &file, options);
    }
    match data_length_problem(&file.header, file.layout.data_len, file.surplus()) {
        Some(problem) => Verdict::Invalid(vec![problem]),
        None => Verdict::Valid,
    }
}

/// The library's own message for a header it refused (not our context
/// around it), with the option that lifts numpy's header size limit.
fn header_problem(err: &anyhow::Error) -> String {
    let Some(format_error) = err
        .chain()
        .find_map(|e| e.downcast_ref::<npy_core::Error>())
    else {
        return crate::error_text(err);
    };
    let mut problem = crate::one_line(&format_error.to_string());
    if matches!(format_error, npy_core::Error::HeaderTooLarge { .. }) {
        problem.push_str(" (npy validate: raise it with --max-header-size)");
    }
    problem
}

/// What is wrong with the amount of data after the header: `surplus` is the
/// bytes present minus the bytes the header promises. Bytes after the data,
/// which numpy ignores, are a problem for a strict check.
pub fn data_length_problem(
    header: &npy_core::Header,
    data_len: usize,
    surplus: i128,
) -> Option<String> {
    if surplus < 0 {
        let present = usize::try_from(data_len as i128 + surplus).unwrap_or(0);
        Some(npy_core::Error::truncated_data(header, present).to_string())
    } else if surplus > 0 {
        Some(format!(
            "{surplus} trailing bytes after the {data_len} bytes of data"
        ))
    } else {
        None
    }
}

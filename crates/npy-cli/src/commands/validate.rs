//! `npy validate`: strict checks, one line per bad file, exit 0/1/2.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use npy_core::{DType, ParseOptions, ReadOptions};

use crate::cli::ValidateArgs;
use crate::source::{self, Kind, NpyFile};

/// The outcome of checking one file.
#[derive(Debug, Default)]
pub struct Verdict {
    /// What is wrong, one line each (the file is invalid when any).
    pub problems: Vec<String>,
    /// Bytes after the data: numpy and this library ignore them (an
    /// interrupted append leaves them), so they are a note, or a problem
    /// with `--strict`.
    pub trailing: Vec<String>,
}

impl Verdict {
    pub fn invalid(problem: String) -> Verdict {
        Verdict {
            problems: vec![problem],
            ..Verdict::default()
        }
    }
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
            Ok(mut verdict) => {
                if args.strict {
                    verdict.problems.append(&mut verdict.trailing);
                }
                for note in &verdict.trailing {
                    writeln!(
                        std::io::stderr(),
                        "npy: note: {}: {note} (ignored by numpy and by this library; \
                         --strict counts them as a problem)",
                        path.display()
                    )?;
                }
                any_invalid |= !verdict.problems.is_empty();
                for problem in verdict.problems {
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
    if source::is_stdin(path) && options.parse.allow_pickle {
        return super::objects::check_stdin(options);
    }
    match source::sniff(path)? {
        Kind::Npy => Ok(check_npy(path, options)),
        Kind::Npz => crate::commands::archive::validate(path, options),
    }
}

fn check_npy(path: &Path, options: &ReadOptions) -> Verdict {
    // Under the shared lock, like every reader of the library: a file being
    // appended to or streamed is judged before or after a change, never
    // half-way through one.
    let file = match NpyFile::open(path, &options.parse) {
        Ok(file) => file,
        // The path opened a moment ago, so a failure here is the header's.
        Err(err) => return Verdict::invalid(header_problem(&err)),
    };
    if file.header.dtype == DType::Object {
        return super::objects::check_pickle(path, &file, options);
    }
    data_length_verdict(&file.header, file.layout.data_len, file.surplus())
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

/// What the amount of data after the header says: `surplus` is the bytes
/// present minus the bytes the header promises. Missing bytes are a problem
/// (numpy cannot load the file); bytes after the data are a note.
pub fn data_length_verdict(header: &npy_core::Header, data_len: usize, surplus: i128) -> Verdict {
    if surplus < 0 {
        let present = usize::try_from(data_len as i128 + surplus).unwrap_or(0);
        Verdict::invalid(npy_core::Error::truncated_data(header, present).to_string())
    } else if surplus > 0 {
        Verdict {
            trailing: vec![format!(
                "{surplus} trailing bytes after the {data_len} bytes of data"
            )],
            ..Verdict::default()
        }
    } else {
        Verdict::default()
    }
}

//! `npy validate`: strict checks, one line per bad file, exit 0/1/2.

use std::io::{self, Read, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use npy_core::{DType, Header, ParseOptions, ReadOptions};

use super::verdict::Verdict;
use crate::cli::ValidateArgs;
use crate::source::{self, Kind, NpyFile};

/// The note for an object array checked without `--allow-pickle`: valid as
/// far as numpy's header rules go, its pickle not decoded (numpy's np.load
/// would refuse to decode it too, with allow_pickle=False).
const NOT_DECODED: &str = "an object array (dtype=object): its header is valid; its contents \
     (a Python pickle) were not decoded, --allow-pickle decodes and checks them";

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
                for note in &verdict.notes {
                    writeln!(std::io::stderr(), "npy: note: {}: {note}", path.display())?;
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
                let message = crate::message::error_text(&err);
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
    let kind = source::sniff(path)?;
    if source::is_stdin(path) && options.parse.allow_pickle && kind == Kind::Npy {
        return super::objects::check_stdin(options);
    }
    match kind {
        Kind::Npy => check_npy(path, options),
        Kind::Npz => validate_archive(path, options),
    }
}

/// `npy validate` on an archive: every member. The archive's own structure
/// failing to read is a problem with the file, not an I/O error.
fn validate_archive(path: &Path, options: &ReadOptions) -> anyhow::Result<Verdict> {
    let opened = source::open_archive(path, *options)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut archive = match opened {
        Ok(archive) => archive,
        Err(err) => return Ok(Verdict::invalid(crate::message::cause_text(&err))),
    };
    let mut verdict = Verdict::default();
    for name in archive.member_names().to_vec() {
        let member = member_verdict(&mut archive, &name, options);
        verdict.problems.extend(member.problems);
        verdict.trailing.extend(member.trailing);
        verdict.notes.extend(member.notes);
    }
    Ok(verdict)
}

/// What is wrong with one member, streaming it (CRC-32 checked at its end)
/// so memory stays bounded whatever its size.
fn member_verdict(archive: &mut source::Archive, name: &str, options: &ReadOptions) -> Verdict {
    let mut reader = match archive.reader(name) {
        Ok(reader) => reader,
        Err(err) => return Verdict::invalid(crate::message::cause_text(&err)),
    };
    let mut magic = Vec::with_capacity(6);
    if let Err(err) = (&mut reader).take(6).read_to_end(&mut magic) {
        return Verdict::invalid(format!("member '{name}': {err}"));
    }
    if magic.as_slice() != b"\x93NUMPY" {
        // numpy hands non-.npy members back as bytes; only a `.npy` name
        // promises an array. The rest is read for its CRC-32.
        if name.ends_with(".npy") {
            return Verdict::invalid(format!("member '{name}' is not .npy data"));
        }
        return match io::copy(&mut reader, &mut io::sink()) {
            Ok(_) => Verdict::default(),
            Err(err) => Verdict::invalid(format!("member '{name}': {err}")),
        };
    }
    let mut stream = io::Cursor::new(magic).chain(&mut reader);
    let (header, mut layout) = match Header::read_from(&mut stream, &headers_of_objects(options)) {
        Ok(parsed) => (parsed.header, parsed.layout),
        Err(err) => {
            return Verdict::invalid(format!(
                "member '{name}': {}",
                crate::message::cause_text(&err)
            ));
        }
    };
    if header.dtype.has_object() && !options.parse.allow_pickle {
        // Read for the CRC-32 only.
        return match io::copy(&mut stream, &mut io::sink()) {
            Ok(_) => Verdict {
                notes: vec![format!("member '{name}': {NOT_DECODED}")],
                ..Verdict::default()
            },
            Err(err) => Verdict::invalid(format!("member '{name}': {err}")),
        };
    }
    // An object array's data is its pickle, decoded to where it ends.
    if header.dtype == npy_core::DType::Object {
        match npy_core::io::read_objects(&mut stream, &header, layout, options) {
            Ok(array) => layout = *array.layout(),
            Err(err) => {
                return Verdict::invalid(format!(
                    "member '{name}': {}",
                    crate::message::cause_text(&err)
                ));
            }
        }
    }
    let present = match io::copy(&mut stream, &mut io::sink()) {
        Ok(present) => present,
        Err(err) => return Verdict::invalid(format!("member '{name}': {err}")),
    };
    let surplus = match header.dtype {
        // The pickle was read already: whatever follows it is surplus.
        npy_core::DType::Object => i128::from(present),
        _ => i128::from(present) - layout.data_len as i128,
    };
    let mut verdict = data_length_verdict(&header, layout.data_len, surplus);
    for line in verdict.problems.iter_mut().chain(&mut verdict.trailing) {
        *line = format!("member '{name}': {line}");
    }
    verdict
}

fn check_npy(path: &Path, options: &ReadOptions) -> anyhow::Result<Verdict> {
    // Under the shared lock, like every reader of the library: a file being
    // appended to or streamed is judged before or after a change, never
    // half-way through one.
    let file = match NpyFile::open(path, &headers_of_objects(options)) {
        Ok(file) => file,
        // An object a URL names that is not there cannot be read at all.
        Err(err) if crate::remote::not_found_text(&err).is_some() => return Err(err),
        // The path opened a moment ago, so a failure here is the header's.
        Err(err) => return Ok(Verdict::invalid(header_problem(&err))),
    };
    if file.header.dtype.has_object() && !options.parse.allow_pickle {
        return Ok(Verdict {
            notes: vec![NOT_DECODED.to_string()],
            ..Verdict::default()
        });
    }
    if file.header.dtype == DType::Object {
        return Ok(super::objects::check_pickle(path, &file, options));
    }
    Ok(data_length_verdict(
        &file.header,
        file.layout.data_len,
        file.surplus(),
    ))
}

/// Header parsing that accepts object dtypes: a header describing Python
/// objects is valid whether or not their pickle is decoded.
fn headers_of_objects(options: &ReadOptions) -> ParseOptions {
    ParseOptions {
        allow_pickle: true,
        ..options.parse
    }
}

/// The library's own message for a header it refused (not our context
/// around it), with the option that lifts numpy's header size limit.
fn header_problem(err: &anyhow::Error) -> String {
    let Some(format_error) = err
        .chain()
        .find_map(|e| e.downcast_ref::<npy_core::Error>())
    else {
        return crate::message::error_text(err);
    };
    let mut problem = crate::message::cause_text(format_error);
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

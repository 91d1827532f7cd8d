//! `npy info`: what a file holds, from its header alone.

use std::io::Write;

use serde_json::{Value, json};

use crate::cli::InfoArgs;
use crate::describe;
use crate::source::{self, Kind, NpyFile};

pub fn run(args: &InfoArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    match source::sniff(&args.path)? {
        Kind::Npy => {
            // Headers only: an object array is described, its pickle not read.
            let options = npy_core::ParseOptions {
                max_header_size: source::INSPECT_MAX_HEADER,
                allow_pickle: true,
            };
            let file = NpyFile::open(&args.path, &options)?;
            if args.json {
                let mut object = describe::array_json(&file.header, &file.layout);
                object.insert("file_size".into(), json!(file.file_size));
                if let Some(pickle) = pickle_len(&file) {
                    object.insert("pickle_bytes".into(), json!(pickle));
                } else {
                    object.insert("trailing_bytes".into(), json!(file.surplus().max(0)));
                    object.insert("missing_bytes".into(), json!((-file.surplus()).max(0)));
                }
                writeln!(out, "{}", Value::Object(object))?;
            } else {
                let mut lines = describe::array_lines(&file.header, &file.layout);
                lines.push(("file size", format!("{} bytes", file.file_size)));
                let surplus = file.surplus();
                if let Some(pickle) = pickle_len(&file) {
                    lines.push((
                        "data",
                        format!("a pickle of {pickle} bytes (Python objects; npy show --allow-pickle decodes them)"),
                    ));
                } else if surplus > 0 {
                    lines.push(("trailing", format!("{surplus} bytes after the data")));
                } else if surplus < 0 {
                    lines.push(("missing", format!("{} bytes of data", -surplus)));
                }
                describe::write_lines(out, &lines)?;
            }
        }
        Kind::Npz => crate::commands::archive::info(&args.path, args.json, out)?,
    }
    Ok(())
}

/// The bytes after an object array's header: its pickle (and whatever
/// follows it, which only decoding can tell apart).
fn pickle_len(file: &NpyFile) -> Option<u64> {
    (file.header.dtype == npy_core::DType::Object).then(|| {
        file.file_size
            .saturating_sub(file.layout.data_offset as u64)
    })
}

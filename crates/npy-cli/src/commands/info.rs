//! `npy info`: what a file holds, from its header alone.

use std::io::Write;

use serde_json::{Value, json};

use crate::cli::InfoArgs;
use crate::describe;
use crate::source::{self, Kind, NpyFile};

pub fn run(args: &InfoArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    match source::sniff(&args.path)? {
        Kind::Npy => {
            let options = npy_core::ParseOptions {
                max_header_size: source::INSPECT_MAX_HEADER,
                ..Default::default()
            };
            let file = NpyFile::open(&args.path, &options)?;
            if args.json {
                let mut object = describe::array_json(&file.header, &file.layout);
                object.insert("file_size".into(), json!(file.file_size));
                object.insert("trailing_bytes".into(), json!(file.surplus().max(0)));
                object.insert("missing_bytes".into(), json!((-file.surplus()).max(0)));
                writeln!(out, "{}", Value::Object(object))?;
            } else {
                let mut lines = describe::array_lines(&file.header, &file.layout);
                lines.push(("file size", format!("{} bytes", file.file_size)));
                let surplus = file.surplus();
                if surplus > 0 {
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

//! What `npy render --json` prints: one JSON object saying what was drawn.
//! Its keys are typed fields, not strings spread over the drawing code.

use std::io::Write;

use serde::Serialize;

use super::args::RenderArgs;
use super::reduce::Specials;
use super::subject::Subject;

/// The summary: the output, the array's selected shape, what was drawn and
/// the PNG's size (none for a full-size image copied row by row).
#[derive(Serialize)]
struct Summary<'a> {
    output: String,
    shape: &'a [usize],
    #[serde(flatten)]
    drawn: Drawn<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    png: Option<[usize; 2]>,
}

/// What was drawn, by kind (`"kind": "line"`, ...).
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Drawn<'a> {
    Line {
        columns: usize,
        range: [f64; 2],
        #[serde(flatten)]
        specials: Specials,
    },
    Hist {
        edges: &'a [f64],
        counts: &'a [u64],
        #[serde(flatten)]
        specials: Specials,
    },
    #[serde(rename = "heatmap")]
    Heat {
        /// Drawn pixels: rows, columns.
        drawn: [usize; 2],
        magnify: usize,
        /// PNG pixels per drawn pixel: high, wide.
        pixel: [usize; 2],
        range_note: Option<&'a str>,
        vmin: f64,
        vmax: f64,
        #[serde(flatten)]
        specials: Specials,
    },
    Image {
        drawn: [usize; 2],
        #[serde(skip_serializing_if = "Option::is_none")]
        magnify: Option<usize>,
    },
}

/// With `--json`, prints what was drawn.
pub fn write(
    args: &RenderArgs,
    subject: &Subject,
    drawn: Drawn,
    png: Option<[usize; 2]>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    if args.json {
        let summary = Summary {
            output: args.output.display().to_string(),
            shape: &subject.selection.shape,
            drawn,
            png,
        };
        writeln!(out, "{}", serde_json::to_string(&summary)?)?;
    }
    Ok(())
}

//! `npy show`: values printed the way numpy prints them.

use std::io::Write;

use anyhow::{Context, bail};
use npy_core::{Header, RecordView};

use crate::cli::ShowArgs;
use crate::print::{self, Selection};

/// More shown elements than this is a request for a data dump, not a look.
const MAX_SHOWN: usize = 10_000_000;

pub fn run(args: &ShowArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if let Some(text) = crate::commands::objects::show(args)? {
        writeln!(out, "{text}")?;
        return Ok(());
    }
    let opened =
        crate::commands::open_array(&args.path, args.member.as_deref(), npy_mmap::Advice::Random)?;
    let text = render(&opened.header, opened.data(), args)?;
    writeln!(out, "{text}")?;
    Ok(())
}

/// The printed text of the array described by `header` whose data is `data`.
pub fn render(header: &Header, data: &[u8], args: &ShowArgs) -> anyhow::Result<String> {
    // The view appends a top-level subarray's shape to the array's shape, as numpy does.
    let mut view = RecordView::from_header(data, header)?;
    if args.rows.is_some() || args.limit.is_some() {
        let Some(&rows) = view.shape().first() else {
            bail!("--rows and --limit need an array with at least one dimension; this one is 0-d");
        };
        let mut range = args.rows.map_or(0..rows, |r| r.resolve(rows));
        if let Some(limit) = args.limit {
            range.end = range.end.min(range.start.saturating_add(limit));
        }
        view = view.rows(range)?;
    }

    let selection = Selection::new(view.shape());
    selection.len().filter(|n| *n <= MAX_SHOWN).with_context(|| {
        format!("too many elements to show (more than {MAX_SHOWN}); narrow it with --rows or --limit")
    })?;
    let column = print::decode_shown(&view, &selection)?;
    Ok(print::array_str(&selection, &column))
}

//! `npy show`: values printed the way numpy prints them.

use std::io::Write;

use anyhow::{Context, bail};
use npy_core::swap::convert_byte_order;
use npy_core::{ByteOrder, Header, RecordView, Value};

use crate::cli::ShowArgs;
use crate::print::{self, Column, Selection};

/// More shown elements than this is a request for a data dump, not a look.
const MAX_SHOWN: usize = 10_000_000;

pub fn run(args: &ShowArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if args.image {
        return crate::render::show_image(&args.path, args.member.as_deref(), &args.picture, out);
    }
    args.picture.refuse_without_image()?;
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
    let element = view.dtype();
    let mut column = Column::for_dtype(element);
    let mut bytes = vec![0u8; element.itemsize()];
    // Elements are decoded in native order: the decoder knows long doubles
    // only in the machine's own layout.
    let native = element.with_byte_order(ByteOrder::NATIVE);
    let mut result = Ok(());
    selection.for_each_index(|index| {
        if result.is_err() {
            return;
        }
        result = view
            .get(index)
            .context("an index the selection produced is outside the array")
            .and_then(|record| {
                bytes.copy_from_slice(record.bytes());
                convert_byte_order(element, &mut bytes, ByteOrder::NATIVE);
                column.push(Value::decode(&native, &bytes)?)
            });
    });
    result?;
    Ok(print::array_str(&selection, &column))
}

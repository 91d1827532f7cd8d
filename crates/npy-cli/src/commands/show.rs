//! `npy show`: values printed the way numpy prints them.

use std::io::Write;

use anyhow::{Context, bail};
use npy_core::ElementLocator;

use super::objects::Shown;
use crate::cli::{RowRange, ShowArgs};
use crate::print::{self, Selection};
use crate::source::ArraySource;

/// More shown elements than this is a request for a data dump, not a look.
const MAX_SHOWN: usize = 10_000_000;

pub fn run(args: &ShowArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if args.image {
        return crate::render::show_image(&args.path, args.member.as_deref(), &args.picture, out);
    }
    args.picture.refuse_without_image()?;
    let text = match super::objects::show(args)? {
        Some(Shown::Text(text)) => text,
        Some(Shown::Plain(mut array)) => render(&mut array, args)?,
        None => {
            let mut opened = crate::source::open_array(
                &args.path,
                args.member.as_deref(),
                npy_mmap::Advice::Random,
            )?;
            render(&mut *opened, args)?
        }
    };
    writeln!(out, "{text}")?;
    Ok(())
}

/// The printed text of `opened`. Only the elements shown are read: from a
/// mapping directly, from a sparse file or an npz member in one forward pass.
fn render(opened: &mut dyn ArraySource, args: &ShowArgs) -> anyhow::Result<String> {
    let header = opened.header().clone();
    // The logical shape appends a top-level subarray's shape, as numpy does.
    let locator = ElementLocator::new(&header)?;
    let mut shape = locator.shape().to_vec();
    let mut first_row = 0;
    if args.rows.is_some() || args.limit.is_some() {
        let Some(rows) = shape.first_mut() else {
            bail!("--rows and --limit need an array with at least one dimension; this one is 0-d");
        };
        let range = RowRange::select(args.rows, args.limit, *rows).map_err(anyhow::Error::msg)?;
        first_row = range.start;
        *rows = range.len();
    }

    let selection = Selection::new(&shape);
    let count = selection
        .len()
        .filter(|n| *n <= MAX_SHOWN)
        .with_context(|| {
            format!("too many elements to show (more than {MAX_SHOWN}); narrow it with --rows or --limit")
        })?;
    let element = locator.element();
    let itemsize = element.itemsize();
    let mut offsets = Vec::with_capacity(count);
    let mut file_index = Vec::with_capacity(shape.len());
    let mut outside = false;
    selection.for_each_index(|index| {
        file_index.clear();
        file_index.extend_from_slice(index);
        if let Some(row) = file_index.first_mut() {
            *row += first_row;
        }
        match locator.byte_offset(&file_index) {
            Some(offset) => offsets.push(offset),
            None => outside = true,
        }
    });
    anyhow::ensure!(
        !outside,
        "an index the selection produced is outside the array"
    );
    let mut bytes = opened.gather(&offsets, itemsize)?;

    let column = print::decode_elements(element, &mut bytes, count)?;
    Ok(print::array_str(&selection, &column))
}

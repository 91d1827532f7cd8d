//! `npy show`: values printed the way numpy prints them.

use std::io::Write;

use anyhow::{Context, bail};
use npy_core::swap::convert_byte_order;
use npy_core::{ByteOrder, DType, Header, Order, Value};

use crate::cli::ShowArgs;
use crate::print::{self, Column, Selection};
use crate::reorder::strides;

/// More shown elements than this is a request for a data dump, not a look.
const MAX_SHOWN: usize = 10_000_000;

pub fn run(args: &ShowArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let opened = crate::commands::open_array(&args.path, args.member.as_deref())?;
    let text = render(&opened.header, opened.data(), args)?;
    writeln!(out, "{text}")?;
    Ok(())
}

/// The printed text of the array described by `header` whose data is `data`.
pub fn render(header: &Header, data: &[u8], args: &ShowArgs) -> anyhow::Result<String> {
    // numpy appends a top-level subarray's shape to the array's shape.
    let (element, inner_shape) = match &header.dtype {
        DType::SubArray(base, shape) => (base.as_ref(), shape.clone()),
        other => (other, Vec::new()),
    };
    let outer_strides = strides(&header.shape, header.order);
    let inner_strides = strides(&inner_shape, Order::C);
    let mut shape: Vec<usize> = header.shape.iter().chain(&inner_shape).copied().collect();

    let mut first_row = 0;
    if args.rows.is_some() || args.limit.is_some() {
        let Some(rows) = shape.first_mut() else {
            bail!("--rows and --limit need an array with at least one dimension; this one is 0-d");
        };
        let mut range = args.rows.map_or(0..*rows, |r| r.resolve(*rows));
        if let Some(limit) = args.limit {
            range.end = range.end.min(range.start.saturating_add(limit));
        }
        first_row = range.start;
        *rows = range.len();
    }

    let selection = Selection::new(&shape);
    selection.len().filter(|n| *n <= MAX_SHOWN).with_context(|| {
        format!("too many elements to show (more than {MAX_SHOWN}); narrow it with --rows or --limit")
    })?;
    let outer_itemsize = header.dtype.itemsize() as u64;
    let itemsize = element.itemsize();
    let mut column = Column::for_dtype(element);
    let mut bytes = vec![0u8; itemsize];
    // Elements are decoded in native order: the decoder knows long doubles
    // only in the machine's own layout.
    let native = element.with_byte_order(ByteOrder::NATIVE);
    let mut result = Ok(());
    let outer_ndim = header.shape.len();
    selection.for_each_index(|index| {
        if result.is_err() {
            return;
        }
        let mut outer = 0u64;
        for (axis, (&i, &stride)) in index[..outer_ndim].iter().zip(&outer_strides).enumerate() {
            let i = if axis == 0 { i + first_row } else { i };
            outer += i as u64 * stride as u64;
        }
        let inner: u64 = index[outer_ndim..]
            .iter()
            .zip(&inner_strides)
            .map(|(&i, &s)| (i * s) as u64)
            .sum();
        let offset = outer * outer_itemsize + inner * itemsize as u64;
        let element_bytes = usize::try_from(offset)
            .ok()
            .and_then(|start| data.get(start..start.checked_add(itemsize)?))
            .context("the data is shorter than the header promises");
        result = element_bytes.and_then(|element_bytes| {
            bytes.copy_from_slice(element_bytes);
            convert_byte_order(element, &mut bytes, ByteOrder::NATIVE);
            column.push(Value::decode(&native, &bytes)?)
        });
    });
    result?;
    Ok(print::array_str(&selection, &column))
}

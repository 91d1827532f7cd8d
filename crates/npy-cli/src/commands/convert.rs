//! `npy convert`: rewrite an array in another byte order, memory order or version.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use npy_core::swap::convert_byte_order;
use npy_core::{ByteOrder, DType, Header, Order, RecordView, Scalar, ScalarKind, Version};

use crate::cli::{ByteOrderArg, ConvertArgs, OrderArg};
use crate::progress::Progress;
use crate::source::OpenedArray;

/// Output is produced in chunks of about this many bytes.
const CHUNK_BYTES: usize = 4 << 20;

pub fn run(args: &ConvertArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let _ = out;
    let input = OpenedArray::map(&args.input, npy_mmap::Advice::Sequential)?;
    let target = target_header(&input.header, args);
    let version = args.version.map(|v| match v {
        1 => Version::V1,
        2 => Version::V2,
        _ => Version::V3,
    });
    let header_bytes = target
        .to_bytes(version)
        .context("cannot write the requested header")?;

    let temporary = temporary_path(&args.output);
    let result = write_output(
        &input,
        &target,
        args.byte_order.map(byte_order),
        &header_bytes,
        &temporary,
    )
    .and_then(|()| {
        std::fs::rename(&temporary, &args.output)
            .with_context(|| format!("cannot write {}", args.output.display()))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

/// The header np.save would write for the converted array.
fn target_header(input: &Header, args: &ConvertArgs) -> Header {
    let dtype = match args.byte_order {
        None => input.dtype.clone(),
        Some(order) => input.dtype.with_byte_order(byte_order(order)),
    };
    let requested = match args.order {
        None => input.order,
        Some(OrderArg::C) => Order::C,
        Some(OrderArg::F) => Order::Fortran,
    };
    // np.save writes fortran_order True only for arrays that are F- but not
    // C-contiguous: at least two axes longer than 1, and some elements.
    let long_axes = input.shape.iter().filter(|&&d| d > 1).count();
    let empty = input.shape.contains(&0);
    let order = if requested == Order::Fortran && long_axes >= 2 && !empty {
        Order::Fortran
    } else {
        Order::C
    };
    Header {
        dtype,
        order,
        shape: input.shape.clone(),
    }
}

fn byte_order(arg: ByteOrderArg) -> ByteOrder {
    match arg {
        ByteOrderArg::Little => ByteOrder::Little,
        ByteOrderArg::Big => ByteOrder::Big,
        ByteOrderArg::Native => ByteOrder::NATIVE,
    }
}

fn temporary_path(output: &Path) -> PathBuf {
    let mut name = output.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".npy-convert-{}", std::process::id()));
    output.with_file_name(name)
}

/// A view of `data` (stored in `order`) whose logical order is the other
/// memory order: iterating it yields the elements as the output lays them out.
/// Elements are `element` (opaque bytes of the array's itemsize): reordering
/// moves whole elements, whatever their dtype.
fn gather_view<'a>(
    data: &'a [u8],
    element: &'a DType,
    shape: &[usize],
    order: Order,
) -> anyhow::Result<RecordView<'a>> {
    Ok(match order {
        // F data read in C logical order is written out C.
        Order::Fortran => RecordView::new(data, element, shape, Order::Fortran)?,
        // C data seen as its transpose in F order: C logical order of the
        // transpose is F order of the array.
        Order::C => {
            let reversed: Vec<usize> = shape.iter().rev().copied().collect();
            RecordView::new(data, element, &reversed, Order::Fortran)?
        }
    })
}

fn write_output(
    input: &OpenedArray,
    target: &Header,
    byte_order: Option<ByteOrder>,
    header_bytes: &[u8],
    path: &Path,
) -> anyhow::Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut writer = BufWriter::with_capacity(1 << 20, file);
    writer.write_all(header_bytes)?;

    let source = &input.header;
    let itemsize = source.dtype.itemsize();
    let count = source.element_count()?;
    let data = input.data();
    let mut progress = Progress::bytes(data.len() as u64, "convert", false);
    let per_chunk = CHUNK_BYTES.checked_div(itemsize).unwrap_or(count).max(1);
    let mut chunk = vec![0u8; per_chunk.min(count) * itemsize];
    // Same order: consecutive bytes. C <-> F: each output element is
    // gathered from wherever the input order keeps it.
    let opaque = DType::Scalar(Scalar::new(
        ScalarKind::Void,
        ByteOrder::NotApplicable,
        itemsize,
    ));
    let mut gather = if source.order == target.order {
        None
    } else {
        Some(gather_view(data, &opaque, &source.shape, source.order)?.iter())
    };
    let mut done = 0usize;
    while done < count {
        let n = per_chunk.min(count - done);
        let bytes = &mut chunk[..n * itemsize];
        match &mut gather {
            None => bytes.copy_from_slice(&data[done * itemsize..(done + n) * itemsize]),
            Some(elements) => {
                for (slot, element) in bytes
                    .chunks_exact_mut(itemsize.max(1))
                    .zip(elements.by_ref())
                {
                    slot.copy_from_slice(element.bytes());
                }
            }
        }
        if let Some(order) = byte_order {
            convert_byte_order(&source.dtype, bytes, order);
        }
        writer.write_all(bytes)?;
        progress.advance(bytes.len() as u64);
        done += n;
    }
    writer
        .into_inner()
        .map_err(|err| err.into_error())?
        .sync_all()
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

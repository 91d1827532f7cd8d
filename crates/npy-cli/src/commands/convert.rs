//! `npy convert`: rewrite an array in another byte order, memory order or version.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use npy_core::swap::convert_byte_order;
use npy_core::{ByteOrder, Header, Order, Version};

use crate::cli::{ByteOrderArg, ConvertArgs, OrderArg};
use crate::progress::Progress;
use crate::reorder::Gather;
use crate::source::OpenedArray;

/// Output is produced in chunks of about this many bytes.
const CHUNK_BYTES: usize = 4 << 20;

pub fn run(args: &ConvertArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let _ = out;
    let input = OpenedArray::map(&args.input)?;
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
    let mut gather = (source.order != target.order)
        .then(|| Gather::new(&source.shape, count, source.order, target.order));
    let mut done = 0usize;
    while done < count {
        let n = per_chunk.min(count - done);
        let bytes = &mut chunk[..n * itemsize];
        match &mut gather {
            None => bytes.copy_from_slice(&data[done * itemsize..(done + n) * itemsize]),
            Some(gather) => {
                gather.fill(data, itemsize, bytes);
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

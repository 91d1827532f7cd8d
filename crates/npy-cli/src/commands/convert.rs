//! `npy convert`: rewrite an array in another byte order, memory order or version.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use npy_core::{ByteOrder, DType, Header, Order, Version};

use crate::cli::{ByteOrderArg, ConvertArgs, OrderArg};
use crate::progress::Progress;
use crate::reorder::Gather;
use crate::source::{self, DataBytes, NpyFile};

/// Output is produced in chunks of about this many bytes.
const CHUNK_BYTES: usize = 4 << 20;

pub fn run(args: &ConvertArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let _ = out;
    let options = npy_core::ParseOptions {
        max_header_size: source::INSPECT_MAX_HEADER,
    };
    let input = NpyFile::open(&args.input, &options)?;
    if input.surplus() < 0 {
        let problem = crate::commands::validate::data_length_problem(
            &input.header,
            input.layout.data_len,
            input.surplus(),
        )
        .unwrap_or_default();
        bail!("{}: {problem}", args.input.display());
    }
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
    let result = write_output(&input, &target, &header_bytes, &temporary).and_then(|()| {
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
        Some(ByteOrderArg::Little) => with_byte_order(&input.dtype, ByteOrder::Little),
        Some(ByteOrderArg::Big) => with_byte_order(&input.dtype, ByteOrder::Big),
        Some(ByteOrderArg::Native) => with_byte_order(&input.dtype, ByteOrder::NATIVE),
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

/// `dtype` with every multi-byte value stored in `order`.
fn with_byte_order(dtype: &DType, order: ByteOrder) -> DType {
    // TODO(npy-core dtype): use the library's byte-order rewrite once it has one.
    match dtype {
        DType::Scalar(scalar) => {
            let mut scalar = *scalar;
            if scalar.byte_order != ByteOrder::NotApplicable {
                scalar.byte_order = order;
            }
            DType::Scalar(scalar)
        }
        DType::Record(record) => {
            let mut record = record.clone();
            for field in &mut record.fields {
                field.dtype = with_byte_order(&field.dtype, order);
            }
            DType::Record(record)
        }
        DType::SubArray(base, shape) => {
            DType::SubArray(Box::new(with_byte_order(base, order)), shape.clone())
        }
    }
}

fn temporary_path(output: &Path) -> PathBuf {
    let mut name = output.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".npy-convert-{}", std::process::id()));
    output.with_file_name(name)
}

fn write_output(
    input: &NpyFile,
    target: &Header,
    header_bytes: &[u8],
    path: &Path,
) -> anyhow::Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut writer = BufWriter::with_capacity(1 << 20, file);
    writer.write_all(header_bytes)?;

    let itemsize = input.header.dtype.itemsize();
    let count = input.header.element_count()?;
    let data_len = input.layout.data_len;
    let data = input.data()?;
    let mut progress = Progress::bytes(data_len as u64, "convert", false);
    let per_chunk = CHUNK_BYTES.checked_div(itemsize).unwrap_or(count).max(1);
    let mut chunk = vec![0u8; per_chunk.min(count) * itemsize];
    let same_order = input.header.order == target.order;
    // C <-> F needs random access to the whole input.
    let whole = if same_order {
        None
    } else {
        Some(read_all(&data, data_len)?)
    };
    let mut gather = Gather::new(&input.header.shape, count, input.header.order, target.order);
    let mut done = 0usize;
    while done < count {
        let n = per_chunk.min(count - done);
        let bytes = &mut chunk[..n * itemsize];
        match &whole {
            None => data.read_at((done * itemsize) as u64, bytes)?,
            Some(all) => {
                gather.fill(all, itemsize, bytes);
            }
        }
        convert_byte_order(bytes, &input.header.dtype, &target.dtype);
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

/// TODO(npy-mmap): map the input instead of reading it whole.
fn read_all(data: &dyn DataBytes, len: usize) -> anyhow::Result<Vec<u8>> {
    let mut all = vec![0u8; len];
    data.read_at(0, &mut all)?;
    Ok(all)
}

/// Rewrites whole elements of `from` in place so they read as `to` (the same
/// layout, byte orders possibly differing field by field).
fn convert_byte_order(bytes: &mut [u8], from: &DType, to: &DType) {
    // TODO(npy-core swap): the library's byte-order conversion for any dtype.
    if from == to {
        return;
    }
    let itemsize = from.itemsize();
    if itemsize == 0 {
        return;
    }
    for element in bytes.chunks_exact_mut(itemsize) {
        swap_element(element, from, to);
    }
}

fn swap_element(bytes: &mut [u8], from: &DType, to: &DType) {
    match (from, to) {
        (DType::Scalar(a), DType::Scalar(b)) if a.byte_order != b.byte_order => {
            let unit = match a.kind {
                npy_core::ScalarKind::Complex => a.itemsize / 2,
                npy_core::ScalarKind::Unicode => 4,
                _ => a.itemsize,
            };
            if unit > 1 {
                bytes.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
            }
        }
        (DType::Record(a), DType::Record(b)) => {
            for (fa, fb) in a.fields.iter().zip(&b.fields) {
                let size = fa.dtype.itemsize();
                swap_element(
                    &mut bytes[fa.offset..fa.offset + size],
                    &fa.dtype,
                    &fb.dtype,
                );
            }
        }
        (DType::SubArray(a, _), DType::SubArray(b, _)) => {
            let size = a.itemsize();
            if size > 0 {
                for item in bytes.chunks_exact_mut(size) {
                    swap_element(item, a, b);
                }
            }
        }
        _ => {}
    }
}

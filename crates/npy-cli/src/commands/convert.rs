//! `npy convert`: rewrite an array in another byte order, memory order or version.

use std::io::Write;

use anyhow::Context;
use npy_core::swap::convert_byte_order;
use npy_core::{ByteOrder, DType, Header, Order, RawView, Scalar, ScalarKind, Version};
use npy_mmap::AtomicFile;

use crate::cli::{ByteOrderArg, ConvertArgs, OrderArg};
use crate::progress::Progress;
use crate::transpose::AxisReversal;

/// Output is produced in chunks of about this many bytes.
const CHUNK_BYTES: usize = 4 << 20;

pub fn run(args: &ConvertArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let _ = out;
    crate::output::refuse_to_replace(&args.output, args.force)?;
    if !crate::source::is_stdin(&args.input)
        && let Some(array) =
            super::objects::load(&args.input, args.member.as_deref(), &args.pickle)?
    {
        return convert_objects(array, args);
    }
    let mut input = crate::source::open_array(
        &args.input,
        args.member.as_deref(),
        npy_mmap::Advice::Sequential,
    )?;
    let target = target_header(input.header(), args);
    let version = version(args);
    let header_bytes = target
        .to_bytes(version)
        .context("cannot write the requested header")?;

    // Reordering needs the data whole: a mapping (a file without holes, a
    // stored npz member) is used in place; anything else (a sparse file,
    // whose holes could SIGBUS through a mapping on a full filesystem, a
    // compressed member, a URL, standard input) is read into memory.
    let loaded;
    let data = match input.contiguous() {
        Some(_) => {
            input.verify()?;
            input.contiguous().expect("still in place")
        }
        None => {
            loaded = input.read_all()?;
            &loaded[..]
        }
    };
    let mut progress = Progress::bytes(data.len() as u64, "convert", false);
    let write = |output: &mut dyn Write, progress: &mut Progress| {
        write_output(
            data,
            input.header(),
            &target,
            args.byte_order.map(byte_order),
            &header_bytes,
            output,
            progress,
        )
        .with_context(|| format!("cannot write {}", args.output.display()))
    };
    let cannot_create = || {
        format!(
            "cannot create a temporary file for {}",
            args.output.display()
        )
    };
    // The output is replaced like every save: a temporary file beside it
    // (exclusive, unpredictable name, removed on failure), synced, renamed;
    // without --force, a file that appeared meanwhile is refused then.
    let mut output = crate::output::create(&args.output, args.force).with_context(cannot_create)?;
    write(&mut output, &mut progress)?;
    commit(output, args, &mut progress)
}

/// `--version` as the library's version.
fn version(args: &ConvertArgs) -> Option<Version> {
    args.version.map(|v| match v {
        1 => Version::V1,
        2 => Version::V2,
        _ => Version::V3,
    })
}

/// Renames the written output over OUTPUT, synced unless `--no-sync`.
fn commit(output: AtomicFile, args: &ConvertArgs, progress: &mut Progress) -> anyhow::Result<()> {
    if args.no_sync {
        crate::output::committed(output.commit_unsynced())
            .with_context(|| format!("cannot replace {}", args.output.display()))?;
    } else {
        // Writing mostly filled the page cache; the disk catches up here.
        progress.phase("convert: syncing to disk (fsync; --no-sync skips it)");
        crate::output::committed(output.commit())?;
    }
    Ok(())
}

/// An object array (decoded with `--allow-pickle`) written again as np.save
/// writes it: its header, then its values pickled. Objects have no byte
/// order (`'|O'`), so `--byte-order` changes nothing, as numpy's
/// `newbyteorder` of an object dtype changes nothing.
fn convert_objects(array: npy_core::NpyArray, args: &ConvertArgs) -> anyhow::Result<()> {
    use npy_core::NpySource;
    let array = match args.order {
        Some(OrderArg::C) => array.into_c_order(),
        Some(OrderArg::F) if array.header().order != Order::Fortran => anyhow::bail!(
            "--order F: object arrays are written in C order or in the order they are in \
             ({} is in C order)",
            args.input.display()
        ),
        _ => array,
    };
    let header = array.npy_header();
    let header_bytes = header
        .to_bytes(version(args))
        .context("cannot write the requested header")?;
    let mut progress = Progress::bytes(0, "convert", true);
    let mut output = crate::output::create(&args.output, args.force).with_context(|| {
        format!(
            "cannot create a temporary file for {}",
            args.output.display()
        )
    })?;
    let mut write = || -> anyhow::Result<()> {
        output.write_all(&header_bytes)?;
        for chunk in array.npy_data()? {
            output.write_all(&chunk)?;
        }
        Ok(())
    };
    write().with_context(|| format!("cannot write {}", args.output.display()))?;
    commit(output, args, &mut progress)
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

/// Slices of the tiled C <-> F copy up to this size are buffered whole; a
/// larger slice (a huge array with a short fastest axis) falls back to
/// gathering element by element, whose reads are then nearly sequential.
const MAX_SLICE_BYTES: usize = 64 << 20;

/// Where the output's bytes come from, chunk by chunk.
enum Producer<'a> {
    /// Same memory order: the input bytes as they are.
    Copy { data: &'a [u8], done: usize },
    /// C <-> F in cache-sized tiles, whole output slices per chunk.
    Tiles(AxisReversal<'a>),
    /// C <-> F one element at a time, through npy-core's view.
    Elements(npy_core::raw::RawIter<'a>, usize),
}

impl Producer<'_> {
    /// Fills the start of `buffer` and returns how many bytes it produced.
    fn fill(&mut self, buffer: &mut [u8]) -> usize {
        match self {
            Producer::Copy { data, done } => {
                let n = buffer.len().min(data.len() - *done);
                buffer[..n].copy_from_slice(&data[*done..*done + n]);
                *done += n;
                n
            }
            Producer::Tiles(reversal) => reversal.fill(buffer),
            Producer::Elements(elements, itemsize) => {
                let mut n = 0;
                for slot in buffer.chunks_exact_mut((*itemsize).max(1)) {
                    let Some(element) = elements.next() else {
                        break;
                    };
                    slot.copy_from_slice(element.bytes());
                    n += slot.len();
                }
                n
            }
        }
    }
}

/// The producer for converting `source`'s data to `target` order, and the
/// chunk size it fills; slices over `max_slice` bytes are gathered singly.
fn producer<'a>(
    data: &'a [u8],
    opaque: &'a DType,
    source: &Header,
    target: Order,
    max_slice: usize,
) -> anyhow::Result<(Producer<'a>, usize)> {
    let itemsize = opaque.itemsize();
    let whole_elements = CHUNK_BYTES
        .checked_div(itemsize)
        .map_or(CHUNK_BYTES, |n| n.max(1) * itemsize);
    if source.order == target {
        return Ok((Producer::Copy { data, done: 0 }, whole_elements));
    }
    // Axis lengths fastest in memory first; the output reverses them.
    let dims: Vec<usize> = match source.order {
        Order::C => source.shape.iter().rev().copied().collect(),
        Order::Fortran => source.shape.clone(),
    };
    let reversal = AxisReversal::new(data, itemsize, &dims);
    let slice = reversal.slice_bytes();
    Ok(if slice == 0 {
        (Producer::Copy { data, done: 0 }, whole_elements)
    } else if slice <= max_slice {
        (
            Producer::Tiles(reversal),
            (CHUNK_BYTES / slice).max(1) * slice,
        )
    } else {
        let view = gather_view(data, opaque, &source.shape, source.order)?;
        (Producer::Elements(view.iter(), itemsize), whole_elements)
    })
}

fn write_output(
    data: &[u8],
    source: &Header,
    target: &Header,
    byte_order: Option<ByteOrder>,
    header_bytes: &[u8],
    writer: &mut dyn Write,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    writer.write_all(header_bytes)?;
    let itemsize = source.dtype.itemsize();
    // Reordering moves whole elements, whatever their dtype: opaque bytes.
    let opaque = DType::Scalar(Scalar::new(
        ScalarKind::Void,
        ByteOrder::NotApplicable,
        itemsize,
    ));
    let (mut producer, chunk_bytes) =
        producer(data, &opaque, source, target.order, MAX_SLICE_BYTES)?;
    let mut chunk = vec![0u8; chunk_bytes.min(data.len())];
    loop {
        let n = producer.fill(&mut chunk);
        if n == 0 {
            break;
        }
        let bytes = &mut chunk[..n];
        if let Some(order) = byte_order {
            convert_byte_order(&source.dtype, bytes, order);
        }
        writer.write_all(bytes)?;
        progress.advance(n as u64);
    }
    Ok(())
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
) -> anyhow::Result<RawView<'a>> {
    Ok(match order {
        // F data read in C logical order is written out C.
        Order::Fortran => RawView::new(data, element, shape, Order::Fortran)?,
        // C data seen as its transpose in F order: C logical order of the
        // transpose is F order of the array.
        Order::C => {
            let reversed: Vec<usize> = shape.iter().rev().copied().collect();
            RawView::new(data, element, &reversed, Order::Fortran)?
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(data: &[u8], header: &Header, target: Order, max_slice: usize) -> Vec<u8> {
        let opaque = DType::Scalar(Scalar::new(
            ScalarKind::Void,
            ByteOrder::NotApplicable,
            header.dtype.itemsize(),
        ));
        let (mut producer, chunk) = producer(data, &opaque, header, target, max_slice).unwrap();
        let mut buffer = vec![0u8; chunk.min(data.len())];
        let mut out = Vec::new();
        loop {
            let n = producer.fill(&mut buffer);
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buffer[..n]);
        }
        out
    }

    #[test]
    fn tiles_and_single_elements_reorder_alike() {
        let dtype = DType::parse("'<i2'").unwrap();
        for (shape, order) in [(vec![3, 5, 7], Order::C), (vec![4, 9], Order::Fortran)] {
            let header = Header::new(dtype.clone(), order, shape.clone());
            let data: Vec<u8> = (0..header.data_len().unwrap()).map(|i| i as u8).collect();
            let target = match order {
                Order::C => Order::Fortran,
                Order::Fortran => Order::C,
            };
            let tiled = run(&data, &header, target, usize::MAX);
            let single = run(&data, &header, target, 0);
            assert_eq!(tiled, single, "{shape:?}");
            assert_ne!(tiled, data, "{shape:?}: nothing moved");
            // Reordering back restores the input.
            let back = Header::new(dtype.clone(), target, shape.clone());
            assert_eq!(run(&tiled, &back, order, usize::MAX), data);
            assert_eq!(run(&single, &back, order, 0), data);
        }
    }
}

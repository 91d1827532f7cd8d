//! `npy stats`: count, min, max, mean, std and NaN count, streaming
//! (complex arrays: of the magnitude, or of the part `--part` names).

use std::io::Write;
use std::ops::ControlFlow;

use anyhow::bail;
use npy_core::swap::convert_byte_order;
use npy_core::{ByteOrder, DType, ScalarKind};
use serde_json::{Map, Value, json};
use zerocopy::{FromBytes, IntoBytes};

use crate::cli::{StatsArgs, stats_types};
use crate::print::{FloatWidth, scalar_float};
use crate::progress::Progress;
use crate::render::Part;
use crate::render::decode::Decoder;
use crate::source::ArraySource;
use crate::stats::{Accumulator, NAN_POLICY, NAN_POLICY_TEXT, Number, Report, Sample};

/// Elements per chunk: 1 MiB of f64, small enough to stay in cache for the
/// second (deviation) pass.
const CHUNK_BYTES: usize = 1 << 20;

pub fn run(args: &StatsArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut opened = crate::source::open_array(
        &args.path,
        args.member.as_deref(),
        npy_mmap::Advice::Sequential,
    )?;
    let header = &opened.header().clone();
    let DType::Scalar(scalar) = &header.dtype else {
        bail!(
            concat!("stats supports ", stats_types!(), " arrays, not a {} array"),
            if matches!(header.dtype, DType::Structured(_)) {
                "structured"
            } else {
                "subarray"
            }
        );
    };
    let complex = scalar.kind == ScalarKind::Complex;
    if args.part.is_some() && !complex {
        bail!(
            "--part applies to complex arrays; {} is not complex",
            header.dtype.descr()
        );
    }
    // Complex numbers: the statistics of one real value per element, the
    // magnitude unless --part says otherwise.
    let part = args.part.unwrap_or(Part::Abs);
    let dtype = &header.dtype;
    let swap = !dtype.is_native_byte_order();
    let mut progress = Progress::bytes(header.data_len()? as u64, "stats", args.json);
    let data = &mut *opened;
    let (report, width) = match (scalar.kind, scalar.itemsize) {
        (ScalarKind::Bool | ScalarKind::UInt, 1) => {
            (accumulate::<u8>(dtype, data, swap, &mut progress)?, None)
        }
        (ScalarKind::UInt, 2) => (accumulate::<u16>(dtype, data, swap, &mut progress)?, None),
        (ScalarKind::UInt, 4) => (accumulate::<u32>(dtype, data, swap, &mut progress)?, None),
        (ScalarKind::UInt, 8) => (accumulate::<u64>(dtype, data, swap, &mut progress)?, None),
        (ScalarKind::Int, 1) => (accumulate::<i8>(dtype, data, swap, &mut progress)?, None),
        (ScalarKind::Int, 2) => (accumulate::<i16>(dtype, data, swap, &mut progress)?, None),
        (ScalarKind::Int, 4) => (accumulate::<i32>(dtype, data, swap, &mut progress)?, None),
        (ScalarKind::Int, 8) => (accumulate::<i64>(dtype, data, swap, &mut progress)?, None),
        (ScalarKind::Float, 2) => (
            decode_and_accumulate(dtype, part, data, swap, &mut progress)?,
            Some(FloatWidth::Half),
        ),
        (ScalarKind::Float, 4) => (
            accumulate::<f32>(dtype, data, swap, &mut progress)?,
            Some(FloatWidth::Single),
        ),
        (ScalarKind::Float, 8) => (
            accumulate::<f64>(dtype, data, swap, &mut progress)?,
            Some(FloatWidth::Double),
        ),
        (ScalarKind::Complex, 8) => (
            decode_and_accumulate(dtype, part, data, swap, &mut progress)?,
            Some(FloatWidth::Single),
        ),
        (ScalarKind::Complex, 16) => (
            decode_and_accumulate(dtype, part, data, swap, &mut progress)?,
            Some(FloatWidth::Double),
        ),
        _ => bail!(
            concat!("stats supports ", stats_types!(), " arrays, not {}"),
            header.dtype.header_repr()
        ),
    };
    drop(progress);
    let part = complex.then(|| part_name(part));
    if args.json {
        let mut object = Map::new();
        if let Some(part) = part {
            object.insert("part".into(), json!(part));
        }
        object.extend(report_json(&report));
        writeln!(out, "{}", Value::Object(object))?;
    } else {
        let mut lines = report_lines(&report, width.unwrap_or(FloatWidth::Double));
        if let Some(part) = part {
            lines.insert(0, ("part", part.to_string()));
        }
        crate::describe::write_lines(out, &lines)?;
    }
    Ok(())
}

/// Streams the elements of `T` in `data` through the accumulator a chunk at
/// a time: straight from the mapping when the data is native and aligned,
/// else through a small buffer converted to native order.
fn accumulate<T: Sample>(
    dtype: &DType,
    data: &mut dyn ArraySource,
    swap: bool,
    progress: &mut Progress,
) -> anyhow::Result<Report> {
    let size = std::mem::size_of::<T>();
    let chunk_bytes = (CHUNK_BYTES / size).max(1) * size;
    let mut buffer: Vec<T> = Vec::new();
    let mut accumulator = Accumulator::<T>::new();
    data.for_each_chunk(chunk_bytes, &mut |chunk| {
        match <[T]>::ref_from_bytes(chunk) {
            Ok(values) if !swap => accumulator.add(values),
            _ => {
                buffer.clear();
                buffer.resize(chunk.len() / size, T::new_zeroed());
                let bytes = buffer.as_mut_bytes();
                bytes.copy_from_slice(chunk);
                if swap {
                    convert_byte_order(dtype, bytes, ByteOrder::NATIVE);
                }
                accumulator.add(&buffer);
            }
        }
        progress.advance(chunk.len() as u64);
        Ok(ControlFlow::Continue(()))
    })?;
    Ok(accumulator.finish())
}

/// Streams elements that have no native Rust type here (float16) or are
/// two numbers (complex) through npy-core's decoding to `f64` (one value
/// per element: the complex `part`), a chunk at a time. float16 and the
/// parts of complex64 are exact in `f64`, so only the sums round.
fn decode_and_accumulate(
    dtype: &DType,
    part: Part,
    data: &mut dyn ArraySource,
    swap: bool,
    progress: &mut Progress,
) -> anyhow::Result<Report> {
    let decoder = Decoder::new(dtype, part)?;
    let chunk_bytes = (CHUNK_BYTES / decoder.itemsize()).max(1) * decoder.itemsize();
    let mut native = Vec::new();
    let mut values = Vec::new();
    let mut accumulator = Accumulator::<f64>::new();
    data.for_each_chunk(chunk_bytes, &mut |chunk| {
        let bytes = if swap {
            native.clear();
            native.extend_from_slice(chunk);
            convert_byte_order(dtype, &mut native, ByteOrder::NATIVE);
            &native[..]
        } else {
            chunk
        };
        values.clear();
        decoder.decode(bytes, &mut values);
        accumulator.add(&values);
        progress.advance(chunk.len() as u64);
        Ok(ControlFlow::Continue(()))
    })?;
    Ok(accumulator.finish())
}

/// The `--part` value as the user writes it.
fn part_name(part: Part) -> &'static str {
    match part {
        Part::Real => "real",
        Part::Imag => "imag",
        Part::Abs => "abs",
        Part::Angle => "angle",
    }
}

fn number_text(number: Number, width: FloatWidth) -> String {
    match number {
        Number::Int(v) => v.to_string(),
        Number::UInt(v) => v.to_string(),
        Number::Float(v) => scalar_float(width, v),
    }
}

fn report_lines(report: &Report, width: FloatWidth) -> Vec<(&'static str, String)> {
    let or_none = |text: Option<String>| text.unwrap_or_else(|| "-".to_string());
    vec![
        ("count", report.count.to_string()),
        ("nan", format!("{} ({NAN_POLICY_TEXT})", report.nan)),
        ("min", or_none(report.min.map(|n| number_text(n, width)))),
        ("max", or_none(report.max.map(|n| number_text(n, width)))),
        (
            "mean",
            or_none(report.mean.map(|v| scalar_float(FloatWidth::Double, v))),
        ),
        (
            "std",
            or_none(report.std.map(|v| scalar_float(FloatWidth::Double, v))),
        ),
    ]
}

fn number_json(number: Option<Number>) -> Value {
    match number {
        Some(Number::Int(v)) => json!(v),
        Some(Number::UInt(v)) => json!(v),
        Some(Number::Float(v)) => float_json(v),
        None => Value::Null,
    }
}

/// JSON has no inf or NaN: those are written as the strings numpy prints.
fn float_json(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        json!(scalar_float(FloatWidth::Double, x))
    }
}

fn report_json(report: &Report) -> Map<String, Value> {
    let mut object = Map::new();
    object.insert("count".into(), json!(report.count));
    object.insert("nan".into(), json!(report.nan));
    object.insert("nan_policy".into(), json!(NAN_POLICY));
    object.insert("min".into(), number_json(report.min));
    object.insert("max".into(), number_json(report.max));
    object.insert("mean".into(), report.mean.map_or(Value::Null, float_json));
    object.insert("std".into(), report.std.map_or(Value::Null, float_json));
    object
}

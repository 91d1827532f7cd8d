//! Filling a [`Column`] from element bytes of any dtype.

use anyhow::bail;
use npy_core::swap::convert_byte_order;
use npy_core::{ByteOrder, DType, RawView, ScalarKind, Value};

use super::{Column, FieldColumn, FloatWidth, Selection};

/// The decoded values of the elements of `view` that `selection` shows, in
/// C order (only those are decoded).
pub fn decode_shown(view: &RawView<'_>, selection: &Selection) -> anyhow::Result<Column> {
    let element = view.dtype();
    let mut bytes = Vec::new();
    let mut count = 0;
    let mut outside = false;
    selection.for_each_index(|index| match view.get(index) {
        Some(record) => {
            bytes.extend_from_slice(record.bytes());
            count += 1;
        }
        None => outside = true,
    });
    anyhow::ensure!(
        !outside,
        "an index the selection produced is outside the array"
    );
    decode_elements(element, &mut bytes, count)
}

/// `count` elements of `element` from their stored bytes (converted to
/// native order in place: the decoder knows long doubles only in the
/// machine's own layout).
pub fn decode_elements(element: &DType, bytes: &mut [u8], count: usize) -> anyhow::Result<Column> {
    let mut column = Column::for_dtype(element);
    let native = element.with_byte_order(ByteOrder::NATIVE);
    let itemsize = element.itemsize();
    for value in bytes.chunks_exact_mut(itemsize.max(1)).take(count) {
        convert_byte_order(element, value, ByteOrder::NATIVE);
        column.push(Value::decode(&native, value)?)?;
    }
    if itemsize == 0 {
        // Zero-size elements (V0) have no bytes to step over.
        for _ in 0..count {
            column.push(Value::decode(&native, &[])?)?;
        }
    }
    Ok(column)
}

fn float_width(itemsize: usize) -> FloatWidth {
    match itemsize {
        2 => FloatWidth::Half,
        4 => FloatWidth::Single,
        8 => FloatWidth::Double,
        _ => FloatWidth::Long,
    }
}

/// A subarray's base type and its full shape (`(('<f8', (5,)), (2,))` is f8 × [2, 5]).
fn flatten(dtype: &DType) -> (&DType, Vec<usize>) {
    match dtype {
        DType::SubArray(base, shape) => {
            let (base, inner) = flatten(base);
            (base, shape.iter().copied().chain(inner).collect())
        }
        other => (other, Vec::new()),
    }
}

impl Column {
    /// An empty column for elements of `dtype`.
    pub fn for_dtype(dtype: &DType) -> Column {
        match dtype {
            DType::Scalar(scalar) => match scalar.kind {
                ScalarKind::Bool => Column::Bool(Vec::new()),
                ScalarKind::Int | ScalarKind::UInt => Column::Int(Vec::new()),
                ScalarKind::Float => Column::Float(float_width(scalar.itemsize), Vec::new()),
                ScalarKind::Complex => {
                    Column::Complex(float_width(scalar.itemsize / 2), Vec::new())
                }
                ScalarKind::Bytes => Column::Bytes(Vec::new()),
                ScalarKind::Unicode => Column::Str(Vec::new()),
                ScalarKind::Void => Column::Void(Vec::new()),
                ScalarKind::DateTime(unit) => Column::DateTime(unit, Vec::new()),
                ScalarKind::TimeDelta(unit) => Column::TimeDelta(unit, Vec::new()),
                // A kind added to npy-core later: shown as its bytes.
                _ => Column::Void(Vec::new()),
            },
            DType::Structured(record) => Column::Record {
                len: 0,
                fields: record
                    .fields
                    .iter()
                    .map(|field| {
                        let (base, shape) = flatten(&field.dtype);
                        FieldColumn {
                            shape,
                            column: Column::for_dtype(base),
                        }
                    })
                    .collect(),
            },
            // A top-level subarray is shown as its elements (numpy appends
            // its shape to the array's shape); the caller flattens it.
            DType::SubArray(base, _) => Column::for_dtype(base),
            // Object arrays are printed from their values (print::object);
            // no element bytes ever reach a column. A dtype added to
            // npy-core later is shown as its bytes.
            _ => Column::Void(Vec::new()),
        }
    }

    /// Appends one decoded element (a top-level subarray's items, or a
    /// record's fields, go to their places).
    pub fn push(&mut self, value: Value) -> anyhow::Result<()> {
        match (self, value) {
            (Column::Bool(v), Value::Bool(b)) => v.push(b),
            (Column::Int(v), Value::Int(i)) => v.push(i.into()),
            (Column::Int(v), Value::UInt(u)) => v.push(u.into()),
            (Column::Float(_, v), Value::Float(x)) => v.push(x),
            // A long double of unknown format (not x87) has no f64 value to show.
            (Column::Float(_, v), Value::LongDouble(_, x)) => v.push(x.unwrap_or(f64::NAN)),
            (Column::Complex(_, v), Value::Complex(re, im)) => v.push((re, im)),
            (Column::Bytes(v), Value::Bytes(b)) => v.push(b),
            (Column::Str(v), Value::Str(s)) => v.push(s),
            (Column::Void(v), Value::Void(b)) => v.push(b),
            (Column::DateTime(_, v), Value::DateTime(t, _)) => v.push(t),
            (Column::TimeDelta(_, v), Value::TimeDelta(t, _)) => v.push(t),
            (Column::Record { len, fields }, Value::Record(values)) => {
                for (field, (_, value)) in fields.iter_mut().zip(values) {
                    field.column.push(value)?;
                }
                *len += 1;
            }
            (column, Value::SubArray(_, items)) => {
                for item in items {
                    column.push(item)?;
                }
            }
            (_, value) => bail!("cannot show {value:?} in this column"),
        }
        Ok(())
    }
}

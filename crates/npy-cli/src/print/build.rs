//! Filling a [`Column`] from element bytes of any dtype.

use anyhow::bail;
use npy_core::{DType, Scalar, ScalarKind};

use super::{Column, FieldColumn, FloatWidth};

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
            },
            DType::Record(record) => Column::Record {
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
        }
    }

    /// Appends the element held in `bytes` (exactly one `dtype` item).
    pub fn push(&mut self, dtype: &DType, bytes: &[u8]) -> anyhow::Result<()> {
        match (self, dtype) {
            (Column::Record { len, fields }, DType::Record(record)) => {
                for (column, field) in fields.iter_mut().zip(&record.fields) {
                    let (base, shape) = flatten(&field.dtype);
                    let count: usize = shape.iter().product();
                    let size = base.itemsize();
                    for i in 0..count {
                        let start = field.offset + i * size;
                        column.column.push(base, &bytes[start..start + size])?;
                    }
                }
                *len += 1;
                Ok(())
            }
            (column, DType::Scalar(scalar)) => column.push_scalar(scalar, bytes),
            (column, DType::SubArray(base, _)) => {
                let (base, shape) = flatten(base);
                let size = base.itemsize();
                for i in 0..shape.iter().product::<usize>() {
                    column.push(base, &bytes[i * size..(i + 1) * size])?;
                }
                Ok(())
            }
            (_, DType::Record(_)) => unreachable!("record columns are built for record dtypes"),
        }
    }

    fn push_scalar(&mut self, scalar: &Scalar, bytes: &[u8]) -> anyhow::Result<()> {
        // TODO(npy-core value::Value): decode through the library.
        let _ = (scalar, bytes);
        bail!("decoding values is not available yet")
    }
}

//! numpy dtypes as Zarr data types: v2's `dtype` (numpy's type strings and
//! the list form of structured dtypes) and v3's core `data_type` names with
//! the `bytes` codec's endian.

use npy_core::{ByteOrder, DType, Scalar, ScalarKind, Structured, StructuredEntry};
use serde_json::{Value, json};

use crate::error::VirtualError;

fn refuse(dtype: &DType, zarr: &'static str, reason: &'static str) -> VirtualError {
    VirtualError::DType {
        dtype: dtype.descr(),
        zarr,
        reason,
    }
}

/// Zarr v2's `dtype`: a type string (`"<f8"`, `"|S5"`, `"<M8[ns]"`) or,
/// for a structured dtype, the list of `[name, type]` / `[name, type, shape]`.
pub(crate) fn v2_dtype(dtype: &DType) -> Result<Value, VirtualError> {
    match dtype {
        DType::Object => Err(VirtualError::Object),
        DType::Scalar(scalar) => v2_scalar(dtype, scalar).map(Value::String),
        DType::Structured(record) => v2_structured(dtype, record),
        DType::SubArray(..) => Err(refuse(
            dtype,
            "v2",
            "a subarray dtype outside a record has no Zarr form (numpy folds it into the shape)",
        )),
        _ => Err(refuse(dtype, "v2", "this dtype kind is unknown to Zarr")),
    }
}

fn v2_scalar(dtype: &DType, scalar: &Scalar) -> Result<String, VirtualError> {
    match scalar.kind {
        ScalarKind::Float if scalar.itemsize > 8 => Err(refuse(
            dtype,
            "v2",
            "a long double's bytes depend on the platform that wrote it",
        )),
        ScalarKind::Complex if scalar.itemsize > 16 => Err(refuse(
            dtype,
            "v2",
            "a complex long double's bytes depend on the platform that wrote it",
        )),
        ScalarKind::DateTime(None) | ScalarKind::TimeDelta(None) => Err(refuse(
            dtype,
            "v2",
            "a datetime64/timedelta64 without a unit has no Zarr form",
        )),
        _ => Ok(scalar.type_str()),
    }
}

fn v2_structured(dtype: &DType, record: &Structured) -> Result<Value, VirtualError> {
    let mut fields = Vec::with_capacity(record.fields.len());
    for entry in record.entries() {
        let field = match entry {
            StructuredEntry::Field(field) => field,
            StructuredEntry::Padding(_) => {
                return Err(refuse(
                    dtype,
                    "v2",
                    "the record has padding bytes, which Zarr v2's list of fields cannot describe \
                     (numpy would read a ('', '|V<n>') entry back as a field named 'f<i>')",
                ));
            }
        };
        if field.title.is_some() {
            return Err(refuse(
                dtype,
                "v2",
                "a field has a title, which Zarr v2's list of fields cannot carry",
            ));
        }
        if field.name.is_empty() {
            return Err(refuse(
                dtype,
                "v2",
                "a field has an empty name, which numpy reads back as 'f<i>'",
            ));
        }
        let entry = match &field.dtype {
            DType::SubArray(base, shape) => json!([field.name, v2_dtype(base)?, shape]),
            other => json!([field.name, v2_dtype(other)?]),
        };
        fields.push(entry);
    }
    Ok(Value::Array(fields))
}

/// Zarr v3's `data_type` and the `bytes` codec's `endian` (`None` for
/// one-byte types).
pub(crate) fn v3_data_type(dtype: &DType) -> Result<(Value, Option<&'static str>), VirtualError> {
    let scalar = match dtype {
        DType::Object => return Err(VirtualError::Object),
        DType::Scalar(scalar) => scalar,
        DType::Structured(_) => {
            return Err(refuse(
                dtype,
                "v3",
                "Zarr v3 has no structured data type in its core specification (zarr-python's \
                 `structured` extension is its own); use the kerchunk (Zarr v2) format",
            ));
        }
        _ => return Err(refuse(dtype, "v3", "Zarr v3 has no subarray data type")),
    };
    let name = match (scalar.kind, scalar.itemsize) {
        (ScalarKind::Bool, 1) => "bool",
        (ScalarKind::Int, 1) => "int8",
        (ScalarKind::Int, 2) => "int16",
        (ScalarKind::Int, 4) => "int32",
        (ScalarKind::Int, 8) => "int64",
        (ScalarKind::UInt, 1) => "uint8",
        (ScalarKind::UInt, 2) => "uint16",
        (ScalarKind::UInt, 4) => "uint32",
        (ScalarKind::UInt, 8) => "uint64",
        (ScalarKind::Float, 2) => "float16",
        (ScalarKind::Float, 4) => "float32",
        (ScalarKind::Float, 8) => "float64",
        (ScalarKind::Complex, 8) => "complex64",
        (ScalarKind::Complex, 16) => "complex128",
        (ScalarKind::Float | ScalarKind::Complex, _) => {
            return Err(refuse(
                dtype,
                "v3",
                "a long double's bytes depend on the platform that wrote it",
            ));
        }
        _ => {
            return Err(refuse(
                dtype,
                "v3",
                "Zarr v3's core data types are bool, integers, floats and complex; strings, \
                 bytes, void and datetimes need extension data types that readers do not \
                 share yet; use the kerchunk (Zarr v2) format",
            ));
        }
    };
    let endian = match scalar.byte_order {
        _ if !scalar.has_byte_order() => None,
        ByteOrder::Big => Some("big"),
        _ => Some("little"),
    };
    Ok((Value::String(name.to_owned()), endian))
}

/// Zarr v3's `fill_value` for a core data type: zero (never used: every
/// chunk of a virtual array exists).
pub(crate) fn v3_fill_value(data_type: &Value) -> Value {
    match data_type.as_str() {
        Some("bool") => json!(false),
        Some("complex64" | "complex128") => json!([0.0, 0.0]),
        Some("float16" | "float32" | "float64") => json!(0.0),
        _ => json!(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2(descr: &str) -> Result<Value, VirtualError> {
        v2_dtype(&DType::parse(descr).unwrap())
    }

    #[test]
    fn v2_type_strings_and_records() {
        assert_eq!(v2(">f8").unwrap(), json!(">f8"));
        assert_eq!(v2("|b1").unwrap(), json!("|b1"));
        assert_eq!(v2("<U3").unwrap(), json!("<U3"));
        assert_eq!(v2("<M8[10s]").unwrap(), json!("<M8[10s]"));
        assert_eq!(
            v2("[('a', '<i4'), ('b', '>f8', (2, 3)), ('c', [('d', '|u1')])]").unwrap(),
            json!([["a", "<i4"], ["b", ">f8", [2, 3]], ["c", [["d", "|u1"]]]])
        );
    }

    #[test]
    fn v2_refusals_name_the_reason() {
        let padded = v2("[('a', '|u1'), ('', '|V3'), ('b', '<i4')]").unwrap_err();
        assert!(padded.to_string().contains("padding"), "{padded}");
        assert!(v2("<f16").unwrap_err().to_string().contains("long double"));
        assert!(
            v2("<M8")
                .unwrap_err()
                .to_string()
                .contains("without a unit")
        );
        assert_eq!(v2_dtype(&DType::Object).unwrap_err(), VirtualError::Object);
    }

    #[test]
    fn v3_core_types_and_endian() {
        let v3 = |d: &str| v3_data_type(&DType::parse(d).unwrap());
        assert_eq!(v3(">i4").unwrap(), (json!("int32"), Some("big")));
        assert_eq!(v3("|u1").unwrap(), (json!("uint8"), None));
        assert_eq!(v3("<c8").unwrap(), (json!("complex64"), Some("little")));
        assert!(v3("|S4").unwrap_err().to_string().contains("kerchunk"));
        assert!(
            v3("[('a', '<i4')]")
                .unwrap_err()
                .to_string()
                .contains("structured")
        );
    }
}

//! numpy's `str()` of an object array, and the `repr()` of the numpy arrays
//! and scalars it holds (numpy 2.4's `array_repr`, `dtype_short_repr`,
//! `_object_format`), on top of the same layout code as numeric arrays.

use std::fmt::Write as _;

use npy_core::pickle::PyValue;
use npy_core::{DType, NpyArray, Order, RawView, Scalar, ScalarKind, Structured, Value};

use super::{
    Column, FloatWidth, Formatter, LINE_WIDTH, Selection, THRESHOLD, complex_scalar, decode_shown,
    float, format_array, scalar_str,
};

/// How an array is printed: `str(a)` or `repr(a)`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Str,
    Repr,
}

/// numpy's `str()` of `array`: an object array (its values printed with
/// `repr`, lists as `list([...])`, nested arrays as numpy's `array(...)`),
/// or any other array.
pub fn object_array_str(array: &NpyArray) -> anyhow::Result<String> {
    array_text(array, Mode::Str)
}

/// The elements of `array` that `selection` shows, as a column, and the
/// selection itself.
fn shown(array: &NpyArray) -> anyhow::Result<(Selection, Column)> {
    let header = array.header();
    match array.objects() {
        Some(values) => {
            let selection = Selection::new(&header.shape);
            let strides = strides(&header.shape, header.order);
            let mut texts = Vec::new();
            selection.for_each_index(|index| {
                let offset: usize = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
                texts.push(object_format(&values[offset]));
            });
            Ok((selection, Column::Object(texts)))
        }
        None => {
            let view = RawView::from_header(array.bytes(), header)?;
            let selection = Selection::new(view.shape());
            let column = decode_shown(&view, &selection)?;
            Ok((selection, column))
        }
    }
}

fn strides(shape: &[usize], order: Order) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    let axes: Vec<usize> = match order {
        Order::C => (0..shape.len()).rev().collect(),
        Order::Fortran => (0..shape.len()).collect(),
    };
    let mut step = 1;
    for axis in axes {
        strides[axis] = step;
        step *= shape[axis].max(1);
    }
    strides
}

fn array_text(array: &NpyArray, mode: Mode) -> anyhow::Result<String> {
    let header = array.header();
    let zero_d = header.shape.is_empty();
    if mode == Mode::Str && zero_d {
        // numpy prints a 0-d array as the str() of its element.
        return Ok(match array.objects() {
            Some(values) => value_str(&values[0]),
            None => scalar_str(&shown(array)?.1),
        });
    }
    let (selection, column) = shown(array)?;
    if mode == Mode::Str {
        return Ok(format_array(&selection, &column, " ", "", LINE_WIDTH));
    }
    let size = header.element_count()?;
    let prefix = "array(";
    let list = if zero_d {
        match &column {
            Column::Bool(v) => if v[0] { "True" } else { "False" }.to_string(),
            column => Formatter::new(column, false).format(column, 0),
        }
    } else if size == 0 {
        "[]".to_string()
    } else {
        // The closing `)` counts against the line width.
        format_array(&selection, &column, ", ", prefix, LINE_WIDTH - 1)
    };
    let mut extras = Vec::new();
    if (size == 0 && header.shape != [0]) || size > THRESHOLD {
        extras.push(format!("shape={}", npy_core::shape_repr(&header.shape)));
    }
    if !dtype_is_implied(&header.dtype) || size == 0 {
        extras.push(format!("dtype={}", dtype_short_repr(&header.dtype)));
    }
    if extras.is_empty() {
        return Ok(format!("{prefix}{list})"));
    }
    let text = format!("{prefix}{list},");
    let extra = format!("{})", extras.join(", "));
    let last_line = text.rsplit('\n').next().unwrap_or("");
    let spacer = if last_line.chars().count() + extra.chars().count() + 1 > LINE_WIDTH {
        format!("\n{}", " ".repeat(prefix.len()))
    } else {
        " ".to_string()
    };
    Ok(format!("{text}{spacer}{extra}"))
}

/// numpy's `_object_format`: `repr`, with lists marked `list(...)`.
fn object_format(value: &PyValue) -> String {
    let text = value_repr(value);
    match value {
        PyValue::List(_) => format!("list({text})"),
        _ => text,
    }
}

/// Python's `repr()`, with numpy's for nested arrays and scalars.
fn value_repr(value: &PyValue) -> String {
    let mut out = String::new();
    value.write_repr_with(&mut out, &|value| match value {
        PyValue::Array(array) => array_text(array, Mode::Repr).ok(),
        PyValue::Scalar(scalar) => scalar_repr(&scalar.dtype, &scalar.bytes),
        _ => None,
    });
    out
}

/// Python's `str()`: text as it is, arrays as numpy's `str()`.
fn value_str(value: &PyValue) -> String {
    match value {
        PyValue::Str(text) => text.clone(),
        PyValue::Array(array) => array_text(array, Mode::Str).unwrap_or_else(|_| value_repr(value)),
        PyValue::Scalar(scalar) => scalar_column(&scalar.dtype, &scalar.bytes)
            .map(|column| scalar_str(&column))
            .unwrap_or_else(|| value_repr(value)),
        other => value_repr(other),
    }
}

/// One numpy scalar as a one-element column.
fn scalar_column(dtype: &DType, bytes: &[u8]) -> Option<Column> {
    let value = Value::decode(dtype, bytes).ok()?;
    let mut column = Column::for_dtype(dtype);
    column.push(value).ok()?;
    Some(column)
}

fn float_width(itemsize: usize) -> Option<FloatWidth> {
    match itemsize {
        2 => Some(FloatWidth::Half),
        4 => Some(FloatWidth::Single),
        8 => Some(FloatWidth::Double),
        _ => None,
    }
}

/// numpy 2's `repr()` of a scalar: `np.float64(1.5)`, `np.int32(-3)`,
/// `np.True_`, `np.str_('s')`; `None` for the rarer kinds.
fn scalar_repr(dtype: &DType, bytes: &[u8]) -> Option<String> {
    let DType::Scalar(scalar) = dtype else {
        return None;
    };
    let name = type_name(scalar);
    Some(match (scalar.kind, Value::decode(dtype, bytes).ok()?) {
        (_, Value::Bool(b)) => if b { "np.True_" } else { "np.False_" }.to_string(),
        (_, Value::Int(n)) => format!("np.{name}({n})"),
        (_, Value::UInt(n)) => format!("np.{name}({n})"),
        (_, Value::Float(x)) => {
            format!(
                "np.{name}({})",
                float::scalar(float_width(scalar.itemsize)?, x, false)
            )
        }
        (_, Value::Complex(re, im)) => {
            let text = complex_scalar(float_width(scalar.itemsize / 2)?, (re, im));
            let inner = text.strip_prefix('(').and_then(|t| t.strip_suffix(')'));
            format!("np.{name}({})", inner.unwrap_or(&text))
        }
        (_, Value::Str(s)) => format!("np.str_({})", PyValue::Str(s)),
        (_, Value::Bytes(b)) => format!("np.bytes_({})", PyValue::Bytes(b)),
        (ScalarKind::DateTime(_), value @ Value::DateTime(..)) => {
            format!("np.datetime64('{value}')")
        }
        _ => return None,
    })
}

/// numpy's name of a scalar type: `float64`, `uint8`, `datetime64[ns]`.
fn type_name(scalar: &Scalar) -> String {
    let bits = scalar.itemsize * 8;
    let with_unit = |base: &str, unit: Option<npy_core::DateTimeUnit>| match unit {
        None => base.to_string(),
        Some(unit) if unit.multiple == 1 => format!("{base}[{}]", unit.unit.symbol()),
        Some(unit) => format!("{base}[{}{}]", unit.multiple, unit.unit.symbol()),
    };
    match scalar.kind {
        ScalarKind::Bool => "bool".to_string(),
        ScalarKind::Int => format!("int{bits}"),
        ScalarKind::UInt => format!("uint{bits}"),
        ScalarKind::Float => format!("float{bits}"),
        ScalarKind::Complex => format!("complex{bits}"),
        ScalarKind::Bytes => "bytes_".to_string(),
        ScalarKind::Unicode => "str_".to_string(),
        ScalarKind::Void => "void".to_string(),
        ScalarKind::DateTime(unit) => with_unit("datetime64", unit),
        ScalarKind::TimeDelta(unit) => with_unit("timedelta64", unit),
        // A kind added to npy-core later: its type string.
        _ => scalar.type_str(),
    }
}

/// numpy's `dtype_is_implied`: int64, float64, complex128 and bool in
/// native order print without `dtype=`.
fn dtype_is_implied(dtype: &DType) -> bool {
    let DType::Scalar(s) = dtype else {
        return false;
    };
    if !dtype.is_native_byte_order() {
        return false;
    }
    matches!(
        (s.kind, s.itemsize),
        (ScalarKind::Int, 8)
            | (ScalarKind::Float, 8)
            | (ScalarKind::Complex, 16)
            | (ScalarKind::Bool, 1)
    )
}

/// numpy's `dtype_short_repr`.
fn dtype_short_repr(dtype: &DType) -> String {
    match dtype {
        DType::Object => "object".to_string(),
        DType::Structured(record) => struct_str(record),
        DType::SubArray(..) => dtype.header_repr(),
        DType::Scalar(s) => {
            let flexible = matches!(
                s.kind,
                ScalarKind::Bytes | ScalarKind::Unicode | ScalarKind::Void
            );
            if flexible || !dtype.is_native_byte_order() {
                return format!("'{}'", s.type_str());
            }
            let name = type_name(s);
            if name.chars().all(|c| c.is_ascii_alphanumeric()) {
                name
            } else {
                format!("'{name}'")
            }
        }
        other => other.header_repr(),
    }
}

/// numpy's short type string inside a structured dtype's `str()`: no `|`,
/// `?` for bool (`_scalar_str`).
fn field_type(dtype: &DType) -> String {
    match dtype {
        DType::Structured(record) => struct_str(record),
        DType::Object => "'O'".to_string(),
        DType::SubArray(..) => dtype.header_repr(),
        DType::Scalar(s) if s.kind == ScalarKind::Bool => "'?'".to_string(),
        DType::Scalar(s) => format!("'{}'", s.type_str().trim_start_matches('|')),
        other => other.header_repr(),
    }
}

/// numpy's `str()` of a structured dtype: the list form when the fields
/// are packed in order, else the dict form with offsets.
fn struct_str(record: &Structured) -> String {
    let mut end = 0;
    let packed = record.fields.iter().all(|field| {
        let in_order = field.offset == end;
        end = field.offset + field.dtype.itemsize();
        in_order
    }) && end == record.itemsize;
    let name = |field: &npy_core::Field| {
        let name = PyValue::Str(field.name.clone()).to_string();
        match &field.title {
            Some(title) => format!("({}, {name})", PyValue::Str(title.clone())),
            None => name,
        }
    };
    if packed {
        let fields: Vec<String> = record
            .fields
            .iter()
            .map(|field| match &field.dtype {
                DType::SubArray(base, shape) => format!(
                    "({}, {}, {})",
                    name(field),
                    field_type(base),
                    npy_core::shape_repr(shape)
                ),
                other => format!("({}, {})", name(field), field_type(other)),
            })
            .collect();
        return format!("[{}]", fields.join(", "));
    }
    let mut out = String::from("{'names': [");
    let list = |items: Vec<String>| items.join(", ");
    out.push_str(&list(
        record
            .fields
            .iter()
            .map(|f| PyValue::Str(f.name.clone()).to_string())
            .collect(),
    ));
    out.push_str("], 'formats': [");
    out.push_str(&list(
        record.fields.iter().map(|f| field_type(&f.dtype)).collect(),
    ));
    out.push_str("], 'offsets': [");
    out.push_str(&list(
        record.fields.iter().map(|f| f.offset.to_string()).collect(),
    ));
    let _ = write!(out, "], 'itemsize': {}}}", record.itemsize);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use npy_core::Header;

    fn objects(shape: &[usize], values: Vec<PyValue>) -> NpyArray {
        NpyArray::from_objects(Header::new(DType::Object, Order::C, shape.to_vec()), values)
            .unwrap()
    }

    #[test]
    fn zero_d_object_arrays_print_the_str_of_their_value() {
        let text = object_array_str(&objects(&[], vec!["abc".into()])).unwrap();
        assert_eq!(text, "abc");
        let text = object_array_str(&objects(&[], vec![PyValue::from(vec![1])])).unwrap();
        assert_eq!(text, "[1]");
    }

    #[test]
    fn byte_order_shows_in_dtype_reprs() {
        let big = DType::parse(">i2").unwrap();
        assert_eq!(dtype_short_repr(&big), "'>i2'");
        assert_eq!(dtype_short_repr(&DType::parse("<i2").unwrap()), "int16");
        assert_eq!(
            dtype_short_repr(&DType::parse("<M8[ns]").unwrap()),
            "'datetime64[ns]'"
        );
        assert!(dtype_is_implied(&DType::parse("<f8").unwrap()));
    }
}

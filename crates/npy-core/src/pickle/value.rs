//! What a [`PyValue`] does: Python's `repr()` of it, and its conversions
//! to and from Rust types (the type itself lives with [`NpyArray`], which it
//! contains and is contained by: `array.rs`).

use std::fmt::{self, Write as _};

use crate::array::{NpyArray, PyValue};
use crate::error::{Error, Result};
use crate::pyrepr::{push_bytes_repr, push_str_repr};
use crate::value::Value;

impl PyValue {
    /// An `int` from the little-endian two's-complement bytes of pickle's
    /// `LONG1`/`LONG4` (empty is 0): [`PyValue::Int`] when it fits.
    pub fn int_from_le_bytes(bytes: &[u8]) -> PyValue {
        match Self::int_from_le_parts(bytes) {
            Ok(n) => PyValue::Int(n),
            Err(bytes) => PyValue::BigInt(bytes.to_vec()),
        }
    }

    /// The `i64` of little-endian two's-complement bytes when it fits,
    /// else the bytes without redundant sign bytes (a `BigInt`'s).
    pub(crate) fn int_from_le_parts(bytes: &[u8]) -> std::result::Result<i64, &[u8]> {
        // Without redundant sign bytes, equal numbers have equal bytes.
        let bytes = trim_sign_bytes(bytes);
        if bytes.len() <= 8 {
            let fill = if bytes.last().is_some_and(|&b| b >= 0x80) {
                0xff
            } else {
                0
            };
            let mut word = [fill; 8];
            word[..bytes.len()].copy_from_slice(bytes);
            return Ok(i64::from_le_bytes(word));
        }
        Err(bytes)
    }

    /// The little-endian two's-complement bytes of an int value (the
    /// shortest, as pickle's `LONG1` wants them); `None` for other values.
    pub fn int_le_bytes(&self) -> Option<Vec<u8>> {
        match self {
            PyValue::Int(0) => Some(Vec::new()),
            PyValue::Int(n) => Some(trim_sign_bytes(&n.to_le_bytes()).to_vec()),
            PyValue::BigInt(bytes) => Some(bytes.clone()),
            _ => None,
        }
    }

    /// Appends Python's `repr()` of the value.
    ///
    /// Nested numpy arrays are written in a short form
    /// (`array(shape=[2], dtype='<f8')`): numpy's own array repr depends on
    /// its print options; [`write_repr_with`](Self::write_repr_with) lets a
    /// caller supply it (the `npy` CLI prints numpy's exact text).
    pub fn write_repr(&self, out: &mut String) {
        self.write_repr_with(out, &|_| None);
    }

    /// Python's `repr()` of the value, with `numpy_repr` asked first for
    /// every nested array and numpy scalar (inside containers too); `None`
    /// falls back to the short form of [`write_repr`](Self::write_repr).
    pub fn write_repr_with(
        &self,
        out: &mut String,
        numpy_repr: &dyn Fn(&PyValue) -> Option<String>,
    ) {
        if matches!(self, PyValue::Array(_) | PyValue::Scalar(_))
            && let Some(text) = numpy_repr(self)
        {
            out.push_str(&text);
            return;
        }
        let write_items = |out: &mut String, items: &[PyValue]| {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                item.write_repr_with(out, numpy_repr);
            }
        };
        match self {
            PyValue::None => out.push_str("None"),
            PyValue::Bool(true) => out.push_str("True"),
            PyValue::Bool(false) => out.push_str("False"),
            PyValue::Int(n) => {
                let _ = write!(out, "{n}");
            }
            PyValue::BigInt(bytes) => push_big_decimal(out, bytes),
            PyValue::Float(x) => {
                let _ = write!(out, "{}", Value::Float(*x));
            }
            PyValue::Complex(re, im) => {
                let _ = write!(out, "{}", Value::Complex(*re, *im));
            }
            PyValue::Str(s) => push_str_repr(out, s),
            PyValue::Bytes(b) => push_bytes_repr(out, b),
            PyValue::ByteArray(b) => {
                out.push_str("bytearray(");
                push_bytes_repr(out, b);
                out.push(')');
            }
            PyValue::Tuple(items) => {
                out.push('(');
                write_items(out, items);
                if items.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            }
            PyValue::List(items) => {
                out.push('[');
                write_items(out, items);
                out.push(']');
            }
            PyValue::Dict(items) => {
                out.push('{');
                for (i, (key, value)) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    key.write_repr_with(out, numpy_repr);
                    out.push_str(": ");
                    value.write_repr_with(out, numpy_repr);
                }
                out.push('}');
            }
            PyValue::Set(items) if items.is_empty() => out.push_str("set()"),
            PyValue::Set(items) => {
                out.push('{');
                write_items(out, items);
                out.push('}');
            }
            PyValue::FrozenSet(items) if items.is_empty() => out.push_str("frozenset()"),
            PyValue::FrozenSet(items) => {
                out.push_str("frozenset({");
                write_items(out, items);
                out.push_str("})");
            }
            PyValue::Array(array) => {
                // numpy's full array repr needs its printing options; this
                // is the plain nested-list form. The CLI prints numpy's.
                let _ = write!(
                    out,
                    "array(shape={:?}, dtype={})",
                    array.header().shape,
                    array.header().dtype.header_repr()
                );
            }
            PyValue::Scalar(scalar) => match scalar.value() {
                Ok(value) => {
                    let _ = write!(out, "{value}");
                }
                Err(_) => out.push_str("<numpy scalar>"),
            },
            PyValue::Type(name) => {
                let _ = write!(out, "<class '{name}'>");
            }
        }
    }
}

/// `bytes` without the high bytes that only repeat the sign.
fn trim_sign_bytes(bytes: &[u8]) -> &[u8] {
    let mut len = bytes.len();
    while len > 1 {
        let (last, prev) = (bytes[len - 1], bytes[len - 2]);
        if (last == 0 && prev < 0x80) || (last == 0xff && prev >= 0x80) {
            len -= 1;
        } else {
            break;
        }
    }
    &bytes[..len]
}

/// Python's limit on the decimal digits of an int converted to text
/// (`sys.get_int_max_str_digits()`, 4300 by default since Python 3.11): the
/// conversion costs time quadratic in the digits, so Python refuses longer
/// ones, and so does `PyValue::write_repr` (see [`push_big_decimal`]).
const INT_MAX_STR_DIGITS: usize = 4300;

/// Appends the decimal digits of a little-endian two's-complement integer,
/// or, for more than [`INT_MAX_STR_DIGITS`] digits (where Python's `repr`
/// raises "Exceeds the limit (4300 digits) for integer string conversion"),
/// `<int of N bits: exceeds the limit (4300 digits) for integer string
/// conversion>`, at a cost linear in the bytes. The digits are computed only
/// below 14,300 bits (4305 digits at most), so the cost is bounded either way.
fn push_big_decimal(out: &mut String, bytes: &[u8]) {
    let negative = bytes.last().is_some_and(|&b| b >= 0x80);
    let bits = magnitude_bits(bytes, negative);
    let too_long = |out: &mut String| {
        let sign = if negative { "-" } else { "" };
        let _ = write!(
            out,
            "<{sign}int of {bits} bits: exceeds the limit ({INT_MAX_STR_DIGITS} digits) \
             for integer string conversion>"
        );
    };
    // 10^4300 < 2^14284.4: 14,300 bits bounds every int Python would print.
    if bits > 14_300 {
        too_long(out);
        return;
    }
    let start = out.len();
    push_decimal_digits(out, bytes, negative);
    let digits = out.len() - start - usize::from(negative);
    if digits > INT_MAX_STR_DIGITS {
        out.truncate(start);
        too_long(out);
    }
}

/// The bit length of the magnitude of a little-endian two's-complement
/// integer (Python's `int.bit_length()`).
fn magnitude_bits(bytes: &[u8], negative: bool) -> u64 {
    // For negative n, |n| = m + 1 with m = !n >= 0: it has m's bit length,
    // one more when m = 2^k - 1 (n = -2^k).
    let fill = if negative { 0xff } else { 0 };
    let Some(top) = bytes.iter().rposition(|&b| b != fill) else {
        // 0, or -1 (all ones): |n| is 0 or 1.
        return u64::from(negative);
    };
    let byte = if negative { !bytes[top] } else { bytes[top] };
    let bits = top as u64 * 8 + u64::from(8 - byte.leading_zeros());
    let all_ones_below = bytes[..top].iter().all(|&b| b == 0);
    if negative && all_ones_below && (u16::from(byte) + 1).is_power_of_two() {
        return bits + 1;
    }
    bits
}

/// Appends the decimal digits of a little-endian two's-complement integer
/// (quadratic in its length: [`push_big_decimal`] bounds it).
fn push_decimal_digits(out: &mut String, bytes: &[u8], negative: bool) {
    // Magnitude as little-endian u32 limbs.
    let mut limbs: Vec<u32> = bytes
        .chunks(4)
        .map(|chunk| {
            let fill = if negative { 0xff } else { 0 };
            let mut word = [fill; 4];
            word[..chunk.len()].copy_from_slice(chunk);
            u32::from_le_bytes(word)
        })
        .collect();
    if negative {
        // Two's complement: invert and add one.
        let mut carry = 1u64;
        for limb in &mut limbs {
            let sum = u64::from(!*limb) + carry;
            *limb = sum as u32;
            carry = sum >> 32;
        }
    }
    let mut groups = Vec::new();
    while limbs.iter().any(|&l| l != 0) {
        let mut rem = 0u64;
        for limb in limbs.iter_mut().rev() {
            let cur = (rem << 32) | u64::from(*limb);
            *limb = (cur / 1_000_000_000) as u32;
            rem = cur % 1_000_000_000;
        }
        groups.push(rem as u32);
    }
    if negative {
        out.push('-');
    }
    match groups.split_last() {
        None => out.push('0'),
        Some((first, rest)) => {
            let _ = write!(out, "{first}");
            for group in rest.iter().rev() {
                let _ = write!(out, "{group:09}");
            }
        }
    }
}

impl fmt::Display for PyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.write_repr(&mut out);
        f.write_str(&out)
    }
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for PyValue {
            fn from(n: $t) -> PyValue {
                PyValue::Int(i64::from(n))
            }
        }
    )*};
}
from_int!(i8, i16, i32, i64, u8, u16, u32);

impl From<u64> for PyValue {
    fn from(n: u64) -> PyValue {
        match i64::try_from(n) {
            Ok(n) => PyValue::Int(n),
            Err(_) => PyValue::int_from_le_bytes(&u128::from(n).to_le_bytes()),
        }
    }
}

impl From<i128> for PyValue {
    fn from(n: i128) -> PyValue {
        PyValue::int_from_le_bytes(&n.to_le_bytes())
    }
}

impl From<bool> for PyValue {
    fn from(b: bool) -> PyValue {
        PyValue::Bool(b)
    }
}

impl From<f64> for PyValue {
    fn from(x: f64) -> PyValue {
        PyValue::Float(x)
    }
}

impl From<f32> for PyValue {
    fn from(x: f32) -> PyValue {
        PyValue::Float(f64::from(x))
    }
}

impl From<&str> for PyValue {
    fn from(s: &str) -> PyValue {
        PyValue::Str(s.to_owned())
    }
}

impl From<String> for PyValue {
    fn from(s: String) -> PyValue {
        PyValue::Str(s)
    }
}

impl From<&[u8]> for PyValue {
    fn from(b: &[u8]) -> PyValue {
        PyValue::Bytes(b.to_vec())
    }
}

impl<T: Into<PyValue>> From<Option<T>> for PyValue {
    fn from(value: Option<T>) -> PyValue {
        value.map_or(PyValue::None, Into::into)
    }
}

impl<T: Into<PyValue>> From<Vec<T>> for PyValue {
    /// A `list`. (Bytes are `PyValue::Bytes(vec)` or `(&vec[..]).into()`.)
    fn from(items: Vec<T>) -> PyValue {
        PyValue::List(items.into_iter().map(Into::into).collect())
    }
}

impl From<NpyArray> for PyValue {
    fn from(array: NpyArray) -> PyValue {
        PyValue::Array(Box::new(array))
    }
}

fn wrong_type(value: &PyValue, wanted: &str) -> Error {
    Error::PyValueType {
        found: value.type_name(),
        wanted: wanted.to_owned(),
    }
}

impl TryFrom<PyValue> for i64 {
    type Error = Error;
    fn try_from(value: PyValue) -> Result<i64> {
        match value {
            PyValue::Int(n) => Ok(n),
            PyValue::Bool(b) => Ok(i64::from(b)),
            other => Err(wrong_type(&other, "an int that fits i64")),
        }
    }
}

impl TryFrom<PyValue> for f64 {
    type Error = Error;
    /// Floats, and ints that convert exactly.
    fn try_from(value: PyValue) -> Result<f64> {
        match value {
            PyValue::Float(x) => Ok(x),
            PyValue::Int(n) if (n as f64) as i64 == n => Ok(n as f64),
            other => Err(wrong_type(&other, "a float")),
        }
    }
}

impl TryFrom<PyValue> for bool {
    type Error = Error;
    fn try_from(value: PyValue) -> Result<bool> {
        match value {
            PyValue::Bool(b) => Ok(b),
            other => Err(wrong_type(&other, "a bool")),
        }
    }
}

impl TryFrom<PyValue> for String {
    type Error = Error;
    fn try_from(value: PyValue) -> Result<String> {
        match value {
            PyValue::Str(s) => Ok(s),
            other => Err(wrong_type(&other, "a str")),
        }
    }
}

impl TryFrom<PyValue> for Vec<u8> {
    type Error = Error;
    /// `bytes` or `bytearray`.
    fn try_from(value: PyValue) -> Result<Vec<u8>> {
        match value {
            PyValue::Bytes(b) | PyValue::ByteArray(b) => Ok(b),
            other => Err(wrong_type(&other, "bytes")),
        }
    }
}

impl TryFrom<PyValue> for Vec<PyValue> {
    type Error = Error;
    /// The items of a `list`, `tuple`, `set` or `frozenset`.
    fn try_from(value: PyValue) -> Result<Vec<PyValue>> {
        match value {
            PyValue::List(items)
            | PyValue::Tuple(items)
            | PyValue::Set(items)
            | PyValue::FrozenSet(items) => Ok(items),
            other => Err(wrong_type(&other, "a list, tuple or set")),
        }
    }
}

impl TryFrom<PyValue> for NpyArray {
    type Error = Error;
    fn try_from(value: PyValue) -> Result<NpyArray> {
        match value {
            PyValue::Array(array) => Ok(*array),
            other => Err(wrong_type(&other, "a numpy array")),
        }
    }
}

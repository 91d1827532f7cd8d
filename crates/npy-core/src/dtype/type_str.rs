//! Type strings as `numpy.dtype(text)` reads them: `<f8`, `|S7`, `i4`,
//! `float64`, `datetime64[10s]`, one-character codes.

use super::{ByteOrder, DType, DateTimeUnit, MAX_ITEMSIZE, Scalar, ScalarKind, TimeUnit};
use crate::error::{Error, Result};
use crate::pyrepr::str_repr;

impl TimeUnit {
    fn from_symbol(symbol: &str) -> Option<TimeUnit> {
        if symbol == "μs" {
            return Some(TimeUnit::Microsecond);
        }
        TimeUnit::ALL.into_iter().find(|u| u.symbol() == symbol)
    }
}

fn not_understood(text: &str) -> Error {
    Error::DTypeNotUnderstood {
        name: str_repr(text),
    }
}

/// `numpy.dtype(text)` for the type strings NumPy accepts.
// Inlined for the usual case, a byte order, a kind and a one-digit size
// (`<f8`, `|u1`, `<S7`), read directly.
#[inline]
pub(super) fn parse_type_str(text: &str) -> Result<DType> {
    if let [order, code, size @ b'1'..=b'9'] = *text.as_bytes()
        && let Some(order) = byte_order_prefix(order)
        && let Some((kind, itemsize)) = sized_kind(char::from(code), usize::from(size - b'0'))
    {
        return Ok(DType::Scalar(Scalar::new(kind, order, itemsize)));
    }
    parse_any_type_str(text)
}

/// The byte order a type string's first character gives, if it is one.
fn byte_order_prefix(prefix: u8) -> Option<ByteOrder> {
    match prefix {
        b'<' => Some(ByteOrder::Little),
        b'>' => Some(ByteOrder::Big),
        b'=' | b'|' => Some(ByteOrder::NotApplicable),
        _ => None,
    }
}

/// Kind and itemsize of a kind character with a size, for the kinds that
/// take nothing else (not datetimes) and are not refused (not objects).
fn sized_kind(code: char, size: usize) -> Option<(ScalarKind, usize)> {
    use ScalarKind::*;
    Some(match (code, size) {
        ('b', 1) => (Bool, 1),
        ('i', 1 | 2 | 4 | 8) => (Int, size),
        ('u', 1 | 2 | 4 | 8) => (UInt, size),
        // 12 and 24 are 32-bit x86 long doubles: NumPy on 64-bit machines
        // refuses them, but they are valid files, kept as raw bytes.
        ('f', 2 | 4 | 8 | 12 | 16) => (Float, size),
        ('c', 8 | 16 | 24 | 32) => (Complex, size),
        ('S' | 'a', n) if n <= MAX_ITEMSIZE => (Bytes, n),
        ('U', n) if n.saturating_mul(4) <= MAX_ITEMSIZE => (Unicode, n * 4),
        ('V', n) if n <= MAX_ITEMSIZE => (Void, n),
        _ => return None,
    })
}

/// [`parse_type_str`] for any type string.
fn parse_any_type_str(text: &str) -> Result<DType> {
    // Names start with a letter; the usual `<f8` need not be looked up.
    if text.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
        && let Some(dtype) = parse_type_name(text)?
    {
        return Ok(dtype);
    }
    let (order, rest) = match text.as_bytes().first().copied().and_then(byte_order_prefix) {
        Some(order) => (order, &text[1..]),
        None => (ByteOrder::NotApplicable, text),
    };
    // NumPy takes a byte-order prefix on the datetime names too ('<datetime64').
    if rest.len() != text.len()
        && (rest.starts_with("datetime64") || rest.starts_with("timedelta64"))
        && let Some(DType::Scalar(s)) = parse_type_name(rest)?
    {
        return Ok(DType::Scalar(Scalar::new(s.kind, order, s.itemsize)));
    }
    let mut chars = rest.chars();
    let Some(code) = chars.next() else {
        return Err(not_understood(text));
    };
    let tail = chars.as_str();
    let scalar = |kind, size| Ok(DType::Scalar(Scalar::new(kind, order, size)));
    if tail.is_empty() {
        use ScalarKind::*;
        return match code {
            '?' => scalar(Bool, 1),
            'b' => scalar(Int, 1),
            'B' => scalar(UInt, 1),
            'h' => scalar(Int, 2),
            'H' => scalar(UInt, 2),
            'i' => scalar(Int, 4),
            'I' => scalar(UInt, 4),
            'l' | 'q' | 'p' => scalar(Int, 8),
            'L' | 'Q' | 'P' => scalar(UInt, 8),
            'e' => scalar(Float, 2),
            'f' => scalar(Float, 4),
            'd' => scalar(Float, 8),
            'g' => scalar(Float, 16),
            'F' => scalar(Complex, 8),
            'D' => scalar(Complex, 16),
            'G' => scalar(Complex, 32),
            'S' | 'a' => scalar(Bytes, 0),
            'U' => scalar(Unicode, 0),
            'V' => scalar(Void, 0),
            'c' => scalar(Bytes, 1),
            'M' => scalar(DateTime(None), 8),
            'm' => scalar(TimeDelta(None), 8),
            'O' => Err(Error::ObjectDType),
            _ => Err(not_understood(text)),
        };
    }
    let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(not_understood(text));
    }
    let (number, unit) = tail.split_at(digits);
    // More than 10 digits cannot be a valid size; this also keeps the
    // arithmetic below in range.
    let size = (digits <= 10)
        .then(|| {
            number
                .bytes()
                .fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0'))
        })
        .and_then(|size| usize::try_from(size).ok())
        .ok_or_else(|| not_understood(text))?;
    if !unit.is_empty() && !matches!(code, 'M' | 'm') {
        return Err(not_understood(text));
    }
    let (kind, itemsize) = match (code, size) {
        ('M', 8) => (ScalarKind::DateTime(parse_unit(unit, text)?), 8),
        ('m', 8) => (ScalarKind::TimeDelta(parse_unit(unit, text)?), 8),
        ('O', 4 | 8) => return Err(Error::ObjectDType),
        _ => sized_kind(code, size).ok_or_else(|| not_understood(text))?,
    };
    scalar(kind, itemsize)
}

/// The spelled-out names `numpy.dtype` accepts (no byte-order prefix).
fn parse_type_name(text: &str) -> Result<Option<DType>> {
    use ScalarKind::*;
    let native = |kind, size| {
        Ok(Some(DType::Scalar(Scalar::new(
            kind,
            ByteOrder::NATIVE,
            size,
        ))))
    };
    if let Some(unit) = text.strip_prefix("datetime64") {
        return native(DateTime(parse_unit(unit, text)?), 8);
    }
    if let Some(unit) = text.strip_prefix("timedelta64") {
        return native(TimeDelta(parse_unit(unit, text)?), 8);
    }
    match text {
        "bool" | "bool_" => native(Bool, 1),
        "int8" | "byte" => native(Int, 1),
        "uint8" | "ubyte" => native(UInt, 1),
        "int16" | "short" => native(Int, 2),
        "uint16" | "ushort" => native(UInt, 2),
        "int32" | "intc" => native(Int, 4),
        "uint32" | "uintc" => native(UInt, 4),
        "int64" | "int" | "int_" | "intp" | "long" | "longlong" => native(Int, 8),
        "uint64" | "uint" | "uintp" | "ulong" | "ulonglong" => native(UInt, 8),
        "float16" | "half" => native(Float, 2),
        "float32" | "single" => native(Float, 4),
        "float64" | "double" | "float" => native(Float, 8),
        "float128" | "longdouble" => native(Float, 16),
        "complex64" | "csingle" => native(Complex, 8),
        "complex128" | "cdouble" | "complex" => native(Complex, 16),
        "complex256" | "clongdouble" => native(Complex, 32),
        "bytes" | "bytes_" => native(Bytes, 0),
        "str" | "str_" => native(Unicode, 0),
        "void" => native(Void, 0),
        "object" | "object_" => Err(Error::ObjectDType),
        _ => Ok(None),
    }
}

/// A datetime unit suffix: empty (generic), `[generic]`, `[s]`, `[10s]`.
fn parse_unit(text: &str, whole: &str) -> Result<Option<DateTimeUnit>> {
    if text.is_empty() {
        return Ok(None);
    }
    let invalid = || Error::InvalidDType {
        reason: format!("Invalid datetime metadata string {}", str_repr(text)),
    };
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| {
            if text.starts_with('[') {
                invalid()
            } else {
                not_understood(whole)
            }
        })?;
    if inner == "generic" {
        return Ok(None);
    }
    let digits = inner.bytes().take_while(u8::is_ascii_digit).count();
    let (number, symbol) = inner.split_at(digits);
    let multiple = if number.is_empty() {
        1
    } else {
        number
            .parse::<u32>()
            .ok()
            .filter(|&m| m <= i32::MAX as u32)
            .ok_or_else(invalid)?
    };
    let unit = TimeUnit::from_symbol(symbol).ok_or_else(invalid)?;
    Ok(Some(DateTimeUnit { unit, multiple }))
}

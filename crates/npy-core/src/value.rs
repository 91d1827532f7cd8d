//! Decoding one element of any dtype into a Rust [`Value`].
//!
//! For display and comparison (`npy show`, `npy stats`, tests), not for bulk
//! work: typed views are the fast path. Both byte orders decode; strings
//! lose their trailing NULs like NumPy's `S`/`U` scalars; `NaT` becomes
//! `None`; half floats and x87 long doubles are decoded by hand.
//!
//! ```
//! use npy_core::{ByteOrder, DType, Scalar, ScalarKind, Value};
//!
//! let f2 = DType::Scalar(Scalar { kind: ScalarKind::Float, byte_order: ByteOrder::Big, itemsize: 2 });
//! assert_eq!(Value::decode(&f2, &[0x3c, 0x00])?, Value::Float(1.0));
//! let u3 = DType::Scalar(Scalar { kind: ScalarKind::Unicode, byte_order: ByteOrder::Little, itemsize: 12 });
//! let value = Value::decode(&u3, b"h\0\0\0i\0\0\0\0\0\0\0")?;
//! assert_eq!(value, Value::Str("hi".into()));
//! assert_eq!(value.to_string(), "'hi'");
//! # Ok::<(), npy_core::Error>(())
//! ```

use std::fmt::{self, Write as _};

use crate::dtype::{ByteOrder, DType, DateTimeUnit, Scalar, ScalarKind, TimeUnit};
use crate::error::{Error, Result};
use crate::pyrepr::{bytes_repr, str_repr};

/// One decoded element. `Display` follows NumPy's `str()` of the scalar
/// closely (`True`, `1e-07`, `b'ab'`, `(1+2j)`, ISO datetimes, `5 seconds`,
/// records as tuples).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `b1`: nonzero is true.
    Bool(bool),
    /// `i1`..`i8`.
    Int(i64),
    /// `u1`..`u8`.
    UInt(u64),
    /// `f2`, `f4`, `f8`, exactly.
    Float(f64),
    /// `f12`/`f16` long double: the raw bytes (in stored order) and, when the
    /// format is known, the value rounded to `f64`. Little-endian 12- and
    /// 16-byte long doubles are read as x86 80-bit extended precision, the
    /// format of x86/x86-64 Linux; other platforms' (binary128,
    /// double-double) give a wrong approximation, big-endian gives `None`.
    LongDouble(Vec<u8>, Option<f64>),
    /// `c8`, `c16` (and `c24`/`c32`, approximated like [`Value::LongDouble`],
    /// NaN when unknown): real and imaginary parts.
    Complex(f64, f64),
    /// `S<n>` with trailing NULs removed.
    Bytes(Vec<u8>),
    /// `U<n>` with trailing NULs removed; invalid code points become U+FFFD.
    Str(String),
    /// `M8`: ticks since 1970-01-01 (`None` is NaT) and the unit (`None` is generic).
    DateTime(Option<i64>, Option<DateTimeUnit>),
    /// `m8`: a tick count (`None` is NaT) and the unit (`None` is generic).
    TimeDelta(Option<i64>, Option<DateTimeUnit>),
    /// `V<n>`: all the bytes.
    Void(Vec<u8>),
    /// A structured element: each field's name and value, in order.
    Record(Vec<(String, Value)>),
    /// A subarray: its shape and its items in C order (none when the base
    /// has zero itemsize).
    SubArray(Vec<usize>, Vec<Value>),
}

impl Value {
    /// Decodes one element of `dtype` from exactly `dtype.itemsize()` bytes.
    ///
    /// Errors: [`Error::DataLength`] when `bytes` has another length (or a
    /// hand-made dtype puts a field outside its record).
    pub fn decode(dtype: &DType, bytes: &[u8]) -> Result<Value> {
        if bytes.len() != dtype.itemsize() {
            return Err(Error::DataLength {
                expected: dtype.itemsize(),
                actual: bytes.len(),
            });
        }
        match dtype {
            DType::Object => Err(Error::ObjectData),
            DType::Scalar(s) => Ok(decode_scalar(s, bytes)),
            DType::Structured(record) => {
                let mut fields = Vec::with_capacity(record.fields.len());
                for field in &record.fields {
                    let size = field.dtype.itemsize();
                    let part = field
                        .offset
                        .checked_add(size)
                        .and_then(|end| bytes.get(field.offset..end))
                        .ok_or(Error::DataLength {
                            expected: field.offset.saturating_add(size),
                            actual: bytes.len(),
                        })?;
                    fields.push((field.name.clone(), Value::decode(&field.dtype, part)?));
                }
                Ok(Value::Record(fields))
            }
            DType::SubArray(base, shape) => {
                let items = match base.itemsize() {
                    0 => Vec::new(),
                    size => bytes
                        .chunks_exact(size)
                        .map(|item| Value::decode(base, item))
                        .collect::<Result<_>>()?,
                };
                Ok(Value::SubArray(shape.clone(), items))
            }
        }
    }

    /// The value as a float, for statistics: numbers (bools as 0/1, long
    /// doubles approximately), `None` for NaT, strings, records and the rest.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Bool(b) => Some(f64::from(u8::from(b))),
            Value::Int(i) => Some(i as f64),
            Value::UInt(u) => Some(u as f64),
            Value::Float(x) => Some(x),
            Value::LongDouble(_, x) => x,
            _ => None,
        }
    }
}

/// Reads an unsigned integer of up to 8 bytes in `order` (native if none).
fn read_uint(bytes: &[u8], order: ByteOrder) -> u64 {
    let fold = |acc: u64, &b: &u8| (acc << 8) | u64::from(b);
    let big = match order {
        ByteOrder::Big => true,
        ByteOrder::Little => false,
        ByteOrder::NotApplicable => ByteOrder::NATIVE == ByteOrder::Big,
    };
    if big {
        bytes.iter().fold(0, fold)
    } else {
        bytes.iter().rev().fold(0, fold)
    }
}

/// Reads a two's complement integer of 1 to 8 bytes.
fn read_int(bytes: &[u8], order: ByteOrder) -> i64 {
    if bytes.is_empty() {
        return 0;
    }
    let unused = 64 - 8 * bytes.len().min(8) as u32;
    // Shift the sign bit to the top, then arithmetic-shift back to sign-extend.
    ((read_uint(bytes, order) << unused) as i64) >> unused
}

/// `x · 2^exp` without intermediate overflow for large `|exp|`.
fn scale_by_power_of_two(mut x: f64, mut exp: i32) -> f64 {
    while exp > 1000 {
        x *= 2f64.powi(1000);
        exp -= 1000;
    }
    while exp < -1000 {
        x *= 2f64.powi(-1000);
        exp += 1000;
    }
    x * 2f64.powi(exp)
}

/// IEEE 754 binary16 → f64 (exact: every half is a double).
// Public only for npy-cli's picture decoder, which converts millions of
// raw elements without building `Value`s; not part of the API.
#[doc(hidden)]
pub fn f16_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let fraction = f64::from(bits & 0x3ff);
    sign * match exp {
        0 => scale_by_power_of_two(fraction, -24),
        0x1f if fraction == 0.0 => f64::INFINITY,
        0x1f => f64::NAN,
        _ => scale_by_power_of_two(1024.0 + fraction, exp - 25),
    }
}

/// x87 80-bit extended precision (10 little-endian bytes) → f64, rounded.
// Public only for npy-cli's picture decoder (see `f16_to_f64`).
#[doc(hidden)]
pub fn x87_to_f64(bytes: &[u8; 10]) -> f64 {
    let mantissa = read_uint(&bytes[..8], ByteOrder::Little);
    let sign_exp = read_uint(&bytes[8..], ByteOrder::Little) as u16;
    let sign = if sign_exp & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from(sign_exp & 0x7fff);
    sign * match exp {
        0x7fff if mantissa << 1 == 0 => f64::INFINITY,
        0x7fff => f64::NAN,
        // Denormals use the minimum exponent; the integer bit is explicit.
        0 => scale_by_power_of_two(mantissa as f64, 1 - 16383 - 63),
        _ => scale_by_power_of_two(mantissa as f64, exp - 16383 - 63),
    }
}

/// Best-effort long double value (see [`Value::LongDouble`]).
fn long_double(bytes: &[u8], order: ByteOrder) -> Option<f64> {
    let little = order == ByteOrder::Little
        || (order == ByteOrder::NotApplicable && ByteOrder::NATIVE == ByteOrder::Little);
    match bytes.first_chunk::<10>() {
        Some(x87) if little && matches!(bytes.len(), 12 | 16) => Some(x87_to_f64(x87)),
        _ => None,
    }
}

fn float(bytes: &[u8], order: ByteOrder) -> Option<f64> {
    match bytes.len() {
        2 => Some(f16_to_f64(read_uint(bytes, order) as u16)),
        4 => Some(f64::from(f32::from_bits(read_uint(bytes, order) as u32))),
        8 => Some(f64::from_bits(read_uint(bytes, order))),
        _ => long_double(bytes, order),
    }
}

fn tick(bytes: &[u8], order: ByteOrder) -> Option<i64> {
    Some(read_int(bytes, order)).filter(|&t| t != i64::MIN)
}

fn trim_nuls<T: PartialEq + Default>(items: &[T]) -> &[T] {
    let end = items
        .iter()
        .rposition(|c| *c != T::default())
        .map_or(0, |i| i + 1);
    &items[..end]
}

fn decode_scalar(s: &Scalar, bytes: &[u8]) -> Value {
    let order = s.byte_order;
    match s.kind {
        ScalarKind::Bool => Value::Bool(bytes.iter().any(|&b| b != 0)),
        ScalarKind::Int => Value::Int(read_int(bytes, order)),
        ScalarKind::UInt => Value::UInt(read_uint(bytes, order)),
        ScalarKind::Float => match bytes.len() {
            2 | 4 | 8 => Value::Float(float(bytes, order).unwrap_or(f64::NAN)),
            _ => Value::LongDouble(bytes.to_vec(), long_double(bytes, order)),
        },
        ScalarKind::Complex => {
            let (re, im) = bytes.split_at(bytes.len() / 2);
            let part = |b| float(b, order).unwrap_or(f64::NAN);
            Value::Complex(part(re), part(im))
        }
        ScalarKind::Bytes => Value::Bytes(trim_nuls(bytes).to_vec()),
        ScalarKind::Unicode => {
            let units: Vec<u32> = bytes
                .chunks_exact(4)
                .map(|unit| read_uint(unit, order) as u32)
                .collect();
            let text = trim_nuls(&units)
                .iter()
                .map(|&u| char::from_u32(u).unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect();
            Value::Str(text)
        }
        ScalarKind::Void => Value::Void(bytes.to_vec()),
        ScalarKind::DateTime(unit) => Value::DateTime(tick(bytes, order), unit),
        ScalarKind::TimeDelta(unit) => Value::TimeDelta(tick(bytes, order), unit),
    }
}

/// A float like Python's `repr`: `1.0`, `0.1`, `1e-07`, `1e+16`, `nan`, `inf`.
fn write_float(f: &mut fmt::Formatter<'_>, x: f64) -> fmt::Result {
    if x.is_nan() {
        return f.write_str("nan");
    }
    if x.is_infinite() {
        return f.write_str(if x < 0.0 { "-inf" } else { "inf" });
    }
    // Rust's Debug switches to exponents at the same thresholds as Python's
    // repr, but writes `1e-7` / `1e16` where Python writes `1e-07` / `1e+16`.
    let text = format!("{x:?}");
    match text.split_once('e') {
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(digits) => ('-', digits),
                None => ('+', exp),
            };
            write!(f, "{mantissa}e{sign}{digits:0>2}")
        }
        None => f.write_str(&text),
    }
}

/// A complex part like Python: no `.0` on whole numbers.
fn complex_part(x: f64) -> String {
    let text = FloatRepr(x).to_string();
    text.strip_suffix(".0").map_or(text.clone(), str::to_owned)
}

struct FloatRepr(f64);

impl fmt::Display for FloatRepr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_float(f, self.0)
    }
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(days: i128) -> (i128, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i128::from(month <= 2);
    (year, month, day)
}

fn write_year(f: &mut fmt::Formatter<'_>, year: i128) -> fmt::Result {
    if (0..=9999).contains(&year) {
        write!(f, "{year:04}")
    } else {
        write!(f, "{year}")
    }
}

/// A datetime64 like NumPy's `str`: ISO 8601 to the unit's resolution.
fn write_datetime(f: &mut fmt::Formatter<'_>, ticks: i64, unit: DateTimeUnit) -> fmt::Result {
    let t = i128::from(ticks) * i128::from(unit.multiple);
    let (per_second, fraction_digits) = match unit.unit {
        TimeUnit::Year => return write_year(f, 1970 + t),
        TimeUnit::Month => {
            write_year(f, 1970 + t.div_euclid(12))?;
            return write!(f, "-{:02}", t.rem_euclid(12) + 1);
        }
        TimeUnit::Week | TimeUnit::Day => {
            let days = if unit.unit == TimeUnit::Week {
                7 * t
            } else {
                t
            };
            let (y, m, d) = civil_from_days(days);
            write_year(f, y)?;
            return write!(f, "-{m:02}-{d:02}");
        }
        TimeUnit::Hour => (-3600, 0),
        TimeUnit::Minute => (-60, 0),
        TimeUnit::Second => (1, 0),
        TimeUnit::Millisecond => (1_000, 3),
        TimeUnit::Microsecond => (1_000_000, 6),
        TimeUnit::Nanosecond => (1_000_000_000, 9),
        TimeUnit::Picosecond => (1_000_000_000_000, 12),
        TimeUnit::Femtosecond => (1_000_000_000_000_000, 15),
        TimeUnit::Attosecond => (1_000_000_000_000_000_000, 18),
    };
    // Negative `per_second` marks units coarser than a second.
    let (seconds, fraction) = if per_second < 0 {
        (t * -per_second, 0)
    } else {
        (t.div_euclid(per_second), t.rem_euclid(per_second))
    };
    let (y, m, d) = civil_from_days(seconds.div_euclid(86_400));
    let in_day = seconds.rem_euclid(86_400);
    write_year(f, y)?;
    write!(f, "-{m:02}-{d:02}T{:02}", in_day / 3600)?;
    if unit.unit != TimeUnit::Hour {
        write!(f, ":{:02}", in_day / 60 % 60)?;
    }
    if unit.unit != TimeUnit::Hour && unit.unit != TimeUnit::Minute {
        write!(f, ":{:02}", in_day % 60)?;
    }
    if fraction_digits > 0 {
        write!(f, ".{fraction:0fraction_digits$}")?;
    }
    Ok(())
}

fn unit_name(unit: TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Year => "years",
        TimeUnit::Month => "months",
        TimeUnit::Week => "weeks",
        TimeUnit::Day => "days",
        TimeUnit::Hour => "hours",
        TimeUnit::Minute => "minutes",
        TimeUnit::Second => "seconds",
        TimeUnit::Millisecond => "milliseconds",
        TimeUnit::Microsecond => "microseconds",
        TimeUnit::Nanosecond => "nanoseconds",
        TimeUnit::Picosecond => "picoseconds",
        TimeUnit::Femtosecond => "femtoseconds",
        TimeUnit::Attosecond => "attoseconds",
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, shape: &[usize], items: &[Value]) -> fmt::Result {
    let Some((&outer, inner)) = shape.split_first() else {
        return match items.first() {
            Some(item) => write!(f, "{item}"),
            None => f.write_str("[]"),
        };
    };
    let step = inner.iter().product::<usize>();
    f.write_char('[')?;
    for i in 0..outer {
        if i > 0 {
            f.write_str(", ")?;
        }
        let start = (i * step).min(items.len());
        let end = (start + step).min(items.len());
        write_list(f, inner, &items[start..end])?;
    }
    f.write_char(']')
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
            Value::Int(i) => write!(f, "{i}"),
            Value::UInt(u) => write!(f, "{u}"),
            Value::Float(x) | Value::LongDouble(_, Some(x)) => write_float(f, *x),
            Value::LongDouble(bytes, None) => {
                f.write_str("longdouble(0x")?;
                bytes.iter().try_for_each(|b| write!(f, "{b:02x}"))?;
                f.write_char(')')
            }
            Value::Complex(re, im) => {
                let sign = if im.is_sign_negative() && !im.is_nan() {
                    '-'
                } else {
                    '+'
                };
                write!(
                    f,
                    "({}{sign}{}j)",
                    complex_part(*re),
                    complex_part(im.abs())
                )
            }
            Value::Bytes(bytes) | Value::Void(bytes) => f.write_str(&bytes_repr(bytes)),
            Value::Str(text) => f.write_str(&str_repr(text)),
            Value::DateTime(None, _) | Value::TimeDelta(None, _) => f.write_str("NaT"),
            Value::DateTime(Some(t), Some(unit)) => write_datetime(f, *t, *unit),
            Value::DateTime(Some(t), None) | Value::TimeDelta(Some(t), None) => write!(f, "{t}"),
            Value::TimeDelta(Some(t), Some(unit)) => write!(
                f,
                "{} {}",
                i128::from(*t) * i128::from(unit.multiple),
                unit_name(unit.unit)
            ),
            Value::Record(fields) => {
                f.write_char('(')?;
                for (i, (_, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{value}")?;
                }
                // A one-field record prints as a Python 1-tuple.
                f.write_str(if fields.len() == 1 { ",)" } else { ")" })
            }
            Value::SubArray(shape, items) => write_list(f, shape, items),
        }
    }
}

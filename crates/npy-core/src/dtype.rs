//! The dtype model: every data type NumPy writes into an `.npy` header.
//!
//! A [`DType`] is a [`Scalar`] (bool, integers, floats, complex, bytes,
//! unicode, void, datetime64, timedelta64), a [`Structured`] dtype (fields), or a
//! subarray `(base, shape)`, or [`DType::Object`]: Python objects, whose data
//! is a pickle. [`DType::parse`] refuses object types (they describe no
//! bytes a view could read); a header describes an object array only when
//! parsed with [`ParseOptions::allow_pickle`](crate::ParseOptions).

/// Byte order of a scalar type, as written in the descr's first character.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// `<`
    Little,
    /// `>`
    Big,
    /// `|`: the type has no byte order (1-byte types, `S`, `V`, bool).
    NotApplicable,
}

impl ByteOrder {
    /// The byte order of the machine this code runs on.
    pub const NATIVE: ByteOrder = if cfg!(target_endian = "little") {
        ByteOrder::Little
    } else {
        ByteOrder::Big
    };
}

/// A datetime/timedelta base unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    /// `Y`
    Year,
    /// `M`
    Month,
    /// `W`
    Week,
    /// `D`
    Day,
    /// `h`
    Hour,
    /// `m`
    Minute,
    /// `s`
    Second,
    /// `ms`
    Millisecond,
    /// `us`
    Microsecond,
    /// `ns`
    Nanosecond,
    /// `ps`
    Picosecond,
    /// `fs`
    Femtosecond,
    /// `as`
    Attosecond,
}

/// A datetime/timedelta unit with its multiple: `[10s]` is `{ Second, 10 }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DateTimeUnit {
    /// The base unit.
    pub unit: TimeUnit,
    /// How many base units one tick is. NumPy writes 1 as no number (`[s]`)
    /// and accepts up to `i32::MAX`; it even accepts 0 (`[0s]`), so we keep it.
    pub multiple: u32,
}

/// What a scalar's bytes mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarKind {
    /// `b1`: one byte, 0 or 1.
    Bool,
    /// `i1 i2 i4 i8`: two's complement signed integer.
    Int,
    /// `u1 u2 u4 u8`: unsigned integer.
    UInt,
    /// `f2 f4 f8` IEEE binary; `f12`/`f16` platform long double, kept as raw bytes.
    Float,
    /// `c8 c16` (two IEEE floats, real then imaginary); `c24`/`c32` two long doubles.
    Complex,
    /// `S<n>`: n bytes, NUL-padded.
    Bytes,
    /// `U<n>`: n UCS-4 code units (itemsize is 4n).
    Unicode,
    /// `V<n>`: n opaque bytes.
    Void,
    /// `M8`: datetime64, an i64 count of units since 1970-01-01 (`i64::MIN` is
    /// NaT); `None` is the generic unit.
    DateTime(Option<DateTimeUnit>),
    /// `m8`: timedelta64, an i64 count of units; `None` is the generic unit.
    TimeDelta(Option<DateTimeUnit>),
}

/// A non-structured type: kind, byte order and size in bytes.
///
/// The byte order is normalised: types without one (bool, 1-byte numbers, `S`,
/// `V`) always carry [`ByteOrder::NotApplicable`]; native spellings (`=`, none,
/// `|` on a multi-byte number) are resolved to [`ByteOrder::NATIVE`].
/// [`DType::parse`] always returns normalised scalars; [`Scalar::new`]
/// normalises values built by hand.
///
/// Long doubles (`f16`, `f12`, and the complex `c32`, `c24`) are kept as raw
/// bytes: their meaning depends on the writing platform. On x86-64 Linux
/// `<f16` is the x87 80-bit extended format in the low 10 bytes followed by 6
/// padding bytes; on aarch64 Linux it is IEEE binary128; `<f12` comes from
/// 32-bit x86 (80-bit value plus 2 padding bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scalar {
    /// What the bytes mean.
    pub kind: ScalarKind,
    /// Byte order of the stored value.
    pub byte_order: ByteOrder,
    /// Size of one value in bytes.
    pub itemsize: usize,
}

/// One named field of a structured dtype.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    /// The field name. It may be empty: NumPy's reader keeps a `('', '<i4')`
    /// entry as a field literally named `''` (only `''`-named *void* entries
    /// are padding).
    pub name: String,
    /// The optional title, written as `(title, name)` in the descr.
    pub title: Option<String>,
    /// The field's type (a [`DType::SubArray`] for fields with a shape).
    pub dtype: DType,
    /// Byte offset of the field inside the record.
    pub offset: usize,
}

/// A structured dtype (numpy's word): named fields at byte offsets, and a
/// total size. One element of it is a *record*.
///
/// Gaps between fields (NumPy's `('', '|V3')` padding entries, `align=True`
/// layouts) are not fields: they are the bytes no field covers, and `descr()`
/// writes them back as NumPy does.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Structured {
    /// Fields in declaration order, offsets increasing and non-overlapping.
    pub fields: Vec<Field>,
    /// Size of one record in bytes (at least the end of the last field).
    pub itemsize: usize,
}

/// One entry of a structured dtype's descr list, in order: a field, or the padding
/// NumPy writes as `('', '|V<n>')` for bytes no field covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StructuredEntry<'a> {
    /// A named field.
    Field(&'a Field),
    /// `n` bytes of padding.
    Padding(usize),
}

impl Structured {
    /// The entries NumPy's `dtype.descr` lists for this record: every field,
    /// with a padding entry before any gap and after the last field when the
    /// itemsize is larger.
    pub fn entries(&self) -> impl Iterator<Item = StructuredEntry<'_>> {
        let mut end = 0usize;
        let fields = self.fields.iter().flat_map(move |field| {
            let gap = field.offset.checked_sub(end).filter(|&gap| gap > 0);
            end = end.max(field.offset.saturating_add(field.dtype.itemsize()));
            gap.map(StructuredEntry::Padding)
                .into_iter()
                .chain([StructuredEntry::Field(field)])
        });
        let covered = self
            .fields
            .iter()
            .map(|field| field.offset.saturating_add(field.dtype.itemsize()))
            .max()
            .unwrap_or(0);
        let tail = self.itemsize.checked_sub(covered).filter(|&gap| gap > 0);
        fields.chain(tail.map(StructuredEntry::Padding))
    }
}

/// A NumPy data type, as stored in an `.npy` header's `descr`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// A non-structured type such as `<f8` or `|S7`.
    Scalar(Scalar),
    /// A structured type, written as a list of fields.
    Structured(Structured),
    /// A fixed-shape subarray of `base`, written `(base, shape)`.
    SubArray(Box<DType>, Vec<usize>),
    /// Python objects (`'|O'`): the array's data is a pickle, decoded by
    /// [`pickle`](crate::pickle) into [`PyValue`](crate::pickle::PyValue)s.
    /// Only whole arrays are objects: records with object fields are
    /// refused. Its itemsize is numpy's (a pointer, 8 bytes), but such an
    /// array has no fixed-size data ([`Header::data_len`](crate::Header::data_len) is 0).
    Object,
}

use crate::literal::{self, Literal, Value};
use crate::pyrepr::{push_decimal, push_shape_repr, push_str_repr, str_repr};
use crate::{Error, Result};

/// Largest itemsize NumPy can represent (it stores sizes in a C `int`).
pub const MAX_ITEMSIZE: usize = i32::MAX as usize;

impl TimeUnit {
    /// Every unit, coarsest first.
    pub const ALL: [TimeUnit; 13] = [
        TimeUnit::Year,
        TimeUnit::Month,
        TimeUnit::Week,
        TimeUnit::Day,
        TimeUnit::Hour,
        TimeUnit::Minute,
        TimeUnit::Second,
        TimeUnit::Millisecond,
        TimeUnit::Microsecond,
        TimeUnit::Nanosecond,
        TimeUnit::Picosecond,
        TimeUnit::Femtosecond,
        TimeUnit::Attosecond,
    ];

    /// The unit's symbol as written in a descr: `Y`, `ms`, ...
    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Year => "Y",
            TimeUnit::Month => "M",
            TimeUnit::Week => "W",
            TimeUnit::Day => "D",
            TimeUnit::Hour => "h",
            TimeUnit::Minute => "m",
            TimeUnit::Second => "s",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Microsecond => "us",
            TimeUnit::Nanosecond => "ns",
            TimeUnit::Picosecond => "ps",
            TimeUnit::Femtosecond => "fs",
            TimeUnit::Attosecond => "as",
        }
    }

    fn from_symbol(symbol: &str) -> Option<TimeUnit> {
        if symbol == "μs" {
            return Some(TimeUnit::Microsecond);
        }
        TimeUnit::ALL.into_iter().find(|u| u.symbol() == symbol)
    }
}

impl Scalar {
    /// A scalar with its byte order normalised (see the type's docs).
    pub fn new(kind: ScalarKind, byte_order: ByteOrder, itemsize: usize) -> Scalar {
        Scalar {
            kind,
            byte_order,
            itemsize,
        }
        .normalized()
    }

    /// Whether the bytes of this type have an order at all (false for bool,
    /// 1-byte integers, `S` and `V`).
    pub fn has_byte_order(&self) -> bool {
        match self.kind {
            ScalarKind::Bool | ScalarKind::Bytes | ScalarKind::Void => false,
            ScalarKind::Int | ScalarKind::UInt => self.itemsize > 1,
            _ => true,
        }
    }

    /// This scalar with its byte order normalised (see the type's docs).
    pub fn normalized(self) -> Scalar {
        let byte_order = if !self.has_byte_order() {
            ByteOrder::NotApplicable
        } else if self.byte_order == ByteOrder::NotApplicable {
            ByteOrder::NATIVE
        } else {
            self.byte_order
        };
        Scalar { byte_order, ..self }
    }

    /// The type string NumPy writes (`dtype.str`): `<f8`, `|S7`, `<M8[10s]`.
    pub fn type_str(&self) -> String {
        let mut out = String::with_capacity(12);
        self.push_type_str(&mut out);
        out
    }

    fn push_type_str(&self, out: &mut String) {
        let order = if !self.has_byte_order() {
            '|'
        } else {
            match self.byte_order {
                ByteOrder::Little => '<',
                ByteOrder::Big => '>',
                ByteOrder::NotApplicable if ByteOrder::NATIVE == ByteOrder::Little => '<',
                ByteOrder::NotApplicable => '>',
            }
        };
        out.push(order);
        let (kind, size) = match self.kind {
            ScalarKind::Bool => ('b', self.itemsize),
            ScalarKind::Int => ('i', self.itemsize),
            ScalarKind::UInt => ('u', self.itemsize),
            ScalarKind::Float => ('f', self.itemsize),
            ScalarKind::Complex => ('c', self.itemsize),
            ScalarKind::Bytes => ('S', self.itemsize),
            ScalarKind::Unicode => ('U', self.itemsize / 4),
            ScalarKind::Void => ('V', self.itemsize),
            ScalarKind::DateTime(unit) | ScalarKind::TimeDelta(unit) => {
                out.push(if matches!(self.kind, ScalarKind::DateTime(_)) {
                    'M'
                } else {
                    'm'
                });
                push_decimal(out, self.itemsize as u64);
                if let Some(unit) = unit {
                    out.push('[');
                    if unit.multiple != 1 {
                        push_decimal(out, u64::from(unit.multiple));
                    }
                    out.push_str(unit.unit.symbol());
                    out.push(']');
                }
                return;
            }
        };
        out.push(kind);
        push_decimal(out, size as u64);
    }
}

impl DType {
    /// Size of one element in bytes (saturating at `usize::MAX` for a
    /// hand-built subarray whose size overflows; parsed dtypes are at most
    /// [`MAX_ITEMSIZE`]).
    pub fn itemsize(&self) -> usize {
        match self {
            DType::Scalar(s) => s.itemsize,
            DType::Structured(r) => r.itemsize,
            DType::SubArray(base, shape) => shape
                .iter()
                .fold(base.itemsize(), |size, &dim| size.saturating_mul(dim)),
            DType::Object => 8,
        }
    }

    /// Whether this is [`DType::Object`] or holds one (in a record field or
    /// a subarray).
    pub fn has_object(&self) -> bool {
        match self {
            DType::Object => true,
            DType::Scalar(_) => false,
            DType::Structured(r) => r.fields.iter().any(|f| f.dtype.has_object()),
            DType::SubArray(base, _) => base.has_object(),
        }
    }

    /// Parses a descr.
    ///
    /// Accepts the header syntax (a Python literal: `'<f8'`,
    /// `[('x', '<i4'), ('y', '>f8', (2, 3))]`, `('<i4', (2,))`) and, for
    /// convenience, a bare type string (`<f8`, `int32`, `M8[ms]`) when the text
    /// does not start like a literal. Type strings follow `numpy.dtype(str)`:
    /// byte-order prefixes `<`, `>`, `=`, `|`; kind plus size (`i4`, `S10`,
    /// `U3`, `V0`); one-character codes (`?`, `b`, `i`, `d`, `g`, ...; C sizes
    /// of LP64 platforms: `l` is 8 bytes); names (`float64`, `bool`, `int`,
    /// `datetime64[ns]`, ...). Object types (`O`, `|O8`, `object`) are refused
    /// with [`Error::ObjectDType`], anywhere in the descr.
    ///
    /// ```
    /// use npy_core::{ByteOrder, DType, Scalar, ScalarKind};
    /// let d = DType::parse("[('x', '<i4'), ('y', '>f8', (2, 3))]")?;
    /// assert_eq!(d.itemsize(), 4 + 8 * 6);
    /// assert_eq!(d.descr(), "[('x', '<i4'), ('y', '>f8', (2, 3))]");
    /// assert_eq!(
    ///     DType::parse("'>u2'")?,
    ///     DType::Scalar(Scalar::new(ScalarKind::UInt, ByteOrder::Big, 2))
    /// );
    /// assert_eq!(DType::parse("float64")?.descr(), "<f8");
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn parse(descr: &str) -> Result<DType> {
        let text = descr.trim_matches(|c: char| c.is_ascii_whitespace());
        let prefix_len = text.bytes().take_while(u8::is_ascii_alphabetic).count();
        let looks_literal = matches!(text.as_bytes().first(), Some(b'(' | b'[' | b'{' | b'#'))
            || matches!(text.as_bytes().get(prefix_len), Some(b'\'' | b'"'));
        if !looks_literal {
            return parse_type_str(text);
        }
        let literal =
            literal::parse(text, literal::Options::default()).map_err(|e| Error::InvalidDType {
                reason: format!("{} at byte {} of {}", e.reason, e.offset, str_repr(text)),
            })?;
        DType::from_literal(&literal, literal.root())
    }

    /// The dtype a parsed header `descr` value describes (NumPy's
    /// `descr_to_dtype`).
    // Inlined: a record's fields are mostly type strings, which then skip a
    // call of the (large) general case.
    #[inline]
    pub(crate) fn from_literal(literal: &Literal<'_>, value: &Value<'_>) -> Result<DType> {
        match value {
            Value::Str(s) => parse_type_str(literal.text(*s)),
            _ => DType::from_literal_container(literal, value),
        }
    }

    /// [`DType::from_literal`] for anything but a string.
    fn from_literal_container(literal: &Literal<'_>, value: &Value<'_>) -> Result<DType> {
        match value {
            Value::Tuple(items) => match literal.items(*items) {
                [base, shape] => subarray(literal, DType::from_literal(literal, base)?, shape),
                items => Err(Error::InvalidDType {
                    reason: format!(
                        "Tuple must have size 2, but has size {}: {}",
                        items.len(),
                        literal.repr(value)
                    ),
                }),
            },
            Value::List(entries) => record_from_entries(literal, literal.items(*entries)),
            other => Err(Error::InvalidDType {
                reason: format!(
                    "a descr is a string, a (base, shape) tuple or a list of fields, not {}",
                    literal.repr(other)
                ),
            }),
        }
    }

    /// The descr, numpy's description of this dtype without Python quoting:
    /// `dtype.str` for a scalar (`<f8`, `|S7`, `<M8[10s]`), `|O` for
    /// objects, and `dtype.descr`'s repr for a structured dtype (a list of
    /// tuples, with `('', '|V<n>')` entries for the gaps) or a subarray
    /// (`('<f8', (2, 3))`). The same text as [`Display`](std::fmt::Display);
    /// [`DType::parse`] (and [`FromStr`](std::str::FromStr)) read it back.
    ///
    /// A hand-built structured dtype with overlapping or out-of-order fields
    /// has no descr; the text returned for it is not meaningful
    /// ([`Header::to_bytes`](crate::Header::to_bytes) refuses such dtypes).
    ///
    /// ```
    /// use npy_core::DType;
    /// let dtype: DType = "<f4".parse()?;
    /// assert_eq!(dtype.descr(), "<f4");
    /// assert_eq!(dtype.to_string(), "<f4");
    /// assert_eq!(dtype.header_repr(), "'<f4'");
    /// let fields: DType = "[('a', '<i4')]".parse()?;
    /// assert_eq!(fields.descr(), "[('a', '<i4')]");
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn descr(&self) -> String {
        let mut out = String::new();
        match self {
            DType::Object => out.push_str("|O"),
            DType::Scalar(s) => s.push_type_str(&mut out),
            _ => self.push_descr(&mut out),
        }
        out
    }

    /// The descr as the `.npy` header's dict writes it, a Python literal:
    /// [`DType::descr`] with a scalar's type string in quotes (`'<f8'`),
    /// which is `repr(numpy.lib.format.dtype_to_descr(dtype))`.
    pub fn header_repr(&self) -> String {
        let mut out = String::new();
        self.push_descr(&mut out);
        out
    }

    fn push_descr(&self, out: &mut String) {
        match self {
            DType::Object => out.push_str("'|O'"),
            // A type string never needs quoting or escapes.
            DType::Scalar(s) => {
                out.push('\'');
                s.push_type_str(out);
                out.push('\'');
            }
            DType::SubArray(base, shape) => {
                out.push('(');
                base.push_descr(out);
                out.push_str(", ");
                push_shape_repr(out, shape);
                out.push(')');
            }
            DType::Structured(record) => {
                out.push('[');
                for (i, entry) in record.entries().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    let field = match entry {
                        StructuredEntry::Padding(len) => {
                            push_padding(out, len);
                            continue;
                        }
                        StructuredEntry::Field(field) => field,
                    };
                    out.push('(');
                    match &field.title {
                        Some(title) => {
                            out.push('(');
                            push_str_repr(out, title);
                            out.push_str(", ");
                            push_str_repr(out, &field.name);
                            out.push(')');
                        }
                        None => push_str_repr(out, &field.name),
                    }
                    out.push_str(", ");
                    match &field.dtype {
                        DType::SubArray(base, shape) => {
                            base.push_descr(out);
                            out.push_str(", ");
                            push_shape_repr(out, shape);
                        }
                        other => other.push_descr(out),
                    }
                    out.push(')');
                }
                out.push(']');
            }
        }
    }

    /// This dtype with every scalar that has a byte order set to `order`
    /// (normalised: [`ByteOrder::NotApplicable`] means native).
    pub fn with_byte_order(&self, order: ByteOrder) -> DType {
        match self {
            DType::Scalar(s) => DType::Scalar(
                Scalar {
                    byte_order: order,
                    ..*s
                }
                .normalized(),
            ),
            DType::Structured(r) => DType::Structured(Structured {
                fields: r
                    .fields
                    .iter()
                    .map(|f| Field {
                        dtype: f.dtype.with_byte_order(order),
                        ..f.clone()
                    })
                    .collect(),
                itemsize: r.itemsize,
            }),
            DType::SubArray(base, shape) => {
                DType::SubArray(Box::new(base.with_byte_order(order)), shape.clone())
            }
            DType::Object => DType::Object,
        }
    }

    /// Whether every multi-byte scalar in this dtype is in the machine's byte
    /// order (so its bytes can be used as they are).
    pub fn is_native_byte_order(&self) -> bool {
        match self {
            DType::Scalar(s) => !s.has_byte_order() || s.byte_order != ByteOrder::foreign(),
            DType::Structured(r) => r.fields.iter().all(|f| f.dtype.is_native_byte_order()),
            DType::SubArray(base, _) => base.is_native_byte_order(),
            DType::Object => true,
        }
    }

    /// Checks that NumPy could write this dtype: record fields in order and
    /// not overlapping, every itemsize at most [`MAX_ITEMSIZE`].
    pub(crate) fn check_writable(&self) -> Result<()> {
        self.check_writable_with(&mut String::new())
    }

    /// [`DType::check_writable`] with scratch space for the type strings,
    /// shared by all the fields of a record.
    fn check_writable_with(&self, type_text: &mut String) -> Result<()> {
        if self.itemsize() > MAX_ITEMSIZE {
            return Err(too_big_itemsize());
        }
        match self {
            // A hand-built scalar must be one the reader understands back
            // (no `<i3`, no `U` of 5 bytes, no 4-byte datetime).
            DType::Scalar(s) => {
                type_text.clear();
                s.push_type_str(type_text);
                match parse_type_str(type_text) {
                    Ok(DType::Scalar(back)) if back == s.normalized() => Ok(()),
                    _ => Err(Error::InvalidDType {
                        reason: format!("no descr describes {s:?}"),
                    }),
                }
            }
            DType::SubArray(base, _) if base.has_object() => Err(Error::ObjectField),
            DType::SubArray(base, _) => base.check_writable_with(type_text),
            DType::Object => Ok(()),
            DType::Structured(record) => {
                if self.has_object() {
                    return Err(Error::ObjectField);
                }
                let mut end = 0usize;
                for field in &record.fields {
                    field.dtype.check_writable_with(type_text)?;
                    if field.offset < end {
                        return Err(Error::UnwritableRecord);
                    }
                    end = field
                        .offset
                        .checked_add(field.dtype.itemsize())
                        .ok_or_else(too_big_itemsize)?;
                }
                if end > record.itemsize {
                    return Err(Error::UnwritableRecord);
                }
                Ok(())
            }
        }
    }
}

impl std::fmt::Display for DType {
    /// Writes [`DType::descr`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.descr())
    }
}

impl std::str::FromStr for DType {
    type Err = Error;

    /// [`DType::parse`]: a descr, quoted or not, or any type string numpy accepts.
    fn from_str(text: &str) -> Result<DType> {
        DType::parse(text)
    }
}

impl ByteOrder {
    fn foreign() -> ByteOrder {
        match ByteOrder::NATIVE {
            ByteOrder::Little => ByteOrder::Big,
            _ => ByteOrder::Little,
        }
    }
}

fn push_padding(out: &mut String, len: usize) {
    out.push_str("('', '|V");
    push_decimal(out, len as u64);
    out.push_str("')");
}

fn too_big_itemsize() -> Error {
    Error::InvalidDType {
        reason: "dtype size in bytes must fit into a C int".to_owned(),
    }
}

fn not_understood(text: &str) -> Error {
    Error::DTypeNotUnderstood {
        name: str_repr(text),
    }
}

/// `numpy.dtype((base, shape))`: `()` gives `base` itself, an int `n` means `(n,)`.
fn subarray(literal: &Literal<'_>, base: DType, shape: &Value<'_>) -> Result<DType> {
    let invalid = |detail: &str| Error::InvalidDType {
        reason: format!(
            "invalid shape in fixed-type tuple{detail}: {}",
            literal.repr(shape)
        ),
    };
    let dims: &[Value<'_>] = match shape {
        Value::Int(_) => std::slice::from_ref(shape),
        Value::Tuple(items) => literal.items(*items),
        _ => return Err(invalid("")),
    };
    let mut out = Vec::with_capacity(dims.len());
    let mut size = base.itemsize();
    for dim in dims {
        let Value::Int(n) = dim else {
            return Err(invalid(""));
        };
        if *n < 0 {
            return Err(invalid(": dimension smaller than zero"));
        }
        let n = usize::try_from(*n)
            .ok()
            .filter(|&n| n <= MAX_ITEMSIZE)
            .ok_or_else(|| invalid(": dimension does not fit into a C int"))?;
        size = size.saturating_mul(n);
        out.push(n);
    }
    if size > MAX_ITEMSIZE {
        return Err(invalid(": dtype size in bytes must fit into a C int"));
    }
    if out.is_empty() {
        return Ok(base);
    }
    Ok(DType::SubArray(Box::new(base), out))
}

/// A structured dtype from a descr list, as NumPy's `descr_to_dtype` builds it:
/// offsets follow each other; `''`-named void entries are padding.
fn record_from_entries<'v>(literal: &'v Literal<'v>, entries: &'v [Value<'v>]) -> Result<DType> {
    let mut fields = Vec::with_capacity(entries.len());
    let mut used = UsedNames::new();
    let mut offset = 0usize;
    for (index, entry) in entries.iter().enumerate() {
        let added = add_entry(literal, entry, index, &mut used, &mut fields, &mut offset);
        if let Err(error) = added {
            // NumPy checks the entries in order: a name used twice before
            // this entry's error is reported instead.
            return Err(used.repeat_error(literal, entries).unwrap_or(error));
        }
    }
    if let Some(error) = used.repeat_error(literal, entries) {
        return Err(error);
    }
    Ok(DType::Structured(Structured {
        fields,
        itemsize: offset,
    }))
}

/// Adds the descr list entry `entry` (the `index`th) at `offset` and moves
/// `offset` past it. Its name and title go to `used`; whether they were used
/// already is checked by the caller.
fn add_entry<'v>(
    literal: &'v Literal<'v>,
    entry: &'v Value<'v>,
    index: usize,
    used: &mut UsedNames<'v>,
    fields: &mut Vec<Field>,
    offset: &mut usize,
) -> Result<()> {
    let invalid = |reason: &str| Error::InvalidDType {
        reason: format!("{reason}: {}", literal.repr(entry)),
    };
    let not_a_field = || invalid("a field must be a (name, type) or (name, type, shape) tuple");
    let items = match entry {
        Value::Tuple(items) | Value::List(items) => literal.items(*items),
        _ => return Err(not_a_field()),
    };
    let (name, dtype) = match items {
        [name, descr] => (name, DType::from_literal(literal, descr)?),
        [name, descr, shape] => (
            name,
            subarray(literal, DType::from_literal(literal, descr)?, shape)?,
        ),
        _ => return Err(not_a_field()),
    };
    let (title, name) = match name {
        Value::Str(name) => (None, literal.text(*name)),
        Value::Tuple(pair) => match literal.items(*pair) {
            [Value::Str(title), Value::Str(name)] => {
                (Some(literal.text(*title)), literal.text(*name))
            }
            [_, Value::Str(_)] => {
                return Err(invalid("field titles other than strings are not supported"));
            }
            _ => return Err(invalid("field names must be strings")),
        },
        _ => return Err(invalid("field names must be strings")),
    };
    let size = dtype.itemsize();
    let is_padding = title.is_none()
        && name.is_empty()
        && matches!(
            &dtype,
            DType::Scalar(Scalar {
                kind: ScalarKind::Void,
                ..
            }) | DType::SubArray(..)
        );
    if !is_padding {
        used.push(name, index, false);
        if let Some(title) = title {
            used.push(title, index, true);
        }
        fields.push(Field {
            name: name.to_string(),
            title: title.map(|title| title.to_string()),
            dtype,
            offset: *offset,
        });
    }
    *offset = offset
        .checked_add(size)
        .filter(|&end| end <= MAX_ITEMSIZE)
        .ok_or_else(too_big_itemsize)?;
    Ok(())
}

/// The names and titles of a record's fields, to refuse one used twice as
/// NumPy does ("name already used as a name or title").
///
/// Up to [`UsedNames::INLINE`] of them are kept on the stack: for the usual
/// record an allocation would cost more than the whole check.
struct UsedNames<'v> {
    /// The first names, in declaration order (a field's name before its
    /// title).
    inline: [UsedName<'v>; UsedNames::INLINE],
    inline_len: usize,
    /// All the names, once there are more than fit `inline`.
    spilled: Vec<UsedName<'v>>,
}

#[derive(Clone, Copy)]
struct UsedName<'v> {
    text: &'v str,
    /// Index of the descr entry.
    entry: usize,
    is_title: bool,
}

impl<'v> UsedNames<'v> {
    /// Up to this many names are compared pairwise; more are hashed.
    const SCAN_LIMIT: usize = 16;

    /// Slots looked at for one hash before giving up on the cheap check
    /// (only names made to collide get that far).
    const MAX_PROBES: usize = 32;

    const INLINE: usize = 64;

    fn new() -> Self {
        let unused = UsedName {
            text: "",
            entry: 0,
            is_title: false,
        };
        UsedNames {
            inline: [unused; UsedNames::INLINE],
            inline_len: 0,
            spilled: Vec::new(),
        }
    }

    fn push(&mut self, text: &'v str, entry: usize, is_title: bool) {
        let key = UsedName {
            text,
            entry,
            is_title,
        };
        if self.spilled.is_empty() {
            if let Some(slot) = self.inline.get_mut(self.inline_len) {
                *slot = key;
                self.inline_len += 1;
                return;
            }
            self.spilled.reserve(2 * Self::INLINE);
            self.spilled.extend_from_slice(&self.inline);
        }
        self.spilled.push(key);
    }

    /// The names so far, in declaration order.
    fn keys(&self) -> &[UsedName<'v>] {
        if self.spilled.is_empty() {
            &self.inline[..self.inline_len]
        } else {
            &self.spilled
        }
    }

    /// NumPy's error for the first name or title, in declaration order, that
    /// repeats an earlier one, if any.
    fn repeat_error(&self, literal: &Literal<'_>, entries: &[Value<'_>]) -> Option<Error> {
        let repeat = self.first_repeat()?;
        let reason = if repeat.is_title {
            "title already used as a name or title"
        } else {
            "name already used as a name or title"
        };
        Some(Error::InvalidDType {
            reason: format!("{reason}: {}", literal.repr(&entries[repeat.entry])),
        })
    }

    fn first_repeat(&self) -> Option<UsedName<'v>> {
        let keys = self.keys();
        if keys.len() <= Self::SCAN_LIMIT {
            return (1..keys.len())
                .find(|&i| keys[..i].iter().any(|key| key.text == keys[i].text))
                .map(|i| keys[i]);
        }
        // Equal names have equal hashes, so when every hash finds no equal
        // one in an open-addressing table of the hashes, the names are
        // distinct. Half the slots stay empty, so a probe is short.
        let mask = (keys.len() * 2).next_power_of_two() - 1;
        // On the stack for up to 64 names: an allocation costs more than
        // the whole check.
        let mut on_stack = [0u64; 128];
        let mut on_heap = Vec::new();
        let table = if mask < on_stack.len() {
            &mut on_stack[..=mask]
        } else {
            on_heap.resize(mask + 1, 0);
            &mut on_heap[..]
        };
        for key in keys {
            // 0 marks an empty slot.
            let hash = name_hash(key.text) | 1;
            let mut slot = hash as usize & mask;
            let mut probes = 0;
            while table[slot] != 0 {
                probes += 1;
                if table[slot] == hash || probes > Self::MAX_PROBES {
                    // A repeat or a collision (rare unless made on purpose):
                    // check the names themselves.
                    return self.first_repeat_exact();
                }
                slot = (slot + 1) & mask;
            }
            table[slot] = hash;
        }
        None
    }

    /// [`UsedNames::first_repeat`] with a hash nobody can collide on purpose.
    fn first_repeat_exact(&self) -> Option<UsedName<'v>> {
        let keys = self.keys();
        let mut seen = std::collections::HashSet::with_capacity(keys.len());
        keys.iter().find(|key| !seen.insert(key.text)).copied()
    }
}

/// A cheap hash of a field name (a bad one would cost time, never
/// correctness).
fn name_hash(text: &str) -> u64 {
    // A folded 128-bit product: every input bit reaches every output bit.
    let mix = |hash: u64, word: u64| {
        let product = u128::from(hash ^ word) * 0x9e37_79b9_7f4a_7c15;
        (product as u64) ^ ((product >> 64) as u64)
    };
    let mut chunks = text.as_bytes().chunks_exact(8);
    let mut hash = text.len() as u64;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        hash = mix(hash, u64::from_le_bytes(word));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        // The bytes in little-endian order, without a memcpy call.
        let word = rest
            .iter()
            .rev()
            .fold(0, |word, &b| word << 8 | u64::from(b));
        hash = mix(hash, word);
    }
    hash
}

/// `numpy.dtype(text)` for the type strings NumPy accepts.
// Inlined for the usual case, a byte order, a kind and a one-digit size
// (`<f8`, `|u1`, `<S7`), read directly.
#[inline]
fn parse_type_str(text: &str) -> Result<DType> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` distinct `<i1` fields, as descr entries.
    fn entries(count: usize) -> Vec<String> {
        (0..count).map(|i| format!("('f{i}', '<i1')")).collect()
    }

    fn parse_entries(entries: &[String]) -> Result<DType> {
        DType::parse(&format!("[{}]", entries.join(", ")))
    }

    fn reason(result: Result<DType>) -> String {
        match result {
            Err(Error::InvalidDType { reason }) => reason,
            other => panic!("not an invalid dtype: {other:?}"),
        }
    }

    // Both ways of checking: pairwise (few names) and hashed (many), with
    // the names (and the hash table) on the stack or, past
    // `UsedNames::INLINE`, on the heap.
    const COUNTS: [usize; 5] = [
        2,
        UsedNames::SCAN_LIMIT - 1,
        UsedNames::SCAN_LIMIT + 1,
        UsedNames::INLINE - 4,
        UsedNames::INLINE + 40,
    ];

    #[test]
    fn the_first_repeated_name_is_reported() {
        for count in COUNTS {
            let mut list = entries(count);
            // Two repeats: the earlier one in declaration order is reported,
            // with its entry.
            list.push("('f1', '<f8')".to_owned());
            list.push("('f0', '<f4')".to_owned());
            assert_eq!(
                reason(parse_entries(&list)),
                "name already used as a name or title: ('f1', '<f8')",
                "{count} fields"
            );
            let distinct = parse_entries(&entries(count)).expect("distinct names");
            assert_eq!(distinct.itemsize(), count, "{count} fields");
        }
    }

    #[test]
    fn titles_share_the_names_namespace() {
        for count in COUNTS {
            let mut list = entries(count);
            list.push("(('f0', 'new'), '<i1')".to_owned());
            assert_eq!(
                reason(parse_entries(&list)),
                "title already used as a name or title: (('f0', 'new'), '<i1')",
                "{count} fields"
            );
            let mut list = entries(count);
            list.insert(0, "(('t', 'n'), '<i1')".to_owned());
            list.push("('t', '<i1')".to_owned());
            assert_eq!(
                reason(parse_entries(&list)),
                "name already used as a name or title: ('t', '<i1')",
                "{count} fields"
            );
        }
    }

    #[test]
    fn errors_are_reported_in_entry_order() {
        for count in COUNTS {
            // A repeat before a bad entry wins ...
            let mut list = entries(count);
            list.push("('f0', '<i1')".to_owned());
            list.push("('x', '<i3')".to_owned());
            let message = reason(parse_entries(&list));
            assert!(message.starts_with("name already used"), "{message}");
            // ... a bad entry before a repeat too.
            let mut list = entries(count);
            list.push("('x', 5)".to_owned());
            list.push("('f0', '<i1')".to_owned());
            let message = reason(parse_entries(&list));
            assert!(message.starts_with("a descr is a string"), "{message}");
            // An entry whose name repeats and whose size overflows: the name.
            let mut list = entries(count);
            list.push("('f0', '|V2147483647')".to_owned());
            let message = reason(parse_entries(&list));
            assert!(message.starts_with("name already used"), "{message}");
        }
    }

    #[test]
    fn names_crowding_one_slot_are_checked_exactly() {
        // More names than the probe limit, all aimed at one slot of the
        // table (the same low hash bits) but with different hashes.
        let count = UsedNames::MAX_PROBES + 8;
        let mask = (count * 2).next_power_of_two() - 1;
        let crowd: Vec<String> = (0..1_000_000)
            .map(|i| format!("n{i}"))
            .filter(|name| (name_hash(name) | 1) as usize & mask == 1)
            .take(count)
            .collect();
        assert_eq!(crowd.len(), count);
        let mut list: Vec<String> = crowd.iter().map(|n| format!("('{n}', '<i1')")).collect();
        assert_eq!(parse_entries(&list).expect("distinct").itemsize(), count);
        list.push(format!("('{}', '<i1')", crowd[3]));
        assert_eq!(
            reason(parse_entries(&list)),
            format!(
                "name already used as a name or title: ('{}', '<i1')",
                crowd[3]
            )
        );
    }

    #[test]
    fn colliding_hashes_are_not_repeats() {
        // Different lengths offset different first words: these collide.
        assert_eq!(name_hash("a"), name_hash("b\0"));
        let mut list = entries(UsedNames::SCAN_LIMIT + 1);
        list.push("('a', '<i1')".to_owned());
        list.push(r"('b\x00', '<i1')".to_owned());
        let dtype = parse_entries(&list).expect("distinct names");
        assert_eq!(dtype.itemsize(), UsedNames::SCAN_LIMIT + 3);
        list.push(r"('b\x00', '<i2')".to_owned());
        assert_eq!(
            reason(parse_entries(&list)),
            r"name already used as a name or title: ('b\x00', '<i2')"
        );
    }
}

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
///
/// Non-exhaustive: numpy may add kinds (its `StringDType` is one that `.npy`
/// files cannot hold yet), so matches need a `_` arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
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
///
/// Non-exhaustive, like [`ScalarKind`]: matches need a `_` arm.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
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

mod parse;
mod structured;
mod type_str;

use crate::error::Error;
use crate::pyrepr::{push_decimal, push_shape_repr, push_str_repr};

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
}

impl std::fmt::Display for DType {
    /// Writes [`DType::descr`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.descr())
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

//! The dtype model: every data type NumPy writes into an `.npy` header.
//!
//! A [`DType`] is a [`Scalar`] (bool, integers, floats, complex, bytes,
//! unicode, void, datetime64, timedelta64), a structured [`Record`], or a
//! subarray `(base, shape)`. Object dtypes are recognised by the parser and
//! refused: they hold pickles, not data.

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
    /// How many base units one tick is (at least 1).
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
    /// `M8`: datetime64, an i64 count of units since 1970-01-01; `None` is the generic unit.
    DateTime(Option<DateTimeUnit>),
    /// `m8`: timedelta64, an i64 count of units; `None` is the generic unit.
    TimeDelta(Option<DateTimeUnit>),
}

/// A non-structured type: kind, byte order and size in bytes.
///
/// The byte order is normalised: types without one (bool, 1-byte numbers, `S`,
/// `V`) always carry [`ByteOrder::NotApplicable`]; native spellings (`=`, none,
/// `|` on a multi-byte number) are resolved to [`ByteOrder::NATIVE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scalar {
    /// What the bytes mean.
    pub kind: ScalarKind,
    /// Byte order of the stored value.
    pub byte_order: ByteOrder,
    /// Size of one value in bytes.
    pub itemsize: usize,
}

/// One named field of a structured record.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    /// The field name (never empty: NumPy names unnamed fields `f0`, `f1`, ...).
    pub name: String,
    /// The optional title, written as `(title, name)` in the descr.
    pub title: Option<String>,
    /// The field's type (a [`DType::SubArray`] for fields with a shape).
    pub dtype: DType,
    /// Byte offset of the field inside the record.
    pub offset: usize,
}

/// A structured record: named fields at byte offsets, and a total size.
///
/// Gaps between fields (NumPy's `('', '|V3')` padding entries, `align=True`
/// layouts) are not fields: they are the bytes no field covers, and `descr()`
/// writes them back as NumPy does.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    /// Fields in declaration order, offsets increasing and non-overlapping.
    pub fields: Vec<Field>,
    /// Size of one record in bytes (at least the end of the last field).
    pub itemsize: usize,
}

/// A NumPy data type, as stored in an `.npy` header's `descr`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// A non-structured type such as `<f8` or `|S7`.
    Scalar(Scalar),
    /// A structured type, written as a list of fields.
    Record(Record),
    /// A fixed-shape subarray of `base`, written `(base, shape)`.
    SubArray(Box<DType>, Vec<usize>),
}

impl DType {
    /// Size of one element in bytes.
    pub fn itemsize(&self) -> usize {
        match self {
            DType::Scalar(s) => s.itemsize,
            DType::Record(r) => r.itemsize,
            DType::SubArray(base, shape) => base.itemsize() * shape.iter().product::<usize>(),
        }
    }

    /// Parses a descr in header syntax, e.g. `'<f8'` or
    /// `[('x', '<i4'), ('y', '>f8', (2, 3))]`.
    pub fn parse(descr: &str) -> crate::Result<DType> {
        let _ = descr;
        todo!()
    }

    /// The descr text NumPy would write for this dtype (`'<f8'`, a list of tuples, ...).
    pub fn descr(&self) -> String {
        todo!()
    }
}

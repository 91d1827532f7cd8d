//! The bridge from a [`DType`] to Rust element types.
//!
//! An [`Element`] is a Rust type whose in-memory bytes *are* one array element
//! of some dtype, so a view can reinterpret the data in place instead of
//! copying it:
//!
//! | data | element types |
//! | --- | --- |
//! | native-endian `i1..i8`, `u1..u8`, `f4`, `f8` | `i8..i64`, `u8..u64`, `f32`, `f64` |
//! | any byte order, any alignment | [`zerocopy::byteorder`] types: `I32<BigEndian>`, `F64<LittleEndian>`, ... |
//! | `b1` | [`Bool`] (any byte, O(1)) or `bool` (validated, O(n) once) |
//! | `S<n>` / `V<n>` (no fields) | `[u8; N]` |
//! | native-endian `M8`/`m8` | `i64` (the raw tick count; NaT is `i64::MIN`) |
//! | records, strings, anything else | the raw [`RawView`](crate::raw::RawView) |
//!
//! Native primitives need the data aligned to their size (a memory map or an
//! [`NpyArray`](crate::io::NpyArray) buffer is); a misaligned buffer is an
//! [`Error::Misaligned`](crate::Error::Misaligned), never a panic. The
//! `zerocopy::byteorder` types have alignment 1 and work on any buffer, for
//! either byte order, without copying.
//!
//! # Booleans
//!
//! NumPy's `b1` is one byte that NumPy itself only ever writes as 0 or 1, but
//! a file can hold any byte there, and a Rust `bool` with another value is
//! undefined behaviour. So there are two element types:
//!
//! * [`Bool`]: a transparent `u8` newtype; every byte is valid, nonzero means
//!   true (like NumPy's `astype(bool)`). Creating the view reads nothing, so
//!   use it for large mapped files.
//! * `bool`: creating the view checks every byte once (O(n), only when a
//!   `bool` view is asked for) and fails with
//!   [`Error::InvalidElement`](crate::Error::InvalidElement) naming the first
//!   bad element. A mutable `bool` view can only store 0 or 1.
//!
//! # Your own records
//!
//! A `#[repr(C)]` struct deriving zerocopy's `TryFromBytes` (or `FromBytes`),
//! `IntoBytes`, `Immutable` and `KnownLayout` can implement [`Element`] for a
//! structured dtype with the same layout, and then be viewed directly.
//!
//! ```
//! use npy_core::element::Element;
//! use npy_core::{ByteOrder, DType, Scalar, ScalarKind};
//! use zerocopy::byteorder::{BigEndian, I32};
//!
//! assert!(f64::matches(&f64::dtype()));
//! assert!(!f64::matches(&f32::dtype()));
//! let big_i32 = DType::Scalar(Scalar { kind: ScalarKind::Int, byte_order: ByteOrder::Big, itemsize: 4 });
//! assert!(I32::<BigEndian>::matches(&big_i32));
//! assert_eq!(I32::<BigEndian>::dtype(), big_i32);
//! ```

use zerocopy::byteorder::{BigEndian, LittleEndian};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, TryFromBytes, Unaligned};

use crate::dtype::{ByteOrder, DType, Scalar, ScalarKind};

/// A Rust type whose bytes are exactly one element of some dtype.
///
/// The supertraits let views reinterpret data in place without `unsafe`.
/// `size_of::<Self>()` must equal the itemsize of every dtype `matches`
/// accepts (views also check this).
pub trait Element:
    Copy + Send + Sync + TryFromBytes + IntoBytes + Immutable + KnownLayout + 'static
{
    /// Whether data of `dtype` can be read as `Self` without conversion.
    fn matches(dtype: &DType) -> bool;

    /// The dtype this type is written as (used by writers and error messages).
    fn dtype() -> DType;

    /// Reinterprets `bytes` (aligned, a whole number of elements) as elements;
    /// `None` if some element's bytes are not a valid `Self`.
    ///
    /// The default checks every element, which is what `bool` needs. Types
    /// valid for every bit pattern override it with a check-free cast.
    fn cast_slice(bytes: &[u8]) -> Option<&[Self]> {
        <[Self]>::try_ref_from_bytes(bytes).ok()
    }

    /// Mutable form of [`Element::cast_slice`].
    fn cast_slice_mut(bytes: &mut [u8]) -> Option<&mut [Self]> {
        <[Self]>::try_mut_from_bytes(bytes).ok()
    }
}

/// A NumPy `b1` byte read without validation: nonzero is true.
///
/// Viewing data as `Bool` costs nothing up front, unlike `bool` (see the
/// [module docs](self#booleans)).
///
/// ```
/// use npy_core::element::Bool;
/// assert!(Bool(1).get() && Bool(7).get() && !Bool(0).get());
/// assert_eq!(Bool::from(true), Bool(1));
/// ```
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    FromBytes,
    IntoBytes,
    Immutable,
    KnownLayout,
    Unaligned,
)]
#[repr(transparent)]
pub struct Bool(pub u8);

impl Bool {
    /// The truth value: any nonzero byte is true.
    pub fn get(self) -> bool {
        self.0 != 0
    }
}

impl From<bool> for Bool {
    fn from(value: bool) -> Self {
        Bool(u8::from(value))
    }
}

impl From<Bool> for bool {
    fn from(value: Bool) -> Self {
        value.get()
    }
}

/// The scalar part of a dtype, if it is one.
fn scalar(dtype: &DType) -> Option<&Scalar> {
    match dtype {
        DType::Scalar(s) => Some(s),
        _ => None,
    }
}

pub(crate) fn scalar_dtype(kind: ScalarKind, byte_order: ByteOrder, itemsize: usize) -> DType {
    DType::Scalar(Scalar::new(kind, byte_order, itemsize))
}

/// Whether `dtype` is a number of `kind` and `itemsize` stored in `order`
/// (compared normalised: 1-byte numbers have no order).
pub(crate) fn is_number(
    dtype: &DType,
    kind: ScalarKind,
    itemsize: usize,
    order: ByteOrder,
) -> bool {
    scalar(dtype).is_some_and(|s| s.normalized() == Scalar::new(kind, order, itemsize))
}

/// The cast for types valid for every bit pattern (`FromBytes`): no check.
macro_rules! check_free_cast {
    () => {
        fn cast_slice(bytes: &[u8]) -> Option<&[Self]> {
            <[Self] as zerocopy::FromBytes>::ref_from_bytes(bytes).ok()
        }
        fn cast_slice_mut(bytes: &mut [u8]) -> Option<&mut [Self]> {
            <[Self] as zerocopy::FromBytes>::mut_from_bytes(bytes).ok()
        }
    };
}
#[allow(unused_imports)] // used by the optional `ext` element types
pub(crate) use check_free_cast;

macro_rules! native_number {
    ($($ty:ty => $kind:ident),* $(,)?) => {$(
        impl Element for $ty {
            fn matches(dtype: &DType) -> bool {
                is_number(dtype, ScalarKind::$kind, size_of::<$ty>(), ByteOrder::NATIVE)
            }
            fn dtype() -> DType {
                scalar_dtype(ScalarKind::$kind, ByteOrder::NATIVE, size_of::<$ty>())
            }
            check_free_cast!();
        }
    )*};
}

native_number!(
    u8 => UInt, u16 => UInt, u32 => UInt, u64 => UInt,
    i8 => Int, i16 => Int, i32 => Int,
    f32 => Float, f64 => Float,
);

/// `i64` also reads native-endian datetime64/timedelta64 data: NumPy stores
/// them as int64 tick counts.
impl Element for i64 {
    fn matches(dtype: &DType) -> bool {
        is_number(dtype, ScalarKind::Int, 8, ByteOrder::NATIVE)
            || scalar(dtype).is_some_and(|s| {
                matches!(s.kind, ScalarKind::DateTime(_) | ScalarKind::TimeDelta(_))
                    && s.itemsize == 8
                    && s.normalized().byte_order == ByteOrder::NATIVE
            })
    }
    fn dtype() -> DType {
        scalar_dtype(ScalarKind::Int, ByteOrder::NATIVE, 8)
    }
    check_free_cast!();
}

impl Element for bool {
    fn matches(dtype: &DType) -> bool {
        is_number(dtype, ScalarKind::Bool, 1, ByteOrder::NotApplicable)
    }
    fn dtype() -> DType {
        scalar_dtype(ScalarKind::Bool, ByteOrder::NotApplicable, 1)
    }
    // The default, validating cast: only 0 and 1 are `bool`s.
}

impl Element for Bool {
    fn matches(dtype: &DType) -> bool {
        bool::matches(dtype)
    }
    fn dtype() -> DType {
        bool::dtype()
    }
    check_free_cast!();
}

/// `S<N>` and field-less `V<N>` data: N raw bytes (NUL padding included).
impl<const N: usize> Element for [u8; N] {
    fn matches(dtype: &DType) -> bool {
        scalar(dtype).is_some_and(|s| {
            matches!(s.kind, ScalarKind::Bytes | ScalarKind::Void) && s.itemsize == N
        })
    }
    fn dtype() -> DType {
        scalar_dtype(ScalarKind::Bytes, ByteOrder::NotApplicable, N)
    }
    check_free_cast!();
}

macro_rules! explicit_order_number {
    ($($ty:ident => $kind:ident),* $(,)?) => {$(
        explicit_order_number!(@one $ty, $kind, BigEndian, ByteOrder::Big);
        explicit_order_number!(@one $ty, $kind, LittleEndian, ByteOrder::Little);
    )*};
    (@one $ty:ident, $kind:ident, $marker:ident, $order:expr) => {
        impl Element for zerocopy::byteorder::$ty<$marker> {
            fn matches(dtype: &DType) -> bool {
                is_number(dtype, ScalarKind::$kind, size_of::<Self>(), $order)
            }
            fn dtype() -> DType {
                scalar_dtype(ScalarKind::$kind, $order, size_of::<Self>())
            }
            check_free_cast!();
        }
    };
}

explicit_order_number!(
    U16 => UInt, U32 => UInt, U64 => UInt,
    I16 => Int, I32 => Int, I64 => Int,
    F32 => Float, F64 => Float,
);

#[cfg(test)]
mod tests {
    use super::*;
    use zerocopy::byteorder::{BigEndian, F64, I16, LittleEndian, U32};

    fn number(kind: ScalarKind, byte_order: ByteOrder, itemsize: usize) -> DType {
        DType::Scalar(Scalar {
            kind,
            byte_order,
            itemsize,
        })
    }

    #[test]
    fn native_types_match_only_their_own_dtype() {
        let f8 = number(ScalarKind::Float, ByteOrder::NATIVE, 8);
        assert!(f64::matches(&f8));
        assert!(!f32::matches(&f8));
        assert!(!i64::matches(&f8));
        assert!(!u64::matches(&number(
            ScalarKind::Int,
            ByteOrder::NATIVE,
            8
        )));
        let swapped = if ByteOrder::NATIVE == ByteOrder::Little {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        };
        assert!(!f64::matches(&number(ScalarKind::Float, swapped, 8)));
        assert_eq!(f64::dtype(), f8);
    }

    #[test]
    fn one_byte_types_have_no_byte_order() {
        assert_eq!(
            u8::dtype(),
            number(ScalarKind::UInt, ByteOrder::NotApplicable, 1)
        );
        assert_eq!(
            bool::dtype(),
            number(ScalarKind::Bool, ByteOrder::NotApplicable, 1)
        );
        // A header may still say '<i1'; the parser normalises it, but accept it anyway.
        assert!(i8::matches(&number(ScalarKind::Int, ByteOrder::Little, 1)));
        assert!(Bool::matches(&bool::dtype()));
        assert!(!u8::matches(&bool::dtype()));
    }

    #[test]
    fn explicit_order_types_match_their_order() {
        let be_f8 = number(ScalarKind::Float, ByteOrder::Big, 8);
        let le_f8 = number(ScalarKind::Float, ByteOrder::Little, 8);
        assert!(F64::<BigEndian>::matches(&be_f8));
        assert!(!F64::<BigEndian>::matches(&le_f8));
        assert!(F64::<LittleEndian>::matches(&le_f8));
        assert_eq!(
            U32::<LittleEndian>::dtype(),
            number(ScalarKind::UInt, ByteOrder::Little, 4)
        );
        assert_eq!(
            I16::<BigEndian>::dtype(),
            number(ScalarKind::Int, ByteOrder::Big, 2)
        );
    }

    #[test]
    fn i64_reads_datetimes_and_byte_arrays_read_strings() {
        let m8 = number(ScalarKind::DateTime(None), ByteOrder::NATIVE, 8);
        assert!(i64::matches(&m8));
        assert!(!u64::matches(&m8));
        assert!(<[u8; 5]>::matches(&number(
            ScalarKind::Bytes,
            ByteOrder::NotApplicable,
            5
        )));
        assert!(<[u8; 3]>::matches(&number(
            ScalarKind::Void,
            ByteOrder::NotApplicable,
            3
        )));
        assert!(!<[u8; 4]>::matches(&number(
            ScalarKind::Bytes,
            ByteOrder::NotApplicable,
            5
        )));
    }

    #[test]
    fn bool_cast_validates_and_bool_newtype_does_not() {
        assert_eq!(bool::cast_slice(&[0, 1, 1]), Some(&[false, true, true][..]));
        assert_eq!(bool::cast_slice(&[0, 2]), None);
        assert_eq!(Bool::cast_slice(&[0, 2]), Some(&[Bool(0), Bool(2)][..]));
        assert!(Bool(2).get());
    }
}

//! `f2` (IEEE binary16) data as [`half::f16`] (feature `half`).
//!
//! * `half::f16` is the element type of native-order `f2` data (`<f2` on
//!   little-endian machines), like `f32` is for `f4`. It needs 2-byte
//!   alignment, which memory maps and [`NpyArray`](crate::NpyArray) buffers have.
//! * [`F16<O>`] reads and writes either byte order at any alignment, like
//!   zerocopy's `F32<BigEndian>`: `F16<BigEndian>` for `>f2`,
//!   `F16<LittleEndian>` for `<f2`.
//!
//! `half::bf16` is deliberately *not* an element type: NumPy has no bfloat16
//! dtype, so no descr means bf16, and reading `<f2` data as bf16 (or
//! writing bf16 as `<f2`) would silently produce wrong numbers. To keep bf16
//! data in an `.npy` file, store its bits as `u16` (`<u2`) and convert with
//! `half::bf16::from_bits` / `to_bits`.
//!
//! ```
//! use half::f16;
//! use npy_core::ext::half::F16;
//! use npy_core::io::{ReadOptions, read_npy, write_npy};
//! use npy_core::{DType, Order};
//! use zerocopy::byteorder::BigEndian;
//!
//! let values = [f16::from_f32(0.5), f16::from_f32(-2.0), f16::INFINITY];
//! let mut file = Vec::new();
//! write_npy(&mut file, &values[..])?;
//! let array = read_npy(file.as_slice(), &ReadOptions::default())?;
//! assert_eq!(array.header().dtype, DType::parse("'<f2'")?);
//! assert_eq!(array.view::<f16>()?.to_vec(), values);
//!
//! // Big-endian data, viewed in place without swapping.
//! let big = [0x38, 0x00, 0xc0, 0x00]; // 0.5, -2.0 as >f2
//! let view = npy_core::ArrayView::<F16<BigEndian>>::new(&big, &DType::parse(">f2")?, &[2], Order::C)?;
//! assert_eq!(view.iter().map(|x| x.get().to_f32()).collect::<Vec<_>>(), [0.5, -2.0]);
//! # Ok::<(), npy_core::Error>(())
//! ```
//!
//! There is no `Element` for `bf16`:
//!
//! ```compile_fail
//! fn element<T: npy_core::Element>() {}
//! element::<half::bf16>();
//! ```

use std::fmt;
use std::marker::PhantomData;

use half::f16;
use zerocopy::byteorder::{BigEndian, ByteOrder as ZcByteOrder, LittleEndian, U16};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::dtype::{ByteOrder, DType, ScalarKind};
use crate::element::{Element, check_free_cast, is_number, scalar_dtype};

impl Element for f16 {
    fn matches(dtype: &DType) -> bool {
        is_number(dtype, ScalarKind::Float, 2, ByteOrder::NATIVE)
    }
    fn dtype() -> DType {
        scalar_dtype(ScalarKind::Float, ByteOrder::NATIVE, 2)
    }
    check_free_cast!();
}

/// A binary16 float stored in byte order `O`, alignment 1: the `f2`
/// counterpart of zerocopy's `F32<O>`.
#[derive(
    Clone,
    Copy,
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
pub struct F16<O>(U16<O>, PhantomData<O>);

impl<O: ZcByteOrder> F16<O> {
    /// Stores `value` in byte order `O`.
    pub fn new(value: f16) -> Self {
        F16(U16::new(value.to_bits()), PhantomData)
    }

    /// The value, converted to native order.
    pub fn get(self) -> f16 {
        f16::from_bits(self.0.get())
    }

    /// Replaces the value.
    pub fn set(&mut self, value: f16) {
        *self = F16::new(value);
    }
}

impl<O: ZcByteOrder> From<f16> for F16<O> {
    fn from(value: f16) -> Self {
        F16::new(value)
    }
}

impl<O: ZcByteOrder> From<F16<O>> for f16 {
    fn from(value: F16<O>) -> Self {
        value.get()
    }
}

impl<O: ZcByteOrder> fmt::Debug for F16<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.get(), f)
    }
}

impl<O: ZcByteOrder> fmt::Display for F16<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.get(), f)
    }
}

macro_rules! explicit_order_f16 {
    ($($marker:ident => $order:expr),*) => {$(
        impl Element for F16<$marker> {
            fn matches(dtype: &DType) -> bool {
                is_number(dtype, ScalarKind::Float, 2, $order)
            }
            fn dtype() -> DType {
                scalar_dtype(ScalarKind::Float, $order, 2)
            }
            check_free_cast!();
        }
    )*};
}

explicit_order_f16!(BigEndian => ByteOrder::Big, LittleEndian => ByteOrder::Little);

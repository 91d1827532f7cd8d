//! Complex data (`c8`, `c16`) and [`num_complex::Complex`] (feature `num-complex`).
//!
//! NumPy stores a complex number as two floats, real part first, each in the
//! dtype's byte order. [`NpyComplex<T>`] is exactly that layout (`#[repr(C)]`
//! `{ re, im }`) and is the element type:
//!
//! | data | element type |
//! | --- | --- |
//! | native-order `c8` / `c16` | [`NpyComplex32`] / [`NpyComplex64`] (`NpyComplex<f32>` / `NpyComplex<f64>`) |
//! | either order, any alignment | `NpyComplex<F32<O>>` / `NpyComplex<F64<O>>` (zerocopy byte-order floats) |
//!
//! `num_complex::Complex` itself cannot be an element: views cast bytes with
//! zerocopy, whose traits num-complex does not implement. But `Complex<T>`
//! and `NpyComplex<T>` have the same layout, so the native ones convert
//! without copying: an `NpyComplex<f64>` dereferences to a
//! `Complex<f64>` (all its methods and operators work through `*z`),
//! [`NpyComplex::as_complex_slice`] turns a whole slice, and with the
//! `ndarray` feature `to_ndarray_complex` gives an `ndarray` view of
//! `Complex<T>`.
//!
//! ```
//! use num_complex::Complex;
//! use npy_core::ext::num_complex::{NpyComplex, NpyComplex64};
//! use npy_core::io::{ReadOptions, read_npy, write_npy};
//! use npy_core::{DType, Order};
//!
//! let data: Vec<NpyComplex64> = vec![Complex::new(1.0, 2.0).into(), Complex::new(0.0, -1.0).into()];
//! let mut file = Vec::new();
//! write_npy(&mut file, &data[..])?;
//! let array = read_npy(file.as_slice(), &ReadOptions::default())?;
//! assert_eq!(array.header().dtype, DType::parse("'<c16'")?);
//!
//! let view = array.view::<NpyComplex64>()?;
//! let z: &Complex<f64> = &view.get(&[0]).unwrap();
//! assert_eq!(z.norm_sqr(), 5.0);
//! let all: &[Complex<f64>] = NpyComplex::as_complex_slice(view.as_slice().unwrap());
//! assert_eq!(all[1] * all[1], Complex::new(-1.0, 0.0));
//! # Ok::<(), npy_core::Error>(())
//! ```

use std::ops::{Deref, DerefMut};

use num_complex::Complex;
use zerocopy::byteorder::{BigEndian, F32, F64, LittleEndian};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use crate::dtype::{ByteOrder, DType, ScalarKind};
use crate::element::{Element, check_free_cast, is_number, scalar_dtype};

/// One complex element as NumPy stores it: real part, then imaginary part.
///
/// `T` is `f32`/`f64` for native-order data, or zerocopy's `F32<O>`/`F64<O>`
/// for a given byte order (see the [module docs](self)).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub struct NpyComplex<T> {
    /// The real part.
    pub re: T,
    /// The imaginary part.
    pub im: T,
}

/// A native-order `c8` element (NumPy's `complex64`).
pub type NpyComplex32 = NpyComplex<f32>;
/// A native-order `c16` element (NumPy's `complex128`).
pub type NpyComplex64 = NpyComplex<f64>;

impl<T> NpyComplex<T> {
    /// A complex element from its parts.
    pub const fn new(re: T, im: T) -> Self {
        NpyComplex { re, im }
    }
}

/// `f32` and `f64`: the parts of native-order complex elements, which
/// convert to `num_complex::Complex` without copying. Sealed.
pub trait NativeFloat:
    bytemuck::Pod + FromBytes + IntoBytes + Immutable + KnownLayout + sealed::Sealed
{
}

impl NativeFloat for f32 {}
impl NativeFloat for f64 {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

impl<F: NativeFloat> NpyComplex<F> {
    // The casts below rely on `Complex<F>` being `#[repr(C)] { re, im }` too;
    // bytemuck re-checks size and alignment at run time, this says it up front.
    const SAME_LAYOUT: () = assert!(
        size_of::<Complex<F>>() == size_of::<Self>()
            && align_of::<Complex<F>>() == align_of::<Self>()
    );

    /// The same elements as `num_complex::Complex` values, without copying.
    pub fn as_complex_slice(slice: &[Self]) -> &[Complex<F>] {
        let () = Self::SAME_LAYOUT;
        bytemuck::cast_slice(slice.as_bytes())
    }

    /// Mutable form of [`as_complex_slice`](Self::as_complex_slice).
    pub fn as_complex_slice_mut(slice: &mut [Self]) -> &mut [Complex<F>] {
        let () = Self::SAME_LAYOUT;
        bytemuck::cast_slice_mut(slice.as_mut_bytes())
    }
}

impl<F: NativeFloat> Deref for NpyComplex<F> {
    type Target = Complex<F>;
    fn deref(&self) -> &Complex<F> {
        &Self::as_complex_slice(std::slice::from_ref(self))[0]
    }
}

impl<F: NativeFloat> DerefMut for NpyComplex<F> {
    fn deref_mut(&mut self) -> &mut Complex<F> {
        &mut Self::as_complex_slice_mut(std::slice::from_mut(self))[0]
    }
}

impl<F: NativeFloat> From<Complex<F>> for NpyComplex<F> {
    fn from(z: Complex<F>) -> Self {
        NpyComplex::new(z.re, z.im)
    }
}

impl<F: NativeFloat> From<NpyComplex<F>> for Complex<F> {
    fn from(z: NpyComplex<F>) -> Self {
        Complex::new(z.re, z.im)
    }
}

#[cfg(feature = "ndarray")]
impl<'a, F: NativeFloat> crate::view::ArrayView<'a, NpyComplex<F>> {
    /// The same elements as an `ndarray` view of `num_complex::Complex`
    /// values, without copying (features `ndarray` and `num-complex`).
    pub fn to_ndarray_complex(&self) -> ndarray::ArrayViewD<'a, Complex<F>> {
        let memory = NpyComplex::as_complex_slice(self.memory());
        crate::ext::ndarray::ndarray_view(self.shape(), self.strides(), self.order(), memory)
    }
}

#[cfg(feature = "ndarray")]
impl<'a, F: NativeFloat> crate::view::ArrayViewMut<'a, NpyComplex<F>> {
    /// Mutable form of `ArrayView::to_ndarray_complex`.
    pub fn into_ndarray_complex(self) -> ndarray::ArrayViewMutD<'a, Complex<F>> {
        let (shape, strides, order) =
            (self.shape().to_vec(), self.strides().to_vec(), self.order());
        let memory = NpyComplex::as_complex_slice_mut(self.into_memory());
        crate::ext::ndarray::ndarray_view_mut(&shape, &strides, order, memory)
    }
}

macro_rules! native_complex {
    ($($float:ty),*) => {$(
        impl Element for NpyComplex<$float> {
            fn matches(dtype: &DType) -> bool {
                is_number(dtype, ScalarKind::Complex, size_of::<Self>(), ByteOrder::NATIVE)
            }
            fn dtype() -> DType {
                scalar_dtype(ScalarKind::Complex, ByteOrder::NATIVE, size_of::<Self>())
            }
            check_free_cast!();
        }
    )*};
}

native_complex!(f32, f64);

macro_rules! explicit_order_complex {
    ($($float:ident / $native:ty: $($marker:ident => $order:expr),*;)*) => {$($(
        impl Element for NpyComplex<$float<$marker>> {
            fn matches(dtype: &DType) -> bool {
                is_number(dtype, ScalarKind::Complex, size_of::<Self>(), $order)
            }
            fn dtype() -> DType {
                scalar_dtype(ScalarKind::Complex, $order, size_of::<Self>())
            }
            check_free_cast!();
        }

        impl From<Complex<$native>> for NpyComplex<$float<$marker>> {
            fn from(z: Complex<$native>) -> Self {
                NpyComplex::new($float::new(z.re), $float::new(z.im))
            }
        }

        impl From<NpyComplex<$float<$marker>>> for Complex<$native> {
            fn from(z: NpyComplex<$float<$marker>>) -> Self {
                Complex::new(z.re.get(), z.im.get())
            }
        }
    )*)*};
}

explicit_order_complex!(
    F32 / f32: BigEndian => ByteOrder::Big, LittleEndian => ByteOrder::Little;
    F64 / f64: BigEndian => ByteOrder::Big, LittleEndian => ByteOrder::Little;
);

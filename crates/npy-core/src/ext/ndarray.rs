//! [`ndarray`] interop (feature `ndarray`): views without copying, and
//! writing any `ndarray` array the way `np.save` does.
//!
//! **Reading.** Every [`ArrayView`] (over a memory map, an
//! [`NpyArray`](crate::NpyArray) buffer, an npz member...) becomes an
//! `ndarray::ArrayViewD` of the same memory with [`ArrayView::to_ndarray`]
//! (or `From`), and every [`ArrayViewMut`] an `ArrayViewMutD` with
//! [`ArrayViewMut::into_ndarray`] / [`ArrayViewMut::as_ndarray_mut`]. The
//! strides are the file's: column-major for `fortran_order` data, and row
//! ranges of either order stay views. Use `.into_dimensionality::<Ix2>()` for
//! a fixed number of dimensions, `.to_owned()` for an owned copy.
//!
//! **Writing.** [`write_ndarray`] writes any array, contiguous or not, like
//! `np.save`: C-contiguous data as it is, Fortran-contiguous data as it is
//! with `fortran_order: True`, anything else (a slice with steps, a
//! transposed-then-sliced view, negative strides) copied in C order.
//! [`to_npy_parts`] gives the header and data without writing, e.g. for an
//! npz member.
//!
//! ```
//! use ndarray::{Array2, Ix2, ShapeBuilder, s};
//! use npy_core::ext::ndarray::write_ndarray;
//! use npy_core::io::{ReadOptions, read_npy};
//! use npy_core::Order;
//!
//! // A Fortran-ordered 2 x 3 array is written with fortran_order True, no copy.
//! let a = Array2::from_shape_vec((2, 3).f(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]).unwrap();
//! let mut file = Vec::new();
//! write_ndarray(&mut file, &a)?;
//! let array = read_npy(file.as_slice(), &ReadOptions::default())?;
//! assert_eq!(array.header().order, Order::Fortran);
//!
//! // Read back as an ndarray view of the buffer: same strides, same values.
//! let view = array.view::<f64>()?.to_ndarray().into_dimensionality::<Ix2>().unwrap();
//! assert_eq!(view, a);
//! assert_eq!(view.strides(), [1, 2]);
//!
//! // A strided slice is copied in C order.
//! let mut file = Vec::new();
//! write_ndarray(&mut file, &a.slice(s![.., ..;2]))?;
//! let array = read_npy(file.as_slice(), &ReadOptions::default())?;
//! assert_eq!((array.header().order, array.view::<f64>()?.to_vec()), (Order::C, vec![1.0, 3.0, 4.0, 6.0]));
//! # Ok::<(), npy_core::Error>(())
//! ```

use std::borrow::Cow;
use std::io::Write;

use ndarray::{ArrayBase, ArrayViewD, ArrayViewMutD, Data, Dimension, IxDyn, ShapeBuilder};
use zerocopy::IntoBytes;

use crate::element::Element;
use crate::view::{ArrayView, ArrayViewMut};
use crate::{Header, Order, Result};

/// ndarray's description of a view's geometry. An empty array addresses no
/// memory, and ndarray checks its strides against the (empty) slice, so it
/// gets ndarray's own strides instead.
fn layout(shape: &[usize], strides: &[usize], order: Order) -> ndarray::StrideShape<IxDyn> {
    let shape = IxDyn(shape);
    if shape.size() == 0 {
        match order {
            Order::C => shape.into(),
            Order::Fortran => shape.f().into(),
        }
    } else {
        shape.strides(IxDyn(strides))
    }
}

const VALID_LAYOUT: &str =
    "a view's geometry is a valid ndarray layout (strides in bounds, non-overlapping)";

/// An ndarray view of `memory` with a view's shape and strides.
pub(crate) fn ndarray_view<'a, U>(
    shape: &[usize],
    strides: &[usize],
    order: Order,
    memory: &'a [U],
) -> ArrayViewD<'a, U> {
    ArrayViewD::from_shape(layout(shape, strides, order), memory).expect(VALID_LAYOUT)
}

/// Mutable form of [`ndarray_view`].
pub(crate) fn ndarray_view_mut<'a, U>(
    shape: &[usize],
    strides: &[usize],
    order: Order,
    memory: &'a mut [U],
) -> ArrayViewMutD<'a, U> {
    ArrayViewMutD::from_shape(layout(shape, strides, order), memory).expect(VALID_LAYOUT)
}

impl<'a, T> ArrayView<'a, T> {
    /// The same elements as an `ndarray` view, without copying: same shape,
    /// same strides (Fortran-ordered data stays column-major).
    pub fn to_ndarray(&self) -> ArrayViewD<'a, T> {
        ndarray_view(self.shape(), self.strides(), self.order(), self.memory())
    }
}

impl<'a, T> ArrayViewMut<'a, T> {
    /// The same elements as a mutable `ndarray` view, for the whole lifetime.
    pub fn into_ndarray(self) -> ArrayViewMutD<'a, T> {
        let (shape, strides, order) =
            (self.shape().to_vec(), self.strides().to_vec(), self.order());
        ndarray_view_mut(&shape, &strides, order, self.into_memory())
    }

    /// The same elements as a mutable `ndarray` view, reborrowed.
    pub fn as_ndarray_mut(&mut self) -> ArrayViewMutD<'_, T> {
        let (shape, strides, order) =
            (self.shape().to_vec(), self.strides().to_vec(), self.order());
        ndarray_view_mut(&shape, &strides, order, self.memory_mut())
    }
}

impl<'a, T> From<ArrayView<'a, T>> for ArrayViewD<'a, T> {
    fn from(view: ArrayView<'a, T>) -> Self {
        view.to_ndarray()
    }
}

impl<'a, T> From<ArrayViewMut<'a, T>> for ArrayViewMutD<'a, T> {
    fn from(view: ArrayViewMut<'a, T>) -> Self {
        view.into_ndarray()
    }
}

/// The header `np.save` would write for `array`, and its data in that
/// header's memory order: borrowed when the array is C- or
/// Fortran-contiguous, copied in C order otherwise.
pub fn to_npy_parts<T, S, D>(array: &ArrayBase<S, D>) -> (Header, Cow<'_, [T]>)
where
    T: Element,
    S: Data<Elem = T>,
    D: Dimension,
{
    // np.save's rule: fortran_order = f_contiguous and not c_contiguous.
    let (order, data) = if let Some(data) = array.as_slice() {
        (Order::C, Cow::Borrowed(data))
    } else if let Some(data) = array.view().reversed_axes().to_slice() {
        (Order::Fortran, Cow::Borrowed(data))
    } else {
        (Order::C, Cow::Owned(array.iter().copied().collect()))
    };
    let header = Header {
        dtype: T::dtype(),
        order,
        shape: array.shape().to_vec(),
    };
    (header, data)
}

/// Writes `array` as an `.npy` file to `writer`, like `np.save` (see the
/// [module docs](self)). Copies only when the array is neither C- nor
/// Fortran-contiguous.
pub fn write_ndarray<W, T, S, D>(writer: W, array: &ArrayBase<S, D>) -> Result<()>
where
    W: Write,
    T: Element,
    S: Data<Elem = T>,
    D: Dimension,
{
    let (header, data) = to_npy_parts(array);
    crate::io::write_npy(writer, &header, data.as_bytes())
}

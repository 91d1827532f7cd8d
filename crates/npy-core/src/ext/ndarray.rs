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
//! **Writing.** Every `ndarray` array is an [`NpySource`], so every writer
//! (`write_npy`, `npy_mmap::save`, `NpzWriter::add`) takes it and writes it
//! like `np.save`: C-contiguous data as it is, Fortran-contiguous data as it
//! is with `fortran_order: True`, anything else (a slice with steps, a
//! transposed-then-sliced view, negative strides) copied in C order, a
//! bounded piece at a time.
//!
//! ```
//! use ndarray::{Array2, Ix2, ShapeBuilder, s};
//! use npy_core::io::{ReadOptions, read_npy, write_npy};
//! use npy_core::Order;
//!
//! // A Fortran-ordered 2 x 3 array is written with fortran_order True, no copy.
//! let a = Array2::from_shape_vec((2, 3).f(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]).unwrap();
//! let mut file = Vec::new();
//! write_npy(&mut file, &a)?;
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
//! write_npy(&mut file, &a.slice(s![.., ..;2]))?;
//! let array = read_npy(file.as_slice(), &ReadOptions::default())?;
//! assert_eq!((array.header().order, array.view::<f64>()?.to_vec()), (Order::C, vec![1.0, 3.0, 4.0, 6.0]));
//! # Ok::<(), npy_core::Error>(())
//! ```

use std::borrow::Cow;

use ndarray::{ArrayBase, ArrayViewD, ArrayViewMutD, Data, Dimension, IxDyn, ShapeBuilder};
use zerocopy::IntoBytes;

use crate::element::Element;
use crate::error::Result;
use crate::header::{Header, Order};
use crate::source::{DataChunks, NpySource, copied_chunks, saved_order};
use crate::view::{ArrayView, ArrayViewMut};

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

impl<T, S, D> NpySource for ArrayBase<S, D>
where
    T: Element,
    S: Data<Elem = T> + Sync,
    D: Dimension,
{
    fn npy_header(&self) -> Header {
        let c_contiguous = self.as_slice().is_some();
        let f_contiguous = self.view().reversed_axes().to_slice().is_some();
        let order = saved_order(c_contiguous, f_contiguous);
        Header::new(T::dtype(), order, self.shape().to_vec())
    }

    fn npy_data(&self) -> Result<DataChunks<'_>> {
        let contiguous = match self.as_slice() {
            Some(data) => Some(data),
            None => self.view().reversed_axes().to_slice(),
        };
        if let Some(data) = contiguous {
            return Ok(Box::new(std::iter::once(Cow::Borrowed(data.as_bytes()))));
        }
        Ok(copied_chunks(self.iter().copied()))
    }
}

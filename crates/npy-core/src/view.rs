//! Typed, strided views over array data held in any byte slice.
//!
//! [`ArrayView`] and [`ArrayViewMut`] reinterpret the data section of an
//! `.npy` file (a memory map, a `Vec`, a zip member) as elements of an
//! [`Element`] type, in place. The bytes are in C or Fortran order as the
//! header says; indexing and iteration are always *logical* (C order, last
//! index fastest), exactly like indexing the array NumPy loads.
//!
//! A view is a slice of elements plus a shape and per-axis strides (counted
//! in elements), so outer-axis slices of Fortran-ordered arrays, and subarray dtypes
//! (whose dimensions NumPy appends to the shape on load), are views too.
//!
//! ```
//! use npy_core::view::ArrayView;
//! use npy_core::{DType, Order};
//! use zerocopy::IntoBytes;
//!
//! // A (2, 3) Fortran-ordered array stored as 0..6 in memory.
//! let memory: Vec<i32> = (0..6).collect();
//! let view = ArrayView::<i32>::new(memory.as_bytes(), &i32::dtype(), &[2, 3], Order::Fortran)?;
//! assert_eq!(view.get(&[0, 1]), Some(&2));
//! assert_eq!(view.to_vec(), [0, 2, 4, 1, 3, 5]);
//! assert_eq!(view.slice_outer(1..2)?.to_vec(), [1, 3, 5]);
//! # use npy_core::element::Element;
//! # Ok::<(), npy_core::Error>(())
//! ```

use std::fmt;
use std::ops::RangeBounds;

use zerocopy::IntoBytes;

use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::geometry::{Geometry, Offsets, geometry_accessors};
use crate::header::{Header, Order};
use crate::index::NdIndex;

/// Checks that `T` describes `dtype`'s elements and that `bytes` holds the
/// whole array; returns the geometry and the number of data bytes used.
fn prepare<T: Element>(
    bytes: &[u8],
    dtype: &DType,
    shape: &[usize],
    order: Order,
) -> Result<(Geometry, usize)> {
    let (geometry, element) = Geometry::new(dtype, shape, order)?;
    if !T::matches(element) || element.itemsize() != size_of::<T>() {
        return Err(Error::TypeMismatch {
            found: Box::new(element.clone()),
            requested: Box::new(T::dtype()),
            rust_type: std::any::type_name::<T>(),
        });
    }
    // Cannot overflow: Geometry::new checked len × itemsize.
    let needed = geometry.len() * size_of::<T>();
    if bytes.len() < needed {
        return Err(Error::DataLength {
            expected: needed,
            actual: bytes.len(),
        });
    }
    let address = bytes.as_ptr() as usize;
    if needed > 0 && !address.is_multiple_of(align_of::<T>()) {
        return Err(Error::Misaligned {
            rust_type: std::any::type_name::<T>(),
            align: align_of::<T>(),
            address,
        });
    }
    Ok((geometry, needed))
}

/// The error for data some element of which is not a valid `T`.
fn invalid_element<T: Element>(bytes: &[u8]) -> Error {
    let index = bytes
        .chunks_exact(size_of::<T>())
        .position(|chunk| T::cast_slice(chunk).is_none())
        .unwrap_or(0);
    Error::InvalidElement {
        rust_type: std::any::type_name::<T>(),
        index,
    }
}

/// A read-only, typed view of an array's data.
///
/// Created over any byte slice with [`ArrayView::new`] or
/// [`ArrayView::from_header`]; `T` must match the dtype (see
/// [`Element`]). Trailing bytes after the array's data are ignored, like
/// NumPy ignores bytes after the data in a file.
pub struct ArrayView<'a, T> {
    /// Starts at the first element and ends at the last one.
    data: &'a [T],
    geometry: Geometry,
}

impl<T> Clone for ArrayView<'_, T> {
    fn clone(&self) -> Self {
        ArrayView {
            data: self.data,
            geometry: self.geometry.clone(),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for ArrayView<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArrayView")
            .field("shape", &self.geometry.shape())
            .field("strides", &self.geometry.strides())
            .field("order", &self.geometry.order())
            .finish_non_exhaustive()
    }
}

impl<'a, T: Element> ArrayView<'a, T> {
    /// Views `bytes` as an array of `dtype` with `shape`, stored in `order`.
    ///
    /// Errors: `T` does not match the dtype ([`Error::TypeMismatch`]), the
    /// bytes are too few ([`Error::DataLength`]) or misaligned for `T`
    /// ([`Error::Misaligned`]), the size overflows ([`Error::ArrayTooBig`]),
    /// or an element is invalid for `T` ([`Error::InvalidElement`], `bool` only).
    pub fn new(bytes: &'a [u8], dtype: &DType, shape: &[usize], order: Order) -> Result<Self> {
        let (geometry, needed) = prepare::<T>(bytes, dtype, shape, order)?;
        let bytes = &bytes[..needed];
        let data = if needed == 0 {
            &[]
        } else {
            T::cast_slice(bytes).ok_or_else(|| invalid_element::<T>(bytes))?
        };
        Ok(ArrayView { data, geometry })
    }

    /// Views `bytes` (the data section) as the array `header` describes.
    pub fn from_header(bytes: &'a [u8], header: &Header) -> Result<Self> {
        ArrayView::new(bytes, &header.dtype, &header.shape, header.order)
    }

    /// Views `data` (in memory order: column-major for Fortran order) as an
    /// array of `shape`, e.g. to write a slice with a shape.
    ///
    /// Errors: [`Error::DataLength`] unless `data` has exactly one element
    /// per index of `shape`; [`Error::ArrayTooBig`] on overflow.
    pub fn from_slice(data: &'a [T], shape: &[usize], order: Order) -> Result<Self> {
        let view = ArrayView::new(data.as_bytes(), &T::dtype(), shape, order)?;
        if view.len() != data.len() {
            return Err(Error::DataLength {
                expected: view.len() * size_of::<T>(),
                actual: size_of_val(data),
            });
        }
        Ok(view)
    }
}

impl<'a, T> ArrayView<'a, T> {
    geometry_accessors!();

    /// The element at a logical index (one entry per axis: `[i, j]`,
    /// `&[i, j]`, or `i` for a 1-d view; see [`NdIndex`]), or `None` when the
    /// index has the wrong length or is out of bounds. `view[[i, j]]`
    /// panics instead.
    #[inline]
    pub fn get<I: NdIndex>(&self, index: I) -> Option<&'a T> {
        self.geometry
            .data_offset_of(&index)
            .and_then(|offset| self.data.get(offset))
    }

    /// [`get`](Self::get), with numpy's error for a bad index ("index 3 is
    /// out of bounds for axis 0 with size 3", or a wrong rank).
    #[inline]
    pub fn try_get<I: NdIndex>(&self, index: I) -> crate::error::Result<&'a T> {
        match self
            .geometry
            .data_offset_of(&index)
            .and_then(|offset| self.data.get(offset))
        {
            Some(element) => Ok(element),
            None => Err(crate::index::index_error(
                index.entries(),
                self.geometry.shape(),
            )),
        }
    }

    /// The elements from the first to the last, in memory order.
    pub(crate) fn data(&self) -> &'a [T] {
        self.data
    }

    pub(crate) fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The indices `range` of the outer axis (axis 0, whatever the memory
    /// order: numpy's `a[range]`), as a view of the same data.
    ///
    /// Errors: [`Error::ReversedRange`] when the start is past the end,
    /// [`Error::RangeOutOfBounds`] when the end is past axis 0's length,
    /// [`Error::IndexRank`] for a 0-d array (it has no axis 0).
    pub fn slice_outer(&self, range: impl RangeBounds<usize>) -> Result<ArrayView<'a, T>> {
        let (geometry, first) = self.geometry.slice_outer(range)?;
        Ok(ArrayView {
            data: &self.data[first..first + geometry.span()],
            geometry,
        })
    }

    /// Iterates over the elements in logical (C) order.
    pub fn iter(&self) -> Iter<'a, T> {
        let inner = if self.geometry.is_c_contiguous() {
            IterInner::Contiguous(self.data.iter())
        } else {
            IterInner::Strided {
                data: self.data,
                offsets: self.geometry.offsets(),
            }
        };
        Iter { inner }
    }

    /// Whether memory order is C order without gaps.
    pub fn is_c_contiguous(&self) -> bool {
        self.geometry.is_c_contiguous()
    }

    /// Whether memory order is Fortran order without gaps.
    pub fn is_f_contiguous(&self) -> bool {
        self.geometry.is_f_contiguous()
    }

    /// All elements as one slice *in memory order*, when the view is
    /// contiguous in C or Fortran order (see [`ArrayView::is_c_contiguous`]).
    /// For work whose result does not depend on the order (a sum, a byte
    /// copy); code that reads rows from the slice wants
    /// [`as_c_slice`](Self::as_c_slice), which a Fortran-order view refuses.
    pub fn as_slice(&self) -> Option<&'a [T]> {
        (self.geometry.is_c_contiguous() || self.geometry.is_f_contiguous()).then_some(self.data)
    }

    /// All elements as one slice in logical (C) order, row after row: when
    /// the view is C-contiguous, else `None` (a Fortran-order view of more
    /// than one dimension lays its columns out one after another, so
    /// `chunks(row_len)` of its memory would not be rows).
    ///
    /// ```
    /// use npy_core::{ArrayView, DType, Order};
    /// let data = [1u8, 2, 3, 4, 5, 6];
    /// let c = ArrayView::<u8>::new(&data, &DType::parse("|u1")?, &[2, 3], Order::C)?;
    /// assert_eq!(c.as_c_slice().unwrap().chunks(3).next(), Some(&[1, 2, 3][..]));
    /// let f = ArrayView::<u8>::new(&data, &DType::parse("|u1")?, &[2, 3], Order::Fortran)?;
    /// assert!(f.as_c_slice().is_none()); // its memory is [a00, a10, a01, ...]
    /// assert!(f.as_slice().is_some());
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn as_c_slice(&self) -> Option<&'a [T]> {
        self.geometry.is_c_contiguous().then_some(self.data)
    }

    /// The memory from the first element to the last (for integrations that
    /// rebuild the view elsewhere with [`strides`](Self::strides)).
    #[cfg(feature = "ndarray")]
    pub(crate) fn memory(&self) -> &'a [T] {
        self.data
    }
}

impl<T: Clone> ArrayView<'_, T> {
    /// Copies the elements into a `Vec` in logical (C) order.
    pub fn to_vec(&self) -> Vec<T> {
        if self.geometry.is_c_contiguous() {
            self.data.to_vec()
        } else {
            self.geometry
                .offsets()
                .map(|offset| self.data[offset].clone())
                .collect()
        }
    }
}

impl<'a, T> IntoIterator for &ArrayView<'a, T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<'a, T> IntoIterator for ArrayView<'a, T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

/// Iterator over a view's elements in logical (C) order.
#[derive(Clone, Debug)]
pub struct Iter<'a, T> {
    inner: IterInner<'a, T>,
}

#[derive(Clone, Debug)]
enum IterInner<'a, T> {
    /// The data is in C order: a plain slice iterator.
    Contiguous(std::slice::Iter<'a, T>),
    /// Fortran order or an outer slice of it: elements picked by offset.
    Strided { data: &'a [T], offsets: Offsets },
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;

    fn next(&mut self) -> Option<&'a T> {
        match &mut self.inner {
            IterInner::Contiguous(iter) => iter.next(),
            IterInner::Strided { data, offsets } => offsets.next().map(|offset| &data[offset]),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.inner {
            IterInner::Contiguous(iter) => iter.size_hint(),
            IterInner::Strided { offsets, .. } => offsets.size_hint(),
        }
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}

/// A mutable, typed view of an array's data (see [`ArrayView`]).
///
/// A mutable `bool` view can only store 0 or 1, so the data stays valid for
/// NumPy too.
pub struct ArrayViewMut<'a, T> {
    data: &'a mut [T],
    geometry: Geometry,
}

impl<T: fmt::Debug> fmt::Debug for ArrayViewMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArrayViewMut")
            .field("shape", &self.geometry.shape())
            .field("strides", &self.geometry.strides())
            .field("order", &self.geometry.order())
            .finish_non_exhaustive()
    }
}

impl<'a, T: Element> ArrayViewMut<'a, T> {
    /// Views `bytes` mutably; same checks as [`ArrayView::new`].
    pub fn new(bytes: &'a mut [u8], dtype: &DType, shape: &[usize], order: Order) -> Result<Self> {
        let (geometry, needed) = prepare::<T>(bytes, dtype, shape, order)?;
        let bytes = &mut bytes[..needed];
        let data = if needed == 0 {
            &mut []
        } else if T::cast_slice(bytes).is_none() {
            return Err(invalid_element::<T>(bytes));
        } else {
            T::cast_slice_mut(bytes).ok_or_else(|| Error::InvalidElement {
                rust_type: std::any::type_name::<T>(),
                index: 0,
            })?
        };
        Ok(ArrayViewMut { data, geometry })
    }

    /// Views `bytes` (the data section) mutably as the array `header` describes.
    pub fn from_header(bytes: &'a mut [u8], header: &Header) -> Result<Self> {
        ArrayViewMut::new(bytes, &header.dtype, &header.shape, header.order)
    }
}

impl<'a, T> ArrayViewMut<'a, T> {
    /// A read-only view of the same elements.
    pub fn view(&self) -> ArrayView<'_, T> {
        ArrayView {
            data: self.data,
            geometry: self.geometry.clone(),
        }
    }

    /// Turns this into a read-only view for the whole lifetime `'a`.
    pub fn into_view(self) -> ArrayView<'a, T> {
        ArrayView {
            data: self.data,
            geometry: self.geometry,
        }
    }

    geometry_accessors!();

    /// The element at a logical index, or `None` when out of bounds (see
    /// [`ArrayView::get`]).
    #[inline]
    pub fn get<I: NdIndex>(&self, index: I) -> Option<&T> {
        self.geometry
            .data_offset_of(&index)
            .and_then(|offset| self.data.get(offset))
    }

    /// The element at a logical index, mutably, or `None` when out of
    /// bounds. `view[[i, j]] = value` panics instead.
    #[inline]
    pub fn get_mut<I: NdIndex>(&mut self, index: I) -> Option<&mut T> {
        self.geometry
            .data_offset_of(&index)
            .and_then(|offset| self.data.get_mut(offset))
    }

    pub(crate) fn data(&self) -> &[T] {
        self.data
    }

    pub(crate) fn data_mut(&mut self) -> &mut [T] {
        self.data
    }

    pub(crate) fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Iterates over the elements in logical (C) order.
    pub fn iter(&self) -> Iter<'_, T> {
        self.view().iter()
    }

    /// The indices `range` of the outer axis (axis 0), reborrowed mutably
    /// (errors as [`ArrayView::slice_outer`]).
    pub fn slice_outer_mut(
        &mut self,
        range: impl RangeBounds<usize>,
    ) -> Result<ArrayViewMut<'_, T>> {
        let (geometry, first) = self.geometry.slice_outer(range)?;
        Ok(ArrayViewMut {
            data: &mut self.data[first..first + geometry.span()],
            geometry,
        })
    }

    /// The indices `range` of the outer axis (axis 0), consuming this view
    /// (errors as [`ArrayView::slice_outer`]).
    pub fn into_slice_outer(self, range: impl RangeBounds<usize>) -> Result<ArrayViewMut<'a, T>> {
        let (geometry, first) = self.geometry.slice_outer(range)?;
        Ok(ArrayViewMut {
            data: &mut self.data[first..first + geometry.span()],
            geometry,
        })
    }

    /// All elements as one mutable slice in memory order, when contiguous
    /// (see [`ArrayView::as_slice`]; to fill rows, use
    /// [`as_c_slice_mut`](Self::as_c_slice_mut)).
    pub fn as_slice_mut(&mut self) -> Option<&mut [T]> {
        (self.geometry.is_c_contiguous() || self.geometry.is_f_contiguous())
            .then_some(&mut *self.data)
    }

    /// All elements as one mutable slice in logical (C) order, row after
    /// row, when the view is C-contiguous; `None` for a Fortran-order view
    /// (see [`ArrayView::as_c_slice`]), so that a fill by rows never lays
    /// its values across columns.
    pub fn as_c_slice_mut(&mut self) -> Option<&mut [T]> {
        self.geometry.is_c_contiguous().then_some(&mut *self.data)
    }

    /// Mutable form of [`ArrayView::memory`], reborrowed.
    #[cfg(feature = "ndarray")]
    pub(crate) fn memory_mut(&mut self) -> &mut [T] {
        self.data
    }

    /// Mutable form of [`ArrayView::memory`], for the whole lifetime `'a`.
    #[cfg(feature = "ndarray")]
    pub(crate) fn into_memory(self) -> &'a mut [T] {
        self.data
    }

    /// Calls `f` on every element in logical (C) order.
    pub fn for_each_mut(&mut self, mut f: impl FnMut(&mut T)) {
        if self.geometry.is_c_contiguous() {
            self.data.iter_mut().for_each(f);
        } else {
            for offset in self.geometry.offsets() {
                f(&mut self.data[offset]);
            }
        }
    }
}

impl<T: Clone> ArrayViewMut<'_, T> {
    /// Sets every element to `value`.
    pub fn fill(&mut self, value: T) {
        self.for_each_mut(|element| *element = value.clone());
    }

    /// Copies the elements into a `Vec` in logical (C) order.
    pub fn to_vec(&self) -> Vec<T> {
        self.view().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Bool;
    use crate::{ByteOrder, Scalar, ScalarKind};
    use zerocopy::IntoBytes;

    #[test]
    fn bool_views_validate_and_mut_bool_views_too() {
        let bytes = [0u8, 1, 1, 0];
        let v = ArrayView::<bool>::new(&bytes, &bool::dtype(), &[4], Order::C).unwrap();
        assert_eq!(v.to_vec(), [false, true, true, false]);
        let mut bad = [0u8, 1, 2, 1];
        let err = ArrayViewMut::<bool>::new(&mut bad, &bool::dtype(), &[4], Order::C).unwrap_err();
        assert!(
            matches!(err, Error::InvalidElement { index: 2, .. }),
            "{err:?}"
        );
        let v = ArrayView::<Bool>::new(&bad, &bool::dtype(), &[4], Order::C).unwrap();
        assert_eq!(
            v.iter().map(|b| b.get()).collect::<Vec<_>>(),
            [false, true, true, true]
        );
    }

    #[test]
    fn empty_data_needs_no_alignment() {
        let bytes: &[u8] = &[1];
        let v = ArrayView::<f64>::new(&bytes[1..], &f64::dtype(), &[0, 3], Order::C).unwrap();
        assert!(v.is_empty());
        assert_eq!(v.as_slice(), Some(&[][..]));
    }

    #[test]
    fn type_mismatch_keeps_both_dtypes() {
        let data = [0f32; 2];
        let err =
            ArrayView::<f64>::new(data.as_bytes(), &f32::dtype(), &[2], Order::C).unwrap_err();
        match err {
            Error::TypeMismatch {
                found,
                requested,
                rust_type,
            } => {
                assert_eq!(*found, f32::dtype());
                assert_eq!(*requested, f64::dtype());
                assert_eq!(rust_type, "f64");
            }
            other => panic!("{other:?}"),
        }
        let unicode = DType::Scalar(Scalar {
            kind: ScalarKind::Unicode,
            byte_order: ByteOrder::Little,
            itemsize: 8,
        });
        assert!(matches!(
            ArrayView::<u64>::new(&[0; 8], &unicode, &[], Order::C),
            Err(Error::TypeMismatch { .. })
        ));
    }
}

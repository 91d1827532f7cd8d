//! Typed, strided views over array data held in any byte slice.
//!
//! [`ArrayView`] and [`ArrayViewMut`] reinterpret the data section of an
//! `.npy` file (a memory map, a `Vec`, a zip member) as elements of an
//! [`Element`] type, in place. The bytes are in C or Fortran order as the
//! header says; indexing and iteration are always *logical* (C order, last
//! index fastest), exactly like indexing the array NumPy loads.
//!
//! A view is a slice of elements plus a shape and per-axis strides (counted
//! in elements), so row ranges of Fortran-ordered arrays, and subarray dtypes
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
//! assert_eq!(view.rows(1..2)?.to_vec(), [1, 3, 5]);
//! # use npy_core::element::Element;
//! # Ok::<(), npy_core::Error>(())
//! ```

use std::fmt;
use std::ops::{Bound, RangeBounds};

use zerocopy::IntoBytes;

use crate::element::Element;
use crate::pyrepr::push_shape_repr;
use crate::{DType, Error, Header, Order, Result};

/// Shape and strides of a view, and how many elements of memory it spans.
///
/// Strides are in elements and never negative, so the first logical element
/// is also the lowest in memory: views keep their data slice starting there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    shape: Vec<usize>,
    strides: Vec<usize>,
    order: Order,
    len: usize,
    span: usize,
}

/// Where each element of an array lies in its data, without the data: the
/// geometry every view uses, for readers that fetch elements themselves (a
/// stream read forward, or `pread` of a sparse file).
///
/// ```
/// use npy_core::{DType, ElementLocator, Header, Order};
/// let header = Header::new(DType::parse("<i4")?, Order::Fortran, vec![2, 3]);
/// let locator = ElementLocator::new(&header)?;
/// assert_eq!(locator.byte_offset(&[1, 2]), Some((1 + 2 * 2) * 4));
/// assert_eq!(locator.byte_offset(&[2, 0]), None);
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementLocator<'d> {
    geometry: Geometry,
    element: &'d DType,
}

impl<'d> ElementLocator<'d> {
    /// The geometry of the array `header` describes (a subarray dtype's
    /// dimensions appended to the shape, as views and numpy do).
    pub fn new(header: &'d Header) -> Result<Self> {
        let (geometry, element) = Geometry::new(&header.dtype, &header.shape, header.order)?;
        Ok(ElementLocator { geometry, element })
    }

    /// The logical shape: the header's, plus any subarray dimensions.
    pub fn shape(&self) -> &[usize] {
        self.geometry.shape()
    }

    /// The dtype of one element (the subarray's base for a subarray dtype).
    pub fn element(&self) -> &'d DType {
        self.element
    }

    /// Byte offset in the data of the element at a logical index, or `None`
    /// when the index is out of bounds.
    pub fn byte_offset(&self, index: &[usize]) -> Option<usize> {
        // In bounds, offset × itemsize < the data length, which fits.
        self.geometry
            .offset(index)
            .map(|offset| offset * self.element.itemsize())
    }
}

impl Geometry {
    /// The geometry of an array of `dtype` with the header's `shape`/`order`,
    /// and the element dtype: subarray dimensions are appended to the shape
    /// (in C order inside each outer element), as NumPy does on load.
    pub(crate) fn new<'d>(
        dtype: &'d DType,
        shape: &[usize],
        order: Order,
    ) -> Result<(Geometry, &'d DType)> {
        // An object array's data is a pickle, not elements to view.
        if dtype.has_object() {
            return Err(Error::ObjectData);
        }
        let mut element = dtype;
        let mut inner = Vec::new();
        while let DType::SubArray(base, sub) = element {
            inner.extend_from_slice(sub);
            element = base;
        }
        let logical: Vec<usize> = shape.iter().chain(&inner).copied().collect();
        let overflow = || {
            let mut text = String::new();
            push_shape_repr(&mut text, &logical);
            Error::ArrayTooBig {
                shape: text,
                itemsize: element.itemsize(),
            }
        };
        let len = logical
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(overflow)?;
        len.checked_mul(element.itemsize())
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(overflow)?;

        // Each stride is at most `len`, so saturation only happens for empty arrays,
        // whose strides are never used to address memory.
        let mut strides = vec![0; logical.len()];
        let mut unit = 1usize;
        for axis in (shape.len()..logical.len()).rev() {
            strides[axis] = unit;
            unit = unit.saturating_mul(logical[axis]);
        }
        let outer: Box<dyn Iterator<Item = usize>> = match order {
            Order::C => Box::new((0..shape.len()).rev()),
            Order::Fortran => Box::new(0..shape.len()),
        };
        for axis in outer {
            strides[axis] = unit;
            unit = unit.saturating_mul(logical[axis]);
        }
        Ok((
            Geometry {
                shape: logical,
                strides,
                order,
                len,
                span: len,
            },
            element,
        ))
    }

    fn with_shape(shape: Vec<usize>, strides: Vec<usize>, order: Order) -> Geometry {
        let len = shape.iter().product();
        let span = if len == 0 {
            0
        } else {
            1 + shape
                .iter()
                .zip(&strides)
                .map(|(&d, &s)| (d - 1) * s)
                .sum::<usize>()
        };
        Geometry {
            shape,
            strides,
            order,
            len,
            span,
        }
    }

    pub(crate) fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub(crate) fn strides(&self) -> &[usize] {
        &self.strides
    }

    pub(crate) fn order(&self) -> Order {
        self.order
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Elements of memory from the first to the last element, inclusive.
    pub(crate) fn span(&self) -> usize {
        self.span
    }

    /// Memory offset (in elements) of a logical index, if it is in bounds.
    ///
    /// Inlined across crates and branch-free per axis: random scalar reads
    /// are dominated by this arithmetic when the data is cached.
    #[inline]
    pub(crate) fn offset(&self, index: &[usize]) -> Option<usize> {
        if index.len() != self.shape.len() {
            return None;
        }
        let mut offset = 0usize;
        let mut in_bounds = true;
        for ((&i, &d), &s) in index.iter().zip(&self.shape).zip(&self.strides) {
            in_bounds &= i < d;
            // Wrapping: an out-of-bounds index may overflow, but is then discarded.
            offset = offset.wrapping_add(i.wrapping_mul(s));
        }
        in_bounds.then_some(offset)
    }

    /// The geometry of rows `range` of axis 0, and the memory offset of its first element.
    pub(crate) fn rows(&self, range: impl RangeBounds<usize>) -> Result<(Geometry, usize)> {
        let rows = self.shape.first().copied().unwrap_or(0);
        let start = match range.start_bound() {
            Bound::Included(&s) => Some(s),
            Bound::Excluded(&s) => s.checked_add(1),
            Bound::Unbounded => Some(0),
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.checked_add(1),
            Bound::Excluded(&e) => Some(e),
            Bound::Unbounded => Some(rows),
        };
        let (start, end) = match (start, end) {
            (Some(s), Some(e)) if s <= e && e <= rows && !self.shape.is_empty() => (s, e),
            (s, e) => {
                return Err(Error::RowsOutOfRange {
                    start: s.unwrap_or(usize::MAX),
                    end: e.unwrap_or(usize::MAX),
                    len: rows,
                });
            }
        };
        let mut shape = self.shape.clone();
        shape[0] = end - start;
        let geometry = Geometry::with_shape(shape, self.strides.clone(), self.order);
        let first = if geometry.len == 0 {
            0
        } else {
            start * self.strides[0]
        };
        Ok((geometry, first))
    }

    fn is_contiguous(&self, axes: impl Iterator<Item = usize>) -> bool {
        let mut expected = 1;
        for axis in axes {
            let d = self.shape[axis];
            if d != 1 && self.strides[axis] != expected {
                return false;
            }
            expected *= d;
        }
        true
    }

    /// Whether memory order equals logical (C) order with no gaps.
    pub(crate) fn is_c_contiguous(&self) -> bool {
        self.len == 0 || self.is_contiguous((0..self.shape.len()).rev())
    }

    /// Whether memory holds the elements column-major with no gaps.
    pub(crate) fn is_f_contiguous(&self) -> bool {
        self.len == 0 || self.is_contiguous(0..self.shape.len())
    }

    /// Memory offsets of every element, in logical order.
    pub(crate) fn offsets(&self) -> Offsets {
        Offsets {
            index: vec![0; self.shape.len()],
            shape: self.shape.clone(),
            strides: self.strides.clone(),
            offset: 0,
            remaining: self.len,
        }
    }
}

/// Iterator over the memory offsets of a geometry in logical order.
#[derive(Clone, Debug)]
pub(crate) struct Offsets {
    shape: Vec<usize>,
    strides: Vec<usize>,
    index: Vec<usize>,
    offset: usize,
    remaining: usize,
}

impl Iterator for Offsets {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return None;
        }
        let current = self.offset;
        self.remaining -= 1;
        if self.remaining > 0 {
            for axis in (0..self.shape.len()).rev() {
                self.index[axis] += 1;
                self.offset += self.strides[axis];
                if self.index[axis] < self.shape[axis] {
                    break;
                }
                self.offset -= self.strides[axis] * self.shape[axis];
                self.index[axis] = 0;
            }
        }
        Some(current)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Offsets {}

/// The shape accessors every view type shares, delegating to its `geometry` field.
macro_rules! geometry_accessors {
    () => {
        /// The logical shape (header shape, then any subarray dimensions).
        pub fn shape(&self) -> &[usize] {
            self.geometry.shape()
        }

        /// Distance in memory, in elements, between neighbours along each axis.
        pub fn strides(&self) -> &[usize] {
            self.geometry.strides()
        }

        /// The memory order of the underlying data.
        pub fn order(&self) -> Order {
            self.geometry.order()
        }

        /// Number of dimensions.
        pub fn ndim(&self) -> usize {
            self.geometry.shape().len()
        }

        /// Number of elements (1 for a 0-d array).
        pub fn len(&self) -> usize {
            self.geometry.len()
        }

        /// Whether the array has no elements.
        pub fn is_empty(&self) -> bool {
            self.len() == 0
        }
    };
}
pub(crate) use geometry_accessors;

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
            .field("shape", &self.geometry.shape)
            .field("strides", &self.geometry.strides)
            .field("order", &self.geometry.order)
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

    /// The element at a logical index (one entry per axis), or `None` when the
    /// index has the wrong length or is out of bounds.
    pub fn get(&self, index: &[usize]) -> Option<&'a T> {
        self.geometry
            .offset(index)
            .and_then(|offset| self.data.get(offset))
    }

    /// The rows `range` of axis 0, as a view of the same data (any order).
    pub fn rows(&self, range: impl RangeBounds<usize>) -> Result<ArrayView<'a, T>> {
        let (geometry, first) = self.geometry.rows(range)?;
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
    pub fn as_slice(&self) -> Option<&'a [T]> {
        (self.geometry.is_c_contiguous() || self.geometry.is_f_contiguous()).then_some(self.data)
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
    /// Fortran order or a row range of it: elements picked by offset.
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
            .field("shape", &self.geometry.shape)
            .field("strides", &self.geometry.strides)
            .field("order", &self.geometry.order)
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

    /// The element at a logical index, or `None` when out of bounds.
    pub fn get(&self, index: &[usize]) -> Option<&T> {
        self.geometry
            .offset(index)
            .and_then(|offset| self.data.get(offset))
    }

    /// The element at a logical index, mutably, or `None` when out of bounds.
    pub fn get_mut(&mut self, index: &[usize]) -> Option<&mut T> {
        self.geometry
            .offset(index)
            .and_then(|offset| self.data.get_mut(offset))
    }

    /// Iterates over the elements in logical (C) order.
    pub fn iter(&self) -> Iter<'_, T> {
        self.view().iter()
    }

    /// The rows `range` of axis 0, reborrowed mutably.
    pub fn rows_mut(&mut self, range: impl RangeBounds<usize>) -> Result<ArrayViewMut<'_, T>> {
        let (geometry, first) = self.geometry.rows(range)?;
        Ok(ArrayViewMut {
            data: &mut self.data[first..first + geometry.span()],
            geometry,
        })
    }

    /// The rows `range` of axis 0, consuming this view.
    pub fn into_rows(self, range: impl RangeBounds<usize>) -> Result<ArrayViewMut<'a, T>> {
        let (geometry, first) = self.geometry.rows(range)?;
        Ok(ArrayViewMut {
            data: &mut self.data[first..first + geometry.span()],
            geometry,
        })
    }

    /// All elements as one mutable slice in memory order, when contiguous.
    pub fn as_slice_mut(&mut self) -> Option<&mut [T]> {
        (self.geometry.is_c_contiguous() || self.geometry.is_f_contiguous())
            .then_some(&mut *self.data)
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

    fn geometry(shape: &[usize], order: Order) -> Geometry {
        Geometry::new(&f64::dtype(), shape, order).unwrap().0
    }

    #[test]
    fn strides_follow_order() {
        assert_eq!(geometry(&[2, 3, 4], Order::C).strides(), [12, 4, 1]);
        assert_eq!(geometry(&[2, 3, 4], Order::Fortran).strides(), [1, 2, 6]);
        assert_eq!(geometry(&[], Order::C).len(), 1);
        assert_eq!(geometry(&[3, 0], Order::C).len(), 0);
    }

    #[test]
    fn offset_rejects_out_of_bounds_and_wrong_length_without_overflow() {
        let g = geometry(&[2, 3, 4], Order::C);
        assert_eq!(g.offset(&[1, 2, 3]), Some(23));
        assert_eq!(g.offset(&[1, 3, 0]), None);
        assert_eq!(g.offset(&[usize::MAX, usize::MAX, usize::MAX]), None);
        assert_eq!(g.offset(&[1, 2]), None);
        assert_eq!(geometry(&[], Order::C).offset(&[]), Some(0));
    }

    #[test]
    fn subarray_dims_are_c_order_inside_fortran_outer() {
        let dtype = DType::SubArray(Box::new(f64::dtype()), vec![2, 3]);
        let (g, element) = Geometry::new(&dtype, &[4, 5], Order::Fortran).unwrap();
        assert_eq!(element, &f64::dtype());
        assert_eq!(g.shape(), [4, 5, 2, 3]);
        assert_eq!(g.strides(), [6, 24, 3, 1]);
        assert!(!g.is_c_contiguous() && !g.is_f_contiguous());
    }

    #[test]
    fn offsets_visit_fortran_memory_in_logical_order() {
        let g = geometry(&[2, 3], Order::Fortran);
        assert_eq!(g.offsets().collect::<Vec<_>>(), [0, 2, 4, 1, 3, 5]);
        assert_eq!(g.offsets().len(), 6);
    }

    #[test]
    fn overflow_is_an_error() {
        let err = Geometry::new(&f64::dtype(), &[usize::MAX, 2], Order::C).unwrap_err();
        assert!(matches!(err, Error::ArrayTooBig { .. }), "{err:?}");
        // Fits in elements but not in bytes.
        let err = Geometry::new(&f64::dtype(), &[usize::MAX / 4], Order::C).unwrap_err();
        assert!(matches!(err, Error::ArrayTooBig { .. }), "{err:?}");
        // Zero-size arrays with huge other dimensions are fine.
        let g = geometry(&[0, usize::MAX, usize::MAX], Order::C);
        assert_eq!(g.len(), 0);
    }

    #[test]
    fn rows_of_fortran_array_keep_strides() {
        let g = geometry(&[4, 3], Order::Fortran);
        let (rows, first) = g.rows(1..3).unwrap();
        assert_eq!(first, 1);
        assert_eq!(rows.shape(), [2, 3]);
        assert_eq!(rows.strides(), [1, 4]);
        assert_eq!(rows.span(), 10);
        assert_eq!(rows.offsets().collect::<Vec<_>>(), [0, 4, 8, 1, 5, 9]);
        let (empty, first) = g.rows(4..).unwrap();
        assert_eq!((empty.len(), empty.span(), first), (0, 0, 0));
    }

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

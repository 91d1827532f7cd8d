//! Where an array's elements lie in memory: shape, strides, order, and
//! the offsets views read from. Every view type (typed, raw) and
//! [`ElementLocator`] share this one geometry.

use std::ops::{Bound, RangeBounds};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::header::{Header, Order};
use crate::index::{NdIndex, check_range};
use crate::pyrepr::push_shape_repr;

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
    /// Whether the strides are exactly C order's (size-1 axes included):
    /// then an offset past the data means axis 0 is out of bounds, and
    /// typed views leave that check to the data slice's own.
    dense_c: bool,
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

    /// Byte offset in the data of the element at a logical index (any
    /// [`NdIndex`](crate::NdIndex)), or `None` when the index is out of bounds.
    pub fn byte_offset<I: crate::index::NdIndex>(&self, index: I) -> Option<usize> {
        // In bounds, offset × itemsize < the data length, which fits.
        self.geometry
            .offset_of(&index)
            .map(|offset| offset * self.element.itemsize())
    }

    /// [`byte_offset`](Self::byte_offset), with numpy's error for a bad
    /// index ("index 3 is out of bounds for axis 0 with size 3").
    pub fn try_byte_offset<I: crate::index::NdIndex>(&self, index: I) -> Result<usize> {
        match self.geometry.offset_of(&index) {
            Some(offset) => Ok(offset * self.element.itemsize()),
            None => Err(crate::index::index_error(index.entries(), self.shape())),
        }
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
        let dense_c = is_dense_c(&logical, &strides);
        Ok((
            Geometry {
                shape: logical,
                strides,
                order,
                len,
                span: len,
                dense_c,
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
        let dense_c = is_dense_c(&shape, &strides);
        Geometry {
            shape,
            strides,
            order,
            len,
            span,
            dense_c,
        }
    }

    /// See the field: strides exactly C order's.
    pub(crate) fn is_dense_c(&self) -> bool {
        self.dense_c
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

    /// The geometry of indices `range` of the outer axis (axis 0), and the
    /// memory offset of its first element.
    pub(crate) fn slice_outer(&self, range: impl RangeBounds<usize>) -> Result<(Geometry, usize)> {
        let Some(&len) = self.shape.first() else {
            return Err(Error::IndexRank { ndim: 0, given: 1 });
        };
        // A bound past usize::MAX (`..=usize::MAX`) saturates: still out of bounds.
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.saturating_add(1),
            Bound::Excluded(&e) => e,
            Bound::Unbounded => len,
        };
        check_range(start..end, 0, len)?;
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

/// Whether `strides` are exactly the C-order strides of `shape` (computed
/// as [`Geometry::new`] does, saturating).
fn is_dense_c(shape: &[usize], strides: &[usize]) -> bool {
    let mut expected = 1usize;
    for (&d, &s) in shape.iter().zip(strides).rev() {
        if s != expected {
            return false;
        }
        expected = expected.saturating_mul(d);
    }
    true
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

impl Geometry {
    /// Memory offset (in elements) of a logical index, if it is in bounds.
    #[inline]
    pub(crate) fn offset_of(&self, index: &impl NdIndex) -> Option<usize> {
        index.offset_in(self.shape(), self.strides())
    }

    /// [`offset_of`](Self::offset_of) for a caller that then bounds-checks
    /// the offset against data holding exactly the array (typed views):
    /// for C-order strides that check covers axis 0, one compare less a read.
    #[inline]
    pub(crate) fn data_offset_of(&self, index: &impl NdIndex) -> Option<usize> {
        if self.is_dense_c() {
            index.dense_offset_in(self.shape(), self.strides())
        } else {
            self.offset_of(index)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;

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
        assert_eq!(g.offset_of(&[1, 2, 3]), Some(23));
        assert_eq!(g.offset_of(&[1, 3, 0]), None);
        assert_eq!(g.offset_of(&[usize::MAX, usize::MAX, usize::MAX]), None);
        assert_eq!(g.offset_of(&[1, 2]), None);
        assert_eq!(geometry(&[], Order::C).offset_of(&[]), Some(0));
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
    fn outer_slices_of_fortran_array_keep_strides() {
        let g = geometry(&[4, 3], Order::Fortran);
        let (rows, first) = g.slice_outer(1..3).unwrap();
        assert_eq!(first, 1);
        assert_eq!(rows.shape(), [2, 3]);
        assert_eq!(rows.strides(), [1, 4]);
        assert_eq!(rows.span(), 10);
        assert_eq!(rows.offsets().collect::<Vec<_>>(), [0, 4, 8, 1, 5, 9]);
        let (empty, first) = g.slice_outer(4..).unwrap();
        assert_eq!((empty.len(), empty.span(), first), (0, 0, 0));
    }
}

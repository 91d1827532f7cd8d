//! Random access: indices of any rank, `view[[i, j]]`, and batched gathers.
//!
//! An [`NdIndex`] is a logical index (one entry per axis): `[usize; N]`
//! for a fixed rank, `&[usize]` (or `&[usize; N]`, `Vec<usize>`) when the
//! rank is known only at run time, and `usize` for a 1-d array. A fixed-rank
//! index is checked and turned into an offset with the loop unrolled, so a
//! read costs about what a slice index costs.
//!
//! [`ArrayView::gather`] reads many elements at once. Random reads of a
//! large array are bound by cache and TLB misses, not by arithmetic: a
//! gather checks every index first (so a bad one writes nothing), then
//! reads them in one tight loop whose loads the processor overlaps. The
//! crate has no `unsafe` code, so it cannot issue prefetch instructions
//! (`_mm_prefetch` needs `unsafe` even where SSE is always on); grouping the
//! loads by hand and sorting them by address were measured and did not pay
//! (docs/BENCHMARKS.md, "Random access").
//!
//! ```
//! use npy_core::{ArrayView, DType, Order};
//! use zerocopy::IntoBytes;
//!
//! let memory: Vec<i32> = (0..6).collect();
//! let view = ArrayView::<i32>::new(memory.as_bytes(), &i32::dtype(), &[2, 3], Order::C)?;
//! assert_eq!(view[[1, 2]], 5);
//! assert_eq!(view.get([1, 0]), Some(&3));
//! assert_eq!(view.get(&[1, 0]), Some(&3));
//! assert_eq!(view.get([2, 0]), None);
//!
//! let mut out = [0; 3];
//! view.gather(&[[1, 2], [0, 0], [1, 1]], &mut out)?;
//! assert_eq!(out, [5, 0, 4]);
//! // A bad index is an error, and nothing is written.
//! assert!(view.gather(&[[0, 1], [0, 3], [1, 1]], &mut out).is_err());
//! assert_eq!(out, [5, 0, 4]);
//!
//! // Whole outer rows (axis 0) at once.
//! let mut rows = [0; 6];
//! view.gather_outer(&[1, 0], &mut rows)?;
//! assert_eq!(rows, [3, 4, 5, 0, 1, 2]);
//! # use npy_core::element::Element;
//! # Ok::<(), npy_core::Error>(())
//! ```

use std::ops::{Index, IndexMut};

use crate::geometry::Geometry;
use crate::view::{ArrayView, ArrayViewMut};
use crate::{Error, Result};

mod sealed {
    pub trait Sealed {}
    impl Sealed for usize {}
    impl<const N: usize> Sealed for [usize; N] {}
    impl<const N: usize> Sealed for &[usize; N] {}
    impl Sealed for &[usize] {}
    impl Sealed for &Vec<usize> {}
    impl Sealed for Vec<usize> {}
}

/// A logical index into an array: one entry per axis (see the [module
/// docs](self)). Implemented for `[usize; N]`, `&[usize; N]`, `&[usize]`,
/// `&Vec<usize>`, `Vec<usize>` (so a batch may be `&[Vec<usize>]`), and
/// `usize` (a 1-d array's index); sealed.
pub trait NdIndex: sealed::Sealed {
    /// The entries, one per axis.
    fn entries(&self) -> &[usize];

    /// The memory offset (in elements) of this index in an array with
    /// `shape` and `strides`, or `None` when it has the wrong number of
    /// entries or is out of bounds.
    #[doc(hidden)]
    #[inline]
    fn offset_in(&self, shape: &[usize], strides: &[usize]) -> Option<usize> {
        slice_offset(self.entries(), shape, strides)
    }

    /// [`offset_in`](Self::offset_in) for strides exactly C order's, where
    /// the caller bounds-checks the offset against the data (which holds
    /// exactly the array): axis 0 is then checked by that, and the last
    /// stride is 1.
    #[doc(hidden)]
    #[inline]
    fn dense_offset_in(&self, shape: &[usize], strides: &[usize]) -> Option<usize> {
        self.offset_in(shape, strides)
    }
}

/// The offset of `index` along axes of `shape` and `strides` (equal
/// lengths), and whether every entry is within its axis: branch-free.
#[inline]
fn offset_and_bounds(index: &[usize], shape: &[usize], strides: &[usize]) -> (usize, bool) {
    let mut offset = 0usize;
    let mut in_bounds = true;
    for ((&i, &d), &s) in index.iter().zip(shape).zip(strides) {
        in_bounds &= i < d;
        // Wrapping: an out-of-bounds index may overflow, but is then discarded.
        offset = offset.wrapping_add(i.wrapping_mul(s));
    }
    (offset, in_bounds)
}

/// The offset of a run-time-rank index.
#[inline]
fn slice_offset(index: &[usize], shape: &[usize], strides: &[usize]) -> Option<usize> {
    if index.len() != shape.len() || index.len() != strides.len() {
        return None;
    }
    let (offset, in_bounds) = offset_and_bounds(index, shape, strides);
    in_bounds.then_some(offset)
}

/// The offset of a fixed-rank index: the rank is checked once, the axes
/// are unrolled.
#[inline]
fn array_offset<const N: usize>(
    index: &[usize; N],
    shape: &[usize],
    strides: &[usize],
) -> Option<usize> {
    let (Ok(shape), Ok(strides)) = (
        <&[usize; N]>::try_from(shape),
        <&[usize; N]>::try_from(strides),
    ) else {
        return None;
    };
    let (offset, in_bounds) = offset_and_bounds(index, shape, strides);
    in_bounds.then_some(offset)
}

/// [`array_offset`] for C-order strides, axis 0 left to the caller's data
/// bounds check (see [`NdIndex::dense_offset_in`]).
#[inline]
fn dense_array_offset<const N: usize>(
    index: &[usize; N],
    shape: &[usize],
    strides: &[usize],
) -> Option<usize> {
    let Ok(shape) = <&[usize; N]>::try_from(shape) else {
        return None;
    };
    let Some(&first) = index.first() else {
        return Some(0);
    };
    if N == 1 {
        return Some(first);
    }
    let Ok(strides) = <&[usize; N]>::try_from(strides) else {
        return None;
    };
    let (inner, in_bounds) = offset_and_bounds(&index[1..], &shape[1..], &strides[1..]);
    // Saturating: a huge axis-0 index must not wrap into the data.
    in_bounds.then(|| first.saturating_mul(strides[0]).saturating_add(inner))
}

impl NdIndex for usize {
    fn entries(&self) -> &[usize] {
        std::slice::from_ref(self)
    }

    #[inline]
    fn offset_in(&self, shape: &[usize], strides: &[usize]) -> Option<usize> {
        array_offset(&[*self], shape, strides)
    }

    #[inline]
    fn dense_offset_in(&self, shape: &[usize], strides: &[usize]) -> Option<usize> {
        dense_array_offset(&[*self], shape, strides)
    }
}

impl<const N: usize> NdIndex for [usize; N] {
    fn entries(&self) -> &[usize] {
        self
    }

    #[inline]
    fn offset_in(&self, shape: &[usize], strides: &[usize]) -> Option<usize> {
        array_offset(self, shape, strides)
    }

    #[inline]
    fn dense_offset_in(&self, shape: &[usize], strides: &[usize]) -> Option<usize> {
        dense_array_offset(self, shape, strides)
    }
}

impl<const N: usize> NdIndex for &[usize; N] {
    fn entries(&self) -> &[usize] {
        *self
    }

    #[inline]
    fn offset_in(&self, shape: &[usize], strides: &[usize]) -> Option<usize> {
        (**self).offset_in(shape, strides)
    }

    #[inline]
    fn dense_offset_in(&self, shape: &[usize], strides: &[usize]) -> Option<usize> {
        (**self).dense_offset_in(shape, strides)
    }
}

impl NdIndex for &[usize] {
    fn entries(&self) -> &[usize] {
        self
    }
}

impl NdIndex for &Vec<usize> {
    fn entries(&self) -> &[usize] {
        self
    }
}

impl NdIndex for Vec<usize> {
    fn entries(&self) -> &[usize] {
        self
    }
}

/// Why `index` does not address an element of an array of `shape`: numpy's
/// "index 3 is out of bounds for axis 0 with size 3", or a wrong rank.
pub(crate) fn index_error(index: &[usize], shape: &[usize]) -> Error {
    if index.len() != shape.len() {
        return Error::IndexRank {
            ndim: shape.len(),
            given: index.len(),
        };
    }
    let (axis, (&index, &len)) = index
        .iter()
        .zip(shape)
        .enumerate()
        .find(|(_, (i, d))| i >= d)
        .expect("an index that has no offset is out of bounds on some axis");
    Error::IndexOutOfBounds { index, axis, len }
}

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

/// Copies `data[offset(index)]` into `out` for every index, or fails on the
/// first bad index writing nothing.
fn gather<T: Copy, I: NdIndex>(
    data: &[T],
    geometry: &Geometry,
    indices: &[I],
    out: &mut [T],
) -> Result<()> {
    if indices.len() != out.len() {
        return Err(Error::OutputLength {
            expected: indices.len(),
            actual: out.len(),
        });
    }
    // Every index is checked before anything is written: the offsets are
    // computed twice, which costs arithmetic on cached indices, not misses.
    // The check is a branch-free fold (it vectorises); the first bad index
    // is looked for only when there is one.
    let in_bounds = |index: &I| {
        geometry
            .data_offset_of(index)
            .is_some_and(|at| at < data.len())
    };
    if !indices
        .iter()
        .fold(true, |all, index| all & in_bounds(index))
    {
        let bad = indices.iter().find(|index| !in_bounds(index));
        let bad = bad.map_or(&[][..], |index| index.entries());
        return Err(index_error(bad, geometry.shape()));
    }
    // A plain loop: its reads are independent, so the processor already
    // overlaps their misses; grouping them by hand, or sorting them by
    // address, measured no faster (docs/BENCHMARKS.md, "Random access").
    for (slot, index) in out.iter_mut().zip(indices) {
        let offset = geometry.data_offset_of(index).unwrap_or(0);
        if let Some(value) = data.get(offset) {
            *slot = *value;
        }
    }
    Ok(())
}

/// Copies the outer-axis slices `outer` (whole "rows" of axis 0, in logical
/// order) into `out`, one after another.
fn gather_outer<T: Copy>(
    data: &[T],
    geometry: &Geometry,
    outer: &[usize],
    out: &mut [T],
) -> Result<()> {
    let shape = geometry.shape();
    let Some(&len) = shape.first() else {
        return Err(Error::IndexRank { ndim: 0, given: 1 });
    };
    // Elements in one outer slice (len > 0 whenever an index is valid).
    let inner = geometry.len().checked_div(len).unwrap_or(0);
    let expected = outer.len().saturating_mul(inner);
    if out.len() != expected {
        return Err(Error::OutputLength {
            expected,
            actual: out.len(),
        });
    }
    if let Some(&index) = outer.iter().find(|&&i| i >= len) {
        return Err(Error::IndexOutOfBounds {
            index,
            axis: 0,
            len,
        });
    }
    if inner == 0 {
        return Ok(());
    }
    let stride = geometry.strides()[0];
    if geometry.is_c_contiguous() {
        for (&index, out) in outer.iter().zip(out.chunks_exact_mut(inner)) {
            let start = index * stride;
            out.copy_from_slice(&data[start..start + inner]);
        }
        return Ok(());
    }
    // Strided slices: every slice has the same offsets from its first
    // element, worked out once (one allocation per call, not per slice).
    let (first_slice, _) = geometry.slice_outer(0..1)?;
    let inner_offsets: Vec<usize> = first_slice.offsets().collect();
    for (&index, out) in outer.iter().zip(out.chunks_exact_mut(inner)) {
        let first = index * stride;
        for (slot, offset) in out.iter_mut().zip(&inner_offsets) {
            *slot = data[first + offset];
        }
    }
    Ok(())
}

impl<T: Copy> ArrayView<'_, T> {
    /// Copies the elements at `indices` into `out` (`out[k]` is the element
    /// at `indices[k]`): a batched random read for any rank and element
    /// type, as fast as the memory allows a loop of reads to go (see the
    /// [module docs](crate::index)).
    ///
    /// Errors, before anything is written: [`Error::OutputLength`] when
    /// `out` is not as long as `indices`; [`Error::IndexOutOfBounds`] or
    /// [`Error::IndexRank`] for the first bad index. No memory is allocated.
    pub fn gather<I: NdIndex>(&self, indices: &[I], out: &mut [T]) -> Result<()> {
        gather(self.data(), self.geometry(), indices, out)
    }

    /// Copies whole slices of the outer axis (numpy's `a[outer]` for a list
    /// of axis-0 indices) into `out`, one after another in logical (C)
    /// order: `out` holds `outer.len()` times the elements of one slice.
    ///
    /// Errors, before anything is written: [`Error::OutputLength`],
    /// [`Error::IndexOutOfBounds`] for an index past axis 0, and
    /// [`Error::IndexRank`] for a 0-d array.
    pub fn gather_outer(&self, outer: &[usize], out: &mut [T]) -> Result<()> {
        gather_outer(self.data(), self.geometry(), outer, out)
    }
}

impl<T: Copy> ArrayViewMut<'_, T> {
    /// [`ArrayView::gather`] on this view's elements.
    pub fn gather<I: NdIndex>(&self, indices: &[I], out: &mut [T]) -> Result<()> {
        gather(self.data(), self.geometry(), indices, out)
    }

    /// [`ArrayView::gather_outer`] on this view's elements.
    pub fn gather_outer(&self, outer: &[usize], out: &mut [T]) -> Result<()> {
        gather_outer(self.data(), self.geometry(), outer, out)
    }
}

/// `Index` for both typed views: `view[[i, j]]`, `view[i]` for a 1-d view,
/// `view[&index[..]]`.
macro_rules! index_views {
    ($($view:ident),*) => {$(
        /// `view[[i, j]]`, `view[i]` for a 1-d view, `view[&index[..]]`.
        ///
        /// # Panics
        ///
        /// When the index is out of bounds or has the wrong number of
        /// entries (as a slice index panics); `get` returns `None` instead.
        impl<T, I: NdIndex> Index<I> for $view<'_, T> {
            type Output = T;

            #[inline]
            fn index(&self, index: I) -> &T {
                let offset = checked_offset(self.geometry(), self.data().len(), index);
                &self.data()[offset]
            }
        }
    )*};
}

index_views!(ArrayView, ArrayViewMut);

/// `view[[i, j]] = value` (panics like [`ArrayView`]'s `Index`).
impl<T, I: NdIndex> IndexMut<I> for ArrayViewMut<'_, T> {
    #[inline]
    fn index_mut(&mut self, index: I) -> &mut T {
        let offset = checked_offset(self.geometry(), self.data().len(), index);
        &mut self.data_mut()[offset]
    }
}

/// The offset of `index` in a typed view's data of `len` elements, or
/// numpy's error as a panic.
#[inline]
#[track_caller]
fn checked_offset<I: NdIndex>(geometry: &Geometry, len: usize, index: I) -> usize {
    match geometry.data_offset_of(&index) {
        Some(offset) if offset < len => offset,
        _ => index_panic(index, geometry.shape()),
    }
}

// By value: the index is spilled to memory only on this cold path.
#[cold]
#[track_caller]
fn index_panic<I: NdIndex>(index: I, shape: &[usize]) -> ! {
    panic!("{}", index_error(index.entries(), shape))
}

//! What views do with indices: `view[[i, j]]` (`Index`, `IndexMut`) and the
//! batched gathers, [`ArrayView::gather`] and [`ArrayView::gather_outer`]
//! (documented in [`index`](crate::index)). Above the views in the stack:
//! it knows `index`'s offsets, `geometry` and `view`, and none of them
//! knows it.

use std::ops::{Index, IndexMut};

use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::index::{NdIndex, PREFETCH_DISTANCE, index_error, prefetch_runs_ahead};
use crate::view::{ArrayView, ArrayViewMut};

/// Checks `indices` for a gather of `data` into `out`: the output length,
/// then every index, before anything is written. The check is a
/// branch-free fold (it vectorises); the first bad index is looked for only
/// when there is one.
fn check_gather<T, I: NdIndex>(
    data: &[T],
    geometry: &Geometry,
    indices: &[I],
    out: &[T],
) -> Result<()> {
    if indices.len() != out.len() {
        return Err(Error::OutputLength {
            expected: indices.len(),
            actual: out.len(),
        });
    }
    // The offsets are computed again by the copy, which costs arithmetic
    // on cached indices, not misses.
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
    Ok(())
}

/// Copies `data[offset(index)]` into `out` for every index, or fails on the
/// first bad index writing nothing.
fn gather<T: Copy, I: NdIndex>(
    data: &[T],
    geometry: &Geometry,
    indices: &[I],
    out: &mut [T],
) -> Result<()> {
    check_gather(data, geometry, indices, out)?;
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

/// [`gather`], handing each element to `prefetch` [`PREFETCH_DISTANCE`]
/// reads before it is copied.
fn gather_prefetched<T: Copy, I: NdIndex>(
    data: &[T],
    geometry: &Geometry,
    indices: &[I],
    out: &mut [T],
    prefetch: impl FnMut(&T),
) -> Result<()> {
    check_gather(data, geometry, indices, out)?;
    // One loop per offset rule, chosen once: `data_offset_of`'s choice
    // inside the loop is not hoisted out of it, and costs a third of the
    // loop's instructions.
    let (shape, strides) = (geometry.shape(), geometry.strides());
    if geometry.is_dense_c() {
        copy_prefetched(data, indices, out, prefetch, |index| {
            index.dense_offset_in(shape, strides)
        });
    } else {
        copy_prefetched(data, indices, out, prefetch, |index| {
            index.offset_in(shape, strides)
        });
    }
    Ok(())
}

/// The copy loop of [`gather_prefetched`], for checked `indices` whose
/// offsets into `data` are `offset_of(index)`.
#[inline(always)]
fn copy_prefetched<T: Copy, I>(
    data: &[T],
    indices: &[I],
    out: &mut [T],
    mut prefetch: impl FnMut(&T),
    offset_of: impl Fn(&I) -> Option<usize>,
) {
    let read = |index: &I| offset_of(index).and_then(|at| data.get(at));
    let ahead = indices.get(PREFETCH_DISTANCE..).unwrap_or_default();
    for index in indices.iter().take(PREFETCH_DISTANCE) {
        if let Some(value) = read(index) {
            prefetch(value);
        }
    }
    let (body, tail) = out.split_at_mut(ahead.len());
    for ((slot, index), next) in body.iter_mut().zip(indices).zip(ahead) {
        if let Some(value) = read(next) {
            prefetch(value);
        }
        if let Some(value) = read(index) {
            *slot = *value;
        }
    }
    for (slot, index) in tail.iter_mut().zip(&indices[ahead.len()..]) {
        if let Some(value) = read(index) {
            *slot = *value;
        }
    }
}

/// Copies the outer-axis slices `outer` (whole "rows" of axis 0, in logical
/// order) into `out`, one after another; contiguous slices are handed to
/// `prefetch` (their first element) about 4 KiB of copying before they are
/// copied ([`prefetch_runs_ahead`]).
fn gather_outer<T: Copy>(
    data: &[T],
    geometry: &Geometry,
    outer: &[usize],
    out: &mut [T],
    mut prefetch: impl FnMut(&T),
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
        let distance = prefetch_runs_ahead(inner.saturating_mul(std::mem::size_of::<T>()));
        let mut ahead = outer.iter().skip(distance);
        for &index in outer.iter().take(distance) {
            if let Some(first) = data.get(index * stride) {
                prefetch(first);
            }
        }
        for (&index, out) in outer.iter().zip(out.chunks_exact_mut(inner)) {
            if let Some(first) = ahead.next().and_then(|&next| data.get(next * stride)) {
                prefetch(first);
            }
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

    /// [`gather`](Self::gather), handing each element to `prefetch`
    /// [`PREFETCH_DISTANCE`] reads before it copies it: the hook for a
    /// prefetch instruction, which this crate (it has no `unsafe` code)
    /// cannot issue, but a caller that maps memory can (npy-mmap's
    /// `MappedArray::gather` does). On a warm array bigger than the caches
    /// every read is a cache and TLB miss; a prefetch retires at once where
    /// a load waits, so more misses overlap than the reorder window of a
    /// plain loop allows. Same checks and errors as `gather`, before
    /// anything is written or prefetched.
    ///
    /// ```
    /// # use npy_core::{ArrayView, DType, Order};
    /// # use zerocopy::IntoBytes;
    /// # use npy_core::element::Element;
    /// let memory: Vec<i32> = (0..100).collect();
    /// let view = ArrayView::<i32>::new(memory.as_bytes(), &i32::dtype(), &[100], Order::C)?;
    /// let mut out = [0; 3];
    /// let mut seen = Vec::new();
    /// view.gather_prefetched(&[7usize, 3, 99], &mut out, |element| seen.push(*element))?;
    /// assert_eq!(out, [7, 3, 99]);
    /// assert_eq!(seen, [7, 3, 99]); // each element once, ahead of its copy
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn gather_prefetched<I: NdIndex>(
        &self,
        indices: &[I],
        out: &mut [T],
        prefetch: impl FnMut(&T),
    ) -> Result<()> {
        gather_prefetched(self.data(), self.geometry(), indices, out, prefetch)
    }

    /// Copies whole slices of the outer axis (numpy's `a[outer]` for a list
    /// of axis-0 indices) into `out`, one after another in logical (C)
    /// order: `out` holds `outer.len()` times the elements of one slice.
    ///
    /// Errors, before anything is written: [`Error::OutputLength`],
    /// [`Error::IndexOutOfBounds`] for an index past axis 0, and
    /// [`Error::IndexRank`] for a 0-d array.
    pub fn gather_outer(&self, outer: &[usize], out: &mut [T]) -> Result<()> {
        gather_outer(self.data(), self.geometry(), outer, out, |_| {})
    }

    /// [`gather_outer`](Self::gather_outer), handing the first element of
    /// each contiguous slice to `prefetch` about 4 KiB of copying before it
    /// is copied ([`prefetch_runs_ahead`]):
    /// the hook for a prefetch instruction, as in
    /// [`gather_prefetched`](Self::gather_prefetched) (npy-mmap's
    /// `MappedArray::gather_outer` passes one). The processor follows a
    /// slice once its copy starts, but cannot guess where the next one
    /// starts. Same checks and errors as `gather_outer`, before anything is
    /// written or prefetched.
    ///
    /// ```
    /// # use npy_core::{ArrayView, DType, Order};
    /// # use zerocopy::IntoBytes;
    /// # use npy_core::element::Element;
    /// let memory: Vec<i32> = (0..12).collect();
    /// let view = ArrayView::<i32>::new(memory.as_bytes(), &i32::dtype(), &[4, 3], Order::C)?;
    /// let (mut rows, mut seen) = ([0; 6], Vec::new());
    /// view.gather_outer_prefetched(&[3, 1], &mut rows, |first| seen.push(*first))?;
    /// assert_eq!(rows, [9, 10, 11, 3, 4, 5]);
    /// assert_eq!(seen, [9, 3]); // each row's first element, ahead of its copy
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn gather_outer_prefetched(
        &self,
        outer: &[usize],
        out: &mut [T],
        prefetch: impl FnMut(&T),
    ) -> Result<()> {
        gather_outer(self.data(), self.geometry(), outer, out, prefetch)
    }
}

impl<T: Copy> ArrayViewMut<'_, T> {
    /// [`ArrayView::gather`] on this view's elements.
    pub fn gather<I: NdIndex>(&self, indices: &[I], out: &mut [T]) -> Result<()> {
        gather(self.data(), self.geometry(), indices, out)
    }

    /// [`ArrayView::gather_outer`] on this view's elements.
    pub fn gather_outer(&self, outer: &[usize], out: &mut [T]) -> Result<()> {
        gather_outer(self.data(), self.geometry(), outer, out, |_| {})
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

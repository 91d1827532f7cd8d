//! Random access: indices of any rank, `view[[i, j]]`, and batched gathers.
//!
//! An [`NdIndex`] is a logical index (one entry per axis): `[usize; N]`
//! for a fixed rank, `&[usize]` (or `&[usize; N]`, `Vec<usize>`) when the
//! rank is known only at run time, and `usize` for a 1-d array. A fixed-rank
//! index is checked and turned into an offset with the loop unrolled, so a
//! read costs about what a slice index costs.
//!
//! [`ArrayView::gather`](crate::ArrayView::gather) reads many elements at once. Random reads of a
//! large array are bound by cache and TLB misses, not by arithmetic: a
//! gather checks every index first (so a bad one writes nothing), then
//! reads them in one tight loop whose loads the processor overlaps. The
//! crate has no `unsafe` code, so it cannot issue prefetch instructions
//! (`_mm_prefetch` needs `unsafe` even where SSE is always on):
//! [`ArrayView::gather_prefetched`](crate::ArrayView::gather_prefetched)
//! takes a hook for them instead (npy-mmap passes one; 1.3× the plain loop
//! on a warm 1 GiB file). Grouping the loads by hand and sorting them by
//! address were measured and did not pay (docs/BENCHMARKS.md, "Random
//! access").
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

use crate::error::Error;

/// How many reads ahead [`ArrayView::gather_prefetched`](crate::ArrayView::gather_prefetched) hands an element
/// to its prefetch hook: far enough that a miss to memory (about 100 ns)
/// has landed when the copy reaches it, near enough that the lines stay in
/// the first-level cache (64 × 64 bytes). Measured on AMD EPYC (Zen 5):
/// 32 to 128 all within 5 % of each other, 512 slower again.
pub const PREFETCH_DISTANCE: usize = 64;

/// How far ahead of the copy a batch of runs (rows, windows, spans) asks
/// for the start of a run, in bytes of copying: the processor's prefetcher
/// follows a run once it has started, but cannot guess where the next one
/// starts. About 4 KiB (1.4× on warm windows of 2 KiB, 1.3× on rows of
/// 512 bytes, AMD EPYC).
pub const PREFETCH_AHEAD_BYTES: usize = 4096;

/// How many runs of `run_bytes` each lie [`PREFETCH_AHEAD_BYTES`] ahead: at
/// least the next run, at most [`PREFETCH_DISTANCE`].
///
/// ```
/// use npy_core::index::prefetch_runs_ahead;
/// assert_eq!(prefetch_runs_ahead(512), 8);
/// assert_eq!(prefetch_runs_ahead(1 << 20), 1);
/// assert_eq!(prefetch_runs_ahead(8), 64);
/// ```
pub fn prefetch_runs_ahead(run_bytes: usize) -> usize {
    (PREFETCH_AHEAD_BYTES / run_bytes.max(1)).clamp(1, PREFETCH_DISTANCE)
}

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

/// Checks `range` of an axis of length `len`: the one place of the rule
/// (and its errors) for every slice of an axis, outer or growth.
pub(crate) fn check_range(
    range: std::ops::Range<usize>,
    axis: usize,
    len: usize,
) -> crate::error::Result<()> {
    if range.start > range.end {
        return Err(Error::ReversedRange {
            start: range.start,
            end: range.end,
        });
    }
    if range.end > len {
        return Err(Error::RangeOutOfBounds {
            start: range.start,
            end: range.end,
            axis,
            len,
        });
    }
    Ok(())
}

//! Planning a batch of scattered reads: which bytes to fetch, in few,
//! merged ranges.
//!
//! A gather of random elements or rows touches bytes all over an array.
//! Served one at a time, each read waits for the one before (a page fault,
//! a request). Planned, the batch becomes a sorted list of merged byte
//! ranges that can be asked for all at once: the mapped gather of
//! `npy-mmap` hands the missing pages to the kernel in one go, and
//! `npy-remote` turns the ranges into concurrent ranged requests. This is
//! the one place that rule lives.
//!
//! ```
//! use npy_core::plan::Coalesce;
//!
//! // Pages of 4 KiB, neighbours merged when they touch.
//! let pages = Coalesce { align: 4096, max_gap: 0 };
//! let ranges = pages.ranges([9000..9008, 100..108, 8192..8200, 100..108]);
//! assert_eq!(ranges, [0..4096, 8192..12288]);
//!
//! // Ranged requests: exact bytes, gaps up to 1 KiB read through.
//! let requests = Coalesce { align: 1, max_gap: 1024 };
//! assert_eq!(requests.ranges([0..8, 500..508, 4000..4008]), [0..508, 4000..4008]);
//! ```

use std::ops::Range;

/// How the byte ranges of a batch are grouped (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Coalesce {
    /// Every range is widened to multiples of this many bytes (a page for a
    /// mapping, 1 for exact bytes); 0 counts as 1.
    pub align: u64,
    /// Ranges this close (after widening) are merged, the bytes between
    /// them read through: a request costs more than a few bytes.
    pub max_gap: u64,
}

impl Coalesce {
    /// The sorted, merged ranges that cover every range of `spans` (any
    /// order, repeats and empty ranges allowed; empty ones need nothing).
    ///
    /// Memory: one entry per span of the batch, which callers bound by
    /// planning large batches a slice at a time. Alignment saturates at
    /// `u64::MAX` rather than wrapping.
    pub fn ranges(&self, spans: impl IntoIterator<Item = Range<u64>>) -> Vec<Range<u64>> {
        let align = self.align.max(1);
        let mut widened: Vec<Range<u64>> = spans
            .into_iter()
            .filter(|span| span.start < span.end)
            .map(|span| {
                let start = span.start - span.start % align;
                let end = match span.end % align {
                    0 => span.end,
                    rest => span.end.saturating_add(align - rest),
                };
                start..end
            })
            .collect();
        widened.sort_unstable_by_key(|range| range.start);
        let mut merged: Vec<Range<u64>> = Vec::with_capacity(widened.len());
        for range in widened {
            match merged.last_mut() {
                Some(last) if range.start <= last.end.saturating_add(self.max_gap) => {
                    last.end = last.end.max(range.end);
                }
                _ => merged.push(range),
            }
        }
        merged
    }
}

/// Where the bytes of `span` lie in `fetched`, the merged ranges that
/// [`Coalesce::ranges`] planned for it (sorted, disjoint): the index of the
/// range and the offset inside it. `None` when no range holds all of it.
///
/// ```
/// use npy_core::plan::locate;
/// let fetched = [0..4096, 8192..12288];
/// assert_eq!(locate(&fetched, &(9000..9008)), Some((1, 808)));
/// assert_eq!(locate(&fetched, &(4000..4100)), None);
/// ```
pub fn locate(fetched: &[Range<u64>], span: &Range<u64>) -> Option<(usize, usize)> {
    let at = fetched.partition_point(|range| range.end <= span.start);
    let range = fetched.get(at)?;
    (range.start <= span.start && span.end <= range.end)
        .then(|| (at, usize::try_from(span.start - range.start).ok()))
        .and_then(|(at, offset)| Some((at, offset?)))
}

/// Windows of rows: `length` rows from each of `starts`, along the row
/// axis (0 for C order, the last axis for Fortran order: the axis whose
/// rows are contiguous), as byte spans of the data (a training batch of a
/// token array: one contiguous run per window).
///
/// ```
/// use npy_core::{DType, Header, Order};
/// use npy_core::plan::Windows;
/// let tokens = Header::new(DType::parse("<u2")?, Order::C, vec![1000]);
/// let windows = Windows::of(&tokens, &[10, 0, 990], 10)?;
/// assert_eq!((windows.offsets, windows.width), (vec![20, 0, 1980], 20));
/// // A window past the end: numpy's words for its first missing row.
/// let error = Windows::of(&tokens, &[991], 10).unwrap_err();
/// assert_eq!(error.to_string(), "index 1000 is out of bounds for axis 0 with size 1000");
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Windows {
    /// Where each window starts, in bytes from the start of the data.
    pub offsets: Vec<usize>,
    /// Bytes in each window: `length` rows.
    pub width: usize,
}

impl Windows {
    /// The spans of `length` rows from each of `starts` of the array
    /// `header` describes; every window checked before any is planned.
    pub fn of(
        header: &crate::header::Header,
        starts: &[usize],
        length: usize,
    ) -> crate::error::Result<Windows> {
        // A 0-d array has no rows to run along (numpy: too many indices).
        let axis = header
            .row_axis()
            .ok_or(crate::error::Error::IndexRank { ndim: 0, given: 1 })?;
        let rows = header.row_count();
        // Rows are checked against the shape first: a window inside the
        // array has a size that fits (the data's length does).
        let out_of_bounds = |index: usize| crate::error::Error::IndexOutOfBounds {
            index,
            axis,
            len: rows,
        };
        for &start in starts {
            match start.checked_add(length) {
                Some(end) if end <= rows => {}
                _ if start >= rows && length > 0 => return Err(out_of_bounds(start)),
                _ => return Err(out_of_bounds(rows)),
            }
        }
        let row_bytes = header.row_bytes().unwrap_or(0);
        Ok(Windows {
            offsets: starts.iter().map(|&start| start * row_bytes).collect(),
            width: length * row_bytes,
        })
    }

    /// Each window's byte range.
    pub fn ranges(&self) -> Vec<Range<usize>> {
        self.offsets
            .iter()
            .map(|&offset| offset..offset + self.width)
            .collect()
    }
}

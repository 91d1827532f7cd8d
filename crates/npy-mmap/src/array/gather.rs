//! Typed batched random reads of a strict mapping ([`MappedArray::gather`],
//! [`MappedArray::gather_outer`], [`MappedArray::prefetch`]): indices
//! checked with numpy's messages, then planned by the read core
//! ([`super::reads`]) when the pages are cold.

use std::ops::Range;
use std::time::Instant;

use npy_core::{ArrayView, Element, NdIndex};

use super::MappedArray;
use super::reads::PLANNED_INDICES;
use crate::error::{Result, format_error};
use crate::mode::Mode;
use crate::sys::read_ahead::prefetch;

impl<M: Mode> MappedArray<M> {
    /// Copies the elements at `indices` into `out` (`out[k]` is the element
    /// at `indices[k]`, any rank, C or Fortran order): numpy's
    /// `a[tuple(indices.T)]` on `np.load(mmap_mode=...)`, at the disk's
    /// speed when the file is not in memory: a sample of its pages is
    /// checked, and when any is missing the batch is planned into page
    /// ranges that are read ahead all at once (docs/ARCHITECTURE.md).
    ///
    /// Pages already in memory take the loop of
    /// [`ArrayView::gather_prefetched`], with the processor's prefetch
    /// instruction: each element's cache line is asked for 64 reads before
    /// it is copied. Errors, before anything is read or written:
    /// the type check of [`view`](Self::view), numpy's out-of-bounds
    /// message for the first bad index, a wrong `out` length.
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-gather-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// # let path = dir.join("big.npy");
    /// # npy_mmap::save(&path, &(0..1000).map(f64::from).collect::<Vec<_>>())?;
    /// let array = npy_mmap::open(&path)?;
    /// let mut picked = [0.0f64; 3];
    /// array.gather(&[999, 0, 500], &mut picked)?;
    /// assert_eq!(picked, [999.0, 0.0, 500.0]);
    /// let error = array.gather(&[1000], &mut [0.0f64]).unwrap_err();
    /// assert!(error.to_string().ends_with("index 1000 is out of bounds for axis 0 with size 1000"));
    /// # drop(array);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn gather<T: Element, I: NdIndex>(&self, indices: &[I], out: &mut [T]) -> Result<()> {
        let view = self.view::<T>()?;
        let spans = |batch: &[I]| -> Result<Vec<Range<u64>>> {
            batch
                .iter()
                .map(|index| {
                    Ok(self.span_of(view.try_get(index.entries()).map_err(|e| self.format(e))?))
                })
                .collect()
        };
        let reads = self.reads();
        let cold = indices.len() == out.len()
            && reads.is_cold(indices, |index| {
                view.get(index.entries()).map(|e| self.span_of(e).start)
            })?;
        let started = Instant::now();
        if cold {
            // Every index checked before the first read.
            for index in indices {
                view.try_get(index.entries()).map_err(|e| self.format(e))?;
            }
            for (batch, out) in indices
                .chunks(PLANNED_INDICES)
                .zip(out.chunks_mut(PLANNED_INDICES))
            {
                reads.read_ahead(spans(batch)?);
                view.gather_prefetched(batch, out, prefetch_element)
                    .map_err(|e| self.format(e))?;
            }
        } else {
            view.gather_prefetched(indices, out, prefetch_element)
                .map_err(|e| self.format(e))?;
        }
        reads.copied(indices.len(), std::mem::size_of_val(out), cold, started);
        Ok(())
    }

    /// Copies whole slices of the outer axis (numpy's `a[outer]`) into
    /// `out`, one after another in logical order, planning the reads as
    /// [`gather`](Self::gather) does. Errors, before anything is read or
    /// written: as [`ArrayView::gather_outer`].
    pub fn gather_outer<T: Element>(&self, outer: &[usize], out: &mut [T]) -> Result<()> {
        let view = self.view::<T>()?;
        // The index of outer slice `row`'s first element: in bounds exactly
        // when the row is (the slices hold elements), with numpy's message.
        let first_index = |row: usize| {
            let mut index = vec![0; view.shape().len()];
            if let Some(first) = index.first_mut() {
                *first = row;
            }
            index
        };
        let first_of = |&row: &usize| {
            let first = view.get(first_index(row))?;
            Some(self.span_of(first).start)
        };
        let inner = out.len().checked_div(outer.len()).unwrap_or(0);
        let reads = self.reads();
        let cold = inner > 0
            && self.outer_out_len(&view, outer) == Some(out.len())
            && reads.is_cold(outer, first_of)?;
        let started = Instant::now();
        if cold {
            let mut slices = Vec::with_capacity(outer.len().min(PLANNED_INDICES));
            // Every index checked before the first read, in
            // `ArrayView::gather_outer`'s words.
            for &row in outer {
                view.try_get(first_index(row)).map_err(|e| self.format(e))?;
            }
            for (batch, out) in outer
                .chunks(PLANNED_INDICES)
                .zip(out.chunks_mut(inner * PLANNED_INDICES))
            {
                slices.clear();
                for &row in batch {
                    slices.push(view.slice_outer(row..row + 1).map_err(|e| self.format(e))?);
                }
                reads.read_ahead(slices.iter().flat_map(|slice| self.spans_of(slice)));
                view.gather_outer_prefetched(batch, out, prefetch_element)
                    .map_err(|e| self.format(e))?;
            }
        } else {
            view.gather_outer_prefetched(outer, out, prefetch_element)
                .map_err(|e| self.format(e))?;
        }
        reads.copied(outer.len(), std::mem::size_of_val(out), cold, started);
        Ok(())
    }

    /// Starts reading the pages of the elements at `indices` and returns
    /// without waiting: say what a pipeline reads next (batch k + 1 while
    /// it works on batch k), then [`gather`](Self::gather) it without
    /// waiting for the disk. Give pages back afterwards with
    /// [`advise_bytes`](Self::advise_bytes)`(…, Advice::DontNeed)`.
    /// Errors (the type check, a bad index) come before any read.
    pub fn prefetch<T: Element, I: NdIndex>(&self, indices: &[I]) -> Result<()> {
        let view = self.view::<T>()?;
        for index in indices {
            view.try_get(index.entries()).map_err(|e| self.format(e))?;
        }
        for batch in indices.chunks(PLANNED_INDICES) {
            let spans = batch
                .iter()
                .filter_map(|index| view.get(index.entries()))
                .map(|element| self.span_of(element));
            self.reads().read_ahead(spans);
        }
        Ok(())
    }

    /// Numpy's error for an index, located at this file.
    fn format(&self, error: npy_core::Error) -> crate::error::Error {
        format_error("read", self.path())(error)
    }

    /// The bytes (of [`bytes`](Self::bytes)) `element` occupies.
    fn span_of<T>(&self, element: &T) -> Range<u64> {
        // Address arithmetic only: `element` lies in `bytes()`.
        let start = (element as *const T as usize).saturating_sub(self.bytes().as_ptr() as usize);
        start as u64..(start + std::mem::size_of::<T>()) as u64
    }

    /// The bytes of an outer slice: one span when contiguous, else one per
    /// element.
    fn spans_of<'v, T>(
        &'v self,
        slice: &'v ArrayView<'_, T>,
    ) -> Box<dyn Iterator<Item = Range<u64>> + 'v> {
        match slice.as_slice() {
            Some(elements) => match (elements.first(), elements.last()) {
                (Some(first), Some(last)) => Box::new(std::iter::once(
                    self.span_of(first).start..self.span_of(last).end,
                )),
                _ => Box::new(std::iter::empty()),
            },
            None => Box::new(slice.iter().map(|element| self.span_of(element))),
        }
    }

    /// The output length `gather_outer` wants, when it has one.
    fn outer_out_len<T>(&self, view: &ArrayView<'_, T>, outer: &[usize]) -> Option<usize> {
        let len = *view.shape().first()?;
        outer
            .len()
            .checked_mul(view.len().checked_div(len).unwrap_or(0))
    }
}

/// The prefetch hook of the typed gathers: the element's cache line.
#[inline(always)]
fn prefetch_element<T>(element: &T) {
    prefetch((element as *const T).cast());
}

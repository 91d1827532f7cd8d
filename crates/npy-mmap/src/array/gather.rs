//! Batched random reads that plan their I/O, and prefetching.
//!
//! On a file in the page cache a gather is a loop of loads. On a file that
//! is not (bigger than memory, just written by another machine, evicted
//! overnight) every element the loop touches is a page fault, served one
//! after another: the disk sees a queue of one. A gather here first looks
//! at a sample of the pages it will touch (`mincore`); if any is missing,
//! it checks every index, plans the batch with npy-core's
//! [`Coalesce`](npy_core::plan::Coalesce) (sorted, deduplicated pages,
//! neighbours merged) and asks the kernel to read every planned range at
//! once (`posix_fadvise(WILLNEED)`, which returns at once), then copies in
//! the caller's order while the reads land. Batches are planned
//! [`PLANNED_INDICES`] indices at a time, so memory stays bounded whatever
//! the batch size. docs/ARCHITECTURE.md ("Random reads of cold files")
//! says why this and not threads or `io_uring`, with the measurements.

use std::fs::File;
use std::ops::Range;
use std::path::Path;

use npy_core::plan::Coalesce;
use npy_core::{ArrayView, Element, NdIndex};

use super::MappedArray;
use super::window::check_byte_range;
use crate::error::{Result, format_error, io_error};
use crate::mode::Mode;
use crate::sys::{Storage, read_ahead};

/// Indices planned (and read ahead) at a time: the plan's memory is at most
/// this many spans and ranges (16 Ki × 40 bytes = 640 KiB), and at most
/// this many pages (64 MiB of page cache) are asked for ahead of the copy.
pub(crate) const PLANNED_INDICES: usize = 16 * 1024;

/// The largest block of a file the kernel maps at one fault: Linux 6.x
/// page caches hold large folios (up to 2 MiB on ext4), so a read of one
/// 2 KiB window can map 2 MiB around it, which giving back the window's
/// own pages leaves mapped (measured: `RandomBatches` grew to 2.7 GiB of
/// RSS per worker over 2,000 batches of a warm 4 GiB file). Releases cover
/// these blocks. Dropping a shared mapping's page-table entries loses
/// nothing: the pages stay in the file and the page cache.
pub(crate) const LARGE_FOLIO: u64 = 2 << 20;

/// Pages sampled to decide whether a batch is in memory already.
const SAMPLED: usize = 8;

impl<M: Mode> MappedArray<M> {
    /// Copies the elements at `indices` into `out` (`out[k]` is the element
    /// at `indices[k]`, any rank, C or Fortran order): numpy's
    /// `a[tuple(indices.T)]` on `np.load(mmap_mode=...)`, at the disk's
    /// speed when the file is not in memory: a sample of its pages is
    /// checked, and when any is missing the batch is planned into page
    /// ranges that are read ahead all at once (docs/ARCHITECTURE.md).
    ///
    /// Pages already in memory take the plain loop of
    /// [`ArrayView::gather`]. Errors, before anything is read or written:
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
        if indices.len() == out.len()
            && !self.all_resident(indices, |index| {
                view.get(index.entries()).map(|e| self.span_of(e).start)
            })?
        {
            // Every index checked before the first read.
            for index in indices {
                view.try_get(index.entries()).map_err(|e| self.format(e))?;
            }
            for (batch, out) in indices
                .chunks(PLANNED_INDICES)
                .zip(out.chunks_mut(PLANNED_INDICES))
            {
                self.read_ahead(spans(batch)?);
                view.gather(batch, out).map_err(|e| self.format(e))?;
            }
            return Ok(());
        }
        view.gather(indices, out).map_err(|e| self.format(e))
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
        if inner > 0
            && self.outer_out_len(&view, outer) == Some(out.len())
            && !self.all_resident(outer, first_of)?
        {
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
                self.read_ahead(slices.iter().flat_map(|slice| self.spans_of(slice)));
                view.gather_outer(batch, out).map_err(|e| self.format(e))?;
            }
            return Ok(());
        }
        view.gather_outer(outer, out).map_err(|e| self.format(e))
    }

    /// The untyped twin of [`gather`](Self::gather), for any dtype: copies
    /// the `width` bytes at each byte offset of [`bytes`](Self::bytes) in
    /// `offsets` into `out`, one after another in the order given, planning
    /// the reads the same way. Errors, before anything is read or written:
    /// an offset whose bytes pass the end, a wrong `out` length.
    pub fn gather_bytes(&self, offsets: &[usize], width: usize, out: &mut [u8]) -> Result<()> {
        let bytes = self.bytes();
        self.planner()
            .gather_bytes(offsets, width, out, |offset, slot| {
                slot.copy_from_slice(&bytes[offset..offset + slot.len()]);
            })
    }

    /// Copies `length` rows from each of `starts` into `out`, one window
    /// after another (rows along the row axis: 0 for C order, the last axis
    /// for Fortran order; a window of a 1-D token array is a run of
    /// tokens): numpy's `np.stack([a[s:s + length] for s in starts])`, at
    /// the disk's speed when the file is cold (the planner reads exactly
    /// the pages the windows cover, all at once), a plain copy when warm.
    /// Errors, before anything is read: numpy's out-of-bounds message for
    /// the first row past the end, a wrong `out` length
    /// (`starts.len() * length * row_bytes()` bytes).
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-windows-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// # let path = dir.join("tokens.npy");
    /// npy_mmap::save(&path, &(0..1000u16).collect::<Vec<_>>())?;
    /// let tokens = npy_mmap::open(&path)?;
    /// let mut batch = [0u8; 2 * 4 * 2]; // 2 windows of 4 u16 tokens
    /// tokens.gather_windows(&[10, 500], 4, &mut batch)?;
    /// assert_eq!(u16::from_le_bytes([batch[8], batch[9]]), 500);
    /// # drop(tokens);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn gather_windows(&self, starts: &[usize], length: usize, out: &mut [u8]) -> Result<()> {
        let windows = self.described.windows(starts, length)?;
        self.gather_bytes(&windows.offsets, windows.width, out)
    }

    /// Starts reading the pages of the windows [`gather_windows`](Self::gather_windows)
    /// would read, and returns without waiting: the next batch's, while
    /// this one is used. Errors (a window past the end) come first.
    pub fn prefetch_windows(&self, starts: &[usize], length: usize) -> Result<()> {
        let windows = self.described.windows(starts, length)?;
        self.prefetch_bytes(&windows.ranges())
    }

    /// The untyped gather of whole spans: the bytes of each of `spans` (of
    /// [`bytes`](Self::bytes)) into `out`, one span after another, planned
    /// as [`gather_bytes`](Self::gather_bytes) is (runs of rows, windows of
    /// any length). Errors, before anything is read or written: a span
    /// past the end, an `out` whose length is not the spans' total.
    pub fn gather_spans(&self, spans: &[Range<usize>], out: &mut [u8]) -> Result<()> {
        let bytes = self.bytes();
        self.planner().gather_spans(spans, out, |offset, slot| {
            slot.copy_from_slice(&bytes[offset..offset + slot.len()]);
        })
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
            self.read_ahead(spans);
        }
        Ok(())
    }

    /// Starts reading window-relative byte `ranges` of
    /// [`bytes`](Self::bytes) (rows: [`row_byte_range`](Self::row_byte_range))
    /// and returns without waiting, as [`prefetch`](Self::prefetch) does.
    pub fn prefetch_bytes(&self, ranges: &[Range<usize>]) -> Result<()> {
        self.planner().prefetch_bytes(ranges)
    }

    /// Gives back the pages of byte `ranges` (and of the blocks around
    /// them the kernel maps at once: large folios) with `MADV_DONTNEED`, so
    /// that a reader done with them keeps its resident memory flat; the
    /// bytes stay in the file and the page cache. Refused on a
    /// copy-on-write mapping (it would discard its changes).
    pub fn release_bytes(&self, ranges: &[Range<usize>]) -> Result<()> {
        for range in ranges {
            self.check_byte_range(range)?;
        }
        for block in self.planner().release_ranges(ranges) {
            self.advise_bytes(block, crate::Advice::DontNeed)?;
        }
        Ok(())
    }

    /// The planner over this mapping: its address and length only, never
    /// a slice of its bytes (a writable mapping's bytes may be lent to
    /// foreign code, numpy, which writes them meanwhile: npy-python's
    /// `prefetch_windows` plans reads of a strict `r+` mapping with the
    /// GIL released).
    fn planner(&self) -> Planner<'_> {
        Planner {
            file: &self.file,
            path: self.path(),
            base: self.map.as_ptr(),
            len: self.map.len(),
            map_offset: self.map_offset(),
        }
    }

    /// Numpy's error for an index, located at this file.
    fn format(&self, error: npy_core::Error) -> crate::Error {
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

    /// Whether a sample of the pages `items` lead to (through `offset`, in
    /// `bytes()`)
    /// is in memory: then the batch is read by the plain loop. Items that
    /// lead nowhere (bad indices) are skipped; the loop reports them.
    fn all_resident<X>(&self, items: &[X], offset: impl Fn(&X) -> Option<u64>) -> Result<bool> {
        self.planner().all_resident(items, offset)
    }

    /// Plans `spans` (of `bytes()`) into page ranges and asks the kernel to
    /// read them all now (see [`Planner::read_ahead`]).
    fn read_ahead(&self, spans: impl IntoIterator<Item = Range<u64>>) {
        self.planner().read_ahead(spans);
    }
}

/// Planned reads of one mapping, whatever reads its bytes: the plain
/// copies of a [`MappedArray`], the atomic loads of a
/// [`ForeignArray`](crate::ForeignArray). Addresses only: it reads nothing.
pub(crate) struct Planner<'a> {
    pub(crate) file: &'a File,
    pub(crate) path: &'a Path,
    /// Where the mapping starts in memory, and its length.
    pub(crate) base: *const u8,
    pub(crate) len: usize,
    /// Where the mapping starts in the file.
    pub(crate) map_offset: u64,
}

impl Planner<'_> {
    /// Whether a sample of the pages `items` lead to (through `offset`, a
    /// byte of the mapping) is in memory: then the batch is read by the
    /// plain loop. Items that lead nowhere (bad indices) are skipped; the
    /// loop reports them.
    pub(crate) fn all_resident<X>(
        &self,
        items: &[X],
        offset: impl Fn(&X) -> Option<u64>,
    ) -> Result<bool> {
        let step = (items.len() / SAMPLED).max(1);
        for item in items.iter().step_by(step).take(SAMPLED) {
            if let Some(at) = offset(item) {
                let at = at as usize;
                if at >= self.len {
                    continue;
                }
                let resident = read_ahead::is_resident(self.base, at)
                    .map_err(io_error("ask the kernel about", self.path))?;
                if !resident {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Plans `spans` (of the mapping) into page ranges and asks the kernel
    /// to read them all now. Only hints: a refusal leaves the reads to page
    /// faults, as without a plan.
    pub(crate) fn read_ahead(&self, spans: impl IntoIterator<Item = Range<u64>>) {
        let base = self.map_offset;
        let pages = Coalesce {
            align: read_ahead::page_size() as u64,
            max_gap: 0,
        };
        let in_file = spans
            .into_iter()
            .map(|span| span.start + base..span.end + base);
        for range in pages.ranges(in_file) {
            drop(read_ahead::will_need(
                self.file,
                range.start,
                range.end - range.start,
            ));
        }
    }

    /// The `width` bytes at each of `offsets` into `out` through `copy`
    /// (which gets an offset and the slot to fill: one element, or a run
    /// of neighbouring ones at once), planned: every offset
    /// checked first, then, when a sample of the pages is missing, the
    /// pages of each batch read ahead before it is copied.
    pub(crate) fn gather_bytes(
        &self,
        offsets: &[usize],
        width: usize,
        out: &mut [u8],
        copy: impl FnMut(usize, &mut [u8]),
    ) -> Result<()> {
        if offsets.len().checked_mul(width) != Some(out.len()) {
            return Err(format_error("read", self.path)(
                npy_core::Error::OutputLength {
                    expected: offsets.len().saturating_mul(width),
                    actual: out.len(),
                },
            ));
        }
        if width == 0 {
            for &offset in offsets {
                check_byte_range(&(offset..offset), self.len)?;
            }
            return Ok(());
        }
        // Runs of neighbouring elements (windows, rows) become one span each.
        let mut spans: Vec<Range<usize>> = Vec::new();
        for &offset in offsets {
            let end = offset.saturating_add(width);
            match spans.last_mut() {
                Some(last) if last.end == offset => last.end = end,
                _ => spans.push(offset..end),
            }
        }
        self.gather_spans(&spans, out, copy)
    }

    /// The bytes of each of `spans` into `out`, one span after another,
    /// through `copy` (which gets a span's start and its slot), planned:
    /// every span checked first, then, when a sample of the pages is
    /// missing, the pages of each batch of spans read ahead before it is
    /// copied.
    pub(crate) fn gather_spans(
        &self,
        spans: &[Range<usize>],
        out: &mut [u8],
        mut copy: impl FnMut(usize, &mut [u8]),
    ) -> Result<()> {
        let mut total = 0usize;
        for span in spans {
            check_byte_range(span, self.len)?;
            total = total.saturating_add(span.len());
        }
        if total != out.len() {
            return Err(format_error("read", self.path)(
                npy_core::Error::OutputLength {
                    expected: total,
                    actual: out.len(),
                },
            ));
        }
        let cold = !self.all_resident(spans, |span| {
            (!span.is_empty()).then_some(span.start as u64)
        })?;
        let mut rest = out;
        for batch in spans.chunks(PLANNED_INDICES) {
            if cold {
                self.read_ahead(batch.iter().map(|span| span.start as u64..span.end as u64));
            }
            for span in batch {
                let (slot, tail) = rest.split_at_mut(span.len());
                copy(span.start, slot);
                rest = tail;
            }
        }
        Ok(())
    }

    /// The ranges of the mapping to give back (`MADV_DONTNEED`) so that
    /// `ranges` leave nothing mapped: widened to the [`LARGE_FOLIO`]-aligned
    /// blocks of the file around them, merged, clamped to the mapping.
    pub(crate) fn release_ranges(&self, ranges: &[Range<usize>]) -> Vec<Range<usize>> {
        let base = self.map_offset;
        let blocks = Coalesce {
            align: LARGE_FOLIO,
            max_gap: 0,
        };
        let in_file = ranges
            .iter()
            .map(|range| range.start as u64 + base..range.end as u64 + base);
        let end = base + self.len as u64;
        blocks
            .ranges(in_file)
            .into_iter()
            .map(|block| {
                let start = block.start.clamp(base, end) - base;
                let stop = block.end.clamp(base, end) - base;
                start as usize..stop as usize
            })
            .filter(|range| !range.is_empty())
            .collect()
    }

    /// Starts reading byte `ranges` of the mapping and returns without
    /// waiting; every range checked first.
    pub(crate) fn prefetch_bytes(&self, ranges: &[Range<usize>]) -> Result<()> {
        for range in ranges {
            check_byte_range(range, self.len)?;
        }
        for batch in ranges.chunks(PLANNED_INDICES) {
            self.read_ahead(
                batch
                    .iter()
                    .map(|range| range.start as u64..range.end as u64),
            );
        }
        Ok(())
    }
}

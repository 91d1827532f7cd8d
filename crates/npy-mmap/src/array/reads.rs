//! The planned-read core that every mapping type wraps (as memmap2's one
//! `MmapInner` serves all its maps): gathers of bytes, spans and windows,
//! prefetching, giving pages back, hints and flushing, written once.
//! Mapping types differ only in how bytes are copied out ([`Source`]):
//! plain loads where nothing can write the bytes while the mapping lives
//! (strict mappings), atomic loads where others may (numpy-style ones).
//!
//! On a file in the page cache a gather is a loop of copies. On a file that
//! is not (bigger than memory, just written by another machine, evicted
//! overnight) every element the loop touches is a page fault, served one
//! after another: the disk sees a queue of one. A gather here first looks
//! at a sample of the pages it will touch (`mincore`); if any is missing,
//! it plans the batch with npy-core's [`Coalesce`] (sorted, deduplicated
//! pages, neighbours merged) and asks the kernel to read every planned
//! range at once (`posix_fadvise(WILLNEED)`, which returns at once), then
//! copies in the caller's order while the reads land. Batches are planned
//! [`PLANNED_INDICES`] spans at a time, so memory stays bounded whatever
//! the batch size. docs/ARCHITECTURE.md ("Random reads of cold files")
//! says why this and not threads or `io_uring`, with the measurements.
//!
//! The sample costs a system call per page (0.7 µs each in a VM), as much
//! as copying a whole training batch of 64 windows. So a small batch
//! ([`UNSAMPLED_BATCH`](super::residency::UNSAMPLED_BATCH) items or fewer)
//! right after one that was copied at memory speed is not sampled
//! ([`Residency`](super::residency::Residency)): on a warm file the copy
//! loop runs alone. A file that went cold meanwhile costs that one batch
//! its page faults one after another (as a plain loop would); the batch is
//! then slow, and the next one is sampled and planned.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::path::Path;
use std::time::Instant;

use npy_core::index::prefetch_runs_ahead;
use npy_core::plan::Coalesce;

use super::rows::{MappedFile, check_byte_range};
use crate::advice::Advice;
use crate::error::{Result, format_error, io_error};
use crate::sys::read_ahead::{self, prefetch};
use crate::sys::{ForeignMap, Storage};

/// Spans planned (and read ahead) at a time: the plan's memory is at most
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

/// How a mapping's bytes are read: the one thing the mapping types do
/// differently.
pub(crate) trait Source {
    /// Where the mapped bytes start (an address only: nothing reads it).
    fn base(&self) -> *const u8;
    /// How many bytes are mapped.
    fn len(&self) -> usize;
    /// Copies the `out.len()` bytes at `offset` (in bounds: checked by the
    /// caller) into `out`.
    fn copy(&self, offset: usize, out: &mut [u8]);
    /// Passes a hint for `range` (in bounds) to the kernel.
    fn advise(&self, advice: Advice, range: Range<usize>) -> io::Result<()>;
    /// Writes back the changes of `len` bytes at `offset` and waits;
    /// nothing to do unless the bytes reach the file.
    fn flush(&self, offset: usize, len: usize) -> io::Result<()>;
}

/// Strict mappings: nothing writes their bytes while a `&self` lives (the
/// data lock excludes every other writer, and writing here needs `&mut`),
/// so a plain copy of the slice.
impl<S: Storage> Source for S {
    /// The address only, never a slice of the bytes: a writable mapping's
    /// bytes may be lent to foreign code (numpy), which writes them while
    /// npy-python plans reads (`prefetch_windows` with the GIL released).
    fn base(&self) -> *const u8 {
        Storage::as_ptr(self)
    }

    fn len(&self) -> usize {
        Storage::len(self)
    }

    fn copy(&self, offset: usize, out: &mut [u8]) {
        copy_bytes(&self.bytes()[offset..offset + out.len()], out);
    }

    fn advise(&self, advice: Advice, range: Range<usize>) -> io::Result<()> {
        Storage::advise(self, advice, range)
    }

    fn flush(&self, offset: usize, len: usize) -> io::Result<()> {
        Storage::flush_range(self, offset, len)
    }
}

/// `out.copy_from_slice(from)` (equal lengths), with the element widths
/// as fixed-size copies: one load and one store where `copy_from_slice` of
/// a length known only at run time calls `memcpy` (a gather of 8-byte
/// elements as spans, Python's `take`, copies one span per element).
#[inline]
fn copy_bytes(from: &[u8], out: &mut [u8]) {
    fn fixed<const N: usize>(from: &[u8], out: &mut [u8]) -> bool {
        match (<&[u8; N]>::try_from(from), <&mut [u8; N]>::try_from(out)) {
            (Ok(from), Ok(out)) => {
                *out = *from;
                true
            }
            _ => false,
        }
    }
    let done = match out.len() {
        1 => fixed::<1>(from, out),
        2 => fixed::<2>(from, out),
        4 => fixed::<4>(from, out),
        8 => fixed::<8>(from, out),
        16 => fixed::<16>(from, out),
        _ => false,
    };
    if !done {
        out.copy_from_slice(from);
    }
}

/// numpy-style mappings: others may write the bytes at any time, so
/// atomic loads, never a `&[u8]`.
impl Source for ForeignMap {
    fn base(&self) -> *const u8 {
        self.as_ptr()
    }

    fn len(&self) -> usize {
        ForeignMap::len(self)
    }

    fn copy(&self, offset: usize, out: &mut [u8]) {
        // In bounds (checked by the caller), so it always copies.
        let _ = self.load(offset, out);
    }

    fn advise(&self, advice: Advice, range: Range<usize>) -> io::Result<()> {
        ForeignMap::advise(self, advice, range)
    }

    fn flush(&self, offset: usize, len: usize) -> io::Result<()> {
        self.flush_range(offset, len)
    }
}

/// Planned reads of one mapping: its source, its file (for read-ahead),
/// and what it maps.
pub(crate) struct Reads<'a, S: Source> {
    pub(crate) source: &'a S,
    pub(crate) file: &'a File,
    pub(crate) described: &'a MappedFile,
}

impl<S: Source> Reads<'_, S> {
    fn path(&self) -> &Path {
        &self.described.path
    }

    /// Where the mapping starts in the file.
    fn map_offset(&self) -> u64 {
        self.described.mapped.bytes.start
    }

    fn len(&self) -> usize {
        self.source.len()
    }

    /// Whether a sample of the pages `items` lead to (through `offset`, a
    /// byte of the mapping) is in memory: then the batch is read by the
    /// plain loop. Items that lead nowhere (bad indices) are skipped; the
    /// loop reports them.
    fn all_resident<X>(&self, items: &[X], offset: impl Fn(&X) -> Option<u64>) -> Result<bool> {
        let step = (items.len() / SAMPLED).max(1);
        for item in items.iter().step_by(step).take(SAMPLED) {
            if let Some(at) = offset(item) {
                let at = at as usize;
                if at >= self.len() {
                    continue;
                }
                let resident = read_ahead::is_resident(self.source.base(), at)
                    .map_err(io_error("ask the kernel about", self.path()))?;
                if !resident {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Whether a batch of `items` should be planned: the residency sample
    /// of [`all_resident`](Self::all_resident) found a page missing. A
    /// small batch after a warm one is not sampled
    /// ([`Residency`](super::residency::Residency)). Time its copy and pass
    /// the time to [`copied`](Self::copied).
    pub(crate) fn is_cold<X>(
        &self,
        items: &[X],
        offset: impl Fn(&X) -> Option<u64>,
    ) -> Result<bool> {
        if self.described.residency.may_skip_sample(items.len()) {
            return Ok(false);
        }
        Ok(!self.all_resident(items, offset)?)
    }

    /// Records a batch of `items` items and `bytes` bytes copied since
    /// `started`, `planned` or not: what the next batch's
    /// [`is_cold`](Self::is_cold) goes by.
    pub(crate) fn copied(&self, items: usize, bytes: usize, planned: bool, started: Instant) {
        self.described
            .residency
            .record(items, bytes, planned, started.elapsed());
    }

    /// Plans `spans` (of the mapping) into page ranges and asks the kernel
    /// to read them all now. Only hints: a refusal leaves the reads to page
    /// faults, as without a plan.
    pub(crate) fn read_ahead(&self, spans: impl IntoIterator<Item = Range<u64>>) {
        let base = self.map_offset();
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

    /// The `width` bytes at each of `offsets` into `out`, planned: every
    /// offset checked first, runs of neighbouring elements copied as one
    /// span, and, when a sample of the pages is missing, the pages of each
    /// batch read ahead before it is copied.
    pub(crate) fn gather_bytes(
        &self,
        offsets: &[usize],
        width: usize,
        out: &mut [u8],
    ) -> Result<()> {
        if offsets.len().checked_mul(width) != Some(out.len()) {
            return Err(format_error("read", self.path())(
                npy_core::Error::OutputLength {
                    expected: offsets.len().saturating_mul(width),
                    actual: out.len(),
                },
            ));
        }
        if width == 0 {
            for &offset in offsets {
                check_byte_range(&(offset..offset), self.len())?;
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
        self.gather_spans(&spans, out)
    }

    /// The bytes of each of `spans` into `out`, one span after another,
    /// planned: every span checked first, then, when a sample of the pages
    /// is missing, the pages of each batch of spans read ahead before it is
    /// copied.
    pub(crate) fn gather_spans(&self, spans: &[Range<usize>], out: &mut [u8]) -> Result<()> {
        let mut total = 0usize;
        for span in spans {
            check_byte_range(span, self.len())?;
            total = total.saturating_add(span.len());
        }
        if total != out.len() {
            return Err(format_error("read", self.path())(
                npy_core::Error::OutputLength {
                    expected: total,
                    actual: out.len(),
                },
            ));
        }
        let cold = self.is_cold(spans, |span| {
            (!span.is_empty()).then_some(span.start as u64)
        })?;
        let started = Instant::now();
        let mut rest = out;
        for batch in spans.chunks(PLANNED_INDICES) {
            if cold {
                self.read_ahead(batch.iter().map(|span| span.start as u64..span.end as u64));
            }
            // The first line of a span some spans ahead is asked for while
            // this one is copied: about 4 KiB of copying ahead (npy-core's
            // rule for runs), at most 64 spans (8-byte elements: Python's
            // `take`).
            let base = self.source.base();
            let average = total.checked_div(spans.len()).unwrap_or(0);
            let distance = prefetch_runs_ahead(average);
            let mut ahead = batch.iter().skip(distance);
            for span in batch {
                if let Some(following) = ahead.next() {
                    prefetch(base.wrapping_add(following.start));
                }
                let (slot, tail) = rest.split_at_mut(span.len());
                self.source.copy(span.start, slot);
                rest = tail;
            }
        }
        self.copied(spans.len(), total, cold, started);
        Ok(())
    }

    /// `length` rows from each of `starts` into `out`, one window after
    /// another.
    pub(crate) fn gather_windows(
        &self,
        starts: &[usize],
        length: usize,
        out: &mut [u8],
    ) -> Result<()> {
        let windows = self.described.windows(starts, length)?;
        self.gather_bytes(&windows.offsets, windows.width, out)
    }

    /// Starts reading byte `ranges` of the mapping and returns without
    /// waiting; every range checked first.
    pub(crate) fn prefetch_bytes(&self, ranges: &[Range<usize>]) -> Result<()> {
        for range in ranges {
            check_byte_range(range, self.len())?;
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

    pub(crate) fn prefetch_windows(&self, starts: &[usize], length: usize) -> Result<()> {
        let windows = self.described.windows(starts, length)?;
        self.prefetch_bytes(&windows.ranges())
    }

    /// Gives back the pages of byte `ranges`, and of the [`LARGE_FOLIO`]
    /// blocks around them, with `MADV_DONTNEED`; every range checked first.
    pub(crate) fn release_bytes(&self, ranges: &[Range<usize>]) -> Result<()> {
        for range in ranges {
            check_byte_range(range, self.len())?;
        }
        for block in self.release_ranges(ranges) {
            self.advise_bytes(block, Advice::DontNeed)?;
        }
        Ok(())
    }

    pub(crate) fn release_windows(&self, starts: &[usize], length: usize) -> Result<()> {
        let windows = self.described.windows(starts, length)?;
        self.release_bytes(&windows.ranges())
    }

    /// The ranges of the mapping to give back so that `ranges` leave
    /// nothing mapped: widened to the [`LARGE_FOLIO`]-aligned blocks of the
    /// file around them, merged, clamped to the mapping.
    fn release_ranges(&self, ranges: &[Range<usize>]) -> Vec<Range<usize>> {
        let base = self.map_offset();
        let blocks = Coalesce {
            align: LARGE_FOLIO,
            max_gap: 0,
        };
        let in_file = ranges
            .iter()
            .map(|range| range.start as u64 + base..range.end as u64 + base);
        let end = base + self.len() as u64;
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

    pub(crate) fn advise_bytes(&self, range: Range<usize>, advice: Advice) -> Result<()> {
        check_byte_range(&range, self.len())?;
        self.source
            .advise(advice, range)
            .map_err(io_error("advise the kernel about", self.path()))
    }

    pub(crate) fn flush_bytes(&self, range: Range<usize>) -> Result<()> {
        check_byte_range(&range, self.len())?;
        self.source
            .flush(range.start, range.len())
            .map_err(io_error("flush", self.path()))
    }
}

/// The public face of the core, documented once for every mapping type
/// that has a `reads()` (a [`Reads`] over it).
macro_rules! planned_reads {
    () => {
        /// Copies the `width` bytes at each byte offset of the mapped data
        /// in `offsets` into `out`, one after another in the order given:
        /// the untyped gather, for any dtype, planned (a cold batch reads
        /// its pages ahead all at once; runs of neighbouring offsets are
        /// copied as one span). Strict mappings copy plainly, numpy-style
        /// ones with atomic loads (others may write meanwhile). Errors,
        /// before anything is read: an offset whose bytes pass the end, a
        /// wrong `out` length.
        pub fn gather_bytes(
            &self,
            offsets: &[usize],
            width: usize,
            out: &mut [u8],
        ) -> $crate::error::Result<()> {
            self.reads().gather_bytes(offsets, width, out)
        }

        /// The bytes of each of `spans` of the mapped data into `out`, one
        /// span after another, planned as
        /// [`gather_bytes`](Self::gather_bytes) is (runs of rows, windows of
        /// any length). Errors, before anything is read: a span past the
        /// end, an `out` whose length is not the spans' total.
        pub fn gather_spans(
            &self,
            spans: &[std::ops::Range<usize>],
            out: &mut [u8],
        ) -> $crate::error::Result<()> {
            self.reads().gather_spans(spans, out)
        }

        /// Copies `length` rows from each of `starts` into `out`, one
        /// window after another (rows along the row axis: 0 for C order,
        /// the last axis for Fortran order; a window of a 1-D token array
        /// is a run of tokens): numpy's `np.stack([a[s:s + length] for s in
        /// starts])`, at the disk's speed when the file is cold (the
        /// planner reads exactly the pages the windows cover, all at
        /// once), a plain copy when warm. Errors, before anything is read:
        /// numpy's out-of-bounds message for the first row past the end, a
        /// wrong `out` length (`starts.len() * length * row_bytes()` bytes).
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
        pub fn gather_windows(
            &self,
            starts: &[usize],
            length: usize,
            out: &mut [u8],
        ) -> $crate::error::Result<()> {
            self.reads().gather_windows(starts, length, out)
        }

        /// Starts reading byte `ranges` of the mapped data (rows:
        /// `row_byte_range`) and returns without waiting: say what a
        /// pipeline reads next while it works on what it has. Every range
        /// is checked first.
        pub fn prefetch_bytes(
            &self,
            ranges: &[std::ops::Range<usize>],
        ) -> $crate::error::Result<()> {
            self.reads().prefetch_bytes(ranges)
        }

        /// Starts reading the pages of the windows
        /// [`gather_windows`](Self::gather_windows) would read, and returns
        /// without waiting: the next batch's, while this one is used.
        /// Errors (a window past the end) come first.
        pub fn prefetch_windows(
            &self,
            starts: &[usize],
            length: usize,
        ) -> $crate::error::Result<()> {
            self.reads().prefetch_windows(starts, length)
        }

        /// Gives back the pages of byte `ranges` (and of the blocks around
        /// them the kernel maps at once: large folios, up to 2 MiB) with
        /// `MADV_DONTNEED`, so that a reader done with them keeps its
        /// resident memory flat; the bytes stay in the file and the page
        /// cache, and the next read maps them again. Every range is checked
        /// first. Refused on a copy-on-write mapping (it would discard its
        /// changes).
        pub fn release_bytes(
            &self,
            ranges: &[std::ops::Range<usize>],
        ) -> $crate::error::Result<()> {
            self.reads().release_bytes(ranges)
        }

        /// Gives back the pages of those windows, as
        /// [`release_bytes`](Self::release_bytes) does: a sampler that is
        /// done with a batch keeps its resident memory flat.
        pub fn release_windows(
            &self,
            starts: &[usize],
            length: usize,
        ) -> $crate::error::Result<()> {
            self.reads().release_windows(starts, length)
        }

        /// Passes an access-pattern hint for the whole mapping to the
        /// kernel. `DontNeed` is refused on a copy-on-write mapping (it
        /// would discard its changes).
        pub fn advise(&self, advice: $crate::advice::Advice) -> $crate::error::Result<()> {
            self.advise_bytes(0..self.reads().source.len(), advice)
        }

        /// Passes a hint for byte `range` of the mapped data to the kernel.
        pub fn advise_bytes(
            &self,
            range: std::ops::Range<usize>,
            advice: $crate::advice::Advice,
        ) -> $crate::error::Result<()> {
            self.reads().advise_bytes(range, advice)
        }
    };
}

pub(crate) use planned_reads;

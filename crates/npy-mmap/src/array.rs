//! [`MappedArray`]: an `.npy` file (or a range of its rows) mapped into memory.

#[cfg(windows)]
use std::fs::File;
use std::ops::Range;
use std::path::Path;

use npy_core::{ArrayView, ArrayViewMut, Element, Header, Layout, RawView};

use crate::advice::Advice;
use crate::error::{Error, ErrorKind, Result, format_error, io_error};
use crate::lock::{Mapping, TrackedFile};
use crate::mode::{Mode, ReadWrite, Writable};
use crate::sys::{self, Storage, StorageMut};

mod gather;
mod reads;
mod residency;
mod rows;

pub(crate) use reads::{Reads, planned_reads};
pub(crate) use rows::{MapRequest, MappedRows, check_byte_range};
pub(crate) use rows::{MappedFile, mapped_file_accessors};

/// What a [`MappedArray::fill_blocks`] function returns: any error (`?`
/// converts it), which stops the fill and comes back as
/// [`ErrorKind::Fill`](crate::ErrorKind::Fill).
pub type FillResult = std::result::Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// An `.npy` file memory-mapped in mode `M`, or a range of its rows.
///
/// The header is parsed at open; the data is never read until you touch it.
/// Typed access goes through npy-core's views ([`view`](Self::view),
/// [`view_mut`](Self::view_mut)); raw access through [`bytes`](Self::bytes)
/// and [`bytes_mut`](Self::bytes_mut). Writing methods exist only for the
/// writable modes, flushing only for [`ReadWrite`].
///
/// The file stays open and holds its locks until the value is dropped: the
/// structure lock shared, and the data lock of the mapped bytes (see
/// [`Locking`](crate::Locking) and docs/SAFETY.md): while it lives, no other
/// mapping made through this crate, in any process, can write bytes this
/// one views, or view bytes this one writes.
#[derive(Debug)]
pub struct MappedArray<M: Mode = crate::mode::ReadOnly> {
    // The mapping and its lock, dropped in one step (see `Mapping`). The
    // file is never lent out (see `DataLock::file`): it is held open for
    // its locks, and used only to start writeback and read through holes.
    mapping: Mapping<M::Map>,
    described: MappedFile,
    file_len: u64,
}

impl<M: Mode> MappedArray<M> {
    /// Maps the data (or a range of its rows) of an open file whose header has
    /// been parsed and whose structure lock is held shared: takes the data
    /// lock of the mapped bytes first.
    pub(crate) fn map(
        file: TrackedFile,
        path: &Path,
        header: Header,
        layout: Layout,
        request: &MapRequest,
    ) -> Result<MappedArray<M>> {
        let (mapped, lock) = MappedRows::lock(file, path, &header, &layout, request, M::ACCESS)?;
        let file_len = lock.grant().file_len();
        let mapping = lock
            .map(sys::map_data::<M::Map>)
            .map_err(io_error("map", path))?;
        let array = MappedArray {
            mapping,
            described: MappedFile::new(path, header, layout, mapped),
            file_len,
        };
        match request.advice {
            // At open nothing has been read yet: the pages are mapped in
            // ahead of the reads, and the open still costs microseconds.
            Some(Advice::PopulateRead) => {
                let map: &M::Map = array.mapping.map();
                map.populate_ahead(0..map.len())
                    .map_err(io_error("advise the kernel about", path))?
            }
            Some(advice) => array.advise(advice)?,
            None => {}
        }
        Ok(array)
    }

    mapped_file_accessors!();

    /// Length of the file when it was opened.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Bytes after the end of the array data (numpy ignores them, and so do
    /// we; a non-zero value may mean the file was written by something else).
    pub fn trailing_bytes(&self) -> u64 {
        self.file_len - self.layout().data_end() as u64
    }

    /// The mapped array data, in file order.
    pub fn bytes(&self) -> &[u8] {
        self.mapping.map().bytes()
    }

    /// The mapped data as a typed, shaped view (the rows' shape for a range of rows).
    ///
    /// `T` must match the dtype: a native primitive (`f64`, `i32`, ...) for
    /// native-endian data, which also needs the data offset aligned for `T`
    /// (every file numpy writes is); a `zerocopy::byteorder` type
    /// (`F64<BigEndian>`, ...) for any byte order and any alignment. A
    /// mismatch is an error, never a panic. Build the view once and index it
    /// many times: `view[[i, j]]` and `view.get([i, j])` honour Fortran
    /// order, and `view.gather(&indices, &mut out)` reads a batch.
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-view-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// # let path = dir.join("grid.npy");
    /// use npy_mmap::CreateOptions;
    /// use npy_core::DType;
    /// let mut array = CreateOptions::new(DType::parse("<f8")?, [100, 3]).create(&path)?;
    /// array.view_mut::<f64>()?[[7, 2]] = 1.5;
    /// drop(array); // a writable mapping and a plain view may not overlap
    /// let array = npy_mmap::open(&path)?;
    /// let view = array.view::<f64>()?;
    /// assert_eq!(view[[7, 2]], 1.5);
    /// let mut picked = [0.0; 2];
    /// view.gather(&[[7, 2], [0, 0]], &mut picked)?;
    /// assert_eq!(picked, [1.5, 0.0]);
    /// # drop(view);
    /// # drop(array);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn view<T: Element>(&self) -> Result<ArrayView<'_, T>> {
        ArrayView::new(
            self.mapping.map().bytes(),
            self.dtype(),
            self.shape(),
            self.order(),
        )
        .map_err(format_error("view", self.path()))
    }

    /// The mapped data as raw elements (any dtype, structured ones included),
    /// with field access by name.
    pub fn raw_view(&self) -> Result<RawView<'_>> {
        RawView::new(
            self.mapping.map().bytes(),
            self.dtype(),
            self.shape(),
            self.order(),
        )
        .map_err(format_error("view", self.path()))
    }

    planned_reads!();

    /// The read core over this mapping (plain copies: nothing writes these
    /// bytes while `&self` lives).
    pub(crate) fn reads(&self) -> Reads<'_, M::Map> {
        Reads {
            source: self.mapping.map(),
            file: self.mapping.file(),
            described: &self.described,
        }
    }

    /// Passes a hint for mapping-relative `rows` to the kernel: e.g.
    /// [`Advice::PopulateWrite`] on the next chunk a worker will fill, or
    /// [`Advice::DontNeed`] on the chunk it just finished.
    pub fn advise_rows(&self, rows: Range<usize>, advice: Advice) -> Result<()> {
        let range = self.row_byte_range(rows)?;
        self.advise_bytes(range, advice)
    }

    fn check_byte_range(&self, range: &Range<usize>) -> Result<()> {
        rows::check_byte_range(range, self.mapping.map().len())
    }

    /// Whether the mapped data has holes: ranges of a sparse file with no
    /// disk blocks behind them (a file made by
    /// [`CreateOptions::create`](crate::CreateOptions::create) whose rows
    /// were never all written).
    ///
    /// Holes read as zeros, but through a mapping a read of a hole needs a
    /// page, and on a full filesystem that has none to give (tmpfs, which
    /// allocates memory even to read a hole) the kernel kills the reading
    /// process with SIGBUS. [`read_bytes_at`](Self::read_bytes_at) reads
    /// through the file instead, where a hole is plain zeros and a full disk
    /// cannot hurt. One `lseek(SEEK_HOLE)`; filesystems that cannot tell
    /// report no holes.
    pub fn has_holes(&self) -> Result<bool> {
        // Where rustix offers SEEK_HOLE.
        #[cfg(any(
            target_os = "linux",
            target_os = "android",
            target_os = "freebsd",
            target_vendor = "apple"
        ))]
        {
            let start = self.map_offset();
            let end = start + self.bytes().len() as u64;
            if start == end {
                return Ok(false);
            }
            match rustix::fs::seek(self.mapping.file(), rustix::fs::SeekFrom::Hole(start)) {
                Ok(hole) => Ok(hole < end),
                // Not supported here: assume the data is all there.
                Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOTSUP) => Ok(false),
                Err(errno) => Err(io_error("look for holes in", self.path())(errno.into())),
            }
        }
        #[cfg(not(any(
            target_os = "linux",
            target_os = "android",
            target_os = "freebsd",
            target_vendor = "apple"
        )))]
        Ok(false)
    }

    /// Reads `buf.len()` bytes of the data, starting `offset` bytes into
    /// [`bytes`](Self::bytes), through the file (`pread`) rather than the
    /// mapping: for files with holes (see [`has_holes`](Self::has_holes)).
    pub fn read_bytes_at(&self, offset: usize, buf: &mut [u8]) -> Result<()> {
        let range = offset..offset.saturating_add(buf.len());
        self.check_byte_range(&range)?;
        let at = self.map_offset() + offset as u64;
        #[cfg(unix)]
        let read = std::os::unix::fs::FileExt::read_exact_at(self.mapping.file(), buf, at);
        #[cfg(windows)]
        let read = read_exact_at_windows(self.mapping.file(), buf, at);
        read.map_err(io_error("read", self.path()))
    }

    /// Where the mapping starts in the file: the first mapped row's first byte.
    fn map_offset(&self) -> u64 {
        self.described.mapped.bytes.start
    }

    /// Byte range of mapping-relative `rows` inside [`bytes`](Self::bytes).
    pub fn row_byte_range(&self, rows: Range<usize>) -> Result<Range<usize>> {
        let mapped = Header::new(self.dtype().clone(), self.order(), self.shape().to_vec());
        mapped
            .check_rows(rows.clone())
            .map_err(|e| Error::at(self.path(), ErrorKind::Format(e)))?;
        Ok(rows.start * self.row_bytes()..rows.end * self.row_bytes())
    }
}

impl<M: Writable> MappedArray<M> {
    /// The mapped array data, writable.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.mapping.map_mut().bytes_mut()
    }

    /// The mapped data as a writable typed view (see [`view`](Self::view)
    /// for which `T` fit).
    pub fn view_mut<T: Element>(&mut self) -> Result<ArrayViewMut<'_, T>> {
        let described = &self.described;
        ArrayViewMut::new(
            self.mapping.map_mut().bytes_mut(),
            &described.header.dtype,
            &described.mapped.shape,
            described.header.order,
        )
        .map_err(format_error("view", &described.path))
    }

    /// Splits the mapped rows into disjoint writable views of
    /// `rows_per_chunk` rows each (the last may be shorter; 0 counts as 1),
    /// with each chunk's mapping-relative row range: hand them to threads
    /// (`std::thread::scope`) to fill in parallel.
    ///
    /// Rows are along the row axis ([`row_axis`](Self::row_axis)), so each
    /// chunk is contiguous in memory in either order. A 0-d array, or rows
    /// of zero bytes, make one chunk; no rows make no chunks.
    pub fn row_chunks_mut<T: Element>(
        &mut self,
        rows_per_chunk: usize,
    ) -> Result<Vec<(Range<usize>, ArrayViewMut<'_, T>)>> {
        let rows_per_chunk = rows_per_chunk.max(1);
        let axis = self.row_axis();
        let row_count = self.rows().len();
        let chunk_bytes = rows_per_chunk.saturating_mul(self.row_bytes());
        let described = &self.described;
        let (dtype, order) = (&described.header.dtype, described.header.order);
        let path = &described.path;
        let bytes = self.mapping.map_mut().bytes_mut();
        let (Some(axis), true) = (axis, chunk_bytes > 0) else {
            // 0-d, or rows of zero bytes: nothing to split.
            let view = ArrayViewMut::new(bytes, dtype, &described.mapped.shape, order)
                .map_err(format_error("view", path))?;
            return Ok(vec![(0..row_count, view)]);
        };
        let mut shape = described.mapped.shape.clone();
        bytes
            .chunks_mut(chunk_bytes)
            .enumerate()
            .map(|(i, chunk)| {
                let start = i * rows_per_chunk;
                let rows = start..(start + rows_per_chunk).min(row_count);
                shape[axis] = rows.len();
                let view = ArrayViewMut::new(chunk, dtype, &shape, order)
                    .map_err(format_error("view", path))?;
                Ok((rows, view))
            })
            .collect()
    }
}

impl MappedArray<ReadWrite> {
    /// Writes all changes back to the file and waits for the disk
    /// (`msync(MS_SYNC)`).
    pub fn flush(&self) -> Result<()> {
        self.flush_bytes(0..self.mapping.map().len())
    }

    /// Starts writing all changes back without waiting for the disk.
    ///
    /// On Linux this queues the dirty pages for writing with
    /// `sync_file_range(WAIT_BEFORE | WRITE)` (a page already being written
    /// back is waited for, then queued again; `msync(MS_ASYNC)` is a no-op
    /// there), elsewhere it is `msync(MS_ASYNC)`. A later
    /// [`flush`](Self::flush) still waits for everything.
    pub fn flush_async(&self) -> Result<()> {
        self.flush_bytes_async(0..self.mapping.map().len())
    }

    /// Writes back the changes in mapping-relative `rows` and waits.
    pub fn flush_rows(&self, rows: Range<usize>) -> Result<()> {
        self.flush_bytes(self.row_byte_range(rows)?)
    }

    /// Starts writing back the changes in mapping-relative `rows` without
    /// waiting (see [`flush_async`](Self::flush_async)).
    ///
    /// Called on each block of rows a worker has finished, the disk writes
    /// while the worker fills the next block, and the final
    /// [`flush`](Self::flush) waits only for what is left;
    /// [`fill_blocks`](Self::fill_blocks) does exactly that.
    pub fn flush_rows_async(&self, rows: Range<usize>) -> Result<()> {
        self.flush_bytes_async(self.row_byte_range(rows)?)
    }

    /// Writes back the changes in `range` of [`bytes`](Self::bytes) and waits.
    pub fn flush_bytes(&self, range: Range<usize>) -> Result<()> {
        self.reads().flush_bytes(range)
    }

    /// Fills the mapped rows block by block, the way a big file is best
    /// filled: `fill` gets each block of `rows_per_block` rows (its
    /// mapping-relative range and a writable view of it, contiguous in either
    /// order); as soon as `fill` returns, the block's writeback starts
    /// ([`flush_rows_async`](Self::flush_rows_async)), so the disk writes
    /// while the next block fills; at the end [`flush`](Self::flush) waits
    /// for what is left. The first error (of `fill` or of a flush) stops it.
    ///
    /// A 0-d array is one block; no rows make no blocks. Blocks of tens of
    /// MiB suit big files.
    ///
    /// ```
    /// use npy_core::DType;
    /// use npy_mmap::{CreateOptions, OpenOptions, ReadWrite};
    /// # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-fill-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("filled.npy");
    /// CreateOptions::new(DType::parse("<f8")?, [1000, 4]).reserve(true).preallocate(&path)?;
    ///
    /// // A worker filling rows 500..1000, 128 rows at a time.
    /// let mut part = OpenOptions::new().rows(500..1000).open_rw(&path)?;
    /// let first_row = part.rows().start;
    /// part.fill_blocks::<f64>(128, |rows, mut block| {
    ///     let values = block.as_c_slice_mut().ok_or("a Fortran-order file")?;
    ///     for (i, value) in values.iter_mut().enumerate() {
    ///         *value = ((first_row + rows.start) * 4 + i) as f64;
    ///     }
    ///     Ok(())
    /// })?;
    /// drop(part); // a plain reader may not view bytes a writer still maps
    /// assert_eq!(npy_mmap::open(&path)?.view::<f64>()?.get(&[999, 3]), Some(&3999.0));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fill_blocks<T: Element>(
        &mut self,
        rows_per_block: usize,
        mut fill: impl FnMut(Range<usize>, ArrayViewMut<'_, T>) -> FillResult,
    ) -> Result<()> {
        let rows_per_block = rows_per_block.max(1);
        let count = self.rows().len();
        for first in (0..count).step_by(rows_per_block) {
            let rows = first..(first + rows_per_block).min(count);
            fill(rows.clone(), self.rows_view_mut(rows.clone())?)
                .map_err(|source| Error::at(self.path(), ErrorKind::Fill { source }))?;
            self.flush_rows_async(rows)?;
        }
        self.flush()?;
        Ok(())
    }

    /// A writable view of mapping-relative `rows` (along the row axis).
    fn rows_view_mut<T: Element>(&mut self, rows: Range<usize>) -> Result<ArrayViewMut<'_, T>> {
        let range = self.row_byte_range(rows.clone())?;
        let mut shape = self.shape().to_vec();
        if let Some(axis) = self.row_axis() {
            shape[axis] = rows.len();
        }
        let described = &self.described;
        ArrayViewMut::new(
            &mut self.mapping.map_mut().bytes_mut()[range],
            &described.header.dtype,
            &shape,
            described.header.order,
        )
        .map_err(format_error("view", &described.path))
    }

    /// Starts writing back the changes in `range` of [`bytes`](Self::bytes)
    /// without waiting (see [`flush_async`](Self::flush_async)).
    pub fn flush_bytes_async(&self, range: Range<usize>) -> Result<()> {
        self.check_byte_range(&range)?;
        self.mapping
            .map()
            .start_flush_range(
                self.mapping.file(),
                self.map_offset(),
                range.start,
                range.len(),
            )
            .map_err(io_error("flush", self.path()))
    }
}

#[cfg(windows)]
fn read_exact_at_windows(file: &File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, at)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                at += n as u64;
            }
        }
    }
    Ok(())
}

/// What is mapped (the whole array, or the rows), written as it lies.
impl<M: Mode> npy_core::NpySource for MappedArray<M> {
    fn npy_header(&self) -> Header {
        Header::new(self.dtype().clone(), self.order(), self.shape().to_vec())
    }

    fn npy_data(&self) -> npy_core::Result<npy_core::DataChunks<'_>> {
        Ok(Box::new(std::iter::once(std::borrow::Cow::Borrowed(
            self.bytes(),
        ))))
    }
}

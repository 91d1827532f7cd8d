//! Reading a whole `.npy` file into memory: numpy's `np.load` without
//! `mmap_mode`.

use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use npy_core::io::{
    AlignedBytes, CONVERT_STEP, NpyArray, ReadOptions, build_objects, decode_objects, read_data,
};
use npy_core::pickle::Build;
use npy_core::swap::ByteOrderConverter;
use npy_core::{ByteOrder, DType, Header, Layout};

use crate::error::{Result, format_error, io_error};
use crate::file::read_header;
use crate::lock::{Locks, lock_shared_meta};
use crate::sys::AnonymousMemory;
use crate::threads::run_parallel;

/// A file read into memory, an object array's pickle not decoded yet (from
/// [`OpenOptions::load_deferred`](crate::OpenOptions::load_deferred)).
#[derive(Debug)]
pub enum Loaded {
    /// An array of plain data.
    Array(NpyArray),
    /// An object array, its file open at its pickle:
    /// [`ObjectPickle::build_items`] decodes it and makes its items with
    /// any [`Build`] in one pass (Python objects, say),
    /// [`ObjectPickle::into_array`] as
    /// [`PyValue`](npy_core::pickle::PyValue)s.
    Objects(ObjectPickle),
}

impl Loaded {
    /// The array, an object array's items made as
    /// [`PyValue`](npy_core::pickle::PyValue)s.
    pub fn into_array(self) -> Result<NpyArray> {
        match self {
            Loaded::Array(array) => Ok(array),
            Loaded::Objects(objects) => objects.into_array(),
        }
    }

    /// Where the array lies in its file (an object array's `data_len`:
    /// see [`ObjectPickle::layout`]).
    pub fn layout(&self) -> &Layout {
        match self {
            Loaded::Array(array) => array.layout(),
            Loaded::Objects(objects) => objects.layout(),
        }
    }
}

/// An object array's file, open (and locked as the load locks it) at the
/// pickle after its header, which is decoded when its items are made.
#[derive(Debug)]
pub struct ObjectPickle {
    reader: BufReader<std::fs::File>,
    path: PathBuf,
    header: Header,
    layout: Layout,
    options: ReadOptions,
}

impl ObjectPickle {
    /// The array's header (dtype object).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Where the array lies in its file, as its header says: the pickle's
    /// length (`data_len`) is known once it is decoded, from
    /// [`build_items`](Self::build_items) or [`into_array`](Self::into_array).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Decodes the pickle and makes the array's items with `builder` in one
    /// pass (each `str` as it is read: see
    /// [`npy_core::pickle::build`]), in the header's memory order; returns
    /// the layout, its `data_len` the pickle's length, and the items. What
    /// `builder` needs (Python's GIL) is needed for the whole decode.
    ///
    /// Errors: as [`load`](crate::load)'s for an object array, and the
    /// builder's own.
    pub fn build_items<B: Build>(self, builder: &mut B) -> Result<(Layout, Vec<B::Value>)> {
        // The file's bytes after the header bound the pickle.
        let available = self
            .reader
            .get_ref()
            .metadata()
            .ok()
            .map(|meta| meta.len().saturating_sub(self.layout.data_offset as u64));
        build_objects(
            self.reader,
            &self.header,
            self.layout,
            &self.options,
            available,
            builder,
        )
        .map_err(format_error("read", &self.path))
    }

    /// The array, its items decoded as
    /// [`PyValue`](npy_core::pickle::PyValue)s.
    pub fn into_array(self) -> Result<NpyArray> {
        decode_objects(self.reader, &self.header, self.layout, &self.options)
            .and_then(|objects| objects.into_array())
            .map_err(format_error("read", &self.path))
    }
}

/// [`load`](crate::load) with options (from [`OpenOptions::load`](crate::OpenOptions::load)).
pub(crate) fn load_file(path: &Path, options: &ReadOptions, locks: Locks) -> Result<NpyArray> {
    load_deferred(path, options, locks)?.into_array()
}

/// [`load_file`], an object array's pickle not decoded yet.
pub(crate) fn load_deferred(path: &Path, options: &ReadOptions, locks: Locks) -> Result<Loaded> {
    let file_error = |source| format_error("read", path)(source);
    let (mut file, meta) = crate::file::open_regular_meta(path, false)?;
    // Held while reading: no process following the locking rule changes
    // the file's structure under the read.
    lock_shared_meta(&file, path, Some(&meta), locks)?;
    let (header, layout) = read_header(&file, path, &options.parse)?;
    if header.dtype == DType::Object {
        return load_objects(file, path, &header, layout, options).map(Loaded::Objects);
    }
    options.check_data_len(&layout).map_err(file_error)?;
    let file_len = file.metadata().map_err(io_error("stat", path))?.len();
    let available = file_len.saturating_sub(layout.data_offset as u64);
    if available < layout.data_len as u64 {
        // `available` < data_len, a usize.
        let available = available as usize;
        return Err(file_error(npy_core::Error::truncated_data(
            &header, available,
        )));
    }
    #[cfg(unix)]
    if layout.data_len >= PARALLEL_READ_MIN {
        return read_file_in_parallel(&file, path, header, layout, options.to_native)
            .map(Loaded::Array);
    }
    file.seek(SeekFrom::Start(layout.data_offset as u64))
        .map_err(io_error("read", path))?;
    read_into_memory(&file, header, layout, options.to_native)
        .map(Loaded::Array)
        .map_err(file_error)
}

/// From this many bytes of data on, a file is read into memory by every
/// core at once, each reading its own pieces (`pread`) and converting
/// them: copying from the page cache and faulting the fresh memory in are
/// per-core work, so two cores read a warm 1 GiB file in ~0.65× the time of
/// one (docs/BENCHMARKS.md). Below it, one thread's read costs less than
/// starting another.
const PARALLEL_READ_MIN: usize = 32 << 20;

/// The data each job of [`read_file_in_parallel`] reads: a multiple of
/// the huge page (2 MiB), so that no two threads fault the same one in.
const PARALLEL_READ_PIECE: usize = 16 << 20;

/// The whole data of `file` (its length checked to hold it) read into
/// fresh memory by every core ([`PARALLEL_READ_MIN`]), in pieces of whole
/// elements, each converted to native byte order if asked while it is
/// still in the processor's cache.
#[cfg(unix)]
fn read_file_in_parallel(
    file: &std::fs::File,
    path: &Path,
    header: Header,
    layout: Layout,
    to_native: bool,
) -> Result<NpyArray> {
    use std::os::unix::fs::FileExt as _;

    let converter = to_native.then(|| ByteOrderConverter::new(&header.dtype, ByteOrder::NATIVE));
    let swaps = converter.as_ref().filter(|converter| !converter.is_noop());
    let itemsize = header.dtype.itemsize().max(1);
    // Whole elements per piece and per step, so each converts on its own.
    let whole = |bytes: usize| (bytes / itemsize).max(1) * itemsize;
    let (piece, step) = (whole(PARALLEL_READ_PIECE), whole(CONVERT_STEP));
    let mut memory =
        DataMemory::new(layout.data_len).map_err(io_error("allocate memory for", path))?;
    let start = layout.data_offset as u64;
    let jobs: Vec<(usize, &mut [u8])> = memory
        .as_mut()
        .chunks_mut(piece)
        .enumerate()
        .map(|(k, bytes)| (k * piece, bytes))
        .collect();
    run_parallel(jobs, usize::MAX, |(at, bytes): (usize, &mut [u8])| {
        for (k, part) in bytes.chunks_mut(step).enumerate() {
            let mut filled = 0;
            while filled < part.len() {
                let offset = start + (at + k * step + filled) as u64;
                match file.read_at(&mut part[filled..], offset) {
                    // The file ended early (cut by a program ignoring the
                    // locks): the bytes before this one are all there are.
                    Ok(0) => {
                        let available = at + k * step + filled;
                        return Err(format_error("read", path)(npy_core::Error::truncated_data(
                            &header, available,
                        )));
                    }
                    Ok(got) => filled += got,
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(error) => return Err(io_error("read", path)(error)),
                }
            }
            if let Some(converter) = swaps {
                converter.convert(part);
            }
        }
        Ok(())
    })?;
    let dtype = match &converter {
        Some(converter) => converter.converted_dtype().clone(),
        None => header.dtype.clone(),
    };
    NpyArray::from_parts(Header { dtype, ..header }, layout, memory.into_bytes())
        .map_err(format_error("read", path))
}

/// The pickle after an object array's header, to be read through a
/// buffer (its length is unknown until it is decoded).
fn load_objects(
    mut file: std::fs::File,
    path: &Path,
    header: &Header,
    layout: Layout,
    options: &ReadOptions,
) -> Result<ObjectPickle> {
    file.seek(SeekFrom::Start(layout.data_offset as u64))
        .map_err(io_error("read", path))?;
    Ok(ObjectPickle {
        reader: BufReader::new(file),
        path: path.to_owned(),
        header: header.clone(),
        layout,
        options: *options,
    })
}

/// Reads the data of an array with `header` from `reader` into fresh
/// memory of its own (huge pages where the kernel allows), converting it to
/// native byte order on the way if asked.
///
/// The caller has checked that `reader` holds the data (a file's length, a
/// stored zip member's size within its archive): the memory is allocated
/// up front, for the size the header claims.
pub(crate) fn read_into_memory<R: Read>(
    reader: R,
    header: Header,
    layout: Layout,
    to_native: bool,
) -> npy_core::Result<NpyArray> {
    let to = to_native.then_some(ByteOrder::NATIVE);
    let (dtype, data) = if layout.data_len == 0 {
        let dtype = read_data(reader, &header, &mut [], to)?;
        (dtype, AlignedBytes::new())
    } else {
        let mut memory = DataMemory::new(layout.data_len)?;
        let dtype = read_data(reader, &header, memory.as_mut(), to)?;
        (dtype, memory.into_bytes())
    };
    NpyArray::from_parts(Header { dtype, ..header }, layout, data)
}

/// Below this size an array's memory comes from the heap, from this size
/// on a mapping of its own that asks for huge pages: numpy's rule (its
/// allocator asks for huge pages from 4 MiB). The heap hands back memory
/// freed before, where a fresh mapping faults every page in again (on
/// this VM about 1 µs a page: a 1 MiB array read 2.5× slower mapped).
const HUGE_PAGE_MIN: usize = 4 << 20;

/// Memory that data read from a file lands in, for an array to own.
pub(crate) enum DataMemory {
    /// A small array's, from the heap.
    Heap(AlignedBytes),
    /// A large array's, mapped (huge pages where the kernel allows).
    Mapped(AnonymousMemory),
}

impl DataMemory {
    /// Zeroed memory for `len` bytes.
    pub(crate) fn new(len: usize) -> std::io::Result<DataMemory> {
        if len < HUGE_PAGE_MIN {
            Ok(DataMemory::Heap(AlignedBytes::zeroed(len)))
        } else {
            AnonymousMemory::new(len).map(DataMemory::Mapped)
        }
    }

    /// The bytes, to fill.
    pub(crate) fn as_mut(&mut self) -> &mut [u8] {
        match self {
            DataMemory::Heap(bytes) => bytes,
            DataMemory::Mapped(memory) => memory.as_mut(),
        }
    }

    /// The bytes, as an array's data.
    pub(crate) fn into_bytes(self) -> AlignedBytes {
        match self {
            DataMemory::Heap(bytes) => bytes,
            // Mappings are page-aligned, so the copy never happens.
            DataMemory::Mapped(memory) => AlignedBytes::from_owner(memory)
                .unwrap_or_else(|memory| AlignedBytes::copy_from(memory.as_ref())),
        }
    }
}

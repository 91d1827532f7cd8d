//! Reading a whole `.npy` file into memory: numpy's `np.load` without
//! `mmap_mode`.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use npy_core::io::{AlignedBytes, NpyArray, ReadOptions, read_data, read_objects};
use npy_core::{ByteOrder, DType, Header, Layout};

use crate::error::{Error, Result, io_error};
use crate::lock::{Locking, Locks, lock_shared};
use crate::open::read_header;
use crate::sys::AnonymousMemory;

/// Reads the array in `path` into memory (numpy's `np.load(path)`), with
/// default options: the data keeps the file's byte order.
///
/// See [`load_with`].
pub fn load(path: impl AsRef<Path>) -> Result<NpyArray> {
    load_with(path, &ReadOptions::default())
}

/// Reads the array in `path` into memory that belongs to the array: no
/// mapping of the file stays behind, so later changes to the file (even
/// truncation) cannot affect it.
///
/// The file's length is checked against the header before any memory is
/// allocated, so a truncated file is numpy's "Failed to read all data"
/// error at once. The memory is fresh anonymous memory with transparent huge
/// pages where the kernel allows (what numpy does too): on big arrays the
/// page faults of 4 KiB pages would cost more than the copy. Like numpy,
/// `NUMPY_MADVISE_HUGEPAGE=0` in the environment turns huge pages off: in
/// VMs that return free memory to their host (virtio-balloon free page
/// reporting), a fresh huge page can be several times slower to touch than
/// 4 KiB pages (docs/BENCHMARKS.md has the figures). With
/// [`ReadOptions::to_native`] the data is converted to native byte order
/// piece by piece as it arrives, while each piece is in the cache.
///
/// For arrays that only need reading, [`open`](crate::open) is cheaper
/// still: nothing is copied, and only the pages touched are read.
///
/// Object arrays (`dtype=object`) load when `options.parse.allow_pickle` is
/// set, as in numpy, decoded by npy-core's restricted unpickler (which never
/// runs code): the array's [`objects`](NpyArray::objects) are its values.
///
/// ```
/// use npy_core::io::ReadOptions;
/// use npy_core::Order;
/// # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-load-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("a.npy");
/// npy_mmap::save_slice(&path, &[1.5f64, 2.5, 3.5], &[3], Order::C)?;
///
/// let array = npy_mmap::load(&path)?;
/// assert_eq!(array.view::<f64>()?.to_vec(), [1.5, 2.5, 3.5]);
///
/// let native = npy_mmap::load_with(&path, &ReadOptions { to_native: true, ..Default::default() })?;
/// assert_eq!(native.header().dtype.descr(), "<f8");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<NpyArray> {
    let path = path.as_ref();
    let file_error = |source| Error::Header {
        path: path.to_path_buf(),
        source,
    };
    let mut file = crate::open::open_regular(path, false)?;
    // Held while reading: no process following the locking rule changes
    // the file's structure under the read.
    lock_shared(&file, path, Locks::Take(Locking::Blocking))?;
    let (header, layout) = read_header(&file, path, &options.parse).map_err(|e| match e {
        // Loading (not mapping) says what np.load says: allow_pickle is off.
        Error::ObjectDType { path } => Error::Header {
            path,
            source: npy_core::Error::ObjectDType,
        },
        e => e,
    })?;
    if header.dtype == DType::Object {
        return load_objects(file, path, &header, layout, options);
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
    file.seek(SeekFrom::Start(layout.data_offset as u64))
        .map_err(io_error("read", path))?;
    read_into_memory(&file, header, layout, options.to_native).map_err(|source| match source {
        npy_core::Error::Io(source) => io_error("read", path)(source),
        source => file_error(source),
    })
}

/// Decodes the pickle after an object array's header (its length is
/// unknown until it is decoded; it is read through a buffer).
fn load_objects(
    mut file: std::fs::File,
    path: &Path,
    header: &Header,
    layout: Layout,
    options: &ReadOptions,
) -> Result<NpyArray> {
    file.seek(SeekFrom::Start(layout.data_offset as u64))
        .map_err(io_error("read", path))?;
    read_objects(std::io::BufReader::new(file), header, layout, options).map_err(|source| {
        match source {
            npy_core::Error::Io(source) => io_error("read", path)(source),
            source => Error::Header {
                path: path.to_path_buf(),
                source,
            },
        }
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
        let mut memory = AnonymousMemory::new(layout.data_len)?;
        let dtype = read_data(reader, &header, memory.as_mut(), to)?;
        // Mappings are page-aligned, so the copy never happens.
        let data = AlignedBytes::from_owner(memory)
            .unwrap_or_else(|memory| AlignedBytes::copy_from(memory.as_ref()));
        (dtype, data)
    };
    NpyArray::from_parts(Header { dtype, ..header }, layout, data)
}

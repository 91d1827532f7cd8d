//! # npy-mmap: memory-mapped NumPy arrays, a preallocating writer, and npz archives
//!
//! Open a multi-GB `.npy` file in microseconds and touch only the pages you
//! read; create one sized for its data without writing it; let many
//! processes each map and fill their own rows of one file.
//!
//! | numpy | here |
//! | --- | --- |
//! | `np.load(p, mmap_mode='r')` | [`open(p)`](open) → [`MappedArray<ReadOnly>`] |
//! | `np.load(p, mmap_mode='r+')` | [`open_rw(p)`](open_rw) → [`MappedArray<ReadWrite>`] |
//! | `np.load(p, mmap_mode='c')` | [`open_cow(p)`](open_cow) → [`MappedArray<CopyOnWrite>`] |
//! | `open_memmap(p, 'w+', dtype, shape)` | [`CreateOptions::create`] → [`MappedArray<ReadWrite>`] |
//! | `np.load(p)` (into memory) | [`load(p)`](load) → npy-core's [`NpyArray`] |
//! | appending to a saved array (no numpy equivalent in place) | [`Appender`] appends rows in place; [`CreateOptions::stream`] → [`RowWriter`] for unknown lengths |
//!
//! The mode is part of the type: a read-only mapping has no method that
//! writes (see [`mode`]). Bytes become typed arrays through npy-core's views.
//!
//! ```
//! use npy_core::DType;
//! use npy_mmap::{CreateOptions, OpenOptions, ReadWrite};
//! # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-lib-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("grid.npy");
//!
//! // Create a 4 x 3 float64 file: header written, data sparse (all zeros).
//! CreateOptions::new(DType::parse("<f8")?, [4, 3]).preallocate(&path)?;
//!
//! // A worker maps only rows 2..4 and fills them: value = row * 3 + col.
//! let mut part = OpenOptions::new().rows(2..4).open_rw(&path)?;
//! assert_eq!(part.shape(), [2, 3]);
//! let first_row = part.rows().start;
//! let mut view = part.view_mut::<f64>()?;
//! for i in 0..2 {
//!     for j in 0..3 {
//!         // MappedRows-relative index i is file row first_row + i.
//!         *view.get_mut(&[i, j]).unwrap() = ((first_row + i) * 3 + j) as f64;
//!     }
//! }
//! part.flush()?;
//! drop(part);
//!
//! // Anyone can read it back, without reading more than they touch.
//! let array = npy_mmap::open(&path)?;
//! let view = array.view::<f64>()?;
//! assert_eq!(view.get(&[3, 2]), Some(&11.0));
//! assert_eq!(view.get(&[0, 0]), Some(&0.0));
//! assert_eq!(view.as_slice().unwrap().iter().sum::<f64>(), (6..12).sum::<i32>() as f64);
//! # drop(array); std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Speed notes
//!
//! * Opening costs the same for any file size: open, lock, one small read
//!   (the header's page), `fstat`, one `mmap`. Nothing of the data is read.
//! * Random access into a file that is not in the page cache (or a sparse
//!   one): open with [`Advice::Random`]. Without it every first touch reads
//!   ahead around the page; with an 8 MiB read-ahead setting, 200 random
//!   first touches of an 8 GiB sparse file took 1.6 s instead of 1.2 ms.
//! * A scan of a warm file: `view.as_slice()` is a plain slice, as fast as
//!   memory; open with [`Advice::PopulateRead`] and a thread maps the pages
//!   in ahead of the scan while the open returns at once (a 4 GiB sum takes
//!   the time of the sum alone, with no page faults: docs/BENCHMARKS.md).
//! * Filling: create the file with [`CreateOptions::reserve`] (the disk
//!   blocks are allocated at once, so a full disk is an error at create, not
//!   a SIGBUS mid-fill, and writeback has no blocks left to allocate); give
//!   each worker its own [`rows`](OpenOptions::rows) so it maps only its
//!   rows; fill it with [`fill_blocks`](MappedArray::fill_blocks) in blocks
//!   of tens of MiB: each block's writeback starts as soon as it is filled
//!   ([`flush_rows_async`](MappedArray::flush_rows_async)), so the disk
//!   writes while the next block fills.
//! * Reading a whole array into memory: [`load`] checks the file's length,
//!   then reads into huge-page memory (byte order converted on the way if
//!   asked); it costs what numpy's `np.load` costs. [`open_cow`] copies
//!   nothing at all, if the array may stay backed by the file.
//!
//! ## Optional features
//!
//! | feature | adds |
//! | --- | --- |
//! | `npz` (default) | the [`npz`] module |
//! | `rayon` | `MappedArray::par_rows_mut`: fill a mapping's rows from rayon's threads |
//! | `ndarray` | npy-core's `ndarray` integration: `view.to_ndarray()` views of a mapping, and `ndarray` arrays as sources for [`save`] and `NpzWriter::add` |
//!
//! ## Sharing, soundly
//!
//! A plain view (`&[T]`, [`view`](MappedArray::view), [`bytes`](MappedArray::bytes))
//! of some bytes exists only while nothing else that uses this crate can
//! write them: every mapping takes a lock on exactly its bytes (a registry
//! within the process, byte-range locks across processes on Linux), so a
//! read-write mapping excludes readers of the same rows, while workers with
//! disjoint [`rows`](OpenOptions::rows)s still fill in parallel. A
//! conflict with this process's own mapping is [`ErrorKind::Conflict`] at once;
//! with another process's, a wait (or [`ErrorKind::Locked`]). For a writer and
//! readers *at the same time*, map the file live: elements are atomics.
//!
//! ```
//! # use npy_core::DType;
//! # use std::sync::atomic::Ordering;
//! # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-share-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("counts.npy");
//! npy_mmap::CreateOptions::new(DType::parse("<u8")?, [4])
//!     .preallocate(&path)?;
//! let writer = npy_mmap::open_rw(&path)?;
//! assert!(npy_mmap::open(&path).is_err()); // would alias the writer's bytes
//! drop(writer);
//! let live = npy_mmap::OpenOptions::new().open_live(&path)?; // in any process
//! live.atomics::<u64>()?[2].fetch_add(1, Ordering::Relaxed);
//! # drop(live); std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! All `unsafe` code of the project sits in one private module. What is
//! proven by the crate, what by locks, and what remains your promise
//! (programs that take no lock, such as numpy, must not change a mapped
//! file) is in `docs/SAFETY.md`.
#![deny(missing_docs)]
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod advice;
mod array;
mod atomic;
mod atomic_float;
mod create;
mod error;
mod file;
pub mod foreign;
pub mod grow;
pub mod live;
mod load;
mod lock;
pub mod mode;
mod open;
mod save;
#[allow(unsafe_code)]
mod sys;
mod threads;

#[cfg(feature = "npz")]
pub mod npz;
#[cfg(feature = "rayon")]
mod par;

pub use advice::Advice;
pub use array::{FillResult, MappedArray};
pub use atomic::AtomicFile;
pub use create::CreateOptions;
pub use error::{Error, ErrorKind, Result};
pub use file::open_regular;
pub use foreign::{ForeignArray, ForeignBytes, ForeignMode};
pub use grow::{Appender, RowWriter};
pub use live::{AtomicF32, AtomicF64, LiveArray, LiveElement};
pub use load::{Loaded, ObjectPickle};
pub use lock::Locking;
pub use mode::{CopyOnWrite, Mode, ReadOnly, ReadWrite, Writable};
pub use open::OpenOptions;
pub use save::{save, save_unsynced};

use std::path::Path;

use npy_core::NpyArray;

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
/// [`OpenOptions::to_native`] the data is
/// converted to native byte order piece by piece as it arrives, while each
/// piece is in the cache.
///
/// For arrays that only need reading, [`open`] is cheaper
/// still: nothing is copied, and only the pages touched are read.
///
/// Object arrays (`dtype=object`) load with
/// [`OpenOptions::allow_pickle`], as in
/// numpy, decoded by npy-core's restricted unpickler (which never runs
/// code): the array's [`objects`](NpyArray::objects) are its values.
///
/// ```
/// use npy_mmap::OpenOptions;
/// # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-load-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("a.npy");
/// npy_mmap::save(&path, &[1.5f64, 2.5, 3.5][..])?;
///
/// let array = npy_mmap::load(&path)?;
/// assert_eq!(array.view::<f64>()?.to_vec(), [1.5, 2.5, 3.5]);
///
/// let native = OpenOptions::new().to_native(true).load(&path)?;
/// assert_eq!(native.view::<f64>()?.to_vec(), [1.5, 2.5, 3.5]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load(path: impl AsRef<Path>) -> Result<NpyArray> {
    OpenOptions::new().load(path)
}

/// Maps `path` read-only (numpy's `mmap_mode='r'`), with default options:
/// [`OpenOptions::open`].
pub fn open(path: impl AsRef<Path>) -> Result<MappedArray<ReadOnly>> {
    OpenOptions::new().open(path)
}

/// Maps `path` read-write (numpy's `mmap_mode='r+'`): writes reach the
/// file. [`OpenOptions::open_rw`] with default options.
pub fn open_rw(path: impl AsRef<Path>) -> Result<MappedArray<ReadWrite>> {
    OpenOptions::new().open_rw(path)
}

/// Maps `path` copy-on-write (numpy's `mmap_mode='c'`): writes stay in
/// this process, the file never changes. [`OpenOptions::open_cow`] with
/// default options.
pub fn open_cow(path: impl AsRef<Path>) -> Result<MappedArray<CopyOnWrite>> {
    OpenOptions::new().open_cow(path)
}

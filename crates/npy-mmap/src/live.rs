//! Live sharing: a writer and readers (threads or processes) use the same
//! rows of one file *at the same time*, through atomic element views.
//!
//! A plain view (`&[u64]`) promises that its bytes do not change while it
//! lives, so it cannot be shared with a writer. A [`LiveArray`] never hands
//! one out: its elements are atomics (`&[AtomicU64]`, `&[AtomicF64]`, ...),
//! whose shared references allow concurrent writes, from this process and
//! from every other process that maps the same bytes live. Live mappings
//! admit each other and exclude plain mappings of the same bytes (both
//! ways), in one process and across processes (docs/SAFETY.md).
//!
//! Typical uses: counters, histograms, flags and "row ready" markers shared
//! by workers; a reader that wants plain values takes a snapshot with
//! [`copy_to`](LiveArray::copy_to) (one atomic load per element, so an
//! aligned element is never torn).
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use npy_core::DType;
//! use npy_mmap::{CreateOptions, OpenOptions};
//! # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-live-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("histogram.npy");
//! CreateOptions::new(DType::parse("<u8")?, [16]).preallocate(&path)?;
//!
//! // Every worker process (or thread) opens it live and counts into it.
//! let worker = OpenOptions::new().open_live(&path)?;
//! let bins: &[AtomicU64] = worker.atomics::<u64>()?;
//! bins[3].fetch_add(1, Ordering::Relaxed);
//!
//! // A reader, at the same time, takes a snapshot of plain values.
//! let reader = OpenOptions::new().open_live(&path)?;
//! let mut counts = [0u64; 16];
//! reader.copy_to(&mut counts)?;
//! assert_eq!(counts[3], 1);
//!
//! // A plain view of the same bytes is refused while live mappings exist.
//! assert!(npy_mmap::open(&path).is_err());
//! # drop((worker, reader)); std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;
use std::sync::atomic::{
    AtomicI8, AtomicI16, AtomicI32, AtomicI64, AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering,
};

use npy_core::{ByteOrder, DType, Header, Layout, ScalarKind};

use crate::array::{MapRequest, MappedFile, MappedRows, mapped_file_accessors};
use crate::error::{Error, ErrorKind, Result, io_error};
use crate::lock::{Access, Mapping, TrackedFile};
use crate::sys::{AtomicCell, LiveMap};

pub use crate::atomic_float::{AtomicF32, AtomicF64};

mod sealed {
    pub trait Sealed {}
}

/// An element type of live data: a native integer or float whose atomic
/// twin ([`Atomic`](Self::Atomic)) views it. Implemented for `u8`..`u64`,
/// `i8`..`i64`, `f32` and `f64`.
pub trait LiveElement: sealed::Sealed + Copy + Send + Sync + 'static {
    /// `AtomicU64` for `u64`, [`AtomicF64`] for `f64`, and so on.
    type Atomic: AtomicCell;

    /// The scalar kind of data this type views.
    #[doc(hidden)]
    const KIND: ScalarKind;

    /// One atomic load.
    #[doc(hidden)]
    fn load(cell: &Self::Atomic, order: Ordering) -> Self;
}

macro_rules! live_elements {
    ($($plain:ty => $atomic:ty, $kind:ident;)*) => {$(
        impl sealed::Sealed for $plain {}
        impl LiveElement for $plain {
            type Atomic = $atomic;
            const KIND: ScalarKind = ScalarKind::$kind;
            #[inline]
            fn load(cell: &$atomic, order: Ordering) -> $plain {
                cell.load(order)
            }
        }
    )*};
}

live_elements! {
    u8 => AtomicU8, UInt;
    u16 => AtomicU16, UInt;
    u32 => AtomicU32, UInt;
    u64 => AtomicU64, UInt;
    i8 => AtomicI8, Int;
    i16 => AtomicI16, Int;
    i32 => AtomicI32, Int;
    i64 => AtomicI64, Int;
    f32 => AtomicF32, Float;
    f64 => AtomicF64, Float;
}

/// An `.npy` file (or a range of its rows) mapped for live sharing; see
/// the [module docs](self). Made by [`OpenOptions::open_live`](crate::OpenOptions::open_live).
///
/// Elements are viewed in memory order (C or Fortran, as the file is
/// stored), native byte order only. Holds the structure lock shared and the
/// live data lock of its bytes until dropped.
#[derive(Debug)]
pub struct LiveArray {
    // The mapping and its lock, dropped in one step (see `MappedArray`).
    mapping: Mapping<LiveMap>,
    described: MappedFile,
}

impl LiveArray {
    pub(crate) fn map(
        file: TrackedFile,
        path: &Path,
        header: Header,
        layout: Layout,
        request: &MapRequest,
    ) -> Result<LiveArray> {
        let (mapped, lock) = MappedRows::lock(file, path, &header, &layout, request, Access::Live)?;
        let mapping = lock.map(LiveMap::map).map_err(io_error("map", path))?;
        Ok(LiveArray {
            mapping,
            described: MappedFile::new(path, header, layout, mapped),
        })
    }

    mapped_file_accessors!();

    /// The mapped elements as atomics, in memory order: `&[AtomicU64]` for
    /// `u64`, `&[AtomicF64]` for `f64`, ...
    ///
    /// `T` must match the dtype exactly: same kind (unsigned, signed,
    /// float) and size, native byte order; the data must be aligned for the
    /// atomic (every file numpy or this crate writes is). Anything else is
    /// an error.
    pub fn atomics<T: LiveElement>(&self) -> Result<&[T::Atomic]> {
        let dtype = &self.dtype();
        let fits = matches!(
            dtype,
            DType::Scalar(scalar)
                if scalar.kind == T::KIND
                    && scalar.itemsize == std::mem::size_of::<T>()
                    && (scalar.byte_order == ByteOrder::NATIVE
                        || scalar.byte_order == ByteOrder::NotApplicable)
        );
        if !fits {
            return Err(Error::at(
                self.path(),
                ErrorKind::LiveType {
                    dtype: dtype.descr(),
                    rust_type: std::any::type_name::<T>(),
                },
            ));
        }
        self.mapping.map().cells::<T::Atomic>().ok_or_else(|| {
            Error::at(
                self.path(),
                ErrorKind::LiveType {
                    dtype: dtype.descr(),
                    rust_type: "an atomic (the data is not aligned for it)",
                },
            )
        })
    }

    /// Copies every mapped element into `out` (one atomic load each, so no
    /// aligned element is ever torn, whatever writers do meanwhile): a
    /// snapshot of plain values. `out` must have exactly as many elements.
    pub fn copy_to<T: LiveElement>(&self, out: &mut [T]) -> Result<()> {
        let cells = self.atomics::<T>()?;
        if cells.len() != out.len() {
            let error = npy_core::Error::DataLength {
                expected: cells.len() * std::mem::size_of::<T>(),
                actual: std::mem::size_of_val(out),
            };
            return Err(Error::at(self.path(), ErrorKind::Format(error)));
        }
        for (value, cell) in out.iter_mut().zip(cells) {
            *value = T::load(cell, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Writes the changes back to the file and waits for the disk
    /// (`msync(MS_SYNC)`). Other processes see every atomic write at once,
    /// without a flush; this is about durability.
    pub fn flush(&self) -> Result<()> {
        self.mapping
            .map()
            .flush()
            .map_err(io_error("flush", self.path()))
    }
}

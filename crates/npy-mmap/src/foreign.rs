//! Foreign mappings: an `.npy` file's bytes lent to code outside Rust's
//! rules (numpy, C), shared the way numpy shares its memmaps.
//!
//! numpy lets any number of processes map one file, read and write, and
//! write disjoint rows of it at once: that is how a pool of workers fills a
//! preallocated array, and how a reader watches a writer. A plain Rust
//! view (`&[T]`) cannot take part in that, since its bytes must not change
//! while it lives. A [`ForeignArray`] hands out no reference at all: only
//! the mapping's address ([`as_ptr`](ForeignArray::as_ptr)) for foreign
//! code, and copies made with atomic loads ([`copy_to`](ForeignArray::copy_to),
//! [`gather_bytes`](ForeignArray::gather_bytes)), which are defined
//! whatever others write meanwhile. So foreign mappings of the same bytes
//! admit each other, in any mode and any process, while every Rust mapping
//! that lends references still excludes them as its rules need
//! (docs/SAFETY.md has the table):
//!
//! | held \ wanted | foreign `r`, `c` | foreign `r+`, `w+` |
//! | --- | --- | --- |
//! | [`open`](crate::OpenOptions::open), [`open_cow`](crate::OpenOptions::open_cow) (`&[T]`) | admitted | refused |
//! | [`open_rw`](crate::OpenOptions::open_rw), create (`&mut [T]`) | refused | refused |
//! | [`open_live`](crate::OpenOptions::open_live) | refused | refused |
//! | foreign, any mode | admitted | admitted |
//!
//! Like every mapping it holds the structure lock shared, so nothing that
//! uses this crate shrinks or restructures the file while it lives.
//!
//! ```
//! use npy_core::DType;
//! use npy_mmap::{CreateOptions, ForeignMode, OpenOptions};
//! # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-foreign-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("shared.npy");
//! // A parent creates the file and keeps its mapping...
//! let parent = CreateOptions::new(DType::parse("<f8")?, [4]).create_foreign(&path)?;
//! // ...while a worker maps the same bytes read-write, as numpy's r+ does.
//! let worker = OpenOptions::new().open_foreign(&path, ForeignMode::ReadWrite)?;
//! assert_eq!(worker.len(), 32);
//! // Rust reads it with atomic loads only.
//! let mut first = [0u8; 8];
//! parent.copy_to(0, &mut first)?;
//! assert_eq!(f64::from_le_bytes(first), 0.0);
//! // A Rust `&[f64]` of those bytes is refused while foreign writers live.
//! assert!(npy_mmap::open(&path).is_err());
//! # drop((parent, worker)); std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ops::Range;
use std::path::Path;

use npy_core::{Header, Layout};

use crate::array::{MapRequest, MappedFile, MappedRows, Reads, check_byte_range};
use crate::error::{Error, ErrorKind, Result, io_error};
use crate::lock::{Access, Mapping, TrackedFile};
pub use crate::sys::ForeignBytes;
use crate::sys::{ForeignKind, ForeignMap};

/// numpy's mapping modes, for a [`ForeignArray`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ForeignMode {
    /// `'r'`: read-only, shared with the file.
    ReadOnly,
    /// `'r+'` (and `'w+'` once created): writes reach the file.
    ReadWrite,
    /// `'c'`: writable in memory, the file never changes.
    CopyOnWrite,
}

impl ForeignMode {
    /// numpy's name: `"r"`, `"r+"` or `"c"`.
    pub fn numpy_mode(self) -> &'static str {
        match self {
            ForeignMode::ReadOnly => "r",
            ForeignMode::ReadWrite => "r+",
            ForeignMode::CopyOnWrite => "c",
        }
    }

    /// Whether foreign code may write through the mapping.
    pub fn is_writable(self) -> bool {
        self != ForeignMode::ReadOnly
    }

    /// The file must be opened for writing.
    pub(crate) fn needs_write_access(self) -> bool {
        self == ForeignMode::ReadWrite
    }

    fn access(self) -> Access {
        match self {
            // Copy-on-write never writes the file: a reader of it.
            ForeignMode::ReadOnly | ForeignMode::CopyOnWrite => Access::ForeignRead,
            ForeignMode::ReadWrite => Access::ForeignWrite,
        }
    }

    fn kind(self) -> ForeignKind {
        match self {
            ForeignMode::ReadOnly => ForeignKind::ReadOnly,
            ForeignMode::ReadWrite => ForeignKind::Shared,
            ForeignMode::CopyOnWrite => ForeignKind::Private,
        }
    }
}

/// An `.npy` file (or a range of its rows) mapped for foreign code; see
/// the [module docs](self). Made by
/// [`OpenOptions::open_foreign`](crate::OpenOptions::open_foreign) and
/// [`CreateOptions::create_foreign`](crate::CreateOptions::create_foreign).
#[derive(Debug)]
pub struct ForeignArray {
    // The mapping and its lock, dropped in one step (see `MappedArray`).
    mapping: Mapping<ForeignMap>,
    described: MappedFile,
    mode: ForeignMode,
}

impl ForeignArray {
    pub(crate) fn map(
        file: TrackedFile,
        path: &Path,
        header: Header,
        layout: Layout,
        request: &MapRequest,
        mode: ForeignMode,
    ) -> Result<ForeignArray> {
        let (mapped, lock) =
            MappedRows::lock(file, path, &header, &layout, request, mode.access())?;
        let mapping = lock
            .map(|file, grant| ForeignMap::map(file, grant, mode.kind()))
            .map_err(io_error("map", path))?;
        let array = ForeignArray {
            mapping,
            described: MappedFile::new(path, header, layout, mapped),
            mode,
        };
        if let Some(advice) = request.advice {
            array.advise(advice)?;
        }
        Ok(array)
    }

    crate::array::mapped_file_accessors!();

    /// The mode it was mapped in.
    pub fn mode(&self) -> ForeignMode {
        self.mode
    }

    /// The mapped data's first byte (never null; dangling when empty).
    /// Others may write these bytes at any time: reading or writing
    /// through the pointer is the foreign code's business, and Rust code
    /// that does it must use atomics, as [`copy_to`](Self::copy_to) does.
    pub fn as_ptr(&self) -> *const u8 {
        self.mapping.map().as_ptr()
    }

    /// The same address, writable, for the writable modes (`None` for
    /// [`ForeignMode::ReadOnly`], whose pages are mapped read-only).
    pub fn as_mut_ptr(&self) -> Option<*mut u8> {
        self.mode.is_writable().then(|| self.mapping.map().as_ptr())
    }

    /// The mapped data's length in bytes.
    pub fn len(&self) -> usize {
        self.mapping.map().len()
    }

    /// Whether no byte is mapped.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies `out.len()` bytes at `offset` of the mapped data into `out`,
    /// with atomic loads: defined whatever others write meanwhile (an
    /// aligned 8-byte word is one value some writer stored).
    pub fn copy_to(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        let range = offset..offset.saturating_add(out.len());
        check_byte_range(&range, self.len())?;
        self.mapping.map().load(offset, out).ok_or_else(|| {
            Error::from(ErrorKind::BytesOutOfBounds {
                start: range.start,
                end: range.end,
                len: self.len(),
            })
        })
    }

    crate::array::planned_reads!();

    /// The read core over this mapping (atomic loads: others may write
    /// these bytes at any time).
    fn reads(&self) -> Reads<'_, ForeignMap> {
        Reads {
            source: self.mapping.map(),
            file: self.mapping.file(),
            described: &self.described,
        }
    }

    /// Writes the changes back to the file and waits for the disk
    /// (`msync(MS_SYNC)`); nothing to do unless mapped read-write.
    pub fn flush(&self) -> Result<()> {
        self.flush_bytes(0..self.len())
    }

    /// Writes back the changes in byte `range` of the mapped data and waits.
    pub fn flush_bytes(&self, range: Range<usize>) -> Result<()> {
        self.reads().flush_bytes(range)
    }
}

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

use std::fs::File;
use std::ops::Range;
use std::path::Path;

use npy_core::{Header, Layout};

use crate::Advice;
use crate::array::{MapRequest, MappedFile, Planner, Window, check_byte_range};
use crate::error::{Error, ErrorKind, Result, io_error};
use crate::lock::{Access, DataLock};
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

/// An `.npy` file (or a window of its rows) mapped for foreign code; see
/// the [module docs](self). Made by
/// [`OpenOptions::open_foreign`](crate::OpenOptions::open_foreign) and
/// [`CreateOptions::create_foreign`](crate::CreateOptions::create_foreign).
#[derive(Debug)]
pub struct ForeignArray {
    // Drop order: unmap, forget the range in this process, close
    // (releasing the locks other processes see): see `MappedArray`.
    map: ForeignMap,
    _lock: DataLock,
    file: File,
    described: MappedFile,
    mode: ForeignMode,
}

impl ForeignArray {
    pub(crate) fn map(
        file: File,
        path: &Path,
        header: Header,
        layout: Layout,
        request: &MapRequest,
        mode: ForeignMode,
    ) -> Result<ForeignArray> {
        let (window, lock) = Window::lock(&file, path, &header, &layout, request, mode.access())?;
        let map =
            ForeignMap::map(&file, lock.grant(), mode.kind()).map_err(io_error("map", path))?;
        let array = ForeignArray {
            map,
            file,
            _lock: lock,
            described: MappedFile::new(path, header, layout, window),
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
        self.map.as_ptr()
    }

    /// The same address, writable, for the writable modes (`None` for
    /// [`ForeignMode::ReadOnly`], whose pages are mapped read-only).
    pub fn as_mut_ptr(&self) -> Option<*mut u8> {
        self.mode.is_writable().then(|| self.map.as_ptr())
    }

    /// The mapped data's length in bytes.
    pub fn len(&self) -> usize {
        self.map.len()
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
        self.map.load(offset, out).ok_or_else(|| {
            Error::from(ErrorKind::BytesOutOfBounds {
                start: range.start,
                end: range.end,
                len: self.len(),
            })
        })
    }

    /// Copies the `width` bytes at each byte offset of the mapped data in
    /// `offsets` into `out`, in the order given, with atomic loads, planned
    /// as [`MappedArray::gather_bytes`](crate::MappedArray::gather_bytes)
    /// is: a cold batch reads its pages ahead all at once. Errors, before
    /// anything is read: an offset whose bytes pass the end, a wrong `out`
    /// length.
    pub fn gather_bytes(&self, offsets: &[usize], width: usize, out: &mut [u8]) -> Result<()> {
        self.planner()
            .gather_bytes(offsets, width, out, |offset, slot| {
                // In bounds: every offset was checked.
                let _ = self.map.load(offset, slot);
            })
    }

    /// The bytes of each of `spans` into `out`, one after another, with
    /// atomic loads, planned as [`gather_bytes`](Self::gather_bytes) is.
    pub fn gather_spans(&self, spans: &[Range<usize>], out: &mut [u8]) -> Result<()> {
        self.planner().gather_spans(spans, out, |offset, slot| {
            // In bounds: every span was checked.
            let _ = self.map.load(offset, slot);
        })
    }

    /// Copies `length` rows from each of `starts` into `out` with atomic
    /// loads, planned: [`MappedArray::gather_windows`](crate::MappedArray::gather_windows)
    /// for bytes others may write meanwhile.
    pub fn gather_windows(&self, starts: &[usize], length: usize, out: &mut [u8]) -> Result<()> {
        let windows = self.described.windows(starts, length)?;
        self.gather_bytes(&windows.offsets, windows.width, out)
    }

    /// Starts reading the pages of those windows and returns at once.
    pub fn prefetch_windows(&self, starts: &[usize], length: usize) -> Result<()> {
        let windows = self.described.windows(starts, length)?;
        self.prefetch_bytes(&windows.ranges())
    }

    /// Gives back the pages of those windows (`MADV_DONTNEED`): a sampler
    /// that is done with a batch keeps its resident memory flat. The bytes
    /// stay in the page cache and the file; the next read maps them again.
    /// Refused on a copy-on-write mapping (it would discard its changes).
    pub fn release_windows(&self, starts: &[usize], length: usize) -> Result<()> {
        let windows = self.described.windows(starts, length)?;
        self.release_bytes(&windows.ranges())
    }

    /// Gives back the pages of byte `ranges`, and of the blocks around them
    /// the kernel maps at once (large folios, up to 2 MiB), with
    /// `MADV_DONTNEED`; every range checked first. Refused on a
    /// copy-on-write mapping.
    pub fn release_bytes(&self, ranges: &[Range<usize>]) -> Result<()> {
        for range in ranges {
            check_byte_range(range, self.len())?;
        }
        for block in self.planner().release_ranges(ranges) {
            self.advise_bytes(block, Advice::DontNeed)?;
        }
        Ok(())
    }

    /// Starts reading byte `ranges` of the mapped data and returns without
    /// waiting (every range checked first).
    pub fn prefetch_bytes(&self, ranges: &[Range<usize>]) -> Result<()> {
        self.planner().prefetch_bytes(ranges)
    }

    /// Passes an access-pattern hint for the whole mapping to the kernel.
    /// `DontNeed` is refused on a copy-on-write mapping (it would discard
    /// its changes).
    pub fn advise(&self, advice: Advice) -> Result<()> {
        self.advise_bytes(0..self.len(), advice)
    }

    /// Passes a hint for byte `range` of the mapped data to the kernel.
    pub fn advise_bytes(&self, range: Range<usize>, advice: Advice) -> Result<()> {
        check_byte_range(&range, self.len())?;
        self.map
            .advise(advice, range)
            .map_err(io_error("advise the kernel about", self.path()))
    }

    /// Writes the changes back to the file and waits for the disk
    /// (`msync(MS_SYNC)`); nothing to do unless mapped read-write.
    pub fn flush(&self) -> Result<()> {
        self.flush_bytes(0..self.len())
    }

    /// Writes back the changes in byte `range` of the mapped data and waits.
    pub fn flush_bytes(&self, range: Range<usize>) -> Result<()> {
        check_byte_range(&range, self.len())?;
        self.map
            .flush_range(range.start, range.len())
            .map_err(io_error("flush", self.path()))
    }

    fn planner(&self) -> Planner<'_> {
        Planner {
            file: &self.file,
            path: self.path(),
            base: self.map.as_ptr(),
            len: self.len(),
            map_offset: self.described.window.bytes.start,
        }
    }
}

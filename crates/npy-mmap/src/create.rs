//! Creating files: numpy's `w+`, as a preallocating writer.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use npy_core::{DType, Header, Layout, Order, ParseOptions, ParsedHeader, Version};

use crate::advice::Advice;
use crate::array::MapRequest;
use crate::array::MappedArray;
use crate::atomic::AtomicFile;
use crate::error::{Error, ErrorKind, Result, format_error, io_error};
use crate::file::read_header;
use crate::foreign::{ForeignArray, ForeignMode};
use crate::lock::{Locking, Locks, TrackedFile, downgrade, lock_exclusive};
use crate::mode::ReadWrite;

/// Options for creating an `.npy` file (numpy's `open_memmap(mode="w+")`).
///
/// The header is written by npy-core ([`Header::to_bytes`]), byte-identical
/// to `np.save`; the file is then sized for the data and mapped read-write.
/// By default the data is *sparse* (`set_len`: nothing is written, creation
/// costs the same for 1 KB and 1 TB, the data reads as zeros); with
/// [`reserve`](Self::reserve) the disk blocks are allocated up front so a
/// full disk fails here rather than as a SIGBUS in whichever process first
/// writes a page that has no block.
///
/// An existing file is never replaced unless [`overwrite`](Self::overwrite)
/// is set.
///
/// ```
/// use npy_core::DType;
/// use npy_mmap::CreateOptions;
/// # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-create-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("zeros.npy");
/// let mut array = CreateOptions::new(DType::parse("<f8")?, [1000, 3]).create(&path)?;
/// assert_eq!(array.shape(), [1000, 3]);
/// array.bytes_mut()[..8].copy_from_slice(&1.5f64.to_le_bytes());
/// array.flush()?;
/// # drop(array); std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "options do nothing until create, preallocate or stream is called"]
pub struct CreateOptions {
    header: Header,
    version: Option<Version>,
    overwrite: bool,
    reserve: bool,
    locking: Locking,
    advice: Option<Advice>,
}

impl CreateOptions {
    /// An array of `dtype` with `shape`, in C order, header version chosen
    /// like numpy does.
    pub fn new(dtype: DType, shape: impl Into<Vec<usize>>) -> CreateOptions {
        CreateOptions {
            header: Header::new(dtype, Order::C, shape.into()),
            version: None,
            overwrite: false,
            reserve: false,
            locking: Locking::default(),
            advice: None,
        }
    }

    /// C (row-major, the default) or Fortran (column-major) order.
    pub fn order(&mut self, order: Order) -> &mut CreateOptions {
        self.header.order = order;
        self
    }

    /// Forces a header format version (numpy's `version=`).
    pub fn version(&mut self, version: Version) -> &mut CreateOptions {
        self.version = Some(version);
        self
    }

    /// Replaces an existing file. Off by default: creating over an existing
    /// file is an [`ErrorKind::AlreadyExists`](crate::ErrorKind::AlreadyExists).
    ///
    /// The new file is written whole under a temporary name beside the old
    /// one (header, size, reserved blocks) and renamed over it, like every
    /// save of this crate: at every moment the path holds the old file or the
    /// new one, a full disk leaves the old file untouched, and processes that
    /// have the old file mapped keep reading it (they are not waited for).
    /// The old file's permission bits are kept.
    pub fn overwrite(&mut self, overwrite: bool) -> &mut CreateOptions {
        self.overwrite = overwrite;
        self
    }

    /// Allocates the data's disk blocks now (`fallocate`), so that running
    /// out of disk space is an error here instead of a SIGBUS later.
    pub fn reserve(&mut self, reserve: bool) -> &mut CreateOptions {
        self.reserve = reserve;
        self
    }

    /// How to take the locks (exclusive while writing, then shared while mapped).
    pub fn locking(&mut self, locking: Locking) -> &mut CreateOptions {
        self.locking = locking;
        self
    }

    /// Passes an access-pattern hint to the kernel right after mapping.
    pub fn advice(&mut self, advice: Advice) -> &mut CreateOptions {
        self.advice = Some(advice);
        self
    }

    /// The header that will be written.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Creates the file and maps all of it read-write.
    pub fn create(&self, path: impl AsRef<Path>) -> Result<MappedArray<ReadWrite>> {
        let path = path.as_ref();
        let (file, layout) = self.write_file(path)?;
        let request = MapRequest {
            rows: None,
            advice: self.advice,
            locks: self.locks(),
        };
        MappedArray::map(file, path, self.header.clone(), layout, &request)
    }

    /// Creates the file and maps all of it read-write for foreign code
    /// (numpy's `open_memmap(mode="w+")` as numpy shares it): see
    /// [`ForeignArray`](crate::ForeignArray).
    pub fn create_foreign(&self, path: impl AsRef<Path>) -> Result<ForeignArray> {
        let path = path.as_ref();
        let (file, layout) = self.write_file(path)?;
        let request = MapRequest {
            rows: None,
            advice: self.advice,
            locks: self.locks(),
        };
        ForeignArray::map(
            file,
            path,
            self.header.clone(),
            layout,
            &request,
            ForeignMode::ReadWrite,
        )
    }

    /// Creates the file without mapping it, and releases it: for a parent
    /// that prepares a file which worker processes then open
    /// ([`OpenOptions::rows`](crate::OpenOptions::rows)) and fill.
    ///
    /// The file is written under the exclusive lock and closed; nothing is
    /// mapped, so unlike [`create`](Self::create) there is no shared lock
    /// to take afterwards and nothing to re-check.
    pub fn preallocate(&self, path: impl AsRef<Path>) -> Result<Layout> {
        let path = path.as_ref();
        let (_file, header_bytes, _) = self.write_exclusive(path)?;
        // The layout of the bytes just written, parsed in memory.
        let parse = ParseOptions {
            max_header_size: header_bytes.len(),
            ..Default::default()
        };
        let ParsedHeader { layout, .. } =
            Header::parse(&header_bytes, &parse).map_err(format_error("parse", path))?;
        Ok(layout)
    }

    /// Writes header and length under the exclusive lock, then holds the
    /// shared lock; returns the open file, the layout and the file length.
    fn write_file(&self, path: &Path) -> Result<(TrackedFile, Layout)> {
        let (file, header_bytes, file_len) = self.write_exclusive(path)?;
        let tracked = TrackedFile::adopt(file);
        let file = tracked.file();

        // A moment without a lock: whatever another process did in it, we
        // check below that the file is still the one we wrote.
        downgrade(file, path, self.locks())?;
        let parse = ParseOptions {
            max_header_size: header_bytes
                .len()
                .max(ParseOptions::default().max_header_size),
            ..Default::default()
        };
        let (header, layout) = read_header(file, path, &parse)?;
        let now_len = file.metadata().map_err(io_error("stat", path))?.len();
        if header != self.header || layout.data_offset != header_bytes.len() || now_len != file_len
        {
            return Err(Error::at(path, ErrorKind::ChangedDuringCreate));
        }
        Ok((tracked, layout))
    }

    pub(crate) fn locks(&self) -> Locks {
        Locks::Take(self.locking)
    }

    /// Creates the file, takes the exclusive lock and writes the header and
    /// length (removing the file again on failure). Returns the file, still
    /// exclusively locked, the header bytes and the file length. Also the
    /// start of a streamed file (`CreateOptions::stream`, in `grow`).
    pub(crate) fn write_exclusive(&self, path: &Path) -> Result<(File, Vec<u8>, u64)> {
        // numpy's open_memmap refuses objects before touching the file.
        if self.header.dtype.has_object() {
            return Err(Error::at(path, ErrorKind::ObjectsNotMappable));
        }
        let header_bytes = self
            .header
            .to_bytes(self.version)
            .map_err(format_error("parse", path))?;
        let data_len = self
            .header
            .data_len()
            .map_err(format_error("parse", path))?;
        // data_len fits isize (npy-core checks), so the sum fits u64.
        let file_len = header_bytes.len() as u64 + data_len as u64;

        if self.overwrite {
            // The new file is made whole under a temporary name and renamed
            // over the old one: a crash, a full disk or a failed write at any
            // moment leaves the old file or the new one, never a truncated
            // file; processes that mapped the old file keep their copy.
            let temp =
                AtomicFile::create(path).map_err(io_error("create a temporary file for", path))?;
            // The temporary is exclusively locked from its creation on.
            let file = temp
                .file()
                .map_err(io_error("create a temporary file for", path))?;
            self.write_locked(file, path, &header_bytes, file_len)?;
            // On any error above `temp` drops and removes itself.
            let file = temp.commit_file()?;
            return Ok((file, header_bytes, file_len));
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|source| {
                if source.kind() == std::io::ErrorKind::AlreadyExists {
                    Error::at(path, ErrorKind::AlreadyExists)
                } else {
                    io_error("create", path)(source)
                }
            })?;
        // A file we just made is ours to remove on failure.
        let created = RemoveOnError { path, armed: true };
        lock_exclusive(&file, path, self.locks())?;
        self.write_locked(&file, path, &header_bytes, file_len)?;
        created.disarm();
        Ok((file, header_bytes, file_len))
    }

    fn write_locked(
        &self,
        mut file: &File,
        path: &Path,
        header_bytes: &[u8],
        file_len: u64,
    ) -> Result<()> {
        file.write_all(header_bytes)
            .map_err(io_error("write the header of", path))?;
        if self.reserve {
            fs4::FileExt::allocate(file, file_len)
                .map_err(io_error("reserve disk space for", path))?;
        }
        file.set_len(file_len)
            .map_err(io_error("set the length of", path))?;
        // Reading the header back starts at the beginning.
        file.seek(SeekFrom::Start(0))
            .map_err(io_error("seek in", path))?;
        Ok(())
    }
}

/// Removes a file this call created, unless the call succeeded.
struct RemoveOnError<'a> {
    path: &'a Path,
    armed: bool,
}

impl RemoveOnError<'_> {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for RemoveOnError<'_> {
    fn drop(&mut self) {
        if self.armed {
            // Leave nothing half-made behind; the exclusive lock (if it was
            // taken) is still held, so no cooperating process uses the file.
            drop(std::fs::remove_file(self.path));
        }
    }
}

//! Opening existing files: [`OpenOptions`], locking, reading the header.

use std::fs::File;
use std::ops::Range;
use std::path::Path;

use npy_core::{Header, Layout, ParseOptions};

use crate::error::{Error, Result, io_error};
use crate::lock::{Locking, Locks, lock_shared};
use crate::sys::Storage;
use crate::{Advice, LiveArray, MappedArray, Mode};

/// Options for opening an existing `.npy` file as a memory map.
///
/// ```no_run
/// use npy_mmap::{Advice, OpenOptions, ReadWrite};
/// // A worker that fills rows 1000..2000 of a big file maps only those rows.
/// let mut part = OpenOptions::new()
///     .window(1000..2000)
///     .advice(Advice::Sequential)
///     .open::<ReadWrite>("big.npy")?;
/// part.bytes_mut().fill(0);
/// part.flush()?;
/// # Ok::<(), npy_mmap::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenOptions {
    parse: ParseOptions,
    advice: Option<Advice>,
    window: Option<Range<usize>>,
    locks: Locks,
}

impl OpenOptions {
    /// Default options: whole array, blocking shared lock, numpy's
    /// `max_header_size` of [`DEFAULT_MAX_HEADER_SIZE`](npy_core::header::DEFAULT_MAX_HEADER_SIZE), no access hint.
    pub fn new() -> OpenOptions {
        OpenOptions::default()
    }

    /// Refuses headers longer than `max` characters (numpy's `max_header_size`).
    pub fn max_header_size(&mut self, max: usize) -> &mut OpenOptions {
        self.parse.max_header_size = max;
        self
    }

    /// Passes an access-pattern hint to the kernel right after mapping.
    pub fn advice(&mut self, advice: Advice) -> &mut OpenOptions {
        self.advice = Some(advice);
        self
    }

    /// Maps only `rows` of the array: along axis 0 for C order, along the
    /// last axis for Fortran order (the axis whose slices are contiguous).
    /// The mapped array then has the window's shape and window-relative
    /// indices; [`MappedArray::rows`] tells where the window lies.
    pub fn window(&mut self, rows: Range<usize>) -> &mut OpenOptions {
        self.window = Some(rows);
        self
    }

    /// How to wait for locks other processes hold (see [`Locking`]): the
    /// structure lock (shared while mapped) and the data lock of the mapped
    /// bytes. Conflicts with this process's own mappings always fail at
    /// once ([`Error::Conflict`]).
    pub fn locking(&mut self, locking: Locking) -> &mut OpenOptions {
        self.locks = Locks::Take(locking);
        self
    }

    /// Takes no lock at all: the mapping neither waits for nor excludes
    /// anyone (what numpy's `np.load(mmap_mode=...)` does).
    ///
    /// # Safety
    ///
    /// While the mapping lives, no process (this one included, through
    /// another mapping or a `write` on the file) may write the mapped bytes
    /// — or, for a read-write mapping, read them through another mapping —
    /// and none may shrink the file. Breaking the first is undefined
    /// behaviour (a data race on memory the views borrow); breaking the
    /// second kills the process with SIGBUS. Nothing checks this: it is the
    /// promise `memmap2`'s `Mmap::map` asks for.
    // Declares the caller's promise; the body does nothing unsafe.
    #[allow(unsafe_code)]
    pub unsafe fn ignore_locks(&mut self) -> &mut OpenOptions {
        self.locks = Locks::Ignore;
        self
    }

    /// Opens `path` in mode `M` ([`ReadOnly`](crate::ReadOnly) = numpy's
    /// `r`, [`ReadWrite`](crate::ReadWrite) = `r+`,
    /// [`CopyOnWrite`](crate::CopyOnWrite) = `c`).
    ///
    /// Cost does not depend on the file's size: open, lock, two small reads
    /// (preamble, then header), `fstat`, one `mmap`. No array data is read.
    pub fn open<M: Mode>(&self, path: impl AsRef<Path>) -> Result<MappedArray<M>> {
        let path = path.as_ref();
        let (file, header, layout) = self.open_locked(path, M::Map::NEEDS_WRITE_ACCESS)?;
        MappedArray::map(file, path, header, layout, &self.request())
    }

    /// Opens `path` for live sharing: a writer and readers (threads or
    /// processes) use the same rows at the same time, through atomic element
    /// views. See [`LiveArray`].
    pub fn open_live(&self, path: impl AsRef<Path>) -> Result<LiveArray> {
        let path = path.as_ref();
        let (file, header, layout) = self.open_locked(path, true)?;
        LiveArray::map(file, path, header, layout, &self.request())
    }

    /// Opens the file, takes the structure lock shared and reads the header.
    fn open_locked(&self, path: &Path, write: bool) -> Result<(File, Header, Layout)> {
        let file = open_regular(path, write)?;
        lock_shared(&file, path, self.locks)?;
        let (header, layout) = read_header(&file, path, &self.parse)?;
        Ok((file, header, layout))
    }

    fn request(&self) -> MapRequest {
        MapRequest {
            window: self.window.clone(),
            advice: self.advice,
            locks: self.locks,
        }
    }
}

/// What a mapping is asked for beyond the file: the rows, the kernel hint,
/// how to lock. Shared by opening and creating.
#[derive(Clone, Debug, Default)]
pub(crate) struct MapRequest {
    pub(crate) window: Option<Range<usize>>,
    pub(crate) advice: Option<Advice>,
    pub(crate) locks: Locks,
}

/// Opens an existing regular file for reading (and writing, if `write`),
/// refusing anything else with [`Error::NotARegularFile`]: what every opener
/// of this crate does first, for callers that read files themselves.
///
/// The open itself does not block: opening a FIFO for reading would wait for
/// a writer forever, so the file is opened with `O_NONBLOCK` and its type is
/// checked before anything else. (For a regular file the flag changes
/// nothing: reads and writes of regular files never return `EAGAIN`.)
pub fn open_regular(path: &Path, write: bool) -> Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(write);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(io_error("open", path))?;
    let file_type = file.metadata().map_err(io_error("stat", path))?.file_type();
    if file_type.is_file() {
        return Ok(file);
    }
    let kind = if file_type.is_dir() {
        "a directory"
    } else {
        unix_kind(&file_type).unwrap_or("not a regular file")
    };
    Err(Error::NotARegularFile {
        path: path.to_path_buf(),
        kind,
    })
}

#[cfg(unix)]
fn unix_kind(file_type: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    Some(if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else {
        return None;
    })
}

#[cfg(not(unix))]
fn unix_kind(_: &std::fs::FileType) -> Option<&'static str> {
    None
}

/// Whether `path` still names the open `file` (not a file renamed over it,
/// nor nothing at all).
pub(crate) fn still_at_path(file: &File, path: &Path) -> Result<bool> {
    let now = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(io_error("stat", path)(error)),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let open = file.metadata().map_err(io_error("stat", path))?;
        Ok(open.dev() == now.dev() && open.ino() == now.ino())
    }
    #[cfg(not(unix))]
    {
        // Windows refuses to rename over or delete a file that is open
        // without FILE_SHARE_DELETE, which std does not ask for.
        let _ = (file, now);
        Ok(true)
    }
}

/// Reads and parses the header with two reads: the fixed-size preamble,
/// then the rest of the header, whose length the preamble gives (bounded by
/// `options.max_header_size` before anything is allocated).
pub(crate) fn read_header(
    file: &File,
    path: &Path,
    options: &ParseOptions,
) -> Result<(Header, Layout)> {
    let header_error = |source| match source {
        npy_core::Error::ObjectDType => Error::ObjectDType {
            path: path.to_path_buf(),
        },
        source => Error::Header {
            path: path.to_path_buf(),
            source,
        },
    };
    // npy-core's stream reader: a few small reads, and a buffer that grows
    // with the bytes that arrive, never with what the length field claims.
    Header::read_from(&mut &*file, options)
        .map(|parsed| (parsed.header, parsed.layout))
        .map_err(|source| match source {
            npy_core::Error::Io(source) => io_error("read the header of", path)(source),
            source => header_error(source),
        })
}

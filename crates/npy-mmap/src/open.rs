//! Opening existing files: [`OpenOptions`], locking, reading the header.

use std::fs::File;
use std::ops::Range;
use std::path::Path;

#[cfg(feature = "npz")]
use std::io::BufReader;
use std::io::{Read, Seek};

use npy_core::headerless::Headerless;
use npy_core::pickle::Encoding;
use npy_core::{Header, Layout, NpyArray, Preamble, ReadOptions};

use crate::advice::Advice;
use crate::array::MapRequest;
use crate::array::MappedArray;
use crate::error::{Error, ErrorKind, Result};
use crate::file::{open_regular_meta, read_header};
use crate::foreign::{ForeignArray, ForeignMode};
use crate::grow::Appender;
use crate::live::LiveArray;
use crate::lock::{Locking, Locks, TrackedFile, lock_shared_meta};
use crate::mode::{CopyOnWrite, Mode, ReadOnly, ReadWrite};
#[cfg(feature = "npz")]
use crate::npz::{MappedNpz, NpzArchive};
use crate::sys::Storage;

/// How to open an existing `.npy` or `.npz` file: the one builder, with one
/// terminal method per thing you can get.
///
/// | numpy | terminal method | gives |
/// |---|---|---|
/// | `np.load(p, mmap_mode="r")` | [`open`](Self::open) | [`MappedArray<ReadOnly>`] |
/// | `np.load(p, mmap_mode="r+")` | [`open_rw`](Self::open_rw) | [`MappedArray<ReadWrite>`] |
/// | `np.load(p, mmap_mode="c")` | [`open_cow`](Self::open_cow) | [`MappedArray<CopyOnWrite>`] |
/// | — | [`open_live`](Self::open_live) | [`LiveArray`] (atomic views, shared while written) |
/// | `np.load(p, mmap_mode=…)` for numpy itself | [`open_foreign`](Self::open_foreign) | [`ForeignArray`] (an address for foreign code, shared as numpy shares) |
/// | `np.load(p)` | [`load`](Self::load) | [`NpyArray`] in memory |
/// | — | [`append`](Self::append) | [`Appender`] (rows added in place) |
/// | `np.load(p)` of an `.npz` | [`open_npz`](Self::open_npz), [`read_npz`](Self::read_npz) | [`NpzArchive`](crate::npz::NpzArchive) |
/// | — | [`map_npz`](Self::map_npz) | [`MappedNpz`](crate::npz::MappedNpz): zero-copy members |
///
/// The free functions [`open`](crate::open), [`open_rw`](crate::open_rw),
/// [`open_cow`](crate::open_cow) and [`load`](crate::load) are these with
/// default options. Each option says which terminal methods it concerns;
/// the others ignore it.
///
/// ```no_run
/// use npy_mmap::{Advice, OpenOptions};
/// // A worker that fills rows 1000..2000 of a big file maps only those rows.
/// let mut part = OpenOptions::new()
///     .rows(1000..2000)
///     .advice(Advice::Sequential)
///     .open_rw("big.npy")?;
/// part.bytes_mut().fill(0);
/// part.flush()?;
///
/// // Random reads of a file bigger than memory: tell the kernel not to
/// // read ahead, so each read costs one page, not a read-ahead window.
/// let big = OpenOptions::new().advice(Advice::Random).open("huge.npy")?;
/// let view = big.view::<f32>()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[must_use = "options do nothing until a terminal method (open, load, ...) is called"]
pub struct OpenOptions {
    read: ReadOptions,
    advice: Option<Advice>,
    rows: Option<Range<usize>>,
    locks: Locks,
    headerless: Option<Headerless>,
}

impl OpenOptions {
    /// Default options: whole array, numpy's `max_header_size` of 10000, no
    /// pickles, data in the file's byte order, no access hint, and locks
    /// waited for up to [`Locking::DEFAULT_TIMEOUT`].
    pub fn new() -> OpenOptions {
        OpenOptions::default()
    }

    /// Refuses headers longer than `max` characters (numpy's `max_header_size`).
    /// All terminal methods.
    pub fn max_header_size(&mut self, max: usize) -> &mut OpenOptions {
        self.read.parse.max_header_size = max;
        self
    }

    /// Decodes object arrays (numpy's `allow_pickle`), with npy-core's
    /// restricted unpickler, which never runs code. [`load`](Self::load)
    /// and archives; object arrays can never be mapped.
    pub fn allow_pickle(&mut self, allow: bool) -> &mut OpenOptions {
        self.read.parse.allow_pickle = allow;
        self
    }

    /// How Python 2 strings in pickles are decoded (numpy's `encoding`).
    /// [`load`](Self::load) and archives.
    pub fn encoding(&mut self, encoding: Encoding) -> &mut OpenOptions {
        self.read.pickle.encoding = encoding;
        self
    }

    /// Converts the data to native byte order while reading it.
    /// [`load`](Self::load) and archives (a mapping shows the file's bytes).
    pub fn to_native(&mut self, to_native: bool) -> &mut OpenOptions {
        self.read.to_native = to_native;
        self
    }

    /// Refuses arrays whose data is larger than `max` bytes before reading
    /// any of it. [`load`](Self::load) and archives.
    pub fn max_data_len(&mut self, max: usize) -> &mut OpenOptions {
        self.read.max_data_len = Some(max);
        self
    }

    /// Passes an access-pattern hint to the kernel right after mapping.
    /// Mappings. [`Advice::PopulateRead`] of a read-only mapping of 16 MiB
    /// or more is passed by a thread of its own, a step at a time from the
    /// first page, while the open returns: a scan that follows finds its
    /// pages mapped in (the thread lets go of the mapping when the array is
    /// dropped). Any other hint, and [`advise`](MappedArray::advise)
    /// later, is passed before the call returns.
    pub fn advice(&mut self, advice: Advice) -> &mut OpenOptions {
        self.advice = Some(advice);
        self
    }

    /// Maps only `rows` of the array: along the growth axis (axis 0 for C
    /// order, the last axis for Fortran order: the axis whose slices are
    /// contiguous). The mapped array then has the rows' shape and
    /// mapping-relative indices; [`MappedArray::rows`] tells where they
    /// lie. Mappings.
    pub fn rows(&mut self, rows: Range<usize>) -> &mut OpenOptions {
        self.rows = Some(rows);
        self
    }

    /// Maps only `rows`: the old name of [`rows`](Self::rows).
    #[deprecated(
        since = "0.2.0",
        note = "renamed `rows`: \"window\" now means a sampled run of rows"
    )]
    pub fn window(&mut self, rows: Range<usize>) -> &mut OpenOptions {
        self.rows(rows)
    }

    /// How to wait for locks other processes hold (see [`Locking`]): the
    /// structure lock (shared while mapped) and the data lock of the mapped
    /// bytes. Conflicts with this process's own mappings always fail at
    /// once ([`ErrorKind::Conflict`](crate::ErrorKind::Conflict)). All
    /// terminal methods.
    pub fn locking(&mut self, locking: Locking) -> &mut OpenOptions {
        self.locks = Locks::Take(locking);
        self
    }

    /// Reads files without a header (numpy's `np.memmap(path, dtype, mode,
    /// offset, shape, order)`): the data at `offset` with the given dtype,
    /// order and shape (every whole item after `offset`, as 1-D, when the
    /// shape is `None`). The mappings ([`open`](Self::open),
    /// [`open_rw`](Self::open_rw), [`open_cow`](Self::open_cow),
    /// [`open_foreign`](Self::open_foreign), [`open_live`](Self::open_live))
    /// then serve such a file exactly as an `.npy` with the same data, with
    /// the same locks and planner; the other terminal methods read headers
    /// and ignore this. `.npy` stays the format this crate writes.
    ///
    /// ```
    /// use npy_core::headerless::Headerless;
    /// use npy_core::{DType, Order};
    /// use npy_mmap::OpenOptions;
    /// # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-bin-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// let path = dir.join("train.bin"); // 5 uint16 tokens, as nanoGPT writes them
    /// std::fs::write(&path, [1u8, 0, 2, 0, 3, 0, 4, 0, 5, 0])?;
    /// let tokens = OpenOptions::new()
    ///     .headerless(Headerless::new(DType::parse("<u2")?, 0, None, Order::C))
    ///     .open(&path)?;
    /// assert_eq!(tokens.view::<u16>()?.to_vec(), [1, 2, 3, 4, 5]);
    /// # drop(tokens); std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn headerless(&mut self, file: Headerless) -> &mut OpenOptions {
        self.headerless = Some(file);
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

    /// Maps `path` read-only (numpy's `mmap_mode="r"`).
    ///
    /// Cost does not depend on the file's size: open, lock, two small reads
    /// (preamble, then header), `fstat`, one `mmap`. No array data is read.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<MappedArray<ReadOnly>> {
        self.map(path.as_ref())
    }

    /// Maps `path` read-write (numpy's `mmap_mode="r+"`): writes reach the
    /// file. The mapped bytes are locked against every other mapping made
    /// through this crate, in any process (docs/SAFETY.md).
    pub fn open_rw(&self, path: impl AsRef<Path>) -> Result<MappedArray<ReadWrite>> {
        self.map(path.as_ref())
    }

    /// Maps `path` copy-on-write (numpy's `mmap_mode="c"`): writes stay in
    /// this process, the file never changes.
    pub fn open_cow(&self, path: impl AsRef<Path>) -> Result<MappedArray<CopyOnWrite>> {
        self.map(path.as_ref())
    }

    /// Maps `path` for live sharing: a writer and readers (threads or
    /// processes) use the same rows at the same time, through atomic element
    /// views. See [`LiveArray`].
    pub fn open_live(&self, path: impl AsRef<Path>) -> Result<LiveArray> {
        let path = path.as_ref();
        let (file, header, layout) = self.open_locked(path, true)?;
        LiveArray::map(file, path, header, layout, &self.request())
    }

    /// Maps `path` for foreign code (numpy) in `mode`: shared with every
    /// other foreign mapping of the same bytes as numpy's memmaps share,
    /// excluded by Rust mappings that lend references. See [`ForeignArray`].
    pub fn open_foreign(&self, path: impl AsRef<Path>, mode: ForeignMode) -> Result<ForeignArray> {
        let path = path.as_ref();
        let (file, header, layout) = self.open_locked(path, mode.needs_write_access())?;
        ForeignArray::map(file, path, header, layout, &self.request(), mode)
    }

    /// Reads the array in `path` into memory (numpy's `np.load(path)`):
    /// see [`load`](crate::load).
    pub fn load(&self, path: impl AsRef<Path>) -> Result<NpyArray> {
        crate::load::load_file(path.as_ref(), &self.read, self.locks)
    }

    /// [`load`](Self::load), an object array's pickle not decoded yet:
    /// [`Loaded::Objects`](crate::load::Loaded::Objects), whose items a
    /// caller makes with its own [`Build`](npy_core::pickle::Build) in one
    /// pass with the decode (the Python package makes Python objects as
    /// the pickle is read). Reading the header and a plain array needs
    /// nothing of the caller's; the decode, whatever the builder needs
    /// (Python's GIL).
    pub fn load_deferred(&self, path: impl AsRef<Path>) -> Result<crate::load::Loaded> {
        crate::load::load_deferred(path.as_ref(), &self.read, self.locks)
    }

    /// Opens `path` for appending rows in place. See [`Appender`].
    pub fn append(&self, path: impl AsRef<Path>) -> Result<Appender> {
        Appender::open(path.as_ref(), &self.read.parse, self.locks)
    }

    /// Opens the `.npz` archive at `path`, reading its central directory only.
    #[cfg(feature = "npz")]
    pub fn open_npz(&self, path: impl AsRef<Path>) -> Result<NpzArchive<BufReader<File>>> {
        NpzArchive::open(path.as_ref(), self.read, self.locks)
    }

    /// Reads the central directory of the archive in `reader` (a file, a
    /// cursor over bytes, a remote reader...).
    #[cfg(feature = "npz")]
    pub fn read_npz<R: Read + Seek>(&self, reader: R) -> Result<NpzArchive<R>> {
        NpzArchive::with_options(reader, self.read)
    }

    /// Maps the `.npz` archive at `path` read-only: stored members then
    /// give typed views straight into the mapping (numpy ignores
    /// `mmap_mode` for archives).
    #[cfg(feature = "npz")]
    pub fn map_npz(&self, path: impl AsRef<Path>) -> Result<MappedNpz> {
        MappedNpz::open(path.as_ref(), self.read, self.locks)
    }

    /// Maps `path` in mode `M`.
    fn map<M: Mode>(&self, path: &Path) -> Result<MappedArray<M>> {
        let (file, header, layout) = self.open_locked(path, M::Map::NEEDS_WRITE_ACCESS)?;
        MappedArray::map(file, path, header, layout, &self.request())
    }

    /// Opens the file, takes the structure lock shared and reads the header.
    fn open_locked(&self, path: &Path, write: bool) -> Result<(TrackedFile, Header, Layout)> {
        // Tracked from the start: a child forked while this opens does not
        // keep the descriptor (see `lock::registry`).
        let mut meta = None;
        let tracked = TrackedFile::open(|| {
            let (file, opened) = open_regular_meta(path, write)?;
            meta = Some(opened);
            Ok(file)
        })?;
        let file = tracked.file();
        lock_shared_meta(file, path, meta.as_ref(), self.locks)?;
        let read = match &self.headerless {
            Some(headerless) => file
                .metadata()
                .map_err(crate::error::io_error("stat", path))
                .and_then(|meta| {
                    headerless
                        .layout_for(meta.len())
                        .map(|parsed| (parsed.header, parsed.layout))
                        .map_err(|e| Error::at(path, ErrorKind::Format(e)))
                })
                .and_then(|(header, layout)| {
                    if write {
                        refuse_header_writes(file, path, layout.data_offset as u64)?;
                    }
                    Ok((header, layout))
                }),
            None => read_header(file, path, &self.read.parse),
        };
        let (header, layout) = read.map_err(|error| {
            match error.kind() {
                // Mapping (not loading) says what np.load(mmap_mode=...) says.
                ErrorKind::Format(npy_core::Error::ObjectDType) => {
                    Error::at(path, ErrorKind::ObjectsNotMappable)
                }
                _ => error,
            }
        })?;
        Ok((tracked, header, layout))
    }

    fn request(&self) -> MapRequest {
        MapRequest {
            rows: self.rows.clone(),
            advice: self.advice,
            locks: self.locks,
        }
    }
}

/// Options with these read options (`max_header_size`, `allow_pickle`, the
/// pickle encoding, `to_native`, `max_data_len`), and the rest default.
impl From<ReadOptions> for OpenOptions {
    fn from(read: ReadOptions) -> OpenOptions {
        OpenOptions {
            read,
            ..OpenOptions::default()
        }
    }
}

/// Refuses a writable headerless mapping from `start` of a file that is an
/// `.npy` whose header reaches past `start`: numpy's `np.memmap(p.npy,
/// mode="r+")` would let it rewrite the header under strict readers of the
/// data (whose locks cover the data, not the header). Reading it is fine.
fn refuse_header_writes(file: &File, path: &Path, start: u64) -> Result<()> {
    let mut first = Vec::with_capacity(Preamble::MAX_LEN);
    let mut reader = file;
    reader
        .seek(std::io::SeekFrom::Start(0))
        .and_then(|_| {
            reader
                .take(Preamble::MAX_LEN as u64)
                .read_to_end(&mut first)
        })
        .map_err(crate::error::io_error("read", path))?;
    let filled = first.len();
    if !first[..filled].starts_with(&npy_core::header::MAGIC) {
        return Ok(());
    }
    // A preamble that does not parse still claims the magic and version.
    let header_end = Preamble::parse(&first[..filled])
        .map(|preamble| preamble.data_offset() as u64)
        .unwrap_or(8);
    if start < header_end {
        return Err(Error::at(
            path,
            ErrorKind::HeaderlessOverHeader { header_end },
        ));
    }
    Ok(())
}

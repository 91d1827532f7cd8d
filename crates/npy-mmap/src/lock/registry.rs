//! What this process holds: a registry of the byte ranges it maps and the
//! writers it runs, per file (device and inode), and the open files it
//! locks; and how a child made by `fork` is kept consistent with it.
//!
//! A conflict with something this process holds fails at once (waiting for
//! ourselves could never end), so every lock the crate takes is first
//! entered here. A file that carries a mapping's locks is a
//! [`TrackedFile`]: its registry entries and its descriptor go together,
//! under the registry's lock, so nobody in this process ever sees one
//! without the other (an opener never finds a lock of its own process that
//! the registry does not explain).
//!
//! **Fork.** A child is a copy of its parent with one thread: the forking
//! one. The forking thread takes the registry's lock just before `fork` and
//! lets go of it just after, in both processes (`pthread_atfork`), so the
//! child starts with a registry that is consistent and not locked. It
//! describes what the child inherited: every finished mapping and writer of
//! the parent (mapped in the child too, with its locks), each entry marked
//! with the process that made it. What another thread was *in the middle
//! of* (opening a file, taking its locks, mapping it) does not exist in the
//! child: that thread is gone, and its descriptor would keep the parent's
//! open file description, and every lock the parent then takes on it, alive
//! for the child's whole life, with no entry to explain it. So a tracked
//! file is *busy* from its open until the object it serves is finished, and
//! the child closes every busy descriptor and forgets its entries.

use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::error::{Error, ErrorKind, Result, io_error};

use super::table::Access;

/// What a writer keeping a file's structure lock exclusive is, for the
/// message that refuses another use of the file in this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Writer {
    /// [`RowWriter`](crate::RowWriter) (`CreateOptions::stream`), until `finish`.
    Rows,
    /// [`AtomicFile`](crate::AtomicFile)'s temporary, until `commit`.
    Temporary,
}

impl Writer {
    fn describe(self) -> &'static str {
        match self {
            Writer::Rows => "a RowWriter (CreateOptions::stream) writing the file",
            Writer::Temporary => "an AtomicFile writing the file (its temporary)",
        }
    }
}

/// What an entry of the registry holds.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Held {
    /// A mapping's data lock on the entry's range.
    Data(Access),
    /// The whole file's structure lock, exclusive, for as long as a writer
    /// object lives: every other use of the file waits for its owner.
    Structure(Writer),
}

impl Held {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Held::Data(access) => access.describe_held(),
            Held::Structure(writer) => writer.describe(),
        }
    }
}

/// Which file: device and inode (a path may have many names).
pub(crate) type FileKey = (u64, u64);

pub(crate) fn file_key(file: &File, path: &Path) -> Result<FileKey> {
    let meta = file.metadata().map_err(io_error("stat", path))?;
    key_of(&meta, path)
}

pub(crate) fn key_of(meta: &std::fs::Metadata, path: &Path) -> Result<FileKey> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = path;
        Ok((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        // No stable file index in std here: the canonical path stands in.
        let _ = meta;
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let canonical = std::fs::canonicalize(path).map_err(io_error("resolve", path))?;
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(canonical);
        Ok((0, hash))
    }
}

/// A descriptor, as the registry knows it (the raw descriptor on Unix).
#[cfg(unix)]
type Fd = std::os::fd::RawFd;
#[cfg(not(unix))]
type Fd = u64;

#[cfg(unix)]
fn fd_of(file: &File) -> Fd {
    std::os::fd::AsRawFd::as_raw_fd(file)
}
#[cfg(not(unix))]
fn fd_of(file: &File) -> Fd {
    std::os::windows::io::AsRawHandle::as_raw_handle(file) as usize as u64
}

pub(crate) struct Entry {
    id: u64,
    /// The process that registered it: another one (the parent) when this
    /// process was made by `fork`.
    pid: u32,
    pub(crate) key: FileKey,
    /// The bytes held (the whole file for a structure lock).
    range: Range<u64>,
    pub(crate) held: Held,
    /// The tracked file whose descriptor carries the lock, if any: the
    /// entry goes when that file closes.
    fd: Option<Fd>,
}

impl Entry {
    /// Whether this entry keeps `access` to `range` of the file `key` out.
    pub(crate) fn excludes(&self, key: FileKey, range: &Range<u64>, access: Access) -> bool {
        self.key == key
            && match self.held {
                Held::Data(held) => overlaps(&self.range, range) && !held.admits(access),
                Held::Structure(_) => true,
            }
    }

    /// The conflict of `wanted` with what this entry holds.
    pub(crate) fn conflict(&self, path: &Path, wanted: &'static str) -> Error {
        Error::at(
            path,
            ErrorKind::Conflict {
                inherited: self.pid != std::process::id(),
                wanted,
                held: self.held.describe(),
            },
        )
    }
}

fn overlaps(a: &Range<u64>, b: &Range<u64>) -> bool {
    a.start < b.end && b.start < a.end
}

/// A file whose descriptor is tracked, and whether its operation is still
/// under way (busy) or done.
struct Tracked {
    fd: Fd,
    busy: bool,
}

#[derive(Default)]
pub(crate) struct Registry {
    entries: Vec<Entry>,
    files: Vec<Tracked>,
}

impl Registry {
    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Whether this process holds any lock of ours (of any file).
    pub(crate) fn holds_any(&self) -> bool {
        !self.entries.is_empty()
    }
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    entries: Vec::new(),
    files: Vec::new(),
});
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub(crate) fn registry() -> MutexGuard<'static, Registry> {
    fork::watch();
    lock_registry()
}

fn lock_registry() -> MutexGuard<'static, Registry> {
    // A panic while holding the lock leaves the lists consistent (every
    // change is one push or one remove), so a poisoned lock is still good.
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Registers `held` for `range` of the file `key` (carried by `file`'s
/// descriptor, if it is tracked) unless something this process holds
/// excludes it (`excludes` decides); returns the entry's id, or the
/// `Conflict` naming what `wanted` met.
pub(crate) fn register(
    path: &Path,
    key: FileKey,
    range: Range<u64>,
    held: Held,
    file: Option<&TrackedFile>,
    wanted: &'static str,
    excludes: impl Fn(&Entry) -> bool,
) -> Result<u64> {
    let mut registry = registry();
    if let Some(holder) = registry.entries.iter().find(|entry| excludes(entry)) {
        return Err(holder.conflict(path, wanted));
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    registry.entries.push(Entry {
        id,
        pid: std::process::id(),
        key,
        range,
        held,
        fd: file.map(|file| fd_of(file.file())),
    });
    Ok(id)
}

pub(crate) fn forget(id: u64) {
    registry().entries.retain(|entry| entry.id != id);
}

/// A file that carries locks of a mapping (or of an operation under way),
/// tracked by the registry from its open to its close: see the module docs.
/// Closing it forgets its entries in the same step.
#[derive(Debug)]
pub(crate) struct TrackedFile {
    /// `None` once closed.
    file: Option<File>,
}

impl TrackedFile {
    /// Opens a file with `open` and tracks it, busy (an operation of this
    /// thread is under way with it), in one step: a child forked meanwhile
    /// has either no descriptor or one it knows to close.
    pub(crate) fn open(open: impl FnOnce() -> Result<File>) -> Result<TrackedFile> {
        let mut registry = registry();
        Ok(TrackedFile::track(&mut registry, open()?))
    }

    fn track(registry: &mut Registry, file: File) -> TrackedFile {
        registry.files.push(Tracked {
            fd: fd_of(&file),
            busy: true,
        });
        TrackedFile { file: Some(file) }
    }

    /// Tracks a file this process opened (and wrote) before, busy. A child
    /// forked before this keeps a copy of its descriptor: only files being
    /// created come here (see docs/SAFETY.md, "Forks").
    pub(crate) fn adopt(file: File) -> TrackedFile {
        TrackedFile::track(&mut registry(), file)
    }

    pub(crate) fn file(&self) -> &File {
        self.file
            .as_ref()
            .expect("a tracked file is open until dropped")
    }

    /// The operation is done: the file now belongs to a finished object
    /// (a mapping), which a child made by `fork` inherits as it is.
    pub(crate) fn settle_in(&self, registry: &mut Registry) {
        let fd = fd_of(self.file());
        if let Some(tracked) = registry.files.iter_mut().find(|t| t.fd == fd) {
            tracked.busy = false;
        }
    }

    /// Forgets the file's entries and closes it, in `registry` (locked).
    pub(crate) fn close_in(&mut self, registry: &mut Registry) {
        let Some(file) = self.file.take() else {
            return;
        };
        let fd = fd_of(&file);
        registry.entries.retain(|entry| entry.fd != Some(fd));
        registry.files.retain(|tracked| tracked.fd != fd);
        // Closed under the registry's lock: the entries and the locks the
        // descriptor carries go in one step for every thread of this
        // process, and for a child forked now.
        drop(file);
    }
}

impl Drop for TrackedFile {
    fn drop(&mut self) {
        if self.file.is_some() {
            self.close_in(&mut registry());
        }
    }
}

/// The registry across `fork` (see the module docs).
mod fork {
    use std::cell::RefCell;
    use std::sync::{MutexGuard, Once};

    use crate::lock::registry::{Fd, Registry, lock_registry};

    thread_local! {
        /// The registry lock, held by the forking thread around `fork`.
        static HELD: RefCell<Option<MutexGuard<'static, Registry>>> =
            const { RefCell::new(None) };
    }

    fn before() {
        HELD.with(|held| *held.borrow_mut() = Some(lock_registry()));
    }

    fn in_parent() {
        HELD.with(|held| drop(held.borrow_mut().take()));
    }

    /// In the child: the busy files belong to operations of threads that
    /// are gone; forget what they held, and have `close` close them.
    fn in_child(close: &mut dyn FnMut(Fd)) {
        HELD.with(|held| {
            let mut held = held.borrow_mut();
            if let Some(registry) = held.as_mut() {
                let Registry { entries, files } = &mut **registry;
                for tracked in files.iter().filter(|tracked| tracked.busy) {
                    entries.retain(|entry| entry.fd != Some(tracked.fd));
                    close(tracked.fd);
                }
                files.retain(|tracked| !tracked.busy);
            }
            drop(held.take());
        });
    }

    /// Installs the handlers, once per process (a child inherits them).
    pub(super) fn watch() {
        static INSTALLED: Once = Once::new();
        INSTALLED.call_once(|| crate::sys::on_fork(before, in_parent, in_child));
    }
}

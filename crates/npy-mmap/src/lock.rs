//! Every lock of the crate: the *structure* lock (whole file) and the *data*
//! locks (byte ranges) that make sharing mapped bytes sound.
//!
//! **Structure** (`flock`, whole file): changing a file's header or length
//! takes it exclusive; every mapping holds it shared for as long as it lives.
//!
//! **Data** (byte ranges, one per mapping): a plain view (`&[T]`, `&mut
//! [T]`) of some bytes may exist only while nothing else that uses this
//! crate can write them. Three kinds of access:
//!
//! | held \ wanted | read (`r`, `c`) | write (`r+`, create) | live (atomics) |
//! | --- | --- | --- | --- |
//! | read | admitted | refused | refused |
//! | write | refused | refused | refused |
//! | live | refused | refused | admitted |
//!
//! (for overlapping ranges; disjoint ranges never conflict, so workers fill
//! disjoint windows in parallel).
//!
//! Inside one process a registry of mapped ranges (per device and inode)
//! decides, and a conflict fails at once: waiting for ourselves could never
//! end. Across processes, Linux open-file-description locks (`F_OFD_SETLK`)
//! decide: plain mappings lock their bytes (read or write lock); live
//! mappings read-lock the same range shifted into a second *lane* far past
//! any data. Byte-range locks alone cannot admit a group and exclude
//! another, so an opener takes its own lock, then tests the other group's
//! lane and backs off if it finds a lock there: two `fcntl` calls when
//! nobody is in the way. A blocking open that meets a conflict holds
//! nothing while it waits, and retries with a growing pause.
//!
//! Elsewhere (macOS, Windows: no OFD locks here yet) the registry still
//! protects each process from itself, but nothing checks other processes'
//! data ranges: see docs/SAFETY.md.

use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result, io_error};
use crate::sys::Grant;

/// How to take a lock that another process holds in a conflicting way
/// (a read-write or live mapping of the same bytes, an append, a stream
/// being written).
///
/// The default waits up to [`Locking::DEFAULT_TIMEOUT`], then fails with
/// [`ErrorKind::Locked`](crate::ErrorKind::Locked), which says what it
/// waited for: a reader never hangs silently behind a writer that forgot to
/// finish. Conflicts with this process's own mappings are never waited for
/// (they could not end while we wait): they fail at once with
/// [`ErrorKind::Conflict`](crate::ErrorKind::Conflict).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Locking {
    /// Wait as long as it takes.
    Blocking,
    /// Fail at once when another process holds a conflicting lock.
    NonBlocking,
    /// Wait at most this long.
    Timeout(Duration),
}

impl Locking {
    /// How long [`Locking::default`] waits: 10 seconds.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
}

impl Default for Locking {
    fn default() -> Self {
        Locking::Timeout(Locking::DEFAULT_TIMEOUT)
    }
}

/// Retries `attempt` (which says whether it got the lock) as `locking`
/// says, counting from `started`: once, until a deadline, or for ever;
/// sleeping between attempts with a backoff from 100 µs to 50 ms.
fn retry(
    path: &Path,
    locking: Locking,
    started: Instant,
    mut attempt: impl FnMut() -> Result<bool>,
) -> Result<()> {
    let mut pause = Duration::from_micros(100);
    loop {
        if attempt()? {
            return Ok(());
        }
        let waited = started.elapsed();
        let left = match locking {
            Locking::NonBlocking => Duration::ZERO,
            Locking::Timeout(limit) => limit.saturating_sub(waited),
            Locking::Blocking => Duration::MAX,
        };
        if left.is_zero() {
            return Err(Error::at(path, ErrorKind::Locked { waited }));
        }
        std::thread::sleep(pause.min(left));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// Whether locks are taken at all: only `unsafe` code may skip them
/// ([`OpenOptions::ignore_locks`](crate::OpenOptions::ignore_locks)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Locks {
    Take(Locking),
    /// The caller promised, in an `unsafe` block, that nothing changes the
    /// mapped bytes or the file's length while the mapping lives.
    Ignore,
}

impl Default for Locks {
    fn default() -> Self {
        Locks::Take(Locking::default())
    }
}

/// What a mapping does with its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Plain shared views: `r`, and `c` (whose unwritten pages show the file).
    Read,
    /// Plain writable views that reach the file: `r+`, a created file.
    Write,
    /// Atomic element views only: shared with other live mappings.
    Live,
}

impl Access {
    fn admits(self, other: Access) -> bool {
        matches!(
            (self, other),
            (Access::Read, Access::Read) | (Access::Live, Access::Live)
        )
    }

    fn describe(self) -> &'static str {
        match self {
            Access::Read => "a read-only mapping",
            Access::Write => "a read-write mapping",
            Access::Live => "a live (atomic) mapping",
        }
    }

    fn describe_held(self) -> &'static str {
        match self {
            Access::Read => "a read-only mapping of the same bytes",
            Access::Write => "a read-write mapping of the same bytes",
            Access::Live => "a live (atomic) mapping of the same bytes",
        }
    }
}

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
enum Held {
    /// A mapping's data lock on the entry's range.
    Data(Access),
    /// The whole file's structure lock, exclusive, for as long as a writer
    /// object lives: every other use of the file waits for its owner.
    Structure(Writer),
}

impl Held {
    fn describe(self) -> &'static str {
        match self {
            Held::Data(access) => access.describe_held(),
            Held::Structure(writer) => writer.describe(),
        }
    }
}

/// Which file: device and inode (a path may have many names).
type FileKey = (u64, u64);

fn file_key(file: &File, path: &Path) -> Result<FileKey> {
    let meta = file.metadata().map_err(io_error("stat", path))?;
    key_of(&meta, path)
}

fn key_of(meta: &std::fs::Metadata, path: &Path) -> Result<FileKey> {
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

struct Entry {
    id: u64,
    key: FileKey,
    /// The bytes held (the whole file for a structure lock).
    range: Range<u64>,
    held: Held,
}

impl Entry {
    /// Whether this entry keeps `access` to `range` of the file `key` out.
    fn excludes(&self, key: FileKey, range: &Range<u64>, access: Access) -> bool {
        self.key == key
            && match self.held {
                Held::Data(held) => overlaps(&self.range, range) && !held.admits(access),
                Held::Structure(_) => true,
            }
    }
}

/// Registers `held` for `range` of the file `key` unless something this
/// process holds excludes it (`excludes` decides); returns the entry's id,
/// or the `Conflict` naming what `wanted` met.
fn register(
    path: &Path,
    key: FileKey,
    range: Range<u64>,
    held: Held,
    wanted: &'static str,
    excludes: impl Fn(&Entry) -> bool,
) -> Result<u64> {
    let mut entries = registry();
    if let Some(holder) = entries.iter().find(|entry| excludes(entry)) {
        return Err(Error::at(
            path,
            ErrorKind::Conflict {
                wanted,
                held: holder.held.describe(),
            },
        ));
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    entries.push(Entry {
        id,
        key,
        range,
        held,
    });
    Ok(id)
}

fn forget(id: u64) {
    registry().retain(|entry| entry.id != id);
}

/// What this process has mapped.
static REGISTRY: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn registry() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    // A panic while holding the lock leaves the list consistent (every
    // change is one push or one remove), so a poisoned lock is still good.
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn overlaps(a: &Range<u64>, b: &Range<u64>) -> bool {
    a.start < b.end && b.start < a.end
}

/// The data lock of one mapping: its [`Grant`] is proof (for the `sys` module) that the
/// bytes `range` of the file may be mapped with the access it was taken
/// for. Dropping it forgets the range in this process; the lock held across
/// processes goes with the file's descriptor, which its owner closes first.
#[derive(Debug)]
pub(crate) struct DataLock {
    /// `None` for ignored locks: nothing to forget.
    id: Option<u64>,
    /// The range, and the file's length when the lock was taken (under the
    /// structure lock, which keeps cooperating processes from shrinking it).
    grant: Grant,
}

impl DataLock {
    /// Takes the data lock for `range` of `file` (open on `path`, whose
    /// metadata `meta` was read with the structure lock held) for `access`,
    /// as `locks` says.
    pub(crate) fn acquire(
        file: &File,
        path: &Path,
        meta: &std::fs::Metadata,
        range: Range<u64>,
        access: Access,
        locks: Locks,
    ) -> Result<DataLock> {
        let file_len = meta.len();
        let unlocked = DataLock {
            id: None,
            grant: Grant::new(range.clone(), file_len),
        };
        // A caller who promised (unsafely) to need no lock.
        let Locks::Take(locking) = locks else {
            return Ok(unlocked);
        };
        let key = key_of(meta, path)?;
        let id = register(
            path,
            key,
            range.clone(),
            Held::Data(access),
            access.describe(),
            |entry| entry.excludes(key, &range, access),
        )?;
        let lock = DataLock {
            id: Some(id),
            grant: Grant::new(range, file_len),
        };
        // An empty range conflicts with nothing, but is registered all the
        // same: it says that this process uses the file (see `lock_shared`).
        // On error `lock` drops and leaves the registry.
        let range = lock.grant.range();
        if !range.is_empty() {
            cross_process::acquire(file, path, &range, access, locking)?;
        }
        Ok(lock)
    }

    /// What the lock allows to be mapped (`sys::map_data` takes it).
    pub(crate) fn grant(&self) -> &Grant {
        &self.grant
    }
}

impl Drop for DataLock {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            forget(id);
        }
    }
}

/// The exclusive structure lock of a writer object (a [`Writer`]), known to
/// this process's registry for as long as the object lives: any other use
/// of the file in this process fails at once with `Conflict` naming the
/// writer, instead of waiting for a lock that only its owner can release.
/// The lock itself goes with the file's descriptor; dropping this forgets
/// the registration.
#[derive(Debug)]
pub(crate) struct WriterLock {
    /// `None` for ignored locks: nothing registered.
    id: Option<u64>,
}

impl WriterLock {
    /// Takes `file`'s structure lock exclusive for `writer`, as `locks`
    /// says (refused at once while this process uses the file).
    pub(crate) fn acquire(
        file: &File,
        path: &Path,
        locks: Locks,
        writer: Writer,
    ) -> Result<WriterLock> {
        let Locks::Take(locking) = locks else {
            return Ok(WriterLock { id: None });
        };
        let key = file_key(file, path)?;
        // Registered first, so that two threads of this process cannot
        // both get past the check; forgotten again if the lock fails.
        let id = register(
            path,
            key,
            0..u64::MAX,
            Held::Structure(writer),
            CHANGE,
            |entry| entry.key == key,
        )?;
        let registered = WriterLock { id: Some(id) };
        lock_structure(file, path, locking, true)?;
        Ok(registered)
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            forget(id);
        }
    }
}

/// What a change of structure is called in a conflict.
const CHANGE: &str = "changing the file's header or length";

/// Refuses `wanted` while this process holds something that `conflicts`
/// with it on `file`: waiting would never end.
fn refuse_own(
    file: &File,
    path: &Path,
    wanted: &'static str,
    conflicts: impl Fn(&Held) -> bool,
) -> Result<FileKey> {
    let key = file_key(file, path)?;
    match registry()
        .iter()
        .find(|entry| entry.key == key && conflicts(&entry.held))
    {
        Some(holder) => Err(Error::at(
            path,
            ErrorKind::Conflict {
                wanted,
                held: holder.held.describe(),
            },
        )),
        None => Ok(key),
    }
}

/// Takes the structure lock shared, as `locks` says; refused at once while
/// a writer object of this process holds it exclusive.
pub(crate) fn lock_shared(file: &File, path: &Path, locks: Locks) -> Result<()> {
    let Locks::Take(locking) = locks else {
        return Ok(());
    };
    let key = refuse_own(file, path, "opening the file", |held| {
        matches!(held, Held::Structure(_))
    })?;
    // A process that already maps the file is let in ahead of waiting
    // writers: it may be holding them up itself (a reader opening a second
    // view before dropping its first), and making it queue would deadlock.
    let mapped_here = registry().iter().any(|entry| entry.key == key);
    if !mapped_here {
        turn::wait_for_writers(file, path, locking)?;
    }
    lock_structure(file, path, locking, false)
}

/// Takes the structure lock exclusive, as `locks` says; refused at once
/// while this process maps the file or a writer object of it holds it.
pub(crate) fn lock_exclusive(file: &File, path: &Path, locks: Locks) -> Result<()> {
    let Locks::Take(locking) = locks else {
        return Ok(());
    };
    refuse_own(file, path, CHANGE, |_| true)?;
    lock_structure(file, path, locking, true)
}

/// The structure lock held for one step (a change, or a check) and
/// released on drop: the one place this crate lets go of a structure lock
/// before the file closes. (Locks kept for a mapping's whole life are
/// released by closing the file.)
pub(crate) struct StructureLock<'a> {
    file: &'a File,
    locked: bool,
}

impl<'a> StructureLock<'a> {
    /// Takes the lock exclusive, for a change of the header or length.
    pub(crate) fn exclusive(file: &'a File, path: &Path, locks: Locks) -> Result<Self> {
        lock_exclusive(file, path, locks)?;
        Ok(StructureLock {
            file,
            locked: locks != Locks::Ignore,
        })
    }

    /// Takes the lock shared, for a check that must see a stable file.
    pub(crate) fn shared(file: &'a File, path: &Path, locks: Locks) -> Result<Self> {
        lock_shared(file, path, locks)?;
        Ok(StructureLock {
            file,
            locked: locks != Locks::Ignore,
        })
    }
}

impl Drop for StructureLock<'_> {
    fn drop(&mut self) {
        if self.locked {
            // Closing the file would release it too; an error here leaves
            // nothing to undo.
            drop(self.file.unlock());
        }
    }
}

/// Turns the exclusive structure lock of a file this process just wrote into
/// the shared lock a mapping holds. std offers no downgrade, and `flock`
/// itself converts by unlocking first: there is a moment without a lock, so
/// the caller checks afterwards that the file is still the one it wrote.
pub(crate) fn downgrade(file: &File, path: &Path, locks: Locks) -> Result<()> {
    if locks != Locks::Ignore {
        file.unlock().map_err(io_error("unlock", path))?;
    }
    lock_shared(file, path, locks)
}

/// Takes the structure lock (shared or exclusive) as `locking` says:
/// the kernel's wait for `Blocking`, else tries until the deadline. An
/// exclusive lock first takes the writers' turn (see [`turn`]), so that
/// readers arriving while it waits queue behind it instead of starving it.
fn lock_structure(file: &File, path: &Path, locking: Locking, exclusive: bool) -> Result<()> {
    let started = Instant::now();
    // Held while this waits (another writer's turn is not waited for).
    let _turn = if exclusive {
        turn::Turn::try_take(file, path)?
    } else {
        None
    };
    if locking == Locking::Blocking {
        let locked = if exclusive {
            file.lock()
        } else {
            file.lock_shared()
        };
        return locked.map_err(io_error("lock", path));
    }
    retry(path, locking, started, || {
        let tried = if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        };
        match tried {
            Ok(()) => Ok(true),
            Err(std::fs::TryLockError::WouldBlock) => Ok(false),
            Err(std::fs::TryLockError::Error(source)) => Err(io_error("lock", path)(source)),
        }
    })
}

#[cfg(target_os = "linux")]
mod cross_process {
    use std::fs::File;
    use std::ops::Range;
    use std::path::Path;

    use super::{Access, Locking};
    use crate::error::{Result, io_error};
    use crate::sys::range_lock::{self, Kind};

    /// Live locks lie in a second lane, this far past the data's bytes.
    pub(super) const LIVE_LANE: u64 = 1 << 62;
    /// Data lies below this, so that the live lane ends before the turn.
    const DATA_LIMIT: u64 = super::turn::TURN.start - LIVE_LANE;

    fn shifted(range: &Range<u64>) -> Range<u64> {
        range.start + LIVE_LANE..range.end + LIVE_LANE
    }

    /// Takes the cross-process lock of `range` for `access` on `file`'s
    /// open file description (released when the file is closed).
    ///
    /// Take, then check: the opener locks its own lane, then looks for any
    /// lock in the other group's lane, and backs off (releasing its own)
    /// if it finds one. Both steps are atomic in the kernel, so of two
    /// openers from different groups racing for the same bytes at least one
    /// sees the other: never both succeed. (A shared "sentinel" lock would
    /// need a write lock, which a file opened read-only cannot take.)
    pub(super) fn acquire(
        file: &File,
        path: &Path,
        range: &Range<u64>,
        access: Access,
        locking: Locking,
    ) -> Result<()> {
        if range.end > DATA_LIMIT {
            return Err(io_error("lock", path)(std::io::Error::other(
                "the data lies past 4 EiB, beyond what byte-range locks here can cover",
            )));
        }
        let (own, kind, other) = match access {
            Access::Read => (range.clone(), Kind::Read, shifted(range)),
            Access::Write => (range.clone(), Kind::Write, shifted(range)),
            Access::Live => (shifted(range), Kind::Read, range.clone()),
        };
        // A writer that has to wait takes the writers' turn if it is free,
        // so that readers arriving meanwhile queue behind it.
        let mut turn = None;
        super::retry(path, locking, std::time::Instant::now(), || {
            if access != Access::Read && turn.is_none() {
                turn = super::turn::Turn::try_take(file, path)?;
            }
            let attempt = || -> std::io::Result<bool> {
                if !range_lock::try_lock(file, &own, kind)? {
                    return Ok(false);
                }
                // Any lock in the other lane (a write test conflicts with
                // every lock) means the other group holds these bytes.
                if range_lock::is_locked(file, &other, Kind::Write)? {
                    range_lock::unlock(file, &own)?;
                    return Ok(false);
                }
                Ok(true)
            };
            attempt().map_err(io_error("lock", path))
        })
    }
}

#[cfg(not(target_os = "linux"))]
mod cross_process {
    use std::fs::File;
    use std::ops::Range;
    use std::path::Path;

    use super::{Access, Locking};
    use crate::error::Result;

    /// No byte-range locks across processes here (see the module docs).
    pub(super) fn acquire(
        _file: &File,
        _path: &Path,
        _range: &Range<u64>,
        _access: Access,
        _locking: Locking,
    ) -> Result<()> {
        Ok(())
    }
}

/// The writers' turn (Linux): one byte past both lock lanes that a writer
/// which has to wait (for the exclusive structure lock, or for a data lock
/// that readers hold) write-locks while it waits; a process that does not
/// use the file yet waits for the turn to be free before it takes the
/// shared structure lock. So readers arriving in a steady stream cannot
/// keep a writer out for ever: once it waits, newcomers queue behind it,
/// and it gets in as soon as the readers already there let go. The turn is
/// taken only when free (never waited for), so two writers never wait for
/// each other's turn, and processes already using the file are let in
/// (they may be the ones the writer waits for).
#[cfg(target_os = "linux")]
mod turn {
    use std::fs::File;
    use std::ops::Range;
    use std::path::Path;
    use std::time::Instant;

    use super::{Locking, cross_process::LIVE_LANE};
    use crate::error::{Result, io_error};
    use crate::sys::range_lock::{self, Kind};

    /// The byte: the last but one that `off_t` can address.
    pub(super) const TURN: Range<u64> = 2 * LIVE_LANE - 2..2 * LIVE_LANE - 1;

    /// The turn, held: released on drop.
    pub(super) struct Turn<'a> {
        file: &'a File,
    }

    impl<'a> Turn<'a> {
        /// Takes the turn if no other writer holds it.
        pub(super) fn try_take(file: &'a File, path: &Path) -> Result<Option<Turn<'a>>> {
            let taken =
                range_lock::try_lock(file, &TURN, Kind::Write).map_err(io_error("lock", path))?;
            Ok(taken.then_some(Turn { file }))
        }
    }

    impl Drop for Turn<'_> {
        fn drop(&mut self) {
            // Closing the file releases it too.
            drop(range_lock::unlock(self.file, &TURN));
        }
    }

    /// Waits, as `locking` says, until no writer waits for the file.
    pub(super) fn wait_for_writers(file: &File, path: &Path, locking: Locking) -> Result<()> {
        super::retry(path, locking, Instant::now(), || {
            let waiting =
                range_lock::is_locked(file, &TURN, Kind::Read).map_err(io_error("lock", path))?;
            Ok(!waiting)
        })
    }
}

/// No writers' turn where there are no byte-range locks (see the module docs).
#[cfg(not(target_os = "linux"))]
mod turn {
    use std::fs::File;
    use std::path::Path;

    use super::Locking;
    use crate::error::Result;

    pub(super) struct Turn;

    impl Turn {
        pub(super) fn try_take(_file: &File, _path: &Path) -> Result<Option<Turn>> {
            Ok(Some(Turn))
        }
    }

    pub(super) fn wait_for_writers(_file: &File, _path: &Path, _locking: Locking) -> Result<()> {
        Ok(())
    }
}

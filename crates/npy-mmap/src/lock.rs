//! Every lock of the crate: the *structure* lock (whole file) and the *data*
//! locks (byte ranges) that make sharing mapped bytes sound.
//!
//! **Structure** (`flock`, whole file): changing a file's header or length
//! takes it exclusive; every mapping holds it shared for as long as it lives.
//!
//! **Data** (byte ranges, one per mapping): a plain view (`&[T]`, `&mut
//! [T]`) of some bytes may exist only while nothing else that uses this
//! crate can write them. Five kinds of access:
//!
//! | held \ wanted | read (`r`, `c`) | write (`r+`, create) | live (atomics) | foreign read | foreign write |
//! | --- | --- | --- | --- | --- | --- |
//! | read | admitted | refused | refused | admitted | refused |
//! | write | refused | refused | refused | refused | refused |
//! | live | refused | refused | admitted | refused | refused |
//! | foreign read | admitted | refused | refused | admitted | admitted |
//! | foreign write | refused | refused | refused | admitted | admitted |
//!
//! *Foreign* mappings ([`ForeignArray`](crate::ForeignArray): numpy's
//! arrays, through the Python package) lend their bytes to code outside
//! Rust's rules and read them only with atomic loads, so they share bytes
//! with each other as numpy's memmaps do; they still exclude every Rust
//! reference that the sharing would break.
//!
//! (for overlapping ranges; disjoint ranges never conflict, so workers fill
//! disjoint windows in parallel).
//!
//! Inside one process a registry of mapped ranges (per device and inode)
//! decides, and a conflict fails at once: waiting for ourselves could never
//! end. Across processes, Linux open-file-description locks (`F_OFD_SETLK`)
//! decide: plain mappings lock their bytes (read or write lock); live and
//! foreign mappings read-lock the same range shifted into *lanes* of their
//! own far past any data (see [`cross_process`]). Byte-range locks alone
//! cannot admit a group and exclude another, so an opener takes its own
//! locks, then tests the lanes of the groups it excludes and backs off if
//! it finds a lock there: a few `fcntl` calls when nobody is in the way. A
//! blocking open that meets a conflict holds nothing of that file while it
//! waits, and retries with a growing pause.
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

/// What one attempt at a lock found: the lock, or what holds it.
enum Attempt {
    Got,
    /// Held by this (for the message: "a read-write mapping of ...").
    Blocked(&'static str),
}

/// Retries `attempt` as `locking` says, counting from `started`: once,
/// until a deadline, or for ever; sleeping between attempts with a backoff
/// from 100 µs to 50 ms. Giving up names what held the lock last.
fn retry(
    path: &Path,
    locking: Locking,
    started: Instant,
    mut attempt: impl FnMut() -> Result<Attempt>,
) -> Result<()> {
    let mut pause = Duration::from_micros(100);
    loop {
        let held = match attempt()? {
            Attempt::Got => return Ok(()),
            Attempt::Blocked(held) => held,
        };
        let waited = started.elapsed();
        let left = match locking {
            Locking::NonBlocking => Duration::ZERO,
            Locking::Timeout(limit) => limit.saturating_sub(waited),
            Locking::Blocking => Duration::MAX,
        };
        if left.is_zero() {
            return Err(Error::at(path, ErrorKind::Locked { waited, held }));
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
    /// Lent to foreign code (numpy) that only reads: `r` and `c` of a
    /// [`ForeignArray`](crate::ForeignArray).
    ForeignRead,
    /// Lent to foreign code (numpy) that writes: `r+` and `w+` of a
    /// [`ForeignArray`](crate::ForeignArray).
    ForeignWrite,
}

impl Access {
    /// Whether a mapping with this access and one with `other` may share
    /// bytes (the table of the module docs; symmetric).
    fn admits(self, other: Access) -> bool {
        use Access::{ForeignRead, ForeignWrite, Live, Read};
        matches!(
            (self, other),
            (Read, Read)
                | (Live, Live)
                | (Read, ForeignRead)
                | (ForeignRead, Read)
                | (ForeignRead | ForeignWrite, ForeignRead | ForeignWrite)
        )
    }

    fn describe(self) -> &'static str {
        match self {
            Access::Read => "a read-only mapping",
            Access::Write => "a read-write mapping",
            Access::Live => "a live (atomic) mapping",
            Access::ForeignRead => "a numpy-style read-only mapping",
            Access::ForeignWrite => "a numpy-style read-write mapping",
        }
    }

    fn describe_held(self) -> &'static str {
        match self {
            Access::Read => "a strict (Rust-reference) read-only mapping of the same bytes",
            Access::Write => "a strict (Rust-reference) read-write mapping of the same bytes",
            Access::Live => "a live (atomic) mapping of the same bytes",
            Access::ForeignRead => "a numpy-style read-only mapping of the same bytes",
            Access::ForeignWrite => "a numpy-style read-write mapping of the same bytes",
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
    /// The process that registered it: another one (the parent) when this
    /// process was made by `fork`, which copies the registry with the
    /// mappings and open files it describes.
    pid: u32,
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
                inherited: holder.pid != std::process::id(),
                wanted,
                held: holder.held.describe(),
            },
        ));
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    entries.push(Entry {
        id,
        pid: std::process::id(),
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
    fork::watch();
    lock_registry()
}

fn lock_registry() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    // A panic while holding the lock leaves the list consistent (every
    // change is one push or one remove), so a poisoned lock is still good.
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The registry across `fork`: a child is a copy of its parent with one
/// thread, so a registry lock that another thread of the parent held at
/// that moment would stay locked in the child for ever. The forking thread
/// takes the lock just before `fork` and lets go of it just after, in both
/// processes (`pthread_atfork`), so the child starts with a consistent
/// registry that is not locked; it describes what the child inherited (the
/// parent's mappings, now the child's too), each entry marked with the
/// process that made it.
mod fork {
    use std::cell::RefCell;
    use std::sync::{MutexGuard, Once};

    use super::Entry;

    thread_local! {
        /// The registry lock, held by the forking thread around `fork`.
        static HELD: RefCell<Option<MutexGuard<'static, Vec<Entry>>>> =
            const { RefCell::new(None) };
    }

    fn before() {
        HELD.with(|held| *held.borrow_mut() = Some(super::lock_registry()));
    }

    fn after() {
        HELD.with(|held| drop(held.borrow_mut().take()));
    }

    /// Installs the handlers, once per process (a child inherits them).
    pub(super) fn watch() {
        static INSTALLED: Once = Once::new();
        INSTALLED.call_once(|| crate::sys::on_fork(before, after));
    }
}

fn overlaps(a: &Range<u64>, b: &Range<u64>) -> bool {
    a.start < b.end && b.start < a.end
}

/// The data lock of one mapping: its [`Grant`] is proof (for the `sys` module) that the
/// bytes `range` of the file may be mapped with the access it was taken
/// for. Dropping it forgets the range in this process; the lock held across
/// processes goes with the file's descriptor, which its owner closes right
/// after (while it is open, its inode cannot be reused by another file).
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
                inherited: holder.pid != std::process::id(),
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
    refuse_own(file, path, "opening the file", |held| {
        matches!(held, Held::Structure(_))
    })?;
    // A process that holds any lock of ours, of this file or another, is
    // let in ahead of waiting writers: it may be what holds them up, here
    // or through a chain of files (P1 maps F and opens G while W2 waits for
    // G's readers, P2 maps G and opens F while W1 waits for F's: had P1 and
    // P2 queued behind the turns, all four would wait for ever). Only a
    // process that holds nothing queues, and nobody waits for it.
    let holds_any = !registry().is_empty();
    if !holds_any {
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
    let held = if exclusive {
        "a mapping of the file, or a change of its header or length"
    } else {
        "a change of the file's header or length (an append, a stream being written, or a file \
         being created)"
    };
    retry(path, locking, started, || {
        let tried = if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        };
        match tried {
            Ok(()) => Ok(Attempt::Got),
            Err(std::fs::TryLockError::WouldBlock) => Ok(Attempt::Blocked(held)),
            Err(std::fs::TryLockError::Error(source)) => Err(io_error("lock", path)(source)),
        }
    })
}

/// The lanes (Linux): each group of mappings locks its bytes in a lane of
/// its own, `LANE` bytes apart, so that a test of one lane finds exactly
/// that group:
///
/// | access | locks (own) | backs off if it finds a lock in |
/// | --- | --- | --- |
/// | read (`&[T]`) | data lane, read | live, foreign-write |
/// | write (`&mut [T]`) | data lane, write | live, foreign-write, foreign |
/// | live | live, read | data lane (any), foreign-write, foreign |
/// | foreign read | foreign, read | data lane (writes only), live |
/// | foreign write | foreign + foreign-write, read | data lane (any), live |
///
/// Every refused pair of the module's table appears in one of its two
/// rows' last column (or conflicts in the kernel: write locks in the data
/// lane), so of two racing openers at least one sees the other.
#[cfg(target_os = "linux")]
mod cross_process {
    use std::fs::File;
    use std::ops::Range;
    use std::path::Path;

    use super::{Access, Attempt, Locking};
    use crate::error::{Result, io_error};
    use crate::sys::range_lock::{self, Kind};

    /// The distance between lanes, and so the most data bytes lockable.
    const LANE: u64 = 1 << 60;
    /// Live mappings' lane.
    pub(super) const LIVE_LANE: u64 = 1 << 62;
    /// Every foreign mapping's lane.
    const FOREIGN_LANE: u64 = LIVE_LANE + LANE;
    /// Foreign writers' second lane (what plain readers test).
    const FOREIGN_WRITE_LANE: u64 = LIVE_LANE + 2 * LANE;
    /// Data lies below this, so that every lane ends before the turn.
    const DATA_LIMIT: u64 = LANE;
    const _: () = assert!(FOREIGN_WRITE_LANE + LANE <= super::turn::TURN.start);

    fn in_lane(lane: u64, range: &Range<u64>) -> Range<u64> {
        range.start + lane..range.end + lane
    }

    /// What holds a lock found at `start` of kind `kind`, in words.
    fn holder(start: u64, kind: Kind) -> &'static str {
        if start >= super::turn::TURN.start {
            "a writer waiting for the file (it goes first)"
        } else if start >= FOREIGN_WRITE_LANE || (start >= FOREIGN_LANE && kind == Kind::Write) {
            "a numpy-style read-write mapping of the same bytes"
        } else if start >= FOREIGN_LANE {
            "a numpy-style mapping of the same bytes"
        } else if start >= LIVE_LANE {
            "a live (atomic) mapping of the same bytes"
        } else if kind == Kind::Write {
            "a strict (Rust-reference) read-write mapping of the same bytes"
        } else {
            "a strict (Rust-reference) read-only mapping of the same bytes"
        }
    }

    /// Lanes, each with a kind of lock (or of test).
    type Lanes = &'static [(u64, Kind)];

    /// The locks `access` takes (lane, kind) and the lanes it tests, with
    /// the kind of the test (a write test finds every lock, a read test
    /// only write locks).
    fn plan(access: Access) -> (Lanes, Lanes) {
        match access {
            Access::Read => (
                &[(0, Kind::Read)],
                &[(LIVE_LANE, Kind::Write), (FOREIGN_WRITE_LANE, Kind::Write)],
            ),
            // Foreign writers' own lane first, so that the message names
            // them as writers; the foreign lane then finds the readers.
            Access::Write => (
                &[(0, Kind::Write)],
                &[
                    (LIVE_LANE, Kind::Write),
                    (FOREIGN_WRITE_LANE, Kind::Write),
                    (FOREIGN_LANE, Kind::Write),
                ],
            ),
            Access::Live => (
                &[(LIVE_LANE, Kind::Read)],
                &[
                    (0, Kind::Write),
                    (FOREIGN_WRITE_LANE, Kind::Write),
                    (FOREIGN_LANE, Kind::Write),
                ],
            ),
            Access::ForeignRead => (
                &[(FOREIGN_LANE, Kind::Read)],
                &[(0, Kind::Read), (LIVE_LANE, Kind::Write)],
            ),
            Access::ForeignWrite => (
                &[(FOREIGN_LANE, Kind::Read), (FOREIGN_WRITE_LANE, Kind::Read)],
                &[(0, Kind::Write), (LIVE_LANE, Kind::Write)],
            ),
        }
    }

    /// Takes the cross-process locks of `range` for `access` on `file`'s
    /// open file description (released when the file is closed).
    ///
    /// Take, then check: the opener locks its own lanes, then looks for a
    /// lock in the lanes of the groups it excludes, and backs off
    /// (releasing its own) if it finds one. Each step is atomic in the
    /// kernel, so of two openers from excluding groups racing for the same
    /// bytes at least one sees the other: never both succeed. (A shared
    /// "sentinel" lock would need a write lock, which a file opened
    /// read-only cannot take.)
    pub(super) fn acquire(
        file: &File,
        path: &Path,
        range: &Range<u64>,
        access: Access,
        locking: Locking,
    ) -> Result<()> {
        if range.end > DATA_LIMIT {
            return Err(io_error("lock", path)(std::io::Error::other(
                "the data lies past 1 EiB, beyond what byte-range locks here can cover",
            )));
        }
        let (own, tests) = plan(access);
        let release = |taken: &[(u64, Kind)]| -> std::io::Result<()> {
            for (lane, _) in taken {
                range_lock::unlock(file, &in_lane(*lane, range))?;
            }
            Ok(())
        };
        // A writer that has to wait takes the writers' turn if it is free,
        // so that readers arriving meanwhile queue behind it.
        let writes = matches!(access, Access::Write | Access::Live | Access::ForeignWrite);
        let mut turn = None;
        super::retry(path, locking, std::time::Instant::now(), || {
            if writes && turn.is_none() {
                turn = super::turn::Turn::try_take(file, path)?;
            }
            let attempt = || -> std::io::Result<Attempt> {
                for (taken, (lane, kind)) in own.iter().enumerate() {
                    let locked = in_lane(*lane, range);
                    if !range_lock::try_lock(file, &locked, *kind)? {
                        release(&own[..taken])?;
                        let found = range_lock::conflict(file, &locked, *kind)?;
                        return Ok(Attempt::Blocked(found.map_or(
                            "a mapping of the same bytes (it went away meanwhile)",
                            |(start, kind)| holder(start, kind),
                        )));
                    }
                }
                for (lane, kind) in tests {
                    if let Some((start, found)) =
                        range_lock::conflict(file, &in_lane(*lane, range), *kind)?
                    {
                        release(own)?;
                        return Ok(Attempt::Blocked(holder(start, found)));
                    }
                }
                Ok(Attempt::Got)
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

/// The writers' turn (Linux): one byte past every lock lane that a writer
/// which has to wait (for the exclusive structure lock, or for a data lock
/// that readers hold) write-locks while it waits; a process that holds no
/// lock of ours yet waits for the turn to be free before it takes the
/// shared structure lock. So readers arriving in a steady stream cannot
/// keep a writer out for ever: once it waits, newcomers queue behind it,
/// and it gets in as soon as the readers already there let go. The turn is
/// taken only when free (never waited for), so two writers never wait for
/// each other's turn, and processes holding any lock of ours are let in
/// (they may be the ones the writer waits for, directly or through a chain
/// of files): whoever waits for a turn holds nothing anyone waits for, so
/// the turn closes no cycle.
#[cfg(target_os = "linux")]
mod turn {
    use std::fs::File;
    use std::ops::Range;
    use std::path::Path;
    use std::time::Instant;

    use super::{Attempt, Locking, cross_process::LIVE_LANE};
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
                range_lock::conflict(file, &TURN, Kind::Read).map_err(io_error("lock", path))?;
            Ok(match waiting {
                Some(_) => Attempt::Blocked("a writer waiting for the file (it goes first)"),
                None => Attempt::Got,
            })
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

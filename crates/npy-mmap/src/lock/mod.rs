//! Every lock of the crate: the *structure* lock (whole file) and the *data*
//! locks (byte ranges) that make sharing mapped bytes sound.
//!
//! **Structure** (`flock`, whole file): changing a file's header or length
//! takes it exclusive; every mapping holds it shared for as long as it lives.
//!
//! **Data** (byte ranges, one per mapping): a plain view (`&[T]`, `&mut
//! [T]`) of some bytes may exist only while nothing else that uses this
//! crate can write them. Five kinds of access ([`Access`]) share or exclude
//! each other as one table says ([`table`]: the lanes each locks and tests,
//! from which admission is derived; drawn in docs/SAFETY.md). Disjoint
//! ranges never conflict, so workers fill disjoint rows in parallel.
//!
//! Inside one process a registry of mapped ranges (per device and inode)
//! decides, and a conflict fails at once: waiting for ourselves could never
//! end ([`registry`], which also keeps a child made by `fork` consistent).
//! Across processes, Linux open-file-description locks decide ([`lanes`]),
//! and writers that have to wait are not starved by arriving readers
//! ([`turn`]). A blocking open that meets a conflict holds nothing of that
//! file while it waits, and retries with a growing, jittered pause
//! ([`policy`]).
//!
//! Elsewhere (macOS, Windows: no OFD locks here yet) the registry still
//! protects each process from itself, but nothing checks other processes'
//! data ranges: see docs/SAFETY.md.

use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::time::Instant;

use crate::error::{Result, io_error};
use crate::sys::Grant;

mod policy;
mod registry;
mod table;

#[cfg(target_os = "linux")]
mod lanes;
#[cfg(target_os = "linux")]
mod turn;

#[cfg(not(target_os = "linux"))]
mod other;
#[cfg(not(target_os = "linux"))]
use other::{lanes, turn};

pub use policy::Locking;
pub(crate) use policy::Locks;
pub(crate) use registry::{TrackedFile, Writer};
pub(crate) use table::Access;

use policy::{Attempt, retry};
use registry::{Held, file_key, forget, key_of, register, registry};

/// The data lock of one mapping, with the file that carries it: its
/// [`Grant`] is proof (for the `sys` module) that the bytes `range` of the
/// file may be mapped with the access it was taken for. Dropping it closes
/// the file and forgets the range in this process in one step (see
/// [`registry`]); once mapped, a [`Mapping`] owns it.
#[derive(Debug)]
pub(crate) struct DataLock {
    file: TrackedFile,
    /// The range, and the file's length when the lock was taken (under the
    /// structure lock, which keeps cooperating processes from shrinking it).
    grant: Grant,
}

impl DataLock {
    /// Takes the data lock for `range` of `file` (open on `path`, whose
    /// metadata `meta` was read with the structure lock held) for `access`,
    /// as `locks` says. The file stays busy until [`map`](Self::map).
    pub(crate) fn acquire(
        file: TrackedFile,
        path: &Path,
        meta: &std::fs::Metadata,
        range: Range<u64>,
        access: Access,
        locks: Locks,
    ) -> Result<DataLock> {
        let lock = DataLock {
            grant: Grant::new(range.clone(), meta.len()),
            file,
        };
        // A caller who promised (unsafely) to need no lock.
        let Locks::Take(locking) = locks else {
            return Ok(lock);
        };
        let key = key_of(meta, path)?;
        // An empty range conflicts with nothing, but is registered all the
        // same: it says that this process uses the file (see `lock_shared`).
        // On error `lock` drops: its file closes and its entry goes.
        register(
            path,
            key,
            range.clone(),
            Held::Data(access),
            Some(&lock.file),
            access.describe(),
            |entry| entry.excludes(key, &range, access),
        )?;
        if !range.is_empty() {
            lanes::acquire(lock.file(), path, &range, access, locking)?;
        }
        Ok(lock)
    }

    /// What the lock allows to be mapped (`sys::map_data` takes it).
    pub(crate) fn grant(&self) -> &Grant {
        &self.grant
    }

    /// The file. Never lend it out: `&File` allows `set_len` and
    /// `write_at`, which would change bytes (or the length) under views.
    pub(crate) fn file(&self) -> &File {
        self.file.file()
    }

    /// Maps the granted bytes with `make` (given the file and the grant),
    /// and settles the file, in one step under the registry's lock: a child
    /// forked at any moment has the mapping and its entry, or neither.
    pub(crate) fn map<M>(
        self,
        make: impl FnOnce(&File, &Grant) -> std::io::Result<M>,
    ) -> std::io::Result<Mapping<M>> {
        let mut registry = registry();
        let made = make(self.file(), &self.grant);
        if made.is_ok() {
            self.file.settle_in(&mut registry);
        }
        // Before `self` can drop (on error), which takes the lock again.
        drop(registry);
        Ok(Mapping {
            map: Some(made?),
            lock: self,
        })
    }
}

/// A mapping and the data lock (with its file) it was made under. Dropping
/// it unmaps, closes the file and forgets the range in one step under the
/// registry's lock: a mapping keeps its open file description, and with it
/// the locks other processes see, alive until it is unmapped, so in any
/// other order a same-process opener could meet a lock the registry does
/// not explain, and a child forked in between would keep an entry without
/// a mapping or a lock without an entry.
#[derive(Debug)]
pub(crate) struct Mapping<M> {
    /// `None` only while dropping.
    map: Option<M>,
    lock: DataLock,
}

impl<M> Mapping<M> {
    pub(crate) fn map(&self) -> &M {
        self.map.as_ref().expect("mapped until dropped")
    }

    pub(crate) fn map_mut(&mut self) -> &mut M {
        self.map.as_mut().expect("mapped until dropped")
    }

    /// The file (see [`DataLock::file`]).
    pub(crate) fn file(&self) -> &File {
        self.lock.file()
    }
}

impl<M> Drop for Mapping<M> {
    fn drop(&mut self) {
        let mut registry = registry();
        drop(self.map.take());
        self.lock.file.close_in(&mut registry);
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
            None,
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
) -> Result<()> {
    refuse_own_key(file_key(file, path)?, path, wanted, conflicts)
}

/// [`refuse_own`] for the file with `key`.
fn refuse_own_key(
    key: registry::FileKey,
    path: &Path,
    wanted: &'static str,
    conflicts: impl Fn(&Held) -> bool,
) -> Result<()> {
    match registry()
        .entries()
        .iter()
        .find(|entry| entry.key == key && conflicts(&entry.held))
    {
        Some(holder) => Err(holder.conflict(path, wanted)),
        None => Ok(()),
    }
}

/// Takes the structure lock shared, as `locks` says; refused at once while
/// a writer object of this process holds it exclusive.
pub(crate) fn lock_shared(file: &File, path: &Path, locks: Locks) -> Result<()> {
    lock_shared_meta(file, path, None, locks)
}

/// [`lock_shared`], given the metadata of `file` read since it was opened
/// (its device and inode name it: no second `stat`).
pub(crate) fn lock_shared_meta(
    file: &File,
    path: &Path,
    meta: Option<&std::fs::Metadata>,
    locks: Locks,
) -> Result<()> {
    let Locks::Take(locking) = locks else {
        return Ok(());
    };
    let key = match meta {
        Some(meta) => key_of(meta, path)?,
        None => file_key(file, path)?,
    };
    refuse_own_key(key, path, "opening the file", |held| {
        matches!(held, Held::Structure(_))
    })?;
    // A process that holds any lock of ours, of this file or another, is
    // let in ahead of waiting writers: it may be what holds them up, here
    // or through a chain of files (P1 maps F and opens G while W2 waits for
    // G's readers, P2 maps G and opens F while W1 waits for F's: had P1 and
    // P2 queued behind the turns, all four would wait for ever). Only a
    // process that holds nothing queues, and nobody waits for it.
    let holds_any = registry().holds_any();
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

/// Takes the structure lock (shared or exclusive) as `locking` says. An
/// exclusive lock that has to wait first takes the writers' turn (see
/// [`turn`]), so that readers arriving while it waits queue behind it
/// instead of starving it; one that gets in at once never takes it.
fn lock_structure(file: &File, path: &Path, locking: Locking, exclusive: bool) -> Result<()> {
    let try_lock = || {
        if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        }
    };
    let held = if exclusive {
        "a mapping of the file, or a change of its header or length"
    } else {
        "a change of the file's header or length (an append, a stream being written, or a file \
         being created)"
    };
    let attempt = || match try_lock() {
        Ok(()) => Ok(Attempt::Got),
        Err(std::fs::TryLockError::WouldBlock) => Ok(Attempt::Blocked(held)),
        Err(std::fs::TryLockError::Error(source)) => Err(io_error("lock", path)(source)),
    };
    // Held while this waits (another writer's turn is not waited for).
    let mut turn = None;
    let mut take_turn = || -> Result<()> {
        if exclusive {
            turn = turn::Turn::try_take(file, path)?;
        }
        Ok(())
    };
    if locking == Locking::Blocking {
        // The kernel's wait, after one try: only a writer that has to wait
        // takes the turn.
        if let Attempt::Got = attempt()? {
            return Ok(());
        }
        take_turn()?;
        let locked = if exclusive {
            file.lock()
        } else {
            file.lock_shared()
        };
        drop(turn);
        return locked.map_err(io_error("lock", path));
    }
    let result = retry(path, locking, Instant::now(), take_turn, attempt);
    drop(turn);
    result
}

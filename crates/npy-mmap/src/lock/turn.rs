//! The writers' turn (Linux): one byte past every lock lane that a writer
//! which has to wait (for the exclusive structure lock, or for a data lock
//! that readers hold) write-locks while it waits; a process that holds no
//! lock of ours yet waits for the turn to be free before it takes the
//! shared structure lock. So readers arriving in a steady stream cannot
//! keep a writer out for ever: once it waits, newcomers queue behind it,
//! and it gets in as soon as the readers already there let go. A writer
//! takes the turn only after its first attempt failed (one that gets in at
//! once never makes anyone wait), and only when free (never waited for),
//! so two writers never wait for each other's turn; processes holding any
//! lock of ours are let in (they may be the ones the writer waits for,
//! directly or through a chain of files): whoever waits for a turn holds
//! nothing anyone waits for, so the turn closes no cycle.

use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::time::Instant;

use super::policy::{Attempt, Locking, retry};
use crate::error::{Result, io_error};
use crate::sys::range_lock::{self, Kind};

/// The byte: the last but one that `off_t` can address.
pub(super) const TURN: Range<u64> = (1 << 63) - 2..(1 << 63) - 1;

/// What a lock on the turn is, in words.
pub(super) const HOLDER: &str = "a writer waiting for the file (it goes first)";

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
    retry(
        path,
        locking,
        Instant::now(),
        || Ok(()),
        || {
            let waiting =
                range_lock::conflict(file, &TURN, Kind::Read).map_err(io_error("lock", path))?;
            Ok(match waiting {
                Some(_) => Attempt::Blocked(HOLDER),
                None => Attempt::Got,
            })
        },
    )
}

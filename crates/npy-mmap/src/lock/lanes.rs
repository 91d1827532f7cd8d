//! The lanes across processes (Linux): open-file-description locks
//! (`F_OFD_SETLK`) on each mapping's bytes, in the lanes the table says
//! ([`super::table`]).

use std::fs::File;
use std::ops::Range;
use std::path::Path;

use super::policy::{Attempt, Locking, retry};
use super::table::{self, Access, LANE_WIDTH, Lane};
use super::turn::{self, Turn};
use crate::error::{Result, io_error};
use crate::sys::range_lock::{self, Kind};

/// Data lies below this, so that every lane ends before the next one.
const DATA_LIMIT: u64 = LANE_WIDTH;
const _: () = assert!(Lane::ForeignWrite.offset() + LANE_WIDTH <= turn::TURN.start);

fn in_lane(lane: Lane, range: &Range<u64>) -> Range<u64> {
    range.start + lane.offset()..range.end + lane.offset()
}

/// What holds a lock found at `start` of kind `kind`, in words.
pub(super) fn holder(start: u64, kind: Kind) -> &'static str {
    if start >= turn::TURN.start {
        turn::HOLDER
    } else {
        table::holder(Lane::at(start), kind)
    }
}

/// Takes the cross-process locks of `range` for `access` on `file`'s
/// open file description (released when the file is closed).
///
/// Take, then check: the opener locks its own lanes, then looks for a
/// lock in the lanes of the families it excludes, and backs off
/// (releasing its own) if it finds one. Each step is atomic in the
/// kernel, and the table makes every refused pair either conflict in the
/// kernel or find each other, so of two openers racing for the same bytes
/// at least one sees the other: never both succeed. (A shared "sentinel"
/// lock would need a write lock, which a file opened read-only cannot
/// take.)
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
    let row = table::row(access);
    let release = |taken: &[(Lane, Kind)]| -> std::io::Result<()> {
        for (lane, _) in taken {
            range_lock::unlock(file, &in_lane(*lane, range))?;
        }
        Ok(())
    };
    // A writer that has to wait takes the writers' turn if it is free, so
    // that readers arriving meanwhile queue behind it; one that gets in at
    // once never touches it.
    let writes = matches!(access, Access::Write | Access::Live | Access::ForeignWrite);
    let mut turn: Option<Turn<'_>> = None;
    let take_turn = || -> Result<()> {
        if writes {
            turn = Turn::try_take(file, path)?;
        }
        Ok(())
    };
    let attempt = || -> Result<Attempt> {
        let attempt = || -> std::io::Result<Attempt> {
            for (taken, (lane, kind)) in row.takes.iter().enumerate() {
                let locked = in_lane(*lane, range);
                if !range_lock::try_lock(file, &locked, *kind)? {
                    release(&row.takes[..taken])?;
                    let found = range_lock::conflict(file, &locked, *kind)?;
                    return Ok(Attempt::Blocked(found.map_or(
                        "a mapping of the same bytes (it went away meanwhile)",
                        |(start, kind)| holder(start, kind),
                    )));
                }
            }
            for (lane, kind) in row.tests {
                if let Some((start, found)) =
                    range_lock::conflict(file, &in_lane(*lane, range), *kind)?
                {
                    release(row.takes)?;
                    return Ok(Attempt::Blocked(holder(start, found)));
                }
            }
            Ok(Attempt::Got)
        };
        attempt().map_err(io_error("lock", path))
    };
    let result = retry(path, locking, std::time::Instant::now(), take_turn, attempt);
    drop(turn);
    result
}

//! Byte-range locks held by an open file description (Linux's `F_OFD_*`
//! `fcntl` commands): they conflict between descriptions, whether in one
//! process or two, and go when the description is closed. The policy that
//! uses them is in the `lock` module.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::fd::AsRawFd;

pub use super::LockKind as Kind;

fn description(range: &Range<u64>, l_type: libc::c_int) -> io::Result<libc::flock> {
    let too_far = || io::Error::other("a lock range past i64::MAX");
    let start = i64::try_from(range.start).map_err(|_| too_far())?;
    let len = i64::try_from(range.end - range.start).map_err(|_| too_far())?;
    // SAFETY: `flock` is a plain C struct of integers, for which all
    // zeros is a valid value (and `l_pid` must be 0 for OFD locks).
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = l_type as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = start;
    lock.l_len = len;
    Ok(lock)
}

fn l_type(kind: Kind) -> libc::c_int {
    match kind {
        Kind::Read => libc::F_RDLCK,
        Kind::Write => libc::F_WRLCK,
    }
}

fn fcntl(file: &File, command: libc::c_int, lock: &mut libc::flock) -> io::Result<()> {
    // SAFETY: the descriptor is valid for the call (`file` is borrowed),
    // and `lock` points to an initialised `flock` that lives across the
    // call; the OFD lock commands read it and (F_OFD_GETLK) write it.
    let status = unsafe { libc::fcntl(file.as_raw_fd(), command, lock as *mut libc::flock) };
    if status == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Takes a lock of `kind` on `range` if no other description holds a
/// conflicting one; `Ok(false)` when one does.
pub fn try_lock(file: &File, range: &Range<u64>, kind: Kind) -> io::Result<bool> {
    let mut lock = description(range, l_type(kind))?;
    match fcntl(file, libc::F_OFD_SETLK, &mut lock) {
        Ok(()) => Ok(true),
        Err(error) if matches!(error.raw_os_error(), Some(libc::EAGAIN | libc::EACCES)) => {
            Ok(false)
        }
        Err(error) => Err(error),
    }
}

/// Releases this description's locks on `range`.
pub fn unlock(file: &File, range: &Range<u64>) -> io::Result<()> {
    fcntl(
        file,
        libc::F_OFD_SETLK,
        &mut description(range, libc::F_UNLCK)?,
    )
}

/// A lock that another description holds which conflicts with a lock
/// of `kind` on `range` (a write lock conflicts with every lock): where
/// it starts and what kind it is, or `None` when nothing conflicts.
pub fn conflict(file: &File, range: &Range<u64>, kind: Kind) -> io::Result<Option<(u64, Kind)>> {
    let mut lock = description(range, l_type(kind))?;
    fcntl(file, libc::F_OFD_GETLK, &mut lock)?;
    if lock.l_type == libc::F_UNLCK as libc::c_short {
        return Ok(None);
    }
    let held = if lock.l_type == libc::F_WRLCK as libc::c_short {
        Kind::Write
    } else {
        Kind::Read
    };
    Ok(Some((u64::try_from(lock.l_start).unwrap_or(0), held)))
}

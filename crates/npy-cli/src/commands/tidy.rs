//! `npy tidy`: the temporaries that killed writers leave beside their
//! targets, found by name, judged stale by their lock, and removed only
//! when asked.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Context;

use crate::cli::TidyArgs;

/// Which writer leaves a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Leftover {
    /// `AtomicFile`'s temporary (npy-mmap `atomic.rs`): `.NAME.<16 hex>.tmp`.
    Temporary,
    /// The Python package's Dask target (`dask.py`): `.NAME.partial-<12 hex>`.
    Partial,
}

/// What `name` is, if a writer of ours leaves such names.
fn leftover_kind(name: &OsStr) -> Option<Leftover> {
    let name = name.to_str()?;
    let rest = name.strip_prefix('.')?;
    let hex =
        |text: &str, len: usize| text.len() == len && text.bytes().all(|b| b.is_ascii_hexdigit());
    if let Some(stem) = rest.strip_suffix(".tmp")
        && let Some((target, random)) = stem.rsplit_once('.')
        && !target.is_empty()
        && hex(random, 16)
    {
        return Some(Leftover::Temporary);
    }
    if let Some((target, random)) = rest.rsplit_once(".partial-")
        && !target.is_empty()
        && hex(random, 12)
    {
        return Some(Leftover::Partial);
    }
    None
}

/// What was found of one leftover.
enum Verdict {
    /// A process holds a lock on it: a live writer, or a mapping.
    InUse,
    /// Changed less than `--min-age` ago.
    Recent,
    /// Nobody holds it and it is old enough: the file, opened and locked
    /// exclusive (so no writer of ours can take it meanwhile).
    Stale(File),
}

pub fn run(args: &TidyArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(&args.dir)
        .with_context(|| format!("cannot list {}", args.dir.display()))?;
    let mut found: Vec<(PathBuf, Leftover)> = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", args.dir.display()))?;
        // The entry's own type (lstat): a symbolic link, a folder, a FIFO
        // is never a leftover of ours, whatever its name.
        let is_file = entry.file_type().is_ok_and(|kind| kind.is_file());
        if let (true, Some(kind)) = (is_file, leftover_kind(&entry.file_name())) {
            found.push((entry.path(), kind));
        }
    }
    found.sort();
    let min_age = Duration::from_secs(args.min_age);
    for (path, kind) in found {
        let what = match kind {
            Leftover::Temporary => "temporary",
            Leftover::Partial => "Dask partial",
        };
        let verdict = match judge(&path, min_age) {
            Ok(Some(verdict)) => verdict,
            Ok(None) => continue, // gone, or replaced by something else meanwhile
            Err(err) => {
                writeln!(out, "unreadable  {what}  {}: {err:#}", path.display())?;
                continue;
            }
        };
        match verdict {
            Verdict::InUse => writeln!(out, "in use      {what}  {}", path.display())?,
            Verdict::Recent => writeln!(out, "recent      {what}  {}", path.display())?,
            Verdict::Stale(file) => {
                let size = file.metadata().map(|meta| meta.len()).unwrap_or(0);
                if args.remove {
                    remove(&path, &file)?;
                    writeln!(
                        out,
                        "removed     {what}  {}  ({size} bytes)",
                        path.display()
                    )?;
                } else {
                    writeln!(
                        out,
                        "stale       {what}  {}  ({size} bytes)",
                        path.display()
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// Opens `path` without following a link and without blocking, and tries
/// its lock: `None` when it is gone or no longer a regular file.
fn judge(path: &Path, min_age: Duration) -> anyhow::Result<Option<Verdict>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    let file = match options.open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err.into()),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(None);
    }
    // Young files are not even locked: a writer that has just created its
    // temporary takes its lock without waiting, and must find it free.
    let changed = meta.modified()?;
    let age = SystemTime::now()
        .duration_since(changed)
        .unwrap_or(Duration::ZERO);
    if age < min_age {
        return Ok(Some(Verdict::Recent));
    }
    // The structure lock every writer and mapping of ours holds (flock): a
    // writer holds its temporary's exclusive, a mapping its file's shared.
    match file.try_lock() {
        Ok(()) => Ok(Some(Verdict::Stale(file))),
        Err(std::fs::TryLockError::WouldBlock) => Ok(Some(Verdict::InUse)),
        Err(std::fs::TryLockError::Error(err)) => Err(err.into()),
    }
}

/// Removes the name `path` if it is still the file we locked (`file`).
fn remove(path: &Path, file: &File) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let ours = file.metadata()?;
        match std::fs::symlink_metadata(path) {
            Ok(now) if now.dev() == ours.dev() && now.ino() == ours.ino() => {}
            // Replaced meanwhile: not ours to remove.
            _ => return Ok(()),
        }
    }
    #[cfg(not(unix))]
    let _ = file;
    std::fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftover_names_are_recognised_exactly() {
        let kind = |name: &str| leftover_kind(OsStr::new(name));
        assert_eq!(
            kind(".a.npy.0123456789abcdef.tmp"),
            Some(Leftover::Temporary)
        );
        assert_eq!(
            kind(".a.b.npy.0123456789ABCDEF.tmp"),
            Some(Leftover::Temporary)
        );
        assert_eq!(kind(".a.npy.partial-0123456789ab"), Some(Leftover::Partial));
        for name in [
            "a.npy.0123456789abcdef.tmp",
            "..0123456789abcdef.tmp",
            ".a.npy.0123456789abcde.tmp",
            ".a.npy.0123456789abcdeg.tmp",
            ".a.npy.tmp",
            ".a.npy.partial-0123456789a",
            ".partial-0123456789ab",
            "a.npy",
        ] {
            assert_eq!(kind(name), None, "{name}");
        }
    }
}

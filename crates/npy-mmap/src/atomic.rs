//! Atomic replacement of a file: write a temporary file beside it, sync,
//! rename over the destination.
//!
//! Used by every "save to a path" in this crate ([`save`](crate::save),
//! [`NpzWriter::create`](crate::npz::NpzWriter::create),
//! [`CreateOptions::overwrite`](crate::CreateOptions::overwrite)) and by the
//! CLI's `convert` and `extract`, so that a crash at any moment leaves
//! either the old file or the new one at the destination, and a reader that
//! mapped the old file keeps an intact copy (its inode is never truncated or
//! rewritten).
//!
//! The directory is held open (a `cap-std` directory handle) from creation
//! to commit, and the temporary and the destination are named relative to
//! it, so nothing is ever written outside it: the temporary is created
//! exclusively (`O_EXCL` never follows a symbolic link), and the rename
//! replaces whatever name is at the destination, a symbolic link included,
//! without following it.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};

use cap_fs_ext::DirExt;
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

use crate::error::{Error, ErrorKind, Result, io_error};
use crate::lock::{Locking, Locks, Writer, WriterLock};

/// Attempts at a fresh temporary name before giving up (each name is random,
/// so a clash means someone is planting names on purpose).
const NAME_ATTEMPTS: usize = 64;

/// A file written under a temporary name in its destination's directory and
/// renamed over the destination by [`commit`](AtomicFile::commit), so a crash
/// never leaves a half-written file there and readers that mapped the old
/// file keep an intact copy. Dropped uncommitted, or when `commit` fails
/// before the rename, it removes itself.
///
/// The temporary is locked exclusive (the structure lock every mapping of
/// this crate shares) until the commit: nothing that follows the locking
/// rule maps it while it is written, in this process (refused at once with
/// [`ErrorKind::Conflict`](crate::ErrorKind::Conflict)) or another (which
/// waits).
///
/// Replacing an existing file keeps its permission bits (and, where the
/// system allows, its owner and group), as `np.save` does by writing in
/// place; an existing file this process may not write is refused with the
/// system's "permission denied", as `np.save` would be.
#[derive(Debug)]
#[must_use = "the file appears only at commit(); dropped, it removes itself"]
pub struct AtomicFile {
    /// The temporary's exclusive lock, registered in this process until
    /// the commit (the lock itself goes with the file). First, so that it
    /// is forgotten before the file closes: once closed, a removed
    /// temporary's inode number may be reused by another new file.
    lock: Option<WriterLock>,
    /// `None` only once [`commit_file`](Self::commit_file) has taken it.
    file: Option<BufWriter<File>>,
    /// The destination's directory, held open until the commit.
    dir: Dir,
    temp_name: OsString,
    dest_name: OsString,
    /// For messages: the temporary's and the destination's paths.
    temp: PathBuf,
    dest: PathBuf,
    /// Set once the rename has happened: from then on the temporary name is gone.
    renamed: bool,
    /// Whether the commit replaces a file at the destination (the default)
    /// or refuses it ([`replace_existing`](Self::replace_existing)).
    replace: bool,
}

impl AtomicFile {
    /// Creates the temporary file next to `dest`.
    ///
    /// The directory part of `dest` is opened as given (symbolic links in it
    /// are the caller's choice); the file name itself is replaced, never
    /// followed.
    pub fn create(dest: impl AsRef<Path>) -> io::Result<Self> {
        let dest = dest.as_ref();
        let file_name = final_name(dest)?;
        let parent = match dest.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let dir = Dir::open_ambient_dir(parent, ambient_authority())?;
        Self::create_in_dir(dir, file_name.to_os_string(), dest.to_path_buf())
    }

    /// Creates the temporary file for `folder/relative` without ever
    /// leaving `folder`: `relative` may name subfolders (created as
    /// needed), but a `..`, an absolute path or a symbolic link anywhere
    /// below `folder` is refused. `folder` itself is opened as given.
    ///
    /// This is how archive members are extracted: a member name, or a link
    /// planted in the destination folder, can never make a write land
    /// elsewhere.
    pub fn create_within(folder: impl AsRef<Path>, relative: impl AsRef<Path>) -> io::Result<Self> {
        let folder = folder.as_ref();
        let relative = relative.as_ref();
        let file_name = final_name(relative)?;
        let mut dir = Dir::open_ambient_dir(folder, ambient_authority())?;
        let mut components = relative.components().peekable();
        while let Some(component) = components.next() {
            if components.peek().is_none() {
                break; // the file name, checked by `final_name`
            }
            let name = match component {
                Component::Normal(name) => name,
                Component::CurDir => continue,
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{} leads outside {}", relative.display(), folder.display()),
                    ));
                }
            };
            match dir.create_dir(name) {
                Ok(()) => {}
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
                Err(error) => return Err(error),
            }
            dir = dir
                .open_dir_nofollow(name)
                .map_err(|error| refuse_link(&dir, name, error, &folder.join(relative)))?;
        }
        Self::create_in_dir(dir, file_name.to_os_string(), folder.join(relative))
    }

    fn create_in_dir(dir: Dir, dest_name: OsString, dest: PathBuf) -> io::Result<Self> {
        let existing = existing_file(&dir, &dest_name, &dest)?;
        let random = std::collections::hash_map::RandomState::new();
        for _ in 0..NAME_ATTEMPTS {
            let mut hasher = random.build_hasher();
            hasher.write_u32(std::process::id());
            let mut temp_name = OsString::from(".");
            temp_name.push(&dest_name);
            temp_name.push(format!(".{:016x}.tmp", hasher.finish()));
            let mut options = OpenOptions::new();
            options.read(true).write(true).create_new(true);
            #[cfg(unix)]
            if existing.is_some() {
                // Private until it has the old file's mode.
                cap_std::fs::OpenOptionsExt::mode(&mut options, 0o600);
            }
            let file = match dir.open_with(&temp_name, &options) {
                Ok(file) => file.into_std(),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(error) => return Err(error),
            };
            let temp = dest.with_file_name(&temp_name);
            let mut atomic = AtomicFile {
                file: Some(BufWriter::with_capacity(1 << 20, file)),
                dir,
                temp_name,
                dest_name,
                temp,
                dest,
                renamed: false,
                replace: true,
                lock: None,
            };
            // A new name nobody else knows: never waits. On error `atomic`
            // drops and removes the temporary.
            let lock = WriterLock::acquire(
                atomic.file()?,
                &atomic.temp,
                Locks::Take(Locking::NonBlocking),
                Writer::Temporary,
            )
            .map_err(io::Error::other)?;
            atomic.lock = Some(lock);
            if let Some(existing) = existing {
                // On error `atomic` drops and removes the temporary.
                existing.apply_to(atomic.file()?)?;
            }
            return Ok(atomic);
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "no free temporary name beside {} after {NAME_ATTEMPTS} random tries",
                dest.display()
            ),
        ))
    }

    /// Whether [`commit`](Self::commit) may replace a file at the
    /// destination: `true` (the default) renames over whatever is there;
    /// `false` makes the commit refuse an existing name with
    /// [`ErrorKind::AlreadyExists`](crate::ErrorKind::AlreadyExists),
    /// *at the rename*, so a file that appears at the destination while
    /// this one is written is never replaced (a check made before the work
    /// could not promise that).
    ///
    /// How: `renameat2(RENAME_NOREPLACE)` on Linux (one atomic step). Where
    /// the filesystem lacks it (`EINVAL`: some network and FUSE
    /// filesystems), and on other Unix systems, the temporary is hard-linked
    /// to the destination name (`linkat`, which never replaces a name) and
    /// then unlinked: still atomic against a new file at the destination,
    /// but a crash between the two steps leaves the temporary as a second
    /// name of the new file. Where hard links are refused too (vfat,
    /// exFAT) and elsewhere, the destination is looked for just before the
    /// rename: a file created in that instant is replaced (see SAFETY.md,
    /// "Leftovers and races of a commit").
    pub fn replace_existing(mut self, replace: bool) -> Self {
        self.replace = replace;
        self
    }

    /// The temporary path being written.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// The destination path.
    pub fn dest_path(&self) -> &Path {
        &self.dest
    }

    /// Flushes and syncs the file, renames it over the destination and syncs
    /// the directory.
    ///
    /// Until the rename succeeds the destination is untouched and a failure
    /// removes the temporary file. If only the final directory sync fails,
    /// the new file *is* in place but may not survive a power loss: that is
    /// [`ErrorKind::NotDurable`](crate::ErrorKind::NotDurable), distinct from every failure that left the old
    /// file.
    pub fn commit(self) -> Result<()> {
        self.commit_file().map(drop)
    }

    /// Renames the file over the destination without either fsync (file
    /// and folder): still atomic (readers see the old file or the whole
    /// new one, and a failure leaves the old one), but a power loss soon
    /// after may leave the destination empty or partial. For scratch files
    /// that are cheaper to make again than to sync (`npy convert --no-sync`).
    ///
    /// A regular file at the destination is swapped out
    /// (`renameat2(RENAME_EXCHANGE)`, one atomic step like the rename) and
    /// then removed under the temporary's name: a rename over an existing
    /// file makes ext4 (`auto_da_alloc`) start writing the whole new file
    /// to the disk before the rename returns, the very cost an unsynced
    /// commit leaves out (about 100 ms for 256 MiB). A crash between the
    /// two steps leaves the old file under the temporary's name.
    pub fn commit_unsynced(mut self) -> Result<()> {
        let temp = self.temp.clone();
        let writer = self.writer().map_err(io_error("write", &temp))?;
        writer.flush().map_err(io_error("write", &temp))?;
        if self.replace
            && exchange_regular(&self.dir, &self.temp_name, &self.dest_name)
                .map_err(io_error("rename a temporary file over", &self.dest))?
        {
            self.renamed = true;
            return Ok(());
        }
        self.rename()
    }

    /// Renames the temporary over the destination, or, unless
    /// [`replace`](Self::replace_existing), to a destination name that must
    /// not exist.
    fn rename(&mut self) -> Result<()> {
        rename_in(
            &self.dir,
            &self.temp_name,
            &self.dest_name,
            self.replace,
            &self.dest,
        )?;
        self.renamed = true;
        Ok(())
    }

    /// Commits a file that was made under another name in the
    /// destination's folder, by other means than an `AtomicFile` (a Dask
    /// target's partial file, created and filled by workers): the same
    /// steps as [`commit`](Self::commit), through the same code. An
    /// existing destination's mode goes to the new file; it is synced,
    /// renamed over `dest` (or, unless `replace`, refused if `dest` exists,
    /// at the rename), and the folder synced. The file name of `dest` is
    /// replaced, never followed; `prepared` must lie in the same folder.
    pub fn commit_prepared(
        prepared: impl AsRef<Path>,
        dest: impl AsRef<Path>,
        replace: bool,
    ) -> Result<()> {
        let (prepared, dest) = (prepared.as_ref(), dest.as_ref());
        let folder = |path: &Path| match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if folder(prepared) != folder(dest) {
            return Err(io_error("commit", prepared)(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("it is not in the folder of {}", dest.display()),
            )));
        }
        let (from, to) = (
            final_name(prepared).map_err(io_error("commit", prepared))?,
            final_name(dest).map_err(io_error("commit", dest))?,
        );
        let dir = Dir::open_ambient_dir(folder(dest), ambient_authority())
            .map_err(io_error("open the folder of", dest))?;
        let mut options = OpenOptions::new();
        options.read(true).write(true);
        cap_fs_ext::OpenOptionsFollowExt::follow(&mut options, cap_fs_ext::FollowSymlinks::No);
        let file = dir
            .open_with(from, &options)
            .map_err(io_error("open", prepared))?
            .into_std();
        if let Some(existing) = existing_file(&dir, to, dest).map_err(io_error("replace", dest))? {
            existing
                .apply_to(&file)
                .map_err(io_error("give the old file's mode to", prepared))?;
        }
        sync_file(&file).map_err(io_error("sync", prepared))?;
        rename_in(&dir, from, to, replace, dest)?;
        sync_dir(&dir).map_err(|source| Error::at(dest, ErrorKind::NotDurable { source }))
    }

    /// [`commit`](Self::commit), handing back the file (unbuffered, still
    /// open with any lock taken on it) for callers that go on using it.
    pub(crate) fn commit_file(mut self) -> Result<File> {
        let temp = self.temp.clone();
        let writer = self.writer().map_err(io_error("write", &temp))?;
        writer.flush().map_err(io_error("write", &temp))?;
        sync_file(writer.get_ref()).map_err(io_error("sync", &temp))?;
        self.rename()?;
        sync_dir(&self.dir)
            .map_err(|source| Error::at(&self.dest, ErrorKind::NotDurable { source }))?;
        let writer = self.file.take().ok_or_else(already_committed);
        let writer = writer.map_err(io_error("write", &self.temp))?;
        // The file is the destination now, and the caller's: it keeps the
        // lock, this process's registry forgets the writer.
        self.lock = None;
        // Flushed above: nothing is left in the buffer.
        Ok(writer.into_parts().0)
    }

    /// The open temporary file (for locking and sizing it).
    pub(crate) fn file(&self) -> io::Result<&File> {
        self.file
            .as_ref()
            .map(BufWriter::get_ref)
            .ok_or_else(already_committed)
    }

    fn writer(&mut self) -> io::Result<&mut BufWriter<File>> {
        self.file.as_mut().ok_or_else(already_committed)
    }
}

fn already_committed() -> io::Error {
    io::Error::other("the file was already committed")
}

/// The last component of `path`, which must be a plain file name.
fn final_name(path: &Path) -> io::Result<&OsStr> {
    match path.components().next_back() {
        Some(Component::Normal(name)) => Ok(name),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} does not name a file", path.display()),
        )),
    }
}

/// Explains a refused `open_dir_nofollow`: a symbolic link is named as one.
fn refuse_link(dir: &Dir, name: &OsStr, error: io::Error, dest: &Path) -> io::Error {
    match dir.symlink_metadata(name) {
        Ok(meta) if meta.file_type().is_symlink() => io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "refusing to follow the symbolic link {:?} on the way to {}",
                name,
                dest.display()
            ),
        ),
        _ => error,
    }
}

/// What is kept of the file being replaced.
#[derive(Clone, Copy, Debug)]
struct Existing {
    #[cfg(unix)]
    mode: u32,
    #[cfg(unix)]
    uid: u32,
    #[cfg(unix)]
    gid: u32,
}

impl Existing {
    /// Gives the temporary the old file's owner (where allowed) and mode.
    fn apply_to(&self, file: &File) -> io::Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Changing the owner needs privileges a normal user lacks for
            // someone else's file; the group alone may still be allowed.
            if std::os::unix::fs::fchown(file, Some(self.uid), Some(self.gid)).is_err() {
                let _ = std::os::unix::fs::fchown(file, None, Some(self.gid));
            }
            // After chown, which clears set-id bits.
            file.set_permissions(std::fs::Permissions::from_mode(self.mode & 0o7777))?;
        }
        #[cfg(not(unix))]
        let _ = file;
        Ok(())
    }
}

/// The regular file at `name`, if there is one: what to keep of it, after
/// checking that this process may write it (as `np.save` must). A symbolic
/// link is replaced, not followed, so nothing of its target is kept.
fn existing_file(dir: &Dir, name: &OsStr, dest: &Path) -> io::Result<Option<Existing>> {
    let meta = match dir.symlink_metadata(name) {
        Ok(meta) => meta,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!("{} is a directory", dest.display()),
        ));
    }
    if !meta.is_file() {
        return Ok(None);
    }
    // Opening for writing (no truncation, no creation) asks the system the
    // question np.save's open asks.
    let mut options = OpenOptions::new();
    options.write(true);
    cap_fs_ext::OpenOptionsFollowExt::follow(&mut options, cap_fs_ext::FollowSymlinks::No);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    dir.open_with(name, &options)?;
    #[cfg(unix)]
    {
        use cap_std::fs::MetadataExt;
        Ok(Some(Existing {
            mode: meta.mode(),
            uid: meta.uid(),
            gid: meta.gid(),
        }))
    }
    #[cfg(not(unix))]
    Ok(Some(Existing {}))
}

/// Renames `from` over `to` in `dir` (the destination `dest`, for
/// messages), or, unless `replace`, to a `to` that must not exist.
fn rename_in(dir: &Dir, from: &OsStr, to: &OsStr, replace: bool, dest: &Path) -> Result<()> {
    if replace {
        return dir
            .rename(from, dir, to)
            .map_err(io_error("rename a temporary file over", dest));
    }
    match rename_noreplace(dir, from, to) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
            Err(Error::at(dest, ErrorKind::AlreadyExists))
        }
        Err(error) => Err(io_error("rename a temporary file to", dest)(error)),
    }
}

/// Renames `from` to `to` in `dir`, refusing (`AlreadyExists`) a `to` that
/// exists, whatever it is: see [`AtomicFile::replace_existing`] for how.
fn rename_noreplace(dir: &Dir, from: &OsStr, to: &OsStr) -> io::Result<()> {
    #[cfg(not(test))]
    let without_renameat2 = false;
    #[cfg(test)]
    let without_renameat2 = tests::without_renameat2();
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if !without_renameat2 {
        use rustix::fs::{RenameFlags, renameat_with};
        match renameat_with(dir, from, dir, to, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            // The filesystem (or an old kernel) lacks RENAME_NOREPLACE.
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {}
            Err(error) => return Err(error.into()),
        }
    }
    #[cfg(unix)]
    {
        use rustix::fs::{AtFlags, linkat, unlinkat};
        match linkat(dir, from, dir, to, AtFlags::empty()) {
            Ok(()) => {
                // Both names are the new file now: dropping the temporary
                // one cannot lose it, and if that fails the file is in
                // place all the same (the temporary is a leftover name).
                let _ = unlinkat(dir, from, AtFlags::empty());
                return Ok(());
            }
            // Hard links refused by the filesystem: the racy fallback below.
            Err(
                rustix::io::Errno::PERM | rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::MLINK,
            ) => {}
            Err(error) => return Err(error.into()),
        }
    }
    match dir.symlink_metadata(to) {
        Ok(_) => Err(io::Error::from(io::ErrorKind::AlreadyExists)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => dir.rename(from, dir, to),
        Err(error) => Err(error),
    }
}

/// Swaps `from` with a regular file at `to` and removes the old file (now
/// under `from`); `false` when nothing was swapped (no regular file at `to`,
/// or no `RENAME_EXCHANGE` here): the caller renames as usual.
fn exchange_regular(dir: &Dir, from: &OsStr, to: &OsStr) -> io::Result<bool> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::{AtFlags, RenameFlags, renameat_with, unlinkat};
        match dir.symlink_metadata(to) {
            Ok(meta) if meta.is_file() => {}
            _ => return Ok(false),
        }
        match renameat_with(dir, from, dir, to, RenameFlags::EXCHANGE) {
            Ok(()) => {}
            // Gone meanwhile, or the filesystem (an old kernel) cannot swap.
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {
                return Ok(false);
            }
            Err(error) => return Err(error.into()),
        }
        match unlinkat(dir, from, AtFlags::empty()) {
            Ok(()) => Ok(true),
            // Not a file any more (a folder put there after the look):
            // swap back and let the rename refuse it, as it would have.
            Err(rustix::io::Errno::ISDIR | rustix::io::Errno::PERM) => {
                renameat_with(dir, from, dir, to, RenameFlags::EXCHANGE)?;
                Ok(false)
            }
            // The new file is in place; the old one is a leftover name.
            Err(_) => Ok(true),
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (dir, from, to);
        Ok(false)
    }
}

/// Syncs the temporary's data and metadata to disk.
fn sync_file(file: &File) -> io::Result<()> {
    #[cfg(test)]
    tests::injected(tests::Step::FileSync)?;
    file.sync_all()
}

/// Syncs a directory's entries (the rename) to disk.
fn sync_dir(dir: &Dir) -> io::Result<()> {
    #[cfg(test)]
    tests::injected(tests::Step::DirSync)?;
    // Through a descriptor opened for reading: the handle cap-std keeps may
    // be an `O_PATH` one, which fsync refuses.
    #[cfg(unix)]
    dir.open(".")?.into_std().sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.renamed {
            // Best effort: an uncommitted temporary file is garbage.
            let _ = self.dir.remove_file(&self.temp_name);
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer()?.flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.writer()?.seek(pos)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// The commit steps a test can make fail.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(super) enum Step {
        FileSync,
        DirSync,
    }

    thread_local! {
        /// Fault injection: this thread's next commit fails at this step with EIO.
        static FAIL_AT: Cell<Option<Step>> = const { Cell::new(None) };
    }

    thread_local! {
        /// Makes this thread's no-replace renames skip `renameat2`, as on a
        /// filesystem without `RENAME_NOREPLACE`.
        static NO_RENAMEAT2: Cell<bool> = const { Cell::new(false) };
    }

    pub(super) fn without_renameat2() -> bool {
        NO_RENAMEAT2.with(Cell::get)
    }

    pub(super) fn injected(step: Step) -> io::Result<()> {
        if FAIL_AT.with(|fail| fail.get()) == Some(step) {
            return Err(io::Error::from_raw_os_error(5)); // EIO
        }
        Ok(())
    }

    /// Replaces `old` in a fresh folder, failing at `step`; returns the
    /// error, the folder and what it then holds.
    fn commit_failing_at(step: Step, tag: &str) -> (Error, PathBuf, Vec<std::ffi::OsString>) {
        let dir = std::env::temp_dir().join(format!("npy-atomic-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let dest = dir.join("a.bin");
        std::fs::write(&dest, b"old").unwrap();
        let mut file = AtomicFile::create(&dest).unwrap();
        file.write_all(b"new").unwrap();
        FAIL_AT.with(|fail| fail.set(Some(step)));
        let error = file.commit().unwrap_err();
        FAIL_AT.with(|fail| fail.set(None));
        let names = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        (error, dir, names)
    }

    /// A destination that appears after the temporary was created (after
    /// any check a caller made) is not replaced by a no-replace commit,
    /// through `renameat2` and through the `link` fallback alike.
    #[test]
    fn a_no_replace_commit_refuses_a_destination_that_appeared_meanwhile() {
        for fallback in [false, true] {
            let dir = std::env::temp_dir().join(format!(
                "npy-atomic-noreplace-{fallback}-{}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let dest = dir.join("a.bin");
            let mut file = AtomicFile::create(&dest).unwrap().replace_existing(false);
            file.write_all(b"new").unwrap();
            std::fs::write(&dest, b"theirs").unwrap();
            NO_RENAMEAT2.with(|skip| skip.set(fallback));
            let error = file.commit().unwrap_err();
            assert!(
                matches!(error.kind(), ErrorKind::AlreadyExists),
                "{error:?}"
            );
            assert_eq!(error.path(), Some(dest.as_path()));
            assert_eq!(std::fs::read(&dest).unwrap(), b"theirs");
            let names: Vec<_> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, ["a.bin"], "the temporary is removed");
            // Where nothing is in the way, it commits.
            std::fs::remove_file(&dest).unwrap();
            let mut file = AtomicFile::create(&dest).unwrap().replace_existing(false);
            file.write_all(b"new").unwrap();
            file.commit().unwrap();
            NO_RENAMEAT2.with(|skip| skip.set(false));
            assert_eq!(std::fs::read(&dest).unwrap(), b"new");
            let names: Vec<_> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, ["a.bin"], "no second name is left");
            std::fs::remove_dir_all(dir).unwrap();
        }
    }

    #[test]
    fn a_failed_directory_sync_is_not_durable_but_replaced() {
        let (error, dir, names) = commit_failing_at(Step::DirSync, "dir-sync");
        assert!(
            matches!(error.kind(), ErrorKind::NotDurable { .. }),
            "{error:?}"
        );
        assert!(error.to_string().contains("replaced"), "{error}");
        // The new file is in place and no temporary is left.
        assert_eq!(std::fs::read(dir.join("a.bin")).unwrap(), b"new");
        assert_eq!(names, ["a.bin"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_failed_file_sync_keeps_the_old_file_and_no_temporary() {
        let (error, dir, names) = commit_failing_at(Step::FileSync, "file-sync");
        assert!(
            matches!(
                error.kind(),
                ErrorKind::Io {
                    operation: "sync",
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(error.to_string().contains("Input/output error"), "{error}");
        assert_eq!(std::fs::read(dir.join("a.bin")).unwrap(), b"old");
        assert_eq!(names, ["a.bin"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// An unsynced commit over a file swaps it out and removes it: the new
    /// bytes under the name, the old ones still read by whoever held the
    /// old file open, nothing left beside it; over a folder it fails as a
    /// rename does, the folder untouched.
    #[test]
    fn an_unsynced_commit_swaps_the_old_file_out() {
        let dir = std::env::temp_dir().join(format!("npy-atomic-swap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let dest = dir.join("a.bin");
        std::fs::write(&dest, b"old").unwrap();
        let mut held = File::open(&dest).unwrap();
        let mut file = AtomicFile::create(&dest).unwrap();
        file.write_all(b"new bytes").unwrap();
        file.commit_unsynced().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"new bytes");
        let mut old = Vec::new();
        std::io::Read::read_to_end(&mut held, &mut old).unwrap();
        assert_eq!(old, b"old");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.bin"]);
        let folder = dir.join("f");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("inside"), b"x").unwrap();
        let mut file = AtomicFile::create(dir.join("g")).unwrap();
        file.write_all(b"y").unwrap();
        // A folder created at the name after the temporary was.
        let g = dir.join("g");
        std::fs::create_dir(&g).unwrap();
        assert!(file.commit_unsynced().is_err());
        assert!(g.is_dir() && folder.join("inside").is_file());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

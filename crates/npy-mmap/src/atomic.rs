//! Atomic replacement of a file: write a temporary file beside it, sync,
//! rename over the destination.
//!
//! Used by every "save to a path" in this crate ([`save`](crate::save),
//! [`NpzWriter::create`](crate::npz::NpzWriter::create)), so that a crash at
//! any moment leaves either the old file or the new one at the destination,
//! and a reader that mapped the old file keeps an intact copy (its inode is
//! never truncated or rewritten).

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A file written under a temporary name in its destination's directory and
/// renamed over the destination by [`commit`](AtomicFile::commit), so a crash
/// never leaves a half-written file there and readers that mapped the old
/// file keep an intact copy. Dropped uncommitted, it removes itself.
#[derive(Debug)]
pub struct AtomicFile {
    file: Option<BufWriter<File>>,
    temp: PathBuf,
    dest: PathBuf,
}

impl AtomicFile {
    /// Creates the temporary file next to `dest`.
    pub fn create(dest: impl AsRef<Path>) -> io::Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let dest = dest.as_ref().to_path_buf();
        let file_name = dest.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} does not name a file", dest.display()),
            )
        })?;
        let dir = match dest.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        loop {
            let mut temp_name = std::ffi::OsString::from(".");
            temp_name.push(file_name);
            temp_name.push(format!(
                ".{}.{}.tmp",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            ));
            let temp = dir.join(temp_name);
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&temp)
            {
                Ok(file) => {
                    return Ok(AtomicFile {
                        file: Some(BufWriter::with_capacity(1 << 20, file)),
                        temp,
                        dest,
                    });
                }
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(error) => return Err(error),
            }
        }
    }

    /// The temporary path being written.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// The destination path.
    pub fn dest_path(&self) -> &Path {
        &self.dest
    }

    fn file(&mut self) -> io::Result<&mut BufWriter<File>> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("the file was already committed"))
    }

    /// Flushes and syncs the file, renames it over the destination and syncs
    /// the directory.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self
            .file
            .take()
            .ok_or_else(|| io::Error::other("the file was already committed"))?;
        let file = file.into_inner().map_err(|error| error.into_error())?;
        file.sync_all()?;
        drop(file);
        fs::rename(&self.temp, &self.dest)?;
        #[cfg(unix)]
        if let Some(parent) = self.dest.parent() {
            let dir = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            // Best effort: an uncommitted temporary file is garbage.
            let _ = fs::remove_file(&self.temp);
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file()?.flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.file()?.seek(pos)
    }
}

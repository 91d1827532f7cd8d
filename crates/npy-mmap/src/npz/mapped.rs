//! A whole `.npz` file mapped read-only, so stored members are views into it.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use npy_core::ReadOptions;

use super::read::NpzArchive;
use crate::error::Result;
use crate::error::io_error;
use crate::lock::{Access, DataLock, Locks, Mapping, TrackedFile, lock_shared};
use crate::sys::{self, ReadOnlyMap, Storage};

/// An `.npz` file mapped read-only: stored members become typed views
/// straight into the mapping (zero-copy), which NumPy cannot do (its
/// `mmap_mode` is ignored for archives).
///
/// Opening maps the file and holds the shared advisory lock while mapped
/// (docs/SAFETY.md); no member data is read. [`archive`](Self::archive)
/// reads the central directory and lends views that live as long as the
/// mapping. Writers of this crate replace archives by rename
/// ([`NpzWriter::create`](super::NpzWriter::create)), so rewriting the path
/// never changes the bytes a mapping sees.
///
/// ```
/// use npy_core::{ArrayView, Order};
/// use npy_mmap::OpenOptions;
/// use npy_mmap::npz::NpzWriter;
/// # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-npz-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("data.npz");
/// let mut writer = NpzWriter::create(&path)?;
/// writer.add("a", &ArrayView::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2], Order::C)?)?;
/// writer.add("b", &[7i32; 5][..])?;
/// writer.finish()?;
///
/// let mapped = OpenOptions::new().map_npz(&path)?;
/// let mut archive = mapped.archive()?;
/// let a = archive.view::<f64>("a")?;
/// let b = archive.view::<i32>("b")?;
/// assert_eq!(a.get(&[1, 0]), Some(&3.0));
/// assert_eq!(b.to_vec(), [7; 5]);
/// # drop((a, b, archive)); drop(mapped); std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct MappedNpz {
    /// The mapping and its lock, dropped in one step (see `MappedArray`);
    /// the file holds the shared structure lock while the mapping lives.
    mapping: Mapping<ReadOnlyMap>,
    path: PathBuf,
    options: ReadOptions,
}

impl MappedNpz {
    /// Maps the archive at `path` read-only, taking the shared lock (from
    /// [`OpenOptions::map_npz`](crate::OpenOptions::map_npz)).
    pub(crate) fn open(path: &Path, options: ReadOptions, locks: Locks) -> Result<Self> {
        let file = TrackedFile::open(|| crate::file::open_regular(path, false))?;
        lock_shared(file.file(), path, locks)?;
        let meta = file.file().metadata().map_err(io_error("stat", path))?;
        // The whole archive is viewed: read-locked like any read-only mapping.
        let lock = DataLock::acquire(file, path, &meta, 0..meta.len(), Access::Read, locks)?;
        let mapping = lock
            .map(sys::map_data::<ReadOnlyMap>)
            .map_err(io_error("map", path))?;
        Ok(MappedNpz {
            mapping,
            path: path.to_path_buf(),
            options,
        })
    }

    /// The mapped archive bytes.
    pub fn bytes(&self) -> &[u8] {
        self.mapping.map().bytes()
    }

    /// The path that was mapped.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the central directory (once per call: keep the result) and
    /// returns the archive over the mapping; its views, stored members and
    /// array bytes borrow the mapping, not the returned value.
    pub fn archive(&self) -> Result<NpzArchive<Cursor<&[u8]>>> {
        NpzArchive::from_bytes_with_options(self.bytes(), self.options)
    }
}

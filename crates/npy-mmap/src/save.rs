//! Saving whole arrays to a path, crash-safely.
//!
//! `np.save` writes the destination in place: a crash half-way leaves a
//! truncated file, and a process that mapped the old file sees it change (or
//! gets SIGBUS when it shrinks). These functions write through an
//! [`AtomicFile`]: a temporary file in the same directory, synced, then
//! renamed over the destination, so the destination always holds either the
//! old array or the complete new one, and existing mappings keep the old
//! data.
//!
//! [`save`] also syncs the file and its folder before returning (the saved
//! array survives a power loss), which costs a write to the disk of every
//! byte; [`save_unsynced`] skips both syncs, at `np.save`'s speed, and is
//! still atomic against readers and crashes of the program.

use std::path::Path;

use npy_core::{NpySource, write_npy};

use crate::atomic::AtomicFile;
use crate::error::Result;
use crate::error::{format_error, io_error};

/// Writes `source` to `path` as an `.npy` file, atomically: any
/// [`NpySource`] (a slice, a view, a slice with a shape through
/// [`ArrayView::from_slice`](npy_core::ArrayView::from_slice), an owned or
/// object array, raw bytes under a header, a mapped array, an ndarray array).
/// The bytes are exactly what `np.save` writes for the same array.
///
/// ```
/// use npy_core::{ArrayView, Order};
/// # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-save-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("grid.npy");
/// let data = [0.5f64, 1.5, 2.5, 3.5, 4.5, 5.5];
/// npy_mmap::save(&path, &ArrayView::from_slice(&data, &[2, 3], Order::C)?)?;
/// let array = npy_mmap::open(&path)?;
/// assert_eq!(array.view::<f64>()?.get(&[1, 0]), Some(&3.5));
///
/// npy_mmap::save(&path, &[1u8, 2, 3][..])?; // a slice is 1-D
/// assert_eq!(npy_mmap::open(&path)?.bytes(), [1, 2, 3]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save<S: NpySource + ?Sized>(path: impl AsRef<Path>, source: &S) -> Result<()> {
    written(path.as_ref(), source)?.commit()
}

/// [`save`] without its two syncs (file and folder): the same atomic
/// replacement (readers, and the file after a crash of the program, see
/// the old array or the whole new one, never a partial file under the
/// name), at `np.save`'s speed; only a power loss or a crash of the
/// system soon after may leave the destination empty or partial, as
/// `np.save`'s file would be. What `npy_mmap.save` does in Python by
/// default (`durable=True` there calls [`save`]); the `npy` CLI and
/// [`save`] sync by default.
pub fn save_unsynced<S: NpySource + ?Sized>(path: impl AsRef<Path>, source: &S) -> Result<()> {
    written(path.as_ref(), source)?.commit_unsynced()
}

/// `source` written to a temporary file beside `path`, not committed yet.
fn written<S: NpySource + ?Sized>(path: &Path, source: &S) -> Result<AtomicFile> {
    let mut file =
        AtomicFile::create(path).map_err(io_error("create a temporary file for", path))?;
    let header = source.npy_header();
    if !header.dtype.has_object()
        && let Ok(layout) = header.layout(None)
    {
        let len = layout.data_offset as u64 + layout.data_len as u64;
        let file = file.file().map_err(io_error("write", path))?;
        allocate(file, len).map_err(io_error("reserve disk space for", path))?;
    }
    // A write that failed (a full disk, say) is about this file.
    write_npy(&mut file, source).map_err(format_error("write", path))?;
    Ok(file)
}

/// Files from this size on get their blocks allocated before the write.
const ALLOCATE_FROM: u64 = 4 << 20;

/// Allocates the blocks of a file about to be written with `len` bytes
/// (`fallocate`, its size kept), as numpy's `tofile` does: the write then
/// fills blocks that exist (ext4's delayed allocation made the write of a
/// new 256 MiB file 52 ms instead of 35), and a full disk fails now rather
/// than halfway. Not for small files: allocating and later freeing their
/// blocks costs more than the write saves (a 1 KiB save, saved again 2,000
/// times: 2-4x slower). Where the filesystem cannot, nothing.
fn allocate(file: &std::fs::File, len: u64) -> std::io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if len >= ALLOCATE_FROM {
        use rustix::fs::{FallocateFlags, fallocate};
        match fallocate(file, FallocateFlags::KEEP_SIZE, 0, len) {
            Ok(()) => {}
            Err(rustix::io::Errno::NOSPC) => return Err(rustix::io::Errno::NOSPC.into()),
            // Not supported there: the write allocates as it goes.
            Err(_) => {}
        }
    }
    let _ = (file, len);
    Ok(())
}

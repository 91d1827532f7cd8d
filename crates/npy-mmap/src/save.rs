//! Saving whole arrays to a path, crash-safely.
//!
//! `np.save` writes the destination in place: a crash half-way leaves a
//! truncated file, and a process that mapped the old file sees it change (or
//! gets SIGBUS when it shrinks). These functions write through an
//! [`AtomicFile`]: a temporary file in the same directory, synced, then
//! renamed over the destination, so the destination always holds either the
//! old array or the complete new one, and existing mappings keep the old
//! data.

use std::path::Path;

use npy_core::{Element, Header, NpyArray, Order, write_array, write_npy, write_slice};

use crate::error::io_error;
use crate::{AtomicFile, Error, Result};

/// Writes `data` under `header` to `path` as an `.npy` file, atomically.
///
/// The header is encoded exactly as `np.save` would write it; `data` must
/// hold exactly the bytes the header describes.
///
/// ```
/// use npy_core::{DType, Header, Order};
/// # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-save-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("bytes.npy");
/// let header = Header { dtype: DType::parse("|u1")?, order: Order::C, shape: vec![2, 2] };
/// npy_mmap::save(&path, &header, &[1, 2, 3, 4])?;
/// assert_eq!(npy_mmap::open(&path)?.bytes(), &[1, 2, 3, 4]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save(path: impl AsRef<Path>, header: &Header, data: &[u8]) -> Result<()> {
    save_with(path.as_ref(), |file| write_npy(file, header, data))
}

/// Writes a slice of elements with the given shape and order to `path`, atomically.
///
/// ```
/// use npy_core::Order;
/// # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-save-slice-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("grid.npy");
/// npy_mmap::save_slice(&path, &[0.5f64, 1.5, 2.5, 3.5, 4.5, 5.5], &[2, 3], Order::C)?;
/// let array = npy_mmap::open(&path)?;
/// assert_eq!(array.view::<f64>()?.get(&[1, 0]), Some(&3.5));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save_slice<T: Element>(
    path: impl AsRef<Path>,
    data: &[T],
    shape: &[usize],
    order: Order,
) -> Result<()> {
    save_with(path.as_ref(), |file| write_slice(file, data, shape, order))
}

/// Writes an owned array (as read by [`npy_core::read_npy`]) to `path`,
/// atomically; an object array is pickled as `np.save` does it
/// ([`npy_core::write_array`]).
pub fn save_array(path: impl AsRef<Path>, array: &NpyArray) -> Result<()> {
    save_with(path.as_ref(), |file| write_array(file, array))
}

/// Runs `write` into an [`AtomicFile`] beside `path` and commits it. npy-core's
/// writers check the data length before they write anything; on any error,
/// up to a failed rename, the temporary file is removed.
fn save_with(
    path: &Path,
    write: impl FnOnce(&mut AtomicFile) -> npy_core::Result<()>,
) -> Result<()> {
    let mut file =
        AtomicFile::create(path).map_err(io_error("create a temporary file for", path))?;
    write(&mut file).map_err(|error| match error {
        // A write that failed (a full disk, say) is about this file.
        npy_core::Error::Io(source) => io_error("write", path)(source),
        error => Error::from(error),
    })?;
    file.commit()
}

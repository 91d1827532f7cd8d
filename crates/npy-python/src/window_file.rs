//! A token file read by position (`pread`): the windows of a batch copied
//! straight from the file into the batch, with the GIL released. Nothing
//! is mapped or faulted in, so a loader's resident memory stays flat
//! without giving pages back and faulting them in again per window (what
//! the mapping's copy-and-release path costs when the file is warm).
//!
//! The kernel copies the bytes: no Rust reference to memory another
//! process may write exists (another process writing the file meanwhile
//! gives torn values, as numpy's reads would).

use std::fs::File;
use std::path::PathBuf;

use npy_core::io::AlignedBytes;
use pyo3::prelude::*;

use crate::buffer::Buffer;
use crate::errors::value_error;

/// An open file whose windows of rows are read by position.
#[pyclass(module = "npy_mmap._native", frozen)]
pub struct WindowFile {
    file: File,
    identity: (u64, u64),
}

#[pymethods]
impl WindowFile {
    /// Opens `path` for reading.
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let file = py.detach(|| File::open(&path))?;
        let identity = identity(&file.metadata()?);
        Ok(WindowFile { file, identity })
    }

    /// The open file's device and inode (to check it is the file mapped).
    #[getter]
    fn identity(&self) -> (u64, u64) {
        self.identity
    }

    /// `length` rows from each of `starts`, of the `rows` rows of
    /// `row_bytes` bytes at byte `offset` of the file, as one new buffer
    /// (the windows one after another); the GIL released meanwhile.
    fn read(
        &self,
        py: Python<'_>,
        rows: (u64, usize, u64),
        starts: Vec<u64>,
        length: u64,
    ) -> PyResult<Py<Buffer>> {
        let (offset, row_bytes, rows) = rows;
        if let Some(bad) = starts
            .iter()
            .find(|&&start| start.checked_add(length).is_none_or(|end| end > rows))
        {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "a window of {length} rows at {bad} is out of bounds for axis 0 with size {rows}"
            )));
        }
        let size = usize::try_from(length)
            .ok()
            .and_then(|n| n.checked_mul(row_bytes))
            .ok_or_else(|| value_error("windows too large"))?;
        let total = size
            .checked_mul(starts.len())
            .ok_or_else(|| value_error("windows too large"))?;
        let mut out = AlignedBytes::zeroed(total);
        py.detach(|| -> std::io::Result<()> {
            if size == 0 {
                return Ok(());
            }
            let at = |start: u64| offset + start * row_bytes as u64;
            // The windows in the page cache are copied now; the others are
            // asked for together, so the disk has them all in its queue
            // instead of one read after another.
            let mut missing = Vec::new();
            for (k, (slot, &start)) in out.chunks_exact_mut(size).zip(&starts).enumerate() {
                if !read_cached_at(&self.file, slot, at(start))? {
                    missing.push(k);
                }
            }
            for &k in &missing {
                will_need(&self.file, at(starts[k]), size as u64);
            }
            for &k in &missing {
                let slot = &mut out[k * size..(k + 1) * size];
                read_exact_at(&self.file, slot, at(starts[k]))?;
            }
            Ok(())
        })?;
        Buffer::owned(py, out, "a batch of windows")
    }
}

/// Device and inode of an open file.
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0)
    }
}

/// Fills `out` from byte `at` of `file` if the page cache holds all of it
/// (`preadv2` with `RWF_NOWAIT`: never waits for the disk); `false` when it
/// does not (nothing or part of it read) or the system cannot tell.
fn read_cached_at(file: &File, out: &mut [u8], at: u64) -> std::io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        use rustix::io::{Errno, ReadWriteFlags, preadv2};
        let mut slices = [std::io::IoSliceMut::new(out)];
        let wanted = slices[0].len();
        match preadv2(file, &mut slices, at, ReadWriteFlags::NOWAIT) {
            Ok(read) => Ok(read == wanted),
            Err(Errno::AGAIN | Errno::NOSYS | Errno::OPNOTSUPP | Errno::INVAL) => Ok(false),
            Err(errno) => Err(errno.into()),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, out, at);
        Ok(false)
    }
}

/// Asks the kernel to start reading `len` bytes at `at` into the page
/// cache and returns at once (only a hint).
fn will_need(file: &File, at: u64, len: u64) {
    #[cfg(target_os = "linux")]
    {
        let len = std::num::NonZeroU64::new(len);
        let _ = rustix::fs::fadvise(file, at, len, rustix::fs::Advice::WillNeed);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, at, len);
}

/// Fills `out` from byte `at` of `file` (a short file is an error).
fn read_exact_at(file: &File, out: &mut [u8], at: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, out, at)
    }
    #[cfg(windows)]
    {
        let mut done = 0;
        while done < out.len() {
            let got =
                std::os::windows::fs::FileExt::seek_read(file, &mut out[done..], at + done as u64)?;
            if got == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            done += got;
        }
        Ok(())
    }
}

/// Adds the class.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<WindowFile>()
}

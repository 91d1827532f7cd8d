//! A Python file object as a seekable sink for Rust writers (`savez` into
//! `io.BytesIO()` or an open file): each write goes to the object's own
//! `write` as it is made, so an archive is never held whole in memory nor
//! copied once more at the end (numpy's zipfile writes the same way).
//!
//! Positions are counted from where the archive starts (the object's
//! position when handed over), as zip offsets are. A Python exception
//! raised by the object is kept and raised again as it was, not as an
//! `OSError` of ours.

use std::io::{self, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The exception a stream's method raised, shared with whoever runs the
/// writer (to raise it again).
pub(crate) type Raised = Arc<Mutex<Option<PyErr>>>;

/// A seekable Python file object, written through its methods.
pub(crate) struct PyStream {
    file: Py<PyAny>,
    base: u64,
    raised: Raised,
}

impl PyStream {
    /// The stream `file` from its current position, or `None` when it is
    /// not seekable (a pipe, a socket): the caller writes to memory then.
    pub(crate) fn new(file: &Bound<'_, PyAny>, raised: Raised) -> PyResult<Option<PyStream>> {
        let seekable = file
            .call_method0("seekable")
            .and_then(|answer| answer.is_truthy())
            .unwrap_or(false);
        if !seekable {
            return Ok(None);
        }
        let base: u64 = file.call_method0("tell")?.extract()?;
        Ok(Some(PyStream {
            file: file.clone().unbind(),
            base,
            raised,
        }))
    }

    /// Runs `f` on the file with the GIL; a Python exception is kept (for
    /// the caller to raise) and reported to the writer as an I/O error.
    fn call<T>(&self, f: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<T>) -> io::Result<T> {
        Python::attach(|py| {
            f(self.file.bind(py)).map_err(|error| {
                let message = error.to_string();
                *self.raised.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
                io::Error::other(message)
            })
        })
    }
}

/// Bytes handed to the object per `write` at most: each is copied into a
/// `bytes` first, and small ones reuse the allocator's memory (a copy the
/// size of a 16 MiB chunk would take fresh pages, and fault them in, every
/// time).
const PIECE: usize = 1 << 20;

impl Write for PyStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let buf = &buf[..buf.len().min(PIECE)];
        let written = self.call(|file| {
            let count = file.call_method1("write", (PyBytes::new(file.py(), buf),))?;
            count.extract::<Option<usize>>()
        })?;
        // `None`: a non-blocking raw stream that would block.
        written.ok_or_else(|| io::Error::from(io::ErrorKind::WouldBlock))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.call(|file| file.call_method0("flush").map(drop))
    }
}

impl Seek for PyStream {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let base = self.base;
        let (offset, whence) = match pos {
            SeekFrom::Start(n) => (
                i64::try_from(base.saturating_add(n)).map_err(io::Error::other)?,
                0,
            ),
            SeekFrom::Current(n) => (n, 1),
            SeekFrom::End(n) => (n, 2),
        };
        let at: u64 = self.call(|file| file.call_method1("seek", (offset, whence))?.extract())?;
        at.checked_sub(base)
            .ok_or_else(|| io::Error::other("the stream moved before the archive's start"))
    }
}

//! Rust errors as the Python exceptions numpy raises for the same failure,
//! with the Rust message (path, member, what to do) as their text.

use std::io;

use npy_mmap::ErrorKind;
use pyo3::exceptions::{
    PyBlockingIOError, PyFileExistsError, PyFileNotFoundError, PyIndexError, PyIsADirectoryError,
    PyKeyError, PyOSError, PyPermissionError, PyValueError,
};
use pyo3::prelude::*;

/// An OSError subclass for `kind`, with errno, message and filename, as
/// Python's own `open` raises (`FileNotFoundError(2, '...', 'a.npy')`).
fn os_error(source: &io::Error, message: String, path: Option<String>) -> PyErr {
    let errno = source.raw_os_error().unwrap_or(0);
    let args = (errno, message, path);
    match source.kind() {
        io::ErrorKind::NotFound => PyFileNotFoundError::new_err(args),
        io::ErrorKind::PermissionDenied => PyPermissionError::new_err(args),
        io::ErrorKind::AlreadyExists => PyFileExistsError::new_err(args),
        io::ErrorKind::IsADirectory => PyIsADirectoryError::new_err(args),
        io::ErrorKind::WouldBlock => PyBlockingIOError::new_err(args),
        _ => PyOSError::new_err(args),
    }
}

/// `zipfile.BadZipFile(message)`, numpy's error for a corrupt archive.
fn bad_zip(message: String) -> PyErr {
    Python::attach(|py| {
        match py
            .import("zipfile")
            .and_then(|m| m.getattr("BadZipFile"))
            .and_then(|class| class.call1((message.clone(),)))
        {
            Ok(instance) => PyErr::from_value(instance),
            Err(_) => PyValueError::new_err(message),
        }
    })
}

/// npy-core's error (a stream or buffer with no path): numpy raises
/// `ValueError` for every format error.
pub(crate) fn core_error(error: npy_core::Error) -> PyErr {
    match error {
        npy_core::Error::Io(source) => os_error(&source, source.to_string(), None),
        npy_core::Error::IndexOutOfBounds { .. } => PyIndexError::new_err(error.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// npy-mmap's error as numpy's exception type.
pub(crate) fn mmap_error(error: npy_mmap::Error) -> PyErr {
    let message = error.to_string();
    let path = error.path().map(|p| p.display().to_string());
    match error.kind() {
        ErrorKind::Io { source, .. } => os_error(source, message, path),
        ErrorKind::NotDurable { source } => os_error(source, message, path),
        ErrorKind::AlreadyExists => PyFileExistsError::new_err((17, message, path)),
        ErrorKind::Locked { .. } | ErrorKind::Conflict { .. } => {
            PyBlockingIOError::new_err((11, message, path))
        }
        ErrorKind::NotAZip { .. } | ErrorKind::Zip { .. } | ErrorKind::BadCrc { .. } => {
            bad_zip(message)
        }
        ErrorKind::NotAFile { .. } => PyKeyError::new_err(message),
        ErrorKind::Format(npy_core::Error::IndexOutOfBounds { .. }) => {
            PyIndexError::new_err(message)
        }
        ErrorKind::Format(npy_core::Error::Io(source)) => os_error(source, message, path),
        ErrorKind::NotARegularFile { .. } => PyOSError::new_err((22, message, path)),
        _ => PyValueError::new_err(message),
    }
}

/// npy-remote's error: not found as `FileNotFoundError`, format errors as
/// `ValueError`, everything else (the store, the network) as `OSError`.
pub(crate) fn remote_error(error: npy_remote::Error) -> PyErr {
    let message = error.to_string();
    if error.is_not_found() {
        return PyFileNotFoundError::new_err((2, message));
    }
    match error {
        // numpy's IndexError for an index past an axis, as for local files.
        npy_remote::Error::Format {
            source: npy_core::Error::IndexOutOfBounds { .. },
            ..
        } => PyIndexError::new_err(message),
        npy_remote::Error::Format { .. }
        | npy_remote::Error::OutsideData { .. }
        | npy_remote::Error::Url { .. }
        | npy_remote::Error::Plan { .. }
        | npy_remote::Error::NotSupported { .. } => PyValueError::new_err(message),
        _ => PyOSError::new_err(message),
    }
}

/// `ValueError(message)`.
pub(crate) fn value_error(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

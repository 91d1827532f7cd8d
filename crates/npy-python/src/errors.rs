//! Rust errors as the Python exceptions numpy raises for the same failure
//! (and numpy's warnings where it warns),
//! with the Rust message (path, member, what to do) as their text.

use std::io;

use npy_core::npz::ArchiveError;
use npy_mmap::ErrorKind;
use pyo3::exceptions::{
    PyBlockingIOError, PyFileExistsError, PyFileNotFoundError, PyIndexError, PyIsADirectoryError,
    PyKeyError, PyOSError, PyPermissionError, PyUnicodeError, PyValueError,
};
use pyo3::prelude::*;

/// An OSError subclass for `kind`, with errno, message and filename, as
/// Python's own `open` raises (`FileNotFoundError(2, '...', 'a.npy')`).
/// An error of ours with no errno (the operating system said nothing) and
/// no type of its own is not dressed as one: "[Errno 0]" says nothing
/// true. What a mapping cannot do (`Unsupported`: `advise('dontneed')` of
/// a `c` mapping, which would discard its changes) is a `ValueError`,
/// numpy's type for an argument an array does not accept.
fn os_error(source: &io::Error, message: String, path: Option<String>) -> PyErr {
    if source.raw_os_error().is_none() {
        match source.kind() {
            io::ErrorKind::Unsupported => return PyValueError::new_err(message),
            io::ErrorKind::Other | io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => {
                return PyOSError::new_err(message);
            }
            _ => {}
        }
    }
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

/// An error's message and its causes, `outer: inner`: a message may leave
/// its cause to `source()` (an invalid descr's reason), and an exception's
/// text is all Python shows.
fn message(error: &(dyn std::error::Error + 'static)) -> String {
    std::iter::successors(Some(error), |cause| cause.source())
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

/// npy-core's error (a stream or buffer with no path): numpy raises
/// `ValueError` for every format error.
pub(crate) fn core_error(error: npy_core::Error) -> PyErr {
    match error {
        npy_core::Error::Io(source) => os_error(&source, message(&source), None),
        other => format_error(&other, message(&other)),
    }
}

/// npy-core's format error as numpy's exception: `ValueError`, but
/// `IndexError` for an index past an axis and `UnicodeError` (a
/// `ValueError` too) for a Python 2 `str` that ASCII cannot decode, as
/// numpy's unpickling raises.
fn format_error(error: &npy_core::Error, message: String) -> PyErr {
    match error {
        npy_core::Error::IndexOutOfBounds { .. } => PyIndexError::new_err(message),
        npy_core::Error::Python2Str { .. } => PyUnicodeError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

/// npy-core's archive error as numpy's exception: `KeyError` for a key that
/// names no member, `zipfile.BadZipFile` for a damaged archive.
fn archive_error(error: &ArchiveError, message: String) -> PyErr {
    match error {
        ArchiveError::NotAFile { .. } => PyKeyError::new_err(message),
        ArchiveError::Compressed { .. } | ArchiveError::NameTooLong { .. } => {
            PyValueError::new_err(message)
        }
        _ => bad_zip(message),
    }
}

/// npy-mmap's error as numpy's exception type.
pub(crate) fn mmap_error(error: npy_mmap::Error) -> PyErr {
    let message = message(&error);
    let path = error.path().map(|p| p.display().to_string());
    match error.kind() {
        ErrorKind::Io { source, .. } => os_error(source, message, path),
        ErrorKind::NotDurable { source } => os_error(source, message, path),
        ErrorKind::AlreadyExists => PyFileExistsError::new_err((17, message, path)),
        // In Python's words: the waiting is `locking=` here.
        ErrorKind::Locked { waited, .. } if !waited.is_zero() => PyBlockingIOError::new_err((
            11,
            format!("{message} (locking='blocking' waits as long as it takes)"),
            path,
        )),
        ErrorKind::Locked { .. } | ErrorKind::Conflict { .. } => {
            PyBlockingIOError::new_err((11, message, path))
        }
        ErrorKind::Archive(archive) => archive_error(archive, message),
        ErrorKind::Format(npy_core::Error::Io(source)) => os_error(source, message, path),
        ErrorKind::Format(format) => format_error(format, message),
        ErrorKind::NotARegularFile { .. } => PyOSError::new_err((22, message, path)),
        _ => PyValueError::new_err(message),
    }
}

/// npy-remote's error: not found as `FileNotFoundError`, format errors as
/// `ValueError`, everything else (the store, the network) as `OSError`.
pub(crate) fn remote_error(error: npy_remote::Error) -> PyErr {
    use npy_remote::ErrorKind;
    let message = message(&error);
    if error.is_not_found() {
        return PyFileNotFoundError::new_err((2, message));
    }
    match error.kind() {
        // numpy's IndexError for an index past an axis, as for local files.
        ErrorKind::Format(format) => format_error(format, message),
        ErrorKind::Archive(archive) => archive_error(archive, message),
        ErrorKind::OutsideData { .. }
        | ErrorKind::Url { .. }
        | ErrorKind::Plan(_)
        | ErrorKind::PartialRow { .. }
        | ErrorKind::Virtual(_)
        | ErrorKind::NotSupported { .. } => PyValueError::new_err(message),
        _ => PyOSError::new_err(message),
    }
}

/// `ValueError(message)`.
pub(crate) fn value_error(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

/// numpy's `UserWarning` for a header written by Python 2 (a `2L` long),
/// when the parse said so: the header is read once, by the parse.
pub(crate) fn warn_if_python2(py: Python<'_>, python2_header: bool) -> PyResult<()> {
    if python2_header {
        py.import("npy_mmap._common")?
            .getattr("_warn_python2")?
            .call0()?;
    }
    Ok(())
}

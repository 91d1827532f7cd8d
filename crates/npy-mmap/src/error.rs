//! The error type of the mapping API.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong while opening, creating, mapping or
/// flushing an array file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A system call on the file failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done (`open`, `map`, `flush`, ...).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },

    /// The new file replaced the old one, but syncing the directory
    /// afterwards failed: the replacement may not survive a power loss.
    /// (Every other error of a save leaves the old file in place.)
    #[error(
        "{}: replaced with the new file, but its durability is unknown: \
         syncing the directory after the rename failed: {source}",
        path.display()
    )]
    NotDurable {
        /// The destination.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },

    /// The path names something other than a regular file (a FIFO, a
    /// directory, a device), which cannot be mapped or grown in place.
    #[error(
        "{}: is {kind}, not a regular file; only regular files can be mapped or appended to \
         (read a pipe as a stream, e.g. with npy_core::read_npy)",
        path.display()
    )]
    NotARegularFile {
        /// The path.
        path: PathBuf,
        /// What it is instead ("a FIFO", "a directory", ...).
        kind: &'static str,
    },

    /// The file at the path was replaced (renamed over, or removed) by
    /// another process after it was opened: writing on would change a file
    /// nobody can reach any more.
    #[error(
        "{}: the file was replaced or removed by another process since it was opened; \
         open it again",
        path.display()
    )]
    Replaced {
        /// The path.
        path: PathBuf,
    },

    /// The file is not a valid `.npy` file: its header is malformed, or (for
    /// [`load`](crate::load)) its data is shorter than the header says.
    #[error("{}: {source}", path.display())]
    Header {
        /// The file.
        path: PathBuf,
        /// What the parser found.
        source: npy_core::Error,
    },

    /// The header describes Python objects, which are pickles, not data.
    #[error("{}: Array can't be memory-mapped: Python objects in dtype.", path.display())]
    ObjectDType {
        /// The file.
        path: PathBuf,
    },

    /// The file ends before the array data the header promises.
    #[error(
        "mmap length is greater than file size: {} needs {expected} bytes \
         (data offset {data_offset} + {data_len} bytes of array data) but has {actual}; \
         the file seems truncated or not fully written",
        path.display()
    )]
    FileTooShort {
        /// The file.
        path: PathBuf,
        /// Bytes needed: `data_offset + data_len`.
        expected: u64,
        /// Bytes the file has.
        actual: u64,
        /// Where the data starts.
        data_offset: usize,
        /// Bytes of array data the header promises.
        data_len: usize,
    },

    /// Another process holds a conflicting lock (on the file's structure,
    /// or on bytes this mapping needs) and non-blocking locking was asked for.
    #[error("{}: file is locked by another process", path.display())]
    Locked {
        /// The file.
        path: PathBuf,
    },

    /// This process already maps bytes of the file in a way the new
    /// mapping (or change) conflicts with. Waiting could never end (the
    /// holder is this process), so this is an error whatever the locking.
    #[error(
        "{}: {wanted} conflicts with {held} of the same bytes that this process holds; \
         drop that one first",
        path.display()
    )]
    Conflict {
        /// The file.
        path: PathBuf,
        /// What was asked for ("a read-write mapping", ...).
        wanted: &'static str,
        /// What this process holds ("a read-only mapping", ...).
        held: &'static str,
    },

    /// A live mapping's element type does not fit its data (kind, size,
    /// byte order or alignment).
    #[error(
        "{}: live data of dtype {dtype} cannot be viewed as {rust_type}: atomic views need \
         the same kind and size, native byte order and aligned data",
        path.display()
    )]
    LiveType {
        /// The file.
        path: PathBuf,
        /// The file's dtype, as numpy writes it.
        dtype: String,
        /// The element type asked for.
        rust_type: &'static str,
    },

    /// Creating would replace an existing file, and overwriting was not asked for.
    #[error(
        "{}: file exists; set `overwrite(true)` to replace it",
        path.display()
    )]
    AlreadyExists {
        /// The file.
        path: PathBuf,
    },

    /// Between writing the file and mapping it, another process changed it.
    #[error(
        "{}: the file was changed by another process while it was being created",
        path.display()
    )]
    ChangedDuringCreate {
        /// The file.
        path: PathBuf,
    },

    /// A row range does not fit the array.
    #[error("rows {start}..{end} are out of bounds for an axis of length {rows}")]
    RowsOutOfBounds {
        /// First row asked for.
        start: usize,
        /// One past the last row asked for.
        end: usize,
        /// Rows available.
        rows: usize,
    },

    /// A byte range does not fit the mapped data.
    #[error("bytes {start}..{end} are out of bounds for {len} bytes of mapped array data")]
    BytesOutOfBounds {
        /// First byte asked for.
        start: usize,
        /// One past the last byte asked for.
        end: usize,
        /// Bytes available.
        len: usize,
    },

    /// A 0-d array has no axis to take a window of rows from.
    #[error("a 0-d array has no rows: it cannot be mapped as a window")]
    NoRows,

    /// Growing the file would need a longer header than the file has: it
    /// was written without room to rewrite the shape in place (numpy before
    /// 1.24, or another writer).
    #[error(
        "{}: the header has no room to grow to shape {shape}: it needs {needed} bytes \
         and the file has {available}; files written by numpy >= 1.24 (or by this \
         library) reserve room for 21 digits, older ones must be rewritten first \
         (np.save(path, np.load(path)))",
        path.display()
    )]
    NoRoomToGrow {
        /// The file.
        path: PathBuf,
        /// The shape that did not fit, as Python would print it.
        shape: String,
        /// Header bytes the new shape needs (text plus newline).
        needed: usize,
        /// Header bytes the file has.
        available: usize,
    },

    /// The array cannot grow along its growth axis.
    #[error("{}: cannot append rows: {reason}", path.display())]
    CannotGrow {
        /// The file.
        path: PathBuf,
        /// Why not.
        reason: String,
    },

    /// Appended or streamed data is not a whole number of rows.
    #[error("{bytes} bytes are not a whole number of rows of {row_bytes} bytes")]
    PartialRow {
        /// Bytes given (or written since the last whole row).
        bytes: usize,
        /// Bytes in one row.
        row_bytes: usize,
    },

    /// Building a typed view failed (dtype mismatch, misalignment, ...).
    #[error(transparent)]
    View(#[from] npy_core::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attaches the action and path to an I/O error.
pub(crate) fn io_error(
    action: &'static str,
    path: &std::path::Path,
) -> impl FnOnce(io::Error) -> Error {
    move |source| Error::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

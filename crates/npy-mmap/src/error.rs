//! The one error type of this crate: what went wrong ([`ErrorKind`]) and
//! where (the file's path, and inside an archive the member).
//!
//! A cause is either printed or returned from
//! [`source`](std::error::Error::source), never both, as `std::io::Error`
//! does: an [`ErrorKind`] returns its cause (the operating system's error,
//! the fill function's) and leaves it out of its message; an [`Error`]
//! prints its kind and that cause on one line and returns from `source`
//! only what the cause did not print (the cause's own source). Walking the
//! chain (`outer: inner: ...`) repeats nothing.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Everything that can go wrong while opening, creating, mapping, loading,
/// saving or flushing an array file or an `.npz` archive.
///
/// What went wrong is [`kind`](Self::kind); where is [`path`](Self::path)
/// (every error about a file names it) and, for an archive,
/// [`member`](Self::member). The message says all three:
/// `data.npz: Bad CRC-32 for file 'a.npy'`. One pointer wide, so
/// `Result<T>` stays small on the happy path.
///
/// The message is whole: it includes the kind's cause (`cannot open a.npy:
/// No such file or directory`), so [`source`](std::error::Error::source)
/// returns only what that cause did not print (its own source, usually
/// none); the cause itself is in the kind (`ErrorKind::Io { source, .. }`).
///
/// ```
/// use npy_mmap::ErrorKind;
///
/// let error = npy_mmap::open("/no/such/dir/a.npy").unwrap_err();
/// assert!(matches!(error.kind(), ErrorKind::Io { operation: "open", .. }));
/// assert_eq!(error.path().unwrap(), std::path::Path::new("/no/such/dir/a.npy"));
/// assert!(error.to_string().starts_with("cannot open /no/such/dir/a.npy: "));
/// ```
pub struct Error(Box<Context>);

struct Context {
    kind: ErrorKind,
    path: Option<PathBuf>,
    member: Option<String>,
}

impl Error {
    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// What went wrong, taken.
    pub fn into_kind(self) -> ErrorKind {
        self.0.kind
    }

    /// The file the error is about, if any (errors of an archive read from
    /// memory or of a plain stream have none).
    pub fn path(&self) -> Option<&Path> {
        self.0.path.as_deref()
    }

    /// The archive member the error is about, if any.
    pub fn member(&self) -> Option<&str> {
        self.0.member.as_deref()
    }

    /// `kind` about the file at `path`.
    pub(crate) fn at(path: &Path, kind: ErrorKind) -> Error {
        Error::from(kind).with_path(path)
    }

    /// This error, about the file at `path` (unless it already names one).
    pub(crate) fn with_path(mut self, path: &Path) -> Error {
        if self.0.path.is_none() {
            self.0.path = Some(path.to_path_buf());
        }
        self
    }

    /// This error, about the file at `path` when there is one (an archive
    /// read from memory has none).
    pub(crate) fn located(self, path: Option<&Path>) -> Error {
        match path {
            Some(path) => self.with_path(path),
            None => self,
        }
    }

    /// This error, about archive member `member` (unless it already names one).
    pub(crate) fn in_member(mut self, member: &str) -> Error {
        if self.0.member.is_none() {
            self.0.member = Some(member.to_owned());
        }
        self
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Error {
        Error(Box::new(Context {
            kind,
            path: None,
            member: None,
        }))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Context { kind, path, member } = &*self.0;
        let cause = std::error::Error::source(kind);
        match (kind, path) {
            // "cannot open a.npy: No such file or directory", like std's tools.
            (ErrorKind::Io { operation, source }, Some(path)) => {
                write!(f, "cannot {operation} {}: ", path.display())?;
                if let Some(member) = member {
                    write!(f, "member '{member}': ")?;
                }
                return write!(f, "{source}");
            }
            (_, Some(path)) => write!(f, "{}: ", path.display())?,
            _ => {}
        }
        // numpy's own messages that name the member already keep its wording.
        let names_member = match kind {
            ErrorKind::Archive(archive) => archive.names_member(),
            ErrorKind::DuplicateName { .. } => true,
            _ => false,
        };
        if let Some(member) = member.as_ref().filter(|_| !names_member) {
            write!(f, "member '{member}': ")?;
        }
        write!(f, "{kind}")?;
        // The kind's cause, which the kind leaves out of its message.
        match cause {
            Some(cause) => write!(f, ": {cause}"),
            None => Ok(()),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("Error");
        debug.field("kind", &self.0.kind);
        if let Some(path) = &self.0.path {
            debug.field("path", path);
        }
        if let Some(member) = &self.0.member {
            debug.field("member", member);
        }
        debug.finish()
    }
}

impl std::error::Error for Error {
    /// What the kind's cause did not print: the message has the cause itself.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.0.kind)?.source()
    }
}

/// What went wrong; see [`Error`] for where.
///
/// A kind with a cause (the operating system's error, the fill function's)
/// returns it from [`source`](std::error::Error::source) and leaves it out
/// of its message; [`Error`]'s message adds it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A system call (or a read or write of the stream) failed.
    #[error("cannot {operation}")]
    Io {
        /// What was being done (`open`, `map`, `flush`, `write`, ...).
        operation: &'static str,
        /// The operating system's error.
        source: io::Error,
    },

    /// The data is not what the `.npy` format allows, or not what was asked
    /// for: a malformed header, an object array where bytes were needed,
    /// data shorter than the header says, a view of the wrong type or
    /// alignment. npy-core's error says which; this crate adds the path and
    /// member.
    #[error(transparent)]
    Format(npy_core::Error),

    /// The new file replaced the old one, but syncing the directory
    /// afterwards failed: the replacement may not survive a power loss.
    /// (Every other error of a save leaves the old file in place.)
    #[error(
        "replaced with the new file, but its durability is unknown: \
         syncing the directory after the rename failed"
    )]
    NotDurable {
        /// The operating system's error.
        source: io::Error,
    },

    /// A read-write mapping without a header ([`OpenOptions::headerless`](crate::OpenOptions::headerless))
    /// would cover the header of an `.npy` file: its writes could change the
    /// dtype or shape under other mappings of the file, and new openers
    /// would read another array. Open the file as `.npy`, or map from
    /// `header_end` on.
    #[error(
        "a read-write mapping without a header would cover this .npy file's header (bytes \
         0..{header_end}), which other mappings rely on; open it as an .npy file, or map from \
         offset {header_end}"
    )]
    HeaderlessOverHeader {
        /// Where the `.npy` header ends (its data offset).
        header_end: u64,
    },

    /// The path names something other than a regular file (a FIFO, a
    /// directory, a device), which cannot be mapped or grown in place.
    #[error(
        "is {what}, not a regular file; only regular files can be mapped or appended to \
         (read a pipe as a stream, e.g. with npy_core::read_npy)"
    )]
    NotARegularFile {
        /// What it is instead ("a FIFO", "a directory", ...).
        what: &'static str,
    },

    /// The array holds Python objects (pickled data, not bytes), which
    /// cannot be mapped (numpy's wording); load it instead, with
    /// `allow_pickle`.
    #[error(
        "Array can't be memory-mapped: Python objects in dtype. \
         (Load it into memory with OpenOptions::allow_pickle and OpenOptions::load.)"
    )]
    ObjectsNotMappable,

    /// The file is an `.npz` archive where an `.npy` file was expected.
    #[error(
        "this is an .npz archive (a zip file), not an .npy file; \
         open it with OpenOptions::open_npz (numpy's np.load returns an NpzFile for it)"
    )]
    IsAnArchive,

    /// The file at the path was replaced (renamed over, or removed) by
    /// another process after it was opened: writing on would change a file
    /// nobody can reach any more.
    #[error(
        "the file was replaced or removed by another process since it was opened; open it again"
    )]
    Replaced,

    /// The file ends before the array data the header promises.
    #[error(
        "mmap length is greater than file size: the file needs {expected} bytes \
         (data offset {data_offset} + {data_len} bytes of array data) but has {actual}; \
         the file seems truncated or not fully written"
    )]
    FileTooShort {
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
    /// or on bytes this mapping needs) and it did not go away in time: at
    /// once with [`Locking::NonBlocking`](crate::Locking::NonBlocking), or
    /// within [`Locking::Timeout`](crate::Locking::Timeout).
    #[error(
        "another process holds a conflicting lock on the file: {held}{}",
        waited_message(*waited)
    )]
    Locked {
        /// How long this process waited before giving up.
        waited: std::time::Duration,
        /// What held the lock when this process gave up ("a numpy-style
        /// read-write mapping of the same bytes", "a change of the file's
        /// header or length (...)", ...), read from the lock itself.
        held: &'static str,
    },

    /// This process already maps bytes of the file in a way the new
    /// mapping (or change) conflicts with. Waiting could never end (the
    /// holder is this process), so this is an error whatever the locking.
    #[error(
        "{wanted} conflicts with {held} that this process holds{}; drop that one first",
        if *inherited { " (inherited from its parent through fork)" } else { "" }
    )]
    Conflict {
        /// Whether the holder was made by the parent of this process, which
        /// `fork` copied into it (its mapping and locks are this process's
        /// too until it drops them or exits).
        inherited: bool,
        /// What was asked for ("a read-write mapping", ...).
        wanted: &'static str,
        /// What this process holds ("a read-only mapping of the same
        /// bytes", "a RowWriter (CreateOptions::stream) writing the file", ...).
        held: &'static str,
    },

    /// A live mapping's element type does not fit its data (kind, size,
    /// byte order or alignment).
    #[error(
        "live data of dtype {dtype} cannot be viewed as {rust_type}: atomic views need \
         the same kind and size, native byte order and aligned data"
    )]
    LiveType {
        /// The file's dtype, as numpy writes it.
        dtype: String,
        /// The element type asked for.
        rust_type: &'static str,
    },

    /// Creating would replace an existing file, and overwriting was not
    /// asked for: [`CreateOptions::overwrite`](crate::CreateOptions::overwrite)
    /// was off, or an [`AtomicFile`](crate::AtomicFile) was told not to
    /// [`replace_existing`](crate::AtomicFile::replace_existing) a file (which
    /// may have appeared while the new one was written).
    #[error(
        "file exists; it is replaced only when asked (`CreateOptions::overwrite(true)`, \
         `AtomicFile::replace_existing(true)`)"
    )]
    AlreadyExists,

    /// Between writing the file and mapping it, another process changed it.
    #[error("the file was changed by another process while it was being created")]
    ChangedDuringCreate,

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

    /// A 0-d array has no axis to take a range of rows from.
    #[error("a 0-d array has no rows: it cannot be mapped as a range of rows")]
    NoRows,

    /// Growing the file would need a longer header than the file has: it
    /// was written without room to rewrite the shape in place (numpy before
    /// 1.24, or another writer).
    #[error(
        "the header has no room to grow to shape {shape}: it needs {needed} bytes \
         and the file has {available}; files written by numpy >= 1.24 (or by this \
         library) reserve room for 21 digits, older ones must be rewritten first \
         (np.save(path, np.load(path)))"
    )]
    NoRoomToGrow {
        /// The shape that did not fit, as Python would print it.
        shape: String,
        /// Header bytes the new shape needs (text plus newline).
        needed: usize,
        /// Header bytes the file has.
        available: usize,
    },

    /// The array cannot grow along its growth axis.
    #[error("cannot append rows: {reason}")]
    CannotGrow {
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

    /// The function given to [`MappedArray::fill_blocks`](crate::MappedArray::fill_blocks)
    /// failed; the rows it filled before are flushed.
    #[error("the fill function failed")]
    Fill {
        /// Its error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// The archive, or one of its members, is not what the zip format
    /// and numpy allow, or a key names no member: npy-core's
    /// [`ArchiveError`](npy_core::npz::ArchiveError), the one kind npy-remote's
    /// archives report too. This crate adds the path and member.
    #[error(transparent)]
    Archive(npy_core::npz::ArchiveError),

    /// The file is an `.npy` file where an `.npz` archive was expected.
    #[error("this is an .npy file, not an .npz archive; open it with OpenOptions::open")]
    IsNpy,

    /// An array was asked for, but the member does not start with the `.npy` magic.
    #[error("not .npy data (it does not start with \\x93NUMPY); read it as raw bytes")]
    NotNpy,

    /// A member with this name was already written.
    #[error("duplicate member name '{member}'")]
    DuplicateName {
        /// The member name (with `.npy`).
        member: String,
    },

    /// A positional array's `arr_N` name collides with a keyword array (NumPy's wording).
    #[error("Cannot use un-named variables and keyword {key}")]
    PositionalClash {
        /// The clashing key.
        key: String,
    },
}

fn waited_message(waited: std::time::Duration) -> String {
    if waited.is_zero() {
        String::new()
    } else {
        format!("; gave up after {waited:.1?}")
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attaches the operation and path to an I/O error.
pub(crate) fn io_error(operation: &'static str, path: &Path) -> impl FnOnce(io::Error) -> Error {
    move |source| Error::at(path, ErrorKind::Io { operation, source })
}

/// An I/O error of a stream with no path (an archive read from memory).
pub(crate) fn stream_error(operation: &'static str) -> impl FnOnce(io::Error) -> Error {
    move |source| Error::from(ErrorKind::Io { operation, source })
}

/// npy-core's error about the file at `path`. An I/O error inside it
/// (npy-core's readers and writers) becomes this crate's, with `operation`.
pub(crate) fn format_error(
    operation: &'static str,
    path: &Path,
) -> impl FnOnce(npy_core::Error) -> Error {
    move |error| format_error_kind(operation, error).with_path(path)
}

/// npy-core's error with no path yet.
pub(crate) fn format_error_kind(operation: &'static str, error: npy_core::Error) -> Error {
    match error {
        npy_core::Error::Io(source) => Error::from(ErrorKind::Io { operation, source }),
        npy_core::Error::BadMagic { ref found } if found.starts_with("b'PK") => {
            Error::from(ErrorKind::IsAnArchive)
        }
        error => Error::from(ErrorKind::Format(error)),
    }
}

impl From<npy_core::npz::ArchiveError> for Error {
    fn from(error: npy_core::npz::ArchiveError) -> Error {
        Error::from(ErrorKind::Archive(error))
    }
}

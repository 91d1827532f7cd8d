//! The one error type of the crate.

use std::ops::Range;

/// What was being done when a request failed: named in every message so
/// that a log line says which request to look at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Operation {
    /// Reading the preamble and header.
    Open,
    /// A ranged read of array data.
    Read,
    /// Reading an archive's end records or central directory.
    List,
    /// Uploading an object in one request.
    Put,
    /// Starting, writing a part of, completing or aborting a multipart upload.
    Multipart,
    /// Looking up an object's metadata.
    Head,
    /// Deleting an object.
    Delete,
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Operation::Open => "open",
            Operation::Read => "read",
            Operation::List => "list",
            Operation::Put => "put",
            Operation::Multipart => "multipart upload",
            Operation::Head => "head",
            Operation::Delete => "delete",
        })
    }
}

/// Everything that can go wrong with an array in object storage.
///
/// Format problems carry npy-core's error (numpy's wording) and the object's
/// path; request failures carry the operation and path, with the store's
/// error (`object_store::Error`, wrapped, never part of a signature) as the
/// [source](std::error::Error::source).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The store refused or failed a request.
    #[error("{operation} {path}: {message}")]
    Store {
        /// What was being done.
        operation: Operation,
        /// The object's path in its store.
        path: String,
        /// The store's message.
        message: String,
        /// Whether the object does not exist.
        not_found: bool,
        /// The store's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// The object was replaced after it was opened: its ETag no longer
    /// matches the one every later read is pinned to (`If-Match`), so the
    /// bytes would come from another version. Open it again.
    #[error(
        "{operation} {path}: the object changed since it was opened (its ETag no longer matches); open it again"
    )]
    Changed {
        /// What was being done.
        operation: Operation,
        /// The object's path in its store.
        path: String,
    },

    /// The object is not a valid `.npy` (or archive member), or a request
    /// does not fit the array: npy-core's error, with numpy's wording.
    #[error("{path}: {source}")]
    Format {
        /// The object's path in its store.
        path: String,
        /// What is wrong.
        #[source]
        source: npy_core::Error,
    },

    /// A server answered a ranged read with another number of bytes than
    /// asked for.
    #[error("read {path}: asked for bytes {}..{}, the store returned {got}", .range.start, .range.end)]
    ShortRead {
        /// The object's path in its store.
        path: String,
        /// The bytes asked for.
        range: Range<u64>,
        /// The bytes returned.
        got: u64,
    },

    /// A URL names no store this crate can open.
    #[error("{url}: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// Why it cannot be opened.
        reason: String,
    },

    /// An `.npz` archive is not a valid zip, or a member is corrupt.
    #[error("{path}: {reason}")]
    Npz {
        /// The archive's path in its store.
        path: String,
        /// What is wrong (Python's zipfile wording where it has one).
        reason: String,
    },

    /// Data bytes outside the array's data were asked for.
    #[error("{path}: data bytes {start}..{end} are outside the {data_len} bytes of data")]
    OutsideData {
        /// The object's path in its store.
        path: String,
        /// First byte asked for.
        start: usize,
        /// One past the last byte asked for.
        end: usize,
        /// Bytes of data in the array.
        data_len: usize,
    },

    /// A multipart plan is inconsistent, or a part does not fit it.
    #[error("{path}: {reason}")]
    Plan {
        /// The object's path in its store.
        path: String,
        /// What is wrong.
        reason: String,
    },

    /// The data written does not match what the header promises.
    #[error("{path}: {reason}")]
    Write {
        /// The object's path in its store.
        path: String,
        /// What is wrong.
        reason: String,
    },

    /// The store cannot do what was asked (for example, a multipart upload
    /// whose parts arrive out of order on a store without that API).
    #[error("{path}: {what} is not supported by this store")]
    NotSupported {
        /// The object's path in its store.
        path: String,
        /// What was asked.
        what: &'static str,
    },

    /// A local file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// A failed request: `operation` on `path`.
    pub(crate) fn store(
        operation: Operation,
        path: &object_store::path::Path,
        source: object_store::Error,
    ) -> Error {
        if matches!(source, object_store::Error::Precondition { .. }) {
            return Error::Changed {
                operation,
                path: path.to_string(),
            };
        }
        let not_found = matches!(source, object_store::Error::NotFound { .. });
        Error::Store {
            operation,
            path: path.to_string(),
            // One line: the store's own message carries the response body
            // (S3's is XML over several lines); it stays the source.
            message: if not_found {
                "no such object".to_string()
            } else {
                source.to_string()
            },
            not_found,
            source: Box::new(source),
        }
    }

    /// A format error about the object at `path`.
    pub(crate) fn format(path: &object_store::path::Path, source: npy_core::Error) -> Error {
        Error::Format {
            path: path.to_string(),
            source,
        }
    }

    /// Whether the object does not exist (a missing object, not a failure).
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            Error::Store {
                not_found: true,
                ..
            }
        )
    }

    /// npy-core's error, when this is a format error: for matching on the
    /// same variants as local reads.
    pub fn format_error(&self) -> Option<&npy_core::Error> {
        match self {
            Error::Format { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

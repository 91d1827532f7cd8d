//! The one error type of the crate: what went wrong ([`ErrorKind`]) and
//! where (the object's path, and inside an archive the member), the shape
//! of npy-mmap's error.
//!
//! A cause is either printed or returned from
//! [`source`](std::error::Error::source), never both, as `std::io::Error`
//! does: an [`ErrorKind`] returns its cause and leaves it out of its
//! message; an [`Error`] prints its kind and that cause on one line and
//! returns from `source` only what the cause did not print. Walking the
//! chain (`outer: inner: ...`) repeats nothing.

use std::fmt;
use std::ops::Range;

use npy_core::npz::ArchiveError;

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

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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

/// Everything that can go wrong with an array or archive in object storage.
///
/// What went wrong is [`kind`](Self::kind); where is [`path`](Self::path)
/// (the object's path in its store) and, for an archive,
/// [`member`](Self::member): the same methods, with the same meanings, as
/// `npy_mmap::Error`'s. Archive problems are npy-core's
/// [`ArchiveError`], the kind local archives report too, so a missing member
/// ([`ArchiveError::NotAFile`]) is told from a corrupt archive by kind.
///
/// The message is whole: it names the operation and path, and includes the
/// kind's cause (npy-core's reason for a format error; for a failed request
/// the store's error and its causes, on one line, or `no such object` for a
/// missing one: `open a.npy: no such object`). So
/// [`source`](std::error::Error::source) returns only what was not printed:
/// the printed cause's own source, and nothing for a failed request. The
/// store's error itself is in the kind ([`ErrorKind::Store`]).
///
/// ```
/// use std::sync::Arc;
/// use npy_remote::{ErrorKind, Operation, RemoteArray};
/// use object_store::{memory::InMemory, path::Path};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let error = RemoteArray::open(Arc::new(InMemory::new()), Path::from("a.npy"))
///     .await
///     .unwrap_err();
/// assert!(matches!(error.kind(), ErrorKind::Store { operation: Operation::Open, not_found: true, .. }));
/// assert!(error.is_not_found());
/// assert_eq!(error.path(), Some("a.npy"));
/// assert_eq!(error.to_string(), "open a.npy: no such object");
/// # }
/// ```
pub struct Error(Box<Context>);

struct Context {
    kind: ErrorKind,
    path: Option<String>,
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

    /// The object the error is about, as its path in its store (a URL
    /// that names no store has none: [`ErrorKind::Url`] holds it).
    pub fn path(&self) -> Option<&str> {
        self.0.path.as_deref()
    }

    /// The archive member the error is about, if any.
    pub fn member(&self) -> Option<&str> {
        self.0.member.as_deref()
    }

    /// Whether the object does not exist (a missing object, not a failure).
    pub fn is_not_found(&self) -> bool {
        matches!(
            self.kind(),
            ErrorKind::Store {
                not_found: true,
                ..
            }
        )
    }

    /// `kind` about the object at `path`.
    pub(crate) fn at(path: impl fmt::Display, kind: ErrorKind) -> Error {
        let mut error = Error::from(kind);
        error.0.path = Some(path.to_string());
        error
    }

    /// This error, about archive member `member` (unless it already names one).
    pub(crate) fn in_member(mut self, member: &str) -> Error {
        if self.0.member.is_none() {
            self.0.member = Some(member.to_owned());
        }
        self
    }

    /// A failed request: `operation` on `path`.
    pub(crate) fn store(
        operation: Operation,
        path: &object_store::path::Path,
        source: object_store::Error,
    ) -> Error {
        if matches!(source, object_store::Error::Precondition { .. }) {
            return Error::at(path, ErrorKind::Changed { operation });
        }
        let not_found = matches!(source, object_store::Error::NotFound { .. });
        Error::at(
            path,
            ErrorKind::Store {
                operation,
                not_found,
                source: Box::new(source),
            },
        )
    }

    /// A format error about the object at `path`.
    pub(crate) fn format(path: &object_store::path::Path, source: npy_core::Error) -> Error {
        Error::at(path, ErrorKind::Format(source))
    }

    /// An archive error about the archive at `path`.
    pub(crate) fn archive(path: &object_store::path::Path, error: ArchiveError) -> Error {
        Error::at(path, ErrorKind::Archive(error))
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
        // A request's operation leads, as in a log line: "open a.npy: ...".
        match (kind.operation(), path) {
            (Some(operation), Some(path)) => write!(f, "{operation} {path}: ")?,
            (None, Some(path)) => write!(f, "{path}: ")?,
            (Some(operation), None) => write!(f, "{operation}: ")?,
            (None, None) => {}
        }
        // numpy's (and zipfile's) messages that name the member keep their wording.
        let names_member = matches!(kind, ErrorKind::Archive(archive) if archive.names_member());
        if let Some(member) = member.as_ref().filter(|_| !names_member) {
            write!(f, "member '{member}': ")?;
        }
        match kind {
            ErrorKind::Store {
                not_found: false,
                source,
                ..
            } => {
                let text = store_message(&**source);
                match advice(&text) {
                    Some(advice) => write!(f, "{advice} (the store said: {text})"),
                    None => f.write_str(&text),
                }
            }
            // A missing bucket is not a missing object: say which.
            ErrorKind::Store {
                not_found: true,
                source,
                ..
            } if store_message(&**source).contains("NoSuchBucket") => {
                match xml_field(&store_message(&**source), "BucketName") {
                    Some(bucket) => write!(
                        f,
                        "no such bucket '{bucket}' (create it, or check the URL's bucket)"
                    ),
                    None => f.write_str("no such bucket (create it, or check the URL's bucket)"),
                }
            }
            kind => {
                write!(f, "{kind}")?;
                match std::error::Error::source(kind).filter(|_| !kind.is_store()) {
                    Some(cause) => write!(f, ": {cause}"),
                    None => Ok(()),
                }
            }
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
    /// What the message did not print: the printed cause's own source, and
    /// nothing for a failed request (the message has the store's whole chain).
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0.kind {
            ErrorKind::Store { .. } => None,
            kind => std::error::Error::source(kind)?.source(),
        }
    }
}

/// What went wrong; see [`Error`] for where.
///
/// A kind with a cause (the store's error, an I/O error) returns it from
/// [`source`](std::error::Error::source) and leaves it out of its message;
/// [`Error`]'s message adds it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The store refused or failed a request.
    #[error("{}", if *not_found { "no such object" } else { "the store failed the request" })]
    Store {
        /// What was being done.
        operation: Operation,
        /// Whether the object does not exist.
        not_found: bool,
        /// The store's error (an `object_store::Error`: downcast it; the
        /// type stays out of this crate's signatures).
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// The object was replaced after it was opened: its ETag no longer
    /// matches the one every later read is pinned to (`If-Match`), so the
    /// bytes would come from another version. Open it again.
    #[error("the object changed since it was opened (its ETag no longer matches); open it again")]
    Changed {
        /// What was being done.
        operation: Operation,
    },

    /// The object is not a valid `.npy` (or archive member), or a request
    /// does not fit the array: npy-core's error, with numpy's wording, the
    /// same as a local file's.
    #[error(transparent)]
    Format(npy_core::Error),

    /// An `.npz` archive is not a valid zip, a member is corrupt, or a key
    /// names no member: npy-core's [`ArchiveError`], the same as a local
    /// archive's.
    #[error(transparent)]
    Archive(ArchiveError),

    /// A server answered a ranged read with another number of bytes than
    /// asked for.
    #[error("asked for bytes {}..{}, the store returned {got}", .range.start, .range.end)]
    ShortRead {
        /// What was being done.
        operation: Operation,
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

    /// Data bytes outside the array's data were asked for.
    #[error("data bytes {start}..{end} are outside the {data_len} bytes of data")]
    OutsideData {
        /// First byte asked for.
        start: usize,
        /// One past the last byte asked for.
        end: usize,
        /// Bytes of data in the array.
        data_len: usize,
    },

    /// A multipart plan cannot be made, is inconsistent, or a part does
    /// not fit it.
    #[error("{0}")]
    Plan(PlanError),

    /// Streamed data is not a whole number of rows.
    #[error("{bytes} data bytes are not a whole number of rows of {row_bytes} bytes")]
    PartialRow {
        /// Bytes written.
        bytes: u64,
        /// Bytes in one row.
        row_bytes: usize,
    },

    /// The data written does not match what the header promises.
    #[error("{0}")]
    Write(WriteError),

    /// The store cannot do what was asked (for example, a multipart upload
    /// whose parts arrive out of order on a store without that API).
    #[error("{what} is not supported by this store")]
    NotSupported {
        /// What was asked.
        what: &'static str,
    },

    /// An array cannot be described as virtual Zarr (see
    /// [`zarr`](crate::zarr)): its dtype has no Zarr form, its data is
    /// compressed, or the chunking asked for does not fit it.
    #[error("{0}")]
    Virtual(VirtualError),

    /// A local read or write (a file copied to or from the store), or the
    /// runtime the requests run on, failed.
    #[error("cannot {operation}")]
    Io {
        /// What was being done (`read`, `write`, `start the runtime`, ...).
        operation: &'static str,
        /// The failure.
        source: std::io::Error,
    },
}

impl ErrorKind {
    /// The request this kind is about, if it is about one.
    fn operation(&self) -> Option<Operation> {
        match self {
            ErrorKind::Store { operation, .. }
            | ErrorKind::Changed { operation }
            | ErrorKind::ShortRead { operation, .. } => Some(*operation),
            _ => None,
        }
    }

    fn is_store(&self) -> bool {
        matches!(self, ErrorKind::Store { .. })
    }
}

/// The store's error and its causes on one line. object_store's messages
/// print some of their causes and return them too, while the HTTP client's
/// leave theirs out (the reason a connection failed is only a cause): so a
/// cause is added unless the text already has it. This is the one place a
/// chain is flattened by its text, at the edge of a crate that mixes both
/// conventions; our own errors never repeat a cause.
fn store_message(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = one_line(&error.to_string());
    let mut cause = error.source();
    while let Some(inner) = cause {
        let part = one_line(&inner.to_string());
        if !part.is_empty() && !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        cause = inner.source();
    }
    text
}

/// What happened and what to set, for the failures a first use of object
/// storage meets, which the store's own words leave unclear: a plain
/// `http://` endpoint (refused unless allowed), and no credentials (the
/// client then asks the cloud's instance-metadata service, and shows that
/// request's failure).
fn advice(text: &str) -> Option<&'static str> {
    if text.contains("URL scheme is not allowed") {
        return Some(if text.contains("Azure") {
            "the endpoint is plain http://, which is refused unless allowed: set AZURE_ALLOW_HTTP=true"
        } else if text.contains("S3") {
            "the endpoint (AWS_ENDPOINT_URL or AWS_ENDPOINT) is plain http://, which is refused unless allowed: set AWS_ALLOW_HTTP=true"
        } else {
            "the endpoint is plain http://, which is refused unless allowed: set the store's allow_http (AWS_ALLOW_HTTP=true for S3)"
        });
    }
    // object_store's IMDS requests (`{endpoint}/latest/api/token`, then
    // `/latest/meta-data/...`), and ECS's container endpoint.
    if text.contains("/latest/api/token")
        || text.contains("/latest/meta-data/")
        || text.contains("169.254.170.2")
    {
        return Some(
            "no credentials in the environment, and the instance-metadata service (which only a cloud VM has) gave none: \
             set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_ENDPOINT_URL for a server other than AWS)",
        );
    }
    None
}

/// The text of `<name>...</name>` in an XML error body, if there is one.
fn xml_field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let start = text.find(&open)? + open.len();
    let end = start + text[start..].find('<')?;
    Some(&text[start..end]).filter(|value| !value.is_empty())
}

/// A message on one line (a store's may span several: S3's carry an XML body).
fn one_line(text: &str) -> String {
    text.split('\n')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a multipart write plan ([`WritePlan`](crate::WritePlan)) cannot be
/// made or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The text given to [`WritePlan::from_json`](crate::WritePlan::from_json)
    /// is not a plan (the JSON parser's message).
    #[error("not a write plan: {detail}")]
    NotAPlan {
        /// What the JSON parser said.
        detail: String,
    },
    /// The plan was made without a URL, so it cannot name its store.
    #[error("the plan has no URL: pass the store explicitly")]
    NoUrl,
    /// A part index the plan does not have (uploading, or in a receipt).
    #[error("the plan has no part {index} (it has {parts})")]
    NoSuchPart {
        /// The index asked for.
        index: usize,
        /// How many parts the plan has.
        parts: usize,
    },
    /// A part's data is not the size of its rows.
    #[error("part {index} holds rows {}..{}: {expected} bytes, got {actual}", rows.start, rows.end)]
    PartLength {
        /// The part.
        index: usize,
        /// The rows it holds.
        rows: std::ops::Range<usize>,
        /// Bytes of those rows.
        expected: u64,
        /// Bytes given.
        actual: u64,
    },
    /// Two receipts for one part: the upload was aborted.
    #[error("part {index} was reported twice; the upload was aborted")]
    PartReportedTwice {
        /// The part.
        index: usize,
    },
    /// No receipt for a part: the upload was aborted.
    #[error("part {index} (rows {}..{}) was not uploaded; the upload was aborted", rows.start, rows.end)]
    PartMissing {
        /// The first part without a receipt.
        index: usize,
        /// Its rows.
        rows: std::ops::Range<usize>,
    },
    /// The completed object is not the size the plan says.
    #[error("the completed object is {actual} bytes, the plan {expected}")]
    CompletedSize {
        /// The object's size.
        actual: u64,
        /// The plan's.
        expected: u64,
    },
    /// One row is bigger than the largest part a store takes.
    #[error("a row is {row_bytes} bytes, more than the largest part ({max_part_size})")]
    RowTooLarge {
        /// Bytes in one row.
        row_bytes: u64,
        /// [`MAX_PART_SIZE`](crate::MAX_PART_SIZE).
        max_part_size: u64,
    },
    /// The rows need more parts than a store takes, even at the largest
    /// part size.
    #[error(
        "{rows} rows of {row_bytes} bytes need parts larger than {max_part_size} bytes to fit {max_parts} parts"
    )]
    TooManyParts {
        /// Rows in the array.
        rows: u64,
        /// Bytes in one row.
        row_bytes: u64,
        /// [`MAX_PART_SIZE`](crate::MAX_PART_SIZE).
        max_part_size: u64,
        /// [`MAX_PARTS`](crate::MAX_PARTS).
        max_parts: usize,
    },
}

/// Why a streamed or copied write cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// A 0-d array has no rows to stream.
    #[error("a 0-d array has no rows to stream")]
    NoRows,
    /// One row of this shape is more bytes than memory can address (not
    /// [`PlanError::RowTooLarge`], a row bigger than a store's part).
    #[error("a row of this shape does not fit in memory")]
    RowSizeOverflow,
    /// The header's length changed with the final row count (the header
    /// is written last, into the room the first part kept for it).
    #[error("the header's length changed with the row count")]
    HeaderLength,
    /// A part of the upload has no receipt.
    #[error("a part was not uploaded")]
    PartMissing,
    /// The source grew while it was copied.
    #[error("the source grew while it was copied")]
    SourceGrew,
}

/// Why an array cannot be described as virtual Zarr ([`crate::zarr`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VirtualError {
    /// The dtype has no form in the Zarr version asked for.
    #[error("dtype {dtype} cannot be a Zarr {zarr} array: {reason}")]
    DType {
        /// The dtype's descr.
        dtype: String,
        /// `v2` or `v3`.
        zarr: &'static str,
        /// Why not.
        reason: &'static str,
    },
    /// An object array: its data is a pickle, not fixed-size elements.
    #[error(
        "an object array (dtype=object) is a pickle, not fixed-size elements: Zarr cannot read it in place"
    )]
    Object,
    /// A deflated `.npz` member: no Zarr reader decodes raw deflate.
    #[error(
        "the member is deflated (np.savez_compressed): zip stores raw deflate without the zlib header \
         and checksum Zarr's zlib codec expects, so no Zarr reader can decode it in place; \
         save it with np.savez or convert it (npy convert)"
    )]
    Deflated,
    /// The rows asked for per chunk leave a short last chunk.
    #[error(
        "{rows_per_chunk} rows per chunk do not divide the {rows} rows: Zarr reads every chunk \
         as a whole chunk, and the bytes after the data's end do not exist; pick a divisor of {rows}{hint}"
    )]
    PartialChunk {
        /// Rows per chunk asked for.
        rows_per_chunk: usize,
        /// Rows of the array.
        rows: usize,
        /// Divisors near the request, as text (`" such as 100 or 125"`).
        hint: String,
    },
    /// Zero rows per chunk.
    #[error("rows per chunk must be at least 1")]
    ZeroRows,
    /// Two arrays would be one variable.
    #[error(
        "two arrays are both named {name:?}: name them apart (one per file stem or npz member)"
    )]
    DuplicateName {
        /// The name.
        name: String,
    },
    /// A variable name Zarr would refuse, hide or read as another key.
    #[error(
        "the variable name {name:?} (from {source_name}) cannot be a Zarr name: {reason}; rename it \
         (np.savez keys and file stems are the names)"
    )]
    Name {
        /// The name.
        name: String,
        /// Where it came from (`member "../evil.npy" of /data/run.npz`, `file /data/.npy`).
        source_name: String,
        /// Why not.
        reason: &'static str,
    },
    /// A path or prefix holds no `.npy` or `.npz`.
    #[error("{location}: no .npy or .npz files there")]
    Empty {
        /// The directory or prefix.
        location: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failed request as the store reports it, wrapped as a task does.
    fn failed(source: object_store::Error) -> String {
        Error::store(
            Operation::Open,
            &object_store::path::Path::from("a.npy"),
            source,
        )
        .to_string()
    }

    #[test]
    fn first_use_failures_say_what_to_set() {
        let generic = |text: &str| object_store::Error::Generic {
            store: "S3",
            source: text.to_string().into(),
        };
        let http = failed(generic(
            "Error performing GET http://127.0.0.1:5099/b/a.npy - HTTP error: builder error: URL scheme is not allowed",
        ));
        assert!(http.starts_with("open a.npy: the endpoint"), "{http}");
        assert!(
            http.contains("set AWS_ALLOW_HTTP=true") && http.contains("URL scheme is not allowed")
        );
        let imds = failed(generic(
            "Error performing PUT http://169.254.169.254/latest/api/token - Server returned non-2xx status code: 403 Forbidden",
        ));
        assert!(
            imds.contains("no credentials")
                && imds.contains("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
            "{imds}"
        );
        let other = failed(generic("Server returned non-2xx status code: 500"));
        assert!(!other.contains("set "), "{other}");
        let bucket = failed(object_store::Error::NotFound {
            path: "a.npy".into(),
            source: "404 Not Found: <Error><Code>NoSuchBucket</Code><BucketName>gone</BucketName></Error>".into(),
        });
        assert!(bucket.contains("no such bucket 'gone'"), "{bucket}");
        let object = failed(object_store::Error::NotFound {
            path: "a.npy".into(),
            source: "404 Not Found: <Error><Code>NoSuchKey</Code></Error>".into(),
        });
        assert_eq!(object, "open a.npy: no such object");
    }
}

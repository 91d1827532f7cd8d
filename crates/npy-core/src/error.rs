//! The one error type of the crate.
//!
//! Messages follow NumPy's wording where NumPy has one, so that a user who
//! searches for the text finds the same explanation for both libraries.
//!
//! A cause is either in the message or the [source](std::error::Error::source),
//! never both (as `std::io::Error` does): walking the chain (`outer: inner`)
//! repeats nothing. Here the one cause, an invalid descr's reason, is the
//! source; [`Error::Io`] is the I/O error itself (its message and source).

/// Everything that can go wrong while reading, checking or writing `.npy` data.
///
/// A cause is never both printed and returned from
/// [`source`](std::error::Error::source): print the chain to see it all,
/// as the `npy` tool does (`descr is not a valid dtype descriptor: 'xyz':
/// data type 'xyz' not understood`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An underlying read or write failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),

    /// The input ended before a complete part of the file was read.
    #[error("EOF: reading {what}, expected {expected} bytes got {got}")]
    Eof {
        /// What was being read: `magic string`, `array header length`, `array header`.
        what: &'static str,
        /// Bytes needed.
        expected: usize,
        /// Bytes available.
        got: usize,
    },

    /// The file does not start with `\x93NUMPY`.
    #[error("the magic string is not correct; expected b'\\x93NUMPY', got {found}")]
    BadMagic {
        /// The first six bytes, as a Python bytes literal.
        found: String,
    },

    /// The version bytes are not 1.0, 2.0 or 3.0.
    #[error("we only support format version (1,0), (2,0), and (3,0), not ({major}, {minor})")]
    UnsupportedVersion {
        /// Major version byte.
        major: u8,
        /// Minor version byte.
        minor: u8,
    },

    /// The header is longer than [`ParseOptions::max_header_size`](crate::ParseOptions).
    #[error(
        "Header info length ({length}) is large and may not be safe to load securely.\n\
         To allow loading, adjust `max_header_size` (currently {max}) in ParseOptions.\n\
         For safety against large resource use or crashes, sandboxing may be necessary."
    )]
    HeaderTooLarge {
        /// Length of the header in characters (for a 3.0 header refused before
        /// decoding: in bytes, which is at least 4 × the limit).
        length: usize,
        /// The limit in force.
        max: usize,
    },

    /// A version 3.0 header is not valid UTF-8.
    #[error("the array header is not valid UTF-8 (byte {valid_up_to} of the header text)")]
    HeaderNotUtf8 {
        /// Offset of the first invalid byte within the header text.
        valid_up_to: usize,
    },

    /// The header text is not a Python literal this crate reads.
    #[error(
        "Cannot parse header: {} ({reason} at character {position})",
        quoted(header)
    )]
    CannotParseHeader {
        /// The header text, as a Python string literal.
        header: String,
        /// What is wrong.
        reason: &'static str,
        /// Character offset in the header text where the problem was found.
        position: usize,
    },

    /// The header literal is not a dict.
    #[error("Header is not a dictionary: {}", quoted(found))]
    HeaderNotDict {
        /// The value found, as Python would print it.
        found: String,
    },

    /// The header dict does not hold exactly `descr`, `fortran_order` and `shape`.
    #[error("Header does not contain the correct keys: {}", quoted(keys))]
    WrongKeys {
        /// The sorted key list, as Python would print it.
        keys: String,
    },

    /// A header key appears twice (NumPy silently keeps the last; we refuse
    /// because two readers could disagree about what the file holds).
    #[error("Header contains the key {} more than once", quoted(key))]
    DuplicateKey {
        /// The key, as a Python string literal.
        key: String,
    },

    /// `shape` is not a tuple of non-negative integers.
    #[error("shape is not valid: {}", quoted(found))]
    InvalidShape {
        /// The value found, as Python would print it.
        found: String,
    },

    /// `fortran_order` is not `True` or `False`.
    #[error("fortran_order is not a valid bool: {}", quoted(found))]
    InvalidFortranOrder {
        /// The value found, as Python would print it.
        found: String,
    },

    /// The `descr` of a header does not describe a dtype. The message is
    /// numpy's; why the descr was refused is the
    /// [source](std::error::Error::source) (numpy chains it the same way,
    /// `raise ValueError(...) from e`).
    #[error("descr is not a valid dtype descriptor: {}", quoted(descr))]
    InvalidDescr {
        /// The descr, as Python would print it.
        descr: String,
        /// Why it was refused.
        source: Box<Error>,
    },

    /// A type string that is not a known dtype.
    #[error("data type {} not understood", quoted(name))]
    DTypeNotUnderstood {
        /// The type string, as a Python string literal.
        name: String,
    },

    /// A structured or subarray descr that is malformed.
    #[error("invalid dtype: {}", quoted(reason))]
    InvalidDType {
        /// What is wrong.
        reason: String,
    },

    /// The dtype holds Python objects (`'O'`, possibly nested in a record)
    /// and pickles were not allowed ([`ParseOptions::allow_pickle`](crate::ParseOptions)).
    #[error(
        "Object arrays cannot be loaded when allow_pickle=False \
         (their data is a Python pickle; allow_pickle decodes it with a restricted \
         unpickler that never runs code)"
    )]
    ObjectDType,

    /// A structured dtype with an object field (or a subarray of objects):
    /// only whole object arrays are decoded.
    #[error(
        "structured dtypes with object fields are not supported \
         (only whole object arrays, descr '|O', are decoded)"
    )]
    ObjectField,

    /// The data of an object array is not a pickle this crate decodes, or
    /// it asks for something the restricted unpickler refuses.
    #[error("cannot unpickle the object array data (at byte {position} of the pickle): {reason}")]
    Unpickling {
        /// Offset in the pickle of the opcode (or value) at fault.
        position: u64,
        /// What is wrong, naming the refused global or opcode.
        reason: String,
    },

    /// A Python 2 `str` in an object array's pickle is not ASCII and the
    /// encoding asked for is ASCII (numpy's default): numpy raises
    /// `UnicodeError` here, so callers that map errors to Python tell it
    /// from [`Error::Unpickling`].
    #[error(
        "cannot unpickle the object array data (at byte {position} of the pickle): \
         'ascii' codec can't decode byte {byte:#04x} in position {index} of a Python 2 str: \
         ordinal not in range(128) (Python 2 data: load with encoding latin1 or bytes)"
    )]
    Python2Str {
        /// Offset in the pickle of the string's opcode.
        position: u64,
        /// The first byte above 127.
        byte: u8,
        /// Its index in the string.
        index: usize,
    },

    /// A [`PyValue`](crate::pickle::PyValue) is not of the type asked for.
    #[error("expected {wanted}, found a Python {found}")]
    PyValueType {
        /// The value's Python type.
        found: &'static str,
        /// What was asked for.
        wanted: String,
    },

    /// An object array needs one value per element.
    #[error("an object array of shape {shape} holds {expected} values, not {actual}")]
    ObjectCount {
        /// The shape, as a Python tuple.
        shape: String,
        /// Elements in the shape.
        expected: usize,
        /// Values given.
        actual: usize,
    },

    /// Object arrays hold values, not bytes: raw-data writers and views
    /// refuse them.
    #[error(
        "the array holds Python objects: write it as an NpyArray with write_npy (its data is a pickle), \
         and read its values with NpyArray::objects"
    )]
    ObjectData,

    /// More dimensions than NumPy supports.
    #[error("maximum supported dimension for an ndarray is currently {max}, found {found}")]
    TooManyDimensions {
        /// Dimensions in the shape.
        found: usize,
        /// The limit (64, NumPy's `NPY_MAXDIMS`).
        max: usize,
    },

    /// Element count or byte size does not fit the address space (NumPy would
    /// wrap around silently; we refuse).
    #[error(
        "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum \
         possible size (shape {shape} with itemsize {itemsize})"
    )]
    ArrayTooBig {
        /// The shape, as a Python tuple.
        shape: String,
        /// Bytes per element (saturated at `usize::MAX`).
        itemsize: usize,
    },

    /// The header text is too long for the requested version.
    #[error("Header length {length} too big for version={version}")]
    HeaderTooLongForVersion {
        /// Length of the dict text plus the newline, without alignment padding.
        length: usize,
        /// The version asked for, as NumPy prints it (`(1, 0)`).
        version: &'static str,
    },

    /// The header needs characters above U+00FF, which only version 3.0 can hold.
    #[error(
        "'latin-1' codec can't encode the header for version={version}: \
         it holds characters above U+00FF; use version 3.0"
    )]
    HeaderNotLatin1 {
        /// The version asked for, as NumPy prints it (`(1, 0)`).
        version: &'static str,
    },

    /// A record whose fields overlap or are out of order cannot be written.
    #[error("dtype.descr is not defined for types with overlapping or out-of-order fields")]
    UnwritableRecord,

    // data side: typed views, element decoding and streaming (view.rs, element.rs, record.rs, value.rs, io.rs)
    /// The element type asked for does not describe the data's dtype.
    #[error(
        "cannot view {found} data as {requested} ({rust_type}){}",
        byte_order_hint(found, requested)
    )]
    TypeMismatch {
        /// The dtype of the data.
        found: Box<crate::dtype::DType>,
        /// The dtype the requested Rust type is written as.
        requested: Box<crate::dtype::DType>,
        /// The requested Rust type.
        rust_type: &'static str,
    },
    /// The bytes are not aligned for a native element type.
    #[error(
        "cannot view data at address {address:#x} as {rust_type}: it needs {align}-byte alignment; \
         use an alignment-1 type from zerocopy::byteorder or copy the data into an aligned buffer"
    )]
    Misaligned {
        /// The requested Rust type.
        rust_type: &'static str,
        /// The alignment that type requires.
        align: usize,
        /// Address of the first data byte.
        address: usize,
    },
    /// An element's bytes are not a valid value of the requested type (a bool byte other than 0 or 1).
    #[error(
        "element {index} is not a valid {rust_type} (bool data must be 0 or 1; \
         npy_core::Bool reads any byte, nonzero = true)"
    )]
    InvalidElement {
        /// The requested Rust type.
        rust_type: &'static str,
        /// Index in memory order of the first invalid element.
        index: usize,
    },
    /// The header describes more data than the reader allows.
    #[error(
        "the array data is {len} bytes, more than the {max} bytes allowed \
         (ReadOptions::max_data_len)"
    )]
    DataTooLarge {
        /// Bytes of data the header describes.
        len: usize,
        /// The limit.
        max: usize,
    },

    /// The data does not have the number of bytes the header describes.
    #[error("array data has {actual} bytes, but the header describes {expected}")]
    DataLength {
        /// Bytes the header describes.
        expected: usize,
        /// Bytes given or written.
        actual: usize,
    },
    /// A range that ends past the axis it slices.
    #[error("range {start}..{end} is out of bounds for axis {axis} with size {len}")]
    RangeOutOfBounds {
        /// First index asked for.
        start: usize,
        /// One past the last index asked for.
        end: usize,
        /// The axis sliced.
        axis: usize,
        /// Length of that axis.
        len: usize,
    },
    /// A range whose start is past its end (`3..1`).
    #[error("range {start}..{end} is reversed: its start is past its end")]
    ReversedRange {
        /// First index asked for.
        start: usize,
        /// One past the last index asked for.
        end: usize,
    },
    /// An index with a number of entries other than the array's dimensions
    /// (or a 0-d array sliced along an axis it does not have).
    #[error("an index into a {ndim}-dimensional array needs {ndim} entries, not {given}")]
    IndexRank {
        /// Dimensions of the array.
        ndim: usize,
        /// Entries in the index.
        given: usize,
    },
    /// An output buffer whose length does not fit what is read into it.
    #[error("the output holds {actual} elements, but {expected} are read into it")]
    OutputLength {
        /// Elements read.
        expected: usize,
        /// Elements the buffer holds.
        actual: usize,
    },
    /// A headerless file (numpy's `np.memmap` arguments) that cannot hold
    /// the array asked for, in numpy's words where it has them.
    #[error("{reason}")]
    Headerless {
        /// What is wrong ("Size of available data is not a multiple of the
        /// data-type size.", "mmap offset is greater than file size", ...).
        reason: &'static str,
    },
    /// An index entry past the length of its axis (numpy's wording).
    #[error("index {index} is out of bounds for axis {axis} with size {len}")]
    IndexOutOfBounds {
        /// The index entry.
        index: usize,
        /// The axis it indexes.
        axis: usize,
        /// Length of that axis.
        len: usize,
    },
    /// A stream ended before all the data the header describes.
    #[error(
        "Failed to read all data for array. Expected {shape} = {count} elements, \
         could only read {read} elements. (file seems not fully written?)"
    )]
    TruncatedData {
        /// The array's shape, as a Python tuple.
        shape: String,
        /// Elements the header describes.
        count: usize,
        /// Whole elements that arrived.
        read: usize,
    },
}

impl Error {
    /// NumPy's "Failed to read all data" error for an array of `header`
    /// when only `bytes_available` bytes of its data exist.
    pub fn truncated_data(header: &crate::header::Header, bytes_available: usize) -> Error {
        Error::TruncatedData {
            shape: crate::pyrepr::shape_repr(&header.shape),
            count: header.element_count().unwrap_or(0),
            read: bytes_available
                .checked_div(header.dtype.itemsize())
                .unwrap_or(0),
        }
    }
}

/// What to do when data differs from the requested type only in byte order:
/// name the `zerocopy::byteorder` element type that reads it in place, or
/// (for types without one) the conversion.
fn byte_order_hint(found: &crate::dtype::DType, requested: &crate::dtype::DType) -> String {
    use crate::dtype::{ByteOrder, DType, ScalarKind};
    let (DType::Scalar(found), DType::Scalar(requested)) = (found, requested) else {
        return String::new();
    };
    if found.kind != requested.kind
        || found.itemsize != requested.itemsize
        || found.byte_order == requested.byte_order
    {
        return String::new();
    }
    let prefix = match (found.kind, found.itemsize) {
        (ScalarKind::Int, 2 | 4 | 8) => "I",
        (ScalarKind::UInt, 2 | 4 | 8) => "U",
        (ScalarKind::Float, 4 | 8) => "F",
        _ => {
            return "; convert it to native byte order first (ReadOptions::to_native, \
                    NpyArray::convert_byte_order)"
                .to_owned();
        }
    };
    let order = match found.byte_order {
        ByteOrder::Big => "BigEndian",
        _ => "LittleEndian",
    };
    format!(
        "; the data is {order}: view it as zerocopy::byteorder::{prefix}{}<{order}> \
         (any alignment, no copy), or convert it to native byte order first \
         (ReadOptions::to_native, NpyArray::convert_byte_order)",
        found.itemsize * 8
    )
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Characters of header text an error message quotes; the rest is summarised.
/// A header may be megabytes long (`max_header_size` can be raised), and a
/// message that repeats it helps nobody.
pub(crate) const QUOTE_LIMIT: usize = 200;

/// `text` if it is short, else its first [`QUOTE_LIMIT`] characters and a
/// note of how long it was: the one place messages are kept readable.
fn quoted(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(QUOTE_LIMIT) {
        None => text.into(),
        Some((cut, _)) => format!(
            "{}... ({} characters in all)",
            &text[..cut],
            text.chars().count()
        )
        .into(),
    }
}

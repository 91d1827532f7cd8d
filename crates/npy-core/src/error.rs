//! The one error type of the crate.
//!
//! Messages follow NumPy's wording where NumPy has one, so that a user who
//! searches for the text finds the same explanation for both libraries.

/// Everything that can go wrong while reading, checking or writing `.npy` data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An underlying read or write failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),

    // data side: typed views, element decoding and streaming (view.rs, element.rs, record.rs, value.rs, io.rs)
    /// The element type asked for does not describe the data's dtype.
    #[error("cannot view '{}' data as '{}' ({rust_type})", found.descr(), requested.descr())]
    TypeMismatch {
        /// The dtype of the data.
        found: Box<crate::DType>,
        /// The dtype the requested Rust type is written as.
        requested: Box<crate::DType>,
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
    /// The data does not have the number of bytes the header describes.
    #[error("array data has {actual} bytes, but the header describes {expected}")]
    DataLength {
        /// Bytes the header describes.
        expected: usize,
        /// Bytes given or written.
        actual: usize,
    },
    /// A shape's element or byte count does not fit in `usize`.
    #[error(
        "array of shape {shape:?} with {itemsize}-byte elements is too large for this platform"
    )]
    SizeOverflow {
        /// The (logical) shape.
        shape: Vec<usize>,
        /// Bytes per element.
        itemsize: usize,
    },
    /// A row range outside axis 0 (or a 0-d array, which has no rows).
    #[error("rows {start}..{end} are out of range for an axis 0 of length {len}")]
    RowsOutOfRange {
        /// First row asked for.
        start: usize,
        /// One past the last row asked for.
        end: usize,
        /// Length of axis 0 (0 for a 0-d array).
        len: usize,
    },
    /// A stream ended before all the data the header describes.
    #[error(
        "Failed to read all data for array. Expected {} = {count} elements, \
         could only read {read} elements. (file seems not fully written?)",
        crate::io::python_shape(shape)
    )]
    TruncatedData {
        /// The array's shape.
        shape: Vec<usize>,
        /// Elements the header describes.
        count: usize,
        /// Whole elements that arrived.
        read: usize,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

//! The error type of the npz module.

use std::io;

/// Everything that can go wrong while reading or writing an `.npz` archive.
///
/// Messages follow NumPy's wording where NumPy has one (`"x is not a file in
/// the archive"`, `"Bad CRC-32 for file 'x.npy'"`, `"File is not a zip
/// file"`), and every error about one member names that member.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NpzError {
    /// An underlying read or write failed.
    #[error(transparent)]
    Io(#[from] io::Error),

    /// Opening, locking or mapping the archive file failed.
    #[error(transparent)]
    File(#[from] crate::Error),

    /// The archive itself (its central directory) could not be read.
    #[error("File is not a zip file: {0}")]
    NotAZip(#[source] zip::result::ZipError),

    /// The zip layer failed on one member (unsupported method, bad local header, ...).
    #[error("member '{member}': {source}")]
    Zip {
        /// The member's name in the archive.
        member: String,
        /// What the zip layer reported.
        #[source]
        source: zip::result::ZipError,
    },

    /// No member has this name, with or without the `.npy` suffix.
    #[error("{key} is not a file in the archive")]
    NotAFile {
        /// The key that was looked up.
        key: String,
    },

    /// The member's data does not match the CRC-32 stored in the archive.
    #[error("Bad CRC-32 for file '{member}'")]
    BadCrc {
        /// The member's name in the archive.
        member: String,
    },

    /// The member holds `.npy` data that npy-core rejected (bad header,
    /// object dtype, truncated data, ...).
    #[error("member '{member}': {source}")]
    Npy {
        /// The member's name in the archive.
        member: String,
        /// What npy-core reported.
        #[source]
        source: npy_core::Error,
    },

    /// An array was asked for, but the member does not start with the `.npy` magic.
    #[error(
        "member '{member}' is not .npy data (it does not start with \\x93NUMPY); read it as raw bytes"
    )]
    NotNpy {
        /// The member's name in the archive.
        member: String,
    },

    /// Only stored (uncompressed) members can be mapped.
    #[error(
        "member '{member}' is compressed ({method}) and cannot be mapped; load it into memory instead"
    )]
    Compressed {
        /// The member's name in the archive.
        member: String,
        /// The member's compression method, as the zip layer names it.
        method: String,
    },

    /// The member's array data is not aligned for its element type.
    #[error(
        "member '{member}': array data at archive offset {offset} is not aligned to {align} bytes; \
         use an unaligned view (endian-explicit, alignment-1 element types) or load it"
    )]
    Misaligned {
        /// The member's name in the archive.
        member: String,
        /// Offset of the array data in the archive file.
        offset: u64,
        /// The alignment the element type needs.
        align: usize,
    },

    /// The member's data does not lie inside the archive (truncated or lying sizes).
    #[error("member '{member}': {detail}")]
    Corrupt {
        /// The member's name in the archive.
        member: String,
        /// What is wrong.
        detail: String,
    },

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

    /// The data given for a member does not have the length its header promises.
    #[error("member '{member}': the header promises {expected} data bytes but {actual} were given")]
    LengthMismatch {
        /// The member name.
        member: String,
        /// Bytes the header promises.
        expected: u64,
        /// Bytes supplied.
        actual: u64,
    },

    /// A header could not be encoded (npy-core refused it).
    #[error(transparent)]
    Header(npy_core::Error),
}

/// `Result` with [`NpzError`].
pub type Result<T, E = NpzError> = std::result::Result<T, E>;

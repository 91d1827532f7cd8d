//! What an `.npz` archive says about its members, and numpy's naming rule
//! for them. No zip is read here: npy-mmap reads local archives and
//! npy-remote archives in object stores, and both describe members with
//! these types (one definition, one rule).
//!
//! ```
//! use npy_core::npz::{key_for, member_name};
//!
//! assert_eq!(member_name("weights"), "weights.npy"); // np.savez(f, weights=...)
//! assert_eq!(key_for("weights.npy"), "weights");     // NpzFile.files
//! assert_eq!(key_for("notes.txt"), "notes.txt");     // not an array: kept
//! ```

/// How a member's bytes are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemberCompression {
    /// Stored as is (`np.savez`): such members can be mapped and read by range.
    Stored,
    /// Deflate-compressed (`np.savez_compressed`).
    Deflated,
    /// Another zip method, by its number in the zip format.
    Other(u16),
}

impl MemberCompression {
    /// The compression of zip method number `method` (0 stored, 8 deflated).
    pub fn from_method(method: u16) -> MemberCompression {
        match method {
            0 => MemberCompression::Stored,
            8 => MemberCompression::Deflated,
            other => MemberCompression::Other(other),
        }
    }

    /// The method's number in the zip format (0 stored, 8 deflated).
    pub fn method(self) -> u16 {
        match self {
            MemberCompression::Stored => 0,
            MemberCompression::Deflated => 8,
            MemberCompression::Other(method) => method,
        }
    }

    /// The compression a central directory file header records (its
    /// method number, at byte 10), or `None` when `header` does not start
    /// with one (`PK\x01\x02` and the 46 bytes of its fixed part).
    ///
    /// Both readers take a member's compression from these bytes: the zip
    /// crate they parse the directory with names methods it was not built
    /// for only through a deprecated conversion, and this is one rule for both.
    ///
    /// ```
    /// use npy_core::npz::MemberCompression;
    ///
    /// let mut header = [0u8; 46];
    /// header[..4].copy_from_slice(b"PK\x01\x02");
    /// header[10] = 12; // bzip2
    /// assert_eq!(MemberCompression::from_central_header(&header), Some(MemberCompression::Other(12)));
    /// assert_eq!(MemberCompression::from_central_header(b"PK\x03\x04"), None);
    /// ```
    pub fn from_central_header(header: &[u8]) -> Option<MemberCompression> {
        if header.len() < CENTRAL_HEADER_LEN || !header.starts_with(CENTRAL_HEADER_SIGNATURE) {
            return None;
        }
        Some(MemberCompression::from_method(u16::from_le_bytes([
            header[10], header[11],
        ])))
    }
}

/// Bytes in the fixed part of a central directory file header (before the name).
pub const CENTRAL_HEADER_LEN: usize = 46;

/// The signature a central directory file header starts with.
const CENTRAL_HEADER_SIGNATURE: &[u8; 4] = b"PK\x01\x02";

/// What is wrong with an `.npz` archive or one of its members: the kinds
/// npy-mmap's reader of local archives and npy-remote's reader of archives
/// in object storage both report, so that a caller matches one thing for a
/// file and for an object (`npy_mmap::ErrorKind::Archive`,
/// `npy_remote::ErrorKind::Archive`). The archive's path and the member
/// are the reader's error's (its `path()` and `member()`).
///
/// Messages are numpy's, and Python's `zipfile`'s where numpy leaves the
/// archive to it.
///
/// ```
/// use npy_core::npz::ArchiveError;
///
/// let missing = ArchiveError::NotAFile { key: "weights".into() };
/// assert_eq!(missing.to_string(), "weights is not a file in the archive"); // numpy's KeyError
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArchiveError {
    /// The archive is not a zip file: it does not start like one, or its
    /// end records (zip64 ones too) or central directory are missing,
    /// truncated or damaged (`zipfile.BadZipFile`'s wording).
    #[error("File is not a zip file: {detail}")]
    NotAZip {
        /// What the reader found.
        detail: String,
    },

    /// The central directory is larger than the reader accepts (the
    /// archive says how large it is, and that is not trusted unbounded).
    #[error("the central directory and end records are {len} bytes, more than the limit of {max}")]
    DirectoryTooLarge {
        /// Bytes of the directory and end records.
        len: u64,
        /// The limit.
        max: u64,
    },

    /// No member has this name, with or without the `.npy` suffix (numpy's
    /// `KeyError`).
    #[error("{key} is not a file in the archive")]
    NotAFile {
        /// The key that was looked up.
        key: String,
    },

    /// The member is encrypted (`zipfile`'s wording; numpy has no password).
    #[error("File '{member}' is encrypted, password required for extraction")]
    Encrypted {
        /// The member's name in the archive.
        member: String,
    },

    /// The member is compressed with a method other than stored or
    /// deflated, the two `np.savez` and `np.savez_compressed` write.
    #[error(
        "That compression method is not supported: zip method {method} \
         (stored and deflated members are read)"
    )]
    UnsupportedCompression {
        /// The method's number in the zip format.
        method: u16,
    },

    /// A compressed member where a stored one is needed: only a stored
    /// member's bytes can be mapped, borrowed or read by range.
    #[error(
        "compressed ({compression:?}): only a stored member can be mapped or read by range; \
         load it into memory instead"
    )]
    Compressed {
        /// How the member is stored.
        compression: MemberCompression,
    },

    /// The member's content does not match the CRC-32 the archive records.
    #[error("Bad CRC-32 for file '{member}'")]
    BadCrc {
        /// The member's name in the archive.
        member: String,
    },

    /// A member name longer than a zip entry's name can be (its length is
    /// a 16-bit field): refused before anything is written.
    #[error("a member name is at most 65535 bytes in a zip archive, not {len}")]
    NameTooLong {
        /// The name's length in bytes (UTF-8).
        len: usize,
    },

    /// The member is damaged: its local header is missing or disagrees
    /// with the central directory, its data lies outside the archive or
    /// overlaps another member's, its sizes lie, or its compressed data
    /// does not inflate.
    #[error("{detail}")]
    Corrupt {
        /// What is wrong.
        detail: String,
    },
}

impl ArchiveError {
    /// Whether the message names the member already (zipfile's wording
    /// does), so that an error that adds the member does not say it twice.
    pub fn names_member(&self) -> bool {
        matches!(
            self,
            ArchiveError::Encrypted { .. } | ArchiveError::BadCrc { .. }
        )
    }
}

/// What the central directory says about one member (nothing is read to get it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberInfo {
    /// The full member name, e.g. `x.npy` or `group/y.npy`.
    pub name: String,
    /// The key numpy lists for it: the name with one trailing `.npy`
    /// removed ([`key_for`]).
    pub key: String,
    /// How the member's bytes are stored.
    pub compression: MemberCompression,
    /// Size of the member's bytes in the archive.
    pub compressed_size: u64,
    /// Size of the member's content (the `.npy` file it holds).
    pub size: u64,
    /// CRC-32 of the content, as recorded in the archive.
    pub crc32: u32,
    /// Offset of the member's local header in the archive.
    pub header_offset: u64,
}

impl MemberInfo {
    /// Checks that `range` is a range of the member's content bytes (of
    /// the `.npy` file it holds): [`ArchiveError::Corrupt`] when it is
    /// reversed or ends past them.
    pub fn check_content_range(&self, range: &std::ops::Range<u64>) -> Result<(), ArchiveError> {
        if range.start > range.end || range.end > self.size {
            return Err(ArchiveError::Corrupt {
                detail: format!(
                    "content bytes {range:?} asked for, it holds {} bytes",
                    self.size
                ),
            });
        }
        Ok(())
    }
}

/// numpy's key for a member name (`NpzFile.files`): one trailing `.npy` removed.
pub fn key_for(name: &str) -> &str {
    name.strip_suffix(".npy").unwrap_or(name)
}

/// The member name `np.savez` gives the array `key`.
pub fn member_name(key: &str) -> String {
    format!("{key}.npy")
}

/// Whether a file starting with `start` is a zip archive (an `.npz`), by
/// `np.load`'s test: a local file header (`PK\x03\x04`) or, for an empty
/// archive, the end-of-central-directory record (`PK\x05\x06`) at its very
/// start. The one rule of what a file is: a zip after a prefix (a
/// self-extracting archive) is not an `.npz`, and an `.npy` file with a zip
/// appended is an `.npy` file (with trailing bytes).
///
/// ```
/// use npy_core::npz::is_zip_start;
///
/// assert!(is_zip_start(b"PK\x03\x04\x14\x00"));
/// assert!(is_zip_start(b"PK\x05\x06"));
/// assert!(!is_zip_start(b"\x93NUMPY\x01\x00"));
/// assert!(!is_zip_start(b"#!/bin/sh\nPK\x03\x04"));
/// ```
pub fn is_zip_start(start: &[u8]) -> bool {
    start.starts_with(b"PK\x03\x04") || start.starts_with(b"PK\x05\x06")
}

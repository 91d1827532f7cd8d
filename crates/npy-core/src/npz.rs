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

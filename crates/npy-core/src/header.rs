//! The `.npy` header: preamble (magic, version, length) and the dict text.

use crate::{DType, Result};

/// Memory order of the array data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Order {
    /// Row-major (`fortran_order: False`).
    #[default]
    C,
    /// Column-major (`fortran_order: True`).
    Fortran,
}

/// A format version NumPy reads: 1.0, 2.0 or 3.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// 1.0: u16 header length, latin-1 text.
    V1,
    /// 2.0: u32 header length, latin-1 text.
    V2,
    /// 3.0: u32 header length, UTF-8 text.
    V3,
}

/// Limits applied while parsing a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// Largest header (in characters, like NumPy) accepted. Default 10000.
    pub max_header_size: usize,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            max_header_size: 10_000,
        }
    }
}

/// The fixed-size start of a file: magic, version and header length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preamble {
    /// The format version.
    pub version: Version,
    /// Length of the header text in bytes, as the length field says.
    pub header_len: usize,
}

/// The parsed header dict: what the array is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Header {
    /// The element type.
    pub dtype: DType,
    /// Memory order of the data.
    pub order: Order,
    /// The shape; empty for a 0-d array.
    pub shape: Vec<usize>,
}

/// Where things are in a parsed file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The version the file was written with.
    pub version: Version,
    /// Length of the header text (after the length field), in bytes.
    pub header_len: usize,
    /// Byte offset of the first data byte.
    pub data_offset: usize,
    /// Number of data bytes the header promises (checked arithmetic).
    pub data_len: usize,
}

impl Header {
    /// Parses the whole header from the start of `bytes` (a file prefix that
    /// holds at least the preamble and header text; data may follow).
    pub fn parse(bytes: &[u8], options: &ParseOptions) -> Result<(Header, Layout)> {
        let _ = (bytes, options);
        todo!()
    }
}

impl Header {
    /// Reads the preamble and header from a stream, leaving it at the first data byte.
    pub fn read_from<R: std::io::Read>(
        reader: &mut R,
        options: &ParseOptions,
    ) -> Result<(Header, Layout)> {
        let _ = (reader, options);
        todo!()
    }

    /// Encodes the header exactly as `np.save` would write it: preamble, dict
    /// text, growth padding, 64-byte alignment. `None` picks the version like
    /// NumPy does (1.0, else 2.0 when too long, 3.0 when the text needs UTF-8).
    pub fn to_bytes(&self, version: Option<Version>) -> Result<Vec<u8>> {
        let _ = version;
        todo!()
    }

    /// Number of elements (product of the shape; 1 for 0-d), checked.
    pub fn element_count(&self) -> Result<usize> {
        todo!()
    }

    /// Number of data bytes (element count × itemsize), checked to fit `isize`.
    pub fn data_len(&self) -> Result<usize> {
        todo!()
    }
}

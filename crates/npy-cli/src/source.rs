//! Opening what the user names: an `.npy` file or an `.npz` archive.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use anyhow::Context;
use npy_core::{Header, Layout, ParseOptions};

/// Header limit for the inspecting commands: the user asked for this file,
/// so numpy's 10000-character guard (kept by `validate`) would only get in
/// the way of numpy's own v2 files; the limit still bounds the allocation.
pub const INSPECT_MAX_HEADER: usize = 1 << 24;

/// The kind of file, from its first bytes (as `np.load` decides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Npy,
    Npz,
}

/// Looks at the first bytes: a zip local header or empty-zip end record is an npz.
pub fn sniff(path: &Path) -> anyhow::Result<Kind> {
    let mut file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut start = [0u8; 4];
    let mut filled = 0;
    while filled < start.len() {
        let n = file
            .read(&mut start[filled..])
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(match &start[..filled] {
        b"PK\x03\x04" | b"PK\x05\x06" => Kind::Npz,
        _ => Kind::Npy,
    })
}

/// An `.npy` file whose header has been parsed; the data is not read.
pub struct NpyFile {
    pub header: Header,
    pub layout: Layout,
    pub file_size: u64,
}

impl NpyFile {
    /// Opens `path` and parses its header with `options`.
    pub fn open(path: &Path, options: &ParseOptions) -> anyhow::Result<NpyFile> {
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let file_size = file
            .metadata()
            .with_context(|| format!("cannot read {}", path.display()))?
            .len();
        let (header, layout) = Header::read_from(&mut BufReader::new(file), options)
            .with_context(|| format!("{} is not a valid .npy file", path.display()))?;
        Ok(NpyFile {
            header,
            layout,
            file_size,
        })
    }

    /// Bytes the file has beyond the data (negative: bytes missing).
    pub fn surplus(&self) -> i128 {
        i128::from(self.file_size) - self.layout.data_offset as i128 - self.layout.data_len as i128
    }
}

/// An array opened for reading its values: the header and the data bytes
/// (a read-only mapping of an .npy file, or an npz member in memory).
pub struct OpenedArray {
    pub header: Header,
    data: Data,
}

enum Data {
    Mapped(npy_mmap::MappedArray<npy_mmap::ReadOnly>),
    Owned(npy_core::io::AlignedBytes),
}

impl OpenedArray {
    /// Maps the .npy file at `path` read-only (refusing files shorter than
    /// their header promises); `advice` tells the kernel how it will be read.
    pub fn map(path: &Path, advice: npy_mmap::Advice) -> anyhow::Result<OpenedArray> {
        let mapped = npy_mmap::OpenOptions::new()
            .max_header_size(INSPECT_MAX_HEADER)
            .advice(advice)
            .open::<npy_mmap::ReadOnly>(path)?;
        Ok(OpenedArray {
            header: mapped.header().clone(),
            data: Data::Mapped(mapped),
        })
    }

    /// An array whose data is already in memory (exactly `header.data_len()` bytes).
    pub fn owned(header: Header, data: npy_core::io::AlignedBytes) -> OpenedArray {
        OpenedArray {
            header,
            data: Data::Owned(data),
        }
    }

    /// The data bytes, in the header's memory order.
    pub fn data(&self) -> &[u8] {
        match &self.data {
            Data::Mapped(mapped) => mapped.bytes(),
            Data::Owned(bytes) => bytes,
        }
    }
}

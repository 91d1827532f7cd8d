//! Opening what the user names: an `.npy` file or an `.npz` archive.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

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
    pub path: PathBuf,
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
            path: path.to_path_buf(),
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

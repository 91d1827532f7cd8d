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

/// Random access to an array's data bytes, wherever they live.
pub trait DataBytes {
    /// Fills `buf` from data offset `offset` (relative to the first data byte).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> anyhow::Result<()>;
}

/// Data read straight from the file with positioned reads: showing a few
/// elements of a huge file touches only their pages.
pub struct FileData {
    file: File,
    data_offset: u64,
}

impl NpyFile {
    /// The data of this file, for positioned reads.
    pub fn data(&self) -> anyhow::Result<FileData> {
        let file = File::open(&self.path)
            .with_context(|| format!("cannot open {}", self.path.display()))?;
        Ok(FileData {
            file,
            data_offset: self.layout.data_offset as u64,
        })
    }
}

impl DataBytes for FileData {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> anyhow::Result<()> {
        use std::os::unix::fs::FileExt;
        self.file
            .read_exact_at(buf, self.data_offset + offset)
            .context("the file ends before the data the header promises")
    }
}

impl DataBytes for [u8] {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> anyhow::Result<()> {
        let start = usize::try_from(offset).ok();
        let bytes = start
            .and_then(|s| s.checked_add(buf.len()).map(|e| (s, e)))
            .and_then(|(s, e)| self.get(s..e))
            .context("the data ends before the elements the header promises")?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}

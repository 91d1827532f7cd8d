//! What the inspecting commands know of a file before its data: its kind
//! and its header. The bottom of the CLI's reading rooms: the local and the
//! remote readers (`source`, `remote`) both build these.

use std::io::BufReader;
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

/// An `.npy` file whose header has been parsed; the data is not read.
pub struct NpyFile {
    pub header: Header,
    pub layout: Layout,
    pub file_size: u64,
}

impl NpyFile {
    /// Parses the header of `file` (open on `path`), which the caller has
    /// locked, or writes itself (an `AtomicFile`'s temporary).
    pub fn read(
        file: std::fs::File,
        path: &Path,
        options: &ParseOptions,
    ) -> anyhow::Result<NpyFile> {
        let file_size = file
            .metadata()
            .with_context(|| format!("cannot read {}", path.display()))?
            .len();
        let npy_core::ParsedHeader { header, layout } =
            Header::read_from(&mut BufReader::new(file), options)
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

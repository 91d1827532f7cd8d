//! Random access to deflated members through their block index: a byte
//! range or a row range inflates only the blocks it covers, a whole member
//! inflates block-parallel on every core.

use std::io::{Read, Seek};
use std::ops::Range;
use std::sync::Arc;

use npy_core::io::AlignedBytes;
use npy_core::npz::{ArchiveError, MemberCompression};
use npy_core::{ByteOrder, NpyArray, ParsedHeader};

use super::NpzArchive;
use crate::error::{Error, ErrorKind, Result};
use crate::load::DataMemory;
use crate::npz::blocks::BlockIndex;
use crate::npz::checkpoint::{self, BuildError};

impl<R: Read + Seek> NpzArchive<R> {
    /// The block index of a deflated member, `None` for a stored one (read
    /// in place). The index our writer recorded is checked against the
    /// central directory (sizes, CRC-32) and used when it passes; otherwise
    /// (another writer's member, a forged or broken index) one sequential
    /// pass over the member builds checkpoints, its CRC-32 checked, kept for
    /// the archive's life.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use npy_mmap::npz::{Compression, NpzArchive, NpzWriter};
    ///
    /// let data: Vec<f64> = (0..400_000).map(|i| (i % 1000) as f64).collect();
    /// let mut writer = NpzWriter::new(Cursor::new(Vec::new()))?;
    /// writer.set_compression(Compression::DEFLATED)?;
    /// writer.add("x", &data[..])?;
    /// let bytes = writer.into_inner()?.into_inner();
    ///
    /// let mut archive = NpzArchive::from_bytes(&bytes)?;
    /// let index = archive.block_index("x")?.expect("a deflated member");
    /// assert!(index.is_written() && index.len() == 4); // 3.2 MB in 1 MiB blocks
    /// let rows = archive.read_rows("x", 250_000..250_010)?;
    /// assert_eq!(rows.view::<f64>()?.to_vec(), &data[250_000..250_010]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn block_index(&mut self, key: &str) -> Result<Option<Arc<BlockIndex>>> {
        let index = self.resolve(key)?;
        self.index_of_member(index)
    }

    /// The block index of a deflated member if it is at hand without a
    /// pass over the member: the one our writer recorded (checked), one
    /// loaded from a sidecar ([`load_index`](Self::load_index)) or built
    /// before. `None` for a stored member or when only a pass would give one.
    pub fn cached_block_index(&mut self, key: &str) -> Result<Option<Arc<BlockIndex>>> {
        let index = self.resolve(key)?;
        if self.compressions[index] != MemberCompression::Deflated {
            return Ok(None);
        }
        if let Some(found) = self.known_index(index) {
            return Ok(Some(found));
        }
        self.try_sidecar();
        Ok(self.indexes.get(&index).cloned())
    }

    /// The index of member `index`, checked or built (see [`block_index`](Self::block_index)).
    pub(crate) fn index_of_member(&mut self, index: usize) -> Result<Option<Arc<BlockIndex>>> {
        match self.compressions[index] {
            MemberCompression::Stored => return Ok(None),
            MemberCompression::Deflated => {}
            compression => {
                return Err(self.member_error(
                    index,
                    ErrorKind::Archive(ArchiveError::UnsupportedCompression {
                        method: compression.method(),
                    }),
                ));
            }
        }
        if let Some(found) = self.known_index(index) {
            return Ok(Some(found));
        }
        self.try_sidecar();
        if let Some(found) = self.indexes.get(&index) {
            return Ok(Some(found.clone()));
        }
        let (start, info) = self.data_start(index)?;
        let mut input = self.raw.clone();
        input
            .seek(std::io::SeekFrom::Start(start))
            .map_err(|source| self.io(index, source))?;
        let built = checkpoint::build(
            &mut input,
            info.compressed_size,
            info.size,
            info.crc32,
            crate::npz::CHECKPOINT_SPAN,
        );
        let built = built.map_err(|error| match error {
            BuildError::Io(source) => self.io(index, source),
            BuildError::Data(ArchiveError::BadCrc { .. }) => self.member_error(
                index,
                ErrorKind::Archive(ArchiveError::BadCrc {
                    member: self.names[index].clone(),
                }),
            ),
            BuildError::Data(kind) => self.member_error(index, ErrorKind::Archive(kind)),
        })?;
        let built = Arc::new(built);
        self.indexes.insert(index, built.clone());
        Ok(Some(built))
    }

    /// The index of member `index` if it is at hand without a pass over the
    /// member: built before, or written and checked now.
    pub(crate) fn known_index(&mut self, index: usize) -> Option<Arc<BlockIndex>> {
        if let Some(found) = self.indexes.get(&index) {
            return Some(found.clone());
        }
        if self.refused.contains(&index) {
            return None;
        }
        let payload = self.index_fields[index].as_deref()?;
        let entry = self.zip.by_index_data(index).ok()?;
        let (size, compressed_size, crc32) = (entry.size(), entry.compressed_size(), entry.crc32());
        match BlockIndex::from_extra_field(payload, size, compressed_size, crc32) {
            Ok(written) => {
                let written = Arc::new(written);
                self.indexes.insert(index, written.clone());
                Some(written)
            }
            Err(_) => {
                // A forged or stale index: the member is read without it.
                self.refused.insert(index);
                None
            }
        }
    }

    /// Where member `index`'s data starts in the archive, and its entry.
    fn data_start(&mut self, index: usize) -> Result<(u64, npy_core::npz::MemberInfo)> {
        let info = self.info(&self.names[index].clone())?;
        let start = match self.zip.by_index_raw(index) {
            Ok(file) => file.data_start().ok_or_else(|| {
                ErrorKind::Archive(ArchiveError::Corrupt {
                    detail: "the local header was not read".to_owned(),
                })
            }),
            Err(source) => Err(super::archive_kind(source, &self.names[index])),
        };
        let start = start.map_err(|kind| self.member_error(index, kind))?;
        Ok((start, info))
    }

    fn io(&self, index: usize, source: std::io::Error) -> Error {
        self.member_error(
            index,
            ErrorKind::Io {
                operation: "read",
                source,
            },
        )
    }

    /// The content bytes `range` of a member (of the `.npy` file it holds,
    /// header included): read in place for a stored member; for a deflated
    /// one only the blocks covering it are read and inflated (on every core
    /// when there are several), each checked against its CRC-32. The first
    /// such read of a member without a written index builds its checkpoints
    /// ([`block_index`](Self::block_index)).
    ///
    /// Errors: a range past the member's content; a block that does not
    /// inflate to its recorded bytes (after a written index failed, the
    /// member's checkpoints are built and the read is tried again once).
    pub fn read_range(&mut self, key: &str, range: Range<u64>) -> Result<Vec<u8>> {
        let index = self.resolve(key)?;
        let mut out = vec![0u8; range.end.saturating_sub(range.start) as usize];
        self.read_range_into(index, range, &mut out)?;
        Ok(out)
    }

    /// [`read_range`](Self::read_range) of member `index` into `out`.
    pub(crate) fn read_range_into(
        &mut self,
        index: usize,
        range: Range<u64>,
        out: &mut [u8],
    ) -> Result<()> {
        let (start, info) = self.data_start(index)?;
        info.check_content_range(&range)
            .map_err(|kind| self.member_error(index, ErrorKind::Archive(kind)))?;
        let Some(blocks) = self.index_of_member(index)? else {
            // Stored: the content is the data.
            return self
                .raw
                .read_exact_at(start + range.start, out)
                .map_err(|source| self.io(index, source));
        };
        match self.inflate_with(index, &blocks, start, range.clone(), out) {
            Err(error) if blocks.is_written() => {
                // The written index does not hold: build checkpoints, once.
                drop(error);
                self.indexes.remove(&index);
                self.refused.insert(index);
                let built = self.index_of_member(index)?.unwrap_or(blocks);
                self.inflate_with(index, &built, start, range, out)
            }
            other => other,
        }
    }

    /// Reads the compressed bytes the blocks covering `range` need and
    /// inflates `range` into `out`.
    fn inflate_with(
        &self,
        index: usize,
        blocks: &BlockIndex,
        start: u64,
        range: Range<u64>,
        out: &mut [u8],
    ) -> Result<()> {
        let input = blocks.input_range(blocks.covering(range.clone()));
        let mut compressed = vec![0u8; (input.end - input.start) as usize];
        self.raw
            .read_exact_at(start + input.start, &mut compressed)
            .map_err(|source| self.io(index, source))?;
        blocks
            .inflate_range(range, &compressed, input.start, out)
            .map_err(|kind| self.member_error(index, ErrorKind::Archive(kind)))
    }

    /// Rows `rows` of an array member, along its row axis (axis 0 in C
    /// order, the last in Fortran order), as an array of their own: only
    /// the blocks holding them are inflated (see [`read_range`](Self::read_range)).
    pub fn read_rows(&mut self, key: &str, rows: Range<usize>) -> Result<NpyArray> {
        let index = self.resolve(key)?;
        let parsed = self.header(key)?;
        let (path, name) = (self.path.clone(), self.names[index].clone());
        let format = |error| {
            crate::error::format_error_kind("read", error)
                .in_member(&name)
                .located(path.as_deref())
        };
        if parsed.header.dtype.has_object() {
            return Err(format(npy_core::Error::ObjectData));
        }
        let (part, bytes) = parsed.rows_part(rows).map_err(format)?;
        let mut data = AlignedBytes::zeroed(part.layout.data_len);
        self.read_range_into(index, bytes, &mut data)?;
        let mut array = NpyArray::from_parts(part.header, part.layout, data).map_err(format)?;
        if self.options.to_native {
            array.convert_byte_order(ByteOrder::NATIVE);
        }
        Ok(array)
    }

    /// A whole deflated array member through its index, if it has one at
    /// hand: every block inflated on every core straight into the array's
    /// memory, each checked against its CRC-32 (together: the member's).
    /// `None` when the member is better read as a stream (no index yet,
    /// object arrays, a truncated member whose error the stream words).
    pub(crate) fn load_blocked(&mut self, index: usize) -> Result<Option<NpyArray>> {
        if self.compressions[index] != MemberCompression::Deflated {
            return Ok(None);
        }
        let Some(blocks) = self.known_index(index) else {
            return Ok(None);
        };
        // Not an array, or a bad header: the stream's path words the result.
        let Ok(ParsedHeader { header, layout }) = self.header(&self.names[index].clone()) else {
            return Ok(None);
        };
        let data_end = layout.data_offset as u64 + layout.data_len as u64;
        if header.dtype.has_object()
            || self.options.check_data_len(&layout).is_err()
            || data_end > blocks.size()
            || layout.data_len == 0
        {
            return Ok(None);
        }
        let (start, _) = self.data_start(index)?;
        let all = blocks.input_range(0..blocks.len());
        let mut compressed = vec![0u8; (all.end - all.start) as usize];
        self.raw
            .read_exact_at(start + all.start, &mut compressed)
            .map_err(|source| self.io(index, source))?;
        let mut memory =
            DataMemory::new(layout.data_len).map_err(|source| self.io(index, source))?;
        let data_range = layout.data_offset as u64..data_end;
        let inflated = blocks
            .inflate_range(data_range.clone(), &compressed, all.start, memory.as_mut())
            .and_then(|()| {
                // The blocks outside the data (a long header, bytes after
                // the array) are checked too: the whole member is read.
                let covered = blocks.covering(data_range);
                for i in (0..covered.start).chain(covered.end..blocks.len()) {
                    let output = blocks.block_output(i);
                    let mut scratch = vec![0u8; (output.end - output.start) as usize];
                    blocks.inflate_range(output, &compressed, all.start, &mut scratch)?;
                }
                Ok(())
            });
        if let Err(kind) = inflated {
            if blocks.is_written() {
                // Read as a stream instead (which checks the member's CRC).
                self.indexes.remove(&index);
                self.refused.insert(index);
                return Ok(None);
            }
            return Err(self.member_error(index, ErrorKind::Archive(kind)));
        }
        let data = memory.into_bytes();
        let format = |error| {
            self.located(
                crate::error::format_error_kind("read", error).in_member(&self.names[index]),
            )
        };
        let mut array = NpyArray::from_parts(header, layout, data).map_err(format)?;
        if self.options.to_native {
            array.convert_byte_order(ByteOrder::NATIVE);
        }
        Ok(Some(array))
    }
}

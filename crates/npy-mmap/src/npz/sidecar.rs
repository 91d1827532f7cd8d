//! The sidecar file of an archive's built block indexes (`<archive>.idx`):
//! checkpoints of deflated members another writer made, saved so that the
//! pass building them is paid once per archive, not once per process.
//!
//! Layout (little-endian; docs/FORMAT.md, "The index sidecar"):
//!
//! ```text
//! magic "NPZBLKS\0", version u32 = 1
//! archive length u64, CRC-32 of the archive's central directory u32
//! member count u32, then per member:
//!   name length u16, name, content size u64, compressed size u64, CRC-32 u32
//!   block count u32, then per block:
//!     compressed start u64, content start u64, CRC-32 u32, bits u8, bit_buf u8,
//!     window length u32, deflated window length u32, the window deflated
//! CRC-32 of everything before it u32
//! ```
//!
//! A sidecar is used only for the archive it was written for (same length
//! and central directory, which records every member's name, offset, sizes
//! and CRC-32) and each member's index must tile the member and combine
//! into its CRC-32 again: a stale or foreign sidecar is refused.

use std::io::{Read, Write};
use std::sync::Arc;

use npy_core::npz::ArchiveError;

use super::blocks::{Block, BlockIndex, Entry, WINDOW, corrupt};

const MAGIC: &[u8; 8] = b"NPZBLKS\0";
const VERSION: u32 = 1;

/// The archive a sidecar belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    pub(crate) archive_len: u64,
    pub(crate) directory_crc: u32,
}

/// One member's saved index.
#[derive(Debug)]
pub(crate) struct Saved {
    pub(crate) name: String,
    pub(crate) index: BlockIndex,
}

/// The bytes of a sidecar holding `members`' built indexes.
pub(crate) fn encode(identity: Identity, members: &[(&str, &BlockIndex)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&identity.archive_len.to_le_bytes());
    out.extend_from_slice(&identity.directory_crc.to_le_bytes());
    out.extend_from_slice(&(members.len() as u32).to_le_bytes());
    for (name, index) in members {
        let name = &name.as_bytes()[..name.len().min(usize::from(u16::MAX))];
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(name);
        out.extend_from_slice(&index.size().to_le_bytes());
        out.extend_from_slice(&index.compressed_size().to_le_bytes());
        out.extend_from_slice(&index.crc32().to_le_bytes());
        out.extend_from_slice(&(index.len() as u32).to_le_bytes());
        for block in index.blocks() {
            out.extend_from_slice(&block.input.start.to_le_bytes());
            out.extend_from_slice(&block.output.start.to_le_bytes());
            out.extend_from_slice(&block.crc32.to_le_bytes());
            let (bits, bit_buf, window) = match &block.entry {
                Entry::Resume {
                    bits,
                    bit_buf,
                    window,
                } => (*bits, *bit_buf, &window[..]),
                Entry::Fresh => (0, 0, &[][..]),
            };
            out.push(bits);
            out.push(bit_buf);
            let mut encoder =
                flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
            // Writing to a Vec cannot fail.
            let packed = encoder
                .write_all(window)
                .and_then(|()| encoder.finish())
                .unwrap_or_default();
            out.extend_from_slice(&(window.len() as u32).to_le_bytes());
            out.extend_from_slice(&(packed.len() as u32).to_le_bytes());
            out.extend_from_slice(&packed);
        }
    }
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// A cursor over the sidecar's bytes whose reads past the end are errors.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ArchiveError> {
        if self.0.len() < n {
            return Err(refused("it ends early"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, ArchiveError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, ArchiveError> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().unwrap_or_default(),
        ))
    }
    fn u32(&mut self) -> Result<u32, ArchiveError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or_default(),
        ))
    }
    fn u64(&mut self) -> Result<u64, ArchiveError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or_default(),
        ))
    }
}

fn refused(why: &str) -> ArchiveError {
    corrupt(format!("its block index file is refused: {why}"))
}

/// Parses a sidecar written for the archive `identity` names (refusing
/// one for another archive or a damaged one); every member's index is
/// checked to tile its member and combine into its CRC-32.
pub(crate) fn decode(bytes: &[u8], identity: Identity) -> Result<Vec<Saved>, ArchiveError> {
    let Some((body, trailer)) = bytes.split_last_chunk::<4>() else {
        return Err(refused("it is too short"));
    };
    if crc32fast::hash(body) != u32::from_le_bytes(*trailer) {
        return Err(refused("its CRC-32 does not match (a damaged file)"));
    }
    let mut fields = Fields(body);
    if fields.take(8)? != MAGIC || fields.u32()? != VERSION {
        return Err(refused("it is not a version 1 index file"));
    }
    let found = Identity {
        archive_len: fields.u64()?,
        directory_crc: fields.u32()?,
    };
    if found != identity {
        return Err(refused(
            "it was written for another archive, or this one before it changed",
        ));
    }
    let count = fields.u32()?;
    let mut saved = Vec::new();
    for _ in 0..count {
        let name_len = usize::from(fields.u16()?);
        let name = String::from_utf8_lossy(fields.take(name_len)?).into_owned();
        let (size, compressed_size, crc32) = (fields.u64()?, fields.u64()?, fields.u32()?);
        let block_count = fields.u32()? as usize;
        // Each block takes at least 30 bytes: the count is bounded by them.
        if block_count > fields.0.len() / 30 {
            return Err(refused("it lists more blocks than it holds"));
        }
        let mut starts = Vec::with_capacity(block_count);
        for _ in 0..block_count {
            let (input, output, crc) = (fields.u64()?, fields.u64()?, fields.u32()?);
            let (bits, bit_buf) = (fields.u8()?, fields.u8()?);
            let window_len = fields.u32()? as usize;
            let packed_len = fields.u32()? as usize;
            let packed = fields.take(packed_len)?;
            if window_len > WINDOW {
                return Err(refused("a window is longer than deflate's 32 KiB"));
            }
            let mut window = Vec::with_capacity(window_len);
            let inflated = flate2::read::DeflateDecoder::new(packed)
                .take(window_len as u64 + 1)
                .read_to_end(&mut window);
            if inflated.is_err() || window.len() != window_len {
                return Err(refused("a window does not inflate to its length"));
            }
            starts.push((input, output, crc, bits, bit_buf, window));
        }
        let mut blocks: Vec<Block> = Vec::with_capacity(block_count);
        for (k, (input, output, crc, bits, bit_buf, window)) in starts.iter().cloned().enumerate() {
            let (input_end, output_end) = match starts.get(k + 1) {
                Some(next) => (next.0, next.1),
                None => (compressed_size, size),
            };
            blocks.push(Block {
                input: input..input_end,
                output: output..output_end,
                crc32: crc,
                entry: Entry::Resume {
                    bits,
                    bit_buf,
                    window: Arc::from(window),
                },
            });
        }
        let index = BlockIndex::from_blocks(size, compressed_size, crc32, blocks)?;
        saved.push(Saved { name, index });
    }
    if !fields.0.is_empty() {
        return Err(refused("it has bytes after its last member"));
    }
    Ok(saved)
}

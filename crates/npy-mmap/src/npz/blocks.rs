//! Restart points in a deflated member: where its one deflate stream can be
//! entered, so a byte range of the content inflates from the nearest point
//! before it instead of from the member's start.
//!
//! Two kinds of index, one type ([`BlockIndex`]):
//!
//! * **Written** by [`NpzWriter`](super::NpzWriter): the member was
//!   compressed in independent blocks (each with a fresh deflate state,
//!   ending byte-aligned), listed in a private extra field of its central
//!   directory entry (docs/FORMAT.md, "npz block index"). Any block inflates
//!   on its own.
//! * **Built** for members other writers made: one sequential inflate pass
//!   records a checkpoint at a deflate block boundary about every
//!   [`CHECKPOINT_SPAN`] bytes of content: the bit position and the 32 KiB
//!   of content before it (the window its back-references may reach), as
//!   zlib's `zran.c` does.
//!
//! Every block carries the CRC-32 of its content, checked whenever it is
//! inflated, and the CRCs of all blocks must combine into the member's
//! CRC-32: an index that does not describe its member is refused, and a
//! block that inflates to other bytes than recorded is an error, never
//! data.

use std::ops::Range;
use std::sync::Arc;

use npy_core::npz::ArchiveError;

use crate::threads::run_parallel;

/// The header ID of the extra field holding a written index ("NB", npz
/// blocks; not among the IDs APPNOTE 4.5/4.6 registers).
pub const EXTRA_FIELD_ID: u16 = 0x424e;
/// The version byte of the extra field's payload.
const EXTRA_VERSION: u8 = 1;
/// Bytes of the payload before the per-block entries.
const EXTRA_FIXED_LEN: usize = 10;
/// Bytes per block in the payload: compressed length and CRC-32.
const EXTRA_ENTRY_LEN: usize = 8;
/// Most entries a written index lists: with its header and a zip64 field
/// (28 bytes) the central directory's extra field stays under 64 KiB.
/// Longer members list every k-th block boundary (k blocks per entry).
pub(crate) const MAX_WRITTEN_BLOCKS: usize = 8000;
/// Content bytes between the checkpoints of a built index (zran's default).
pub const CHECKPOINT_SPAN: u64 = 1 << 20;
/// Deflate's window: the history a checkpoint keeps.
pub(crate) const WINDOW: usize = 32 * 1024;

/// Where a deflated member can be entered, and what each stretch of it
/// holds: the block index our writer records (independent blocks, listed in
/// the member's central directory entry, docs/FORMAT.md §5), or checkpoints
/// one pass over another writer's member built (zran-style: a bit position
/// and the 32 KiB window before it). Every block carries its CRC-32, checked
/// when it is inflated; together they combine into the member's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockIndex {
    size: u64,
    compressed_size: u64,
    crc32: u32,
    blocks: Vec<Block>,
    written: bool,
}

/// One stretch of a member's deflate stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Block {
    /// Its compressed bytes, from the member's first data byte.
    pub(crate) input: Range<u64>,
    /// The content bytes it inflates to.
    pub(crate) output: Range<u64>,
    /// CRC-32 of that content.
    pub(crate) crc32: u32,
    pub(crate) entry: Entry,
}

/// How inflating a block starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A fresh deflate state at a byte boundary (a written index).
    Fresh,
    /// A checkpoint: `bits` (0..=7) unread bits of the byte before the
    /// input, and the content before it that back-references may reach.
    Resume {
        bits: u8,
        bit_buf: u8,
        window: Arc<[u8]>,
    },
}

/// `detail` as the archive error an index problem is.
pub(crate) fn corrupt(detail: impl Into<String>) -> ArchiveError {
    ArchiveError::Corrupt {
        detail: detail.into(),
    }
}

/// The CRC-32 of `a` followed by `b` (`b_len` bytes).
pub(crate) fn crc_combine(a: u32, a_len: u64, b: u32, b_len: u64) -> u32 {
    let mut first = crc32fast::Hasher::new_with_initial_len(a, a_len);
    first.combine(&crc32fast::Hasher::new_with_initial_len(b, b_len));
    first.finalize()
}

/// The payload of the block-index field among a central directory entry's
/// extra fields, if it has one (a malformed list of fields ends the search).
pub fn find_extra_field(extra: &[u8]) -> Option<&[u8]> {
    let mut rest = extra;
    while rest.len() >= 4 {
        let id = u16::from_le_bytes([rest[0], rest[1]]);
        let len = usize::from(u16::from_le_bytes([rest[2], rest[3]]));
        let data = rest.get(4..4 + len)?;
        if id == EXTRA_FIELD_ID {
            return Some(data);
        }
        rest = &rest[4 + len..];
    }
    None
}

/// The whole extra field (header ID, length, payload) recording blocks of
/// `span` content bytes (the last may be shorter), each given as its
/// compressed length and CRC-32.
pub(crate) fn encode_extra_field(span: u64, blocks: &[(u64, u32)]) -> Option<Vec<u8>> {
    let span = u32::try_from(span).ok()?;
    let count = u32::try_from(blocks.len()).ok()?;
    let payload_len = EXTRA_FIXED_LEN + EXTRA_ENTRY_LEN * blocks.len();
    let mut field = Vec::with_capacity(4 + payload_len);
    field.extend_from_slice(&EXTRA_FIELD_ID.to_le_bytes());
    field.extend_from_slice(&u16::try_from(payload_len).ok()?.to_le_bytes());
    field.push(EXTRA_VERSION);
    field.push(0); // flags, none defined
    field.extend_from_slice(&span.to_le_bytes());
    field.extend_from_slice(&count.to_le_bytes());
    for &(len, crc) in blocks {
        field.extend_from_slice(&u32::try_from(len).ok()?.to_le_bytes());
        field.extend_from_slice(&crc.to_le_bytes());
    }
    Some(field)
}

impl BlockIndex {
    /// Parses a written index (the extra field's payload, see
    /// [`find_extra_field`]) and checks it against the member the central
    /// directory describes: its content `size`, `compressed_size` and
    /// `crc32`. The blocks must tile both exactly and their CRCs combine
    /// into the member's.
    pub fn from_extra_field(
        payload: &[u8],
        size: u64,
        compressed_size: u64,
        crc32: u32,
    ) -> Result<BlockIndex, ArchiveError> {
        let bad = |why: String| corrupt(format!("its block index (extra field 0x424e) {why}"));
        if payload.len() < EXTRA_FIXED_LEN {
            return Err(bad(format!("is {} bytes, too short", payload.len())));
        }
        if payload[0] != EXTRA_VERSION || payload[1] != 0 {
            return Err(bad(format!(
                "has version {} flags {}: only version 1 without flags is known",
                payload[0], payload[1]
            )));
        }
        let span = u64::from(u32::from_le_bytes([
            payload[2], payload[3], payload[4], payload[5],
        ]));
        let count = u32::from_le_bytes([payload[6], payload[7], payload[8], payload[9]]) as usize;
        let entries = &payload[EXTRA_FIXED_LEN..];
        if span == 0 || count == 0 || entries.len() != count.saturating_mul(EXTRA_ENTRY_LEN) {
            return Err(bad(format!(
                "lists {count} blocks of {span} bytes in {} bytes of entries",
                entries.len()
            )));
        }
        if size.div_ceil(span) != count as u64 {
            return Err(bad(format!(
                "lists {count} blocks of {span} bytes for {size} bytes of content"
            )));
        }
        let mut blocks = Vec::with_capacity(count);
        let (mut input, mut output, mut crc) = (0u64, 0u64, 0u32);
        for (i, entry) in entries.chunks_exact(EXTRA_ENTRY_LEN).enumerate() {
            let len = u64::from(u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]));
            let block_crc = u32::from_le_bytes([entry[4], entry[5], entry[6], entry[7]]);
            let end = input + len;
            if len == 0 || end > compressed_size {
                return Err(bad(format!(
                    "puts block {i} at compressed bytes {input}..{end} of {compressed_size}"
                )));
            }
            let out_end = (output + span).min(size);
            crc = crc_combine(crc, output, block_crc, out_end - output);
            blocks.push(Block {
                input: input..end,
                output: output..out_end,
                crc32: block_crc,
                entry: Entry::Fresh,
            });
            (input, output) = (end, out_end);
        }
        if input != compressed_size {
            return Err(bad(format!(
                "covers {input} of the member's {compressed_size} compressed bytes"
            )));
        }
        if crc != crc32 {
            return Err(bad(
                "does not match the member: its blocks' CRC-32s do not combine into the member's"
                    .to_owned(),
            ));
        }
        Ok(BlockIndex {
            size,
            compressed_size,
            crc32,
            blocks,
            written: true,
        })
    }

    /// An index from checkpoints (see `checkpoint.rs`), checked the same way.
    pub(crate) fn from_blocks(
        size: u64,
        compressed_size: u64,
        crc32: u32,
        blocks: Vec<Block>,
    ) -> Result<BlockIndex, ArchiveError> {
        let (mut input, mut output, mut crc) = (0u64, 0u64, 0u32);
        for (i, block) in blocks.iter().enumerate() {
            let ordered = block.input.start == input
                && block.input.end > block.input.start
                && block.output.start == output
                && block.output.end > block.output.start;
            if !ordered || block.input.end > compressed_size || block.output.end > size {
                return Err(corrupt(format!(
                    "its block index puts block {i} at compressed bytes {:?}, content bytes {:?} \
                     (of {compressed_size} and {size})",
                    block.input, block.output
                )));
            }
            if let Entry::Resume { bits, window, .. } = &block.entry
                && (*bits > 7 || window.len() as u64 != block.output.start.min(WINDOW as u64))
            {
                return Err(corrupt(format!(
                    "its block index has a malformed checkpoint at block {i}"
                )));
            }
            crc = crc_combine(crc, output, block.crc32, block.output.end - output);
            (input, output) = (block.input.end, block.output.end);
        }
        if input != compressed_size || output != size || crc != crc32 {
            return Err(corrupt(
                "its block index does not describe the member (sizes or CRC-32 differ)",
            ));
        }
        Ok(BlockIndex {
            size,
            compressed_size,
            crc32,
            blocks,
            written: false,
        })
    }

    /// Checkpoints of a deflated member another writer made (zran-style:
    /// about every [`CHECKPOINT_SPAN`] bytes of content, the bit position
    /// and the 32 KiB window there), from one sequential pass over its
    /// `info.compressed_size` compressed bytes read from `input` (from the
    /// member's first data byte). The content is checked against `info`'s
    /// size and CRC-32: bytes that are not the member's build nothing.
    ///
    /// Errors: an [`std::io::Error`] from `input`, or one of kind
    /// `InvalidData` carrying the [`ArchiveError`] when the bytes are not
    /// the member the directory describes.
    pub fn build_checkpoints(
        input: &mut dyn std::io::Read,
        info: &npy_core::npz::MemberInfo,
    ) -> std::io::Result<BlockIndex> {
        super::checkpoint::build(
            input,
            info.compressed_size,
            info.size,
            info.crc32,
            CHECKPOINT_SPAN,
        )
        .map_err(|error| match error {
            super::checkpoint::BuildError::Io(source) => source,
            super::checkpoint::BuildError::Data(kind) => {
                std::io::Error::new(std::io::ErrorKind::InvalidData, kind)
            }
        })
    }

    /// Whether the archive's writer recorded this index (independent blocks)
    /// rather than a pass over the member building it.
    pub fn is_written(&self) -> bool {
        self.written
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether there are no blocks (an empty member).
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The member's content size.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The member's compressed size.
    pub fn compressed_size(&self) -> u64 {
        self.compressed_size
    }

    /// The member's CRC-32.
    pub fn crc32(&self) -> u32 {
        self.crc32
    }

    pub(crate) fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// The content bytes block `i` inflates to.
    pub fn block_output(&self, i: usize) -> Range<u64> {
        self.blocks[i].output.clone()
    }

    /// The blocks holding any of the content bytes `range` (clamped to the content).
    pub fn covering(&self, range: Range<u64>) -> Range<usize> {
        let end = range.end.min(self.size);
        if range.start >= end {
            return 0..0;
        }
        let first = self.blocks.partition_point(|b| b.output.end <= range.start);
        let last = self.blocks.partition_point(|b| b.output.start < end);
        first..last
    }

    /// The compressed bytes (from the member's first data byte) blocks
    /// `blocks` need.
    pub fn input_range(&self, blocks: Range<usize>) -> Range<u64> {
        match (self.blocks.get(blocks.start), blocks.end.checked_sub(1)) {
            (Some(first), Some(last)) if blocks.start < blocks.end => {
                first.input.start..self.blocks[last].input.end
            }
            _ => 0..0,
        }
    }

    /// Inflates the content bytes `range` into `out` (of the same length)
    /// from `input`, the compressed bytes [`input_range`](Self::input_range)
    /// gives for the blocks [`covering`](Self::covering) it, starting at
    /// `input_start` (from the member's first data byte). Blocks inflate on
    /// every core; each is checked against its CRC-32.
    pub fn inflate_range(
        &self,
        range: Range<u64>,
        input: &[u8],
        input_start: u64,
        out: &mut [u8],
    ) -> Result<(), ArchiveError> {
        if range.end > self.size || range.end < range.start {
            return Err(corrupt(format!(
                "content bytes {range:?} lie outside its {} bytes",
                self.size
            )));
        }
        if out.len() as u64 != range.end - range.start {
            return Err(corrupt("the output does not match the range asked for"));
        }
        let blocks = self.covering(range.clone());
        let mut jobs = Vec::with_capacity(blocks.len());
        let mut rest = out;
        for i in blocks {
            let block = &self.blocks[i];
            let local = input_slice(input, input_start, &block.input)
                .ok_or_else(|| corrupt(format!("block {i}'s compressed bytes were not given")))?;
            let from = block.output.start.max(range.start);
            let to = block.output.end.min(range.end);
            let (mine, after) = std::mem::take(&mut rest).split_at_mut((to - from) as usize);
            rest = after;
            let whole = from == block.output.start && to == block.output.end;
            let skip = (from - block.output.start) as usize;
            jobs.push((i, local, mine, whole, skip));
        }
        // A thread per MiB of output at most: a small member inflates on
        // this thread (a spawned one costs more than its share saves).
        let workers = ((range.end - range.start) >> 20).max(1) as usize;
        run_parallel(jobs, workers, |(i, local, mine, whole, skip)| {
            let block = &self.blocks[i];
            if whole {
                return inflate_block(block, local, mine, i);
            }
            if matches!(block.entry, Entry::Fresh) {
                // Only the part wanted lands in `mine`; the rest streams
                // through a small buffer (a block-sized scratch buffer is
                // fresh memory to fault in, the cost of a small member).
                let total = (block.output.end - block.output.start) as usize;
                let crc = inflate_fresh(local, total, skip, mine)
                    .map_err(|why| corrupt(format!("block {i} of its block index {why}")))?;
                return check_block_crc(block, crc, i);
            }
            let mut scratch = vec![0u8; (block.output.end - block.output.start) as usize];
            inflate_block(block, local, &mut scratch, i)?;
            mine.copy_from_slice(&scratch[skip..skip + mine.len()]);
            Ok(())
        })
    }
}

/// The part of `input` (which starts at `input_start`) holding `wanted`.
fn input_slice<'a>(input: &'a [u8], input_start: u64, wanted: &Range<u64>) -> Option<&'a [u8]> {
    let from = usize::try_from(wanted.start.checked_sub(input_start)?).ok()?;
    let to = usize::try_from(wanted.end.checked_sub(input_start)?).ok()?;
    input.get(from..to)
}

/// Inflates block `i` (its compressed bytes `input`) into `out`, exactly
/// its content, and checks its CRC-32.
fn inflate_block(
    block: &Block,
    input: &[u8],
    out: &mut [u8],
    i: usize,
) -> Result<(), ArchiveError> {
    let crc = match &block.entry {
        Entry::Fresh => inflate_fresh(input, out.len(), 0, out),
        Entry::Resume {
            bits,
            bit_buf,
            window,
        } => super::checkpoint::inflate_resume(*bits, *bit_buf, window, input, out)
            .map(|()| crc32fast::hash(out)),
    }
    .map_err(|why| corrupt(format!("block {i} of its block index {why}")))?;
    check_block_crc(block, crc, i)
}

/// Whether `crc`, of the block's whole content, is the one recorded.
fn check_block_crc(block: &Block, crc: u32, i: usize) -> Result<(), ArchiveError> {
    if crc != block.crc32 {
        return Err(corrupt(format!(
            "block {i} of its block index inflates to other bytes than recorded (CRC-32 differs)"
        )));
    }
    Ok(())
}

/// A block with a fresh deflate state, all of `input`, that inflates to
/// exactly `total` bytes, of which `out` receives those from `skip` on
/// (the others pass through a small buffer). Returns the CRC-32 of all
/// `total`.
fn inflate_fresh(input: &[u8], total: usize, skip: usize, out: &mut [u8]) -> Result<u32, String> {
    use flate2::{Decompress, FlushDecompress, Status};
    let mut inflater = Decompress::new(false);
    let mut status = Status::Ok;
    let mut crc = crc32fast::Hasher::new();
    // Fills `into` exactly from the stream.
    let fill = |inflater: &mut Decompress, into: &mut [u8]| -> Result<Status, String> {
        let mut filled = 0;
        let mut status = Status::Ok;
        while filled < into.len() {
            let (before_in, before_out) = (inflater.total_in(), inflater.total_out());
            let rest = input.get(before_in as usize..).unwrap_or_default();
            status = inflater
                .decompress(rest, &mut into[filled..], FlushDecompress::None)
                .map_err(|e| format!("does not inflate: {e}"))?;
            filled += (inflater.total_out() - before_out) as usize;
            let stuck = (inflater.total_in(), inflater.total_out()) == (before_in, before_out);
            if filled < into.len() && (stuck || status == Status::StreamEnd) {
                return Err(format!(
                    "inflates to {} bytes, not {total}",
                    inflater.total_out()
                ));
            }
        }
        Ok(status)
    };
    let tail = total
        .checked_sub(skip)
        .and_then(|n| n.checked_sub(out.len()))
        .ok_or("is asked for bytes it does not hold")?;
    let mut spare = vec![0u8; (skip.max(tail)).min(64 << 10)];
    for (part, len) in [(0, skip), (1, out.len()), (2, tail)] {
        if part == 1 {
            status = fill(&mut inflater, out)?;
            crc.update(out);
            continue;
        }
        let mut left = len;
        while left > 0 {
            let piece = &mut spare[..left.min(64 << 10)];
            status = fill(&mut inflater, piece)?;
            crc.update(piece);
            left -= piece.len();
        }
    }
    // What is left must inflate to nothing (a flush marker, the final block).
    let mut spare = [0u8; 1];
    while (inflater.total_in() as usize) < input.len() && status != Status::StreamEnd {
        let before = inflater.total_in();
        status = inflater
            .decompress(&input[before as usize..], &mut spare, FlushDecompress::None)
            .map_err(|e| format!("does not inflate: {e}"))?;
        if inflater.total_out() != total as u64 {
            return Err(format!("inflates to more than {total} bytes"));
        }
        if inflater.total_in() == before {
            break;
        }
    }
    if inflater.total_in() != input.len() as u64 {
        return Err(format!(
            "ends after {} of its {} compressed bytes",
            inflater.total_in(),
            input.len()
        ));
    }
    Ok(crc.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_field_round_trips_and_is_found_among_others() {
        let field = encode_extra_field(4, &[(3, 0x1111_1111), (2, 0x2222_2222)]).unwrap();
        let mut extra = vec![0x01, 0x00, 0x00, 0x00]; // an empty zip64 field first
        extra.extend_from_slice(&field);
        let payload = find_extra_field(&extra).unwrap();
        assert_eq!(payload.len(), EXTRA_FIXED_LEN + 2 * EXTRA_ENTRY_LEN);
        let crc = crc_combine(0x1111_1111, 4, 0x2222_2222, 3);
        let index = BlockIndex::from_extra_field(payload, 7, 5, crc).unwrap();
        assert_eq!(index.len(), 2);
        assert_eq!(index.block_output(1), 4..7);
        assert_eq!(index.covering(3..5), 0..2);
        assert_eq!(index.covering(4..5), 1..2);
        assert_eq!(index.input_range(1..2), 3..5);
        // Another member (other size, compressed size or CRC) is refused.
        assert!(BlockIndex::from_extra_field(payload, 8, 5, crc).is_err());
        assert!(BlockIndex::from_extra_field(payload, 7, 6, crc).is_err());
        assert!(BlockIndex::from_extra_field(payload, 7, 5, crc ^ 1).is_err());
        assert!(find_extra_field(&[0x4e, 0x42, 0xff, 0x00, 1]).is_none());
    }

    /// Two independent deflate blocks of `content` split at `cut`, as our
    /// writer makes them, and their index.
    fn two_blocks(content: &[u8], cut: usize) -> (Vec<u8>, BlockIndex) {
        use std::io::Write;
        let mut compressed = Vec::new();
        let mut blocks = Vec::new();
        for (k, part) in [&content[..cut], &content[cut..]].into_iter().enumerate() {
            let mut encoder =
                flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
            encoder.write_all(part).unwrap();
            let bytes = encoder.finish().unwrap();
            let at = compressed.len() as u64;
            let from = if k == 0 { 0 } else { cut as u64 };
            blocks.push(Block {
                input: at..at + bytes.len() as u64,
                output: from..from + part.len() as u64,
                crc32: crc32fast::hash(part),
                entry: Entry::Fresh,
            });
            compressed.extend_from_slice(&bytes);
        }
        let crc = crc32fast::hash(content);
        let index =
            BlockIndex::from_blocks(content.len() as u64, compressed.len() as u64, crc, blocks)
                .unwrap();
        (compressed, index)
    }

    #[test]
    fn any_range_of_fresh_blocks_inflates_to_its_bytes_and_a_bad_byte_is_refused() {
        let content: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let (compressed, index) = two_blocks(&content, 200_000);
        // Whole blocks, a block's middle (bytes before and after it
        // inflated through the small buffer), across the cut, the ends.
        for range in [
            0..300_000,
            128..200_000,
            5..17,
            150_000..250_000,
            199_999..200_001,
            299_000..300_000,
            0..1,
            70_000..70_000,
        ] {
            let mut out = vec![0u8; range.end - range.start];
            index
                .inflate_range(
                    range.start as u64..range.end as u64,
                    &compressed,
                    0,
                    &mut out,
                )
                .unwrap();
            assert_eq!(out, content[range.clone()], "{range:?}");
        }
        // A changed byte in the part not asked for still fails the block's CRC.
        let (mut bad, index) = two_blocks(&content, 200_000);
        let at = bad.len() / 4;
        bad[at] ^= 0x10;
        let mut out = vec![0u8; 10];
        assert!(
            index
                .inflate_range(190_000..190_010, &bad, 0, &mut out)
                .is_err()
        );
    }
}

//! Checkpoints in a deflate stream another writer made (zran-style): one
//! sequential inflate pass stops at every deflate block boundary and, about
//! every [`CHECKPOINT_SPAN`](super::CHECKPOINT_SPAN) bytes of content, records the bit position and
//! the 32 KiB window there; a block of the stream then inflates from its
//! checkpoint alone.
//!
//! zlib (and flate2's zlib-rs backend) can resume from a dictionary but
//! not at a bit position (`inflatePrime` is not exposed, nor the block
//! boundaries `Z_BLOCK` reports); miniz_oxide's `block-boundary` feature is
//! made for exactly this: it stops at block boundaries, tells the unread bits
//! and resumes from them with the window in its output buffer.

use std::io::Read;
use std::sync::Arc;

use miniz_oxide::inflate::TINFLStatus;
use miniz_oxide::inflate::core::inflate_flags::{
    TINFL_FLAG_HAS_MORE_INPUT, TINFL_FLAG_STOP_ON_BLOCK_BOUNDARY,
    TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
};
use miniz_oxide::inflate::core::{BlockBoundaryState, DecompressorOxide, decompress};
use npy_core::npz::ArchiveError;

use super::blocks::{Block, BlockIndex, Entry, WINDOW, corrupt};

/// Compressed bytes read at a time by the building pass.
const INPUT_CHUNK: usize = 1 << 20;
/// The building pass's circular output buffer (a power of two, ≥ the window).
const RING: usize = 1 << 22;

/// Builds the checkpoints of a deflate stream of `compressed_size` bytes
/// read from `input`, whose content the central directory says is `size`
/// bytes with CRC-32 `crc32` (checked: a pass over bytes that are not the
/// member's builds nothing). Checkpoints lie `span` content bytes apart or a
/// little more (at the next block boundary).
pub(crate) fn build(
    input: &mut dyn Read,
    compressed_size: u64,
    size: u64,
    crc32: u32,
    span: u64,
) -> Result<BlockIndex, BuildError> {
    let span = span.max(1);
    let mut inflater = DecompressorOxide::new();
    let mut ring = vec![0u8; RING];
    let mut chunk = vec![0u8; INPUT_CHUNK];
    let (mut chunk_len, mut chunk_pos) = (0usize, 0usize);
    let mut read_total = 0u64; // compressed bytes read from `input`
    let mut ring_pos = 0usize;
    let mut produced = 0u64; // content bytes inflated
    let mut consumed = 0u64; // compressed bytes the inflater consumed
    let mut block_crc = crc32fast::Hasher::new();
    let mut blocks: Vec<Block> = Vec::new();
    let mut current = Block {
        input: 0..0,
        output: 0..0,
        crc32: 0,
        entry: Entry::Resume {
            bits: 0,
            bit_buf: 0,
            window: Arc::from(&[][..]),
        },
    };
    loop {
        if chunk_pos == chunk_len && read_total < compressed_size {
            let want = (compressed_size - read_total).min(INPUT_CHUNK as u64) as usize;
            input
                .read_exact(&mut chunk[..want])
                .map_err(BuildError::Io)?;
            (chunk_len, chunk_pos) = (want, 0);
            read_total += want as u64;
        }
        let more = read_total < compressed_size;
        let flags =
            TINFL_FLAG_STOP_ON_BLOCK_BOUNDARY | if more { TINFL_FLAG_HAS_MORE_INPUT } else { 0 };
        let (status, used_in, used_out) = decompress(
            &mut inflater,
            &chunk[chunk_pos..chunk_len],
            &mut ring,
            ring_pos,
            flags,
        );
        chunk_pos += used_in;
        consumed += used_in as u64;
        block_crc.update(&ring[ring_pos..ring_pos + used_out]);
        produced += used_out as u64;
        if produced > size {
            return Err(BuildError::Data(corrupt(format!(
                "it inflates to more than the {size} bytes the directory records"
            ))));
        }
        ring_pos = (ring_pos + used_out) & (RING - 1);
        match status {
            TINFLStatus::BlockBoundary => {
                if produced - current.output.start < span || produced == size {
                    continue;
                }
                let Some(state) = inflater.block_boundary_state() else {
                    continue;
                };
                let window_len = produced.min(WINDOW as u64) as usize;
                let mut window = Vec::with_capacity(window_len);
                let start = (ring_pos + RING - window_len) & (RING - 1);
                if start + window_len <= RING {
                    window.extend_from_slice(&ring[start..start + window_len]);
                } else {
                    window.extend_from_slice(&ring[start..]);
                    window.extend_from_slice(&ring[..window_len - (RING - start)]);
                }
                current.input.end = consumed;
                current.output.end = produced;
                current.crc32 = std::mem::take(&mut block_crc).finalize();
                let next = Block {
                    input: consumed..consumed,
                    output: produced..produced,
                    crc32: 0,
                    entry: Entry::Resume {
                        bits: state.num_bits,
                        bit_buf: state.bit_buf,
                        window: Arc::from(window),
                    },
                };
                blocks.push(std::mem::replace(&mut current, next));
            }
            TINFLStatus::Done => break,
            TINFLStatus::HasMoreOutput => {}
            TINFLStatus::NeedsMoreInput if more => {}
            other => {
                return Err(BuildError::Data(corrupt(format!(
                    "its deflate stream does not inflate ({other:?}) after {produced} bytes"
                ))));
            }
        }
    }
    if produced != size {
        return Err(BuildError::Data(corrupt(format!(
            "it inflates to {produced} bytes, the directory records {size}"
        ))));
    }
    current.input.end = compressed_size;
    current.output.end = produced;
    current.crc32 = block_crc.finalize();
    if size > 0 {
        blocks.push(current);
    }
    BlockIndex::from_blocks(size, compressed_size, crc32, blocks).map_err(|_| {
        BuildError::Data(ArchiveError::BadCrc {
            member: String::new(),
        })
    })
}

/// Why building checkpoints failed.
#[derive(Debug)]
pub(crate) enum BuildError {
    /// The member's bytes could not be read.
    Io(std::io::Error),
    /// The member is not what the directory says (bad stream, size or CRC).
    Data(ArchiveError),
}

/// Inflates one block from its checkpoint: `bits` unread bits `bit_buf`
/// of the byte before `input`, `window` the content before it; exactly
/// `out.len()` bytes, ending at a block boundary or the stream's end.
pub(crate) fn inflate_resume(
    bits: u8,
    bit_buf: u8,
    window: &[u8],
    input: &[u8],
    out: &mut [u8],
) -> Result<(), String> {
    let state = BlockBoundaryState {
        num_bits: bits,
        bit_buf,
        ..BlockBoundaryState::default()
    };
    let mut inflater = DecompressorOxide::from_block_boundary_state(&state);
    let mut buffer = vec![0u8; window.len() + out.len()];
    buffer[..window.len()].copy_from_slice(window);
    let (mut in_pos, mut out_pos) = (0usize, window.len());
    let flags = TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF | TINFL_FLAG_STOP_ON_BLOCK_BOUNDARY;
    loop {
        let (status, used_in, used_out) =
            decompress(&mut inflater, &input[in_pos..], &mut buffer, out_pos, flags);
        in_pos += used_in;
        out_pos += used_out;
        match status {
            TINFLStatus::BlockBoundary if out_pos < buffer.len() => {}
            TINFLStatus::BlockBoundary | TINFLStatus::Done if out_pos == buffer.len() => break,
            TINFLStatus::HasMoreOutput => {
                return Err(format!("inflates to more than {} bytes", out.len()));
            }
            TINFLStatus::Done => {
                return Err(format!(
                    "ends after {} of its {} bytes",
                    out_pos - window.len(),
                    out.len()
                ));
            }
            other => return Err(format!("does not inflate ({other:?})")),
        }
    }
    out.copy_from_slice(&buffer[window.len()..]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Data that compresses with matches reaching back across checkpoints.
    fn sample(len: usize) -> Vec<u8> {
        let mut state = 7u32;
        (0..len)
            .map(|i| {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                if (state >> 16).is_multiple_of(5) {
                    (state >> 24) as u8
                } else {
                    (i / 97 % 13) as u8
                }
            })
            .collect()
    }

    #[test]
    fn checkpoints_of_a_zlib_stream_inflate_each_block_alone() {
        let data = sample(5 << 20);
        let mut encoder =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        encoder.write_all(&data).unwrap();
        let stream = encoder.finish().unwrap();
        let crc = crc32fast::hash(&data);
        let index = build(
            &mut stream.as_slice(),
            stream.len() as u64,
            data.len() as u64,
            crc,
            1 << 18,
        )
        .unwrap();
        assert!(index.len() >= 10, "{} checkpoints", index.len());
        // Every range, one block, several, or the whole.
        for range in [
            0..10,
            300_000..300_100,
            1_000_000..3_000_000,
            0..data.len() as u64,
        ] {
            let blocks = index.covering(range.clone());
            let input = index.input_range(blocks);
            let compressed = &stream[input.start as usize..input.end as usize];
            let mut out = vec![0u8; (range.end - range.start) as usize];
            index
                .inflate_range(range.clone(), compressed, input.start, &mut out)
                .unwrap();
            assert!(out == data[range.start as usize..range.end as usize]);
        }
        // The wrong CRC or size builds nothing.
        assert!(
            build(
                &mut stream.as_slice(),
                stream.len() as u64,
                data.len() as u64,
                crc ^ 1,
                1 << 18
            )
            .is_err()
        );
        assert!(
            build(
                &mut stream.as_slice(),
                stream.len() as u64,
                data.len() as u64 - 1,
                crc,
                1 << 18
            )
            .is_err()
        );
    }
}

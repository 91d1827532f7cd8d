//! Deflate on every core: the input is cut into 1 MiB chunks compressed in
//! parallel and joined into one valid raw deflate stream, pigz-style.
//!
//! Every chunk is compressed with a fresh deflate state (no reference
//! reaches back across its start) and ends with a sync flush (byte-aligned,
//! not final); the stream ends with an empty final block, so chunks can be
//! compressed before it is known whether more input follows. The chunks are
//! the member's blocks: their compressed lengths and CRC-32s become its
//! block index (`blocks.rs`), so any chunk inflates on its own. Not priming
//! a chunk with the 32 KiB before it costs its first few KiB some ratio
//! (about 0.1 % at 1 MiB; docs/FORMAT.md).

use std::io;

use flate2::{Compress, FlushCompress};

/// Input per chunk (a block of the index): big enough that the fresh
/// state and the flush cost little ratio, small enough that a 1 MiB slice
/// needs at most two blocks and a member splits over every core.
pub(crate) const CHUNK: usize = 1 << 20;
/// An empty block with the final bit set (fixed Huffman, end-of-block code).
const FINAL_EMPTY_BLOCK: [u8; 2] = [0x03, 0x00];

/// A streaming, multi-threaded raw deflate encoder with CRC-32 of the input.
#[derive(Debug)]
pub(crate) struct ParallelDeflate {
    level: u32,
    workers: usize,
    /// Input not compressed yet (less than one batch).
    pending: Vec<u8>,
    crc: crc32fast::Hasher,
    size: u64,
    /// Compressed length and CRC-32 of every chunk written so far.
    blocks: Vec<(u64, u32)>,
}

/// What a finished stream holds.
#[derive(Debug)]
pub(crate) struct Finished {
    pub(crate) crc32: u32,
    pub(crate) size: u64,
    /// Each chunk's compressed length (the last one's includes the final
    /// block) and CRC-32.
    pub(crate) blocks: Vec<(u64, u32)>,
}

impl ParallelDeflate {
    pub(crate) fn new(level: u32) -> Self {
        let workers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 16);
        ParallelDeflate {
            level,
            workers,
            pending: Vec::new(),
            crc: crc32fast::Hasher::new(),
            size: 0,
            blocks: Vec::new(),
        }
    }

    fn batch_len(&self) -> usize {
        CHUNK * self.workers
    }

    /// Takes input; hands finished compressed bytes to `out` in order.
    pub(crate) fn write(
        &mut self,
        mut input: &[u8],
        out: &mut impl FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let batch = self.batch_len();
        if !self.pending.is_empty() {
            let take = (batch - self.pending.len()).min(input.len());
            self.pending.extend_from_slice(&input[..take]);
            input = &input[take..];
            if self.pending.len() < batch {
                return Ok(());
            }
            let pending = std::mem::take(&mut self.pending);
            self.compress_batch(&pending, out)?;
            self.pending = pending;
            self.pending.clear();
        }
        // Whole batches straight from the caller's buffer, without a copy.
        while input.len() >= batch {
            self.compress_batch(&input[..batch], out)?;
            input = &input[batch..];
        }
        self.pending.extend_from_slice(input);
        Ok(())
    }

    /// Compresses what is left and ends the stream.
    pub(crate) fn finish(
        mut self,
        out: &mut impl FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<Finished> {
        let pending = std::mem::take(&mut self.pending);
        if !pending.is_empty() {
            self.compress_batch(&pending, out)?;
        }
        out(&FINAL_EMPTY_BLOCK)?;
        match self.blocks.last_mut() {
            Some(last) => last.0 += FINAL_EMPTY_BLOCK.len() as u64,
            None => self.blocks.push((FINAL_EMPTY_BLOCK.len() as u64, 0)),
        }
        Ok(Finished {
            crc32: self.crc.finalize(),
            size: self.size,
            blocks: self.blocks,
        })
    }

    /// Compresses `data` as up to `workers` chunks in parallel and emits them in order.
    fn compress_batch(
        &mut self,
        data: &[u8],
        out: &mut impl FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let level = self.level;
        let chunk_starts: Vec<usize> = (0..data.len()).step_by(CHUNK).collect();
        let compress = |start: usize| -> io::Result<(Vec<u8>, crc32fast::Hasher)> {
            let end = (start + CHUNK).min(data.len());
            let chunk = &data[start..end];
            let mut crc = crc32fast::Hasher::new();
            crc.update(chunk);
            Ok((deflate_chunk(level, chunk)?, crc))
        };
        let results: Vec<io::Result<(Vec<u8>, crc32fast::Hasher)>> = if chunk_starts.len() == 1 {
            vec![compress(0)]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = chunk_starts[1..]
                    .iter()
                    .map(|&start| scope.spawn(move || compress(start)))
                    .collect();
                let mut results = vec![compress(0)];
                for handle in handles {
                    results.push(handle.join().unwrap_or_else(|_| {
                        Err(io::Error::other("a deflate worker thread panicked"))
                    }));
                }
                results
            })
        };
        for result in results {
            let (compressed, crc) = result?;
            self.crc.combine(&crc);
            self.blocks.push((compressed.len() as u64, crc.finalize()));
            out(&compressed)?;
        }
        self.size += data.len() as u64;
        Ok(())
    }
}

/// Raw deflate of `input` with a fresh state, ending with a sync flush.
fn deflate_chunk(level: u32, input: &[u8]) -> io::Result<Vec<u8>> {
    let mut compress = Compress::new(flate2::Compression::new(level), false);
    let mut out = Vec::with_capacity(input.len() + input.len() / 8 + 64);
    loop {
        let consumed = compress.total_in() as usize;
        compress
            .compress_vec(&input[consumed..], &mut out, FlushCompress::Sync)
            .map_err(io::Error::other)?;
        // Done once all input is in and the flush left spare room (zlib's rule).
        if compress.total_in() as usize == input.len() && out.len() < out.capacity() {
            return Ok(out);
        }
        out.reserve(64 * 1024);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn roundtrip(data: &[u8], pieces: &[usize]) -> Vec<u8> {
        let mut encoder = ParallelDeflate::new(6);
        let mut stream = Vec::new();
        let mut out = |bytes: &[u8]| {
            stream.extend_from_slice(bytes);
            Ok(())
        };
        let mut rest = data;
        for &piece in pieces.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let take = piece.min(rest.len());
            encoder.write(&rest[..take], &mut out).unwrap();
            rest = &rest[take..];
        }
        let finished = encoder.finish(&mut out).unwrap();
        assert_eq!(finished.crc32, crc32fast::hash(data));
        assert_eq!(finished.size, data.len() as u64);
        assert_eq!(finished.blocks.len(), data.len().div_ceil(CHUNK).max(1));
        assert_eq!(
            finished.blocks.iter().map(|b| b.0).sum::<u64>(),
            stream.len() as u64
        );
        let mut decoded = Vec::new();
        flate2::read::DeflateDecoder::new(stream.as_slice())
            .read_to_end(&mut decoded)
            .unwrap();
        decoded
    }

    #[test]
    fn chunked_stream_decodes_to_the_input() {
        let data: Vec<u8> = (0..(3 * CHUNK + 12345) as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 & 0x0f)
            .collect();
        for pieces in [&[usize::MAX][..], &[1000, 7, CHUNK + 1], &[CHUNK * 5]] {
            assert!(roundtrip(&data, pieces) == data);
        }
        assert!(roundtrip(&[], &[1]).is_empty());
        assert_eq!(roundtrip(b"tiny", &[1]), b"tiny");
    }
}

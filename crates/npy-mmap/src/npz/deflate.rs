//! Deflate on every core: the input is cut into chunks compressed in
//! parallel (each primed with the 32 KiB before it, so the ratio matches a
//! single stream) and joined into one valid raw deflate stream, pigz-style.
//!
//! Every chunk ends with a sync flush (byte-aligned, not final), and the
//! stream ends with an empty final block, so chunks can be compressed
//! before it is known whether more input follows.

use std::io;

use flate2::{Compress, FlushCompress};

/// Input per chunk: big enough that priming and flush overhead vanish.
const CHUNK: usize = 1 << 20;
/// Deflate's window: the history a chunk is primed with.
const WINDOW: usize = 32 * 1024;
/// An empty block with the final bit set (fixed Huffman, end-of-block code).
const FINAL_EMPTY_BLOCK: [u8; 2] = [0x03, 0x00];

/// A streaming, multi-threaded raw deflate encoder with CRC-32 of the input.
#[derive(Debug)]
pub(crate) struct ParallelDeflate {
    level: u32,
    workers: usize,
    /// Input not compressed yet (less than one batch).
    pending: Vec<u8>,
    /// The last (up to) 32 KiB of input already compressed.
    history: Vec<u8>,
    crc: crc32fast::Hasher,
    size: u64,
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
            history: Vec::new(),
            crc: crc32fast::Hasher::new(),
            size: 0,
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

    /// Compresses what is left and ends the stream; returns (CRC-32, input size).
    pub(crate) fn finish(
        mut self,
        out: &mut impl FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<(u32, u64)> {
        let pending = std::mem::take(&mut self.pending);
        if !pending.is_empty() {
            self.compress_batch(&pending, out)?;
        }
        out(&FINAL_EMPTY_BLOCK)?;
        Ok((self.crc.finalize(), self.size))
    }

    /// Compresses `data` as up to `workers` chunks in parallel and emits them in order.
    fn compress_batch(
        &mut self,
        data: &[u8],
        out: &mut impl FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let level = self.level;
        let history = &self.history;
        let chunk_starts: Vec<usize> = (0..data.len()).step_by(CHUNK).collect();
        let compress = |start: usize| -> io::Result<(Vec<u8>, crc32fast::Hasher)> {
            let end = (start + CHUNK).min(data.len());
            let primer = if start == 0 {
                history.as_slice()
            } else {
                &data[start.saturating_sub(WINDOW)..start]
            };
            let chunk = &data[start..end];
            let mut crc = crc32fast::Hasher::new();
            crc.update(chunk);
            Ok((deflate_chunk(level, primer, chunk)?, crc))
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
            out(&compressed)?;
        }
        self.size += data.len() as u64;
        // Keep the last 32 KiB of input to prime the next batch.
        if data.len() >= WINDOW {
            self.history.clear();
            self.history.extend_from_slice(&data[data.len() - WINDOW..]);
        } else {
            self.history.extend_from_slice(data);
            let excess = self.history.len().saturating_sub(WINDOW);
            self.history.drain(..excess);
        }
        Ok(())
    }
}

/// Raw deflate of `input` primed with `primer`, ending with a sync flush.
fn deflate_chunk(level: u32, primer: &[u8], input: &[u8]) -> io::Result<Vec<u8>> {
    let mut compress = Compress::new(flate2::Compression::new(level), false);
    if !primer.is_empty() {
        compress.set_dictionary(primer).map_err(io::Error::other)?;
    }
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
        let (crc, size) = encoder.finish(&mut out).unwrap();
        assert_eq!(crc, crc32fast::hash(data));
        assert_eq!(size, data.len() as u64);
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

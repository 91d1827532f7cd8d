//! Reading the drawn elements a chunk at a time, from any source of data bytes.
//!
//! The reducers never see the array: they ask for *lines* (a run of pixels
//! along one axis, each pixel one or more channel values) and get `f64`
//! values a chunk at a time. The bytes come from a [`DataSource`]: today a
//! read-only mapping or an npz member in memory; a ranged reader of a remote
//! object implements the same trait (each request is one byte range no longer
//! than a chunk's span), so remote arrays need no change here.

use std::ops::Range;

use anyhow::Context;
use npy_core::ByteOrder;
use npy_core::DType;
use npy_core::swap::ByteOrderConverter;

use super::decode::Decoder;
use crate::progress::Progress;

/// Values decoded per chunk: 512 KiB of `f64`, so a chunk stays in the cache
/// between decoding and reducing.
const CHUNK_VALUES: usize = 1 << 16;

/// Where an array's data bytes come from.
pub trait DataSource {
    /// The bytes `range` of the data section. A source that must copy (a
    /// ranged network read) fills `scratch` and returns it.
    fn bytes<'a>(
        &'a self,
        range: Range<usize>,
        scratch: &'a mut Vec<u8>,
    ) -> anyhow::Result<&'a [u8]>;
}

/// Data bytes already addressable: a read-only mapping or an npz member in memory.
pub struct InMemory<'d>(pub &'d [u8]);

impl DataSource for InMemory<'_> {
    fn bytes<'a>(
        &'a self,
        range: Range<usize>,
        _scratch: &'a mut Vec<u8>,
    ) -> anyhow::Result<&'a [u8]> {
        let len = self.0.len();
        self.0
            .get(range.clone())
            .with_context(|| format!("bytes {range:?} are outside the {len}-byte data"))
    }
}

/// A run of pixels through the data: pixel `k` has its channel `c` at
/// element `base + k * stride + c * channel_stride`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    pub base: usize,
    pub stride: usize,
    pub channels: usize,
    pub channel_stride: usize,
}

/// Turns lines of the data into chunks of native `f64` values.
pub struct Reader<'s> {
    source: &'s dyn DataSource,
    decoder: Decoder,
    converter: ByteOrderConverter,
    fetched: Vec<u8>,
    gathered: Vec<u8>,
    values: Vec<f64>,
    progress: Progress,
}

impl<'s> Reader<'s> {
    /// A reader of elements of `dtype` (decoded by `decoder`) from `source`,
    /// counting the bytes it decodes on `progress`.
    pub fn new(
        source: &'s dyn DataSource,
        dtype: &DType,
        decoder: Decoder,
        progress: Progress,
    ) -> Reader<'s> {
        Reader {
            source,
            converter: ByteOrderConverter::new(dtype, ByteOrder::NATIVE),
            decoder,
            fetched: Vec::new(),
            gathered: Vec::new(),
            values: Vec::new(),
            progress,
        }
    }

    /// Calls `visit(first, values)` for consecutive chunks of the `pixels` of
    /// `line`; `values` holds `channels` values per pixel, pixel after pixel.
    pub fn read_line(
        &mut self,
        line: &Line,
        pixels: Range<usize>,
        mut visit: impl FnMut(usize, &[f64]),
    ) -> anyhow::Result<()> {
        let size = self.decoder.itemsize();
        let channels = line.channels.max(1);
        let per_chunk = (CHUNK_VALUES / channels).max(1);
        // The pixels' values are in memory one after another, in the order they are visited.
        let contiguous = (channels == 1 && line.stride == 1)
            || (line.channel_stride == 1 && line.stride == channels);
        let mut first = pixels.start;
        while first < pixels.end {
            let end = pixels.end.min(first + per_chunk);
            let lowest = line.base + first * line.stride;
            let highest =
                line.base + (end - 1) * line.stride + (channels - 1) * line.channel_stride;
            let range = lowest * size..(highest + 1) * size;
            let bytes = self.source.bytes(range, &mut self.fetched)?;
            let native: &[u8] = if contiguous && self.converter.is_noop() {
                bytes
            } else {
                self.gathered.clear();
                if contiguous {
                    self.gathered.extend_from_slice(bytes);
                } else {
                    for pixel in 0..end - first {
                        for channel in 0..channels {
                            let at = (pixel * line.stride + channel * line.channel_stride) * size;
                            self.gathered.extend_from_slice(&bytes[at..at + size]);
                        }
                    }
                }
                self.converter.convert(&mut self.gathered);
                &self.gathered
            };
            self.values.clear();
            self.decoder.decode(native, &mut self.values);
            self.progress.advance(native.len() as u64);
            visit(first, &self.values);
            first = end;
        }
        Ok(())
    }
}

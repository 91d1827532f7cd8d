//! Reading the drawn elements a chunk at a time, from any source of data bytes.
//!
//! The reducers never see the array: they ask for *lines* (a run of pixels
//! along one axis, each pixel one or more channel values) and get `f64`
//! values a chunk at a time. The bytes come from a [`DataSource`]: the
//! mapping itself when its bytes can be touched ([`InMemory`]), or a stream
//! read forward ([`Forward`]: a sparse file read through the file, an npz
//! member inflated as it goes). A ranged reader of a remote object
//! implements the same trait (each request is one byte range no longer than
//! a chunk's span), so remote arrays need no change here.

use std::ops::{ControlFlow, Range};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, sync_channel};
use std::thread::{Scope, ScopedJoinHandle};

use anyhow::{Context, bail};
use npy_core::ByteOrder;
use npy_core::DType;
use npy_core::swap::ByteOrderConverter;

use super::decode::Decoder;
use crate::progress::Progress;
use crate::source::ArraySource;

/// Values decoded per chunk: 512 KiB of `f64`, so a chunk stays in the cache
/// between decoding and reducing.
const CHUNK_VALUES: usize = 1 << 16;

/// Where an array's data bytes come from.
pub trait DataSource {
    /// The bytes `range` of the data section. A source that must copy (a
    /// ranged network read) fills `scratch` and returns it.
    fn bytes<'a>(
        &'a mut self,
        range: Range<usize>,
        scratch: &'a mut Vec<u8>,
    ) -> anyhow::Result<&'a [u8]>;

    /// Says which byte ranges will be read next, so that a source whose
    /// bytes are not in memory yet (a mapped file) can ask for them all at
    /// once. Only a hint: the default does nothing.
    fn prefetch(&mut self, _ranges: &[Range<usize>]) {}
}

/// Data bytes already addressable: a read-only mapping or an npz member in
/// memory, and the source they come from (for its prefetch hint).
pub struct InMemory<'d> {
    pub bytes: &'d [u8],
    pub source: Option<&'d dyn crate::source::ArraySource>,
}

impl DataSource for InMemory<'_> {
    fn bytes<'a>(
        &'a mut self,
        range: Range<usize>,
        _scratch: &'a mut Vec<u8>,
    ) -> anyhow::Result<&'a [u8]> {
        let len = self.bytes.len();
        self.bytes
            .get(range.clone())
            .with_context(|| format!("bytes {range:?} are outside the {len}-byte data"))
    }

    fn prefetch(&mut self, ranges: &[Range<usize>]) {
        if let Some(source) = self.source {
            source.prefetch(ranges);
        }
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
    source: &'s mut dyn DataSource,
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
        source: &'s mut dyn DataSource,
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

    /// Tells the source that the `pixels` of each of `lines` will be read
    /// next (see [`DataSource::prefetch`]).
    pub fn prefetch_lines(&mut self, lines: &[Line], pixels: Range<usize>) {
        if pixels.is_empty() {
            return;
        }
        let size = self.decoder.itemsize();
        let ranges: Vec<Range<usize>> = lines
            .iter()
            .map(|line| {
                let channels = line.channels.max(1);
                let lowest = line.base + pixels.start * line.stride;
                let highest = line.base
                    + (pixels.end - 1) * line.stride
                    + (channels - 1) * line.channel_stride;
                lowest * size..(highest + 1) * size
            })
            .collect();
        self.source.prefetch(&ranges);
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

/// Runs `work` with the data of `opened` as a [`DataSource`]: its bytes
/// directly when they can be touched, else a [`Forward`] stream.
pub fn with_source<T>(
    opened: &mut dyn ArraySource,
    work: impl FnOnce(&mut dyn DataSource) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    if let Some(bytes) = opened.contiguous() {
        let source = &*opened;
        return work(&mut InMemory {
            bytes,
            source: Some(source),
        });
    }
    // The trait object's lifetime shortened to the mutex's, which `Forward` names.
    let opened = Mutex::new(opened as &mut dyn ArraySource);
    std::thread::scope(|scope| {
        let mut forward = Forward {
            scope,
            opened: &opened,
            stream: None,
            window: Vec::new(),
            window_start: 0,
        };
        let result = work(&mut forward);
        forward.stop();
        result
    })
}

/// Bytes read forward at a time by a [`Forward`] stream's reader thread.
const FORWARD_CHUNK: usize = 4 << 20;
/// The most a [`Forward`] stream holds at once: one request's span.
const MAX_FORWARD_SPAN: usize = 256 << 20;

/// The receiving end of a reader thread's chunks (or its error).
type Chunks = Receiver<anyhow::Result<Vec<u8>>>;

/// Data that can only be read forward in chunks (`ArraySource::for_each_chunk`:
/// a sparse file through the file, an npz member inflated as it goes). A
/// thread reads the chunks; this side keeps the window of bytes from the
/// last request on. Requests in increasing order (every whole array, and
/// selections whose lines lie one after another) cost one pass; a request
/// before the window starts the stream again from the beginning.
pub struct Forward<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    opened: &'env Mutex<&'env mut dyn ArraySource>,
    /// The chunks coming from the reader thread, and the thread.
    stream: Option<(Chunks, ScopedJoinHandle<'scope, ()>)>,
    /// The data bytes `window_start..window_start + window.len()`.
    window: Vec<u8>,
    window_start: usize,
}

impl Forward<'_, '_> {
    /// Starts reading the data from its beginning.
    fn start(&mut self) {
        let (sender, receiver) = sync_channel(2);
        let opened = self.opened;
        let reader = self.scope.spawn(move || {
            let mut opened = opened
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let read = opened.for_each_chunk(FORWARD_CHUNK, &mut |chunk| {
                // A closed channel means the picture needs no more.
                Ok(match sender.send(Ok(chunk.to_vec())) {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(_) => ControlFlow::Break(()),
                })
            });
            if let Err(err) = read {
                let _ = sender.send(Err(err));
            }
        });
        self.stream = Some((receiver, reader));
        self.window.clear();
        self.window_start = 0;
    }

    /// Stops the reader thread (closing the channel makes it finish).
    fn stop(&mut self) {
        if let Some((receiver, reader)) = self.stream.take() {
            drop(receiver);
            let _ = reader.join();
        }
    }
}

impl DataSource for Forward<'_, '_> {
    fn bytes<'a>(
        &'a mut self,
        range: Range<usize>,
        _scratch: &'a mut Vec<u8>,
    ) -> anyhow::Result<&'a [u8]> {
        if range.len() > MAX_FORWARD_SPAN {
            bail!(
                "this selection's elements lie too far apart to read from a stream \
                 ({} bytes at once); extract or convert the array to a plain .npy first",
                range.len()
            );
        }
        if self.stream.is_none() || range.start < self.window_start {
            self.stop();
            self.start();
        }
        // Forget what lies before the request, in large steps so the copying stays linear.
        let passed = (range.start - self.window_start).min(self.window.len());
        if passed > 0 && passed >= self.window.len() / 2 {
            self.window.drain(..passed);
            self.window_start += passed;
        }
        while self.window_start + self.window.len() < range.end {
            let (receiver, _) = self.stream.as_ref().expect("the stream was started");
            match receiver.recv() {
                Ok(Ok(chunk)) => {
                    let end = self.window_start + self.window.len() + chunk.len();
                    if self.window.is_empty() && end <= range.start {
                        // Entirely before the request: skipped, never stored.
                        self.window_start = end;
                    } else {
                        self.window.extend_from_slice(&chunk);
                    }
                }
                Ok(Err(err)) => return Err(err),
                Err(_) => bail!("the data ended before byte {}", range.end),
            }
        }
        let from = range.start - self.window_start;
        Ok(&self.window[from..from + range.len()])
    }
}

//! A blocking facade for synchronous callers (and the CLI): a struct that
//! owns a tokio runtime and runs the async API on it.

use std::collections::VecDeque;
use std::future::Future;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use npy_core::NpyArray;
use object_store::ObjectStore;
use object_store::path::Path;

use crate::error::{Error, ErrorKind, Operation, Result};
use crate::read::{RemoteArray, RowBlocks, fetch};

/// Owns the runtime the async API runs on.
#[derive(Clone, Debug)]
pub struct Runtime {
    runtime: Arc<tokio::runtime::Runtime>,
}

impl Runtime {
    /// A multi-threaded runtime with I/O and timers enabled.
    pub fn new() -> Result<Runtime> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|source| {
                Error::from(ErrorKind::Io {
                    operation: "start the runtime",
                    source,
                })
            })?;
        Ok(Runtime {
            runtime: Arc::new(runtime),
        })
    }

    /// Runs a future of this crate's async API to completion.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// Opens the array a URL names (see [`crate::Store::from_url`]).
    pub fn open_url(&self, url: &str) -> Result<Array> {
        let array = self.block_on(RemoteArray::open_url(url))?;
        Ok(self.wrap(array))
    }

    /// Wraps an array opened with the async API.
    pub fn wrap(&self, array: RemoteArray) -> Array {
        Array {
            runtime: self.clone(),
            array,
        }
    }
}

/// A [`RemoteArray`] with blocking reads.
#[derive(Clone, Debug)]
pub struct Array {
    runtime: Runtime,
    array: RemoteArray,
}

impl Array {
    /// The async array (header, layout, path).
    pub fn remote(&self) -> &RemoteArray {
        &self.array
    }

    /// See [`RemoteArray::read_rows`].
    pub fn read_rows(&self, rows: Range<usize>) -> Result<NpyArray> {
        self.runtime.block_on(self.array.read_rows(rows))
    }

    /// See [`RemoteArray::read_all`].
    pub fn read_all(&self) -> Result<NpyArray> {
        self.runtime.block_on(self.array.read_all())
    }

    /// See [`RemoteArray::read_rows_at`].
    pub fn read_rows_at(&self, rows: &[usize]) -> Result<NpyArray> {
        self.runtime.block_on(self.array.read_rows_at(rows))
    }

    /// See [`RemoteArray::read_elements`].
    pub fn read_elements<I: npy_core::NdIndex>(&self, indices: &[I]) -> Result<Vec<u8>> {
        self.runtime.block_on(self.array.read_elements(indices))
    }

    /// The data bytes `span` as parts in order, fetched concurrently (see
    /// [`RemoteArray::data_stream`]).
    pub fn data_parts(&self, span: Range<usize>) -> Result<DataParts> {
        let _guard = self.runtime.runtime.enter();
        Ok(DataParts {
            runtime: self.runtime.clone(),
            stream: self.array.data_stream(span)?.boxed(),
        })
    }

    /// See [`RemoteArray::read_windows`].
    pub fn read_windows(&self, starts: &[usize], length: usize) -> Result<Vec<u8>> {
        self.runtime
            .block_on(self.array.read_windows(starts, length))
    }

    /// See [`RemoteArray::read_at`].
    pub fn read_at(&self, offsets: &[usize], width: usize) -> Result<Vec<u8>> {
        self.runtime.block_on(self.array.read_at(offsets, width))
    }

    /// Row blocks as an iterator, the next block prefetched while the
    /// caller works on the current one.
    pub fn row_blocks(&self, rows_per_block: usize) -> BlockIter {
        // RowBlocks spawns its fetches, so it is created inside the runtime.
        let _guard = self.runtime.runtime.enter();
        BlockIter {
            runtime: self.runtime.clone(),
            blocks: self.array.row_blocks(rows_per_block),
        }
    }
}

/// Blocking [`RowBlocks`].
#[derive(Debug)]
pub struct BlockIter {
    runtime: Runtime,
    blocks: RowBlocks,
}

impl Iterator for BlockIter {
    type Item = Result<(Range<usize>, NpyArray)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.runtime.block_on(self.blocks.next())
    }
}

/// Blocking [`RemoteArray::data_stream`].
pub struct DataParts {
    runtime: Runtime,
    stream: BoxStream<'static, Result<Bytes>>,
}

impl std::fmt::Debug for DataParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataParts").finish_non_exhaustive()
    }
}

impl Iterator for DataParts {
    type Item = Result<Bytes>;

    fn next(&mut self) -> Option<Self::Item> {
        self.runtime.block_on(self.stream.next())
    }
}

/// `Read + Seek` over an object, fetching blocks by range as they are read
/// and keeping the last few: how synchronous code written for files (the
/// zip crate, npy-mmap's `NpzArchive`) reads an object without downloading
/// it. Memory: `block_size × max_blocks`.
///
/// Opening fetches the object's last block with one suffix GET, which
/// also gives its size (archives are read from their end).
pub struct RangeReader {
    runtime: Runtime,
    store: Arc<dyn ObjectStore>,
    path: Path,
    size: u64,
    pos: u64,
    /// The version every block is read from.
    e_tag: Option<String>,
    block_size: u64,
    max_blocks: usize,
    /// Fetched ranges (start, bytes), most recent last.
    cache: VecDeque<(u64, Bytes)>,
}

impl std::fmt::Debug for RangeReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RangeReader")
            .field("path", &self.path)
            .field("size", &self.size)
            .field("pos", &self.pos)
            .finish_non_exhaustive()
    }
}

impl RangeReader {
    /// A reader of the object at `path` with blocks of `block_size` bytes,
    /// at most `max_blocks` kept.
    pub fn open(
        runtime: &Runtime,
        store: Arc<dyn ObjectStore>,
        path: Path,
        block_size: usize,
        max_blocks: usize,
    ) -> Result<RangeReader> {
        let block_size = block_size.max(1) as u64;
        let crate::read::Fetched {
            bytes: tail,
            size,
            e_tag,
        } = runtime.block_on(crate::npz::get_suffix(
            &store,
            &path,
            block_size,
            Operation::Open,
        ))?;
        let mut cache = VecDeque::new();
        cache.push_back((size - tail.len() as u64, tail));
        Ok(RangeReader {
            runtime: runtime.clone(),
            store,
            path,
            size,
            pos: 0,
            e_tag,
            block_size,
            max_blocks: max_blocks.max(1),
            cache,
        })
    }

    /// The object's size.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The cached bytes from `pos` on, fetching the block holding it first
    /// when none is cached.
    fn bytes_at(&mut self, pos: u64) -> std::io::Result<&[u8]> {
        let found = self
            .cache
            .iter()
            .position(|(start, bytes)| (*start..*start + bytes.len() as u64).contains(&pos));
        let index = match found {
            Some(index) => index,
            None => {
                let start = pos - pos % self.block_size;
                let range = start..(start + self.block_size).min(self.size);
                let bytes = self
                    .runtime
                    .block_on(fetch(&self.store, &self.path, range, self.e_tag.as_deref()))
                    .map_err(std::io::Error::other)?;
                if self.cache.len() == self.max_blocks {
                    self.cache.pop_front();
                }
                self.cache.push_back((start, bytes));
                self.cache.len() - 1
            }
        };
        let (start, bytes) = &self.cache[index];
        Ok(&bytes[(pos - start) as usize..])
    }
}

impl Read for RangeReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.size || buf.is_empty() {
            return Ok(0);
        }
        let pos = self.pos;
        let available = self.bytes_at(pos)?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for RangeReader {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.pos = crate::npz::seek_target(self.size, self.pos, to)?;
        Ok(self.pos)
    }
}

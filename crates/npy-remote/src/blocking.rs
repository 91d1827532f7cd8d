//! A blocking facade for synchronous callers (and the CLI): a struct that
//! owns a tokio runtime and runs the async API on it.

use std::future::Future;
use std::ops::Range;
use std::sync::Arc;

use npy_core::NpyArray;

use crate::error::{Error, Result};
use crate::read::{RemoteArray, RowBlocks};

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
            .map_err(|source| Error::Io {
                path: "<tokio runtime>".into(),
                source,
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
    pub fn read_elements(&self, indices: &[Vec<usize>]) -> Result<Vec<u8>> {
        self.runtime.block_on(self.array.read_elements(indices))
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

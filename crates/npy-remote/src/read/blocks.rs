//! Row blocks read ahead: the next block's requests in flight while the
//! caller holds the current one.

use std::ops::Range;

use npy_core::NpyArray;

use super::RemoteArray;
use crate::error::{Error, ErrorKind, Result};

impl RemoteArray {
    /// Row blocks of `rows_per_block` rows (the last may be shorter), each
    /// fetched while the caller works on the one before.
    pub fn row_blocks(&self, rows_per_block: usize) -> RowBlocks {
        RowBlocks {
            array: self.clone(),
            rows_per_block: rows_per_block.max(1),
            next_row: 0,
            pending: None,
        }
    }
}

/// Row blocks of a [`RemoteArray`], in order, with the next block's
/// requests already in flight while the caller holds the current one:
/// memory is two blocks (plus the parts in flight).
#[derive(Debug)]
pub struct RowBlocks {
    array: RemoteArray,
    rows_per_block: usize,
    next_row: usize,
    pending: Option<(Range<usize>, tokio::task::JoinHandle<Result<NpyArray>>)>,
}

impl RowBlocks {
    /// Starts fetching the block after the last one started, if any.
    fn start_next(&mut self) {
        let total = self.array.rows();
        if self.next_row >= total {
            return;
        }
        let rows = self.next_row..(self.next_row + self.rows_per_block).min(total);
        self.next_row = rows.end;
        let array = self.array.clone();
        let task_rows = rows.clone();
        let handle = tokio::spawn(async move { array.read_rows(task_rows).await });
        self.pending = Some((rows, handle));
    }

    /// The next block (its rows, in the file's numbering, and the array),
    /// or `None` after the last. Must be polled inside a tokio runtime.
    pub async fn next(&mut self) -> Option<Result<(Range<usize>, NpyArray)>> {
        if self.pending.is_none() {
            self.start_next();
        }
        let (rows, handle) = self.pending.take()?;
        // Prefetch: the next block's requests run while this one is used.
        self.start_next();
        Some(match handle.await {
            Ok(result) => result.map(|array| (rows, array)),
            Err(join) => Err(Error::at(
                &self.array.path,
                ErrorKind::Io {
                    operation: "read",
                    source: std::io::Error::other(join),
                },
            )),
        })
    }
}

impl RowBlocks {
    /// The blocks as a [`futures::Stream`], for `StreamExt` combinators.
    pub fn into_stream(
        self,
    ) -> impl futures::Stream<Item = Result<(Range<usize>, NpyArray)>> + Send + 'static {
        futures::stream::unfold(self, |mut blocks| async move {
            let item = blocks.next().await?;
            Some((item, blocks))
        })
    }
}

impl Drop for RowBlocks {
    fn drop(&mut self) {
        if let Some((_, handle)) = self.pending.take() {
            handle.abort();
        }
    }
}

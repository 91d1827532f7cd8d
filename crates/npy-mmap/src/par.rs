//! Parallel filling of a read-write mapping with rayon (feature `rayon`).

use std::ops::Range;

use npy_core::{ArrayViewMut, Element};
use rayon::iter::IntoParallelIterator;

use crate::array::MappedArray;
use crate::error::Result;
use crate::mode::Writable;

impl<M: Writable> MappedArray<M> {
    /// [`row_chunks_mut`](Self::row_chunks_mut) as a rayon parallel
    /// iterator: disjoint chunks of `rows_per_chunk` rows along the row axis,
    /// each with its mapping-relative row range, for threads to fill at once.
    /// The natural way to fill a preallocated file from all cores.
    ///
    /// ```
    /// use npy_core::DType;
    /// use npy_mmap::CreateOptions;
    /// use rayon::prelude::*;
    /// # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-par-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("table.npy");
    /// let mut array = CreateOptions::new(DType::parse("<u8")?, [10_000, 4]).create(&path)?;
    /// array.par_rows_mut::<u64>(1024)?.for_each(|(rows, mut chunk)| {
    ///     for (i, row) in rows.enumerate() {
    ///         for j in 0..4 {
    ///             *chunk.get_mut(&[i, j]).unwrap() = (row * 4 + j) as u64;
    ///         }
    ///     }
    /// });
    /// array.flush()?;
    /// let view = array.view::<u64>()?;
    /// assert!(view.iter().enumerate().all(|(k, &v)| v == k as u64));
    /// # drop(array); std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn par_rows_mut<T: Element + Send>(
        &mut self,
        rows_per_chunk: usize,
    ) -> Result<rayon::vec::IntoIter<(Range<usize>, ArrayViewMut<'_, T>)>> {
        Ok(self.row_chunks_mut(rows_per_chunk)?.into_par_iter())
    }
}

//! `ndarray` arrays as npz members (features `ndarray` and `npz`).

use std::io::{Seek, Write};

use ndarray::{ArrayBase, Data, Dimension};
use npy_core::Element;
use npy_core::ext::ndarray::to_npy_parts;
use zerocopy::IntoBytes;

use crate::npz::{NpzWriter, Result};

impl<W: Write + Seek> NpzWriter<W> {
    /// Adds `array` as the member `key` the way `np.savez` writes it:
    /// C- or Fortran-contiguous data as it is (`fortran_order` set for the
    /// latter), anything else copied in C order.
    ///
    /// ```
    /// use ndarray::{Array2, s};
    /// use npy_mmap::npz::{NpzArchive, NpzWriter};
    ///
    /// let a = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as i32);
    /// let mut npz = NpzWriter::new(std::io::Cursor::new(Vec::new()))?;
    /// npz.add_ndarray("a", &a)?;
    /// npz.add_ndarray("every_other", &a.slice(s![.., ..;2]))?;
    /// let bytes = npz.finish()?.into_inner();
    ///
    /// let mut archive = NpzArchive::from_bytes(&bytes)?;
    /// assert_eq!(archive.load("every_other")?.view::<i32>()?.to_vec(), [0, 2, 4, 6, 8, 10]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_ndarray<T, S, D>(&mut self, key: &str, array: &ArrayBase<S, D>) -> Result<()>
    where
        T: Element,
        S: Data<Elem = T>,
        D: Dimension,
    {
        let (header, data) = to_npy_parts(array);
        self.add_bytes(key, &header, data.as_bytes())
    }
}

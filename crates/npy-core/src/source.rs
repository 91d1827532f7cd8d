//! [`NpySource`]: anything that can be written as an `.npy` array, so each
//! sink has exactly one writer ([`write_npy`](crate::write_npy) for streams,
//! `npy_mmap::save` for paths, `NpzWriter::add` for archive members,
//! `npy_remote::upload` for object stores).
//!
//! Sources: typed views ([`ArrayView`], [`ArrayViewMut`]), plain slices
//! (1-D; a slice with a shape is [`ArrayView::from_slice`]), owned arrays
//! ([`NpyArray`], object arrays included), raw bytes under a header
//! ([`NpyBytes`]), npy-mmap's mapped arrays, and ndarray arrays with the
//! `ndarray` feature.
//!
//! ```
//! use npy_core::{ArrayView, NpyArray, Order, ReadOptions, read_npy, write_npy};
//!
//! let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
//! let grid = ArrayView::from_slice(&data, &[2, 3], Order::C)?;
//! let mut file = Vec::new();
//! write_npy(&mut file, &grid)?;
//! let back: NpyArray = read_npy(file.as_slice(), &ReadOptions::default())?;
//! assert_eq!(back.header().shape, [2, 3]);
//!
//! // The transpose is Fortran-contiguous: written as it lies, like np.save.
//! let mut again = Vec::new();
//! write_npy(&mut again, &back)?;
//! assert_eq!(again, file);
//! # Ok::<(), npy_core::Error>(())
//! ```

use std::borrow::Cow;

use zerocopy::IntoBytes;

use crate::array::{NpyArray, check_bytes};
use crate::element::Element;
use crate::error::Result;
use crate::header::{Header, Order};
use crate::view::{ArrayView, ArrayViewMut};

/// The data of an [`NpySource`]: byte chunks in the header's memory order
/// (borrowed where the source is contiguous, copied a bounded piece at a
/// time where it is not). Send, so async uploaders can hold it across awaits.
pub type DataChunks<'a> = Box<dyn Iterator<Item = Cow<'a, [u8]>> + Send + 'a>;

/// Something that can be written as an `.npy` array: the header `np.save`
/// would write for it, and its data bytes in that header's memory order.
///
/// Implement it for your own containers to give them every writer of this
/// family at once. The writers check that the chunks add up to the bytes the
/// header describes (object arrays: the pickle, whose length is its own).
pub trait NpySource {
    /// The header `np.save` writes for this array.
    fn npy_header(&self) -> Header;

    /// The data, in chunks. Errors: only what producing the data can fail
    /// with (pickling an object array's values).
    fn npy_data(&self) -> Result<DataChunks<'_>>;
}

/// The order `np.save` writes an array in: a Fortran-contiguous array that
/// is not also C-contiguous keeps Fortran order; anything else is written in
/// C order (copied when it is not C-contiguous). The one place of that rule.
pub(crate) fn saved_order(c_contiguous: bool, f_contiguous: bool) -> Order {
    if f_contiguous && !c_contiguous {
        Order::Fortran
    } else {
        Order::C
    }
}

/// Elements copied per chunk when a strided view is written: bounded memory
/// (512 KiB for 8-byte elements), few write calls.
const ELEMENTS_PER_CHUNK: usize = 1 << 16;

/// An array given as its header and raw data bytes (in the header's dtype,
/// byte order and memory order), checked to fit each other.
///
/// ```
/// use npy_core::{DType, Header, NpyBytes, Order, write_npy};
///
/// let header = Header::new(DType::parse("<u2")?, Order::C, vec![2]);
/// let mut file = Vec::new();
/// write_npy(&mut file, &NpyBytes::new(&header, &[1, 0, 2, 0])?)?;
/// assert!(NpyBytes::new(&header, &[1, 0, 2]).is_err()); // 3 bytes for 4
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct NpyBytes<'a> {
    header: &'a Header,
    bytes: &'a [u8],
}

impl<'a> NpyBytes<'a> {
    /// Pairs `header` with `bytes`.
    ///
    /// Errors: [`Error::ObjectData`](crate::Error::ObjectData) for an object dtype (its data is a
    /// pickle: write an [`NpyArray`]); [`Error::DataLength`](crate::Error::DataLength) unless `bytes`
    /// holds exactly the bytes the header describes.
    pub fn new(header: &'a Header, bytes: &'a [u8]) -> Result<Self> {
        check_bytes(header, bytes.len())?;
        Ok(NpyBytes { header, bytes })
    }
}

impl NpySource for NpyBytes<'_> {
    fn npy_header(&self) -> Header {
        self.header.clone()
    }

    fn npy_data(&self) -> Result<DataChunks<'_>> {
        Ok(one_chunk(self.bytes))
    }
}

fn one_chunk(bytes: &[u8]) -> DataChunks<'_> {
    Box::new(std::iter::once(Cow::Borrowed(bytes)))
}

impl<T: Element> NpySource for ArrayView<'_, T> {
    fn npy_header(&self) -> Header {
        let order = saved_order(self.is_c_contiguous(), self.is_f_contiguous());
        Header::new(T::dtype(), order, self.shape().to_vec())
    }

    fn npy_data(&self) -> Result<DataChunks<'_>> {
        Ok(view_chunks(self.clone()))
    }
}

impl<T: Element> NpySource for ArrayViewMut<'_, T> {
    fn npy_header(&self) -> Header {
        self.view().npy_header()
    }

    fn npy_data(&self) -> Result<DataChunks<'_>> {
        Ok(view_chunks(self.view()))
    }
}

/// A contiguous view's memory as it lies; any other view copied out in C
/// order, a bounded piece at a time.
fn view_chunks<T: Element>(view: ArrayView<'_, T>) -> DataChunks<'_> {
    if let Some(data) = view.as_slice() {
        return one_chunk(data.as_bytes());
    }
    copied_chunks(view.iter().copied())
}

/// Elements in logical (C) order, copied out a bounded piece at a time.
pub(crate) fn copied_chunks<'a, T: Element>(
    elements: impl Iterator<Item = T> + Send + 'a,
) -> DataChunks<'a> {
    let mut elements = elements.peekable();
    Box::new(std::iter::from_fn(move || {
        elements.peek()?;
        let chunk: Vec<T> = elements.by_ref().take(ELEMENTS_PER_CHUNK).collect();
        Some(Cow::Owned(chunk.as_bytes().to_vec()))
    }))
}

/// A slice is a 1-D array.
impl<T: Element> NpySource for [T] {
    fn npy_header(&self) -> Header {
        Header::new(T::dtype(), Order::C, vec![self.len()])
    }

    fn npy_data(&self) -> Result<DataChunks<'_>> {
        Ok(one_chunk(self.as_bytes()))
    }
}

/// A vector is a 1-D array.
impl<T: Element> NpySource for Vec<T> {
    fn npy_header(&self) -> Header {
        self.as_slice().npy_header()
    }

    fn npy_data(&self) -> Result<DataChunks<'_>> {
        self.as_slice().npy_data()
    }
}

/// An owned array as it is; an object array's values are pickled as
/// `np.save` does it.
impl NpySource for NpyArray {
    fn npy_header(&self) -> Header {
        self.header().clone()
    }

    fn npy_data(&self) -> Result<DataChunks<'_>> {
        if self.objects().is_some() {
            let pickle = crate::pickle::pickle_array(self)?;
            return Ok(Box::new(std::iter::once(Cow::Owned(pickle))));
        }
        Ok(one_chunk(self.bytes()))
    }
}

impl<S: NpySource + ?Sized> NpySource for &S {
    fn npy_header(&self) -> Header {
        (**self).npy_header()
    }

    fn npy_data(&self) -> Result<DataChunks<'_>> {
        (**self).npy_data()
    }
}

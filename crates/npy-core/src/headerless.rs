//! Binary files without a header: numpy's `np.memmap(path, dtype, mode,
//! offset, shape, order)`, how most token files of language-model training
//! are read (a raw `.bin` of `uint16` or `uint32`).
//!
//! [`Headerless`] describes such a file the way `np.memmap`'s arguments do
//! and gives the [`Header`] and [`Layout`] a `.npy` with the same data would
//! have, so every reader of this workspace (mappings, the planner, remote
//! reads) serves it unchanged. numpy's rules and words: without a shape,
//! the array is 1-D and holds every whole item after `offset` ("Size of
//! available data is not a multiple of the data-type size." otherwise).
//!
//! ```
//! use npy_core::headerless::Headerless;
//! use npy_core::{DType, Order};
//! let tokens = Headerless::new(DType::parse("<u2")?, 0, None, Order::C);
//! let parsed = tokens.layout_for(1_000_000)?;
//! assert_eq!(parsed.header.shape, [500_000]);
//! assert_eq!((parsed.layout.data_offset, parsed.layout.data_len), (0, 1_000_000));
//! let odd = tokens.layout_for(1_000_001).unwrap_err();
//! assert_eq!(odd.to_string(), "Size of available data is not a multiple of the data-type size.");
//! # Ok::<(), npy_core::Error>(())
//! ```

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::header::{Header, Layout, Order, ParsedHeader, Version};

/// A binary file of array data after `offset` bytes, with no header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Headerless {
    /// The element type (numpy's `dtype`).
    pub dtype: DType,
    /// Bytes before the data (numpy's `offset`).
    pub offset: usize,
    /// The shape; `None` for every whole item after `offset`, as 1-D.
    pub shape: Option<Vec<usize>>,
    /// C or Fortran order (numpy's `order`).
    pub order: Order,
}

impl Headerless {
    /// numpy's `np.memmap` arguments.
    pub fn new(dtype: DType, offset: usize, shape: Option<Vec<usize>>, order: Order) -> Headerless {
        Headerless {
            dtype,
            offset,
            shape,
            order,
        }
    }

    /// The header and layout of a file of `file_len` bytes: the data at
    /// `offset`, as long as the shape says (checked arithmetic). A shape
    /// the file is too short for is left to the reader, which refuses it
    /// before mapping ("mmap length is greater than file size").
    pub fn layout_for(&self, file_len: u64) -> Result<ParsedHeader> {
        if self.dtype.has_object() {
            return Err(Error::ObjectDType);
        }
        let itemsize = self.dtype.itemsize();
        let shape = match &self.shape {
            Some(shape) => shape.clone(),
            None => {
                let available =
                    file_len
                        .checked_sub(self.offset as u64)
                        .ok_or(Error::Headerless {
                            reason: "mmap offset is greater than file size",
                        })?;
                if itemsize == 0 {
                    return Err(Error::Headerless {
                        reason: "the dtype has no bytes: give a shape",
                    });
                }
                if available % itemsize as u64 != 0 {
                    return Err(Error::Headerless {
                        reason: "Size of available data is not a multiple of the data-type size.",
                    });
                }
                let items = usize::try_from(available / itemsize as u64).map_err(|_| {
                    Error::Headerless {
                        reason: "the file holds more items than this machine can address",
                    }
                })?;
                vec![items]
            }
        };
        let header = Header::new(self.dtype.clone(), self.order, shape);
        let data_len = header.data_len()?;
        self.offset.checked_add(data_len).ok_or(Error::Headerless {
            reason: "offset plus data length overflows",
        })?;
        Ok(ParsedHeader {
            header,
            layout: Layout {
                version: Version::V1,
                header_len: 0,
                data_offset: self.offset,
                data_len,
                python2_header: false,
            },
        })
    }
}

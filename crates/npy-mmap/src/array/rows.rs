//! What a mapping covers of its file: the range of rows, and the
//! description ([`MappedFile`]) that [`MappedArray`](crate::MappedArray)
//! and [`LiveArray`](crate::LiveArray) share, with its accessors written
//! once ([`mapped_file_accessors`]).

use std::ops::Range;
use std::path::{Path, PathBuf};

use npy_core::plan::Windows;
use npy_core::{Header, Layout};

use super::residency::Residency;

use crate::advice::Advice;
use crate::error::{Error, ErrorKind, Result, io_error};
use crate::lock::{Access, DataLock, Locks, TrackedFile};

/// Where rows live: the axis (None for 0-d), how many, bytes per row
/// (npy-core's rule; 0 bytes when the product overflows, which only an
/// array with no rows can describe).
fn row_geometry(header: &Header) -> (Option<usize>, usize, usize) {
    (
        header.row_axis(),
        header.row_count(),
        header.row_bytes().unwrap_or(0),
    )
}

/// Refuses a byte `range` that is not inside a mapping of `len` bytes.
pub(crate) fn check_byte_range(range: &Range<usize>, len: usize) -> Result<()> {
    if range.start > range.end || range.end > len {
        return Err(Error::from(ErrorKind::BytesOutOfBounds {
            start: range.start,
            end: range.end,
            len,
        }));
    }
    Ok(())
}

/// What a mapping is asked for beyond the file: the rows, the kernel hint,
/// how to lock. Shared by opening and creating.
#[derive(Clone, Debug, Default)]
pub(crate) struct MapRequest {
    pub(crate) rows: Option<Range<usize>>,
    pub(crate) advice: Option<Advice>,
    pub(crate) locks: Locks,
}

/// What part of a file's data a mapping covers.
#[derive(Clone, Debug)]
pub(crate) struct MappedRows {
    /// The rows mapped, in the file's numbering.
    pub(crate) rows: Range<usize>,
    pub(crate) row_bytes: usize,
    /// The mapped shape (the file's, with the row axis cut to the rows mapped).
    pub(crate) shape: Vec<usize>,
    /// The bytes of the file mapped.
    pub(crate) bytes: Range<u64>,
}

impl MappedRows {
    /// The rows `request` asks for of an open file whose structure lock is
    /// held, and the data lock of its bytes for `access`.
    pub(crate) fn lock(
        file: TrackedFile,
        path: &Path,
        header: &Header,
        layout: &Layout,
        request: &MapRequest,
        access: Access,
    ) -> Result<(MappedRows, DataLock)> {
        let meta = file.file().metadata().map_err(io_error("stat", path))?;
        let mapped = MappedRows::new(path, header, layout, meta.len(), request.rows.clone())?;
        let lock = DataLock::acquire(
            file,
            path,
            &meta,
            mapped.bytes.clone(),
            access,
            request.locks,
        )?;
        Ok((mapped, lock))
    }

    /// The rows `rows` (all rows when `None`) of the file's data, checked
    /// against the header and the file's length.
    fn new(
        path: &Path,
        header: &Header,
        layout: &Layout,
        file_len: u64,
        rows: Option<Range<usize>>,
    ) -> Result<MappedRows> {
        let data_end = layout.data_end() as u64;
        if file_len < data_end {
            return Err(Error::at(
                path,
                ErrorKind::FileTooShort {
                    expected: data_end,
                    actual: file_len,
                    data_offset: layout.data_offset,
                    data_len: layout.data_len,
                },
            ));
        }
        let (axis, total_rows, row_bytes) = row_geometry(header);
        let (rows, shape) = match (rows, axis) {
            (None, _) => (0..total_rows, header.shape.clone()),
            (Some(_), None) => return Err(Error::from(ErrorKind::NoRows)),
            (Some(rows), Some(axis)) => {
                header
                    .check_rows(rows.clone())
                    .map_err(|e| Error::at(path, ErrorKind::Format(e)))?;
                let mut shape = header.shape.clone();
                shape[axis] = rows.len();
                (rows, shape)
            }
        };
        // In bounds: rows.end * row_bytes <= data_len, which fits in usize.
        let start = rows.start * row_bytes;
        let len = if axis.is_some() {
            rows.len() * row_bytes
        } else {
            layout.data_len
        };
        let offset = (layout.data_offset + start) as u64;
        Ok(MappedRows {
            rows,
            row_bytes,
            shape,
            bytes: offset..offset + len as u64,
        })
    }
}

/// The file a mapping shows and which part: its path, header, layout and
/// rows. Both array types hold one; [`mapped_file_accessors`] gives them
/// the same accessors.
#[derive(Debug)]
pub(crate) struct MappedFile {
    pub(crate) path: PathBuf,
    pub(crate) header: Header,
    pub(crate) layout: Layout,
    pub(crate) mapped: MappedRows,
    /// What the last planned read showed of the mapping's pages.
    pub(crate) residency: Residency,
}

impl MappedFile {
    pub(crate) fn new(
        path: &Path,
        header: Header,
        layout: Layout,
        mapped: MappedRows,
    ) -> MappedFile {
        MappedFile {
            path: path.to_path_buf(),
            header,
            layout,
            mapped,
            residency: Residency::default(),
        }
    }
}

impl MappedFile {
    /// The byte spans (in the mapped data) of `length` rows from each of
    /// `starts`, in the mapping's own row numbering; numpy's error for the
    /// first row past the end.
    pub(crate) fn windows(&self, starts: &[usize], length: usize) -> Result<Windows> {
        let mapped = Header::new(
            self.header.dtype.clone(),
            self.header.order,
            self.mapped.shape.clone(),
        );
        Windows::of(&mapped, starts, length)
            .map_err(|e| Error::at(&self.path, ErrorKind::Format(e)))
    }
}

/// The accessors both array types have, documented once, reading the
/// type's `described: MappedFile` field.
macro_rules! mapped_file_accessors {
    () => {
        /// The file's path, as given when opening.
        pub fn path(&self) -> &std::path::Path {
            &self.described.path
        }

        /// The parsed header (dtype, order and the *file's* full shape).
        pub fn header(&self) -> &npy_core::Header {
            &self.described.header
        }

        /// Where the header and data lie in the file.
        pub fn layout(&self) -> &npy_core::Layout {
            &self.described.layout
        }

        /// The element type.
        pub fn dtype(&self) -> &npy_core::DType {
            &self.described.header.dtype
        }

        /// C or Fortran order.
        pub fn order(&self) -> npy_core::Order {
            self.described.header.order
        }

        /// The shape of what is mapped: the file's shape, or for a range of
        /// rows the same with the row axis cut to the range's length.
        pub fn shape(&self) -> &[usize] {
            &self.described.mapped.shape
        }

        /// The rows mapped, in the file's row numbering: `0..n` for the
        /// whole array. Add `rows().start` to a mapping-relative row index to
        /// get the file's. A 0-d array counts as one row.
        pub fn rows(&self) -> std::ops::Range<usize> {
            self.described.mapped.rows.clone()
        }

        /// The axis rows are counted along: 0 for C order, the last axis
        /// for Fortran order; `None` for a 0-d array.
        pub fn row_axis(&self) -> Option<usize> {
            self.described.header.row_axis()
        }

        /// Bytes in one row (0 when the array has no rows at all).
        pub fn row_bytes(&self) -> usize {
            self.described.mapped.row_bytes
        }

        /// Whether only part of the rows is mapped.
        pub fn is_partial(&self) -> bool {
            self.described.mapped.shape != self.described.header.shape
        }

        /// Whether only part of the rows is mapped.
        #[deprecated(
            since = "0.2.0",
            note = "renamed `is_partial`: \"window\" now means a sampled run of rows"
        )]
        pub fn is_window(&self) -> bool {
            self.is_partial()
        }
    };
}
pub(crate) use mapped_file_accessors;

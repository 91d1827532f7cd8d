//! Growing files along their growth axis: [`Appender`] appends rows to an
//! existing `.npy` file in place, [`RowWriter`] writes a new file whose
//! length is not known in advance.
//!
//! The growth axis is the one whose slices are contiguous at the end of the
//! data: axis 0 for C order, the last axis for Fortran order (numpy's rule,
//! and the row axis of [`MappedArray`](crate::MappedArray)). Since numpy 1.24
//! the header leaves room for 21 digits on that axis, so the shape can be
//! rewritten without moving the data; this library writes headers the same
//! way. Growing therefore never moves a byte of existing data:
//!
//! 1. under the file's exclusive lock (the locking rule: growth changes the
//!    header and the length),
//! 2. the new rows are written after the data and synced to disk,
//! 3. then the header is rewritten in place, same length, and synced.
//!
//! A crash before step 3 leaves the old array plus ignored trailing bytes
//! (numpy reads such a file, and the next append overwrites them); the
//! header only ever describes data that is on disk. Processes that mapped
//! the old length keep a valid mapping of the old rows, unchanged. Note
//! that a mapping made through this crate holds the shared lock, so an
//! append waits until it is dropped (this process's own mappings included:
//! drop them first, or use [`Locking::NonBlocking`] to get
//! [`Error::Locked`] instead of waiting); lock-free readers such as numpy's
//! `np.load(mmap_mode='r')` are not waited for.
//!
//! A header without room (numpy before 1.24 wrote none, and some writers
//! pad only to 16 bytes) is refused with [`Error::NoRoomToGrow`], which says
//! how to rewrite the file.
//!
//! ```
//! use npy_core::DType;
//! use npy_mmap::{Appender, CreateOptions};
//! # let dir = std::env::temp_dir().join(format!("npy-mmap-doc-grow-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("log.npy");
//!
//! // Rows arriving one batch at a time, number unknown: stream them.
//! let mut writer = CreateOptions::new(DType::parse("<f4")?, [0, 3]).stream(&path)?;
//! writer.write_rows(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! writer.write_rows(&[7.0f32, 8.0, 9.0])?;
//! assert_eq!(writer.finish()?.shape, [3, 3]);
//!
//! // Later, append more rows to the same file, in place.
//! let mut appender = Appender::open(&path)?;
//! assert_eq!(appender.append(&[10.0f32, 11.0, 12.0])?, 4);
//! drop(appender);
//!
//! let array = npy_mmap::open(&path)?;
//! assert_eq!(array.shape(), [4, 3]);
//! assert_eq!(array.view::<f32>()?.get(&[3, 2]), Some(&12.0));
//! # drop(array); std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use npy_core::{ArrayView, Element, Header, Layout, Order, ParseOptions};
use zerocopy::IntoBytes;

use crate::CreateOptions;
use crate::error::{Error, Result, io_error};
use crate::lock::{ExclusiveLock, Locking, Locks, lock_shared};
use crate::open::{open_regular, read_header, still_at_path};

/// The growth axis of `header` and the bytes of one row along it.
fn growth_axis(header: &Header, path: &Path) -> Result<(usize, usize)> {
    let cannot = |reason: &str| Error::CannotGrow {
        path: path.to_path_buf(),
        reason: reason.to_owned(),
    };
    let Some(axis) = header.row_axis() else {
        return Err(cannot("a 0-d array has no axis to grow along"));
    };
    let row_bytes = header
        .row_bytes()
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| cannot("one row is larger than the address space"))?;
    if row_bytes == 0 {
        return Err(cannot(
            "its rows hold no bytes (a zero-length axis or a zero-size dtype)",
        ));
    }
    Ok((axis, row_bytes))
}

/// `header` encoded the numpy way, then re-padded to exactly the length of
/// the header text in `layout` (everything after the length field), so it
/// replaces the old text in place.
fn header_text_in_place(header: &Header, layout: &Layout, path: &Path) -> Result<Vec<u8>> {
    let bytes = header
        .to_bytes(Some(layout.version))
        .map_err(|source| Error::Header {
            path: path.to_path_buf(),
            source,
        })?;
    let text = bytes[layout.version.prefix_len()..].trim_ascii_end();
    let needed = text.len() + 1;
    if needed > layout.header_len {
        return Err(Error::NoRoomToGrow {
            path: path.to_path_buf(),
            shape: format!("{:?}", header.shape),
            needed,
            available: layout.header_len,
        });
    }
    let mut out = text.to_vec();
    out.resize(layout.header_len - 1, b' ');
    out.push(b'\n');
    Ok(out)
}

/// Writes the header text at its place and waits for the disk.
fn rewrite_header_text(mut file: &File, path: &Path, layout: &Layout, text: &[u8]) -> Result<()> {
    file.seek(SeekFrom::Start(layout.version.prefix_len() as u64))
        .map_err(io_error("seek in", path))?;
    file.write_all(text)
        .map_err(io_error("rewrite the header of", path))?;
    file.sync_data().map_err(io_error("sync", path))
}

/// Checks that the file holds its data and that the array can grow in
/// place; returns the growth axis and the bytes of one row.
fn check_growable(
    file: &File,
    path: &Path,
    header: &Header,
    layout: &Layout,
) -> Result<(usize, usize)> {
    let file_len = file.metadata().map_err(io_error("stat", path))?.len();
    if file_len < layout.data_end() as u64 {
        return Err(Error::FileTooShort {
            path: path.to_path_buf(),
            expected: layout.data_end() as u64,
            actual: file_len,
            data_offset: layout.data_offset,
            data_len: layout.data_len,
        });
    }
    let growth = growth_axis(header, path)?;
    // Refuse a file without room before anything is written.
    header_text_in_place(header, layout, path)?;
    Ok(growth)
}

/// Appends rows to an existing `.npy` file in place (see the [module
/// docs](self)).
///
/// Each [`append`](Self::append) is one transaction under the exclusive
/// lock: the header is re-read (another appender may have grown the file
/// meanwhile), the rows are written after the data and synced, then the
/// shape is rewritten and synced. No lock is held between appends. Batch
/// rows into few appends: each one waits for the disk twice.
#[derive(Debug)]
pub struct Appender {
    file: File,
    path: PathBuf,
    locking: Locking,
    header: Header,
    layout: Layout,
    axis: usize,
    row_bytes: usize,
}

impl Appender {
    /// Opens `path` for appending, waiting for locks as needed.
    ///
    /// Errors: the file cannot be opened read-write, its header is invalid,
    /// the file is shorter than its data, it cannot grow (0-d, rows of zero
    /// bytes: [`Error::CannotGrow`]) or its header has no room for a
    /// rewrite ([`Error::NoRoomToGrow`]).
    pub fn open(path: impl AsRef<Path>) -> Result<Appender> {
        Appender::open_with(path, Locking::Blocking)
    }

    /// Opens `path` for appending, taking locks as `locking` says.
    pub fn open_with(path: impl AsRef<Path>, locking: Locking) -> Result<Appender> {
        let path = path.as_ref();
        let file = open_regular(path, true)?;
        lock_shared(&file, path, Locks::Take(locking))?;
        let (header, layout) = read_header(&file, path, &ParseOptions::default())?;
        let (axis, row_bytes) = check_growable(&file, path, &header, &layout)?;
        file.unlock().map_err(io_error("unlock", path))?;
        Ok(Appender {
            file,
            path: path.to_path_buf(),
            locking,
            header,
            layout,
            axis,
            row_bytes,
        })
    }

    /// The header as of the last append (or opening).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The axis rows are appended along (0 for C order, the last for Fortran).
    pub fn axis(&self) -> usize {
        self.axis
    }

    /// Rows along the growth axis, as of the last append (or opening).
    pub fn rows(&self) -> usize {
        self.header.shape[self.axis]
    }

    /// Bytes in one row.
    pub fn row_bytes(&self) -> usize {
        self.row_bytes
    }

    /// Appends `data`, whole rows of elements in the file's memory order,
    /// and returns the new number of rows. `T` must match the dtype, as for
    /// a view.
    pub fn append<T: Element>(&mut self, data: &[T]) -> Result<usize> {
        let bytes = data.as_bytes();
        let mut shape = self.header.shape.clone();
        shape[self.axis] = self.whole_rows(bytes.len())?;
        // The view's checks are the type checks: dtype match, length.
        ArrayView::<T>::new(bytes, &self.header.dtype, &shape, self.header.order)?;
        self.append_bytes(bytes)
    }

    fn whole_rows(&self, bytes: usize) -> Result<usize> {
        if !bytes.is_multiple_of(self.row_bytes) {
            return Err(Error::PartialRow {
                bytes,
                row_bytes: self.row_bytes,
            });
        }
        Ok(bytes / self.row_bytes)
    }

    /// Appends raw rows (whole rows, the file's dtype and byte order) and
    /// returns the new number of rows.
    pub fn append_bytes(&mut self, bytes: &[u8]) -> Result<usize> {
        let added = self.whole_rows(bytes.len())?;
        let path = self.path.as_path();
        let _lock = ExclusiveLock::take(&self.file, path, Locks::Take(self.locking))?;
        // A save or an overwriting create renames a new file over the path:
        // appending to the old inode would succeed and reach nobody.
        if !still_at_path(&self.file, path)? {
            return Err(Error::Replaced {
                path: path.to_path_buf(),
            });
        }

        // Another appender may have grown the file since we last looked.
        (&self.file)
            .seek(SeekFrom::Start(0))
            .map_err(io_error("seek in", path))?;
        let parse = ParseOptions {
            max_header_size: self
                .layout
                .header_len
                .max(ParseOptions::default().max_header_size),
            ..Default::default()
        };
        let (current, layout) = read_header(&self.file, path, &parse)?;
        let same_array = current.shape.len() == self.header.shape.len() && {
            let mut ours = self.header.clone();
            ours.shape[self.axis] = current.shape[self.axis];
            ours == current && layout.data_offset == self.layout.data_offset
        };
        if !same_array {
            return Err(Error::CannotGrow {
                path: path.to_path_buf(),
                reason: "another process changed the file's dtype, order or shape".to_owned(),
            });
        }
        check_growable(&self.file, path, &current, &layout)?;
        let rows =
            current.shape[self.axis]
                .checked_add(added)
                .ok_or_else(|| Error::CannotGrow {
                    path: path.to_path_buf(),
                    reason: "the number of rows would overflow".to_owned(),
                })?;
        let mut header = current;
        header.shape[self.axis] = rows;
        let data_len = header.data_len().map_err(|source| Error::Header {
            path: path.to_path_buf(),
            source,
        })?;
        let text = header_text_in_place(&header, &layout, path)?;

        let mut file = &self.file;
        let end = layout.data_end() as u64;
        file.seek(SeekFrom::Start(end))
            .map_err(io_error("seek in", path))?;
        file.write_all(bytes)
            .map_err(io_error("append rows to", path))?;
        let new_end = end + bytes.len() as u64;
        // Bytes left after the data by an interrupted append are not data.
        let file_len = file.metadata().map_err(io_error("stat", path))?.len();
        if file_len > new_end {
            file.set_len(new_end)
                .map_err(io_error("set the length of", path))?;
        }
        file.sync_data().map_err(io_error("sync", path))?;
        rewrite_header_text(file, path, &layout, &text)?;

        self.header = header;
        self.layout = Layout { data_len, ..layout };
        Ok(rows)
    }
}

impl CreateOptions {
    /// Creates a file to be filled row by row when the number of rows is not
    /// known in advance; the shape's growth axis (0 for C order, the last
    /// for Fortran order) must be 0. See [`RowWriter`].
    ///
    /// The file stays exclusively locked until [`RowWriter::finish`], so
    /// readers that follow the locking rule never see it half-written.
    pub fn stream(&self, path: impl AsRef<Path>) -> Result<RowWriter> {
        let path = path.as_ref();
        let header = self.header();
        let (axis, row_bytes) = growth_axis(header, path)?;
        if header.shape[axis] != 0 {
            return Err(Error::CannotGrow {
                path: path.to_path_buf(),
                reason: format!(
                    "a streamed file starts with no rows: the length of axis {axis} must be 0"
                ),
            });
        }
        let (file, header_bytes, _) = self.write_exclusive(path)?;
        let npy_core::ParsedHeader { header, layout } =
            Header::parse(&header_bytes, &ParseOptions::default()).map_err(|source| {
                Error::Header {
                    path: path.to_path_buf(),
                    source,
                }
            })?;
        let mut file = BufWriter::new(file);
        file.seek(SeekFrom::End(0))
            .map_err(io_error("seek in", path))?;
        Ok(RowWriter {
            file,
            path: path.to_path_buf(),
            header,
            layout,
            axis,
            row_bytes,
            written: 0,
        })
    }
}

/// Writes a new `.npy` file row by row; [`finish`](Self::finish) fixes the
/// shape (created by [`CreateOptions::stream`]).
///
/// Rows go through a buffer straight after the header; the header says 0
/// rows until [`sync`](Self::sync) or [`finish`](Self::finish) rewrites the
/// growth axis in place. Dropped without `finish`, the file holds the rows
/// of the last `sync` (later bytes are ignored trailing bytes).
///
/// `RowWriter` implements [`Write`] for raw bytes (for `std::io::copy`).
#[derive(Debug)]
pub struct RowWriter {
    file: BufWriter<File>,
    path: PathBuf,
    header: Header,
    layout: Layout,
    axis: usize,
    row_bytes: usize,
    written: usize,
}

impl RowWriter {
    /// Whole rows written so far.
    pub fn rows(&self) -> usize {
        self.written / self.row_bytes
    }

    /// Bytes in one row.
    pub fn row_bytes(&self) -> usize {
        self.row_bytes
    }

    /// The header as of the last [`sync`](Self::sync) (0 rows before).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Writes elements in the file's memory order. Any number of elements
    /// may be written at a time; `sync` and `finish` need whole rows.
    pub fn write_rows<T: Element>(&mut self, data: &[T]) -> Result<()> {
        let mut element = &self.header.dtype;
        while let npy_core::DType::SubArray(base, _) = element {
            element = base;
        }
        // The view's check is the type check (and no-op for the length).
        ArrayView::<T>::new(data.as_bytes(), element, &[data.len()], Order::C)?;
        self.write_bytes(data.as_bytes())
    }

    /// Writes raw data bytes (the file's dtype and byte order).
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        let written = self
            .written
            .checked_add(bytes.len())
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(|| Error::CannotGrow {
                path: self.path.clone(),
                reason: "the data would be larger than the address space".to_owned(),
            })?;
        self.file
            .write_all(bytes)
            .map_err(io_error("write rows to", &self.path))?;
        self.written = written;
        Ok(())
    }

    /// Makes the rows written so far durable and describes them in the
    /// header (so a crash later keeps them, and lock-free readers see them).
    pub fn sync(&mut self) -> Result<()> {
        let rows = self.rows();
        if rows * self.row_bytes != self.written {
            return Err(Error::PartialRow {
                bytes: self.written - rows * self.row_bytes,
                row_bytes: self.row_bytes,
            });
        }
        let mut header = self.header.clone();
        header.shape[self.axis] = rows;
        header.data_len().map_err(|source| Error::Header {
            path: self.path.clone(),
            source,
        })?;
        let text = header_text_in_place(&header, &self.layout, &self.path)?;
        self.file
            .flush()
            .map_err(io_error("write rows to", &self.path))?;
        let file = self.file.get_ref();
        file.sync_data().map_err(io_error("sync", &self.path))?;
        rewrite_header_text(file, &self.path, &self.layout, &text)?;
        self.file
            .seek(SeekFrom::Start(
                (self.layout.data_offset + self.written) as u64,
            ))
            .map_err(io_error("seek in", &self.path))?;
        self.header = header;
        Ok(())
    }

    /// Syncs (see [`sync`](Self::sync)), closes the file (releasing its
    /// lock) and returns the final header.
    pub fn finish(mut self) -> Result<Header> {
        self.sync()?;
        Ok(self.header)
    }
}

impl Write for RowWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_bytes(buf).map_err(std::io::Error::other)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

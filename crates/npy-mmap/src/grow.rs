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
//! [`ErrorKind::Locked`] instead of waiting); lock-free readers such as numpy's
//! `np.load(mmap_mode='r')` are not waited for.
//!
//! A header without room (numpy before 1.24 wrote none, and some writers
//! pad only to 16 bytes) is refused with [`ErrorKind::NoRoomToGrow`], which says
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
//! let mut appender = npy_mmap::OpenOptions::new().append(&path)?;
//! assert_eq!(appender.append(&[10.0f32, 11.0, 12.0])?, 4);
//! drop(appender);
//!
//! let array = npy_mmap::open(&path)?;
//! assert_eq!(array.shape(), [4, 3]);
//! assert_eq!(array.view::<f32>()?.get(&[3, 2]), Some(&12.0));
//! # drop(array); std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use npy_core::{ArrayView, Element, Header, Layout, Order, ParseOptions, ParsedHeader};
use zerocopy::IntoBytes;

use crate::create::CreateOptions;
use crate::error::{Error, ErrorKind, Result, format_error, io_error};
use crate::file::{open_regular, read_header, still_at_path};
use crate::lock::{Locking, Locks, StructureLock, Writer, WriterLock};

/// The growth axis of `header` and the bytes of one row along it.
fn growth_axis(header: &Header, path: &Path) -> Result<(usize, usize)> {
    let cannot = |reason: &str| {
        Error::at(
            path,
            ErrorKind::CannotGrow {
                reason: reason.to_owned(),
            },
        )
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
        .map_err(format_error("parse", path))?;
    let text = bytes[layout.version.prefix_len()..].trim_ascii_end();
    let needed = text.len() + 1;
    if needed > layout.header_len {
        return Err(Error::at(
            path,
            ErrorKind::NoRoomToGrow {
                shape: format!("{:?}", header.shape),
                needed,
                available: layout.header_len,
            },
        ));
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
        return Err(Error::at(
            path,
            ErrorKind::FileTooShort {
                expected: layout.data_end() as u64,
                actual: file_len,
                data_offset: layout.data_offset,
                data_len: layout.data_len,
            },
        ));
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
    /// bytes: [`ErrorKind::CannotGrow`](crate::ErrorKind::CannotGrow)) or its header has no room for a
    /// rewrite ([`ErrorKind::NoRoomToGrow`](crate::ErrorKind::NoRoomToGrow)).
    pub(crate) fn open(path: &Path, parse: &ParseOptions, locks: Locks) -> Result<Appender> {
        let locking = match locks {
            Locks::Take(locking) => locking,
            // Appending rewrites the header: always under the lock.
            Locks::Ignore => Locking::default(),
        };
        let file = open_regular(path, true)?;
        let checked = StructureLock::shared(&file, path, Locks::Take(locking))?;
        let (header, layout) = read_header(&file, path, parse)?;
        let (axis, row_bytes) = check_growable(&file, path, &header, &layout)?;
        drop(checked);
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
        ArrayView::<T>::new(bytes, &self.header.dtype, &shape, self.header.order)
            .map_err(format_error("append to", &self.path))?;
        self.append_bytes(bytes)
    }

    fn whole_rows(&self, bytes: usize) -> Result<usize> {
        if !bytes.is_multiple_of(self.row_bytes) {
            return Err(Error::from(ErrorKind::PartialRow {
                bytes,
                row_bytes: self.row_bytes,
            }));
        }
        Ok(bytes / self.row_bytes)
    }

    /// Appends raw rows (whole rows, the file's dtype and byte order) and
    /// returns the new number of rows.
    pub fn append_bytes(&mut self, bytes: &[u8]) -> Result<usize> {
        self.append_chunks(bytes.len(), std::iter::once(Cow::Borrowed(bytes)))
    }

    /// Appends raw rows given as `chunks` of `len` bytes in all (whole
    /// rows, the file's dtype and byte order), written one after another in
    /// one append (one transaction, as [`append_bytes`](Self::append_bytes)):
    /// for rows copied a bounded piece at a time from memory others may
    /// write meanwhile. Chunks that do not add up to `len` are an error and
    /// leave the file's header (so its rows) as it was.
    pub fn append_chunks<'c>(
        &mut self,
        len: usize,
        chunks: impl IntoIterator<Item = Cow<'c, [u8]>>,
    ) -> Result<usize> {
        let added = self.whole_rows(len)?;
        let path = self.path.as_path();
        let _lock = StructureLock::exclusive(&self.file, path, Locks::Take(self.locking))?;
        // A save or an overwriting create renames a new file over the path:
        // appending to the old inode would succeed and reach nobody.
        if !still_at_path(&self.file, path)? {
            return Err(Error::at(path, ErrorKind::Replaced));
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
            return Err(Error::at(
                path,
                ErrorKind::CannotGrow {
                    reason: "another process changed the file's dtype, order or shape".to_owned(),
                },
            ));
        }
        check_growable(&self.file, path, &current, &layout)?;
        let rows = current.shape[self.axis].checked_add(added).ok_or_else(|| {
            Error::at(
                path,
                ErrorKind::CannotGrow {
                    reason: "the number of rows would overflow".to_owned(),
                },
            )
        })?;
        let mut header = current;
        header.shape[self.axis] = rows;
        let data_len = header.data_len().map_err(format_error("parse", path))?;
        let text = header_text_in_place(&header, &layout, path)?;

        let mut file = &self.file;
        let end = layout.data_end() as u64;
        file.seek(SeekFrom::Start(end))
            .map_err(io_error("seek in", path))?;
        let mut written = 0usize;
        for chunk in chunks {
            written = written.saturating_add(chunk.len());
            if written > len {
                break;
            }
            file.write_all(&chunk)
                .map_err(io_error("append rows to", path))?;
        }
        if written != len {
            // The header still says the old rows: what was written after
            // them is not data (and is cut off by the next append).
            return Err(format_error("append to", path)(
                npy_core::Error::DataLength {
                    expected: len,
                    actual: written,
                },
            ));
        }
        let new_end = end + len as u64;
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
            return Err(Error::at(
                path,
                ErrorKind::CannotGrow {
                    reason: format!(
                        "a streamed file starts with no rows: the length of axis {axis} must be 0"
                    ),
                },
            ));
        }
        let (file, header_bytes, _) = self.write_exclusive(path)?;
        // Already exclusive; registered so that this process's other uses
        // of the file fail at once instead of waiting for this writer.
        let lock = WriterLock::acquire(&file, path, self.locks(), Writer::Rows)?;
        let ParsedHeader { header, layout } =
            Header::parse(&header_bytes, &ParseOptions::default())
                .map_err(format_error("parse", path))?;
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
            published: false,
            _lock: lock,
        })
    }
}

/// Writes a new `.npy` file row by row; [`finish`](Self::finish) fixes the
/// shape (created by [`CreateOptions::stream`]).
///
/// Rows go through a buffer straight after the header; the header says 0
/// rows until [`sync`](Self::sync) or [`finish`](Self::finish) rewrites the
/// growth axis in place.
///
/// Dropped without `finish` (forgotten, or on an early return), it never
/// leaves something that passes for a finished array: a file that was never
/// synced is removed (a header claiming 0 rows would look like a complete,
/// empty array); one that was synced keeps the rows of its last `sync`,
/// which readers may have seen already (later bytes are ignored trailing
/// bytes, which `npy validate` reports).
///
/// `RowWriter` implements [`Write`] for raw bytes (for `std::io::copy`).
#[derive(Debug)]
#[must_use = "rows are described in the header only by sync() or finish()"]
pub struct RowWriter {
    /// Keeps this process's other uses of the file out until the writer
    /// goes. First, so that it is forgotten before the file closes (a
    /// removed file's inode number may then be reused).
    _lock: WriterLock,
    file: BufWriter<File>,
    path: PathBuf,
    header: Header,
    layout: Layout,
    axis: usize,
    row_bytes: usize,
    written: usize,
    /// Whether a `sync` published rows (or `finish` completed).
    published: bool,
}

impl Drop for RowWriter {
    fn drop(&mut self) {
        if self.published {
            return;
        }
        // Never synced nor finished: remove the file, if the path still names
        // it (best effort; the error, if any, has nobody to go to).
        if crate::file::still_at_path(self.file.get_ref(), &self.path).unwrap_or(false) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
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
        ArrayView::<T>::new(data.as_bytes(), element, &[data.len()], Order::C)
            .map_err(format_error("write to", &self.path))?;
        self.write_bytes(data.as_bytes())
    }

    /// Writes raw data bytes (the file's dtype and byte order).
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        let written = self
            .written
            .checked_add(bytes.len())
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(|| {
                Error::at(
                    &self.path,
                    ErrorKind::CannotGrow {
                        reason: "the data would be larger than the address space".to_owned(),
                    },
                )
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
            return Err(Error::from(ErrorKind::PartialRow {
                bytes: self.written - rows * self.row_bytes,
                row_bytes: self.row_bytes,
            }));
        }
        let mut header = self.header.clone();
        header.shape[self.axis] = rows;
        header
            .data_len()
            .map_err(|source| format_error("parse", &self.path)(source))?;
        let text = header_text_in_place(&header, &self.layout, &self.path)?;
        self.file
            .flush()
            .map_err(io_error("write rows to", &self.path))?;
        let file = self.file.get_ref();
        file.sync_data().map_err(io_error("sync", &self.path))?;
        rewrite_header_text(file, &self.path, &self.layout, &text)?;
        self.published = true;
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
        Ok(self.header.clone())
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

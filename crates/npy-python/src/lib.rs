//! `npy_mmap._native`: the Rust half of the Python package `npy_mmap`.
//!
//! A thin front over npy-core, npy-mmap and npy-remote: every format rule
//! (headers, dtypes, pickles, npz, locks) is theirs. This module turns
//! their results into parts the Python half (`python/npy_mmap`) makes
//! numpy arrays of: a [`Buffer`](buffer::Buffer) (bytes lent through the
//! buffer protocol, zero-copy), the dtype as the header's descr literal,
//! the shape and the order. Long calls release the GIL.
#![deny(missing_docs)]
#![deny(unsafe_code)]

mod arguments;
#[allow(unsafe_code)]
mod buffer;
#[allow(unsafe_code)]
mod door_in;
mod errors;
mod files;
mod live;
mod npz;
mod npz_bytes;
mod npz_lazy;
mod objects;
mod remote;
mod stream_out;
mod window_file;

use std::path::PathBuf;

use npy_core::header::{ParseOptions, Version};
use npy_core::{DType, Header, Order};
use npy_mmap::{CreateOptions, ForeignMode, OpenOptions};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use arguments::{advice, encoding, header, locking, open_options};
use buffer::{Backing, Buffer};
use errors::{core_error, mmap_error, value_error};
use objects::{Parts, array_parts, object_array, object_parts};

/// Reads a whole `.npy` file into memory (`np.load` without `mmap_mode`).
#[pyfunction]
#[pyo3(signature = (path, max_header_size, allow_pickle, encoding, locking=None))]
fn load(
    py: Python<'_>,
    path: PathBuf,
    max_header_size: usize,
    allow_pickle: bool,
    encoding: &str,
    locking: Option<&Bound<'_, PyAny>>,
) -> PyResult<Parts> {
    let options = open_options(
        max_header_size,
        allow_pickle,
        encoding,
        self::locking(locking)?,
    )?;
    // Decoded without the GIL; an object array's items are made with it,
    // as Python objects straight from the pickle's text.
    let loaded = py.detach(|| options.load_decoded(&path)).map_err(mmap_error)?;
    warn_if_python2(py, loaded.layout().python2_header)?;
    match loaded {
        npy_mmap::Loaded::Array(array) => array_parts(py, array),
        npy_mmap::Loaded::Objects(objects) => object_parts(py, objects),
    }
}

/// numpy's `UserWarning` for a header written by Python 2 (a `2L` long),
/// when the parse said so: the header is read once, by the parse.
fn warn_if_python2(py: Python<'_>, python2_header: bool) -> PyResult<()> {
    if python2_header {
        py.import("npy_mmap._common")?
            .getattr("_warn_python2")?
            .call0()?;
    }
    Ok(())
}

/// Reads one `.npy` from the start of `data` (the rest of a file object):
/// its parts and how many bytes it used.
#[pyfunction]
fn load_bytes(
    py: Python<'_>,
    data: Vec<u8>,
    max_header_size: usize,
    allow_pickle: bool,
    encoding: &str,
) -> PyResult<(Parts, u64)> {
    let mut options = npy_core::io::ReadOptions::default();
    options.parse.max_header_size = max_header_size;
    options.parse.allow_pickle = allow_pickle;
    options.pickle.encoding = self::encoding(encoding)?;
    let mut cursor = std::io::Cursor::new(data);
    let array = py
        .detach(|| npy_core::io::read_npy(&mut cursor, &options))
        .map_err(core_error)?;
    Ok((array_parts(py, array)?, cursor.position()))
}

/// What a mapping is handed back as: the buffer, the descr literal, the
/// mapped shape, Fortran or not, the data's offset in the file and the
/// mapped rows.
type Mapped = (Py<Buffer>, String, Vec<usize>, bool, usize, (usize, usize));

/// What the Python half needs of a mapping besides its bytes (any of
/// npy-mmap's mapped types has these accessors).
macro_rules! description {
    ($array:expr) => {{
        let array = $array;
        let rows = array.rows();
        (
            array.dtype().header_repr(),
            array.shape().to_vec(),
            array.order() == Order::Fortran,
            array.layout().data_offset + rows.start * array.row_bytes(),
            (rows.start, rows.end),
        )
    }};
}

/// A mapping's description and whether its header was Python 2's.
macro_rules! described {
    ($array:expr) => {{
        let array = $array;
        (description!(array), array.layout().python2_header)
    }};
}

/// A buffer over `backing` and its description, as handed to Python.
fn handed_back(
    py: Python<'_>,
    backing: Backing,
    meta: (String, Vec<usize>, bool, usize, (usize, usize)),
    what: String,
) -> PyResult<Mapped> {
    let buffer = Py::new(py, Buffer::new(backing, what))?;
    Ok((buffer, meta.0, meta.1, meta.2, meta.3, meta.4))
}

/// Maps an `.npy` file: mode `r`, `r+` or `c`, optionally a window of rows;
/// shared as numpy shares (foreign mappings), or `strict` (mappings that
/// exclude every writer of their bytes, as Rust references need). With
/// `headerless`, a binary file without a header (`np.memmap`'s arguments).
#[pyfunction]
#[pyo3(signature = (path, mode, max_header_size, window=None, locking=None, advice=None, strict=false, headerless=None))]
#[allow(clippy::too_many_arguments)]
fn open_mapped(
    py: Python<'_>,
    path: PathBuf,
    mode: &str,
    max_header_size: usize,
    window: Option<(usize, usize)>,
    locking: Option<&Bound<'_, PyAny>>,
    advice: Option<&str>,
    strict: bool,
    headerless: Option<arguments::HeaderlessArgs>,
) -> PyResult<Mapped> {
    let mut options = OpenOptions::new();
    if let Some(args) = headerless {
        options.headerless(arguments::headerless(args)?);
    }
    options
        .max_header_size(max_header_size)
        .locking(self::locking(locking)?);
    if let Some((start, stop)) = window {
        options.rows(start..stop);
    }
    if let Some(name) = advice {
        options.advice(self::advice(name)?);
    }
    let what = path.display().to_string();
    let mode = arguments::mode(mode)?;
    let (backing, (meta, python2)) = match (mode, strict) {
        (mode, false) => {
            let array = py
                .detach(|| options.open_foreign(&path, mode))
                .map_err(mmap_error)?;
            let meta = described!(&array);
            (Backing::Foreign(array), meta)
        }
        (ForeignMode::ReadOnly, true) => {
            let array = py.detach(|| options.open(&path)).map_err(mmap_error)?;
            let meta = described!(&array);
            (Backing::Read(array), meta)
        }
        (ForeignMode::ReadWrite, true) => {
            let array = py.detach(|| options.open_rw(&path)).map_err(mmap_error)?;
            let meta = described!(&array);
            (Backing::Write(array), meta)
        }
        (ForeignMode::CopyOnWrite, true) => {
            let array = py.detach(|| options.open_cow(&path)).map_err(mmap_error)?;
            let meta = described!(&array);
            (Backing::Cow(array), meta)
        }
    };
    let mapped = handed_back(py, backing, meta, what)?;
    warn_if_python2(py, python2)?;
    Ok(mapped)
}

/// Creates an `.npy` file sized for its data (numpy's `open_memmap` with
/// mode `w+`), mapped read-write; `reserve` allocates every block now.
#[pyfunction]
#[pyo3(signature = (path, descr, shape, fortran, reserve=false, locking=None, version=None, strict=false))]
#[allow(clippy::too_many_arguments)]
fn create(
    py: Python<'_>,
    path: PathBuf,
    descr: &str,
    shape: Vec<usize>,
    fortran: bool,
    reserve: bool,
    locking: Option<&Bound<'_, PyAny>>,
    version: Option<u8>,
    strict: bool,
) -> PyResult<Mapped> {
    let header = header(descr, shape, fortran)?;
    let mut options = CreateOptions::new(header.dtype, header.shape);
    options
        .order(header.order)
        .overwrite(true)
        .reserve(reserve)
        .locking(self::locking(locking)?);
    if let Some(major) = version {
        options.version(match major {
            1 => Version::V1,
            2 => Version::V2,
            3 => Version::V3,
            _ => {
                return Err(value_error(format!(
                    "we only support format version (1,0), (2,0), and (3,0), not ({major}, 0)"
                )));
            }
        });
    }
    let what = path.display().to_string();
    if strict {
        let array = py.detach(|| options.create(&path)).map_err(mmap_error)?;
        let meta = description!(&array);
        return handed_back(py, Backing::Write(array), meta, what);
    }
    let array = py
        .detach(|| options.create_foreign(&path))
        .map_err(mmap_error)?;
    let meta = description!(&array);
    handed_back(py, Backing::Foreign(array), meta, what)
}

/// Saves `source` at `path` atomically (a temporary file renamed over it,
/// never a truncation in place); `durable` also syncs the file and its
/// folder (`npy_mmap::save`), else not (`save_unsynced`, numpy's speed).
fn save_to(
    path: &std::path::Path,
    source: &(impl npy_core::NpySource + ?Sized),
    durable: bool,
) -> PyResult<()> {
    if durable {
        npy_mmap::save(path, source)
    } else {
        npy_mmap::save_unsynced(path, source)
    }
    .map_err(mmap_error)
}

/// Writes `data` (the array's bytes in the header's order) as an `.npy`
/// file: a temporary file renamed over `path`, never a truncation in place.
#[pyfunction]
#[pyo3(signature = (path, descr, shape, fortran, data, durable=false))]
fn save(
    py: Python<'_>,
    path: PathBuf,
    descr: &str,
    shape: Vec<usize>,
    fortran: bool,
    data: &Bound<'_, PyAny>,
    durable: bool,
) -> PyResult<()> {
    door_in::with_source(
        py,
        (descr, shape, fortran),
        data,
        door_in::Use::File,
        |source| save_to(&path, source, durable),
    )
}

/// Writes an object array (numpy's pickle, byte for byte) as an `.npy` file.
#[pyfunction]
#[pyo3(signature = (path, shape, fortran, values, durable=false))]
fn save_objects(
    py: Python<'_>,
    path: PathBuf,
    shape: Vec<usize>,
    fortran: bool,
    values: &Bound<'_, PyAny>,
    durable: bool,
) -> PyResult<()> {
    let array = object_array(shape, fortran, values)?;
    py.detach(|| save_to(&path, &array, durable))
}

/// The complete `.npy` file of an object array, as bytes (for file objects).
#[pyfunction]
fn object_npy_bytes<'py>(
    py: Python<'py>,
    shape: Vec<usize>,
    fortran: bool,
    values: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let array = object_array(shape, fortran, values)?;
    let mut out = Vec::new();
    npy_core::io::write_npy(&mut out, &array).map_err(core_error)?;
    Ok(PyBytes::new(py, &out))
}

/// The header bytes numpy writes for this array (magic, version, length,
/// dict, padding): what precedes the data in the file.
#[pyfunction]
fn header_bytes<'py>(
    py: Python<'py>,
    descr: &str,
    shape: Vec<usize>,
    fortran: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let header = header(descr, shape, fortran)?;
    let bytes = header.to_bytes(None).map_err(core_error)?;
    Ok(PyBytes::new(py, &bytes))
}

/// Parses the header at the start of `data` (bytes of a file's beginning):
/// the descr literal, shape, Fortran or not, and the data offset; `warn`
/// gives numpy's warning for a header written by Python 2.
#[pyfunction]
#[pyo3(signature = (data, max_header_size, allow_pickle, warn=false))]
fn parse_header(
    py: Python<'_>,
    data: &[u8],
    max_header_size: usize,
    allow_pickle: bool,
    warn: bool,
) -> PyResult<(String, Vec<usize>, bool, usize)> {
    let options = ParseOptions {
        max_header_size,
        allow_pickle,
    };
    let parsed = Header::parse(data, &options).map_err(core_error)?;
    if warn {
        warn_if_python2(py, parsed.layout.python2_header)?;
    }
    Ok((
        parsed.header.dtype.header_repr(),
        parsed.header.shape,
        parsed.header.order == Order::Fortran,
        parsed.layout.data_offset,
    ))
}

/// Appends rows (their bytes, C order) to an `.npy` file in place, under the
/// file's exclusive lock; the dtype and the row shape must be the file's.
/// Returns the new number of rows.
#[pyfunction]
#[pyo3(signature = (path, descr, row_shape, data, locking=None))]
fn append(
    py: Python<'_>,
    path: PathBuf,
    descr: &str,
    row_shape: Vec<usize>,
    data: &Bound<'_, PyAny>,
    locking: Option<&Bound<'_, PyAny>>,
) -> PyResult<usize> {
    let dtype = DType::parse(descr).map_err(core_error)?;
    let mut options = OpenOptions::new();
    options.locking(self::locking(locking)?);
    let mut appender = py.detach(|| options.append(&path)).map_err(mmap_error)?;
    let file_header = appender.header().clone();
    let axis = appender.axis();
    let mut file_row_shape = file_header.shape.clone();
    if axis < file_row_shape.len() {
        file_row_shape.remove(axis);
    }
    if file_header.dtype != dtype || file_row_shape != row_shape {
        return Err(value_error(format!(
            "cannot append rows of dtype {} and row shape {:?} to {}: its dtype is {} and \
             its rows have shape {:?}",
            dtype.descr(),
            row_shape,
            path.display(),
            file_header.dtype.descr(),
            file_row_shape
        )));
    }
    let incoming = door_in::Incoming::new(data)?;
    py.detach(|| incoming.append_to(&mut appender))
        .map_err(mmap_error)
}

/// Gathers `indices` (the bytes of a C-contiguous native int64 array, read
/// through the door in; negative counts from
/// the end) of the `count` items of `width` bytes at byte `offset` of a
/// buffer, with the GIL released and through npy-mmap's planned gather (a
/// cold file's pages are read ahead all at once; runs of neighbouring items
/// are copied at once). Returns `None` for a buffer Rust must not read
/// while numpy may write it (the caller uses `numpy.take`).
#[pyfunction]
fn take(
    py: Python<'_>,
    source: &Bound<'_, Buffer>,
    offset: usize,
    width: usize,
    count: usize,
    indices: &Bound<'_, PyAny>,
) -> PyResult<Option<Py<Buffer>>> {
    if width == 0 {
        return Err(value_error("take: item width must be > 0"));
    }
    let span = width
        .checked_mul(count)
        .and_then(|n| n.checked_add(offset))
        .ok_or_else(|| value_error("take: item range overflows"))?;
    let available = source.get().len();
    if span > available {
        return Err(value_error(format!(
            "take: {count} items of {width} bytes at offset {offset} exceed the {available} \
             mapped bytes"
        )));
    }
    // Every index checked (numpy's words) before anything is read;
    // neighbouring items (windows, rows) become one span each.
    let mut spans: Vec<std::ops::Range<usize>> = Vec::new();
    let indices = door_in::Incoming::new(indices)?.copied();
    if !indices.len().is_multiple_of(8) {
        return Err(value_error("take: the indices must be native int64"));
    }
    for index in indices.chunks_exact(8) {
        let raw = i64::from_ne_bytes([
            index[0], index[1], index[2], index[3], index[4], index[5], index[6], index[7],
        ]);
        let position = if raw < 0 {
            (count as i64).checked_add(raw)
        } else {
            Some(raw)
        };
        let Some(position) = position.filter(|p| *p >= 0 && (*p as u64) < count as u64) else {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "index {raw} is out of bounds for axis 0 with size {count}"
            )));
        };
        let start = offset + position as usize * width;
        match spans.last_mut() {
            Some(last) if last.end == start => last.end = start + width,
            _ => spans.push(start..start + width),
        }
    }
    match source.get().gather_spans(py, &spans)? {
        None => Ok(None),
        Some(bytes) => Ok(Some(Py::new(
            py,
            Buffer::new(Backing::Owned(bytes), "a gathered array".into()),
        )?)),
    }
}

/// The byte spans in a buffer of `length` rows from each of `starts` of
/// the `rows` rows of `row_bytes` bytes at byte `offset` (npy-core's
/// windows, numpy's error for the first row past the end).
fn window_ranges(
    source: &Buffer,
    offset: usize,
    row_bytes: usize,
    rows: usize,
    starts: &[usize],
    length: usize,
) -> PyResult<Vec<std::ops::Range<usize>>> {
    let fits = row_bytes
        .checked_mul(rows)
        .and_then(|n| n.checked_add(offset))
        .is_some_and(|end| end <= source.len());
    if !fits {
        return Err(value_error(format!(
            "windows: {rows} rows of {row_bytes} bytes at offset {offset} exceed the {} \
             mapped bytes",
            source.len()
        )));
    }
    // Each row an opaque item of `row_bytes` bytes: npy-core's rule for
    // windows, checked once, for any dtype and row shape.
    let rows_header = Header::new(
        DType::parse(&format!("|V{row_bytes}")).map_err(core_error)?,
        Order::C,
        vec![rows],
    );
    let windows = npy_core::plan::Windows::of(&rows_header, starts, length)
        .map_err(|error| pyo3::exceptions::PyIndexError::new_err(error.to_string()))?;
    Ok(windows
        .ranges()
        .into_iter()
        .map(|span| span.start + offset..span.end + offset)
        .collect())
}

/// Windows of rows: `length` rows from each of `starts` of the rows
/// `(offset, row_bytes, rows)` of a buffer describes (`rows` rows of
/// `row_bytes` bytes at byte `offset`), with the GIL
/// released. `action` says what is done with their bytes: `"gather"` copies
/// them into a new buffer through npy-mmap's planner (cold: the windows'
/// pages read ahead all at once; each window one copy; `None` for a buffer
/// Rust must not read while numpy may write it), `"prefetch"` starts
/// reading their pages and returns at once, `"release"` gives their pages
/// back (a batch that was used). One function for the three: the same
/// spans, checked the same way, from the same finder (`_windows.py`).
#[pyfunction]
fn windows(
    py: Python<'_>,
    action: &str,
    source: &Bound<'_, Buffer>,
    rows: (usize, usize, usize),
    starts: Vec<usize>,
    length: usize,
) -> PyResult<Option<Py<Buffer>>> {
    let (offset, row_bytes, rows) = rows;
    let source = source.get();
    let spans = window_ranges(source, offset, row_bytes, rows, &starts, length)?;
    match action {
        "gather" => match source.gather_spans(py, &spans)? {
            None => Ok(None),
            Some(bytes) => Ok(Some(Py::new(
                py,
                Buffer::new(Backing::Owned(bytes), "a batch of windows".into()),
            )?)),
        },
        "prefetch" => source.prefetch(py, &spans).map(|()| None),
        "release" => source.release(py, &spans).map(|()| None),
        other => Err(value_error(format!(
            "windows: action must be 'gather', 'prefetch' or 'release', not {other:?}"
        ))),
    }
}

/// Flushes a writable mapping to disk (`msync`); a no-op for others.
#[pyfunction]
fn flush(py: Python<'_>, source: &Bound<'_, Buffer>) -> PyResult<()> {
    source.get().with_backing(py, |backing| match backing {
        Backing::Foreign(array) => array.flush(),
        Backing::Write(array) => array.flush(),
        _ => Ok(()),
    })
}

/// Gives the kernel an access-pattern hint for a mapping (`madvise`).
#[pyfunction]
fn advise(py: Python<'_>, source: &Bound<'_, Buffer>, name: &str) -> PyResult<()> {
    let hint = advice(name)?;
    source.get().with_backing(py, |backing| match backing {
        Backing::Foreign(array) => array.advise(hint),
        Backing::Read(array) => array.advise(hint),
        Backing::Write(array) => array.advise(hint),
        Backing::Cow(array) => array.advise(hint),
        _ => Ok(()),
    })
}

/// The Rust half of `npy_mmap`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Buffer>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(load_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(open_mapped, m)?)?;
    m.add_function(wrap_pyfunction!(create, m)?)?;
    m.add_function(wrap_pyfunction!(save, m)?)?;
    m.add_function(wrap_pyfunction!(save_objects, m)?)?;
    m.add_function(wrap_pyfunction!(object_npy_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(header_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(parse_header, m)?)?;
    m.add_function(wrap_pyfunction!(append, m)?)?;
    m.add_function(wrap_pyfunction!(take, m)?)?;
    m.add_function(wrap_pyfunction!(windows, m)?)?;
    m.add_function(wrap_pyfunction!(flush, m)?)?;
    m.add_function(wrap_pyfunction!(advise, m)?)?;
    npz::register(m)?;
    npz_lazy::register(m)?;
    npz_bytes::register(m)?;
    live::register(m)?;
    remote::register(m)?;
    files::register(m)?;
    window_file::register(m)?;
    Ok(())
}

//! The natives of `_io.py` (whole arrays: `load`, `save`, object arrays)
//! and the header functions the other modules share (`_common`, `_rows`'s
//! `read_header`, `_pin`, `dask`).

use std::path::PathBuf;

use npy_core::header::ParseOptions;
use npy_core::{Header, Order};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::arguments::{encoding, header, locking, open_options};
use crate::door_in;
use crate::errors::{core_error, mmap_error, warn_if_python2};
use crate::objects::{Parts, array_parts, object_array, object_parts};

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
    // Read without the GIL; an object array's pickle is decoded with it,
    // each str made as a Python object as it is read (one pass).
    let loaded = py
        .detach(|| options.load_deferred(&path))
        .map_err(mmap_error)?;
    warn_if_python2(py, loaded.layout().python2_header)?;
    match loaded {
        npy_mmap::Loaded::Array(array) => array_parts(py, array),
        npy_mmap::Loaded::Objects(objects) => object_parts(py, objects),
    }
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

/// Adds the functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(load_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(save, m)?)?;
    m.add_function(wrap_pyfunction!(save_objects, m)?)?;
    m.add_function(wrap_pyfunction!(object_npy_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(header_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(parse_header, m)?)?;
    Ok(())
}

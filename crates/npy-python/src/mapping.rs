//! The natives of `_mapping.py` (and `_common`'s `_open_mapped`): mapping
//! an `.npy` file, creating one mapped, and a mapping's flush and hints.

use std::path::PathBuf;

use npy_core::Order;
use npy_core::header::Version;
use npy_mmap::{CreateOptions, ForeignMode, OpenOptions};
use pyo3::prelude::*;

use crate::arguments::{self, advice, header, locking};
use crate::buffer::{Backing, Buffer};
use crate::errors::{mmap_error, value_error, warn_if_python2};

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

/// Adds the functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(open_mapped, m)?)?;
    m.add_function(wrap_pyfunction!(create, m)?)?;
    m.add_function(wrap_pyfunction!(flush, m)?)?;
    m.add_function(wrap_pyfunction!(advise, m)?)?;
    Ok(())
}

//! `.npz` archives held by Python (`load(io.BytesIO(...))`, `load(open(...))`:
//! the bytes a file object gave): members are read straight from the
//! Python buffer (through the one door in: private bytes as they are,
//! anything else from one atomic copy) with the GIL released, the one copy being into the
//! array's own memory (CRC-32 checked as it goes), and deflated members
//! with a block index inflate on every core.

use pyo3::prelude::*;

use crate::arguments::open_options;
use crate::door_in::Incoming;
use crate::errors::mmap_error;
use crate::npz::{MemberResult, member_result};

/// numpy's keys and the member names of the archive in `data`.
#[pyfunction]
fn npz_buffer_keys(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    max_header_size: usize,
    allow_pickle: bool,
    encoding: &str,
) -> PyResult<(Vec<String>, Vec<String>)> {
    let options = open_options(
        max_header_size,
        allow_pickle,
        encoding,
        npy_mmap::Locking::default(),
    )?;
    Incoming::new(data)?
        .read_whole(py, |bytes| {
            let archive = options.read_npz(std::io::Cursor::new(bytes))?;
            Ok((archive.keys().to_vec(), archive.member_names().to_vec()))
        })
        .map_err(mmap_error)
}

/// Member `key` of the archive in `data`, as `NpzReader.get` gives it.
#[pyfunction]
fn npz_buffer_get(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    key: &str,
    max_header_size: usize,
    allow_pickle: bool,
    encoding: &str,
) -> PyResult<MemberResult> {
    let options = open_options(
        max_header_size,
        allow_pickle,
        encoding,
        npy_mmap::Locking::default(),
    )?;
    let member = Incoming::new(data)?
        .read_whole(py, |bytes| {
            options
                .read_npz(std::io::Cursor::new(bytes))
                .and_then(|mut archive| archive.get(key))
        })
        .map_err(mmap_error)?;
    member_result(py, member)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(npz_buffer_keys, m)?)?;
    m.add_function(wrap_pyfunction!(npz_buffer_get, m)?)
}

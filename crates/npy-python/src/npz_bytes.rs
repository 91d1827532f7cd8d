//! `.npz` archives held by Python (`load(io.BytesIO(...))`, `load(open(...))`:
//! the bytes a file object gave): members are read straight from the
//! Python buffer (through the one door in: private bytes as they are,
//! anything else from one atomic copy) with the GIL released, the one copy being into the
//! array's own memory (CRC-32 checked as it goes), and deflated members
//! with a block index inflate on every core.

use std::io::Cursor;

use npy_mmap::npz::NpzArchive;
use pyo3::prelude::*;

use crate::arguments::archive_options;
use crate::door_in::Incoming;
use crate::errors::mmap_error;
use crate::npz::{MemberResult, member_result};

/// `f` of the archive in `data` (read through the one door in), with the
/// GIL released: what each function here does with it.
fn with_archive<T: Send>(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    (max_header_size, allow_pickle, encoding): (usize, bool, &str),
    f: impl FnOnce(NpzArchive<Cursor<&[u8]>>) -> npy_mmap::Result<T> + Send,
) -> PyResult<T> {
    let options = archive_options(max_header_size, allow_pickle, encoding)?;
    Incoming::new(data)?
        .read_whole(py, |bytes| options.read_npz(Cursor::new(bytes)).and_then(f))
        .map_err(mmap_error)
}

/// numpy's keys and the member names of the archive in `data`.
#[pyfunction]
fn npz_buffer_keys(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    max_header_size: usize,
    allow_pickle: bool,
    encoding: &str,
) -> PyResult<(Vec<String>, Vec<String>)> {
    with_archive(
        py,
        data,
        (max_header_size, allow_pickle, encoding),
        |archive| Ok((archive.keys().to_vec(), archive.member_names().to_vec())),
    )
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
    let member = with_archive(
        py,
        data,
        (max_header_size, allow_pickle, encoding),
        |mut archive| archive.get(key),
    )?;
    member_result(py, member)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(npz_buffer_keys, m)?)?;
    m.add_function(wrap_pyfunction!(npz_buffer_get, m)?)
}

//! Files the package writes by other means than a save: through the one
//! atomic commit all the same (npy-mmap's `AtomicFile`).

use std::path::PathBuf;

use npy_mmap::AtomicFile;
use pyo3::prelude::*;

use crate::errors::mmap_error;

/// Commits a file made under another name in its destination's folder (a
/// Dask target's partial file): the old file's mode kept, synced, renamed
/// over `dest` (refused if `dest` exists, unless `replace`), the folder
/// synced. The GIL is released.
#[pyfunction]
#[pyo3(signature = (prepared, dest, replace=true))]
fn commit_prepared(
    py: Python<'_>,
    prepared: PathBuf,
    dest: PathBuf,
    replace: bool,
) -> PyResult<()> {
    py.detach(|| AtomicFile::commit_prepared(&prepared, &dest, replace))
        .map_err(mmap_error)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(commit_prepared, m)?)
}

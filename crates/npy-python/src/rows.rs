//! The natives of `_rows.py` (`append`, `take`) and `_windows.py`
//! (`windows`, `prefetch_windows`, `release_windows`): rows of a file or a
//! buffer, with the GIL released.

use std::path::PathBuf;

use npy_core::{DType, Header, Order};
use npy_mmap::OpenOptions;
use pyo3::prelude::*;

use crate::arguments::locking;
use crate::buffer::Buffer;
use crate::door_in;
use crate::errors::{core_error, mmap_error, value_error};

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
        Some(bytes) => Ok(Some(Buffer::owned(py, bytes, "a gathered array")?)),
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
            Some(bytes) => Ok(Some(Buffer::owned(py, bytes, "a batch of windows")?)),
        },
        "prefetch" => source.prefetch(py, &spans).map(|()| None),
        "release" => source.release(py, &spans).map(|()| None),
        other => Err(value_error(format!(
            "windows: action must be 'gather', 'prefetch' or 'release', not {other:?}"
        ))),
    }
}

/// Adds the functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(append, m)?)?;
    m.add_function(wrap_pyfunction!(take, m)?)?;
    m.add_function(wrap_pyfunction!(windows, m)?)?;
    Ok(())
}

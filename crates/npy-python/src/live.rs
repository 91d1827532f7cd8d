//! Live arrays: a file mapped for sharing *while* it changes, between
//! threads and processes (Python or Rust). Updates are atomic
//! read-modify-writes (`add`), reads are snapshots of one atomic load per
//! element, so no aligned element is ever torn. numpy never sees the
//! mapping itself (plain numpy views of bytes others write would race).

use std::path::PathBuf;
use std::sync::RwLock;
use std::sync::atomic::Ordering;

use npy_core::dtype::ScalarKind;
use npy_core::io::AlignedBytes;
use npy_core::{DType, Order};
use npy_mmap::{LiveArray, OpenOptions};
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;

use crate::buffer::Buffer;
use crate::errors::{mmap_error, value_error};

/// Runs `$body` with `$t` the Rust type of the live dtype `$dtype`.
macro_rules! with_live_type {
    ($dtype:expr, $t:ident => $body:expr) => {{
        let (kind, size) = match $dtype {
            DType::Scalar(s) => (s.kind, s.itemsize),
            other => {
                return Err(PyTypeError::new_err(format!(
                    "live arrays hold integers or floats, not {}",
                    other.descr()
                )));
            }
        };
        match (kind, size) {
            (ScalarKind::UInt, 1) => {
                type $t = u8;
                $body
            }
            (ScalarKind::UInt, 2) => {
                type $t = u16;
                $body
            }
            (ScalarKind::UInt, 4) => {
                type $t = u32;
                $body
            }
            (ScalarKind::UInt, 8) => {
                type $t = u64;
                $body
            }
            (ScalarKind::Int, 1) => {
                type $t = i8;
                $body
            }
            (ScalarKind::Int, 2) => {
                type $t = i16;
                $body
            }
            (ScalarKind::Int, 4) => {
                type $t = i32;
                $body
            }
            (ScalarKind::Int, 8) => {
                type $t = i64;
                $body
            }
            (ScalarKind::Float, 4) => {
                type $t = f32;
                $body
            }
            (ScalarKind::Float, 8) => {
                type $t = f64;
                $body
            }
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "live arrays hold integers or floats of 1 to 8 bytes, not {}",
                    $dtype.descr()
                )));
            }
        }
    }};
}

/// An `.npy` file mapped live (`npy_mmap.open_live`).
#[pyclass(module = "npy_mmap._native", frozen)]
pub struct Live {
    /// Read-locked by every use (with the GIL released), write-locked by `close`.
    array: RwLock<Option<LiveArray>>,
    descr: String,
    shape: Vec<usize>,
    fortran: bool,
}

impl Live {
    /// Runs `f` on the array with the GIL released; the lock is taken only
    /// after the GIL is given up, so no thread holding the GIL waits for one
    /// that needs it back.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&LiveArray) -> PyResult<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let guard = self.array.read().unwrap_or_else(|e| e.into_inner());
            match guard.as_ref() {
                Some(array) => f(array),
                None => Err(value_error("the live array is closed")),
            }
        })
    }
}

#[pymethods]
impl Live {
    /// Maps `path` live (optionally a window of rows).
    #[new]
    #[pyo3(signature = (path, window=None, locking=None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        window: Option<(usize, usize)>,
        locking: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut options = OpenOptions::new();
        options.locking(crate::arguments::locking(locking)?);
        if let Some(rows) = window {
            options.rows(crate::arguments::rows(rows));
        }
        let array = py.detach(|| options.open_live(&path)).map_err(mmap_error)?;
        Ok(Live {
            descr: array.header().dtype.header_repr(),
            shape: array.shape().to_vec(),
            fortran: array.header().order == Order::Fortran,
            array: RwLock::new(Some(array)),
        })
    }

    /// The dtype's descr literal.
    #[getter]
    fn descr(&self) -> String {
        self.descr.clone()
    }

    /// The mapped shape.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.shape.clone()
    }

    /// Whether the data is in Fortran order.
    #[getter]
    fn fortran(&self) -> bool {
        self.fortran
    }

    /// Atomically adds `values[i]` to element `indices[i]` (flat positions
    /// in memory order, native int64 bytes; values native bytes of the
    /// dtype), with the GIL released. Integers wrap, as in numpy.
    fn add(&self, py: Python<'_>, indices: Vec<u8>, values: Vec<u8>) -> PyResult<()> {
        self.with(py, |array| {
            let dtype = array.header().dtype.clone();
            with_live_type!(&dtype, T => {
                let width = std::mem::size_of::<T>();
                if !indices.len().is_multiple_of(8) || values.len() != indices.len() / 8 * width {
                    return Err(value_error("add: one value per index is needed"));
                }
                let cells = array.atomics::<T>().map_err(mmap_error)?;
                // Every index is checked before the first add (numpy's
                // `add.at` applies nothing when one index is bad).
                let positions = indices
                    .chunks_exact(8)
                    .map(|index| {
                        let raw = i64::from_ne_bytes(index.try_into().unwrap_or([0; 8]));
                        let position = if raw < 0 { (cells.len() as i64).checked_add(raw) } else { Some(raw) };
                        position
                            .and_then(|p| usize::try_from(p).ok())
                            .filter(|p| *p < cells.len())
                            .ok_or_else(|| PyIndexError::new_err(format!(
                                "index {raw} is out of bounds for size {}", cells.len()
                            )))
                    })
                    .collect::<PyResult<Vec<usize>>>()?;
                for (position, value) in positions.into_iter().zip(values.chunks_exact(width)) {
                    let value = T::from_ne_bytes(value.try_into().unwrap_or([0; std::mem::size_of::<T>()]));
                    cells[position].fetch_add(value, Ordering::Relaxed);
                }
                Ok(())
            })
        })
    }

    /// A snapshot of every element (one atomic load each): bytes in memory
    /// order, for `_convert.array_over`.
    fn snapshot(&self, py: Python<'_>) -> PyResult<Py<Buffer>> {
        let bytes = self.with(py, |array| {
            let dtype = array.header().dtype.clone();
            with_live_type!(&dtype, T => {
                let count = array.atomics::<T>().map_err(mmap_error)?.len();
                let mut out: Vec<T> = vec![T::default(); count];
                array.copy_to(&mut out).map_err(mmap_error)?;
                let bytes: Vec<u8> = out.iter().flat_map(|v| v.to_ne_bytes()).collect();
                Ok(AlignedBytes::from_owner(bytes).unwrap_or_else(|b| AlignedBytes::copy_from(&b)))
            })
        })?;
        Buffer::owned(py, bytes, "a live snapshot")
    }

    /// Writes the changes to disk and waits (`msync`).
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |array| array.flush().map_err(mmap_error))
    }

    /// Unmaps the file and releases its locks now.
    fn close(&self, py: Python<'_>) {
        let taken = py.detach(|| self.array.write().unwrap_or_else(|e| e.into_inner()).take());
        drop(taken);
    }
}

/// Adds this module's classes.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Live>()?;
    Ok(())
}

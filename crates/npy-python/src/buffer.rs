//! The buffer protocol: lending the bytes of a mapping (or of memory we own)
//! to numpy without copying. All `unsafe` of the crate is here.
//!
//! A [`Buffer`] owns what backs its bytes ([`Backing`]): a mapping made by
//! npy-mmap (which holds the file's locks while it lives) or memory read by
//! `load`. numpy views it through `numpy.frombuffer`, which keeps a
//! `memoryview` (one *export*) for as long as any array derived from it
//! lives. The backing is dropped only when no export is left: when the
//! `Buffer` itself is garbage-collected (Python keeps it alive while an
//! export holds a reference, `Py_buffer.obj`), or by an explicit
//! [`Buffer::close`], which refuses while exports exist. So no numpy array
//! ever points into an unmapped range.
//!
//! Reads from Rust while the GIL is released ([`Buffer::read_shared`]) are
//! allowed only on read-only backings: a read-only mapping (nothing that
//! uses npy-mmap, in any process, can write those bytes while it lives, and
//! the buffer we export is read-only, so numpy cannot either). Rust never
//! reads a writable backing's bytes while numpy may write them: operations
//! on those go through numpy.

use std::ffi::{CStr, c_int};
use std::sync::RwLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use npy_core::io::AlignedBytes;
use npy_mmap::npz::MappedNpz;
use npy_mmap::{CopyOnWrite, MappedArray, ReadOnly, ReadWrite};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;

/// What a [`Buffer`] lends out.
pub(crate) enum Backing {
    /// `mmap_mode="r"`: read-only, shared.
    Read(MappedArray<ReadOnly>),
    /// `mmap_mode="r+"` / `w+`: writes reach the file.
    Write(MappedArray<ReadWrite>),
    /// `mmap_mode="c"`: writes stay in this process.
    Cow(MappedArray<CopyOnWrite>),
    /// A stored npz member's bytes inside a read-only mapping of the archive.
    NpzMember(std::sync::Arc<MappedNpz>, std::ops::Range<usize>),
    /// Memory of our own (`load`, `take`, remote reads): writable, like the
    /// arrays `np.load` returns.
    Owned(AlignedBytes),
}

impl Backing {
    /// Whether numpy may write through the buffer.
    fn writable(&self) -> bool {
        matches!(
            self,
            Backing::Write(_) | Backing::Cow(_) | Backing::Owned(_)
        )
    }
}

/// Where the lent bytes are. Taken once, when the backing is made, so that
/// no `&[u8]` of a writable backing is ever formed after numpy may write.
#[derive(Clone, Copy)]
struct Region {
    ptr: usize,
    len: usize,
}

fn region(backing: &mut Backing) -> Region {
    let bytes: &mut [u8] = match backing {
        Backing::Read(map) => {
            let bytes = map.bytes();
            return Region {
                ptr: bytes.as_ptr() as usize,
                len: bytes.len(),
            };
        }
        Backing::NpzMember(map, range) => {
            let bytes = &map.bytes()[range.clone()];
            return Region {
                ptr: bytes.as_ptr() as usize,
                len: bytes.len(),
            };
        }
        Backing::Write(map) => map.bytes_mut(),
        Backing::Cow(map) => map.bytes_mut(),
        Backing::Owned(bytes) => bytes,
    };
    Region {
        ptr: bytes.as_mut_ptr() as usize,
        len: bytes.len(),
    }
}

/// Bytes lent to numpy through the buffer protocol (a flat `uint8` buffer;
/// the Python side gives it its dtype and shape with `numpy.frombuffer`).
#[pyclass(module = "npy_mmap._native", frozen)]
pub struct Buffer {
    /// `None` once closed. The lock is held for reading by Rust code that
    /// uses the bytes with the GIL released, and for writing by `close`.
    backing: RwLock<Option<Backing>>,
    region: Region,
    writable: bool,
    exports: AtomicUsize,
    /// For messages: the file (and member) the bytes come from.
    what: String,
}

impl Buffer {
    /// A buffer over `backing`; `what` names it in errors.
    pub(crate) fn new(mut backing: Backing, what: String) -> Buffer {
        let region = region(&mut backing);
        Buffer {
            writable: backing.writable(),
            backing: RwLock::new(Some(backing)),
            region,
            exports: AtomicUsize::new(0),
            what,
        }
    }

    /// Runs `f` on the bytes of a read-only backing, with the GIL released.
    /// A writable backing (which numpy may write meanwhile) gets `None`:
    /// the caller uses numpy instead.
    pub(crate) fn read_shared<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&[u8]) -> T + Send,
    ) -> PyResult<Option<T>> {
        if self.writable {
            return Ok(None);
        }
        py.detach(|| {
            let guard = self.backing.read().unwrap_or_else(|e| e.into_inner());
            if guard.is_none() {
                return Err(self.closed_error());
            }
            // SAFETY: the backing is a read-only mapping (checked above:
            // not `writable`), alive while `guard` is held (`close` takes
            // the write lock). `region` was taken from its own `bytes()`,
            // so it is in bounds and valid for reads. Nothing writes these
            // bytes while the mapping lives: npy-mmap's data lock excludes
            // every writable mapping of them made through the crate, in this
            // process or another, and the buffer numpy sees is read-only.
            let bytes = unsafe {
                std::slice::from_raw_parts(self.region.ptr as *const u8, self.region.len)
            };
            Ok(f(bytes))
        })
        .map(Some)
    }

    /// Runs `f` on the backing (flush, advise), if still open, with the
    /// GIL released (the lock is taken only once the GIL is given up, so a
    /// thread holding the GIL never waits for one that needs it back).
    pub(crate) fn with_backing<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Backing) -> npy_mmap::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let guard = self.backing.read().unwrap_or_else(|e| e.into_inner());
            match guard.as_ref() {
                Some(backing) => f(backing).map_err(crate::errors::mmap_error),
                None => Err(self.closed_error()),
            }
        })
    }

    fn closed_error(&self) -> PyErr {
        pyo3::exceptions::PyValueError::new_err(format!(
            "I/O operation on closed mapping of {}",
            self.what
        ))
    }
}

#[pymethods]
impl Buffer {
    /// Releases the mapping (and the file's locks) now. Raises
    /// `BufferError` while numpy arrays still view the bytes.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let taken = py.detach(|| {
            let mut guard = self.backing.write().unwrap_or_else(|e| e.into_inner());
            // Exports are made and released with the GIL held, which this
            // thread gave up: read the count under the lock, after any
            // pending export finished.
            let exports = self.exports.load(Ordering::Acquire);
            if exports > 0 {
                return Err(exports);
            }
            Ok(guard.take())
        });
        match taken {
            Ok(backing) => {
                drop(backing);
                Ok(())
            }
            Err(exports) => Err(PyBufferError::new_err(format!(
                "cannot close the mapping of {}: {exports} numpy array view(s) of it are \
                 still alive; delete them (del array) first",
                self.what
            ))),
        }
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.backing
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }

    /// How many buffer exports (numpy arrays' memoryviews) are alive.
    #[getter]
    fn exports(&self) -> usize {
        self.exports.load(Ordering::Acquire)
    }

    /// Whether numpy may write through the buffer.
    #[getter]
    fn writable(&self) -> bool {
        self.writable
    }

    /// The buffer's length in bytes.
    fn __len__(&self) -> usize {
        self.region.len
    }

    /// The address of the first byte (to recognise arrays over this buffer).
    #[getter]
    fn address(&self) -> usize {
        self.region.ptr
    }

    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let this = slf.get();
        if view.is_null() {
            return Err(PyBufferError::new_err("no Py_buffer to fill"));
        }
        if flags & ffi::PyBUF_WRITABLE == ffi::PyBUF_WRITABLE && !this.writable {
            return Err(PyBufferError::new_err(format!(
                "the mapping of {} is read-only",
                this.what
            )));
        }
        let len = isize::try_from(this.region.len)
            .map_err(|_| PyBufferError::new_err("buffer larger than isize::MAX bytes"))?;
        // Count the export while holding the read lock, so that `close`
        // (which takes the write lock) either sees it or has already
        // released the backing, which we then refuse to lend.
        {
            let guard = this.backing.read().unwrap_or_else(|e| e.into_inner());
            if guard.is_none() {
                return Err(this.closed_error());
            }
            this.exports.fetch_add(1, Ordering::AcqRel);
        }
        let (ptr, writable) = (this.region.ptr, this.writable);
        static FORMAT: &CStr = c"B";
        // SAFETY: `view` is non-null (checked) and points to a `Py_buffer`
        // that Python gives us to fill, exclusively, for this call. Every
        // field is written. `obj` takes a new reference to `slf`, which keeps
        // the `Buffer` (and so the backing) alive until Python calls
        // `__releasebuffer__` and drops that reference; `close` refuses while
        // the export counted above lives, so `buf` stays valid for the
        // export's whole life. `shape` and `strides` point into the view
        // itself (its `len` and `itemsize`), which outlives every use of
        // them; `format` is a static C string.
        unsafe {
            (*view).obj = slf.into_any().into_ptr();
            (*view).buf = ptr as *mut std::ffi::c_void;
            (*view).len = len;
            (*view).readonly = c_int::from(!writable);
            (*view).itemsize = 1;
            (*view).format = if flags & ffi::PyBUF_FORMAT == ffi::PyBUF_FORMAT {
                FORMAT.as_ptr() as *mut std::ffi::c_char
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = 1;
            (*view).shape = if flags & ffi::PyBUF_ND == ffi::PyBUF_ND {
                &mut (*view).len
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES {
                &mut (*view).itemsize
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = std::ptr::null_mut();
        }
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {
        self.exports.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Runs `f` on the bytes of a Python buffer (a C-contiguous `uint8` view of
/// an array being saved or appended), with the GIL released.
pub(crate) fn with_py_bytes<T: Send>(
    py: Python<'_>,
    data: &PyBuffer<u8>,
    f: impl FnOnce(&[u8]) -> T + Send,
) -> PyResult<T> {
    if !data.is_c_contiguous() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "the data must be a C-contiguous buffer",
        ));
    }
    let (ptr, len) = (data.buf_ptr() as usize, data.len_bytes());
    Ok(py.detach(|| {
        // SAFETY: `data` holds a buffer export for the whole call (it is
        // borrowed by this function, and released only when dropped by the
        // caller afterwards), so the exporter keeps these `len` contiguous
        // bytes (checked: C-contiguous, one item per byte) allocated and in
        // place. What the buffer protocol cannot promise is that nobody
        // writes them meanwhile (PyO3 issue 2824): the array being saved is
        // the caller's to keep still during the call, exactly as with numpy,
        // whose `np.save` and `tofile` also write an array's memory with the
        // GIL released. A zero length gives an empty slice: `from_raw_parts`
        // needs a non-null aligned pointer, which `buf_ptr` is for `u8`
        // (checked below for the empty case).
        let bytes: &[u8] = if len == 0 || ptr == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(ptr as *const u8, len) }
        };
        f(bytes)
    }))
}

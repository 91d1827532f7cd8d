//! The owner of the bytes lent to numpy (the Rust half of the door out):
//! a mapping, or memory we own, lent through the buffer protocol without
//! copying. The door out itself is one Python function,
//! `_convert.array_over`: `np.ndarray(shape, dtype, buffer=owner)`, which
//! takes an export, reads the address, releases the export at once and
//! keeps the [`Buffer`] itself as the array's `.base`. Nothing stands
//! between an array and its owner that Python code could release (a
//! `memoryview`'s `release()` freed memory under live arrays before: issue
//! 39).
//!
//! A [`Buffer`] owns what backs its bytes ([`Backing`]): a mapping made by
//! npy-mmap (which holds the file's locks while it lives) or memory read by
//! `load`. Exports are not what keeps the bytes: the backing is dropped
//! only when the `Buffer` itself is (Rust's `Drop`, when Python frees the
//! object), that is when nothing at all can reach its address. There is no
//! way to unmap earlier: [`Buffer::close`] refuses, and
//! `npy_mmap.MappedFile.close()` gives up its own reference only when no
//! other exists (it counts them).
//!
//! Reads from Rust while the GIL is released ([`Buffer::gather_spans`])
//! copy with atomic loads from foreign mappings (numpy in this process or
//! another may write those bytes meanwhile), with plain loads only from
//! strict read-only mappings and npz members (nothing can write those
//! bytes while they live: npy-mmap's data lock excludes every writer, and
//! the buffer we export is read-only). Writable strict mappings and owned
//! memory are left to numpy. Planning (prefetch) uses addresses only.
//! Python buffers read by Rust come in through the other door,
//! `door_in.rs`.

use std::ffi::{CStr, c_int};
use std::sync::atomic::{AtomicUsize, Ordering};

use npy_core::io::AlignedBytes;
use npy_mmap::npz::MappedNpz;
use npy_mmap::{CopyOnWrite, ForeignArray, MappedArray, ReadOnly, ReadWrite};
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;

/// What a [`Buffer`] lends out.
pub(crate) enum Backing {
    /// Any `mmap_mode` with numpy's sharing (the default): shared with
    /// other numpy-style mappings of the same bytes, as numpy's memmaps are.
    Foreign(ForeignArray),
    /// `mmap_mode="r"`, strict: read-only, shared.
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
        match self {
            Backing::Foreign(array) => array.mode().is_writable(),
            Backing::Write(_) | Backing::Cow(_) | Backing::Owned(_) => true,
            Backing::Read(_) | Backing::NpzMember(..) => false,
        }
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
        Backing::Foreign(array) => {
            return Region {
                ptr: array.as_ptr() as usize,
                len: array.len(),
            };
        }
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
/// the Python side gives it its dtype and shape with
/// `np.ndarray(buffer=...)`, in `_convert.array_over`).
#[pyclass(module = "npy_mmap._native", frozen, weakref)]
pub struct Buffer {
    /// Dropped with the `Buffer` only (see the module docs).
    backing: Backing,
    region: Region,
    writable: bool,
    exports: AtomicUsize,
    /// For messages: the file (and member) the bytes come from.
    what: String,
}

impl Buffer {
    /// A new Python buffer owning `bytes` (an array's data made in Rust);
    /// `what` names it in errors.
    pub(crate) fn owned(
        py: Python<'_>,
        bytes: AlignedBytes,
        what: impl Into<String>,
    ) -> PyResult<Py<Buffer>> {
        Py::new(py, Buffer::new(Backing::Owned(bytes), what.into()))
    }

    /// A buffer over `backing`; `what` names it in errors.
    pub(crate) fn new(mut backing: Backing, what: String) -> Buffer {
        let region = region(&mut backing);
        Buffer {
            writable: backing.writable(),
            backing,
            region,
            exports: AtomicUsize::new(0),
            what,
        }
    }

    /// Copies each of `spans` (byte ranges, checked by the caller to lie
    /// in the buffer) into new memory, one after another, with the GIL
    /// released: planned reads of a cold mapping (npy-mmap's gather),
    /// atomic loads where numpy may write meanwhile.
    /// `None` for a backing Rust must not read while numpy may write it
    /// (a strict writable mapping, owned memory): the caller uses numpy.
    pub(crate) fn gather_spans(
        &self,
        py: Python<'_>,
        spans: &[std::ops::Range<usize>],
    ) -> PyResult<Option<AlignedBytes>> {
        let len = spans
            .iter()
            .try_fold(0usize, |sum, span| sum.checked_add(span.len()))
            .ok_or_else(|| pyo3::exceptions::PyMemoryError::new_err("take: output too large"))?;
        let gathered = py.detach(|| {
            let mut out = vec![0u8; len];
            let done = match &self.backing {
                Backing::Foreign(array) => array.gather_spans(spans, &mut out),
                Backing::Read(array) => array.gather_spans(spans, &mut out),
                Backing::NpzMember(map, range) => {
                    let bytes = &map.bytes()[range.clone()];
                    let mut rest = &mut out[..];
                    for span in spans {
                        // In bounds: the caller checked every span.
                        let (slot, tail) = rest.split_at_mut(span.len());
                        slot.copy_from_slice(&bytes[span.clone()]);
                        rest = tail;
                    }
                    Ok(())
                }
                Backing::Write(_) | Backing::Cow(_) | Backing::Owned(_) => return Ok(None),
            };
            done.map(|()| {
                Some(
                    AlignedBytes::from_owner(out)
                        .unwrap_or_else(|out| AlignedBytes::copy_from(&out)),
                )
            })
        });
        gathered.map_err(crate::errors::mmap_error)
    }

    /// Starts reading the pages of byte `ranges` and returns at once; a
    /// no-op where nothing is mapped (owned memory).
    pub(crate) fn prefetch(
        &self,
        py: Python<'_>,
        ranges: &[std::ops::Range<usize>],
    ) -> PyResult<()> {
        py.detach(|| match &self.backing {
            Backing::Foreign(array) => array.prefetch_bytes(ranges),
            Backing::Read(array) => array.prefetch_bytes(ranges),
            Backing::Write(array) => array.prefetch_bytes(ranges),
            Backing::Cow(array) => array.prefetch_bytes(ranges),
            Backing::NpzMember(..) | Backing::Owned(_) => Ok(()),
        })
        .map_err(crate::errors::mmap_error)
    }

    /// Gives back the pages of byte `ranges` (`MADV_DONTNEED`) of a shared
    /// mapping, so that resident memory stays flat over an epoch; a no-op
    /// for copy-on-write mappings (it would discard their changes), npz
    /// members and owned memory.
    pub(crate) fn release(
        &self,
        py: Python<'_>,
        ranges: &[std::ops::Range<usize>],
    ) -> PyResult<()> {
        py.detach(|| match &self.backing {
            // npy-mmap widens the ranges to the blocks the kernel maps at
            // once (large folios): the windows' own pages are not enough.
            Backing::Foreign(array) if array.mode() != npy_mmap::ForeignMode::CopyOnWrite => {
                array.release_bytes(ranges)
            }
            Backing::Read(array) => array.release_bytes(ranges),
            _ => Ok(()),
        })
        .map_err(crate::errors::mmap_error)
    }

    /// Whether another process may write these bytes while they live: a
    /// numpy-style mapping (any mode: a `c` mapping shows the file's pages
    /// until it writes them). Memory we own, strict mappings (npy-mmap's
    /// data lock keeps every other writer out) and npz members (read-only,
    /// read-locked) only this process can write, if anyone.
    pub(crate) fn others_may_write(&self) -> bool {
        matches!(self.backing, Backing::Foreign(_))
    }

    /// The length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.region.len
    }

    /// Runs `f` on the backing (flush, advise) with the GIL released.
    pub(crate) fn with_backing<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Backing) -> npy_mmap::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| f(&self.backing).map_err(crate::errors::mmap_error))
    }
}

#[pymethods]
impl Buffer {
    /// Always raises `BufferError`: the bytes stay mapped for as long as
    /// anything can reach this object (numpy arrays over it, memmaps whose
    /// `_mmap` it is, the caller), and are unmapped, with the file's locks
    /// released, when the last reference goes. Python's own `mmap.close()`
    /// unmaps under arrays made with `np.ndarray(buffer=...)`; this never
    /// does. `npy_mmap.mapped(...)` gives a mapping with a `close()` that
    /// works when nothing else reaches it.
    fn close(&self) -> PyResult<()> {
        Err(PyBufferError::new_err(format!(
            "cannot close the mapping of {} from its buffer object: it stays mapped while \
             anything reaches it ({} numpy export(s) now, arrays over it, this object) and is \
             released when the last reference goes; delete the arrays (del array), or use \
             npy_mmap.mapped(...) and its close()",
            self.what,
            self.exports.load(Ordering::Acquire)
        )))
    }

    /// How many buffer exports are alive (memoryviews of this object;
    /// numpy's arrays hold none: they keep the object itself).
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
        this.exports.fetch_add(1, Ordering::AcqRel);
        let (ptr, writable) = (this.region.ptr, this.writable);
        static FORMAT: &CStr = c"B";
        // SAFETY: `view` is non-null (checked) and points to a `Py_buffer`
        // that Python gives us to fill, exclusively, for this call. Every
        // field is written. `obj` takes a new reference to `slf`, which keeps
        // the `Buffer` (and so the backing, which is dropped only with it)
        // alive until Python calls `__releasebuffer__` and drops that
        // reference, so `buf` stays valid for the export's whole life (and
        // beyond, for as long as anything keeps the `Buffer`). `shape` and `strides` point into the view
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

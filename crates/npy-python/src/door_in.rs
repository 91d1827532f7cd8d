//! The one door in: every Python buffer Rust reads comes through here
//! ([`Incoming`]), and this module alone decides how it is read.
//!
//! - **Bytes another process may write** are never seen through a `&[u8]`:
//!   they are copied a bounded chunk at a time with atomic loads (npy-mmap's
//!   [`ForeignBytes`], the copy `ForeignArray` uses), with the GIL released.
//!   Which bytes: any buffer this module cannot prove private (below), such
//!   as a numpy-style mapping of ours (another process may map the file
//!   `r+`, as numpy's habits allow), numpy's own `np.memmap`, shared memory.
//! - **What must match a checksum** computed on its way out (npz members,
//!   whose CRC-32 is taken as they are written; uploads and Dask's remote
//!   parts, which the store hashes) is read once per chunk into memory of
//!   its own, and that copy is what is checksummed, compressed and written:
//!   numpy's `savez` does the same (16 MiB chunks of `tobytes()`). So the
//!   CRC is the CRC of the bytes written, whatever writes the source
//!   meanwhile: torn values stay numpy's rules, an unreadable archive would
//!   be ours.
//! - **A private array written to a file** (`save`, `append`) goes straight
//!   from its memory, as numpy's `tofile` does: nothing checks those bytes
//!   against anything, and only this process can write them (the caller
//!   keeps the array still meanwhile, exactly as with numpy; the buffer
//!   protocol cannot stop a thread from writing it, PyO3#2824).
//!
//! Private: following `.base` (and a `memoryview`'s `.obj`) from the buffer
//! given ends at a numpy array that owns its memory, at a `bytes` or a
//! `bytearray`, or at one of our buffers no other process can write (memory we
//! own, strict mappings, npz members: npy-mmap's data lock keeps every
//! other writer out). Everything else counts as shared.
//!
//! Memory stays bounded: one chunk at a time ([`CHUNK`]), never a copy of
//! the whole array (a Dask part is copied whole: the plan bounds its size).

use std::borrow::Cow;

use npy_core::{DataChunks, Header, NpySource};
use npy_mmap::ForeignBytes;
use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView};

use crate::buffer::Buffer;
use crate::errors::{core_error, value_error};

/// Bytes per copied chunk: numpy's `savez` writes 16 MiB at a time.
const CHUNK: usize = 16 << 20;

/// Links of `.base` followed before a buffer counts as shared.
const MAX_CHAIN: usize = 64;

/// What the bytes are read for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Use {
    /// Written to a file as they are (`save`, `append`).
    File,
    /// Checksummed (npz members, uploads): one copy per chunk, always.
    Checked,
}

/// A Python buffer on its way into Rust: its export (held, so its bytes
/// stay allocated and in place while this lives), where the bytes are, and
/// whether anything outside this process may write them.
pub(crate) struct Incoming {
    _export: PyBuffer<u8>,
    ptr: usize,
    len: usize,
    private: bool,
}

impl Incoming {
    /// Takes an export of `data` (C-contiguous bytes: the array's data in
    /// its saved order, as `_convert.data_bytes` gives it) and decides how
    /// it is read.
    pub(crate) fn new(data: &Bound<'_, PyAny>) -> PyResult<Incoming> {
        let export = PyBuffer::<u8>::get(data)?;
        if !export.is_c_contiguous() {
            return Err(value_error("the data must be a C-contiguous buffer"));
        }
        Ok(Incoming {
            ptr: export.buf_ptr() as usize,
            len: export.len_bytes(),
            private: private(data)?,
            _export: export,
        })
    }

    /// The bytes, for atomic loads only.
    fn foreign(&self) -> ForeignBytes<'_> {
        // SAFETY: the export `self` holds keeps the `len` bytes at `ptr`
        // allocated and in place (C-contiguous, one item per byte: checked
        // in `new`) until `self` is dropped, which the borrow outlives. They
        // are Python's memory: no Rust `&mut` to them exists. Others may
        // write them meanwhile; `ForeignBytes` reads with atomic loads only.
        unsafe { ForeignBytes::new(self.ptr as *const u8, self.len) }
    }

    /// The bytes as a slice, for private bytes only (`None` otherwise).
    fn straight(&self) -> Option<&[u8]> {
        if !self.private {
            return None;
        }
        if self.len == 0 || self.ptr == 0 {
            return Some(&[]);
        }
        // SAFETY: as in `foreign` the export keeps the bytes allocated and
        // in place for the borrow. Private (see the module docs): no other
        // process can write them; threads of this one are the caller's to
        // keep still during the call, as with numpy's `tofile`.
        Some(unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) })
    }

    /// Copies the bytes at `start` (in bounds) into `out`.
    fn copy(&self, start: usize, out: &mut [u8]) {
        match self.straight() {
            Some(bytes) => out.copy_from_slice(&bytes[start..start + out.len()]),
            // In bounds: the callers cut `out` from `0..len`.
            None => drop(self.foreign().load(start, out)),
        }
    }

    /// The bytes, each chunk copied once into memory of its own.
    fn copied_chunks(&self) -> DataChunks<'_> {
        Box::new((0..self.len).step_by(CHUNK).map(move |start| {
            let mut chunk = vec![0u8; CHUNK.min(self.len - start)];
            self.copy(start, &mut chunk);
            Cow::Owned(chunk)
        }))
    }

    /// The bytes as `purpose` reads them (see the module docs).
    fn chunks(&self, purpose: Use) -> DataChunks<'_> {
        match (purpose, self.straight()) {
            (Use::File, Some(bytes)) => Box::new(std::iter::once(Cow::Borrowed(bytes))),
            _ => self.copied_chunks(),
        }
    }

    /// The bytes as the data of `header`, read for `purpose`: an npy-core
    /// source for any of npy-mmap's and npy-remote's writers.
    pub(crate) fn source<'a>(&'a self, header: &'a Header, purpose: Use) -> PyResult<Source<'a>> {
        if header.dtype.has_object() {
            return Err(core_error(npy_core::Error::ObjectData));
        }
        let expected = header.data_len().map_err(core_error)?;
        if expected != self.len {
            return Err(core_error(npy_core::Error::DataLength {
                expected,
                actual: self.len,
            }));
        }
        Ok(Source {
            header,
            incoming: self,
            purpose,
        })
    }

    /// The rows appended to `appender`, as a file's bytes are read.
    pub(crate) fn append_to(&self, appender: &mut npy_mmap::Appender) -> npy_mmap::Result<usize> {
        appender.append_chunks(self.len, self.chunks(Use::File))
    }

    /// Runs `f` on all the bytes at once, with the GIL released: straight
    /// from their memory when private, else from one copy made with atomic
    /// loads (for readers that parse the bytes as a whole: an archive a
    /// file object gave).
    pub(crate) fn read_whole<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&[u8]) -> T + Send,
    ) -> T {
        py.detach(|| match self.straight() {
            Some(bytes) => f(bytes),
            None => f(&self.copied()),
        })
    }

    /// All the bytes, copied once (for a part whose size the caller's plan
    /// bounds).
    pub(crate) fn copied(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.len];
        for (index, slot) in out.chunks_mut(CHUNK).enumerate() {
            self.copy(index * CHUNK, slot);
        }
        out
    }
}

/// Whether nothing outside this process can write the bytes `data`
/// exports (see the module docs); `false` when in doubt.
fn private(data: &Bound<'_, PyAny>) -> PyResult<bool> {
    let ndarray = data.py().import("numpy")?.getattr("ndarray")?;
    let mut node = data.clone();
    for _ in 0..MAX_CHAIN {
        if let Ok(buffer) = node.cast::<Buffer>() {
            return Ok(!buffer.get().others_may_write());
        }
        // `bytes`, and a `bytearray` (this process's memory, which only its
        // own threads can write, as a numpy array that owns its data).
        if node.is_exact_instance_of::<PyBytes>() || node.is_exact_instance_of::<PyByteArray>() {
            return Ok(true);
        }
        if node.is_instance_of::<PyMemoryView>() {
            node = node.getattr("obj")?;
            continue;
        }
        if !node.is_instance(&ndarray)? {
            return Ok(false);
        }
        let base = node.getattr("base")?;
        if base.is_none() {
            // numpy's own allocation, unless the array borrows memory it
            // does not own (made from a raw pointer with no base).
            return node.getattr("flags")?.getattr("owndata")?.extract();
        }
        node = base;
    }
    Ok(false)
}

/// An [`Incoming`] buffer as the data under a header, for npy-core's
/// writers (`npy_mmap::save`, `NpzWriter::add`, `npy_remote::upload`).
pub(crate) struct Source<'a> {
    header: &'a Header,
    incoming: &'a Incoming,
    purpose: Use,
}

impl NpySource for Source<'_> {
    fn npy_header(&self) -> Header {
        self.header.clone()
    }

    fn npy_data(&self) -> npy_core::Result<DataChunks<'_>> {
        Ok(self.incoming.chunks(self.purpose))
    }
}

/// Runs `f` on the array `data` holds (its bytes in the order of `descr`,
/// `shape`, `fortran`) as an npy-core source read for `purpose`, with the
/// GIL released.
pub(crate) fn with_source<T: Send>(
    py: Python<'_>,
    (descr, shape, fortran): (&str, Vec<usize>, bool),
    data: &Bound<'_, PyAny>,
    purpose: Use,
    f: impl FnOnce(&Source<'_>) -> PyResult<T> + Send,
) -> PyResult<T> {
    let header = crate::arguments::header(descr, shape, fortran)?;
    let incoming = Incoming::new(data)?;
    let source = incoming.source(&header, purpose)?;
    py.detach(|| f(&source))
}

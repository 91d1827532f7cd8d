//! `.npz` archives: a lazy reader (numpy's `NpzFile`), a mapped reader
//! whose stored members are zero-copy views of the archive's mapping, and
//! the writer behind `savez` / `savez_compressed`.

use std::fs::File;
use std::io::{BufReader, BufWriter, Cursor, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use npy_mmap::npz::{Compression, MappedNpz, Member, NpzArchive, NpzWriter};
use npy_mmap::{AtomicFile, ErrorKind};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::arguments::archive_options;
use crate::buffer::{Backing, Buffer};
use crate::errors::{mmap_error, value_error};
use crate::objects::{Parts, array_parts};
use crate::stream_out::{PyStream, Raised};

/// A member as the Python side receives it: `("array", parts)` or
/// `("raw", bytes)` for a member that is not `.npy` data.
pub(crate) type MemberResult = (String, Py<PyAny>);

pub(crate) fn member_result(py: Python<'_>, member: Member) -> PyResult<MemberResult> {
    Ok(match member {
        Member::Array(array) => (
            "array".into(),
            array_parts(py, array)?
                .into_pyobject(py)?
                .into_any()
                .unbind(),
        ),
        Member::Raw(bytes) => ("raw".into(), PyBytes::new(py, &bytes).into_any().unbind()),
    })
}

fn closed() -> PyErr {
    value_error("the archive is closed")
}

/// Where a lazy archive reads from.
enum Source {
    File(NpzArchive<BufReader<File>>),
    Memory(NpzArchive<Cursor<Vec<u8>>>),
}

/// An `.npz` archive read lazily: nothing is read until a member is asked for.
#[pyclass(module = "npy_mmap._native", frozen)]
pub struct NpzReader {
    archive: Mutex<Option<Source>>,
    keys: Vec<String>,
    names: Vec<String>,
}

#[pymethods]
impl NpzReader {
    /// Opens the archive at `path` (its central directory is read now).
    #[new]
    #[pyo3(signature = (path, max_header_size, allow_pickle, encoding))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        max_header_size: usize,
        allow_pickle: bool,
        encoding: &str,
    ) -> PyResult<Self> {
        let options = archive_options(max_header_size, allow_pickle, encoding)?;
        let archive = py.detach(|| options.open_npz(&path)).map_err(mmap_error)?;
        Ok(NpzReader {
            keys: archive.keys().to_vec(),
            names: archive.member_names().to_vec(),
            archive: Mutex::new(Some(Source::File(archive))),
        })
    }

    /// An archive held in memory (read from a file object).
    #[staticmethod]
    fn from_bytes(
        data: Vec<u8>,
        max_header_size: usize,
        allow_pickle: bool,
        encoding: &str,
    ) -> PyResult<Self> {
        let options = archive_options(max_header_size, allow_pickle, encoding)?;
        let archive = options.read_npz(Cursor::new(data)).map_err(mmap_error)?;
        Ok(NpzReader {
            keys: archive.keys().to_vec(),
            names: archive.member_names().to_vec(),
            archive: Mutex::new(Some(Source::Memory(archive))),
        })
    }

    /// numpy's keys: member names with one trailing `.npy` removed.
    fn keys(&self) -> Vec<String> {
        self.keys.clone()
    }

    /// The members' names in the zip.
    fn member_names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// Reads a member: an array, or the raw bytes of a non-`.npy` member.
    fn get(&self, py: Python<'_>, key: &str) -> PyResult<MemberResult> {
        let member = py
            .detach(|| {
                let mut guard = self.archive.lock().unwrap_or_else(|e| e.into_inner());
                guard.as_mut().map(|source| match source {
                    Source::File(archive) => archive.get(key),
                    Source::Memory(archive) => archive.get(key),
                })
            })
            .ok_or_else(closed)?
            .map_err(mmap_error)?;
        member_result(py, member)
    }

    /// Closes the archive's file.
    fn close(&self) {
        self.archive
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
    }
}

/// The bytes of a mapped archive, shared: what its parsed archive reads.
#[derive(Clone)]
struct MappedBytes(Arc<MappedNpz>);

impl AsRef<[u8]> for MappedBytes {
    fn as_ref(&self) -> &[u8] {
        self.0.bytes()
    }
}

/// An archive parsed once over its mapping (the central directory is read
/// at open, never again: a member costs the same whatever its place).
type Parsed = NpzArchive<Cursor<MappedBytes>>;

/// An `.npz` archive mapped read-only: a stored `.npy` member is a view of
/// the mapping (no copy); a compressed one is loaded into memory.
#[pyclass(module = "npy_mmap._native", frozen)]
pub struct MappedArchive {
    archive: Mutex<Option<(Arc<MappedNpz>, Parsed)>>,
    keys: Vec<String>,
    names: Vec<String>,
}

#[pymethods]
impl MappedArchive {
    /// Maps the archive at `path`, read-locked while any member view lives.
    #[new]
    #[pyo3(signature = (path, max_header_size, allow_pickle, encoding))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        max_header_size: usize,
        allow_pickle: bool,
        encoding: &str,
    ) -> PyResult<Self> {
        let options = archive_options(max_header_size, allow_pickle, encoding)?;
        let (map, archive) = py
            .detach(|| {
                let map = Arc::new(options.map_npz(&path)?);
                let archive = options.read_npz(Cursor::new(MappedBytes(map.clone())))?;
                Ok::<_, npy_mmap::Error>((map, archive))
            })
            .map_err(mmap_error)?;
        let (keys, names) = (archive.keys().to_vec(), archive.member_names().to_vec());
        Ok(MappedArchive {
            archive: Mutex::new(Some((map, archive))),
            keys,
            names,
        })
    }

    /// numpy's keys.
    fn keys(&self) -> Vec<String> {
        self.keys.clone()
    }

    /// The members' names in the zip.
    fn member_names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// A member: `("mapped", (buffer, descr, shape, fortran))` for a stored
    /// `.npy` member, else what [`NpzReader::get`] gives.
    fn get(&self, py: Python<'_>, key: &str) -> PyResult<MemberResult> {
        let mut guard = self.archive.lock().unwrap_or_else(|e| e.into_inner());
        let (map, archive) = guard.as_mut().ok_or_else(closed)?;
        let map = map.clone();
        match archive.array_range(key) {
            Ok(stored) => {
                let range = stored.data;
                let descr = stored.header.dtype.header_repr();
                let shape = stored.header.shape.clone();
                let fortran = stored.header.order == npy_core::Order::Fortran;
                if stored.header.dtype == npy_core::DType::Object {
                    return Err(value_error(
                        "Array can't be memory-mapped: Python objects in dtype.",
                    ));
                }
                drop(guard);
                let what = format!("{} member {key}", map.path().display());
                let buffer = Py::new(py, Buffer::new(Backing::NpzMember(map, range), what))?;
                let parts: Parts = (buffer.into_any(), descr, shape, fortran);
                Ok(("array".into(), parts.into_pyobject(py)?.into_any().unbind()))
            }
            // Compressed, not .npy, or an object array: read it as numpy does.
            Err(error)
                if matches!(
                    error.kind(),
                    ErrorKind::Archive(npy_core::npz::ArchiveError::Compressed { .. })
                        | ErrorKind::NotNpy
                        | ErrorKind::Format(npy_core::Error::ObjectDType)
                ) =>
            {
                let member = py.detach(|| archive.get(key)).map_err(mmap_error)?;
                member_result(py, member)
            }
            Err(error) => Err(mmap_error(error)),
        }
    }

    /// Lets go of the archive's mapping (it stays alive while member views do).
    fn close(&self) {
        self.archive
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
    }
}

enum Sink {
    File(NpzWriter<AtomicFile>),
    Memory(NpzWriter<Cursor<Vec<u8>>>),
    /// A seekable Python file object, written as the members are made.
    Stream(NpzWriter<BufWriter<PyStream>>),
}

/// Runs the same call on whichever writer a [`Sink`] holds.
macro_rules! on_sink {
    ($sink:expr, $writer:ident => $call:expr) => {
        match $sink {
            Sink::File($writer) => $call,
            Sink::Memory($writer) => $call,
            Sink::Stream($writer) => $call,
        }
    };
}

/// The writer of `savez` / `savez_compressed`: members are added in order,
/// the archive appears under its name only when finished.
#[pyclass(module = "npy_mmap._native", frozen)]
pub struct ArchiveWriter {
    sink: Mutex<Option<Sink>>,
    /// What a Python stream raised, raised again as it was.
    raised: Raised,
}

impl ArchiveWriter {
    fn with<T>(&self, f: impl FnOnce(&mut Sink) -> npy_mmap::Result<T>) -> PyResult<T> {
        let mut guard = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        let sink = guard.as_mut().ok_or_else(closed)?;
        f(sink).map_err(|error| self.error(error))
    }

    /// The exception for a failed write: the stream's own, if it raised.
    fn error(&self, error: npy_mmap::Error) -> PyErr {
        let raised = self.raised.lock().unwrap_or_else(|e| e.into_inner()).take();
        raised.unwrap_or_else(|| mmap_error(error))
    }
}

#[pymethods]
impl ArchiveWriter {
    /// A writer to `path` (a temporary file renamed at `finish`), else to
    /// `stream` (a seekable Python file object, written as members are
    /// added), else to memory; `compressed` deflates every member.
    #[new]
    #[pyo3(signature = (path, compressed, stream=None))]
    fn new(
        path: Option<PathBuf>,
        compressed: bool,
        stream: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let raised = Raised::default();
        let stream = match stream {
            Some(file) => PyStream::new(file, raised.clone())?,
            None => None,
        };
        let compression = if compressed {
            Compression::DEFLATED
        } else {
            Compression::Stored
        };
        let sink = match (path, stream) {
            (Some(path), _) => {
                let mut writer = NpzWriter::create(&path).map_err(mmap_error)?;
                writer.set_compression(compression).map_err(mmap_error)?;
                Sink::File(writer)
            }
            (None, Some(stream)) => {
                let sink = BufWriter::with_capacity(1 << 20, stream);
                let taken = |error| {
                    let raised = raised.lock().unwrap_or_else(|e| e.into_inner()).take();
                    raised.unwrap_or_else(|| mmap_error(error))
                };
                let mut writer = NpzWriter::new(sink).map_err(taken)?;
                writer.set_compression(compression).map_err(mmap_error)?;
                Sink::Stream(writer)
            }
            (None, None) => {
                let mut writer = NpzWriter::new(Cursor::new(Vec::new())).map_err(mmap_error)?;
                writer.set_compression(compression).map_err(mmap_error)?;
                Sink::Memory(writer)
            }
        };
        Ok(ArchiveWriter {
            sink: Mutex::new(Some(sink)),
            raised,
        })
    }

    /// Adds the member `key + ".npy"` with the array's bytes (in its order).
    fn add(
        &self,
        py: Python<'_>,
        key: &str,
        descr: &str,
        shape: Vec<usize>,
        fortran: bool,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let purpose = crate::door_in::Use::Checked;
        crate::door_in::with_source(py, (descr, shape, fortran), data, purpose, |source| {
            self.with(|sink| on_sink!(sink, writer => writer.add(key, source)))
        })
    }

    /// Adds a member named exactly `name` holding `content` (an `.npy`
    /// whose member name numpy's zipfile would not end with `.npy`).
    fn add_raw(&self, py: Python<'_>, name: &str, content: &[u8]) -> PyResult<()> {
        py.detach(|| {
            self.with(|sink| on_sink!(sink, writer => writer.add_raw_member(name, content)))
        })
    }

    /// Adds an object array (pickled as numpy pickles it).
    fn add_objects(
        &self,
        key: &str,
        shape: Vec<usize>,
        fortran: bool,
        values: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let array = crate::objects::object_array(shape, fortran, values)?;
        self.with(|sink| on_sink!(sink, writer => writer.add(key, &array)))
    }

    /// Finishes the archive: renames it into place (without syncing it),
    /// or returns its bytes.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let sink = self
            .sink
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(closed)?;
        match sink {
            Sink::File(writer) => {
                // Atomic, not synced: numpy's speed (docs/PYTHON.md, "Saving").
                py.detach(|| writer.into_inner()?.commit_unsynced())
                    .map_err(mmap_error)?;
                Ok(None)
            }
            Sink::Memory(writer) => {
                let cursor = writer.into_inner().map_err(mmap_error)?;
                Ok(Some(PyBytes::new(py, &cursor.into_inner())))
            }
            Sink::Stream(writer) => {
                let done = py.detach(|| -> npy_mmap::Result<()> {
                    let io = |source| {
                        npy_mmap::Error::from(ErrorKind::Io {
                            operation: "write",
                            source,
                        })
                    };
                    let sink = writer.into_inner()?;
                    // As zipfile ends: the object flushed too.
                    let mut stream = sink.into_inner().map_err(|e| io(e.into_error()))?;
                    stream.flush().map_err(io)
                });
                done.map_err(|error| self.error(error))?;
                Ok(None)
            }
        }
    }
}

/// Adds this module's classes.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NpzReader>()?;
    m.add_class::<MappedArchive>()?;
    m.add_class::<ArchiveWriter>()?;
    Ok(())
}

//! One member of an `.npz` read by rows, without loading it (`NpzFile.lazy`,
//! Dask's tasks): a deflated member inflates only the blocks its rows lie
//! in (our writer's block index, or checkpoints built on first use or
//! loaded from `<archive>.idx`), on every core, the GIL released; in object
//! storage only those blocks are fetched.

use std::fs::File;
use std::io::{BufReader, Cursor, Read, Seek};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Mutex;

use npy_core::io::AlignedBytes;
use npy_core::npz::MemberCompression;
use npy_core::plan::{Coalesce, locate};
use npy_core::{Header, Layout, NpyArray, Order, ParsedHeader};
use npy_mmap::npz::NpzArchive;
use npy_remote::npz::RemoteNpz;
use pyo3::prelude::*;

use crate::arguments::archive_options;
use crate::errors::{mmap_error, remote_error, value_error};
use crate::objects::{Parts, array_parts};

/// Where the member is read from.
enum Backend {
    File(NpzArchive<BufReader<File>>),
    Memory(NpzArchive<Cursor<Vec<u8>>>),
    /// An archive in a store, with the process that listed it (a child of
    /// `fork` lists it again with its own runtime).
    Remote(u32, RemoteNpz),
}

/// One array member of an archive, read lazily by rows.
#[pyclass(module = "npy_mmap._native", frozen)]
pub struct LazyMember {
    backend: Mutex<Option<Backend>>,
    /// The URL, for a member in a store.
    url: Option<String>,
    key: String,
    header: Header,
    layout: Layout,
    compressed: bool,
    /// Whether a pass over a deflated member may build its checkpoints
    /// (else, without an index at hand, rows inflate from the member's start).
    build: bool,
}

fn closed() -> PyErr {
    value_error("the archive is closed")
}

/// The member's header, checked to be an array's.
fn array_header<R: Read + Seek>(
    archive: &mut NpzArchive<R>,
    key: &str,
) -> npy_mmap::Result<ParsedHeader> {
    archive.header(key)
}

impl LazyMember {
    fn local<R: Read + Seek>(
        mut archive: NpzArchive<R>,
        key: &str,
        build: bool,
        wrap: fn(NpzArchive<R>) -> Backend,
    ) -> npy_mmap::Result<Self> {
        let ParsedHeader { header, layout } = array_header(&mut archive, key)?;
        let compressed = archive.info(key)?.compression != MemberCompression::Stored;
        Ok(LazyMember {
            backend: Mutex::new(Some(wrap(archive))),
            url: None,
            key: key.to_owned(),
            header,
            layout,
            compressed,
            build,
        })
    }

    fn with<T>(&self, f: impl FnOnce(&mut Backend) -> PyResult<T>) -> PyResult<T> {
        let mut guard = self.backend.lock().unwrap_or_else(|e| e.into_inner());
        let backend = guard.as_mut().ok_or_else(closed)?;
        if let (Backend::Remote(pid, _), Some(url)) = (&*backend, &self.url)
            && *pid != std::process::id()
        {
            *backend = open_remote(url)?;
        }
        f(backend)
    }

    /// Rows `start..stop` along the row axis.
    fn rows(&self, start: usize, stop: usize) -> PyResult<NpyArray> {
        let (key, build, compressed) = (&self.key, self.build, self.compressed);
        self.with(|backend| match backend {
            Backend::File(archive) => local_rows(archive, key, start..stop, build || !compressed),
            Backend::Memory(archive) => local_rows(archive, key, start..stop, build || !compressed),
            Backend::Remote(_, archive) => {
                let runtime = crate::remote::runtime()?;
                if build && compressed {
                    // Another writer's member: its checkpoints on first
                    // use (one pass), then only the blocks holding rows.
                    runtime
                        .block_on(archive.build_index(key))
                        .map_err(remote_error)?;
                }
                runtime
                    .block_on(archive.read_rows(key, start..stop))
                    .map_err(remote_error)
            }
        })
    }
}

impl LazyMember {
    /// The `length` rows from each of `starts` of a C-ordered member, one
    /// run after another (numpy's `IndexError` for a run past the end,
    /// before anything is read). Runs closer than 1 MiB share one read.
    fn runs(&self, starts: &[usize], length: usize) -> PyResult<AlignedBytes> {
        let row_bytes = self.header.row_bytes().unwrap_or(0);
        let count = self.header.row_count();
        if let Some(&bad) = starts
            .iter()
            .find(|&&start| start.checked_add(length).is_none_or(|end| end > count))
        {
            let missing = if bad >= count && length > 0 {
                bad
            } else {
                count
            };
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "index {missing} is out of bounds for axis 0 with size {count}"
            )));
        }
        let size = length
            .checked_mul(row_bytes)
            .and_then(|size| size.checked_mul(starts.len()).map(|total| (size, total)));
        let Some((size, total)) = size else {
            return Err(value_error("windows too large"));
        };
        let mut out = AlignedBytes::zeroed(total);
        if size == 0 {
            return Ok(out);
        }
        // One read per run of nearby windows (npy-core's planner, in rows).
        let spans: Vec<Range<u64>> = starts
            .iter()
            .map(|&start| start as u64..(start + length) as u64)
            .collect();
        let gap = ((1usize << 20) / row_bytes.max(1)).max(1) as u64;
        let runs = Coalesce {
            align: 1,
            max_gap: gap,
        }
        .ranges(spans.iter().cloned());
        let mut placed = Vec::with_capacity(spans.len());
        for (i, span) in spans.iter().enumerate() {
            let (run, at) = locate(&runs, span)
                .ok_or_else(|| value_error("a window outside the runs planned for it"))?;
            placed.push((run, at, i));
        }
        placed.sort_unstable();
        for (run, windows) in placed.chunk_by(|a, b| a.0 == b.0).map(|w| (w[0].0, w)) {
            let block = self.rows(runs[run].start as usize, runs[run].end as usize)?;
            for &(_, at, i) in windows {
                let from = at * row_bytes;
                out[i * size..(i + 1) * size].copy_from_slice(&block.bytes()[from..from + size]);
            }
        }
        Ok(out)
    }
}

/// Rows of a local member: through its block index (built now if `build`
/// and none is at hand), or else inflated from the member's start.
fn local_rows<R: Read + Seek>(
    archive: &mut NpzArchive<R>,
    key: &str,
    rows: std::ops::Range<usize>,
    build: bool,
) -> PyResult<NpyArray> {
    let indexed = archive
        .cached_block_index(key)
        .map_err(mmap_error)?
        .is_some();
    if build || indexed {
        return archive.read_rows(key, rows).map_err(mmap_error);
    }
    let (part, bytes) = archive
        .header(key)
        .map_err(mmap_error)?
        .rows_part(rows)
        .map_err(|e| value_error(e.to_string()))?;
    let mut reader = archive.reader(key).map_err(mmap_error)?;
    let failed = |e: std::io::Error| value_error(format!("member '{key}': {e}"));
    std::io::copy(&mut (&mut reader).take(bytes.start), &mut std::io::sink()).map_err(failed)?;
    let mut data = npy_core::io::AlignedBytes::zeroed(part.layout.data_len);
    reader.read_exact(&mut data).map_err(failed)?;
    NpyArray::from_parts(part.header, part.layout, data).map_err(|e| value_error(e.to_string()))
}

/// Lists the archive at `url` (one suffix GET).
fn open_remote(url: &str) -> PyResult<Backend> {
    let archive = crate::remote::runtime()?
        .block_on(RemoteNpz::open_url(url))
        .map_err(remote_error)?;
    Ok(Backend::Remote(std::process::id(), archive))
}

#[pymethods]
impl LazyMember {
    /// Member `key` of the archive at `path` (its directory and the
    /// member's header are read now).
    #[staticmethod]
    #[pyo3(signature = (path, key, max_header_size, allow_pickle, encoding, build=true))]
    fn open_path(
        py: Python<'_>,
        path: PathBuf,
        key: &str,
        max_header_size: usize,
        allow_pickle: bool,
        encoding: &str,
        build: bool,
    ) -> PyResult<Self> {
        let options = archive_options(max_header_size, allow_pickle, encoding)?;
        py.detach(|| {
            let archive = options.open_npz(&path)?;
            Self::local(archive, key, build, Backend::File)
        })
        .map_err(mmap_error)
    }

    /// Member `key` of an archive held in memory.
    #[staticmethod]
    fn open_bytes(
        py: Python<'_>,
        data: Vec<u8>,
        key: &str,
        max_header_size: usize,
        allow_pickle: bool,
        encoding: &str,
    ) -> PyResult<Self> {
        let options = archive_options(max_header_size, allow_pickle, encoding)?;
        py.detach(|| {
            let archive = options.read_npz(Cursor::new(data))?;
            Self::local(archive, key, true, Backend::Memory)
        })
        .map_err(mmap_error)
    }

    /// Member `key` of the archive a URL names (one GET lists it, one more
    /// reads the member's header). With `build`, a deflated member another
    /// writer made gets its checkpoints on the first read of rows (one pass
    /// over it); without, rows without an index inflate from its start.
    #[staticmethod]
    #[pyo3(signature = (url, key, build=true))]
    fn open_url(py: Python<'_>, url: &str, key: &str, build: bool) -> PyResult<Self> {
        py.detach(|| {
            let backend = open_remote(url)?;
            let Backend::Remote(_, archive) = &backend else {
                return Err(closed());
            };
            let runtime = crate::remote::runtime()?;
            let ParsedHeader { header, layout } = runtime
                .block_on(archive.member_header(key))
                .map_err(remote_error)?;
            let compressed =
                archive.member(key).map_err(remote_error)?.compression != MemberCompression::Stored;
            Ok(LazyMember {
                backend: Mutex::new(Some(backend)),
                url: Some(url.to_owned()),
                key: key.to_owned(),
                header,
                layout,
                compressed,
                build,
            })
        })
    }

    /// The dtype as the header's descr literal.
    #[getter]
    fn descr(&self) -> String {
        self.header.dtype.header_repr()
    }

    /// The shape.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.header.shape.clone()
    }

    /// Whether the data is in Fortran order (rows along the last axis).
    #[getter]
    fn fortran(&self) -> bool {
        self.header.order == Order::Fortran
    }

    /// Where the array data starts in the member's content.
    #[getter]
    fn data_offset(&self) -> usize {
        self.layout.data_offset
    }

    /// Whether the member is compressed (deflated).
    #[getter]
    fn compressed(&self) -> bool {
        self.compressed
    }

    /// The version (ETag) of the archive in a store that every read is
    /// pinned to; `None` for a local archive (or a store without ETags).
    #[getter]
    fn e_tag(&self) -> PyResult<Option<String>> {
        self.with(|backend| match backend {
            Backend::Remote(_, archive) => Ok(archive.e_tag().map(str::to_owned)),
            Backend::File(_) | Backend::Memory(_) => Ok(None),
        })
    }

    /// The rows where the member's blocks start, for chunks that follow
    /// them (empty when no block index is at hand without a pass).
    fn block_rows(&self, py: Python<'_>) -> PyResult<Vec<usize>> {
        let row_bytes = self.header.row_bytes().unwrap_or(0).max(1) as u64;
        let data_offset = self.layout.data_offset as u64;
        let key = self.key.clone();
        py.detach(|| {
            let index = self.with(|backend| match backend {
                Backend::File(archive) => archive.cached_block_index(&key).map_err(mmap_error),
                Backend::Memory(archive) => archive.cached_block_index(&key).map_err(mmap_error),
                Backend::Remote(_, archive) => archive.block_index(&key).map_err(remote_error),
            })?;
            let Some(index) = index else {
                return Ok(Vec::new());
            };
            Ok((0..index.len())
                .map(|i| {
                    index
                        .block_output(i)
                        .start
                        .saturating_sub(data_offset)
                        .div_ceil(row_bytes) as usize
                })
                .collect())
        })
    }

    /// Rows `start:stop` along the row axis, inflating only their blocks.
    fn read_rows(&self, py: Python<'_>, start: usize, stop: usize) -> PyResult<Parts> {
        let array = py.detach(|| self.rows(start, stop))?;
        array_parts(py, array)
    }

    /// Rows at these positions (in order, repeats allowed) of a C-ordered
    /// member; nearby rows share one read.
    fn read_rows_at(&self, py: Python<'_>, rows: Vec<usize>) -> PyResult<Parts> {
        let header = self.header.clone();
        let array = py.detach(|| -> PyResult<NpyArray> {
            let out = self.runs(&rows, 1)?;
            let mut shape = header.shape.clone();
            if let Some(first) = shape.first_mut() {
                *first = rows.len();
            }
            let part = Header {
                shape,
                ..header.clone()
            };
            let layout = Layout {
                data_len: out.len(),
                ..self.layout
            };
            NpyArray::from_parts(part, layout, out).map_err(|e| value_error(e.to_string()))
        })?;
        array_parts(py, array)
    }

    /// `length` rows from each of `starts` (windows) of a C-ordered member,
    /// one after another, as bytes; nearby windows share one read (of
    /// their blocks only, for a deflated member with an index).
    fn read_windows(
        &self,
        py: Python<'_>,
        starts: Vec<usize>,
        length: usize,
    ) -> PyResult<Py<crate::buffer::Buffer>> {
        let bytes = py.detach(|| self.runs(&starts, length))?;
        crate::buffer::Buffer::owned(py, bytes, format!("windows of member '{}'", self.key))
    }

    /// The whole array: every block inflated on every core, each checked
    /// against its CRC-32 (together, the member's).
    fn read_all(&self, py: Python<'_>) -> PyResult<Parts> {
        let key = self.key.clone();
        let count = self.header.row_count();
        let array = py.detach(|| {
            self.with(|backend| match backend {
                Backend::File(archive) => archive.load(&key).map_err(mmap_error),
                Backend::Memory(archive) => archive.load(&key).map_err(mmap_error),
                Backend::Remote(_, archive) => crate::remote::runtime()?
                    .block_on(archive.read_rows(&key, 0..count))
                    .map_err(remote_error),
            })
        })?;
        array_parts(py, array)
    }

    /// Saves the checkpoints of the archive's deflated members that lack a
    /// block index of their own to `path` (see `npy index`); returns how
    /// many members it holds. Local archives only.
    fn save_index(&self, py: Python<'_>, path: PathBuf) -> PyResult<usize> {
        py.detach(|| {
            self.with(|backend| match backend {
                Backend::File(archive) => archive.save_index(&path).map_err(mmap_error),
                Backend::Memory(archive) => archive.save_index(&path).map_err(mmap_error),
                Backend::Remote(..) => Err(value_error("save_index writes beside a local archive")),
            })
        })
    }

    /// Closes the archive.
    fn close(&self) {
        self.backend
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
    }
}

/// Saves the checkpoints of the deflated members of the archive at
/// `archive` that lack a block index of their own to `target` (`npy
/// index`); returns how many members it holds.
#[pyfunction]
fn save_npz_index(py: Python<'_>, archive: PathBuf, target: PathBuf) -> PyResult<usize> {
    let options = archive_options(1 << 20, false, "ASCII")?;
    py.detach(|| options.open_npz(&archive)?.save_index(&target))
        .map_err(mmap_error)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LazyMember>()?;
    m.add_function(wrap_pyfunction!(save_npz_index, m)?)
}

//! Arrays in object storage (S3, GCS, Azure, HTTP) through npy-remote:
//! an open is one ranged request for the header, row reads are ranged and
//! coalesced requests, uploads are byte-identical to `np.save`, and a
//! multipart *plan* lets many workers upload the parts of one array.

use std::sync::Mutex;

use npy_remote::blocking::{Array, Runtime};
use npy_remote::{PlanOptions, Store, UploadOptions, UploadedPart, WritePlan};
use pyo3::prelude::*;

use npy_core::headerless::Headerless;

use crate::arguments::header;
use crate::door_in;
use crate::errors::remote_error;
use crate::objects::{Parts, array_parts};

/// The tokio runtime of this process, with the process that made it.
static RUNTIME: Mutex<Option<(u32, Runtime)>> = Mutex::new(None);

/// The tokio runtime of this process: made on first use, and made again in
/// a child of `fork`, which inherits the parent's runtime without its
/// threads (a call on it would wait for ever: tokio#4301; multiprocessing
/// forks by default on Linux before Python 3.14). The inherited one is
/// leaked, never dropped: dropping it would wait for those threads too.
pub(crate) fn runtime() -> PyResult<Runtime> {
    let pid = std::process::id();
    let lock = || RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((owner, runtime)) = lock().as_ref()
        && *owner == pid
    {
        return Ok(runtime.clone());
    }
    // Made without holding the lock: a fork meanwhile copies no held lock.
    let made = Runtime::new().map_err(remote_error)?;
    let mut slot = lock();
    match slot.as_ref() {
        Some((owner, runtime)) if *owner == pid => Ok(runtime.clone()),
        _ => {
            if let Some((_, inherited)) = slot.replace((pid, made.clone())) {
                std::mem::forget(inherited);
            }
            Ok(made)
        }
    }
}

/// Whether `source` is a URL npy-remote opens (`s3://`, `gs://`, `az://`,
/// `http(s)://`, ...).
#[pyfunction]
fn is_url(source: &str) -> bool {
    npy_remote::is_url(source)
}

/// An array in object storage, opened lazily: only its header was read.
#[pyclass(module = "npy_mmap._native", frozen)]
pub struct Remote {
    /// The array, and the process that opened it: a child of `fork` opens
    /// it again with its own runtime and connections (the parent's pooled
    /// connections are the parent's, and its runtime has no threads here).
    opened: Mutex<(u32, Array)>,
    url: String,
    options: npy_core::io::ReadOptions,
    transfer: npy_remote::Transfer,
    /// How to read an object without a header (`np.memmap`'s arguments).
    headerless: Option<Headerless>,
}

/// Opens `url` (one ranged GET of the header) on this process's runtime.
fn open(
    url: &str,
    options: npy_core::io::ReadOptions,
    transfer: npy_remote::Transfer,
    headerless: Option<&Headerless>,
) -> PyResult<Array> {
    let runtime = runtime()?;
    let (store, path) = Store::from_url(url).map_err(remote_error)?;
    let objects = store.objects().clone();
    let array = runtime
        .block_on(async {
            match headerless {
                Some(headerless) => {
                    npy_remote::RemoteArray::open_headerless(
                        objects, path, headerless, options, transfer,
                    )
                    .await
                }
                None => npy_remote::RemoteArray::open_with(objects, path, options, transfer).await,
            }
        })
        .map_err(remote_error)?;
    Ok(runtime.wrap(array))
}

impl Remote {
    /// The array as it was opened, for what its header says (the same in
    /// every process).
    fn first(&self) -> Array {
        self.opened
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .1
            .clone()
    }

    /// The array, opened again first in a child of `fork`; refused if the
    /// object no longer holds the array the parent opened.
    fn array(&self) -> PyResult<Array> {
        let pid = std::process::id();
        let mut opened = self.opened.lock().unwrap_or_else(|e| e.into_inner());
        if opened.0 != pid {
            let again = open(
                &self.url,
                self.options,
                self.transfer,
                self.headerless.as_ref(),
            )?;
            if again.remote().header() != opened.1.remote().header() {
                return Err(pyo3::exceptions::PyOSError::new_err(format!(
                    "{}: the object no longer holds the array that was opened (it was replaced)",
                    self.url
                )));
            }
            *opened = (pid, again);
        }
        Ok(opened.1.clone())
    }
}

#[pymethods]
impl Remote {
    /// Opens the array `url` names: one ranged GET of at most 4 KiB.
    /// `part_size` and `concurrency` split large reads into ranged GETs in
    /// flight at once (default 8 MiB × 8); one stream (`concurrency=1`,
    /// a large `part_size`) suits callers that are parallel themselves.
    #[new]
    #[pyo3(signature = (url, max_header_size=npy_core::header::DEFAULT_MAX_HEADER_SIZE, allow_pickle=false, encoding="ASCII", part_size=None, concurrency=None, headerless=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        url: &str,
        max_header_size: usize,
        allow_pickle: bool,
        encoding: &str,
        part_size: Option<usize>,
        concurrency: Option<usize>,
        headerless: Option<crate::arguments::HeaderlessArgs>,
    ) -> PyResult<Self> {
        let headerless = headerless.map(crate::arguments::headerless).transpose()?;
        let mut transfer = npy_remote::Transfer::default();
        if let Some(size) = part_size {
            transfer.part_size = size;
        }
        if let Some(n) = concurrency {
            transfer.concurrency = n;
        }
        let mut options = npy_core::io::ReadOptions::default();
        options.parse.max_header_size = max_header_size;
        options.parse.allow_pickle = allow_pickle;
        options.pickle.encoding = crate::arguments::encoding(encoding)?;
        let array = py.detach(|| open(url, options, transfer, headerless.as_ref()))?;
        Ok(Remote {
            opened: Mutex::new((std::process::id(), array)),
            url: url.to_string(),
            options,
            transfer,
            headerless,
        })
    }

    /// The URL.
    #[getter]
    fn url(&self) -> String {
        self.url.clone()
    }

    /// The dtype's descr literal.
    #[getter]
    fn descr(&self) -> String {
        self.first().remote().header().dtype.header_repr()
    }

    /// The shape.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.first().remote().header().shape.clone()
    }

    /// Whether the data is in Fortran order.
    #[getter]
    fn fortran(&self) -> bool {
        self.first().remote().header().order == npy_core::Order::Fortran
    }

    /// The data's offset in the object.
    #[getter]
    fn data_offset(&self) -> usize {
        self.first().remote().layout().data_offset
    }

    /// The object's version (its ETag) as the open found it, `None` when
    /// the store reports none: every read is pinned to it.
    #[getter]
    fn e_tag(&self) -> Option<String> {
        self.first().remote().e_tag().map(str::to_owned)
    }

    /// The object's size in bytes.
    #[getter]
    fn object_size(&self) -> u64 {
        self.first().remote().object_size()
    }

    /// Rows `start..stop` in one ranged GET.
    fn read_rows(&self, py: Python<'_>, start: usize, stop: usize) -> PyResult<Parts> {
        let array = py.detach(|| self.array()?.read_rows(start..stop).map_err(remote_error))?;
        array_parts(py, array)
    }

    /// Rows at these positions (in order, repeats allowed); nearby rows
    /// share a request.
    fn read_rows_at(&self, py: Python<'_>, rows: Vec<usize>) -> PyResult<Parts> {
        let array = py.detach(|| self.array()?.read_rows_at(&rows).map_err(remote_error))?;
        array_parts(py, array)
    }

    /// `length` rows from each of `starts` (windows), one after another,
    /// as bytes: one ranged request per span the planner makes, concurrent,
    /// pinned to the version opened; numpy's `IndexError` before any request.
    fn read_windows(
        &self,
        py: Python<'_>,
        starts: Vec<usize>,
        length: usize,
    ) -> PyResult<Py<crate::buffer::Buffer>> {
        let bytes = py.detach(|| {
            self.array()?
                .read_windows(&starts, length)
                .map_err(remote_error)
        })?;
        let bytes = npy_core::io::AlignedBytes::from_owner(bytes)
            .unwrap_or_else(|bytes| npy_core::io::AlignedBytes::copy_from(&bytes));
        crate::buffer::Buffer::owned(py, bytes, format!("windows of {}", self.url))
    }

    /// The whole array.
    fn read_all(&self, py: Python<'_>) -> PyResult<Parts> {
        let array = py.detach(|| self.array()?.read_all().map_err(remote_error))?;
        array_parts(py, array)
    }
}

/// The whole object at `url`, as bytes (an object array's pickle is
/// decoded from it by `load_bytes`).
#[pyfunction]
fn download<'py>(py: Python<'py>, url: &str) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let runtime = runtime()?;
    let (store, path) = Store::from_url(url).map_err(remote_error)?;
    let mut out: Vec<u8> = Vec::new();
    py.detach(|| {
        runtime.block_on(npy_remote::download(
            store.objects(),
            &path,
            &mut out,
            npy_remote::Transfer::default(),
            |_| {},
        ))
    })
    .map_err(remote_error)?;
    Ok(pyo3::types::PyBytes::new(py, &out))
}

/// Uploads an array's bytes as the `.npy` object `url` names (one PUT, or
/// a multipart upload that leaves no object if it fails).
#[pyfunction]
fn upload(
    py: Python<'_>,
    url: &str,
    descr: &str,
    shape: Vec<usize>,
    fortran: bool,
    data: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let runtime = runtime()?;
    let (store, path) = Store::from_url(url).map_err(remote_error)?;
    let purpose = door_in::Use::Checked;
    door_in::with_source(py, (descr, shape, fortran), data, purpose, |source| {
        runtime
            .block_on(npy_remote::upload(
                &store,
                &path,
                source,
                UploadOptions::default(),
            ))
            .map_err(remote_error)
    })
}

/// Uploads an object array (numpy's pickle) as the `.npy` object at `url`.
#[pyfunction]
fn upload_objects(
    py: Python<'_>,
    url: &str,
    shape: Vec<usize>,
    fortran: bool,
    values: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let array = crate::objects::object_array(shape, fortran, values)?;
    let runtime = runtime()?;
    let (store, path) = Store::from_url(url).map_err(remote_error)?;
    py.detach(|| {
        runtime.block_on(npy_remote::upload(
            &store,
            &path,
            &array,
            UploadOptions::default(),
        ))
    })
    .map_err(remote_error)
}

/// Starts a multipart upload of an array at `url` and plans its parts:
/// returns the plan as JSON (plain data for workers anywhere).
#[pyfunction]
#[pyo3(signature = (url, descr, shape, fortran, part_size=None))]
fn plan_create(
    py: Python<'_>,
    url: &str,
    descr: &str,
    shape: Vec<usize>,
    fortran: bool,
    part_size: Option<u64>,
) -> PyResult<String> {
    let header = header(descr, shape, fortran)?;
    let mut options = PlanOptions::default();
    if let Some(size) = part_size {
        options.part_size = size;
    }
    let runtime = runtime()?;
    let plan = py
        .detach(|| {
            runtime.block_on(WritePlan::create_at_url(
                url,
                header.dtype,
                header.order,
                header.shape,
                options,
            ))
        })
        .map_err(remote_error)?;
    Ok(plan.to_json())
}

fn plan(json: &str) -> PyResult<(WritePlan, Store)> {
    let plan = WritePlan::from_json(json).map_err(remote_error)?;
    let store = plan.store().map_err(remote_error)?;
    Ok((plan, store))
}

/// Uploads part `index` of a plan (exactly its rows' bytes); returns the
/// store's id of the part, for `plan_complete`.
#[pyfunction]
fn plan_upload_part(
    py: Python<'_>,
    plan_json: &str,
    index: usize,
    data: &Bound<'_, PyAny>,
) -> PyResult<String> {
    let (plan, store) = plan(plan_json)?;
    let runtime = runtime()?;
    let incoming = door_in::Incoming::new(data)?;
    py.detach(|| {
        // One copy, hashed by the store and sent: the part is what it says.
        let bytes = bytes::Bytes::from(incoming.copied());
        runtime
            .block_on(plan.upload_part(&store, index, bytes))
            .map(|receipt| receipt.content_id)
            .map_err(remote_error)
    })
}

/// Completes a plan's upload from the parts' receipts `(index, id)`: the
/// object appears, whole. A missing part is an error (nothing appears).
#[pyfunction]
fn plan_complete(py: Python<'_>, plan_json: &str, receipts: Vec<(usize, String)>) -> PyResult<()> {
    let (plan, store) = plan(plan_json)?;
    let receipts: Vec<UploadedPart> = receipts
        .into_iter()
        .map(|(index, content_id)| UploadedPart { index, content_id })
        .collect();
    let runtime = runtime()?;
    py.detach(|| runtime.block_on(plan.complete(&store, &receipts)))
        .map_err(remote_error)
}

/// Aborts a plan's upload: no object is left.
#[pyfunction]
fn plan_abort(py: Python<'_>, plan_json: &str) -> PyResult<()> {
    let (plan, store) = plan(plan_json)?;
    let runtime = runtime()?;
    py.detach(|| runtime.block_on(plan.abort(&store)))
        .map_err(remote_error)
}

/// The parts of a plan: `(index, row_start, row_stop)` each.
#[pyfunction]
fn plan_parts(plan_json: &str) -> PyResult<Vec<(usize, usize, usize)>> {
    let plan = WritePlan::from_json(plan_json).map_err(remote_error)?;
    Ok(plan
        .parts
        .iter()
        .map(|p| (p.index, p.rows.start, p.rows.end))
        .collect())
}

/// Adds this module's functions and classes.
/// Virtual Zarr references to the arrays `inputs` name (paths, URLs,
/// directories, prefixes ending in `/`): kerchunk's reference JSON
/// (`format="kerchunk"`) or Zarr v3 manifests (`"zarr3"`), as JSON text.
#[pyfunction]
#[pyo3(signature = (inputs, format, rows_per_chunk, chunk_bytes, concurrency))]
fn virtualize(
    py: Python<'_>,
    inputs: Vec<String>,
    format: &str,
    rows_per_chunk: Option<usize>,
    chunk_bytes: u64,
    concurrency: usize,
) -> PyResult<String> {
    use npy_remote::zarr::{ChunkOptions, GatherOptions, gather, kerchunk_refs, zarr3_manifest};
    let build = match format {
        "kerchunk" => kerchunk_refs,
        "zarr3" => zarr3_manifest,
        other => {
            return Err(crate::errors::value_error(format!(
                "format must be 'kerchunk' or 'zarr3', not {other:?}"
            )));
        }
    };
    let runtime = runtime()?;
    let gathering = GatherOptions {
        concurrency: concurrency.max(1),
        ..GatherOptions::default()
    };
    let arrays = py
        .detach(|| runtime.block_on(gather(&inputs, &gathering)))
        .map_err(remote_error)?;
    let chunks = ChunkOptions {
        rows_per_chunk,
        target_bytes: chunk_bytes.max(1),
    };
    let json = build(&arrays, &chunks).map_err(|e| crate::errors::value_error(e.to_string()))?;
    Ok(json.to_string())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Remote>()?;
    m.add_function(wrap_pyfunction!(virtualize, m)?)?;
    m.add_function(wrap_pyfunction!(is_url, m)?)?;
    m.add_function(wrap_pyfunction!(upload, m)?)?;
    m.add_function(wrap_pyfunction!(download, m)?)?;
    m.add_function(wrap_pyfunction!(upload_objects, m)?)?;
    m.add_function(wrap_pyfunction!(plan_create, m)?)?;
    m.add_function(wrap_pyfunction!(plan_upload_part, m)?)?;
    m.add_function(wrap_pyfunction!(plan_complete, m)?)?;
    m.add_function(wrap_pyfunction!(plan_abort, m)?)?;
    m.add_function(wrap_pyfunction!(plan_parts, m)?)?;
    Ok(())
}

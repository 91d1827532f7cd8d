//! URLs as sources (`info`, `validate`, `show`, `stats`, `ls`, `extract`,
//! `render` read arrays and archives in object storage through npy-remote),
//! and `npy cp` between local paths and URLs.

use std::path::Path;
use std::sync::OnceLock;

use anyhow::Context;
use npy_core::{ParseOptions, ReadOptions};
use npy_remote::blocking::{RangeReader, Runtime};
use npy_remote::npz::{NpzOptions, RemoteNpz};
use npy_remote::object_store::path as object_store_path;
use npy_remote::{RemoteArray, RemoteHeader, Store, StoreOptions, Transfer};

use crate::npy_file::{INSPECT_MAX_HEADER, Kind, NpyFile};

/// The URL `path` holds, if it is one (`scheme://...`) rather than a path.
pub fn url_of(path: &Path) -> Option<&str> {
    path.to_str().filter(|text| npy_remote::is_url(text))
}

/// How every store is reached (`--timeout`), set once by `main`.
static OPTIONS: OnceLock<StoreOptions> = OnceLock::new();

/// Sets the options every store is made with (the first call wins).
pub fn set_options(options: StoreOptions) {
    let _ = OPTIONS.set(options);
}

/// The URL of the store made last: what a "no such object" is about (the
/// commands open one URL at a time).
static LAST_URL: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// The store a URL names, with the command line's options.
pub(crate) fn store(url: &str) -> npy_remote::Result<(Store, object_store_path::Path)> {
    *LAST_URL.lock().unwrap_or_else(|p| p.into_inner()) = Some(url.to_string());
    Store::from_url_with(url, OPTIONS.get().unwrap_or(&StoreOptions::default()))
}

/// A missing object, said in one line ("s3://bucket/key: no such object")
/// instead of the store's response (an XML body over several lines).
pub fn not_found_text(err: &anyhow::Error) -> Option<String> {
    let missing = err.chain().any(|cause| {
        cause
            .downcast_ref::<npy_remote::Error>()
            .is_some_and(npy_remote::Error::is_not_found)
            || matches!(
                cause.downcast_ref::<npy_remote::object_store::Error>(),
                Some(npy_remote::object_store::Error::NotFound { .. })
            )
    });
    if !missing {
        return None;
    }
    let url = LAST_URL.lock().unwrap_or_else(|p| p.into_inner()).clone()?;
    // A missing bucket is named as npy-remote names it ("no such bucket 'b' ...").
    let bucket = err
        .chain()
        .filter_map(|cause| cause.downcast_ref::<npy_remote::Error>())
        .map(ToString::to_string)
        .find_map(|text| Some(text[text.find("no such bucket")?..].to_string()));
    match bucket {
        Some(bucket) => Some(format!("{url}: {bucket}")),
        None => Some(format!("{url}: no such object")),
    }
}

/// The runtime every remote request runs on (started on first use).
pub(crate) fn runtime() -> anyhow::Result<&'static Runtime> {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    if let Some(runtime) = RUNTIME.get() {
        return Ok(runtime);
    }
    let runtime = Runtime::new()?;
    Ok(RUNTIME.get_or_init(|| runtime))
}

/// An object's kind, from its name: reading its first bytes to decide (as
/// for a local file) would cost a request that opening then repeats. An
/// archive without `.npz` is reported as a bad `.npy` magic string.
pub fn kind(url: &str) -> Kind {
    if url.to_ascii_lowercase().ends_with(".npz") {
        Kind::Npz
    } else {
        Kind::Npy
    }
}

/// The header and size of the `.npy` object at `url` (one ranged GET).
pub fn npy_file(url: &str, options: &ParseOptions) -> anyhow::Result<NpyFile> {
    let (store, path) = store(url)?;
    let found = runtime()?
        .block_on(RemoteHeader::read(store.objects(), &path, options))
        .map_err(|e| {
            let what = if matches!(e.kind(), npy_remote::ErrorKind::Format(_)) {
                "is not a valid .npy file"
            } else {
                "cannot be read"
            };
            anyhow::Error::new(e).context(format!("{url} {what}"))
        })?;
    Ok(NpyFile {
        header: found.header,
        layout: found.layout,
        file_size: found.object_size,
    })
}

/// The `.npy` object at `url`, for reading its values.
pub fn open_array(url: &str) -> anyhow::Result<npy_remote::blocking::Array> {
    let (store, path) = store(url)?;
    let options = ReadOptions {
        parse: ParseOptions {
            max_header_size: INSPECT_MAX_HEADER,
            ..Default::default()
        },
        ..ReadOptions::default()
    };
    let runtime = runtime()?;
    let array = runtime.block_on(RemoteArray::open_with(
        store.objects().clone(),
        path,
        options,
        Transfer::default(),
    ))?;
    Ok(runtime.wrap(array))
}

/// Block size and count of the reader archives are read through: 8 MiB
/// blocks (one request each when members are streamed), four kept.
const ARCHIVE_BLOCK: usize = 8 << 20;
const ARCHIVE_BLOCKS: usize = 4;

/// A reader of the archive at `url` for npy-mmap's `NpzArchive`.
pub fn archive_reader(url: &str) -> anyhow::Result<RangeReader> {
    let (store, path) = store(url)?;
    Ok(RangeReader::open(
        runtime()?,
        store.objects().clone(),
        path,
        ARCHIVE_BLOCK,
        ARCHIVE_BLOCKS,
    )?)
}

/// `npy show --allow-pickle` of a URL: the object array of the `.npy` (or
/// of the chosen npz member), as `commands::objects` reads local ones:
/// `None` unless it holds objects; `allowed` refuses them without
/// `--allow-pickle`; then the whole array is read and decoded with
/// `options` (npy-core's restricted unpickler, its heap bounded).
pub fn load_objects(
    url: &str,
    member: Option<&str>,
    options: &ReadOptions,
    allowed: impl Fn() -> anyhow::Result<()>,
) -> anyhow::Result<Option<npy_core::NpyArray>> {
    let (store, path) = store(url)?;
    let runtime = runtime()?;
    // Headers are read letting object dtypes through (nothing is unpickled).
    let header_options = ParseOptions {
        allow_pickle: true,
        ..options.parse
    };
    if kind(url) == Kind::Npz {
        let npz_options = NpzOptions {
            read: *options,
            ..NpzOptions::default()
        };
        let archive =
            runtime.block_on(RemoteNpz::open(store.objects().clone(), path, npz_options))?;
        let key = match (member, archive.members()) {
            (Some(key), _) => key.to_string(),
            (None, [only]) => only.key.clone(),
            // The array path explains the choice of member.
            (None, _) => return Ok(None),
        };
        let Ok(parsed) = runtime.block_on(archive.header(&key)) else {
            return Ok(None);
        };
        if parsed.header.dtype != npy_core::DType::Object {
            return Ok(None);
        }
        allowed()?;
        return Ok(Some(runtime.block_on(archive.load(&key))?));
    }
    let found = runtime.block_on(RemoteHeader::read(store.objects(), &path, &header_options))?;
    if found.header.dtype != npy_core::DType::Object {
        return Ok(None);
    }
    allowed()?;
    Ok(Some(load_npy(url, options)?))
}

/// The whole `.npy` object at `url`, read as `np.load` reads it (an object
/// array decoded when `options` allow pickles).
pub fn load_npy(url: &str, options: &ReadOptions) -> anyhow::Result<npy_core::NpyArray> {
    let (store, path) = store(url)?;
    let bytes = runtime()?
        .block_on(async {
            use npy_remote::object_store::ObjectStoreExt;
            store.objects().get(&path).await?.bytes().await
        })
        .with_context(|| format!("cannot read {url}"))?;
    npy_core::read_npy(&bytes[..], options).with_context(|| url.to_string())
}

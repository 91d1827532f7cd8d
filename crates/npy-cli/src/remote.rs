//! URLs as sources (`info`, `validate`, `show`, `stats`, `ls`, `extract`,
//! `render` read arrays and archives in object storage through npy-remote),
//! and `npy cp` between local paths and URLs.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, bail};
use npy_core::{ParseOptions, ReadOptions};
use npy_remote::blocking::{RangeReader, Runtime};
use npy_remote::npz::{NpzOptions, RemoteNpz};
use npy_remote::object_store::path as object_store_path;
use npy_remote::{RemoteArray, RemoteHeader, Store, StoreOptions, Transfer, UploadOptions};

use crate::cli::CpArgs;
use crate::progress::Progress;
use crate::source::{self, Kind, NpyFile};

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
fn store(url: &str) -> npy_remote::Result<(Store, object_store_path::Path)> {
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
    Some(format!("{url}: no such object"))
}

/// The runtime every remote request runs on (started on first use).
fn runtime() -> anyhow::Result<&'static Runtime> {
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
            let what = if e.format_error().is_some() {
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
            max_header_size: source::INSPECT_MAX_HEADER,
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

/// `npy cp SRC DST`.
pub fn cp(args: &CpArgs, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let part_size = args.part_mib.max(1) << 20;
    let concurrency = args.concurrency.max(1);
    match (url_of(&args.source), url_of(&args.destination)) {
        (None, Some(url)) => match file_url_path(url) {
            Some(destination) => {
                source::refuse_to_replace(&destination, args.force)?;
                copy_to_file(&args.source, &destination)?
            }
            None => upload(&args.source, url, part_size, concurrency)?,
        },
        (Some(url), None) => {
            let destination = local_destination(url, &args.destination);
            source::refuse_to_replace(&destination, args.force)?;
            download(url, &destination, part_size, concurrency)?;
            writeln!(out, "{}", destination.display())?;
            return Ok(());
        }
        (Some(_), Some(_)) => bail!(
            "both {} and {} are URLs: copy to a local file first (or use the store's own copy)",
            args.source.display(),
            args.destination.display()
        ),
        (None, None) => bail!(
            "neither {} nor {} is a URL: npy cp copies to or from object storage",
            args.source.display(),
            args.destination.display()
        ),
    }
    writeln!(out, "{}", args.destination.display())?;
    Ok(())
}

/// A local destination: into a folder, the object's own name.
fn local_destination(url: &str, destination: &Path) -> PathBuf {
    if destination.is_dir() {
        let name = url.rsplit('/').next().unwrap_or(url);
        destination.join(name)
    } else {
        destination.to_path_buf()
    }
}

/// What a file holds, checked before and after a copy.
#[derive(Debug, PartialEq, Eq)]
enum Content {
    Npy(npy_core::Header),
    Npz(Vec<(String, u64, u32)>),
}

/// Whose lock protects a local file while it is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Locked {
    /// Take the shared lock (a file others may be changing).
    Take,
    /// Already ours: a temporary this process writes and holds exclusive
    /// (taking the lock again would wait for ourselves).
    Ours,
}

/// The local file's kind and content, refusing one numpy could not load.
fn local_content(path: &Path, locked: Locked) -> anyhow::Result<(Content, u64)> {
    let options = ParseOptions {
        max_header_size: source::INSPECT_MAX_HEADER,
        ..Default::default()
    };
    match source::sniff(path)? {
        Kind::Npy => {
            let file = match locked {
                Locked::Take => NpyFile::open(path, &options)?,
                Locked::Ours => {
                    NpyFile::read(npy_mmap::open_regular(path, false)?, path, &options)?
                }
            };
            if file.surplus() < 0 {
                bail!(
                    "{}: {}",
                    path.display(),
                    npy_core::Error::truncated_data(
                        &file.header,
                        usize::try_from(file.layout.data_len as i128 + file.surplus()).unwrap_or(0)
                    )
                );
            }
            Ok((Content::Npy(file.header), file.file_size))
        }
        Kind::Npz => {
            let file = npy_mmap::open_regular(path, false)?;
            let size = file.metadata()?.len();
            let archive = npy_mmap::npz::NpzArchive::new(std::io::BufReader::new(file))
                .with_context(|| format!("cannot read the archive {}", path.display()))?;
            let members = archive
                .member_names()
                .iter()
                .map(|name| {
                    let info = archive.info(name)?;
                    Ok((info.name, info.size, info.crc32))
                })
                .collect::<anyhow::Result<_>>()?;
            Ok((Content::Npz(members), size))
        }
    }
}

/// The remote object's content and size, read back from the store.
fn remote_content(url: &str, npz: bool) -> anyhow::Result<(Content, u64)> {
    let (store, path) = store(url)?;
    let runtime = runtime()?;
    if npz {
        let archive = runtime.block_on(RemoteNpz::open(
            store.objects().clone(),
            path,
            NpzOptions::default(),
        ))?;
        let members = archive
            .members()
            .iter()
            .map(|m| (m.name.clone(), m.size, m.crc32))
            .collect();
        Ok((Content::Npz(members), archive.size()))
    } else {
        let options = ParseOptions {
            max_header_size: source::INSPECT_MAX_HEADER,
            ..Default::default()
        };
        let found = runtime.block_on(RemoteHeader::read(store.objects(), &path, &options))?;
        Ok((Content::Npy(found.header), found.object_size))
    }
}

/// The local path a `file://` URL names (`None` for other URLs).
fn file_url_path(url: &str) -> Option<PathBuf> {
    let parsed = url::Url::parse(url).ok()?;
    (parsed.scheme() == "file")
        .then(|| parsed.to_file_path().ok())
        .flatten()
}

/// `npy cp` to a `file://` URL: the destination is replaced like every file
/// the CLI writes (a temporary beside it, verified, renamed over it, keeping
/// the old file's mode), not written anew by object_store's local store
/// (which reset a 0640 file to 0644).
fn copy_to_file(local: &Path, destination: &Path) -> anyhow::Result<()> {
    let (content, size) = local_content(local, Locked::Take)?;
    if let Some(parent) = destination.parent() {
        // As object_store's local store does for an object's path.
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let mut source = npy_mmap::open_regular(local, false)?;
    let mut file = npy_mmap::AtomicFile::create(destination)
        .with_context(|| format!("cannot write {}", destination.display()))?;
    let written = std::io::copy(&mut source, &mut file)
        .and_then(|written| std::io::Write::flush(&mut file).map(|()| written))
        .with_context(|| {
            format!(
                "cannot copy {} to {}",
                local.display(),
                destination.display()
            )
        })?;
    let (copied, copied_size) = local_content(file.temp_path(), Locked::Ours)
        .with_context(|| format!("cannot verify the copy to {}", destination.display()))?;
    if (written, copied_size, &copied) != (size, size, &content) {
        bail!(
            "the copy to {} does not match {} ({copied_size} bytes, {size} expected)",
            destination.display(),
            local.display()
        );
    }
    file.commit()
        .with_context(|| format!("cannot write {}", destination.display()))?;
    Ok(())
}

fn upload(local: &Path, url: &str, part_size: usize, concurrency: usize) -> anyhow::Result<()> {
    let (content, size) = local_content(local, Locked::Take)?;
    let (store, path) = store(url)?;
    let mut file = npy_mmap::open_regular(local, false)?;
    let mut progress = Progress::bytes(size, "uploading", false);
    let mut reported = 0;
    let options = UploadOptions {
        part_size,
        concurrency,
    };
    runtime()?
        .block_on(npy_remote::upload_reader(
            &store,
            &path,
            &mut file,
            size,
            options,
            |sent| {
                progress.advance(sent - reported);
                reported = sent;
            },
        ))
        .with_context(|| format!("cannot upload {} to {url}", local.display()))?;
    drop(progress);
    let (copied, copied_size) = remote_content(url, matches!(content, Content::Npz(_)))
        .with_context(|| format!("cannot verify the upload to {url}"))?;
    if (copied_size, &copied) != (size, &content) {
        bail!(
            "the upload to {url} does not match {} ({copied_size} bytes, {size} expected)",
            local.display()
        );
    }
    Ok(())
}

fn download(url: &str, local: &Path, part_size: usize, concurrency: usize) -> anyhow::Result<()> {
    let (content, size) = remote_content(url, kind(url) == Kind::Npz)?;
    let (store, path) = store(url)?;
    // Replaced like every save: a temporary beside the destination, renamed
    // over it once the copy is verified.
    let mut file = npy_mmap::AtomicFile::create(local)
        .with_context(|| format!("cannot write {}", local.display()))?;
    let mut progress = Progress::bytes(size, "downloading", false);
    let mut reported = 0;
    let transfer = Transfer {
        part_size,
        concurrency,
        ..Transfer::default()
    };
    let written = runtime()?
        .block_on(npy_remote::download(
            store.objects(),
            &path,
            &mut file,
            transfer,
            |done| {
                progress.advance(done - reported);
                reported = done;
            },
        ))
        .with_context(|| format!("cannot download {url}"))?;
    drop(progress);
    let (copied, copied_size) = local_content(file.temp_path(), Locked::Ours)
        .with_context(|| format!("cannot verify the download of {url}"))?;
    if (written, copied_size, &copied) != (size, size, &content) {
        bail!("the download of {url} does not match it ({copied_size} bytes, {size} expected)");
    }
    file.commit()
        .with_context(|| format!("cannot write {}", local.display()))?;
    Ok(())
}

//! `npy cp`: copies between a local path and a URL, verified by reading
//! the copy's size and header (or members) back. Above both readers: it
//! uses `source` for local files and `remote` for objects.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use npy_core::ParseOptions;
use npy_remote::npz::{NpzOptions, RemoteNpz};
use npy_remote::{RemoteHeader, Transfer, UploadOptions};

use crate::cli::CpArgs;
use crate::output;
use crate::progress::Progress;
use crate::remote::{kind, runtime, store, url_of};
use crate::source::{self, Kind, NpyFile};

/// `npy cp SRC DST`.
pub fn cp(args: &CpArgs, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let part_size = args.part_mib.max(1) << 20;
    let concurrency = args.concurrency.max(1);
    match (url_of(&args.source), url_of(&args.destination)) {
        (None, Some(url)) => match file_url_path(url) {
            Some(destination) => {
                output::refuse_to_replace(&destination, args.force)?;
                copy_to_file(&args.source, &destination, args.force)?
            }
            None => upload(&args.source, url, part_size, concurrency)?,
        },
        (Some(url), None) => {
            let destination = local_destination(url, &args.destination);
            output::refuse_to_replace(&destination, args.force)?;
            download(url, &destination, part_size, concurrency, args.force)?;
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
fn copy_to_file(local: &Path, destination: &Path, force: bool) -> anyhow::Result<()> {
    let (content, size) = local_content(local, Locked::Take)?;
    if let Some(parent) = destination.parent() {
        // As object_store's local store does for an object's path.
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let mut source = npy_mmap::open_regular(local, false)?;
    let mut file = output::create(destination, force)
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
    output::committed(file.commit())
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

fn download(
    url: &str,
    local: &Path,
    part_size: usize,
    concurrency: usize,
    force: bool,
) -> anyhow::Result<()> {
    let (content, size) = remote_content(url, kind(url) == Kind::Npz)?;
    let (store, path) = store(url)?;
    // Replaced like every save: a temporary beside the destination, renamed
    // over it once the copy is verified.
    let mut file = output::create(local, force)
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
    output::committed(file.commit())
        .with_context(|| format!("cannot write {}", local.display()))?;
    Ok(())
}

//! Reading what the references need: each array's header and where its
//! data starts, from local paths, URLs, directories and prefixes, with
//! bounded concurrency.

use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use npy_core::npz::MemberCompression;
use npy_core::{ParseOptions, ReadOptions};
use object_store::ObjectStore;
use object_store::path::Path;
use url::Url;

use super::manifest::{Pin, VirtualArray};
use crate::error::{Error, ErrorKind, Result, VirtualError};
use crate::npz::{NpzOptions, RemoteNpz};
use crate::read::{RemoteArray, Transfer};
use crate::store::{Store, StoreOptions, is_url};

/// How inputs are read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatherOptions {
    /// Objects opened at once (default 32).
    pub concurrency: usize,
    /// The stores' request settings.
    pub store: StoreOptions,
}

impl Default for GatherOptions {
    fn default() -> Self {
        GatherOptions {
            concurrency: 32,
            store: StoreOptions::default(),
        }
    }
}

/// One object to open.
struct Target {
    store: Arc<dyn ObjectStore>,
    path: Path,
    /// What references point at.
    reference: String,
    /// The variable name's stem.
    stem: String,
    /// A local file, for its modification time.
    local: Option<PathBuf>,
}

fn has_array_extension(name: &str) -> bool {
    name.ends_with(".npy") || name.ends_with(".npz")
}

fn stem(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name);
    base.strip_suffix(".npy")
        .or_else(|| base.strip_suffix(".npz"))
        .unwrap_or(base)
        .to_owned()
}

fn io_error(operation: &'static str, source: std::io::Error) -> Error {
    Error::from(ErrorKind::Io { operation, source })
}

fn url_error(url: &str, reason: impl Into<String>) -> Error {
    Error::from(ErrorKind::Url {
        url: url.to_owned(),
        reason: reason.into(),
    })
}

/// The targets one input names: a file or object, or the `.npy`/`.npz`
/// files of a directory or prefix (sorted by name).
async fn expand(input: &str, options: &GatherOptions) -> Result<Vec<Target>> {
    if !is_url(input) {
        let path = std::fs::canonicalize(input).map_err(|e| io_error("read the path", e))?;
        let files = if path.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&path)
                .map_err(|e| io_error("list the directory", e))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && has_array_extension(&p.to_string_lossy()))
                .collect();
            files.sort();
            if files.is_empty() {
                return Err(virtual_error(
                    input,
                    VirtualError::Empty {
                        location: input.to_owned(),
                    },
                ));
            }
            files
        } else {
            vec![path]
        };
        return files
            .into_iter()
            .map(|file| local_target(&file, options))
            .collect();
    }
    let (store, path) = Store::from_url_with(input, &options.store)?;
    let store = store.objects().clone();
    // What references name (and messages show): the URL without credentials.
    let reference = public_url(input)?;
    let listed = reference.ends_with('/') || !has_array_extension(&reference);
    if !listed {
        return Ok(vec![Target {
            store,
            stem: stem(path.as_ref()),
            path,
            reference,
            local: None,
        }]);
    }
    let base = Url::parse(&reference).map_err(|e| url_error(&reference, e.to_string()))?;
    let mut objects: Vec<Path> = store
        .list(Some(&path))
        .map_ok(|meta| meta.location)
        .try_filter(|location| std::future::ready(has_array_extension(location.as_ref())))
        .try_collect()
        .await
        .map_err(|e| Error::store(crate::error::Operation::List, &path, e))?;
    objects.sort();
    if objects.is_empty() {
        return Err(virtual_error(
            &path,
            VirtualError::Empty {
                location: reference,
            },
        ));
    }
    objects
        .into_iter()
        .map(|object| {
            Ok(Target {
                store: store.clone(),
                reference: object_url(&base, &path, &object)?,
                stem: stem(object.as_ref()),
                path: object,
                local: None,
            })
        })
        .collect()
}

fn local_target(file: &FsPath, options: &GatherOptions) -> Result<Target> {
    let url = Url::from_file_path(file)
        .map_err(|()| url_error(&file.to_string_lossy(), "not an absolute path"))?;
    let (store, path) = Store::from_url_with(url.as_str(), &options.store)?;
    Ok(Target {
        store: store.objects().clone(),
        stem: stem(&file.to_string_lossy()),
        path,
        reference: file.to_string_lossy().into_owned(),
        local: Some(file.to_owned()),
    })
}

/// `input` as references may name it: without credentials. A user name
/// and password (`http://user:pw@host/...`) are dropped, and so are the
/// query and fragment, where signatures and tokens travel
/// (`?X-Amz-Signature=...`): references are shared files, and what the
/// objects were read at is the URL without them (the stores request the
/// path alone). Readers bring their own credentials (fsspec's
/// `storage_options`, VirtualiZarr's registry). A URL with nothing to drop
/// is kept as written.
fn public_url(input: &str) -> Result<String> {
    let mut url = Url::parse(input).map_err(|e| url_error(input, e.to_string()))?;
    let private = !url.username().is_empty()
        || url.password().is_some()
        || url.query().is_some()
        || url.fragment().is_some();
    if !private {
        return Ok(input.to_owned());
    }
    // Only URLs with a host can have a user name or password (these fail
    // on the others, which have none to drop).
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    Ok(url.to_string())
}

/// The URL of `object`, listed under the prefix `prefix` that the URL
/// `base` names: `base` with its path's prefix part replaced.
fn object_url(base: &Url, prefix: &Path, object: &Path) -> Result<String> {
    let url_path = base.path().trim_end_matches('/');
    let prefix = prefix.as_ref();
    let root = url_path
        .strip_suffix(prefix)
        .ok_or_else(|| url_error(base.as_str(), "cannot tell the prefix from the URL's path"))?;
    let root = root.trim_end_matches('/');
    let mut url = base.clone();
    url.set_path(&format!("{root}/{object}"));
    Ok(url.to_string())
}

fn virtual_error(path: impl std::fmt::Display, error: VirtualError) -> Error {
    Error::at(path, ErrorKind::Virtual(error))
}

fn read_options() -> ReadOptions {
    ReadOptions {
        // Object arrays are parsed, then refused with the reason.
        parse: ParseOptions {
            allow_pickle: true,
            ..ParseOptions::default()
        },
        ..ReadOptions::default()
    }
}

fn mtime_ns(file: &FsPath) -> Option<u64> {
    let modified = std::fs::metadata(file).ok()?.modified().ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(since.as_nanos()).ok()
}

/// The arrays of one target: one for an `.npy`, one per member of an npz.
async fn open_target(target: Target, member_names: bool) -> Result<Vec<VirtualArray>> {
    let mtime = target.local.as_deref().and_then(mtime_ns);
    let describe = |array: &RemoteArray, name: String, member: Option<String>| {
        if array.header().dtype.has_object() {
            let error = virtual_error(array.path(), VirtualError::Object);
            return Err(match &member {
                Some(m) => error.in_member(m),
                None => error,
            });
        }
        Ok(VirtualArray {
            name,
            url: target.reference.clone(),
            member,
            header: array.header().clone(),
            data_start: array.data_start(),
            pin: Pin {
                e_tag: array.e_tag().map(str::to_owned),
                size: array.object_size(),
                mtime_ns: mtime,
            },
        })
    };
    if !target.path.as_ref().ends_with(".npz") {
        let array = RemoteArray::open_with(
            target.store.clone(),
            target.path.clone(),
            read_options(),
            Transfer::default(),
        )
        .await?;
        return Ok(vec![describe(&array, target.stem.clone(), None)?]);
    }
    let options = NpzOptions {
        read: read_options(),
        ..NpzOptions::default()
    };
    let npz = RemoteNpz::open(target.store.clone(), target.path.clone(), options).await?;
    let members = npz.members().to_vec();
    for member in &members {
        if member.compression != MemberCompression::Stored {
            return Err(virtual_error(&target.path, VirtualError::Deflated).in_member(&member.name));
        }
    }
    let arrays = npz.stored_arrays().await?;
    members
        .iter()
        .zip(&arrays)
        .map(|(member, array)| {
            let name = if member_names {
                member.key.clone()
            } else {
                format!("{}.{}", target.stem, member.key)
            };
            describe(array, name, Some(member.name.clone()))
        })
        .collect()
}

/// Every array the inputs name, in order: local paths (a `.npy`, an
/// `.npz`, or a directory of them) and URLs (an object, or a prefix
/// ending in `/` whose `.npy`/`.npz` objects are listed). Each `.npy`
/// costs one ranged GET; an npz its tail (one GET, two for a large
/// directory) and one GET per stored member's headers.
///
/// Variables are named after the file's stem; an npz's members after
/// their keys when it is the only input, else `<stem>.<key>`.
///
/// Errors: the first failure (a path that is not there, a request, a
/// format error) and [`VirtualError`]s for arrays Zarr cannot read in
/// place: object arrays and deflated members.
pub async fn gather(inputs: &[String], options: &GatherOptions) -> Result<Vec<VirtualArray>> {
    let mut targets = Vec::new();
    for input in inputs {
        targets.extend(expand(input, options).await?);
    }
    let member_names = targets.len() == 1;
    let per_target: Vec<Vec<VirtualArray>> = futures::stream::iter(targets)
        .map(|target| open_target(target, member_names))
        .buffered(options.concurrency.max(1))
        .try_collect()
        .await?;
    Ok(per_target.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_urls_keep_the_scheme_and_bucket() {
        let base = Url::parse("s3://bucket/data/run1/").unwrap();
        let url = object_url(
            &base,
            &Path::from("data/run1"),
            &Path::from("data/run1/a b.npy"),
        );
        assert_eq!(url.unwrap(), "s3://bucket/data/run1/a%20b.npy");
        let base = Url::parse("s3://bucket/").unwrap();
        let url = object_url(&base, &Path::from(""), &Path::from("x.npz"));
        assert_eq!(url.unwrap(), "s3://bucket/x.npz");
        assert_eq!(stem("dir/x.npz"), "x");
    }

    #[test]
    fn references_drop_credentials_and_keep_clean_urls_as_written() {
        let public = |url: &str| public_url(url).unwrap();
        assert_eq!(
            public("https://user:pw@host:8443/d/a.npy?X-Amz-Signature=x&X-Amz-Credential=y#z"),
            "https://host:8443/d/a.npy"
        );
        assert_eq!(public("http://user@host/a.npy"), "http://host/a.npy");
        // Nothing to drop: as written (not re-encoded).
        assert_eq!(public("s3://bucket/a b.npy"), "s3://bucket/a b.npy");
        let base = Url::parse(&public("https://u:p@host/run1/?sig=1")).unwrap();
        let url = object_url(&base, &Path::from("run1"), &Path::from("run1/x.npy"));
        assert_eq!(url.unwrap(), "https://host/run1/x.npy");
    }
}

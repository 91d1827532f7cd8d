//! How a URL becomes a store: one place.

use std::sync::Arc;

use object_store::multipart::MultipartStore;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreScheme};
use url::Url;

use crate::error::{Error, Result};

/// A store and, where it has one, its multipart API with explicit part
/// numbers ([`MultipartStore`]: S3, GCS, Azure, in-memory), which the
/// streaming writer and the parallel-writer plan need: parts uploaded in any
/// order, from any process.
#[derive(Clone)]
pub struct Store {
    objects: Arc<dyn ObjectStore>,
    multipart: Option<Arc<dyn MultipartStore>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("objects", &self.objects)
            .field("multipart", &self.multipart.is_some())
            .finish()
    }
}

impl Store {
    /// A store without the explicit-part multipart API (HTTP, local files,
    /// or any wrapper): reads, single PUTs and ordered multipart uploads.
    pub fn new(objects: Arc<dyn ObjectStore>) -> Store {
        Store {
            objects,
            multipart: None,
        }
    }

    /// A store that also uploads parts by number (S3, GCS, Azure,
    /// `InMemory`, or a wrapper around one of them).
    pub fn with_multipart<S: ObjectStore + MultipartStore>(store: Arc<S>) -> Store {
        Store {
            objects: store.clone(),
            multipart: Some(store),
        }
    }

    /// The object API.
    pub fn objects(&self) -> &Arc<dyn ObjectStore> {
        &self.objects
    }

    /// The explicit-part multipart API, when the store has it.
    pub fn multipart(&self) -> Option<&Arc<dyn MultipartStore>> {
        self.multipart.as_ref()
    }

    /// The store a URL names and the object's path in it.
    ///
    /// - `s3://bucket/key` (and `s3a://`, and `https://` addresses of S3,
    ///   R2, GCS and Azure), `gs://bucket/key`, `az://container/key` (and
    ///   `abfs://`, `adl://`, `azure://`): the cloud store, configured from
    ///   the environment exactly as its `object_store` builder's `from_env`
    ///   reads it (`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT`, `AWS_ALLOW_HTTP`,
    ///   `GOOGLE_SERVICE_ACCOUNT`, `AZURE_STORAGE_ACCOUNT_NAME`, ...).
    ///   These support parts uploaded by number.
    /// - `http://`, `https://` (other hosts): a plain HTTP server (ranged
    ///   GETs; writes need WebDAV).
    /// - `file:///absolute/path`: the local file system.
    /// - `memory:///key`: a new, empty in-memory store (for tests).
    ///
    /// Errors: [`Error::Url`] for a URL that does not parse or names no store.
    pub fn from_url(url: &str) -> Result<(Store, Path)> {
        let bad = |reason: String| Error::Url {
            url: url.to_string(),
            reason,
        };
        let parsed = Url::parse(url).map_err(|e| bad(e.to_string()))?;
        let (scheme, path) = ObjectStoreScheme::parse(&parsed).map_err(|e| bad(e.to_string()))?;
        // The cloud stores, built from the environment, upload numbered parts.
        fn numbered<S: ObjectStore + MultipartStore>(
            built: object_store::Result<S>,
        ) -> object_store::Result<Store> {
            built.map(|store| Store::with_multipart(Arc::new(store)))
        }
        let built = match scheme {
            ObjectStoreScheme::AmazonS3 => numbered(
                object_store::aws::AmazonS3Builder::from_env()
                    .with_url(url)
                    .build(),
            ),
            ObjectStoreScheme::GoogleCloudStorage => numbered(
                object_store::gcp::GoogleCloudStorageBuilder::from_env()
                    .with_url(url)
                    .build(),
            ),
            ObjectStoreScheme::MicrosoftAzure => numbered(
                object_store::azure::MicrosoftAzureBuilder::from_env()
                    .with_url(url)
                    .build(),
            ),
            ObjectStoreScheme::Memory => numbered(Ok(object_store::memory::InMemory::new())),
            // HTTP and local files: object_store's own URL parsing, with the environment.
            _ => object_store::parse_url_opts(&parsed, std::env::vars())
                .map(|(store, _)| Store::new(Arc::from(store))),
        };
        let store = built.map_err(|e| bad(e.to_string()))?;
        if path.as_ref().is_empty() {
            return Err(bad("the URL names no object (the path is empty)".into()));
        }
        Ok((store, path))
    }
}

/// Whether `source` is a URL (has a scheme followed by `://`, or is a
/// `memory:` or `file:` URL) rather than a local path.
pub fn is_url(source: &str) -> bool {
    match source.split_once("://") {
        Some((scheme, _)) => {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

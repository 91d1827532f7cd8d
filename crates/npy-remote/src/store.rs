//! How a URL becomes a store: one place.

use std::sync::Arc;
use std::time::Duration;

use object_store::multipart::MultipartStore;
use object_store::path::Path;
use object_store::{ClientConfigKey, RetryConfig};
use object_store::{ObjectStore, ObjectStoreScheme};
use url::Url;

use crate::error::{Error, ErrorKind, Result};
use crate::guard::Guarded;

/// How the requests of a store made from a URL behave
/// ([`Store::from_url_with`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreOptions {
    /// How long one request may take, from connecting to its last byte,
    /// before it is abandoned (a silent or dripping server); a failed
    /// request is retried only while the operation is younger than this,
    /// and every operation (a request with all its retries) has one
    /// deadline, twice the timeout, after which it fails saying so. Default:
    /// [`StoreOptions::DEFAULT_TIMEOUT`] (object_store's own retries would
    /// wait up to 3 minutes). Local files ignore it.
    pub timeout: Duration,
}

impl StoreOptions {
    /// The default [`timeout`](Self::timeout): 30 seconds.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            timeout: Self::DEFAULT_TIMEOUT,
        }
    }
}

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
    /// Errors: [`ErrorKind::Url`] for a URL that does not parse or names no store.
    pub fn from_url(url: &str) -> Result<(Store, Path)> {
        Store::from_url_with(url, &StoreOptions::default())
    }

    /// [`from_url`](Self::from_url) with options (the request timeout).
    pub fn from_url_with(url: &str, options: &StoreOptions) -> Result<(Store, Path)> {
        install_tls();
        let bad = |reason: String| {
            Error::from(ErrorKind::Url {
                url: url.to_string(),
                reason,
            })
        };
        let parsed = Url::parse(url).map_err(|e| bad(e.to_string()))?;
        let (scheme, path) = ObjectStoreScheme::parse(&parsed).map_err(|e| bad(e.to_string()))?;
        // The cloud stores, built from the environment, upload numbered parts.
        fn numbered<S: ObjectStore + MultipartStore>(
            built: object_store::Result<S>,
        ) -> object_store::Result<Store> {
            built.map(|store| Store::with_multipart(Arc::new(store)))
        }
        // The timeout: each request's (set like a configuration key, so
        // the environment's other client settings stay), and the retries'.
        let timeout = format!("{}ms", options.timeout.as_millis().max(1));
        let retrying = RetryConfig {
            retry_timeout: options.timeout,
            ..RetryConfig::default()
        };
        let build = |retry: RetryConfig| match scheme {
            ObjectStoreScheme::AmazonS3 => numbered(
                object_store::aws::AmazonS3Builder::from_env()
                    .with_url(url)
                    .with_config(
                        object_store::aws::AmazonS3ConfigKey::Client(ClientConfigKey::Timeout),
                        &timeout,
                    )
                    .with_retry(retry)
                    .build(),
            ),
            ObjectStoreScheme::GoogleCloudStorage => numbered(
                object_store::gcp::GoogleCloudStorageBuilder::from_env()
                    .with_url(url)
                    .with_config(
                        object_store::gcp::GoogleConfigKey::Client(ClientConfigKey::Timeout),
                        &timeout,
                    )
                    .with_retry(retry)
                    .build(),
            ),
            ObjectStoreScheme::MicrosoftAzure => numbered(
                object_store::azure::MicrosoftAzureBuilder::from_env()
                    .with_url(url)
                    .with_config(
                        object_store::azure::AzureConfigKey::Client(ClientConfigKey::Timeout),
                        &timeout,
                    )
                    .with_retry(retry)
                    .build(),
            ),
            // HTTP: the server's base URL (the object's path is `path`),
            // the client settings the environment names (as object_store's
            // URL parsing reads them), then the timeout. An `http://` URL
            // asks for plain HTTP: it is allowed (object_store's client
            // refuses it unless told, with a bare "builder error").
            _ => std::env::vars()
                .filter_map(|(key, value)| {
                    Some((
                        key.to_ascii_lowercase().parse::<ClientConfigKey>().ok()?,
                        value,
                    ))
                })
                .fold(
                    object_store::http::HttpBuilder::new()
                        .with_url(&parsed[..url::Position::BeforePath])
                        .with_config(
                            ClientConfigKey::AllowHttp,
                            (parsed.scheme() == "http").to_string(),
                        ),
                    |builder, (key, value)| builder.with_config(key, value),
                )
                .with_config(ClientConfigKey::Timeout, &timeout)
                .with_retry(retry)
                .build()
                .map(|store| Store::new(Arc::new(store))),
        };
        let built = match scheme {
            ObjectStoreScheme::Memory => numbered(Ok(object_store::memory::InMemory::new())),
            ObjectStoreScheme::AmazonS3
            | ObjectStoreScheme::GoogleCloudStorage
            | ObjectStoreScheme::MicrosoftAzure
            | ObjectStoreScheme::Http => {
                // Stores over a network: the same store twice, without
                // retries for the first request (a refused connection fails
                // at once) and with them for the rest (guard.rs).
                let first = build(RetryConfig {
                    max_retries: 0,
                    ..RetryConfig::default()
                });
                first.and_then(|first| {
                    let retrying = build(retrying)?;
                    let unranged = scheme == ObjectStoreScheme::Http;
                    let objects =
                        Guarded::new(first.objects, retrying.objects, unranged, options.timeout);
                    Ok(Store {
                        objects: Arc::new(objects),
                        multipart: retrying.multipart,
                    })
                })
            }
            // Local files: object_store's own URL parsing.
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

/// Makes rustls's *ring* crypto provider the process's default, once (a
/// provider installed before, by anyone, is kept).
///
/// npy-remote builds its HTTPS clients with rustls and ring rather than
/// object_store's default aws-lc (a large C build); reqwest then needs a
/// process-wide provider before it builds a client. [`Store::from_url`]
/// calls this itself; call it before building an `object_store` client of
/// your own that you hand to [`Store::new`].
pub fn install_tls() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err means a provider is installed already: that one stays.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
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

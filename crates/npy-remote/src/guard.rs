//! What every store made from a URL is wrapped in: a server that refuses
//! connections fails at once instead of after object_store's retries, a
//! request and all its retries share one deadline (twice the timeout), and
//! an HTTP server without Range support is read with one plain GET when
//! the object is small enough ([`UNRANGED_READ_LIMIT`]).
//!
//! No HTTP of its own: the wrapper only chooses which object_store client
//! makes a request (one with retries, one without) and keeps a small
//! object it had to read whole in object_store's in-memory store, which
//! answers the ranged reads from then on.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use futures::stream::BoxStream;
use object_store::client::{HttpError, HttpErrorKind};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

/// The largest object read whole, in one plain GET, from an HTTP server
/// that ignores Range requests (64 MiB): the bytes are kept in memory and
/// every ranged read of the object is answered from them. A bigger object
/// is refused, saying why.
pub const UNRANGED_READ_LIMIT: u64 = 64 << 20;

/// object_store's words when a server answers a ranged GET with the whole
/// object (status 200 instead of 206): its HTTP store's, and its other
/// clients'.
const NOT_PARTIAL: [&str; 2] = [
    "Range request not supported",
    "Received non-partial response when range requested",
];

/// A store made from a URL: `first` (the same store without retries) makes
/// requests until one has reached the server; `retrying` makes the rest,
/// and the first one's again when it failed for another reason than the
/// connection (a server error is worth retrying; a refused connection is
/// not worth waiting for).
#[derive(Debug)]
pub(crate) struct Guarded {
    first: Arc<dyn ObjectStore>,
    retrying: Arc<dyn ObjectStore>,
    /// Whether some request got an answer from the server.
    reached: AtomicBool,
    /// Objects read whole (an HTTP server without Range support).
    whole: Option<Whole>,
    /// The request timeout ([`StoreOptions::timeout`](crate::StoreOptions::timeout)):
    /// each operation, its first attempt and every retry together, ends
    /// within twice this.
    timeout: Duration,
}

/// The objects read whole, and which.
#[derive(Debug, Default)]
struct Whole {
    read: Mutex<Vec<Path>>,
    cache: InMemory,
}

impl Guarded {
    /// `first` and `retrying` must be the same store; `unranged` allows
    /// the plain-GET fallback (plain HTTP servers: object stores always
    /// serve ranges).
    pub(crate) fn new(
        first: Arc<dyn ObjectStore>,
        retrying: Arc<dyn ObjectStore>,
        unranged: bool,
        timeout: Duration,
    ) -> Guarded {
        Guarded {
            first,
            retrying,
            reached: AtomicBool::new(false),
            whole: unranged.then(Whole::default),
            timeout,
        }
    }

    /// The deadline of one operation: twice the request timeout, so that
    /// a request that timed out has about one timeout left for retries.
    fn deadline(&self) -> Duration {
        self.timeout.saturating_mul(2)
    }

    /// Runs `operation` (a request and its retries) within
    /// [`deadline`](Self::deadline), failing with an error that names the
    /// timeout once it has passed: object_store's own clock restarts with
    /// each client and retry, so a silent server held an operation for
    /// four timeouts.
    async fn within<T>(
        &self,
        operation: impl std::future::Future<Output = object_store::Result<T>>,
    ) -> object_store::Result<T> {
        let deadline = self.deadline();
        let unanswered = || object_store::Error::Generic {
            store: "npy-remote",
            source: Box::new(Unanswered {
                timeout: self.timeout,
            }),
        };
        match tokio::time::timeout(deadline, operation).await {
            // The retries ran out at about the deadline: the same verdict,
            // in the same words, whichever clock was first.
            Ok(Err(err)) if is_timeout(&err) => Err(unanswered()),
            Ok(result) => result,
            Err(_elapsed) => Err(unanswered()),
        }
    }

    /// Runs `request` on the store without retries until the server has
    /// answered once: a failed connection is returned at once, any other
    /// failure is tried again with retries.
    async fn guarded<T, F, Fut>(&self, request: F) -> object_store::Result<T>
    where
        F: Fn(Arc<dyn ObjectStore>) -> Fut,
        Fut: std::future::Future<Output = object_store::Result<T>>,
    {
        self.within(self.attempts(request)).await
    }

    /// [`guarded`](Self::guarded) without the deadline.
    async fn attempts<T, F, Fut>(&self, request: F) -> object_store::Result<T>
    where
        F: Fn(Arc<dyn ObjectStore>) -> Fut,
        Fut: std::future::Future<Output = object_store::Result<T>>,
    {
        if self.reached.load(Ordering::Relaxed) {
            return request(self.retrying.clone()).await;
        }
        match request(self.first.clone()).await {
            Ok(done) => {
                self.reached.store(true, Ordering::Relaxed);
                Ok(done)
            }
            Err(err) if is_connect(&err) => Err(err),
            // Answers, which retrying would only repeat.
            Err(err)
                if matches!(err, object_store::Error::NotFound { .. }) || is_not_partial(&err) =>
            {
                self.reached.store(true, Ordering::Relaxed);
                Err(err)
            }
            Err(_) => request(self.retrying.clone()).await,
        }
    }

    /// The object at `location` read whole with one plain GET and kept,
    /// after the server answered a ranged GET with all of it; refused
    /// above [`UNRANGED_READ_LIMIT`].
    async fn read_whole(&self, whole: &Whole, location: &Path) -> object_store::Result<()> {
        let result = self
            .within(self.retrying.get_opts(location, GetOptions::default()))
            .await?;
        let size = result.meta.size;
        if size > UNRANGED_READ_LIMIT {
            return Err(object_store::Error::Generic {
                store: "HTTP",
                source: format!(
                    "the server does not support ranged reads (HTTP Range: it answers with the \
                     whole object), and the object is {size} bytes, more than the {} MiB read \
                     whole instead; serve it from a server with Range support, or download it",
                    UNRANGED_READ_LIMIT >> 20
                )
                .into(),
            });
        }
        let bytes = result.bytes().await?;
        whole.cache.put(location, bytes.into()).await?;
        whole
            .read
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(location.clone());
        Ok(())
    }
}

/// An operation that passed its deadline (twice `timeout`).
#[derive(Debug)]
struct Unanswered {
    timeout: Duration,
}

impl std::fmt::Display for Unanswered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no answer within {} s (twice the {} s timeout; StoreOptions::timeout, the CLI's \
             --timeout)",
            self.timeout.saturating_mul(2).as_secs_f64(),
            self.timeout.as_secs_f64()
        )
    }
}

impl std::error::Error for Unanswered {}

/// Whether `err` says the server gave no answer: the operation's deadline
/// passed, a request timed out, or the connection failed. Asking the same
/// server something else then is only more waiting.
pub(crate) fn is_unanswered(err: &object_store::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(current) = source {
        if current.is::<Unanswered>() {
            return true;
        }
        if let Some(http) = current.downcast_ref::<HttpError>()
            && matches!(http.kind(), HttpErrorKind::Connect | HttpErrorKind::Timeout)
        {
            return true;
        }
        source = current.source();
    }
    false
}

/// Whether `err` is a request that timed out.
fn is_timeout(err: &object_store::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(current) = source {
        if let Some(http) = current.downcast_ref::<HttpError>()
            && http.kind() == HttpErrorKind::Timeout
        {
            return true;
        }
        source = current.source();
    }
    false
}

/// Whether `err` is a failure to connect (refused, unreachable, DNS).
fn is_connect(err: &object_store::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(current) = source {
        if let Some(http) = current.downcast_ref::<HttpError>()
            && http.kind() == HttpErrorKind::Connect
        {
            return true;
        }
        source = current.source();
    }
    false
}

/// Whether `err` says a ranged GET was answered with the whole object.
fn is_not_partial(err: &object_store::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(current) = source {
        let text = current.to_string();
        if NOT_PARTIAL.iter().any(|words| text.contains(words)) {
            return true;
        }
        source = current.source();
    }
    false
}

impl std::fmt::Display for Guarded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.retrying)
    }
}

#[async_trait]
impl ObjectStore for Guarded {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.guarded(|store| {
            let (payload, opts) = (payload.clone(), opts.clone());
            async move { store.put_opts(location, payload, opts).await }
        })
        .await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.within(self.retrying.put_multipart_opts(location, opts))
            .await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        if let Some(whole) = &self.whole {
            let kept = whole
                .read
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .contains(location);
            if kept {
                return whole.cache.get_opts(location, options).await;
            }
        }
        let result = self
            .guarded(|store| {
                let options = options.clone();
                async move { store.get_opts(location, options).await }
            })
            .await;
        match (result, &self.whole) {
            (Err(err), Some(whole)) if is_not_partial(&err) => {
                self.read_whole(whole, location).await?;
                whole.cache.get_opts(location, options).await
            }
            (result, _) => result,
        }
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.retrying.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.retrying.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.within(self.retrying.list_with_delimiter(prefix)).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.within(self.retrying.copy_opts(from, to, options))
            .await
    }
}

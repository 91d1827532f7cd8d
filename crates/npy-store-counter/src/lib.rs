//! A store wrapper that counts requests and bytes: test instrumentation,
//! not part of any published crate's API. npy-remote's tests hold the
//! library to its request budget with it (docs/REMOTE.md) and npy-bench's
//! remote harness reports requests and bytes with it.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

/// Delegates to `inner`, counting GET requests and the bytes they return,
/// and single PUTs: how the tests and benchmarks check the request budget.
/// Multi-range reads go through the trait's default (one `get_opts` per
/// coalesced range), so every request a real store would make is counted.
#[derive(Debug)]
pub struct CountingStore<S> {
    inner: S,
    gets: AtomicU64,
    bytes: AtomicU64,
    puts: AtomicU64,
}

impl<S> CountingStore<S> {
    /// Wraps `inner`, with every count at zero.
    pub fn new(inner: S) -> Arc<Self> {
        Arc::new(CountingStore {
            inner,
            gets: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            puts: AtomicU64::new(0),
        })
    }

    /// (GET requests, bytes returned) since the last reset.
    pub fn gets(&self) -> (u64, u64) {
        (
            self.gets.load(Ordering::SeqCst),
            self.bytes.load(Ordering::SeqCst),
        )
    }

    /// Single PUTs since the last reset.
    pub fn puts(&self) -> u64 {
        self.puts.load(Ordering::SeqCst)
    }

    /// Sets every count back to zero.
    pub fn reset(&self) {
        self.gets.store(0, Ordering::SeqCst);
        self.bytes.store(0, Ordering::SeqCst);
        self.puts.store(0, Ordering::SeqCst);
    }
}

impl<S: ObjectStore> std::fmt::Display for CountingStore<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CountingStore({})", self.inner)
    }
}

#[async_trait]
impl<S: ObjectStore> ObjectStore for CountingStore<S> {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.puts.fetch_add(1, Ordering::SeqCst);
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        let result = self.inner.get_opts(location, options).await?;
        self.bytes
            .fetch_add(result.range.end - result.range.start, Ordering::SeqCst);
        Ok(result)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

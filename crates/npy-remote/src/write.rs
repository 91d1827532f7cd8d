//! Writing: uploads byte-identical to `np.save`, and a streaming writer for
//! arrays whose length is known only at the end.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use std::borrow::Cow;

use npy_core::{DType, DataChunks, Header, NpySource, Order};
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::{MultipartId, ObjectStoreExt, PutPayload};

use crate::error::{Error, ErrorKind, Operation, Result, WriteError};
use crate::store::Store;

/// The smallest part S3 (and GCS's XML API) accepts, except the last.
pub const MIN_PART_SIZE: usize = 5 << 20;

/// The most parts one multipart upload may have.
pub const MAX_PARTS: usize = 10_000;

/// The largest part S3 accepts.
pub const MAX_PART_SIZE: u64 = 5 << 30;

/// How uploads are split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UploadOptions {
    /// Bytes per part (default 16 MiB, raised to [`MIN_PART_SIZE`] if set
    /// lower, and as needed to stay within [`MAX_PARTS`]). An object at most
    /// this long is one PUT.
    pub part_size: usize,
    /// Parts uploaded at once (default 8). Memory held by the streaming
    /// writer is about `part_size × (concurrency + 2)`.
    pub concurrency: usize,
}

impl Default for UploadOptions {
    fn default() -> Self {
        UploadOptions {
            part_size: 16 << 20,
            concurrency: 8,
        }
    }
}

impl UploadOptions {
    /// The part size for an object of `total` bytes: at least
    /// [`MIN_PART_SIZE`], large enough for at most [`MAX_PARTS`] parts.
    pub(crate) fn part_size_for(&self, total: u64) -> u64 {
        let fewest = total.div_ceil(MAX_PARTS as u64);
        (self.part_size.max(MIN_PART_SIZE) as u64).max(fewest)
    }
}

/// Uploads `source` (any [`NpySource`]: a slice, a view, an owned or
/// object array, raw bytes under a header, a mapped array, an ndarray
/// array): the bytes `np.save` writes for it. One PUT when the object fits
/// one part, else a multipart upload with up to `options.concurrency` parts
/// in flight, aborted (leaving no object) if a part fails or the source's
/// data does not match its header. Memory: about `part_size × (concurrency
/// + 1)`, whatever the array's size.
pub async fn upload<S: NpySource + Sync + ?Sized>(
    store: &Store,
    path: &Path,
    source: &S,
    options: UploadOptions,
) -> Result<()> {
    let header = source.npy_header();
    let head = Bytes::from(header.to_bytes(None).map_err(|e| Error::format(path, e))?);
    let chunks = source.npy_data().map_err(|e| Error::format(path, e))?;
    let (data_len, chunks): (usize, DataChunks<'_>) = if header.dtype.has_object() {
        // A pickle's length is its own: produce it first (it is one chunk).
        let pickle: Vec<u8> = chunks.flat_map(|c| c.into_owned()).collect();
        (pickle.len(), Box::new(std::iter::once(Cow::Owned(pickle))))
    } else {
        (
            header.data_len().map_err(|e| Error::format(path, e))?,
            chunks,
        )
    };
    let total = (head.len() + data_len) as u64;
    let part_size = options.part_size_for(total);
    let mut parts = Parts {
        chunks,
        current: None,
        head,
        expected: data_len,
        seen: 0,
    };
    let objects = store.objects();
    if total <= part_size {
        let payload = parts
            .next_part(usize::MAX)
            .map_err(|e| Error::format(path, e))?;
        parts.check_done().map_err(|e| Error::format(path, e))?;
        objects
            .put(path, payload.into())
            .await
            .map_err(|e| Error::store(Operation::Put, path, e))?;
        return Ok(());
    }
    let mut upload = objects
        .put_multipart(path)
        .await
        .map_err(|e| Error::store(Operation::Multipart, path, e))?;
    let sent = send_parts(
        &mut *upload,
        &mut parts,
        part_size as usize,
        options.concurrency.max(1),
    )
    .await;
    let finished = match sent {
        Ok(()) => upload
            .complete()
            .await
            .map(drop)
            .map_err(|e| Error::store(Operation::Multipart, path, e)),
        Err(e) => Err(e.into_error(path)),
    };
    if let Err(e) = finished {
        // Best effort: the part error is the one worth reporting.
        let _ = upload.abort().await;
        return Err(e);
    }
    Ok(())
}

/// A source's bytes (header first), cut into parts as they are asked for,
/// counting the data against what the header promises. Holds at most one
/// part: a chunk is copied a part at a time, however big it is.
struct Parts<'a> {
    chunks: DataChunks<'a>,
    /// The chunk being cut, and how much of it was taken.
    current: Option<(Cow<'a, [u8]>, usize)>,
    /// The header, then nothing: bytes that go before the data.
    head: Bytes,
    expected: usize,
    seen: usize,
}

impl Parts<'_> {
    /// The next part of `size` bytes (shorter only at the end; empty when
    /// everything was sent).
    fn next_part(&mut self, size: usize) -> npy_core::Result<Bytes> {
        let mut part = Vec::new();
        let head = std::mem::take(&mut self.head);
        part.extend_from_slice(&head[..size.min(head.len())]);
        self.head = head.slice(size.min(head.len())..);
        while part.len() < size {
            let (chunk, taken) = match &mut self.current {
                Some((chunk, taken)) if *taken < chunk.len() => (chunk, taken),
                _ => match self.chunks.next() {
                    Some(chunk) => {
                        self.seen = self.seen.saturating_add(chunk.len());
                        if self.seen > self.expected {
                            return Err(self.length_error());
                        }
                        self.current = Some((chunk, 0));
                        continue;
                    }
                    None => break,
                },
            };
            let n = (size - part.len()).min(chunk.len() - *taken);
            part.extend_from_slice(&chunk[*taken..*taken + n]);
            *taken += n;
        }
        Ok(Bytes::from(part))
    }

    /// Checks that all the data promised was there.
    fn check_done(&self) -> npy_core::Result<()> {
        match self.seen == self.expected {
            true => Ok(()),
            false => Err(self.length_error()),
        }
    }

    fn length_error(&self) -> npy_core::Error {
        npy_core::Error::DataLength {
            expected: self.expected,
            actual: self.seen,
        }
    }
}

/// Why sending parts stopped.
enum SendError {
    Source(npy_core::Error),
    Store(object_store::Error),
}

impl SendError {
    fn into_error(self, path: &Path) -> Error {
        match self {
            SendError::Source(e) => Error::format(path, e),
            SendError::Store(e) => Error::store(Operation::Multipart, path, e),
        }
    }
}

/// Puts the parts of `parts.next_part(part_size)`, `concurrency` at once.
async fn send_parts(
    upload: &mut dyn object_store::MultipartUpload,
    parts: &mut Parts<'_>,
    part_size: usize,
    concurrency: usize,
) -> std::result::Result<(), SendError> {
    let mut in_flight = FuturesUnordered::new();
    loop {
        let part = parts.next_part(part_size).map_err(SendError::Source)?;
        if part.is_empty() {
            break;
        }
        in_flight.push(upload.put_part(part.into()));
        if in_flight.len() >= concurrency
            && let Some(result) = in_flight.next().await
        {
            result.map_err(SendError::Store)?;
        }
    }
    parts.check_done().map_err(SendError::Source)?;
    while let Some(result) = in_flight.next().await {
        result.map_err(SendError::Store)?;
    }
    Ok(())
}

/// Bytes `span` of the concatenation `head ++ data`, without copying.
pub(crate) fn concat_span(head: &Bytes, data: &Bytes, span: Range<u64>) -> PutPayload {
    let head_len = head.len() as u64;
    let mut pieces = Vec::with_capacity(2);
    if span.start < head_len {
        pieces.push(head.slice(span.start as usize..span.end.min(head_len) as usize));
    }
    if span.end > head_len {
        let from = span.start.max(head_len) - head_len;
        pieces.push(data.slice(from as usize..(span.end - head_len) as usize));
    }
    pieces.into_iter().collect()
}

/// Writes an array whose number of rows is known only at the end, in
/// bounded memory: rows are appended, parts are uploaded as they fill, and
/// the first part, which holds the header, goes last, once the shape is
/// known. Needs a store with numbered parts ([`Store::multipart`]).
///
/// The header's length does not depend on the row count (`np.save` pads
/// the growth axis to 21 digits), so the first part's size is fixed at the
/// start. An array that fits one part is one PUT at [`finish`](Self::finish).
/// Dropping the writer without finishing aborts the upload (in the
/// background, when a tokio runtime is running); call
/// [`abort`](Self::abort) to wait for it.
pub struct StreamWriter {
    multipart: Arc<dyn MultipartStore>,
    store: Store,
    path: Path,
    dtype: DType,
    order: Order,
    /// The shape with 0 rows (the row axis's length is decided at finish).
    shape: Vec<usize>,
    row_bytes: usize,
    header_len: usize,
    part_size: usize,
    concurrency: usize,
    /// Data of the first part (after the header), kept until finish.
    first: Vec<u8>,
    /// The part being filled (after the first).
    current: Vec<u8>,
    data_len: u64,
    upload: Option<MultipartId>,
    /// Parts 1.. uploaded or in flight, by index.
    parts: Vec<Option<PartId>>,
    in_flight: FuturesUnordered<
        futures::future::BoxFuture<'static, (usize, object_store::Result<PartId>)>,
    >,
    done: bool,
}

impl std::fmt::Debug for StreamWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamWriter")
            .field("path", &self.path)
            .field("dtype", &self.dtype)
            .field("data_len", &self.data_len)
            .field("upload", &self.upload)
            .finish_non_exhaustive()
    }
}

impl StreamWriter {
    /// A writer of an array of `dtype` in `order` whose shape is `shape`
    /// with the row axis (axis 0 in C order, the last in Fortran order)
    /// decided by the rows written.
    ///
    /// Errors: [`ErrorKind::NotSupported`] when the store cannot upload
    /// numbered parts; format errors for an unwritable dtype or shape.
    pub fn new(
        store: &Store,
        path: Path,
        dtype: DType,
        order: Order,
        shape: Vec<usize>,
        options: UploadOptions,
    ) -> Result<StreamWriter> {
        let Some(multipart) = store.multipart().cloned() else {
            return Err(Error::at(
                &path,
                ErrorKind::NotSupported {
                    what: "a streaming upload (parts in any order)",
                },
            ));
        };
        let mut header = Header::new(dtype, order, shape);
        let Some(axis) = header.row_axis() else {
            return Err(Error::at(&path, ErrorKind::Write(WriteError::NoRows)));
        };
        header.shape[axis] = 0;
        let header_len = header
            .to_bytes(None)
            .map_err(|e| Error::format(&path, e))?
            .len();
        let row_bytes = header
            .row_bytes()
            .ok_or_else(|| Error::at(&path, ErrorKind::Write(WriteError::RowSizeOverflow)))?;
        let part_size = options.part_size.max(MIN_PART_SIZE).max(header_len + 1);
        Ok(StreamWriter {
            multipart,
            store: store.clone(),
            path,
            dtype: header.dtype,
            order,
            shape: header.shape,
            row_bytes,
            header_len,
            part_size,
            concurrency: options.concurrency.max(1),
            first: Vec::new(),
            current: Vec::new(),
            data_len: 0,
            upload: None,
            parts: Vec::new(),
            in_flight: FuturesUnordered::new(),
            done: false,
        })
    }

    /// Data bytes written so far.
    pub fn data_len(&self) -> u64 {
        self.data_len
    }

    /// Appends data bytes (in the array's byte order; whole rows by the
    /// time [`finish`](Self::finish) is called). Waits when
    /// `concurrency` parts are already in flight.
    pub async fn write(&mut self, mut bytes: &[u8]) -> Result<()> {
        while !bytes.is_empty() {
            let first_room = self.part_size - self.header_len - self.first.len();
            let (target, room) = if first_room > 0 {
                (&mut self.first, first_room)
            } else {
                let room = self.part_size - self.current.len();
                (&mut self.current, room)
            };
            let take = room.min(bytes.len());
            target.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            self.data_len += take as u64;
            if self.current.len() == self.part_size {
                let part = std::mem::take(&mut self.current);
                self.send(Bytes::from(part)).await?;
            }
        }
        Ok(())
    }

    /// Starts uploading the next numbered part (index ≥ 1).
    async fn send(&mut self, part: Bytes) -> Result<()> {
        let id = match &self.upload {
            Some(id) => id.clone(),
            None => {
                let id = self
                    .multipart
                    .create_multipart(&self.path)
                    .await
                    .map_err(|e| Error::store(Operation::Multipart, &self.path, e))?;
                self.parts.push(None); // part 0: the header's, sent at finish
                self.upload = Some(id.clone());
                id
            }
        };
        while self.in_flight.len() >= self.concurrency {
            self.wait_one().await?;
        }
        let index = self.parts.len();
        self.parts.push(None);
        let store = self.multipart.clone();
        let path = self.path.clone();
        self.in_flight.push(Box::pin(async move {
            (index, store.put_part(&path, &id, index, part.into()).await)
        }));
        Ok(())
    }

    /// Waits for one part in flight.
    async fn wait_one(&mut self) -> Result<()> {
        if let Some((index, result)) = self.in_flight.next().await {
            let part = result.map_err(|e| Error::store(Operation::Multipart, &self.path, e))?;
            self.parts[index] = Some(part);
        }
        Ok(())
    }

    /// Uploads what remains and the header part, and completes the upload.
    /// Returns the array's header.
    ///
    /// Errors: [`ErrorKind::PartialRow`] when the data is not a whole number of rows;
    /// any failed request. On error the upload is aborted: no object appears.
    pub async fn finish(mut self) -> Result<Header> {
        let result = self.finish_inner().await;
        if result.is_err() {
            self.abort_inner().await;
        }
        self.done = true;
        result
    }

    async fn finish_inner(&mut self) -> Result<Header> {
        let rows = if self.row_bytes == 0 {
            0
        } else {
            if !self.data_len.is_multiple_of(self.row_bytes as u64) {
                return Err(Error::at(
                    &self.path,
                    ErrorKind::PartialRow {
                        bytes: self.data_len,
                        row_bytes: self.row_bytes,
                    },
                ));
            }
            usize::try_from(self.data_len / self.row_bytes as u64).unwrap_or(usize::MAX)
        };
        let mut header = Header::new(self.dtype.clone(), self.order, self.shape.clone());
        if let Some(axis) = header.row_axis() {
            header.shape[axis] = rows;
        }
        let head = header
            .to_bytes(None)
            .map_err(|e| Error::format(&self.path, e))?;
        if head.len() != self.header_len {
            return Err(Error::at(
                &self.path,
                ErrorKind::Write(WriteError::HeaderLength),
            ));
        }
        let mut first = head;
        first.extend_from_slice(&self.first);
        let Some(id) = self.upload.clone() else {
            // Everything fits one part: a single PUT.
            self.store
                .objects()
                .put(&self.path, Bytes::from(first).into())
                .await
                .map_err(|e| Error::store(Operation::Put, &self.path, e))?;
            return Ok(header);
        };
        if !self.current.is_empty() {
            let last = std::mem::take(&mut self.current);
            self.send(Bytes::from(last)).await?;
        }
        while !self.in_flight.is_empty() {
            self.wait_one().await?;
        }
        let part0 = self
            .multipart
            .put_part(&self.path, &id, 0, Bytes::from(first).into())
            .await
            .map_err(|e| Error::store(Operation::Multipart, &self.path, e))?;
        self.parts[0] = Some(part0);
        let parts = self
            .parts
            .iter_mut()
            .map(|p| p.take())
            .collect::<Option<Vec<_>>>();
        let parts = parts
            .ok_or_else(|| Error::at(&self.path, ErrorKind::Write(WriteError::PartMissing)))?;
        self.multipart
            .complete_multipart(&self.path, &id, parts)
            .await
            .map_err(|e| Error::store(Operation::Multipart, &self.path, e))?;
        self.upload = None;
        Ok(header)
    }

    /// Aborts the upload (no object appears) and waits for the store.
    pub async fn abort(mut self) {
        self.abort_inner().await;
        self.done = true;
    }

    async fn abort_inner(&mut self) {
        self.in_flight.clear();
        if let Some(id) = self.upload.take() {
            let _ = self.multipart.abort_multipart(&self.path, &id).await;
        }
    }
}

impl Drop for StreamWriter {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let (Some(id), Ok(runtime)) = (self.upload.take(), tokio::runtime::Handle::try_current())
        {
            let store = self.multipart.clone();
            let path = self.path.clone();
            runtime.spawn(async move {
                let _ = store.abort_multipart(&path, &id).await;
            });
        }
    }
}

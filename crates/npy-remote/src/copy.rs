//! Whole objects between a store and local files (what `npy cp` does):
//! concurrent ranged GETs written in order, and multipart uploads read from
//! a file part by part. Memory: about `part_size × concurrency`.

use std::io::{Read, Write};
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::error::{Error, ErrorKind, Operation, Result, WriteError};
use crate::read::{Transfer, fetch, get_prefix};
use crate::store::Store;
use crate::write::UploadOptions;

/// Copies the whole object at `path` into `writer`, in order, with ranged
/// GETs of [`Transfer::part_size`] bytes, [`Transfer::concurrency`] at a
/// time. `progress` is called with the bytes written so far. Returns the
/// object's size.
pub async fn download(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    writer: &mut (dyn Write + Send),
    transfer: Transfer,
    mut progress: impl FnMut(u64) + Send,
) -> Result<u64> {
    let part_size = transfer.part_size.max(1) as u64;
    let io_error = |source| {
        Error::at(
            path,
            ErrorKind::Io {
                operation: "write",
                source,
            },
        )
    };
    // The first part tells the size (an empty object has no first part).
    let first = get_prefix(store, path, 0, part_size, Operation::Read).await?;
    let (size, e_tag) = (first.size, first.e_tag);
    let first = first.bytes;
    writer.write_all(&first).map_err(io_error)?;
    let mut written = first.len() as u64;
    progress(written);
    let ranges = (written..size)
        .step_by(part_size as usize)
        .map(move |from| from..from.saturating_add(part_size).min(size));
    let mut parts = futures::stream::iter(ranges)
        .map(|range| fetch(store, path, range, e_tag.as_deref()))
        .buffered(transfer.concurrency.max(1));
    while let Some(part) = parts.next().await {
        let part = part?;
        writer.write_all(&part).map_err(io_error)?;
        written += part.len() as u64;
        progress(written);
    }
    writer.flush().map_err(io_error)?;
    Ok(size)
}

/// Uploads `size` bytes read from `reader` as the object at `path`: one PUT
/// when they fit one part, else a multipart upload with up to
/// `options.concurrency` parts in flight (aborted, leaving no object, on
/// any failure, including a reader that ends early or runs long).
/// `progress` is called with the bytes sent so far.
pub async fn upload_reader(
    store: &Store,
    path: &Path,
    reader: &mut (dyn Read + Send),
    size: u64,
    options: UploadOptions,
    mut progress: impl FnMut(u64) + Send,
) -> Result<()> {
    let part_size = options.part_size_for(size);
    let objects = store.objects();
    let read_part = |reader: &mut (dyn Read + Send), len: u64| -> Result<Bytes> {
        let mut buffer = vec![0u8; len as usize];
        reader.read_exact(&mut buffer).map_err(|source| {
            Error::at(
                path,
                ErrorKind::Io {
                    operation: "read",
                    source,
                },
            )
        })?;
        Ok(Bytes::from(buffer))
    };
    if size <= part_size {
        let bytes = read_part(reader, size)?;
        ensure_ended(reader, path)?;
        objects
            .put(path, PutPayload::from(bytes))
            .await
            .map_err(|e| Error::store(Operation::Put, path, e))?;
        progress(size);
        return Ok(());
    }
    let mut upload = objects
        .put_multipart(path)
        .await
        .map_err(|e| Error::store(Operation::Multipart, path, e))?;
    let upload_ref = &mut upload;
    let result: Result<()> = async {
        let mut in_flight = FuturesUnordered::new();
        let mut sent = 0u64;
        let mut start = 0u64;
        while start < size {
            let len = part_size.min(size - start);
            let part = read_part(reader, len)?;
            start += len;
            let put = upload_ref.put_part(part.into());
            in_flight.push(async move { (len, put.await) });
            // put_part numbers parts at the call: the futures may finish in any order.
            while in_flight.len() >= options.concurrency.max(1)
                || (start == size && !in_flight.is_empty())
            {
                let Some((len, done)) = in_flight.next().await else {
                    break;
                };
                done.map_err(|e| Error::store(Operation::Multipart, path, e))?;
                sent += len;
                progress(sent);
            }
        }
        ensure_ended(reader, path)
    }
    .await;
    if let Err(e) = result {
        let _ = upload.abort().await;
        return Err(e);
    }
    upload
        .complete()
        .await
        .map_err(|e| Error::store(Operation::Multipart, path, e))?;
    Ok(())
}

/// Fails when the reader has more bytes than the size it was given (a file
/// that grew while it was copied).
fn ensure_ended(reader: &mut (dyn Read + Send), path: &Path) -> Result<()> {
    let mut probe = [0u8; 1];
    match reader.read(&mut probe) {
        Ok(0) => Ok(()),
        Ok(_) => Err(Error::at(path, ErrorKind::Write(WriteError::SourceGrew))),
        Err(source) => Err(Error::at(
            path,
            ErrorKind::Io {
                operation: "read",
                source,
            },
        )),
    }
}

//! Slices of deflated members: only the compressed blocks a range needs
//! are fetched (one ranged GET per part, pinned to the archive's ETag) and
//! inflated, when the member carries the block index npy-mmap's writer
//! records (docs/FORMAT.md §5).

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use npy_core::npz::{ArchiveError, MemberCompression, MemberInfo};
use npy_core::{NpyArray, ParsedHeader};
use npy_mmap::npz::BlockIndex;

use super::{Opened, RemoteNpz};
use crate::error::{ErrorKind, Result};
use crate::read::fetch;

/// Compressed bytes fetched with a deflated member's local header: enough
/// to inflate the `.npy` header of any array (its first 64 KiB of content
/// compress to less).
const HEAD_INPUT: u64 = 64 << 10;

impl RemoteNpz {
    /// The block index our writer recorded for a deflated member, checked
    /// against the directory (sizes, CRC-32; from the tail fetched at
    /// open: no request). `None` for a stored member, or a deflated one
    /// without an index (another writer's) or with one that does not match.
    ///
    /// For another writer's member, the checkpoints
    /// [`build_index`](Self::build_index) built for this archive, if it
    /// did.
    pub fn block_index(&self, key: &str) -> Result<Option<Arc<BlockIndex>>> {
        let position = self.position(key)?;
        let member = &self.members[position];
        if member.compression != MemberCompression::Deflated {
            return Ok(None);
        }
        let Some(payload) = self.index_fields[position].as_deref() else {
            return Ok(self.lock_built().get(&position).cloned());
        };
        let parsed = BlockIndex::from_extra_field(
            payload,
            member.size,
            member.compressed_size,
            member.crc32,
        );
        Ok(parsed.ok().map(Arc::new))
    }

    /// The block index of a deflated member: our writer's, or for another
    /// writer's member (numpy's) checkpoints built now by one sequential
    /// pass over its compressed bytes (ranged GETs in
    /// [`Transfer::part_size`](crate::Transfer) parts, a few in flight,
    /// pinned to the archive's ETag; memory: those parts and the
    /// checkpoints' 32 KiB windows), checked against the directory's size
    /// and CRC-32 and kept for this archive's life: later reads of its
    /// rows fetch and inflate only the blocks holding them. `None` for a
    /// stored member.
    pub async fn build_index(&self, key: &str) -> Result<Option<Arc<BlockIndex>>> {
        if let Some(found) = self.block_index(key)? {
            return Ok(Some(found));
        }
        let position = self.position(key)?;
        let member = self.members[position].clone();
        if member.compression != MemberCompression::Deflated {
            return Ok(None);
        }
        let (data_start, _) = self.locate(&member, 0).await?;
        let end = data_start + member.compressed_size;
        let part = (self.options.transfer.part_size as u64).max(1);
        let ranges: Vec<Range<u64>> = (data_start..end)
            .step_by(part as usize)
            .map(|from| from..(from + part).min(end))
            .collect();
        let in_flight = self.options.transfer.concurrency.max(1);
        // The pass runs on a blocking thread, fed the parts in order
        // through a bounded channel (at most `in_flight` parts waiting).
        let (sender, receiver) = tokio::sync::mpsc::channel::<Bytes>(in_flight);
        let info = member.clone();
        let pass = tokio::task::spawn_blocking(move || {
            let mut input = PartsReader {
                receiver,
                current: Bytes::new(),
            };
            BlockIndex::build_checkpoints(&mut input, &info)
        });
        let mut parts = futures::stream::iter(ranges)
            .map(|range| fetch(&self.store, &self.path, range, self.e_tag.as_deref()))
            .buffered(in_flight);
        let mut fetched = Ok(());
        while let Some(bytes) = parts.next().await {
            match bytes {
                Ok(bytes) => {
                    if sender.send(bytes).await.is_err() {
                        // The pass stopped early (it found the stream
                        // bad): its error says why.
                        break;
                    }
                }
                Err(error) => {
                    fetched = Err(error);
                    break;
                }
            }
        }
        drop(sender);
        let built = pass.await.map_err(|e| {
            self.member_error(
                &member,
                ErrorKind::Io {
                    operation: "index",
                    source: std::io::Error::other(e.to_string()),
                },
            )
        })?;
        fetched?;
        let built = built.map_err(|source| {
            let kind = match source
                .get_ref()
                .and_then(|e| e.downcast_ref::<ArchiveError>())
            {
                Some(archive) => ErrorKind::Archive(archive.clone()),
                None => ErrorKind::Io {
                    operation: "index",
                    source,
                },
            };
            self.member_error(&member, kind)
        })?;
        let built = Arc::new(built);
        self.lock_built().insert(position, built.clone());
        Ok(Some(built))
    }

    fn lock_built(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<usize, Arc<BlockIndex>>> {
        self.built.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where `key` is among the members.
    fn position(&self, key: &str) -> Result<usize> {
        let member = self.member(key)?;
        Ok(self
            .members
            .iter()
            .position(|m| std::ptr::eq(m, member))
            .unwrap_or_default())
    }

    /// The member's data start and `.npy` header: one GET of its local
    /// header and first bytes, remembered for the archive's life.
    async fn opened(&self, position: usize) -> Result<Arc<Opened>> {
        if let Some(found) = self.lock_opened().get(&position) {
            return Ok(found.clone());
        }
        let member = self.members[position].clone();
        let deflated = member.compression == MemberCompression::Deflated;
        let extra = if deflated {
            HEAD_INPUT
        } else {
            crate::read::OPEN_PREFIX
        };
        let (data_start, first) = self.locate(&member, extra).await?;
        let first = first.slice(..first.len().min(member.compressed_size as usize));
        let content = if deflated {
            inflate_prefix(&first)
        } else {
            first.to_vec()
        };
        let parsed = match npy_core::Header::parse(&content, &self.options.read.parse) {
            Ok(parsed) => parsed,
            // A header longer than the first bytes give: stream it.
            Err(npy_core::Error::Eof { .. }) => self.header(&member.name).await?,
            Err(e) => return Err(self.member_error(&member, ErrorKind::Format(e))),
        };
        let opened = Arc::new(Opened { data_start, parsed });
        self.lock_opened().insert(position, opened.clone());
        Ok(opened)
    }

    fn lock_opened(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<usize, Arc<Opened>>> {
        self.opened.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The content bytes `range` of a member (of the `.npy` file it holds):
    /// a stored member's are fetched as they are; a deflated member with a
    /// block index has only the compressed blocks covering `range` fetched
    /// (in [`Transfer::part_size`](crate::Transfer) parts, concurrently)
    /// and inflated on every core, each block checked against its CRC-32.
    /// Without an index the member is inflated from its start up to the
    /// range's end.
    pub async fn read_range(&self, key: &str, range: Range<u64>) -> Result<Vec<u8>> {
        let position = self.position(key)?;
        let member = self.members[position].clone();
        member
            .check_content_range(&range)
            .map_err(|kind| self.member_error(&member, ErrorKind::Archive(kind)))?;
        let index = self.block_index(key)?;
        if member.compression == MemberCompression::Deflated && index.is_none() {
            return self.read_range_streamed(&member, range).await;
        }
        let opened = self.opened(position).await?;
        let Some(index) = index else {
            let from = opened.data_start + range.start;
            let bytes = self
                .fetch_parts(from..opened.data_start + range.end)
                .await?;
            return Ok(bytes);
        };
        let input = index.input_range(index.covering(range.clone()));
        let compressed = self
            .fetch_parts(opened.data_start + input.start..opened.data_start + input.end)
            .await?;
        let inflated = tokio::task::spawn_blocking(move || {
            let mut out = vec![0u8; (range.end - range.start) as usize];
            index
                .inflate_range(range, &compressed, input.start, &mut out)
                .map(|()| out)
        })
        .await
        .map_err(|e| {
            self.member_error(
                &member,
                ErrorKind::Io {
                    operation: "inflate",
                    source: std::io::Error::other(e.to_string()),
                },
            )
        })?;
        inflated.map_err(|kind| self.member_error(&member, ErrorKind::Archive(kind)))
    }

    /// `range` of a member without an index: inflated from its start.
    async fn read_range_streamed(&self, member: &MemberInfo, range: Range<u64>) -> Result<Vec<u8>> {
        let mut content = self.content(&member.name).await?;
        let mut out = Vec::with_capacity((range.end - range.start) as usize);
        let mut at = 0u64;
        while at < range.end {
            let Some(chunk) = content.next().await else {
                break;
            };
            let chunk = chunk?;
            let end = at + chunk.len() as u64;
            if end > range.start {
                let from = range.start.saturating_sub(at) as usize;
                let to = (range.end.min(end) - at) as usize;
                out.extend_from_slice(&chunk[from..to]);
            }
            at = end;
        }
        Ok(out)
    }

    /// The bytes `span` of the archive, in parts fetched concurrently (each
    /// pinned to the archive's ETag), joined.
    async fn fetch_parts(&self, span: Range<u64>) -> Result<Vec<u8>> {
        let part = self.options.transfer.part_size.max(1) as u64;
        let ranges: Vec<Range<u64>> = (span.start..span.end)
            .step_by(part as usize)
            .map(|from| from..(from + part).min(span.end))
            .collect();
        let parts: Vec<Bytes> = futures::stream::iter(ranges)
            .map(|range| fetch(&self.store, &self.path, range, self.e_tag.as_deref()))
            .buffered(self.options.transfer.concurrency.max(1))
            .try_collect()
            .await?;
        Ok(parts.concat())
    }

    /// Rows `rows` of an array member along its row axis (axis 0 in C
    /// order, the last in Fortran order): a stored member's bytes are
    /// fetched by range, a deflated one's blocks holding them (see
    /// [`read_range`](Self::read_range)).
    pub async fn read_rows(&self, key: &str, rows: Range<usize>) -> Result<NpyArray> {
        let position = self.position(key)?;
        let member = self.members[position].clone();
        let opened = self.opened(position).await?;
        let format = |e| self.member_error(&member, ErrorKind::Format(e));
        if opened.parsed.header.dtype.has_object() {
            return Err(format(npy_core::Error::ObjectData));
        }
        let (part, bytes) = opened.parsed.rows_part(rows).map_err(format)?;
        let data = self.read_range(key, bytes).await?;
        let data = npy_core::io::AlignedBytes::copy_from(&data);
        let mut array = NpyArray::from_parts(part.header, part.layout, data).map_err(format)?;
        if self.options.read.to_native {
            array.convert_byte_order(npy_core::ByteOrder::NATIVE);
        }
        Ok(array)
    }

    /// A member's `.npy` header (one GET, cached with its data start).
    pub async fn member_header(&self, key: &str) -> Result<ParsedHeader> {
        let position = self.position(key)?;
        Ok(self.opened(position).await?.parsed.clone())
    }
}

/// The compressed bytes of a member, from the parts fetched in order
/// (the end of the channel is the end of the input).
struct PartsReader {
    receiver: tokio::sync::mpsc::Receiver<Bytes>,
    current: Bytes,
}

impl std::io::Read for PartsReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.receiver.blocking_recv() {
                Some(bytes) => self.current = bytes,
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}

/// The content the first compressed bytes of a deflate stream give (as
/// much as they give: a truncated stream is no error here).
fn inflate_prefix(input: &[u8]) -> Vec<u8> {
    let mut inflater = flate2::Decompress::new(false);
    let mut out = Vec::with_capacity(input.len() * 4 + 1024);
    loop {
        let before = (inflater.total_in(), inflater.total_out());
        let consumed = inflater.total_in() as usize;
        let status =
            inflater.decompress_vec(&input[consumed..], &mut out, flate2::FlushDecompress::None);
        let stuck = (inflater.total_in(), inflater.total_out()) == before;
        match status {
            Ok(flate2::Status::StreamEnd) | Err(_) => break,
            _ if stuck && out.len() < out.capacity() => break,
            _ => {}
        }
        if out.len() == out.capacity() {
            out.reserve(64 << 10);
        }
        if out.len() > 1 << 22 {
            break;
        }
    }
    out
}

//! Reading: open with one ranged GET, row ranges, whole arrays with
//! concurrent parts, coalesced scattered reads, prefetching row blocks.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use npy_core::io::AlignedBytes;
use npy_core::{
    ByteOrder, ElementLocator, Header, Layout, NpyArray, ParseOptions, Preamble, ReadOptions,
};
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};

use crate::error::{Error, ErrorKind, Operation, Result};
use crate::store::Store;

/// Bytes the first request of an open asks for: enough for the preamble and
/// the header of every array `np.save` writes with a short dtype (their
/// headers are 128 or 192 bytes long); a longer header costs one more GET.
pub const OPEN_PREFIX: u64 = 4096;

/// How reads are split into requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// Bytes per ranged GET of a large read (default 8 MiB). A read at most
    /// this long is one request.
    pub part_size: usize,
    /// Requests in flight at once (default 8). Memory held by a streaming
    /// read is at most `part_size × concurrency` beyond its output.
    pub concurrency: usize,
    /// Scattered ranges closer than this many bytes are fetched in one
    /// request (default 1 MiB, `object_store`'s default): fewer requests for
    /// at most this many unwanted bytes per merge.
    pub coalesce_gap: u64,
}

impl Default for Transfer {
    fn default() -> Self {
        Transfer {
            part_size: 8 << 20,
            concurrency: 8,
            coalesce_gap: object_store::OBJECT_STORE_COALESCE_DEFAULT,
        }
    }
}

impl Transfer {
    /// Part size and concurrency, at least 1 each whatever was set.
    fn sanitised(self) -> Transfer {
        Transfer {
            part_size: self.part_size.max(1),
            concurrency: self.concurrency.max(1),
            coalesce_gap: self.coalesce_gap,
        }
    }
}

/// An `.npy` array in object storage: its header, read with one ranged GET,
/// and reads of its data by ranges.
///
/// The array may be a whole object or a stored member of an `.npz` archive
/// (a byte span of the object; see [`crate::npz`]).
#[derive(Clone, Debug)]
pub struct RemoteArray {
    store: Arc<dyn ObjectStore>,
    path: Path,
    header: Header,
    layout: Layout,
    /// Where the `.npy` starts in the object.
    base: u64,
    object_size: u64,
    /// The version every read is pinned to.
    e_tag: Option<String>,
    options: ReadOptions,
    transfer: Transfer,
}

impl RemoteArray {
    /// Opens the array at `path` with default options: one ranged GET of at
    /// most [`OPEN_PREFIX`] bytes (two for a header longer than that).
    ///
    /// Errors: the same format errors as a local file (npy-core's, numpy's
    /// wording) in [`ErrorKind::Format`]: a bad magic string, a header longer
    /// than `max_header_size`, an object dtype, and numpy's "Failed to read
    /// all data" when the object is shorter than `data_offset + nbytes`;
    /// [`ErrorKind::Store`] when a request fails ([`Error::is_not_found`] for a
    /// missing object).
    pub async fn open(store: Arc<dyn ObjectStore>, path: Path) -> Result<RemoteArray> {
        RemoteArray::open_with(store, path, ReadOptions::default(), Transfer::default()).await
    }

    /// Opens the array a URL names (see [`Store::from_url`]).
    pub async fn open_url(url: &str) -> Result<RemoteArray> {
        let (store, path) = Store::from_url(url)?;
        RemoteArray::open(store.objects().clone(), path).await
    }

    /// Opens with read options (`max_header_size`, conversion to native
    /// byte order, a limit on the data length) and transfer settings.
    pub async fn open_with(
        store: Arc<dyn ObjectStore>,
        path: Path,
        options: ReadOptions,
        transfer: Transfer,
    ) -> Result<RemoteArray> {
        RemoteArray::open_span(store, path, 0, None, None, options, transfer).await
    }

    /// Opens the `.npy` of `len` bytes starting `base` bytes into an object
    /// of `object_size` bytes, whose first bytes (`prefix`, from `base`)
    /// were fetched already (an archive member with its local header).
    #[allow(clippy::too_many_arguments)] // crate-internal: one call site
    pub(crate) async fn open_prefetched(
        store: Arc<dyn ObjectStore>,
        path: Path,
        base: u64,
        len: u64,
        prefix: Bytes,
        object_size: u64,
        e_tag: Option<String>,
        options: ReadOptions,
        transfer: Transfer,
    ) -> Result<RemoteArray> {
        let prefetched = Some(Fetched {
            bytes: prefix,
            size: object_size,
            e_tag,
        });
        RemoteArray::open_span(store, path, base, Some(len), prefetched, options, transfer).await
    }

    /// Opens an `.npy` that starts `base` bytes into the object and, when
    /// `len` is known (an archive member), is that long.
    pub(crate) async fn open_span(
        store: Arc<dyn ObjectStore>,
        path: Path,
        base: u64,
        len: Option<u64>,
        prefetched: Option<Fetched>,
        options: ReadOptions,
        transfer: Transfer,
    ) -> Result<RemoteArray> {
        let (found, e_tag) =
            read_header(&store, &path, base, len, prefetched, &options.parse).await?;
        let (header, layout) = (found.header, found.layout);
        let available = len.unwrap_or(found.object_size.saturating_sub(base));
        let data_end = layout.data_end() as u64;
        if available < data_end {
            let present = available.saturating_sub(layout.data_offset as u64);
            return Err(Error::format(
                &path,
                npy_core::Error::truncated_data(&header, usize::try_from(present).unwrap_or(0)),
            ));
        }
        let object_size = found.object_size;
        options
            .check_data_len(&layout)
            .map_err(|e| Error::format(&path, e))?;
        Ok(RemoteArray {
            store,
            path,
            header,
            layout,
            base,
            object_size,
            e_tag,
            options,
            transfer: transfer.sanitised(),
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Where the header and data are (offsets from the start of the `.npy`).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The object's path in its store.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The object's size in bytes, as the store reported it at open.
    pub fn object_size(&self) -> u64 {
        self.object_size
    }

    /// The version of the object every read is pinned to: the ETag the
    /// store reported at open (`None` when the store has none). Keep it to
    /// tell later whether a new open found the same version.
    pub fn e_tag(&self) -> Option<&str> {
        self.e_tag.as_deref()
    }

    /// The transfer settings in force.
    pub fn transfer(&self) -> Transfer {
        self.transfer
    }

    /// Number of rows along the row axis (axis 0 in C order, the last axis
    /// in Fortran order; 1 for a 0-d array).
    pub fn rows(&self) -> usize {
        self.header.row_count()
    }

    /// Bytes per row.
    pub fn row_bytes(&self) -> usize {
        // Checked at open: the data length fits, so does a row of a
        // non-empty array; an array without rows has no bytes to read.
        self.header.row_bytes().unwrap_or(0)
    }

    /// Offset in the object of data byte `offset`.
    fn object_offset(&self, data_offset: usize) -> u64 {
        self.base + (self.layout.data_offset + data_offset) as u64
    }

    fn outside(&self, start: usize, end: usize) -> Error {
        Error::at(
            &self.path,
            ErrorKind::OutsideData {
                start,
                end,
                data_len: self.layout.data_len,
            },
        )
    }

    /// Checks `rows` against the header; returns their data bytes.
    fn row_span(&self, rows: &Range<usize>) -> Result<Range<usize>> {
        self.header
            .check_rows(rows.clone())
            .map_err(|e| Error::format(&self.path, e))?;
        if self.header.row_axis().is_none() {
            return Ok(if rows.is_empty() {
                0..0
            } else {
                0..self.layout.data_len
            });
        }
        // In bounds: rows.end × row_bytes ≤ data_len, which fits.
        let row_bytes = self.row_bytes();
        Ok(rows.start * row_bytes..rows.end * row_bytes)
    }

    /// The header of `rows` rows of this array.
    fn header_with_rows(&self, rows: usize) -> Header {
        let mut header = self.header.clone();
        if let Some(axis) = header.row_axis() {
            header.shape[axis] = rows;
        }
        header
    }

    /// An owned array of `rows` rows from their data bytes, converted to
    /// native byte order when the options ask for it.
    fn array(&self, rows: usize, first_byte: usize, data: AlignedBytes) -> Result<NpyArray> {
        let header = self.header_with_rows(rows);
        let layout = Layout {
            data_offset: self.layout.data_offset + first_byte,
            data_len: data.len(),
            ..self.layout
        };
        let mut array =
            NpyArray::from_parts(header, layout, data).map_err(|e| Error::format(&self.path, e))?;
        if self.options.to_native {
            array.convert_byte_order(ByteOrder::NATIVE);
        }
        Ok(array)
    }

    /// Rows `rows` (along the row axis) into an owned array: one ranged GET
    /// of exactly their bytes when they fit one part, else concurrent parts.
    pub async fn read_rows(&self, rows: Range<usize>) -> Result<NpyArray> {
        let span = self.row_span(&rows)?;
        let data = self.read_data(span.clone()).await?;
        self.array(rows.len(), span.start, data)
    }

    /// The whole array, with concurrent ranged GETs of
    /// [`Transfer::part_size`] bytes, at most [`Transfer::concurrency`] at once.
    pub async fn read_all(&self) -> Result<NpyArray> {
        let data = self.read_data(0..self.layout.data_len).await?;
        self.array(self.rows(), 0, data)
    }

    /// Data bytes `span` (offsets into the data) into an aligned buffer.
    async fn read_data(&self, span: Range<usize>) -> Result<AlignedBytes> {
        let mut buffer = vec![0u8; span.len()];
        let mut filled = 0;
        let mut parts = self.data_parts(span);
        while let Some(part) = parts.try_next().await? {
            buffer[filled..filled + part.len()].copy_from_slice(&part);
            filled += part.len();
        }
        Ok(AlignedBytes::from_owner(buffer).unwrap_or_else(|v| AlignedBytes::copy_from(&v)))
    }

    /// The data bytes `span` (offsets into the data, checked against it)
    /// as a stream of parts of [`Transfer::part_size`] bytes, in order,
    /// fetched [`Transfer::concurrency`] at a time: memory stays bounded by
    /// those two whatever the span's length.
    pub fn data_stream(
        &self,
        span: Range<usize>,
    ) -> Result<impl futures::Stream<Item = Result<Bytes>> + Send + 'static> {
        if span.start > span.end || span.end > self.layout.data_len {
            return Err(self.outside(span.start, span.end));
        }
        Ok(self.data_parts(span))
    }

    /// The bytes of data span `span` as a stream of parts in order, fetched
    /// concurrently ([`Transfer::concurrency`] at a time).
    fn data_parts(
        &self,
        span: Range<usize>,
    ) -> impl futures::Stream<Item = Result<Bytes>> + Send + 'static {
        let part_size = self.transfer.part_size;
        let start = self.object_offset(span.start);
        let end = self.object_offset(span.end);
        let store = self.store.clone();
        let path = self.path.clone();
        let e_tag = self.e_tag.clone();
        let ranges = (start..end)
            .step_by(part_size)
            .map(move |from| from..from.saturating_add(part_size as u64).min(end));
        futures::stream::iter(ranges)
            .map(move |range| {
                let store = store.clone();
                let path = path.clone();
                let e_tag = e_tag.clone();
                async move { fetch(&store, &path, range, e_tag.as_deref()).await }
            })
            .buffered(self.transfer.concurrency)
    }

    /// Rows at arbitrary positions (in the order given, repeats allowed),
    /// as one array with that many rows. Nearby rows are fetched together:
    /// ranges closer than [`Transfer::coalesce_gap`] share a request.
    pub async fn read_rows_at(&self, rows: &[usize]) -> Result<NpyArray> {
        let row_bytes = self.row_bytes();
        let mut spans = Vec::with_capacity(rows.len());
        for &row in rows {
            spans.push(self.row_span(&(row..row + 1))?);
        }
        let len = row_bytes.checked_mul(rows.len()).ok_or_else(|| {
            Error::at(
                &self.path,
                ErrorKind::Io {
                    operation: "allocate",
                    source: std::io::Error::new(
                        std::io::ErrorKind::OutOfMemory,
                        "the rows asked for add up to more bytes than memory can address",
                    ),
                },
            )
        })?;
        let mut data = AlignedBytes::zeroed(len);
        self.gather(&spans, &mut data).await?;
        self.array(rows.len(), 0, data)
    }

    /// The bytes of the elements at `indices` (each a full logical index
    /// in any [`NdIndex`](npy_core::NdIndex) form, subarray dimensions
    /// included), one itemsize each, in the order given, converted to
    /// native byte order when the options ask for it. Nearby elements
    /// share a request. A bad index is numpy's error ("index 3 is out of
    /// bounds for axis 0 with size 3"), before any request.
    pub async fn read_elements<I: npy_core::NdIndex>(&self, indices: &[I]) -> Result<Vec<u8>> {
        let locator =
            ElementLocator::new(&self.header).map_err(|e| Error::format(&self.path, e))?;
        let itemsize = locator.element().itemsize();
        let mut spans = Vec::with_capacity(indices.len());
        for index in indices {
            let offset = locator
                .try_byte_offset(index.entries())
                .map_err(|e| Error::format(&self.path, e))?;
            spans.push(offset..offset + itemsize);
        }
        // Each span is inside the data, so the total is at most
        // `indices.len()` × itemsize, which `spans` already holds in memory.
        let mut bytes = vec![0; spans.len() * itemsize];
        self.gather(&spans, &mut bytes).await?;
        if self.options.to_native {
            let converter =
                npy_core::swap::ByteOrderConverter::new(locator.element(), ByteOrder::NATIVE);
            converter.convert(&mut bytes);
        }
        Ok(bytes)
    }

    /// The `width` bytes at each data offset in `offsets` (any order,
    /// checked to lie in the data), one after another in the order given;
    /// nearby offsets share a request. No byte-order conversion.
    pub async fn read_at(&self, offsets: &[usize], width: usize) -> Result<Vec<u8>> {
        let mut spans = Vec::with_capacity(offsets.len());
        for &offset in offsets {
            match offset.checked_add(width) {
                Some(end) if end <= self.layout.data_len => spans.push(offset..end),
                _ => return Err(self.outside(offset, offset.saturating_add(width))),
            }
        }
        let mut bytes = vec![0; spans.len() * width];
        self.gather(&spans, &mut bytes).await?;
        Ok(bytes)
    }

    /// Fetches data spans (checked to lie in the data) and copies them,
    /// once, into `out` one after another in the order given. The requests
    /// are npy-core's plan ([`Coalesce`](npy_core::plan::Coalesce): sorted,
    /// merged when closer than [`Transfer::coalesce_gap`]), sent
    /// [`Transfer::concurrency`] at a time.
    async fn gather(&self, spans: &[Range<usize>], out: &mut [u8]) -> Result<()> {
        let in_object =
            |span: &Range<usize>| self.object_offset(span.start)..self.object_offset(span.end);
        let plan = npy_core::plan::Coalesce {
            align: 1,
            max_gap: self.transfer.coalesce_gap,
        };
        let requests = plan.ranges(spans.iter().map(in_object));
        let (store, path, e_tag) = (&self.store, &self.path, self.e_tag.as_deref());
        let fetched: Vec<Bytes> = futures::stream::iter(requests.iter().cloned())
            .map(|range| async move { fetch(store, path, range, e_tag).await })
            .buffered(self.transfer.concurrency.max(1))
            .try_collect()
            .await?;
        let mut at = 0;
        for span in spans {
            let span = in_object(span);
            let len = (span.end - span.start) as usize;
            // Every span lies in a planned request: the plan covers them all.
            let (request, offset) = npy_core::plan::locate(&requests, &span).ok_or_else(|| {
                Error::at(
                    &self.path,
                    ErrorKind::Io {
                        operation: "read",
                        source: std::io::Error::other("a read outside the requests planned for it"),
                    },
                )
            })?;
            out[at..at + len].copy_from_slice(&fetched[request][offset..offset + len]);
            at += len;
        }
        Ok(())
    }

    /// Row blocks of `rows_per_block` rows (the last may be shorter), each
    /// fetched while the caller works on the one before.
    pub fn row_blocks(&self, rows_per_block: usize) -> RowBlocks {
        RowBlocks {
            array: self.clone(),
            rows_per_block: rows_per_block.max(1),
            next_row: 0,
            pending: None,
        }
    }
}

/// Row blocks of a [`RemoteArray`], in order, with the next block's
/// requests already in flight while the caller holds the current one:
/// memory is two blocks (plus the parts in flight).
#[derive(Debug)]
pub struct RowBlocks {
    array: RemoteArray,
    rows_per_block: usize,
    next_row: usize,
    pending: Option<(Range<usize>, tokio::task::JoinHandle<Result<NpyArray>>)>,
}

impl RowBlocks {
    /// Starts fetching the block after the last one started, if any.
    fn start_next(&mut self) {
        let total = self.array.rows();
        if self.next_row >= total {
            return;
        }
        let rows = self.next_row..(self.next_row + self.rows_per_block).min(total);
        self.next_row = rows.end;
        let array = self.array.clone();
        let task_rows = rows.clone();
        let handle = tokio::spawn(async move { array.read_rows(task_rows).await });
        self.pending = Some((rows, handle));
    }

    /// The next block (its rows, in the file's numbering, and the array),
    /// or `None` after the last. Must be polled inside a tokio runtime.
    pub async fn next(&mut self) -> Option<Result<(Range<usize>, NpyArray)>> {
        if self.pending.is_none() {
            self.start_next();
        }
        let (rows, handle) = self.pending.take()?;
        // Prefetch: the next block's requests run while this one is used.
        self.start_next();
        Some(match handle.await {
            Ok(result) => result.map(|array| (rows, array)),
            Err(join) => Err(Error::at(
                &self.array.path,
                ErrorKind::Io {
                    operation: "read",
                    source: std::io::Error::other(join),
                },
            )),
        })
    }
}

impl RowBlocks {
    /// The blocks as a [`futures::Stream`], for `StreamExt` combinators.
    pub fn into_stream(
        self,
    ) -> impl futures::Stream<Item = Result<(Range<usize>, NpyArray)>> + Send + 'static {
        futures::stream::unfold(self, |mut blocks| async move {
            let item = blocks.next().await?;
            Some((item, blocks))
        })
    }
}

impl Drop for RowBlocks {
    fn drop(&mut self) {
        if let Some((_, handle)) = self.pending.take() {
            handle.abort();
        }
    }
}

/// What an `.npy`'s header says, and how long the object is: read with
/// one ranged GET (two for a header longer than [`OPEN_PREFIX`]), without
/// judging whether the data is all there (for tools that report it, like
/// `npy info` and `npy validate`; [`RemoteArray::open`] refuses a short object).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteHeader {
    /// The header.
    pub header: Header,
    /// Where the header and data are.
    pub layout: Layout,
    /// The object's size in bytes.
    pub object_size: u64,
}

impl RemoteHeader {
    /// Reads the header of the `.npy` object at `path`.
    pub async fn read(
        store: &Arc<dyn ObjectStore>,
        path: &Path,
        options: &ParseOptions,
    ) -> Result<RemoteHeader> {
        Ok(read_header(store, path, 0, None, None, options).await?.0)
    }
}

/// The header of the `.npy` starting `base` bytes into the object (of
/// `len` bytes when known), from its first bytes and the object's size
/// when they were fetched already, else from one ranged GET.
async fn read_header(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    base: u64,
    len: Option<u64>,
    prefetched: Option<Fetched>,
    options: &ParseOptions,
) -> Result<(RemoteHeader, Option<String>)> {
    let first_len = len.map_or(OPEN_PREFIX, |len| len.min(OPEN_PREFIX));
    let Fetched {
        bytes: mut prefix,
        size: object_size,
        e_tag,
    } = match prefetched {
        Some(fetched) => fetched,
        None => get_prefix(store, path, base, first_len, Operation::Open).await?,
    };
    let available = len.unwrap_or(object_size.saturating_sub(base));
    // The preamble says how long the header is; fetch the rest of it only
    // when the first request did not hold it all.
    let preamble = Preamble::parse(&prefix).map_err(|e| Error::format(path, e))?;
    preamble
        .check_size(options)
        .map_err(|e| Error::format(path, e))?;
    let header_end = preamble.data_offset() as u64;
    if header_end > prefix.len() as u64 && header_end <= available {
        let rest = fetch(
            store,
            path,
            base + prefix.len() as u64..base + header_end,
            e_tag.as_deref(),
        )
        .await?;
        let mut whole = Vec::with_capacity(prefix.len() + rest.len());
        whole.extend_from_slice(&prefix);
        whole.extend_from_slice(&rest);
        prefix = Bytes::from(whole);
    }
    let npy_core::ParsedHeader { header, layout } =
        Header::parse(&prefix, options).map_err(|e| Error::format(path, e))?;
    let found = RemoteHeader {
        header,
        layout,
        object_size,
    };
    Ok((found, e_tag))
}

/// The first bytes of an object, its size and its version.
#[derive(Clone, Debug)]
pub(crate) struct Fetched {
    pub(crate) bytes: Bytes,
    pub(crate) size: u64,
    /// The ETag later reads are pinned to (`None` when the store has none).
    pub(crate) e_tag: Option<String>,
}

/// The first `len` bytes from `base` (fewer when the object is shorter) and
/// the object's size, in one ranged GET.
pub(crate) async fn get_prefix(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    base: u64,
    len: u64,
    operation: Operation,
) -> Result<Fetched> {
    let len = len.max(1);
    let options = GetOptions::default().with_range(Some(GetRange::Bounded(base..base + len)));
    match store.get_opts(path, options).await {
        Ok(result) => {
            let (size, e_tag) = (result.meta.size, result.meta.e_tag.clone());
            let (bytes, _) = checked_bytes(result, path, operation, len).await?;
            Ok(Fetched { bytes, size, e_tag })
        }
        Err(e @ object_store::Error::NotFound { .. }) => Err(Error::store(operation, path, e)),
        // No answer: a HEAD would wait as long again (a silent server
        // held an open for two deadlines).
        Err(e) if crate::guard::is_unanswered(&e) => Err(Error::store(operation, path, e)),
        Err(e) => {
            // A range starting at or past the end is refused by stores; an
            // object that short is a format error, as for a local file.
            match store.head(path).await {
                Ok(meta) if meta.size <= base => Ok(Fetched {
                    bytes: Bytes::new(),
                    size: meta.size,
                    e_tag: meta.e_tag,
                }),
                _ => Err(Error::store(operation, path, e)),
            }
        }
    }
}

/// The body of a ranged GET, checked to be as long as the range the
/// response names, which must not exceed `max_len`: a server cannot make
/// us hold more than we asked for. Returns the bytes and their range.
pub(crate) async fn checked_bytes(
    result: object_store::GetResult,
    path: &Path,
    operation: Operation,
    max_len: u64,
) -> Result<(Bytes, Range<u64>)> {
    let range = result.range.clone();
    let expected = range.end.saturating_sub(range.start);
    if expected > max_len {
        return Err(Error::at(
            path,
            ErrorKind::ShortRead {
                operation,
                range,
                got: expected,
            },
        ));
    }
    let bytes = result
        .bytes()
        .await
        .map_err(|e| Error::store(operation, path, e))?;
    if bytes.len() as u64 != expected {
        return Err(Error::at(
            path,
            ErrorKind::ShortRead {
                operation,
                range,
                got: bytes.len() as u64,
            },
        ));
    }
    Ok((bytes, range))
}

/// Bytes `range` of the object, checked to be exactly that many; with an
/// ETag, only from that version of the object (`If-Match`), so that reads
/// after an open never mix two versions ([`ErrorKind::Changed`]). The response's
/// own ETag is checked too: a server that ignores `If-Match` must not hand
/// over another version's bytes unnoticed.
pub(crate) async fn fetch(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    range: Range<u64>,
    e_tag: Option<&str>,
) -> Result<Bytes> {
    let options = GetOptions {
        range: Some(GetRange::Bounded(range.clone())),
        if_match: e_tag.map(str::to_owned),
        ..GetOptions::default()
    };
    let result = store
        .get_opts(path, options)
        .await
        .map_err(|e| Error::store(Operation::Read, path, e))?;
    if let Some(pinned) = e_tag
        && result.meta.e_tag.as_deref() != Some(pinned)
    {
        return Err(Error::at(
            path,
            ErrorKind::Changed {
                operation: Operation::Read,
            },
        ));
    }
    let (bytes, got) =
        checked_bytes(result, path, Operation::Read, range.end - range.start).await?;
    if got != range {
        return Err(Error::at(
            path,
            ErrorKind::ShortRead {
                operation: Operation::Read,
                range,
                got: bytes.len() as u64,
            },
        ));
    }
    Ok(bytes)
}

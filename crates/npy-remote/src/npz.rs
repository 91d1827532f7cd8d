//! `.npz` archives in object storage, read from their tail.
//!
//! [`RemoteNpz::open`] lists an archive with one suffix GET in the common
//! case: the last [`NpzOptions::tail`] bytes hold the end records (zip64
//! too) and the central directory of any archive with a few hundred
//! members. The zip crate parses them (the same parser npy-mmap uses),
//! through a reader over the fetched tail; when the directory is larger, the
//! reader reports where it needed to read and a second suffix GET fetches
//! from there. Members are then read by range: a stored member is an
//! ordinary [`RemoteArray`] (rows, scattered reads, blocks — our writer
//! aligns its data to 64 bytes); a deflated member is stream-inflated from
//! concurrent ranged GETs, its size and CRC-32 checked.

use std::io::{Read, Seek, SeekFrom};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use npy_core::npz::{ArchiveError, key_for};
pub use npy_core::npz::{MemberCompression, MemberInfo};
use npy_core::{NpyArray, ReadOptions};
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore};
use zip::read::{ArchiveOffset, Config};

use crate::error::{Error, ErrorKind, Operation, Result};

mod blocks;
use crate::read::{Fetched, OPEN_PREFIX, RemoteArray, Transfer, checked_bytes, fetch};
use crate::store::Store;

/// How an archive is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NpzOptions {
    /// Bytes of the archive's end fetched at open (default 64 KiB: the
    /// end records and the directory of a few hundred members).
    pub tail: u64,
    /// The largest central directory accepted (default 64 MiB): the
    /// archive says how large it is, and that is not trusted unbounded.
    pub max_directory: u64,
    /// How members' arrays are read (header limit, byte order, data limit).
    pub read: ReadOptions,
    /// How members' data is fetched.
    pub transfer: Transfer,
}

impl Default for NpzOptions {
    fn default() -> Self {
        NpzOptions {
            tail: 64 << 10,
            max_directory: 64 << 20,
            read: ReadOptions::default(),
            transfer: Transfer::default(),
        }
    }
}

/// An `.npz` archive in a store, listed from its tail.
#[derive(Clone, Debug)]
pub struct RemoteNpz {
    store: Arc<dyn ObjectStore>,
    path: Path,
    size: u64,
    /// The version every member read is pinned to.
    e_tag: Option<String>,
    directory_start: u64,
    members: Vec<MemberInfo>,
    /// Each member's block-index extra field (payload), from the directory.
    index_fields: Vec<Option<Vec<u8>>>,
    /// Members whose local header was read: data start and `.npy` header.
    opened: Arc<Mutex<std::collections::HashMap<usize, Arc<Opened>>>>,
    /// Checkpoints built for other writers' deflated members
    /// ([`build_index`](Self::build_index)), by position.
    built: Arc<Mutex<std::collections::HashMap<usize, Arc<npy_mmap::npz::BlockIndex>>>>,
    options: NpzOptions,
}

/// What a member's first GET told: where its data starts and its header.
#[derive(Debug)]
struct Opened {
    data_start: u64,
    parsed: npy_core::ParsedHeader,
}

/// The fixed part of a zip local header, before the name.
const LOCAL_HEADER_LEN: u64 = 30;

/// Extra-field bytes fetched with a local header in the first request:
/// enough for our writer's alignment padding and a zip64 field.
const LOCAL_EXTRA_GUESS: u64 = 256;

impl RemoteNpz {
    /// Lists the archive at `path` (one suffix GET in the common case).
    ///
    /// Errors: [`ErrorKind::Archive`] when it is not a zip archive
    /// ([`ArchiveError::NotAZip`]) or its directory is larger than
    /// [`NpzOptions::max_directory`] ([`ArchiveError::DirectoryTooLarge`]).
    pub async fn open(
        store: Arc<dyn ObjectStore>,
        path: Path,
        options: NpzOptions,
    ) -> Result<RemoteNpz> {
        let mut want = options.tail.max(22);
        loop {
            let Fetched {
                bytes: tail,
                size,
                e_tag,
            } = get_suffix(&store, &path, want, Operation::List).await?;
            let missed = Arc::new(Mutex::new(None));
            let start = size - tail.len() as u64;
            let reader = TailReader {
                size,
                start,
                tail: tail.clone(),
                pos: 0,
                missed: missed.clone(),
            };
            let config = Config {
                archive_offset: ArchiveOffset::Known(0),
            };
            match zip::ZipArchive::with_config(config, reader) {
                Ok(zip) => {
                    let (members, index_fields) = list(&zip, &path, &tail, start)?;
                    return Ok(RemoteNpz {
                        directory_start: zip.central_directory_start(),
                        e_tag,
                        store,
                        path,
                        size,
                        members,
                        index_fields,
                        opened: Default::default(),
                        built: Default::default(),
                        options,
                    });
                }
                Err(e) => {
                    let needed = *missed.lock().expect("never poisoned");
                    match needed {
                        Some(offset) if size - offset > want => {
                            want = size - offset;
                            if want > options.max_directory {
                                return Err(Error::archive(
                                    &path,
                                    ArchiveError::DirectoryTooLarge {
                                        len: want,
                                        max: options.max_directory,
                                    },
                                ));
                            }
                        }
                        _ => {
                            return Err(Error::archive(
                                &path,
                                ArchiveError::NotAZip {
                                    detail: e.to_string(),
                                },
                            ));
                        }
                    }
                }
            }
        }
    }

    /// Lists the archive a URL names.
    pub async fn open_url(url: &str) -> Result<RemoteNpz> {
        let (store, path) = Store::from_url(url)?;
        RemoteNpz::open(store.objects().clone(), path, NpzOptions::default()).await
    }

    /// The members, in directory order.
    pub fn members(&self) -> &[MemberInfo] {
        &self.members
    }

    /// The archive's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The archive's size.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The archive's ETag as the store reported it when listed (every
    /// member read is pinned to it), when the store has one.
    pub fn e_tag(&self) -> Option<&str> {
        self.e_tag.as_deref()
    }

    /// The member whose key (or full name) is `key`.
    ///
    /// Errors: [`ArchiveError::NotAFile`] (numpy's `KeyError`) when no
    /// member has that key or name.
    pub fn member(&self, key: &str) -> Result<&MemberInfo> {
        self.members
            .iter()
            .find(|m| m.key == key)
            .or_else(|| self.members.iter().find(|m| m.name == key))
            .ok_or_else(|| {
                Error::archive(
                    &self.path,
                    ArchiveError::NotAFile {
                        key: key.to_owned(),
                    },
                )
            })
    }

    /// Where a member's data starts, from its local header (one GET of the
    /// header and, for the caller, the first `extra` bytes of data).
    async fn locate(&self, member: &MemberInfo, extra: u64) -> Result<(u64, Bytes)> {
        let span = self.local_span(member, extra)?;
        let bytes = fetch(&self.store, &self.path, span, self.e_tag.as_deref()).await?;
        self.parse_local(member, bytes)
    }

    /// The bytes to fetch for a member's local header and the first
    /// `extra` bytes of its data.
    fn local_span(&self, member: &MemberInfo, extra: u64) -> Result<std::ops::Range<u64>> {
        let name_len = member.name.len() as u64;
        let start = member.header_offset;
        let end = (start + LOCAL_HEADER_LEN + name_len + LOCAL_EXTRA_GUESS + extra)
            .min(self.directory_start);
        if start + LOCAL_HEADER_LEN > end {
            return Err(self.corrupt(member, "the local header lies past the central directory"));
        }
        Ok(start..end)
    }

    /// Where a member's data starts, from `bytes` fetched from its local
    /// header on, and the data bytes among them.
    fn parse_local(&self, member: &MemberInfo, mut bytes: Bytes) -> Result<(u64, Bytes)> {
        let name_len = member.name.len() as u64;
        let start = member.header_offset;
        if &bytes[..4] != b"PK\x03\x04" {
            return Err(self.corrupt(member, "Bad magic number for file header"));
        }
        // Bit 0 of the flags: encrypted (as the zip reader of local archives refuses it).
        if bytes[6] & 1 != 0 {
            return Err(self.member_error(
                member,
                ErrorKind::Archive(ArchiveError::Encrypted {
                    member: member.name.clone(),
                }),
            ));
        }
        let local_name_len = u64::from(u16::from_le_bytes([bytes[26], bytes[27]]));
        let extra_len = u64::from(u16::from_le_bytes([bytes[28], bytes[29]]));
        let data_start = start + LOCAL_HEADER_LEN + local_name_len + extra_len;
        let name_end = (LOCAL_HEADER_LEN + local_name_len) as usize;
        if local_name_len != name_len
            || bytes.get(LOCAL_HEADER_LEN as usize..name_end) != Some(member.name.as_bytes())
        {
            return Err(self.corrupt(
                member,
                "the names in the directory and the local header differ",
            ));
        }
        if data_start
            .checked_add(member.compressed_size)
            .is_none_or(|end| end > self.directory_start)
        {
            return Err(self.corrupt(
                member,
                "its data runs past the start of the central directory",
            ));
        }
        let have_from = data_start - start;
        if have_from > bytes.len() as u64 {
            bytes = Bytes::new(); // a long extra field: the data comes later
        } else {
            bytes = bytes.slice(have_from as usize..);
        }
        Ok((data_start, bytes))
    }

    fn corrupt(&self, member: &MemberInfo, detail: &str) -> Error {
        self.member_error(
            member,
            ErrorKind::Archive(ArchiveError::Corrupt {
                detail: detail.to_owned(),
            }),
        )
    }

    /// A stored member as a [`RemoteArray`]: its header read with the local
    /// header in one GET, its data read by range like any array.
    ///
    /// Errors: [`ArchiveError::Compressed`] for a deflated member (use
    /// [`load`](Self::load) or [`content`](Self::content)); format errors
    /// as for an `.npy` object.
    pub async fn array(&self, key: &str) -> Result<RemoteArray> {
        let member = self.member(key)?.clone();
        if member.compression != MemberCompression::Stored {
            return Err(self.member_error(
                &member,
                ErrorKind::Archive(ArchiveError::Compressed {
                    compression: member.compression,
                }),
            ));
        }
        let (data_start, prefix) = self.locate(&member, OPEN_PREFIX).await?;
        self.open_stored(&member, data_start, prefix).await
    }

    /// The stored `member` whose `.npy` starts at `data_start` of the
    /// archive, its first bytes (`prefix`, from there) already fetched.
    async fn open_stored(
        &self,
        member: &MemberInfo,
        data_start: u64,
        prefix: Bytes,
    ) -> Result<RemoteArray> {
        let prefix = prefix.slice(..prefix.len().min(member.size as usize));
        RemoteArray::open_prefetched(
            self.store.clone(),
            self.path.clone(),
            data_start,
            member.size,
            prefix,
            self.size,
            self.e_tag.clone(),
            self.options.read,
            self.options.transfer,
        )
        .await
        .map_err(|e| e.in_member(&member.name))
    }

    /// Every stored member as a [`RemoteArray`], their local headers and
    /// `.npy` headers fetched together: the spans of members closer than
    /// the transfer's `coalesce_gap` are one ranged GET, so an archive of
    /// small members costs one request whatever their number (each GET
    /// pinned to the archive's ETag). Deflated members are left out.
    pub async fn stored_arrays(&self) -> Result<Vec<RemoteArray>> {
        let stored: Vec<&MemberInfo> = self
            .members
            .iter()
            .filter(|m| m.compression == MemberCompression::Stored)
            .collect();
        let spans = stored
            .iter()
            .map(|member| self.local_span(member, OPEN_PREFIX))
            .collect::<Result<Vec<_>>>()?;
        let plan = npy_core::plan::Coalesce {
            align: 1,
            max_gap: self.options.transfer.coalesce_gap,
        };
        let fetched_ranges = plan.ranges(spans.iter().cloned());
        let fetched: Vec<Bytes> = futures::stream::iter(fetched_ranges.iter().cloned())
            .map(|range| fetch(&self.store, &self.path, range, self.e_tag.as_deref()))
            .buffered(self.options.transfer.concurrency.max(1))
            .try_collect()
            .await?;
        let mut arrays = Vec::with_capacity(stored.len());
        for (member, span) in stored.into_iter().zip(spans) {
            // The plan covers every span: an error, never a panic, if not.
            let (at, offset) = npy_core::plan::locate(&fetched_ranges, &span).ok_or_else(|| {
                Error::at(
                    &self.path,
                    ErrorKind::Io {
                        operation: "read",
                        source: std::io::Error::other("a read outside the requests planned for it"),
                    },
                )
            })?;
            let len = (span.end - span.start) as usize;
            let bytes = fetched[at].slice(offset..offset + len);
            let (data_start, prefix) = self.parse_local(member, bytes)?;
            arrays.push(self.open_stored(member, data_start, prefix).await?);
        }
        Ok(arrays)
    }

    /// A member's header (one GET for a stored member; the first inflated
    /// bytes for a deflated one).
    pub async fn header(&self, key: &str) -> Result<npy_core::ParsedHeader> {
        let member = self.member(key)?;
        if member.compression == MemberCompression::Stored {
            let array = self.array(key).await?;
            return Ok(npy_core::ParsedHeader {
                header: array.header().clone(),
                layout: *array.layout(),
            });
        }
        let mut content = self.content(key).await?;
        let mut prefix = Vec::new();
        while let Some(chunk) = content.next().await {
            prefix.extend_from_slice(&chunk?);
            match npy_core::Header::parse(&prefix, &self.options.read.parse) {
                Err(npy_core::Error::Eof { .. }) => continue,
                other => {
                    return other.map_err(|e| self.member_error(member, ErrorKind::Format(e)));
                }
            }
        }
        npy_core::Header::parse(&prefix, &self.options.read.parse)
            .map_err(|e| self.member_error(member, ErrorKind::Format(e)))
    }

    /// `kind` about `member` of this archive.
    fn member_error(&self, member: &MemberInfo, kind: ErrorKind) -> Error {
        Error::at(&self.path, kind).in_member(&member.name)
    }

    /// A member's content (an `.npy` file or raw bytes) as a stream of
    /// chunks: ranged GETs, inflated as they arrive for a deflated member;
    /// the size and CRC-32 the directory records are checked at the end.
    pub async fn content(&self, key: &str) -> Result<MemberContent> {
        let member = self.member(key)?.clone();
        let inflater = match member.compression {
            MemberCompression::Stored => None,
            MemberCompression::Deflated => Some(flate2::Decompress::new(false)),
            other => {
                return Err(self.member_error(
                    &member,
                    ErrorKind::Archive(ArchiveError::UnsupportedCompression {
                        method: other.method(),
                    }),
                ));
            }
        };
        let (data_start, first) = self.locate(&member, 0).await?;
        let first = first.slice(..first.len().min(member.compressed_size as usize));
        let rest_start = data_start + first.len() as u64;
        let end = data_start + member.compressed_size;
        let part_size = self.options.transfer.part_size as u64;
        let store = self.store.clone();
        let path = self.path.clone();
        let e_tag = self.e_tag.clone();
        let ranges = (rest_start..end)
            .step_by(part_size as usize)
            .map(move |from| from..from.saturating_add(part_size).min(end));
        let parts = futures::stream::iter(ranges)
            .map(move |range| {
                let store = store.clone();
                let path = path.clone();
                let e_tag = e_tag.clone();
                async move { fetch(&store, &path, range, e_tag.as_deref()).await }
            })
            .buffered(self.options.transfer.concurrency);
        Ok(MemberContent {
            parts: futures::stream::once(async move { Ok(first) })
                .chain(parts)
                .boxed(),
            inflater,
            input: Bytes::new(),
            produced: 0,
            crc: crc32fast::Hasher::new(),
            member,
            archive: self.path.to_string(),
            finished: false,
        })
    }

    /// A member's whole array in memory (concurrent ranged GETs, inflated
    /// as they arrive when deflated), checked like a local load: the size
    /// and CRC-32 the directory records, then the `.npy` it holds. (Rows
    /// read by range through [`array`](Self::array) skip the CRC, which
    /// covers the whole member.)
    pub async fn load(&self, key: &str) -> Result<NpyArray> {
        let member = self.member(key)?.clone();
        let content = self.read_content(&member).await?;
        npy_core::read_npy(&content[..], &self.options.read)
            .map_err(|e| self.member_error(&member, ErrorKind::Format(e)))
    }

    /// A member's whole content in memory (the raw bytes numpy returns for
    /// a member that is not an array).
    pub async fn read_raw(&self, key: &str) -> Result<Vec<u8>> {
        let member = self.member(key)?.clone();
        self.read_content(&member).await
    }

    async fn read_content(&self, member: &MemberInfo) -> Result<Vec<u8>> {
        if let Some(max) = self.options.read.max_data_len
            && member.size > max as u64
        {
            return Err(self.member_error(
                member,
                ErrorKind::Format(npy_core::Error::DataTooLarge {
                    len: member.size as usize,
                    max,
                }),
            ));
        }
        let mut content = self.content(&member.name).await?;
        // The recorded size is checked as the content arrives; reserve a bounded amount up front.
        let mut out = Vec::with_capacity(member.size.min(64 << 20) as usize);
        while let Some(chunk) = content.next().await {
            out.extend_from_slice(&chunk?);
        }
        Ok(out)
    }
}

/// A member's content, chunk by chunk (see [`RemoteNpz::content`]).
pub struct MemberContent {
    parts: BoxStream<'static, Result<Bytes>>,
    inflater: Option<flate2::Decompress>,
    input: Bytes,
    produced: u64,
    crc: crc32fast::Hasher,
    member: MemberInfo,
    archive: String,
    finished: bool,
}

impl std::fmt::Debug for MemberContent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberContent")
            .field("member", &self.member.name)
            .field("produced", &self.produced)
            .finish_non_exhaustive()
    }
}

/// Inflated bytes handed out at a time.
const INFLATE_CHUNK: usize = 1 << 20;

impl MemberContent {
    /// The member this is the content of.
    pub fn member(&self) -> &MemberInfo {
        &self.member
    }

    /// `error` about this member.
    fn error(&self, error: ArchiveError) -> Error {
        Error::at(&self.archive, ErrorKind::Archive(error)).in_member(&self.member.name)
    }

    fn corrupt(&self, detail: String) -> Error {
        self.error(ArchiveError::Corrupt { detail })
    }

    /// The next chunk of content, or `None` at its end (after the size and
    /// CRC-32 were checked).
    pub async fn next(&mut self) -> Option<Result<Bytes>> {
        if self.finished {
            return None;
        }
        match self.next_chunk().await {
            Ok(Some(chunk)) => {
                self.produced += chunk.len() as u64;
                if self.produced > self.member.size {
                    self.finished = true;
                    return Some(Err(self.corrupt(format!(
                        "its content is longer than the {} bytes the directory records",
                        self.member.size
                    ))));
                }
                self.crc.update(&chunk);
                Some(Ok(chunk))
            }
            Ok(None) => {
                self.finished = true;
                let crc = self.crc.clone().finalize();
                if self.produced != self.member.size {
                    Some(Err(self.corrupt(format!(
                        "its content is {} bytes, the directory records {}",
                        self.produced, self.member.size
                    ))))
                } else if crc != self.member.crc32 {
                    Some(Err(self.error(ArchiveError::BadCrc {
                        member: self.member.name.clone(),
                    })))
                } else {
                    None
                }
            }
            Err(e) => {
                self.finished = true;
                Some(Err(e))
            }
        }
    }

    async fn next_chunk(&mut self) -> Result<Option<Bytes>> {
        let Some(inflater) = self.inflater.as_mut() else {
            // Stored: the parts are the content.
            return self.parts.next().await.transpose();
        };
        let mut out = Vec::with_capacity(INFLATE_CHUNK);
        loop {
            let input_ended = if self.input.is_empty() {
                match self.parts.next().await {
                    Some(part) => {
                        self.input = part?;
                        false
                    }
                    None => true,
                }
            } else {
                false
            };
            let before_in = inflater.total_in();
            let before_out = inflater.total_out();
            let flush = if input_ended {
                flate2::FlushDecompress::Finish
            } else {
                flate2::FlushDecompress::None
            };
            let status = match inflater.decompress_vec(&self.input, &mut out, flush) {
                Ok(status) => status,
                Err(e) => return Err(self.corrupt(e.to_string())),
            };
            let consumed = (inflater.total_in() - before_in) as usize;
            self.input = self.input.slice(consumed..);
            let made = inflater.total_out() - before_out;
            if status == flate2::Status::StreamEnd {
                return Ok((!out.is_empty()).then(|| Bytes::from(out)));
            }
            if out.len() == out.capacity() {
                return Ok(Some(Bytes::from(out)));
            }
            if input_ended && made == 0 && consumed == 0 {
                if out.is_empty() {
                    return Err(self.corrupt("the compressed data ends early".to_owned()));
                }
                return Ok(Some(Bytes::from(out)));
            }
        }
    }
}

/// The last `len` bytes of the object and its size (one suffix GET).
pub(crate) async fn get_suffix(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    len: u64,
    operation: Operation,
) -> Result<Fetched> {
    let options = GetOptions::default().with_range(Some(GetRange::Suffix(len)));
    let result = store
        .get_opts(path, options)
        .await
        .map_err(|e| Error::store(operation, path, e))?;
    let (size, e_tag) = (result.meta.size, result.meta.e_tag.clone());
    let (bytes, range) = checked_bytes(result, path, operation, len).await?;
    if range.end != size {
        return Err(Error::at(
            path,
            ErrorKind::ShortRead {
                operation,
                range: size.saturating_sub(len)..size,
                got: bytes.len() as u64,
            },
        ));
    }
    Ok(Fetched { bytes, size, e_tag })
}

/// The members the zip crate found in the directory, each one's compression
/// read from its header in the fetched `tail` (which starts at byte `start`),
/// and each one's block-index extra field if it has one.
#[allow(clippy::type_complexity)]
fn list<R: Read + Seek>(
    zip: &zip::ZipArchive<R>,
    path: &Path,
    tail: &[u8],
    start: u64,
) -> Result<(Vec<MemberInfo>, Vec<Option<Vec<u8>>>)> {
    let not_a_zip = |detail: String| Error::archive(path, ArchiveError::NotAZip { detail });
    let members: Vec<MemberInfo> = (0..zip.len())
        .map(|index| {
            let entry = zip
                .by_index_data(index)
                .map_err(|e| not_a_zip(format!("central directory entry {index}: {e}")))?;
            let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
            let compression = entry
                .central_header_start()
                .checked_sub(start)
                .and_then(|at| tail.get(usize::try_from(at).ok()?..))
                .and_then(MemberCompression::from_central_header)
                .ok_or_else(|| {
                    not_a_zip(format!(
                        "no central directory header for '{name}' where the directory says"
                    ))
                })?;
            Ok(MemberInfo {
                key: key_for(&name).to_owned(),
                name,
                compression,
                compressed_size: entry.compressed_size(),
                size: entry.size(),
                crc32: entry.crc32(),
                header_offset: entry.header_start(),
            })
        })
        .collect::<Result<_>>()?;
    let index_fields = (0..zip.len())
        .map(|index| {
            let entry = zip.by_index_data(index).ok()?;
            let at = usize::try_from(entry.central_header_start().checked_sub(start)?).ok()?;
            let header = tail.get(at..at + npy_core::npz::CENTRAL_HEADER_LEN)?;
            let name_len = usize::from(u16::from_le_bytes([header[28], header[29]]));
            let extra_len = usize::from(u16::from_le_bytes([header[30], header[31]]));
            let extra_at = at + npy_core::npz::CENTRAL_HEADER_LEN + name_len;
            let extra = tail.get(extra_at..extra_at + extra_len)?;
            npy_mmap::npz::find_extra_field(extra).map(<[u8]>::to_vec)
        })
        .collect();
    Ok((members, index_fields))
}

/// `Read + Seek` over the fetched tail of an object: reads before the tail
/// fail and record the lowest offset wanted, so the caller can fetch from
/// there and parse again (the zip crate reads only the end records and the
/// central directory).
struct TailReader {
    size: u64,
    start: u64,
    tail: Bytes,
    pos: u64,
    missed: Arc<Mutex<Option<u64>>>,
}

impl Read for TailReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.size || buf.is_empty() {
            return Ok(0);
        }
        if self.pos < self.start {
            let mut missed = self.missed.lock().expect("never poisoned");
            *missed = Some(missed.map_or(self.pos, |m| m.min(self.pos)));
            return Err(std::io::Error::other(
                "the archive's directory starts before the fetched tail",
            ));
        }
        let from = (self.pos - self.start) as usize;
        let n = buf.len().min(self.tail.len() - from);
        buf[..n].copy_from_slice(&self.tail[from..from + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for TailReader {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.pos = seek_target(self.size, self.pos, to)?;
        Ok(self.pos)
    }
}

/// Where a seek of a reader over `size` bytes at `pos` lands.
pub(crate) fn seek_target(size: u64, pos: u64, to: SeekFrom) -> std::io::Result<u64> {
    let target = match to {
        SeekFrom::Start(offset) => Some(offset),
        SeekFrom::End(delta) => size.checked_add_signed(delta),
        SeekFrom::Current(delta) => pos.checked_add_signed(delta),
    };
    target.ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
    })
}

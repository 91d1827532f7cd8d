//! The lazy archive reader.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek};
use std::path::Path;
use std::sync::Arc;

// Members that do not start with the `.npy` magic are raw bytes.
use npy_core::header::MAGIC;
use npy_core::npz::{
    ArchiveError, CENTRAL_HEADER_LEN, MemberCompression, MemberInfo, is_zip_start, key_for,
};
use npy_core::{Header, NpyArray, ParsedHeader, ReadOptions, read_npy};
use zip::read::ZipFile;
use zip::{CompressionMethod, ZipArchive, ZipReadOptions};

use crate::error::{Error, ErrorKind, Result, format_error_kind, stream_error};

mod blocked;
mod index_file;
mod shared;
mod stored;
use super::blocks::BlockIndex;
use crate::lock::{Locks, lock_shared};
pub use index_file::index_path;
use shared::Shared;
pub use stored::{StoredArray, StoredRange};

/// A lazily read `.npz` archive (or any zip), with NumPy's `NpzFile` semantics.
///
/// Opening reads the central directory only. [`keys`](Self::keys) lists every
/// member in zip order with one trailing `.npy` removed, and every lookup
/// accepts either that key or the full member name. Members are read only
/// when asked for, and an error in one member (bad header, CRC mismatch,
/// truncated data) is reported for that member alone, naming it.
///
/// ```
/// use std::io::Cursor;
/// use npy_mmap::npz::{NpzArchive, NpzWriter};
///
/// let mut writer = NpzWriter::new(Cursor::new(Vec::new()))?;
/// writer.add_raw_member("notes.txt", b"hello")?;
/// let bytes = writer.into_inner()?.into_inner();
///
/// let mut archive = NpzArchive::new(Cursor::new(bytes))?;
/// assert_eq!(archive.keys(), ["notes.txt"]);
/// assert_eq!(archive.read_raw("notes.txt")?, b"hello");
/// assert!(archive.read_raw("missing").is_err());
/// # Ok::<(), npy_mmap::Error>(())
/// ```
pub struct NpzArchive<R> {
    zip: ZipArchive<Shared<R>>,
    /// The archive's reader, shared with `zip`: block reads seek with it.
    raw: Shared<R>,
    /// Decoded member names, in zip order.
    names: Vec<String>,
    /// NumPy's `files`: names with one `.npy` removed, in zip order.
    keys: Vec<String>,
    /// Full member name -> index, decoded once at open.
    by_name: HashMap<String, usize>,
    /// How each member is stored, in zip order (from the central directory).
    compressions: Vec<MemberCompression>,
    options: ReadOptions,
    /// Bytes in the archive: a stored member can hold no more.
    archive_len: u64,
    /// The archive's file, when it was opened from one (for errors).
    path: Option<std::path::PathBuf>,
    /// Each member's block-index extra field (payload), if its central
    /// directory entry has one.
    index_fields: Vec<Option<Vec<u8>>>,
    /// Block indexes in use, by member: written ones once checked, built
    /// ones once built (kept for the archive's life).
    indexes: HashMap<usize, Arc<BlockIndex>>,
    /// Members whose written index failed a read (not used again).
    refused: std::collections::HashSet<usize>,
    /// Where the central directory starts (it runs to the archive's end).
    directory_start: u64,
    /// Whether the sidecar beside the archive was looked for.
    sidecar_tried: bool,
}

impl<R> std::fmt::Debug for NpzArchive<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzArchive")
            .field("keys", &self.keys)
            .finish_non_exhaustive()
    }
}

impl NpzArchive<BufReader<File>> {
    /// Opens the archive at `path` (from [`OpenOptions::open_npz`](crate::OpenOptions::open_npz)).
    pub(crate) fn open(path: &Path, options: ReadOptions, locks: Locks) -> Result<Self> {
        let file = crate::file::open_regular(path, false)?;
        // Readers of an archive wait for its writers like readers of an array.
        lock_shared(&file, path, locks)?;
        let mut archive =
            Self::with_options(BufReader::new(file), options).map_err(|e| e.with_path(path))?;
        archive.path = Some(path.to_path_buf());
        Ok(archive)
    }
}

impl<R: Read + Seek> NpzArchive<R> {
    /// Reads the central directory of the zip in `reader`, with default
    /// options ([`OpenOptions::read_npz`](crate::OpenOptions::read_npz) takes
    /// options).
    pub fn new(reader: R) -> Result<Self> {
        Self::with_options(reader, ReadOptions::default())
    }

    /// [`new`](Self::new) with read options.
    pub(crate) fn with_options(reader: R, options: ReadOptions) -> Result<Self> {
        let mut reader = Shared::new(reader).map_err(stream_error("seek in"))?;
        let archive_len = reader
            .seek(io::SeekFrom::End(0))
            .map_err(stream_error("seek in"))?;
        check_start(&mut reader)?;
        // The entries' places are checked before anything is inflated, on
        // the reader itself, then the (small) directory is parsed again.
        let spans = match ZipArchive::new(&mut reader) {
            Ok(zip) => entry_spans(&zip)?,
            // The first bytes were checked by `check_start`.
            Err(error) => return Err(not_a_zip(error)),
        };
        let directory_start = spans.1;
        let (compressions, index_fields) = check_entries(&mut reader, spans)?;
        let zip = ZipArchive::new(reader.clone()).map_err(not_a_zip)?;
        let mut names = Vec::with_capacity(zip.len());
        let mut by_name = HashMap::with_capacity(zip.len());
        for index in 0..zip.len() {
            let name = match zip.name_for_index(index) {
                Some(Ok(name)) => name.into_owned(),
                Some(Err(error)) => return Err(not_a_zip(error)),
                None => unreachable_index(index)?,
            };
            by_name.insert(name.clone(), index);
            names.push(name);
        }
        let keys = names.iter().map(|name| key_for(name).to_owned()).collect();
        Ok(NpzArchive {
            zip,
            raw: reader,
            names,
            keys,
            by_name,
            compressions,
            options,
            archive_len,
            path: None,
            index_fields,
            indexes: HashMap::new(),
            refused: Default::default(),
            directory_start,
            sidecar_tried: false,
        })
    }

    /// The read options used for every member.
    pub fn options(&self) -> &ReadOptions {
        &self.options
    }

    /// NumPy's `files`: every member in zip order, one trailing `.npy` removed.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// The full member names, in zip order.
    pub fn member_names(&self) -> &[String] {
        &self.names
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the archive has no members.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Whether `key` names a member (as a key or a full member name).
    pub fn contains(&self, key: &str) -> bool {
        self.index_of(key).is_some()
    }

    /// NumPy's lookup: the full member name first, then the key plus `.npy`.
    fn index_of(&self, key: &str) -> Option<usize> {
        // `key` is in NumPy's `files` exactly when `key.npy` is a member.
        self.by_name
            .get(key)
            .or_else(|| self.by_name.get(&format!("{key}.npy")))
            .copied()
    }

    pub(crate) fn resolve(&self, key: &str) -> Result<usize> {
        self.index_of(key).ok_or_else(|| {
            self.located(Error::from(ArchiveError::NotAFile {
                key: key.to_owned(),
            }))
        })
    }

    /// What the central directory records about a member.
    pub fn info(&self, key: &str) -> Result<MemberInfo> {
        let index = self.resolve(key)?;
        let entry = self
            .zip
            .by_index_data(index)
            .map_err(|source| self.member_error(index, archive_kind(source, &self.names[index])))?;
        Ok(MemberInfo {
            name: self.names[index].clone(),
            key: self.keys[index].clone(),
            compression: self.compressions[index],
            compressed_size: entry.compressed_size(),
            size: entry.size(),
            crc32: entry.crc32(),
            header_offset: entry.header_start(),
        })
    }

    /// Opens a member's content for streaming, with the CRC checked at its end.
    pub(crate) fn open_member(&mut self, index: usize) -> Result<MemberReader<'_, R>> {
        let path = self.path.as_deref();
        let member = self.names[index].as_str();
        let file = self
            .zip
            .by_index_with_options(index, ZipReadOptions::new().ignore_crc32(true))
            .map_err(|source| {
                Error::from(archive_kind(source, member))
                    .in_member(member)
                    .located(path)
            })?;
        let expected = file.crc32();
        Ok(MemberReader {
            file,
            hasher: crc32fast::Hasher::new(),
            expected,
            member,
            crc_ok: None,
            path,
        })
    }

    /// Streams a member's content (the whole `.npy` file or raw bytes),
    /// decompressing as it goes; the CRC-32 is checked at the end.
    pub fn reader(&mut self, key: &str) -> Result<MemberReader<'_, R>> {
        let index = self.resolve(key)?;
        self.open_member(index)
    }

    /// Reads a member's whole content as bytes, whatever it holds (NumPy
    /// returns these bytes for members that are not `.npy` data).
    pub fn read_raw(&mut self, key: &str) -> Result<Vec<u8>> {
        let index = self.resolve(key)?;
        let declared = self.zip.by_index_data(index).map(|e| e.size()).unwrap_or(0);
        let mut reader = self.open_member(index)?;
        // The declared size is only a hint: it may lie, so cap the up-front reservation.
        let mut bytes = Vec::with_capacity(declared.min(1 << 26) as usize);
        reader
            .read_to_end(&mut bytes)
            .map_err(|error| reader.io_error(error))?;
        reader.verify()?;
        Ok(bytes)
    }

    /// Whether the member holds `.npy` data (starts with `\x93NUMPY`); reads six bytes.
    pub fn is_npy(&mut self, key: &str) -> Result<bool> {
        let index = self.resolve(key)?;
        let mut reader = self.open_member(index)?;
        let prefix = reader.read_prefix()?;
        Ok(prefix.as_slice() == MAGIC)
    }

    /// Parses a member's `.npy` header, decompressing only the header bytes.
    pub fn header(&mut self, key: &str) -> Result<ParsedHeader> {
        let index = self.resolve(key)?;
        let options = self.options;
        let mut reader = self.open_member(index)?;
        let prefix = reader.read_prefix()?;
        if prefix.as_slice() != MAGIC {
            return Err(reader.error(ErrorKind::NotNpy));
        }
        let parsed = Header::read_from(
            &mut io::Cursor::new(prefix).chain(&mut reader),
            &options.parse,
        );
        parsed.map_err(|source| reader.format_error(source))
    }

    /// Loads an array member into memory (stored or deflated), streaming it
    /// so memory is bounded by the array, and checks its CRC-32.
    ///
    /// A member that is not `.npy` data is [`ErrorKind::NotNpy`](crate::ErrorKind::NotNpy); use
    /// [`get`](Self::get) to take whatever the member holds, as NumPy does.
    pub fn load(&mut self, key: &str) -> Result<NpyArray> {
        match self.get(key)? {
            Member::Array(array) => Ok(array),
            Member::Raw(_) => Err(self.member_error(self.resolve(key)?, ErrorKind::NotNpy)),
        }
    }

    /// NumPy's `npz[key]`: the array if the member starts with the `.npy`
    /// magic, else the member's raw bytes.
    pub fn get(&mut self, key: &str) -> Result<Member> {
        let index = self.resolve(key)?;
        // A deflated member with a block index inflates on every core.
        if let Some(array) = self.load_blocked(index)? {
            return Ok(Member::Array(array));
        }
        let options = self.options;
        let stored_len = self.stored_len(index);
        let mut reader = self.open_member(index)?;
        let prefix = reader.read_prefix()?;
        if prefix.as_slice() != MAGIC {
            let mut bytes = prefix;
            reader
                .read_to_end(&mut bytes)
                .map_err(|error| reader.io_error(error))?;
            reader.verify()?;
            return Ok(Member::Raw(bytes));
        }
        let array = match stored_len {
            // The size is known and real: read into memory allocated once.
            Some(stored_len) => read_stored(&mut reader, prefix, stored_len, &options),
            None => read_npy(io::Cursor::new(prefix).chain(&mut reader), &options),
        };
        // A CRC mismatch explains a failure better than its symptom does.
        let array = match array {
            Ok(array) => array,
            Err(source) => {
                let error = reader.format_error(source);
                return Err(match reader.verify() {
                    Err(crc)
                        if matches!(
                            crc.kind(),
                            ErrorKind::Archive(ArchiveError::BadCrc { .. })
                        ) =>
                    {
                        crc
                    }
                    _ => error,
                });
            }
        };
        reader.verify()?;
        Ok(Member::Array(array))
    }
}

impl<R: Read + Seek> NpzArchive<R> {
    /// The length of a stored member, if it is stored and the archive
    /// really has that many bytes (so it can size an allocation).
    fn stored_len(&self, index: usize) -> Option<u64> {
        let entry = self.zip.by_index_data(index).ok()?;
        (entry.compression() == CompressionMethod::Stored)
            .then(|| entry.compressed_size())
            .filter(|&len| len <= self.archive_len)
    }
}

/// Where the central directory says one entry lies.
struct EntrySpan {
    name: Vec<u8>,
    /// Where its central directory file header starts (its method is read there).
    central_header_start: u64,
    header_start: u64,
    compressed_size: u64,
    /// The content's size, for a stored entry (which must equal
    /// `compressed_size`); `None` for a compressed one.
    stored_size: Option<u64>,
}

fn entry_spans<R: Read + Seek>(zip: &ZipArchive<&mut Shared<R>>) -> Result<(Vec<EntrySpan>, u64)> {
    let mut spans = Vec::with_capacity(zip.len());
    for index in 0..zip.len() {
        let entry = zip.by_index_data(index).map_err(not_a_zip)?;
        spans.push(EntrySpan {
            name: entry.name_raw().to_vec(),
            central_header_start: entry.central_header_start(),
            header_start: entry.header_start(),
            compressed_size: entry.compressed_size(),
            stored_size: (entry.compression() == CompressionMethod::Stored).then(|| entry.size()),
        });
    }
    Ok((spans, zip.central_directory_start()))
}

/// Fixed part of a local file header, before the name.
const LOCAL_HEADER_LEN: usize = 30;
const LOCAL_HEADER_SIGNATURE: &[u8; 4] = b"PK\x03\x04";

/// Refuses an archive whose entries overlap each other or the central
/// directory, whose local headers disagree with the central directory
/// about the name (as Python's zipfile does), or whose stored entries
/// declare a size other than their bytes. One compressed stream shared by
/// many entries is the overlapping zip bomb: each entry would inflate it again.
/// Returns each entry's compression, read from its central directory
/// header, and its block-index extra field if it has one.
#[allow(clippy::type_complexity)]
fn check_entries<R: Read + Seek>(
    reader: &mut R,
    (mut spans, directory_start): (Vec<EntrySpan>, u64),
) -> Result<(Vec<MemberCompression>, Vec<Option<Vec<u8>>>)> {
    let corrupt = |name: &[u8], detail: String| {
        Error::from(ArchiveError::Corrupt { detail }).in_member(&String::from_utf8_lossy(name))
    };
    let mut compressions = Vec::with_capacity(spans.len());
    let mut index_fields = Vec::with_capacity(spans.len());
    for span in &spans {
        let mut header = [0u8; CENTRAL_HEADER_LEN];
        reader
            .seek(io::SeekFrom::Start(span.central_header_start))
            .map_err(stream_error("seek in"))?;
        let compression = reader
            .read_exact(&mut header)
            .ok()
            .and_then(|()| MemberCompression::from_central_header(&header))
            .ok_or_else(|| {
                Error::from(ArchiveError::NotAZip {
                    detail: format!(
                        "no central directory header for '{}' where the directory says",
                        String::from_utf8_lossy(&span.name)
                    ),
                })
            })?;
        compressions.push(compression);
        index_fields.push(index_field(reader, &header));
    }
    let mut ends = Vec::with_capacity(spans.len());
    for span in &spans {
        let mut fixed = [0u8; LOCAL_HEADER_LEN];
        reader
            .seek(io::SeekFrom::Start(span.header_start))
            .map_err(stream_error("seek in"))?;
        reader.read_exact(&mut fixed).map_err(|_| {
            corrupt(
                &span.name,
                "the local header lies past the end of the archive".into(),
            )
        })?;
        if &fixed[..4] != LOCAL_HEADER_SIGNATURE {
            return Err(corrupt(
                &span.name,
                "Bad magic number for file header".into(),
            ));
        }
        let name_len = u16::from_le_bytes([fixed[26], fixed[27]]);
        let extra_len = u16::from_le_bytes([fixed[28], fixed[29]]);
        let mut local_name = vec![0u8; usize::from(name_len)];
        reader.read_exact(&mut local_name).map_err(|_| {
            corrupt(
                &span.name,
                "the local header lies past the end of the archive".into(),
            )
        })?;
        if local_name != span.name {
            return Err(corrupt(
                &span.name,
                format!(
                    "File name in directory '{}' and header '{}' differ.",
                    String::from_utf8_lossy(&span.name),
                    String::from_utf8_lossy(&local_name)
                ),
            ));
        }
        let end = (LOCAL_HEADER_LEN as u64 + u64::from(name_len) + u64::from(extra_len))
            .checked_add(span.header_start)
            .and_then(|data_start| data_start.checked_add(span.compressed_size))
            .filter(|&end| end <= directory_start)
            .ok_or_else(|| {
                corrupt(
                    &span.name,
                    "its data runs past the start of the central directory".into(),
                )
            })?;
        ends.push(end);
    }
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_unstable_by_key(|&i| spans[i].header_start);
    for pair in order.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        if spans[after].header_start < ends[before] {
            let other = String::from_utf8_lossy(&spans[before].name).into_owned();
            return Err(corrupt(
                &std::mem::take(&mut spans[after].name),
                format!(
                    "it overlaps member '{other}' (entries sharing data: a zip bomb or a corrupt archive)"
                ),
            ));
        }
    }
    // A stored member's two sizes must agree (Python's zipfile reads the
    // compressed size and ignores the other; readers trusting the other
    // would disagree about the member).
    for span in &spans {
        if let Some(size) = span
            .stored_size
            .filter(|&size| size != span.compressed_size)
        {
            return Err(corrupt(
                &span.name,
                format!(
                    "stored member claims {size} bytes of content in {} bytes",
                    span.compressed_size
                ),
            ));
        }
    }
    Ok((compressions, index_fields))
}

/// The block-index extra field's payload of the central directory entry
/// whose fixed part is `header` (the reader stands right after it), if the
/// entry has one. Unreadable extra fields are no index.
fn index_field<R: Read>(reader: &mut R, header: &[u8; CENTRAL_HEADER_LEN]) -> Option<Vec<u8>> {
    let name_len = u64::from(u16::from_le_bytes([header[28], header[29]]));
    let extra_len = usize::from(u16::from_le_bytes([header[30], header[31]]));
    if extra_len == 0 {
        return None;
    }
    io::copy(&mut reader.take(name_len), &mut io::sink()).ok()?;
    let mut extra = vec![0u8; extra_len];
    reader.read_exact(&mut extra).ok()?;
    super::blocks::find_extra_field(&extra).map(<[u8]>::to_vec)
}

/// Reads a stored `.npy` member whose length is known: the header, then the
/// data straight into memory of its own (as [`load`](crate::load) does)
/// when the member holds it all; else the streaming reader's path, which
/// reports the truncation.
fn read_stored<R: Read>(
    reader: &mut R,
    prefix: Vec<u8>,
    stored_len: u64,
    options: &ReadOptions,
) -> npy_core::Result<NpyArray> {
    let mut stream = io::Cursor::new(prefix).chain(reader);
    let npy_core::ParsedHeader { header, layout } = Header::read_from(&mut stream, &options.parse)?;
    if header.dtype == npy_core::DType::Object {
        return npy_core::io::read_objects(stream, &header, layout, options);
    }
    options.check_data_len(&layout)?;
    if layout.data_end() as u64 > stored_len {
        let available = stored_len.saturating_sub(layout.data_offset as u64) as usize;
        return Err(npy_core::Error::truncated_data(&header, available));
    }
    crate::load::read_into_memory(stream, header, layout, options.to_native)
}

/// What a member holds, as NumPy's `NpzFile.__getitem__` returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Member {
    /// `.npy` data, loaded.
    Array(NpyArray),
    /// Anything else: the member's bytes.
    Raw(Vec<u8>),
}

/// A member's content as a stream (decompressed when deflated), from
/// [`NpzArchive::reader`]. Reaching the end checks the CRC-32: a mismatch is
/// an `InvalidData` error `Bad CRC-32 for file '<member>'`.
pub struct MemberReader<'a, R: Read + Seek> {
    file: ZipFile<'a, Shared<R>>,
    hasher: crc32fast::Hasher,
    expected: u32,
    member: &'a str,
    /// Set once the end was reached and the CRC-32 compared.
    crc_ok: Option<bool>,
    /// The archive's file, if it was opened from one (for errors).
    path: Option<&'a Path>,
}

impl<R: Read + Seek> std::fmt::Debug for MemberReader<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberReader")
            .field("member", &self.member)
            .finish_non_exhaustive()
    }
}

impl<R: Read + Seek> Read for MemberReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let count = self.file.read(buf)?;
        self.hasher.update(&buf[..count]);
        if count == 0 && !buf.is_empty() {
            let ok = *self
                .crc_ok
                .get_or_insert_with(|| self.hasher.clone().finalize() == self.expected);
            if !ok {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("Bad CRC-32 for file '{}'", self.member),
                ));
            }
        }
        Ok(count)
    }
}

impl<R: Read + Seek> MemberReader<'_, R> {
    /// The member's name in the archive.
    pub fn member(&self) -> &str {
        self.member
    }

    /// Reads up to six bytes: the magic, if the member has one.
    pub(crate) fn read_prefix(&mut self) -> Result<Vec<u8>> {
        let mut prefix = Vec::with_capacity(MAGIC.len());
        (&mut *self)
            .take(MAGIC.len() as u64)
            .read_to_end(&mut prefix)
            .map_err(|error| self.io_error(error))?;
        Ok(prefix)
    }

    /// Reads whatever is left (bytes after the array are ignored, as in
    /// NumPy) and checks the CRC-32 of everything read.
    pub fn verify(mut self) -> Result<()> {
        io::copy(&mut self, &mut io::sink()).map_err(|error| self.io_error(error))?;
        Ok(())
    }

    /// Names the member in an error from its stream.
    pub(crate) fn io_error(&self, error: io::Error) -> Error {
        if self.crc_ok == Some(false) {
            return self.error(ErrorKind::Archive(ArchiveError::BadCrc {
                member: self.member.to_owned(),
            }));
        }
        self.error(ErrorKind::Archive(ArchiveError::Corrupt {
            detail: error.to_string(),
        }))
    }

    /// `kind` about this member.
    pub(crate) fn error(&self, kind: ErrorKind) -> Error {
        Error::from(kind).in_member(self.member).located(self.path)
    }

    /// npy-core's error about this member's content.
    pub(crate) fn format_error(&self, error: npy_core::Error) -> Error {
        format_error_kind("read", error)
            .in_member(self.member)
            .located(self.path)
    }
}

fn unreachable_index<T>(index: usize) -> Result<T> {
    Err(Error::from(ArchiveError::NotAZip {
        detail: format!("central directory entry {index} vanished"),
    }))
}

/// Refuses a stream that does not start like a zip ([`is_zip_start`], the
/// one rule of what a file is, `np.load`'s): an `.npy` file is told so
/// (even with a zip appended), anything else (a zip after a prefix) is not
/// a zip file. An empty stream is left to the zip reader's words.
fn check_start<R: Read + Seek>(reader: &mut R) -> Result<()> {
    let mut start = [0u8; MAGIC.len()];
    reader
        .seek(io::SeekFrom::Start(0))
        .map_err(stream_error("seek in"))?;
    let filled = npy_core::io::read_full(reader, &mut start).map_err(stream_error("read"))?;
    let start = &start[..filled];
    if start.is_empty() || is_zip_start(start) {
        return Ok(());
    }
    if start == MAGIC {
        return Err(Error::from(ErrorKind::IsNpy));
    }
    Err(Error::from(ArchiveError::NotAZip {
        detail: "it does not start with a zip header (np.load decides by the first bytes: \
                 a zip after other bytes is not an .npz)"
            .to_owned(),
    }))
}

/// The zip reader's refusal of the archive as a whole. (Its error type
/// stays private: zip is not part of this crate's API.)
fn not_a_zip(error: zip::result::ZipError) -> Error {
    Error::from(ArchiveError::NotAZip {
        detail: error.to_string(),
    })
}

/// The zip reader's refusal of `member`, as the kind npy-remote reports
/// for the same member.
fn archive_kind(error: zip::result::ZipError, member: &str) -> ErrorKind {
    use zip::result::ZipError;
    ErrorKind::Archive(match error {
        ZipError::Io(source) => {
            return ErrorKind::Io {
                operation: "read",
                source,
            };
        }
        ZipError::CompressionMethodNotSupported(method) => {
            ArchiveError::UnsupportedCompression { method }
        }
        ZipError::InvalidPassword => ArchiveError::Encrypted {
            member: member.to_owned(),
        },
        ZipError::UnsupportedArchive(detail) if detail == ZipError::PASSWORD_REQUIRED => {
            ArchiveError::Encrypted {
                member: member.to_owned(),
            }
        }
        other => ArchiveError::Corrupt {
            detail: other.to_string(),
        },
    })
}

impl<R> NpzArchive<R> {
    /// This error, with the archive's path if it has one.
    fn located(&self, error: Error) -> Error {
        error.located(self.path.as_deref())
    }

    /// `kind` about member `index` (and the archive's path, if it has one).
    fn member_error(&self, index: usize, kind: ErrorKind) -> Error {
        self.located(Error::from(kind).in_member(&self.names[index]))
    }
}

//! The archive writer.

use std::collections::HashSet;
use std::io::{self, Seek, Write};
use std::path::Path;

use crate::atomic::AtomicFile;

use npy_core::npz::member_name;
use npy_core::{Header, NpySource};

use super::blocks::{MAX_WRITTEN_BLOCKS, crc_combine, encode_extra_field};
use super::container::{Container, Method, OpenMember};
use super::deflate::{CHUNK, ParallelDeflate};
use crate::error::{Error, ErrorKind, Result, format_error_kind, io_error, stream_error};

/// Array data of stored members starts at a multiple of this in the archive
/// (the `.npy` header is itself a multiple of it: the two are the same
/// number), so mapped members give aligned views for every element type.
pub const DATA_ALIGNMENT: u16 = npy_core::header::ARRAY_ALIGN as u16;
const _: () = assert!(DATA_ALIGNMENT as usize == npy_core::header::ARRAY_ALIGN);

/// How members are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Stored as is, like `np.savez`; such members can be mapped.
    Stored,
    /// Deflate-compressed, like `np.savez_compressed` (which uses level 6).
    Deflated {
        /// zlib level, 0 (none) to 9 (smallest).
        level: u32,
    },
}

impl Compression {
    /// Deflate at zlib's default level 6, as `np.savez_compressed` writes.
    pub const DEFLATED: Compression = Compression::Deflated { level: 6 };
}

/// Writes an `.npz` archive member by member, readable by `np.load`.
///
/// Each array becomes a member `<key>.npy` (keys may contain `/`, like
/// NumPy's). Every member is written with zip64 enabled so members over
/// 4 GiB work, and stored members are padded so their array data starts
/// 64-byte aligned in the archive. Deflated members are compressed on all
/// cores, in 1 MiB chunks joined into one deflate stream.
///
/// ```
/// use std::io::Cursor;
/// use npy_mmap::npz::{Compression, NpzArchive, NpzWriter};
///
/// let mut writer = NpzWriter::new(Cursor::new(Vec::new()))?;
/// writer.set_compression(Compression::DEFLATED)?;
/// writer.add_raw_member("README", b"two arrays")?;
/// let archive = writer.into_inner()?.into_inner();
/// assert_eq!(NpzArchive::new(Cursor::new(archive))?.keys(), ["README"]);
/// # Ok::<(), npy_mmap::Error>(())
/// ```
#[must_use = "an archive is written only by finish() (files) or into_inner() (streams)"]
pub struct NpzWriter<W: Write + Seek> {
    container: Container<W>,
    /// The archive's file, for errors (None for a stream).
    path: Option<std::path::PathBuf>,
    compression: Compression,
    members: HashSet<String>,
    /// Keys handed out by [`next_positional_key`](NpzWriter::next_positional_key).
    positional: HashSet<String>,
}

/// The bytes of a stored member checksummed and written at once: small
/// enough to stay in the processor's cache between the two.
const STORED_STEP: usize = 256 << 10;

impl<W: Write + Seek> std::fmt::Debug for NpzWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzWriter")
            .field("compression", &self.compression)
            .field("members", &self.members.len())
            .finish_non_exhaustive()
    }
}

impl NpzWriter<AtomicFile> {
    /// Creates a stored archive at `path`, written through a temporary file in
    /// the same directory; [`finish`](Self::finish) makes it appear. Dropped
    /// unfinished, the writer leaves no file (and never a partial one).
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let file =
            AtomicFile::create(path).map_err(io_error("create a temporary file for", path))?;
        Self::create_with(file)
    }

    /// Like [`create`](Self::create), through an [`AtomicFile`] made by the
    /// caller: e.g. one that must not
    /// [`replace_existing`](AtomicFile::replace_existing) a file, so that
    /// [`finish`](Self::finish) refuses a destination that appeared while
    /// the archive was written.
    pub fn create_with(file: AtomicFile) -> Result<Self> {
        let path = file.dest_path().to_path_buf();
        let mut writer = Self::new(file).map_err(|e| e.with_path(&path))?;
        writer.path = Some(path);
        Ok(writer)
    }

    /// Finishes the archive, syncs it and renames it over the destination.
    /// Until then the destination is untouched (a reader mapping an older
    /// archive there keeps its intact copy).
    pub fn finish(self) -> Result<()> {
        self.into_inner()?.commit()
    }
}

impl<W: Write + Seek> NpzWriter<W> {
    /// A writer of stored members (like `np.savez`), starting at `sink`'s
    /// position; [`set_compression`](Self::set_compression) changes that.
    pub fn new(sink: W) -> Result<Self> {
        Ok(NpzWriter {
            container: Container::new(sink).map_err(stream_error("write"))?,
            path: None,
            compression: Compression::Stored,
            members: HashSet::new(),
            positional: HashSet::new(),
        })
    }

    /// The compression of the members added from now on
    /// (`Compression::DEFLATED` is `np.savez_compressed`'s). Members may
    /// differ: an archive can keep big arrays stored (mappable) and deflate
    /// the rest.
    ///
    /// Errors: a deflate level above 9, before anything changes.
    pub fn set_compression(&mut self, compression: Compression) -> Result<()> {
        if let Compression::Deflated { level } = compression
            && level > 9
        {
            return Err(self.error(ErrorKind::Io {
                operation: "set the compression of",
                source: io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("deflate level {level} is out of range 0..=9"),
                ),
            }));
        }
        self.compression = compression;
        Ok(())
    }

    /// The compression of the members added from now on.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Reserves the next positional key (`arr_0`, `arr_1`, ... as `np.savez`
    /// names its positional arguments). Fails if a keyword array already took it.
    pub fn next_positional_key(&mut self) -> Result<String> {
        let key = format!("arr_{}", self.positional.len());
        if self.members.contains(&member_name(&key)) {
            return Err(self.error(ErrorKind::PositionalClash { key }));
        }
        self.positional.insert(key.clone());
        Ok(key)
    }

    /// Starts a member with exactly `name`, refusing duplicates.
    fn start_member(
        &mut self,
        name: String,
        key: Option<&str>,
        expected: Option<u64>,
    ) -> Result<MemberWriter<'_, W>> {
        if let Some(key) = key
            && self.positional.contains(key)
            && self.members.contains(&name)
        {
            return Err(self.error(ErrorKind::PositionalClash {
                key: key.to_owned(),
            }));
        }
        if self.members.contains(&name) {
            return Err(self.error(ErrorKind::DuplicateName { member: name }));
        }
        if name.len() > usize::from(u16::MAX) {
            let archive = npy_core::npz::ArchiveError::NameTooLong { len: name.len() };
            return Err(self.error(ErrorKind::Archive(archive)));
        }
        let (method, encoder) = match self.compression {
            Compression::Stored => (Method::Stored, Encoder::Stored(crc32fast::Hasher::new(), 0)),
            Compression::Deflated { level } => (
                Method::Deflated,
                Encoder::Deflated(ParallelDeflate::new(level)),
            ),
        };
        let open = self
            .container
            .start(&name, method, u64::from(DATA_ALIGNMENT))
            .map_err(|source| self.io_error(&name, source))?;
        self.members.insert(name.clone());
        Ok(MemberWriter {
            writer: self,
            open: Some((open, encoder)),
            name,
            expected,
            written: 0,
        })
    }

    /// Adds a member that is not an array: `content` under exactly `name`
    /// (NumPy returns such members as raw bytes).
    pub fn add_raw_member(&mut self, name: &str, content: &[u8]) -> Result<()> {
        let mut member = self.start_raw_member(name)?;
        member.put(content)?;
        member.finish()
    }

    /// Starts a member that is not an array, named exactly `name`, whose
    /// content is streamed through the returned writer.
    pub fn start_raw_member(&mut self, name: &str) -> Result<MemberWriter<'_, W>> {
        self.start_member(name.to_owned(), None, None)
    }

    /// Adds the array `key` (stored as `key.npy`, like `np.savez`): any
    /// [`NpySource`], written exactly as `np.save` writes it (a view in its
    /// contiguous order or copied in C order, an object array pickled).
    ///
    /// ```
    /// use npy_core::{ArrayView, Order};
    /// use npy_mmap::npz::{NpzArchive, NpzWriter};
    ///
    /// let mut npz = NpzWriter::new(std::io::Cursor::new(Vec::new()))?;
    /// npz.add("labels", &[1u8, 2, 3][..])?;
    /// let grid = [0.5f32, 1.5, 2.5, 3.5];
    /// npz.add("grid", &ArrayView::from_slice(&grid, &[2, 2], Order::C)?)?;
    /// let bytes = npz.into_inner()?.into_inner();
    ///
    /// let mut archive = NpzArchive::from_bytes(&bytes)?;
    /// assert_eq!(archive.load("grid")?.view::<f32>()?.to_vec(), grid);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add<S: NpySource + ?Sized>(&mut self, key: &str, source: &S) -> Result<()> {
        let header = source.npy_header();
        let data = source.npy_data().map_err(|e| {
            format_error_kind("write", e)
                .in_member(&member_name(key))
                .located(self.path.as_deref())
        })?;
        let mut member = if header.dtype.has_object() {
            // The data is a pickle, whose length only the pickle knows.
            self.start_npy(key, &header, None)?
        } else {
            self.start_array(key, &header)?
        };
        for chunk in data {
            member.put(&chunk)?;
        }
        member.finish()
    }

    /// Starts the array `key`: writes its header and returns a writer for
    /// exactly the data bytes the header promises. Call
    /// [`MemberWriter::finish`]; a member left short is an error.
    pub fn start_array(&mut self, key: &str, header: &Header) -> Result<MemberWriter<'_, W>> {
        // An object array's data is a pickle, not bytes: see `add`.
        let format = |e| self.format_error(key, e);
        if header.dtype.has_object() {
            return Err(format(npy_core::Error::ObjectData));
        }
        let expected = header.data_len().map_err(format)?;
        self.start_npy(key, header, Some(expected as u64))
    }

    /// Starts the `.npy` member of `key` and writes `header` into it; the
    /// data must then be `expected` bytes (any length when `None`: a pickle).
    fn start_npy(
        &mut self,
        key: &str,
        header: &Header,
        expected: Option<u64>,
    ) -> Result<MemberWriter<'_, W>> {
        let header_bytes = header
            .to_bytes(None)
            .map_err(|e| self.format_error(key, e))?;
        let mut member = self.start_member(member_name(key), Some(key), expected)?;
        member
            .encode(&header_bytes)
            .map_err(|e| member.writer.io_error(&member.name, e))?;
        Ok(member)
    }

    /// npy-core's error about the member of `key`.
    fn format_error(&self, key: &str, error: npy_core::Error) -> Error {
        self.error(ErrorKind::Format(error))
            .in_member(&member_name(key))
    }

    /// Writes the central directory and returns the sink (the way to end
    /// an archive written to a stream; one created at a path ends with
    /// [`finish`](NpzWriter::finish), which also makes the file appear).
    pub fn into_inner(self) -> Result<W> {
        let path = self.path.clone();
        self.container
            .finish_archive()
            .map_err(|source| stream_error("write")(source).located(path.as_deref()))
    }

    /// `kind` about this archive (its path, if it has one).
    fn error(&self, kind: ErrorKind) -> Error {
        Error::from(kind).located(self.path.as_deref())
    }

    /// A failed write of member `name`.
    fn io_error(&self, name: &str, source: io::Error) -> Error {
        self.error(ErrorKind::Io {
            operation: "write",
            source,
        })
        .in_member(name)
    }
}

/// How a member's bytes are encoded on their way into the archive.
#[derive(Debug)]
enum Encoder {
    /// CRC-32 and size of what was stored so far.
    Stored(crc32fast::Hasher, u64),
    Deflated(ParallelDeflate),
}

/// One member being streamed into the archive; see
/// [`NpzWriter::start_array`] and [`NpzWriter::start_raw_member`].
///
/// [`finish`](Self::finish) records it. Dropped unfinished, or finished
/// short of what its header promises, the member is left out of the archive
/// (its bytes become unreferenced space) and its name is free again.
#[must_use = "a member is recorded only by finish()"]
pub struct MemberWriter<'a, W: Write + Seek> {
    writer: &'a mut NpzWriter<W>,
    /// `None` once finished or abandoned.
    open: Option<(OpenMember, Encoder)>,
    name: String,
    /// Data bytes an array member's header promises; `None` for raw members.
    expected: Option<u64>,
    written: u64,
}

impl<W: Write + Seek> std::fmt::Debug for MemberWriter<'_, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberWriter")
            .field("name", &self.name)
            .field("expected", &self.expected)
            .field("written", &self.written)
            .finish_non_exhaustive()
    }
}

impl<W: Write + Seek> MemberWriter<'_, W> {
    /// Encodes bytes into the archive (header or data alike).
    fn encode(&mut self, bytes: &[u8]) -> io::Result<()> {
        let container = &mut self.writer.container;
        match &mut self.open {
            Some((_, Encoder::Stored(crc, size))) => {
                // A step at a time: the CRC brings the step into the
                // cache, and the write copies it from there (one pass over
                // memory, where a whole array CRC'd, then written, is two).
                for step in bytes.chunks(STORED_STEP) {
                    crc.update(step);
                    container.write_all(step)?;
                }
                *size += bytes.len() as u64;
                Ok(())
            }
            Some((_, Encoder::Deflated(deflate))) => {
                deflate.write(bytes, &mut |out| container.write_all(out))
            }
            None => Err(io::Error::other("the member was already finished")),
        }
    }

    /// The member's name in the archive.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Writes data, with this member's errors: more than the header
    /// promises is npy-core's length error, with the length it would reach.
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let total = self.written.saturating_add(bytes.len() as u64);
        if self.expected.is_some_and(|expected| total > expected) {
            return Err(self.length_error(total));
        }
        self.write_all(bytes)
            .map_err(|e| self.writer.io_error(&self.name, e))
    }

    /// The header promised other than `actual` data bytes.
    fn length_error(&self, actual: u64) -> Error {
        let error = npy_core::Error::DataLength {
            expected: self.expected.unwrap_or(actual) as usize,
            actual: actual as usize,
        };
        self.writer
            .error(ErrorKind::Format(error))
            .in_member(&self.name)
    }

    /// Ends the member; an array member must have received exactly the data
    /// bytes its header promises.
    pub fn finish(mut self) -> Result<()> {
        if self
            .expected
            .is_some_and(|expected| self.written != expected)
        {
            return Err(self.length_error(self.written));
        }
        let Some((open, encoder)) = self.open.take() else {
            return Ok(());
        };
        let container = &mut self.writer.container;
        let written = match encoder {
            Encoder::Stored(crc, size) => Ok((crc.finalize(), size, Vec::new())),
            Encoder::Deflated(deflate) => deflate
                .finish(&mut |out| container.write_all(out))
                .map(|done| (done.crc32, done.size, index_field(&done.blocks, done.size))),
        };
        let finished =
            written.and_then(|(crc, size, extra)| container.finish(open, crc, size, extra));
        finished.map_err(|e| self.writer.io_error(&self.name, e))
    }
}

/// The block-index extra field of a deflated member of `size` content
/// bytes made of `blocks` (compressed length and CRC-32 of each [`CHUNK`]
/// of content, the last one shorter): none for a single block (the member
/// inflates whole anyway); every k-th block boundary when there are more
/// blocks than the field can list.
fn index_field(blocks: &[(u64, u32)], size: u64) -> Vec<u8> {
    if blocks.len() < 2 {
        return Vec::new();
    }
    let per_entry = blocks.len().div_ceil(MAX_WRITTEN_BLOCKS);
    let span = (CHUNK * per_entry) as u64;
    let content_len = |block: usize| (size - (block * CHUNK) as u64).min(CHUNK as u64);
    let entries: Vec<(u64, u32)> = blocks
        .chunks(per_entry)
        .enumerate()
        .map(|(group, members)| {
            let first = group * per_entry;
            members.iter().enumerate().fold(
                (0u64, 0u32),
                |(len, crc), (k, &(block_len, block_crc))| {
                    let crc = crc_combine(crc, 0, block_crc, content_len(first + k));
                    (len + block_len, crc)
                },
            )
        })
        .collect();
    encode_extra_field(span, &entries).unwrap_or_default()
}

impl<W: Write + Seek> Drop for MemberWriter<'_, W> {
    fn drop(&mut self) {
        if let Some((open, _)) = self.open.take() {
            self.writer.container.abandon(open);
            self.writer.members.remove(&self.name);
        }
    }
}

impl<W: Write + Seek> Write for MemberWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(expected) = self.expected
            && buf.len() as u64 > expected - self.written
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "member '{}': more data than the header's {expected} bytes",
                    self.name
                ),
            ));
        }
        self.encode(buf)?;
        self.written += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

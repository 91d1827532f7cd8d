//! Opening what the user names: an `.npy` file or an `.npz` archive.

use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::{ControlFlow, Range};
use std::path::Path;

use anyhow::{Context, bail};
use npy_core::{Header, Layout, ParseOptions, ReadOptions};
use npy_mmap::npz::{MemberCompression, MemberInfo};

/// Header limit for the inspecting commands: the user asked for this file,
/// so numpy's 10000-character guard (kept by `validate`) would only get in
/// the way of numpy's own v2 files; the limit still bounds the allocation.
pub const INSPECT_MAX_HEADER: usize = 1 << 24;

/// The kind of file, from its first bytes (as `np.load` decides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Npy,
    Npz,
}

/// Looks at the first bytes: a zip local header or empty-zip end record is an npz.
/// The path that names standard input: `.npy` data can be piped in (an
/// `.npz` cannot: a zip is read from its end, which a pipe does not have).
pub const STDIN: &str = "-";

/// Whether `path` names standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

pub fn sniff(path: &Path) -> anyhow::Result<Kind> {
    if is_stdin(path) {
        return Ok(Kind::Npy);
    }
    if let Some(url) = crate::remote::url_of(path) {
        return Ok(crate::remote::kind(url));
    }
    // Never blocks: a FIFO is refused with a clear message, not waited on.
    let mut file = npy_mmap::open_regular(path, false)?;
    let mut start = [0u8; 4];
    let mut filled = 0;
    while filled < start.len() {
        let n = file
            .read(&mut start[filled..])
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(match &start[..filled] {
        b"PK\x03\x04" | b"PK\x05\x06" => Kind::Npz,
        _ => Kind::Npy,
    })
}

/// The archive at `path` for reading, with what went wrong said in terms of
/// the path.
pub fn open_archive_for(path: &Path, parse: ParseOptions) -> anyhow::Result<Archive> {
    let options = ReadOptions {
        parse,
        to_native: false,
        ..Default::default()
    };
    open_archive(path, options)
        .and_then(|archive| Ok(archive?))
        .with_context(|| format!("cannot read the archive {}", path.display()))
}

/// The archive at `path`: a local file, or an object a URL names.
/// Errors: reaching the object (I/O, the store) is an `Err` of anyhow's;
/// an archive that does not read is an `Ok(Err(..))`, a verdict about it.
pub fn open_archive(
    path: &Path,
    options: ReadOptions,
) -> anyhow::Result<Result<Archive, npy_mmap::Error>> {
    let source: Box<dyn ArchiveSource> = match crate::remote::url_of(path) {
        Some(url) => Box::new(crate::remote::archive_reader(url)?),
        None => Box::new(BufReader::new(npy_mmap::open_regular(path, false)?)),
    };
    match npy_mmap::OpenOptions::from(options).read_npz(source) {
        Err(err) if matches!(err.kind(), npy_mmap::ErrorKind::Io { .. }) => Err(err.into()),
        archive => Ok(archive),
    }
}

/// Parse options of the inspecting commands (see [`INSPECT_MAX_HEADER`]).
pub fn inspect_options() -> ParseOptions {
    ParseOptions {
        max_header_size: INSPECT_MAX_HEADER,
        ..Default::default()
    }
}

/// Opens `path` (an .npy, or the `member` of an .npz) for reading values;
/// `advice` says how a mapped file will be read.
pub fn open_array(
    path: &Path,
    member: Option<&str>,
    advice: npy_mmap::Advice,
) -> anyhow::Result<OpenedArray> {
    match (sniff(path)?, member) {
        (Kind::Npy, None) if is_stdin(path) => OpenedArray::stdin(),
        (Kind::Npy, None) => match crate::remote::url_of(path) {
            Some(url) => crate::remote::open_array(url),
            None => OpenedArray::map(path, advice),
        },
        (Kind::Npy, Some(_)) => bail!(
            "{} is an .npy file, not an .npz archive: --member does not apply",
            path.display()
        ),
        (Kind::Npz, member) => open_member(path, member),
    }
}

/// The array of one member: `member` may be omitted when the archive holds
/// a single member. A stored member of a local archive is mapped (its data
/// is read in place, like an .npy file's); a compressed one, or one in a
/// store, is streamed.
pub fn open_member(path: &Path, member: Option<&str>) -> anyhow::Result<OpenedArray> {
    let mut archive = open_archive_for(path, inspect_options())?;
    let key = match member {
        Some(key) => key.to_string(),
        None if archive.len() == 1 => archive.keys()[0].clone(),
        None => bail!(
            "{} is an .npz archive of {} members; choose one with --member (members: {})",
            path.display(),
            archive.len(),
            archive.keys().join(", ")
        ),
    };
    if !archive.is_npy(&key)? {
        bail!("member '{key}' of {} is not an array", path.display());
    }
    let info = archive.info(&key)?;
    if info.compression == MemberCompression::Stored && crate::remote::url_of(path).is_none() {
        drop(archive);
        return OpenedArray::map_member(path, &info);
    }
    // Only the header is read now; the data is streamed when it is used.
    let header = archive.header(&key)?.header;
    Ok(OpenedArray::member(archive, key, header))
}

/// An `.npy` file whose header has been parsed; the data is not read.
pub struct NpyFile {
    pub header: Header,
    pub layout: Layout,
    pub file_size: u64,
}

impl NpyFile {
    /// Opens `path` and parses its header with `options`.
    pub fn open(path: &Path, options: &ParseOptions) -> anyhow::Result<NpyFile> {
        if let Some(url) = crate::remote::url_of(path) {
            return crate::remote::npy_file(url, options);
        }
        if is_stdin(path) {
            // The header, then the rest counted as it streams by.
            let mut stdin = std::io::stdin().lock();
            let npy_core::ParsedHeader { header, layout } = Header::read_from(&mut stdin, options)
                .context("standard input is not a valid .npy stream")?;
            let rest = std::io::copy(&mut stdin, &mut std::io::sink())
                .context("cannot read standard input")?;
            return Ok(NpyFile {
                header,
                file_size: layout.data_offset as u64 + rest,
                layout,
            });
        }
        let file = npy_mmap::open_regular(path, false)?;
        // The shared lock, held while header and size are read: a writer
        // following the locking rule (an append, a streamed file) is never
        // seen half-way through a change.
        lock_shared_saying_so(&file, path)?;
        let file_size = file
            .metadata()
            .with_context(|| format!("cannot read {}", path.display()))?
            .len();
        let npy_core::ParsedHeader { header, layout } =
            Header::read_from(&mut BufReader::new(file), options)
                .with_context(|| format!("{} is not a valid .npy file", path.display()))?;
        Ok(NpyFile {
            header,
            layout,
            file_size,
        })
    }

    /// Bytes the file has beyond the data (negative: bytes missing).
    pub fn surplus(&self) -> i128 {
        i128::from(self.file_size) - self.layout.data_offset as i128 - self.layout.data_len as i128
    }
}

/// Takes the shared lock, telling the user when it has to wait for it.
fn lock_shared_saying_so(file: &File, path: &Path) -> anyhow::Result<()> {
    match file.try_lock_shared() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => {
            eprintln!(
                "npy: waiting for {}: another process holds its exclusive lock \
                 (it is appending to or writing the file); Ctrl-C stops",
                path.display()
            );
            file.lock_shared()
                .with_context(|| format!("cannot lock {}", path.display()))
        }
        Err(std::fs::TryLockError::Error(err)) => {
            Err(err).with_context(|| format!("cannot lock {}", path.display()))
        }
    }
}

/// An array opened for reading its values: the header, and where the data
/// comes from. Nothing of the data is read at open; every access is bounded
/// in memory whatever the array's size.
pub struct OpenedArray {
    pub header: Header,
    data: Data,
}

enum Data {
    /// A read-only mapping of an .npy file. With `holes`, the file is sparse
    /// and is read through the file instead: touching a hole through the
    /// mapping on a full filesystem (tmpfs) kills the process with SIGBUS.
    Mapped {
        array: npy_mmap::MappedArray<npy_mmap::ReadOnly>,
        holes: bool,
    },
    /// An array read whole from standard input (a pipe can be read once).
    Owned(npy_core::NpyArray),
    /// A member of an .npz archive, streamed (inflated as it is read) from
    /// its start on every pass: it is never held whole in memory.
    Member { archive: Archive, key: String },
    /// An .npy object in a store, read with ranged GETs.
    Remote(npy_remote::blocking::Array),
    /// A stored (uncompressed) member of a local .npz, read in place from a
    /// read-only mapping of the archive: as fast as an .npy file.
    MappedMember(MappedMember),
}

/// Where a stored member lies in its mapped archive, and the CRC-32 its
/// content must have (checked by every pass that reads all of it).
struct MappedMember {
    npz: npy_mmap::npz::MappedNpz,
    /// The member's name, for messages.
    name: String,
    /// The member's whole content (the .npy file) and its array data, as
    /// byte ranges of the mapping.
    content: Range<usize>,
    data: Range<usize>,
    crc32: u32,
}

impl MappedMember {
    fn data(&self) -> &[u8] {
        &self.npz.bytes()[self.data.clone()]
    }

    /// Hashes the content around the data (`before` or after it) into `crc`.
    fn hash_around(&self, crc: &mut crc32fast::Hasher, before: bool) {
        let bytes = self.npz.bytes();
        crc.update(if before {
            &bytes[self.content.start..self.data.start]
        } else {
            &bytes[self.data.end..self.content.end]
        });
    }

    fn check(&self, crc: crc32fast::Hasher) -> anyhow::Result<()> {
        // numpy's (zipfile's) wording.
        anyhow::ensure!(
            crc.finalize() == self.crc32,
            "Bad CRC-32 for file '{}'",
            self.name
        );
        Ok(())
    }
}

/// What an archive is read from: a local file, or an object in a store
/// read by range (`npy_remote::blocking::RangeReader`).
pub trait ArchiveSource: Read + std::io::Seek + Send {}

impl<T: Read + std::io::Seek + Send> ArchiveSource for T {}

/// The archive type the CLI reads.
pub type Archive = npy_mmap::npz::NpzArchive<Box<dyn ArchiveSource>>;

/// Bytes read at a time from a file with holes or a member stream.
const READ_CHUNK: usize = 4 << 20;

impl OpenedArray {
    /// Maps the .npy file at `path` read-only (refusing files shorter than
    /// their header promises); `advice` tells the kernel how it will be read.
    pub fn map(path: &Path, advice: npy_mmap::Advice) -> anyhow::Result<OpenedArray> {
        let mut options = npy_mmap::OpenOptions::new();
        options.max_header_size(INSPECT_MAX_HEADER).advice(advice);
        let opened = options.locking(npy_mmap::Locking::NonBlocking).open(path);
        let array = match opened {
            // A writer maps these bytes (or is changing the file): say so,
            // then wait for it.
            Err(err) if matches!(err.kind(), npy_mmap::ErrorKind::Locked { .. }) => {
                eprintln!(
                    "npy: waiting for {}: another process is writing it (a read-write \
                     or live mapping, or an append); Ctrl-C stops",
                    path.display()
                );
                options.locking(npy_mmap::Locking::Blocking).open(path)?
            }
            other => other?,
        };
        let holes = array.has_holes()?;
        Ok(OpenedArray {
            header: array.header().clone(),
            data: Data::Mapped { array, holes },
        })
    }

    /// An array already read into memory.
    pub fn from_array(array: npy_core::NpyArray) -> OpenedArray {
        OpenedArray {
            header: array.header().clone(),
            data: Data::Owned(array),
        }
    }

    /// The `.npy` stream on standard input, read into memory (as
    /// `np.load(sys.stdin.buffer)` does: only a stream's own bytes are held).
    pub fn stdin() -> anyhow::Result<OpenedArray> {
        let options = npy_core::ReadOptions {
            parse: ParseOptions {
                max_header_size: INSPECT_MAX_HEADER,
                ..Default::default()
            },
            ..Default::default()
        };
        let array = npy_core::read_npy(std::io::stdin().lock(), &options)
            .context("standard input is not a valid .npy stream")?;
        Ok(OpenedArray::from_array(array))
    }

    /// Maps the archive at `path` read-only and finds the stored member
    /// `info` in it: nothing of the data is read here.
    pub fn map_member(path: &Path, info: &MemberInfo) -> anyhow::Result<OpenedArray> {
        let options = ReadOptions {
            parse: inspect_options(),
            to_native: false,
            ..Default::default()
        };
        let open = |locking| {
            npy_mmap::OpenOptions::from(options)
                .locking(locking)
                .map_npz(path)
        };
        let npz = match open(npy_mmap::Locking::NonBlocking) {
            Err(err) if matches!(err.kind(), npy_mmap::ErrorKind::Locked { .. }) => {
                eprintln!(
                    "npy: waiting for {}: another process is writing it; Ctrl-C stops",
                    path.display()
                );
                open(npy_mmap::Locking::Blocking)
            }
            other => other,
        }
        .with_context(|| format!("cannot map the archive {}", path.display()))?;
        let mut archive = npz.archive()?;
        let content = archive.stored_member(&info.name)?;
        let npy_mmap::npz::StoredArray { header, data, .. } = archive.array_bytes(&info.name)?;
        // Both borrow the mapping: their places in it, as ranges.
        let start = npz.bytes().as_ptr() as usize;
        let range = |part: &[u8]| {
            let offset = part.as_ptr() as usize - start;
            offset..offset + part.len()
        };
        let (content, data) = (range(content), range(data));
        drop(archive);
        Ok(OpenedArray {
            header,
            data: Data::MappedMember(MappedMember {
                npz,
                name: info.name.clone(),
                content,
                data,
                crc32: info.crc32,
            }),
        })
    }

    /// Checks the CRC-32 of a mapped member's content (other sources check
    /// theirs as they are read, or have none): for commands that use
    /// [`contiguous`](Self::contiguous) data whole.
    pub fn verify(&self) -> anyhow::Result<()> {
        if let Data::MappedMember(member) = &self.data {
            let mut crc = crc32fast::Hasher::new();
            member.hash_around(&mut crc, true);
            crc.update(member.data());
            member.hash_around(&mut crc, false);
            member.check(crc)?;
        }
        Ok(())
    }

    /// The `.npy` member `key` of `archive` (whose header has been read).
    pub fn member(archive: Archive, key: String, header: Header) -> OpenedArray {
        OpenedArray {
            header,
            data: Data::Member { archive, key },
        }
    }

    /// An `.npy` object in a store (opened with one ranged GET).
    pub fn remote(array: npy_remote::blocking::Array) -> OpenedArray {
        OpenedArray {
            header: array.remote().header().clone(),
            data: Data::Remote(array),
        }
    }

    /// The data bytes in the header's memory order, when they can be touched
    /// directly: a mapping of a file without holes, or data in memory.
    pub fn contiguous(&self) -> Option<&[u8]> {
        match &self.data {
            Data::Mapped {
                array,
                holes: false,
            } => Some(array.bytes()),
            Data::Owned(array) => Some(array.bytes()),
            Data::MappedMember(member) => Some(member.data()),
            _ => None,
        }
    }

    /// Calls `visit` with the data in memory order, `chunk_bytes` at a time
    /// (the last chunk may be shorter; a multiple of the item size keeps
    /// elements whole), until the data ends or `visit` breaks.
    pub fn for_each_chunk(
        &mut self,
        chunk_bytes: usize,
        mut visit: impl FnMut(&[u8]) -> anyhow::Result<ControlFlow<()>>,
    ) -> anyhow::Result<()> {
        let chunk_bytes = chunk_bytes.max(1);
        type Visit<'v> = dyn FnMut(&[u8]) -> anyhow::Result<ControlFlow<()>> + 'v;
        let in_memory = |data: &[u8], visit: &mut Visit<'_>| {
            for chunk in data.chunks(chunk_bytes) {
                if visit(chunk)?.is_break() {
                    break;
                }
            }
            anyhow::Ok(())
        };
        match &mut self.data {
            Data::Mapped {
                array,
                holes: false,
            } => in_memory(array.bytes(), &mut visit)?,
            Data::Owned(array) => in_memory(array.bytes(), &mut visit)?,
            Data::MappedMember(member) => {
                let mut crc = crc32fast::Hasher::new();
                member.hash_around(&mut crc, true);
                for chunk in member.data().chunks(chunk_bytes) {
                    crc.update(chunk);
                    if visit(chunk)?.is_break() {
                        return Ok(());
                    }
                }
                member.hash_around(&mut crc, false);
                member.check(crc)?;
            }
            Data::Mapped { array, holes: true } => {
                let len = array.bytes().len();
                let mut buffer = vec![0u8; chunk_bytes.min(len)];
                let mut done = 0;
                while done < len {
                    let chunk = &mut buffer[..chunk_bytes.min(len - done)];
                    array.read_bytes_at(done, chunk)?;
                    done += chunk.len();
                    if visit(chunk)?.is_break() {
                        break;
                    }
                }
            }
            Data::Remote(array) => {
                // Concurrent ranged GETs in order, cut into the chunks asked for.
                let mut chunk =
                    Vec::with_capacity(chunk_bytes.min(array.remote().layout().data_len));
                for part in array.data_parts(0..array.remote().layout().data_len)? {
                    let mut part = &part?[..];
                    while !part.is_empty() {
                        let take = (chunk_bytes - chunk.len()).min(part.len());
                        chunk.extend_from_slice(&part[..take]);
                        part = &part[take..];
                        if chunk.len() == chunk_bytes {
                            if visit(&chunk)?.is_break() {
                                return Ok(());
                            }
                            chunk.clear();
                        }
                    }
                }
                if !chunk.is_empty() {
                    // The last chunk: whether the visitor would stop no longer matters.
                    let _ = visit(&chunk)?;
                }
            }
            Data::Member { archive, key } => {
                let mut reader = archive.reader(key)?;
                let npy_core::ParsedHeader { layout, .. } = Header::read_from(
                    &mut reader,
                    &ParseOptions {
                        max_header_size: INSPECT_MAX_HEADER,
                        ..Default::default()
                    },
                )?;
                let len = layout.data_len;
                let mut buffer = vec![0u8; chunk_bytes.min(len)];
                let mut done = 0;
                while done < len {
                    let chunk = &mut buffer[..chunk_bytes.min(len - done)];
                    reader
                        .read_exact(chunk)
                        .with_context(|| format!("member '{key}' ends before its data does"))?;
                    done += chunk.len();
                    if visit(chunk)?.is_break() {
                        return Ok(());
                    }
                }
                // The CRC-32 is checked when the stream is read to its end.
                std::io::copy(&mut reader, &mut std::io::sink())
                    .with_context(|| format!("member '{key}'"))?;
            }
        }
        Ok(())
    }

    /// The whole data in memory, in the header's memory order, for work
    /// that needs it whole when it cannot be used in place. Too little
    /// memory is an error, not an abort.
    pub fn read_all(&mut self) -> anyhow::Result<Vec<u8>> {
        let len = self.header.data_len()?;
        let mut data = Vec::new();
        data.try_reserve_exact(len)
            .with_context(|| format!("cannot hold the {len} bytes of data in memory"))?;
        self.for_each_chunk(READ_CHUNK, |chunk| {
            data.extend_from_slice(chunk);
            Ok(ControlFlow::Continue(()))
        })?;
        anyhow::ensure!(
            data.len() == len,
            "the data ended after {} of its {len} bytes",
            data.len()
        );
        Ok(data)
    }

    /// The `width` bytes at each byte offset of the data in `offsets` (any
    /// order), one after another in the order of `offsets`. Reads only what
    /// is needed from a mapping; from a file with holes or a member stream,
    /// one forward pass that stops after the last offset.
    pub fn gather(&mut self, offsets: &[usize], width: usize) -> anyhow::Result<Vec<u8>> {
        let mut out = vec![0u8; offsets.len() * width];
        if let Some(data) = self.contiguous() {
            for (slot, &offset) in out.chunks_exact_mut(width.max(1)).zip(offsets) {
                slot.copy_from_slice(&data[offset..offset + width]);
            }
            return Ok(out);
        }
        if let Data::Remote(array) = &self.data {
            // Nearby elements share a request.
            return Ok(array.read_at(offsets, width)?);
        }
        let mut order: Vec<usize> = (0..offsets.len()).collect();
        order.sort_unstable_by_key(|&i| offsets[i]);
        let mut next = 0;
        let mut chunk_start = 0;
        // Chunks hold whole elements: every offset is a multiple of the width.
        let chunk_bytes = (READ_CHUNK / width.max(1)).max(1) * width.max(1);
        self.for_each_chunk(chunk_bytes, |chunk| {
            let chunk_end = chunk_start + chunk.len();
            while let Some(&i) = order.get(next) {
                let offset = offsets[i];
                if offset + width > chunk_end {
                    break;
                }
                let from = offset - chunk_start;
                out[i * width..(i + 1) * width].copy_from_slice(&chunk[from..from + width]);
                next += 1;
            }
            chunk_start = chunk_end;
            Ok(if next == order.len() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            })
        })?;
        anyhow::ensure!(next == order.len(), "the data ended before element {next}");
        Ok(out)
    }
}

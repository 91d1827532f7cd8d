//! Opening what the user names: an `.npy` file or an `.npz` archive.

use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::{ControlFlow, Range};
use std::path::Path;

use anyhow::{Context, bail};

pub use crate::npy_file::{INSPECT_MAX_HEADER, Kind, NpyFile};
use npy_core::{Header, ParseOptions, ReadOptions};
use npy_mmap::npz::{MemberCompression, MemberInfo};

/// The path that names standard input. It is copied to an unnamed
/// temporary file, up to a cap (`crate::stdin`): an `.npz` archive because
/// it is read from its end, which a pipe does not have, an `.npy` array's
/// data so that it is never held whole in memory.
pub const STDIN: &str = "-";

/// Whether `path` names standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// Looks at the first bytes, by the one rule ([`npy_core::npz::is_zip_start`]).
pub fn sniff(path: &Path) -> anyhow::Result<Kind> {
    if is_stdin(path) {
        // Peeked, not consumed: the bytes stay in stdin's buffer for
        // whoever reads it next.
        use std::io::BufRead;
        let mut stdin = std::io::stdin().lock();
        let start = stdin.fill_buf().context("cannot read standard input")?;
        return Ok(if npy_core::npz::is_zip_start(start) {
            Kind::Npz
        } else {
            Kind::Npy
        });
    }
    if let Some(url) = crate::remote::url_of(path) {
        return Ok(crate::remote::kind(url));
    }
    // Never blocks: a FIFO is refused with a clear message, not waited on.
    let mut file = npy_mmap::open_regular(path, false).map_err(|err| in_cli_words(err, path))?;
    let mut start = [0u8; 4];
    let filled = npy_core::io::read_full(&mut file, &mut start)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(if npy_core::npz::is_zip_start(&start[..filled]) {
        Kind::Npz
    } else {
        Kind::Npy
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
    let cannot = || format!("cannot read the archive {}", path.display());
    match open_archive(path, options).with_context(cannot)? {
        Err(err) if matches!(err.kind(), npy_mmap::ErrorKind::IsNpy) => bail!(
            "{} is an .npy file, not an .npz archive (npy info, show, stats read it)",
            path.display()
        ),
        archive => archive.with_context(cannot),
    }
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
        None if is_stdin(path) => Box::new(BufReader::new(crate::stdin::spool_archive()?)),
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
) -> anyhow::Result<Box<dyn ArraySource>> {
    match (sniff(path)?, member) {
        (Kind::Npy, None) if is_stdin(path) => {
            let (header, file) = crate::stdin::spool_npy(&inspect_options())?;
            Ok(Box::new(SpooledNpy { header, file }))
        }
        (Kind::Npy, None) => match crate::remote::url_of(path) {
            Some(url) => Ok(Box::new(crate::remote::open_array(url)?)),
            None => map_npy(path, advice),
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
pub fn open_member(path: &Path, member: Option<&str>) -> anyhow::Result<Box<dyn ArraySource>> {
    let mut archive = open_archive_for(path, inspect_options())?;
    let key = match member {
        Some(key) => key.to_string(),
        None if archive.len() == 1 => archive.keys()[0].clone(),
        None => bail!(
            "{} is an .npz archive of {} members; choose one with --member ({})",
            path.display(),
            archive.len(),
            members_list(&archive)
        ),
    };
    check_member(&archive, path, &key)?;
    if !archive.is_npy(&key)? {
        bail!("member '{key}' of {} is not an array", path.display());
    }
    let info = archive.info(&key)?;
    let local = crate::remote::url_of(path).is_none() && !is_stdin(path);
    if info.compression == MemberCompression::Stored && local {
        drop(archive);
        return map_member(path, &info);
    }
    if local {
        // Checkpoints `npy index` saved beside the archive, if any (a stale
        // or foreign file is refused by its checks and left alone).
        let sidecar = npy_mmap::npz::index_path(path);
        if sidecar.is_file() {
            let _ = archive.load_index(&sidecar);
        }
    }
    Ok(Box::new(StreamedMember::open(archive, key)?))
}

/// The library's error, with the advice it gives a Rust programmer (which
/// function to call instead) replaced by what to type.
pub fn in_cli_words(err: npy_mmap::Error, path: &Path) -> anyhow::Error {
    match err.kind() {
        npy_mmap::ErrorKind::ObjectsNotMappable => anyhow::anyhow!(
            "{}: Array can't be memory-mapped: Python objects in dtype. It holds Python \
             objects (dtype=object), not numbers: npy show, validate and convert read them \
             with --allow-pickle",
            path.display()
        ),
        npy_mmap::ErrorKind::NotARegularFile { what } => anyhow::anyhow!(
            "{} is {what}, not a file: give .npy data on a pipe as standard input \
             (`-`, e.g. `npy show - < data.npy`), or save it to a file first",
            path.display()
        ),
        _ => err.into(),
    }
}

/// "members: a, b" of `archive` (numpy's `files`).
pub fn members_list(archive: &Archive) -> String {
    match archive.keys() {
        [] => "it has no members".to_string(),
        keys => format!("members: {}", keys.join(", ")),
    }
}

/// Refuses a `key` that is not in `archive` (at `path`) with numpy's
/// KeyError wording, the archive's path and what it does hold.
pub fn check_member(archive: &Archive, path: &Path, key: &str) -> anyhow::Result<()> {
    if !archive.contains(key) {
        bail!(
            "{key} is not a file in the archive {} ({})",
            path.display(),
            members_list(archive)
        );
    }
    Ok(())
}

/// Maps the .npy file at `path` read-only (refusing files shorter than
/// their header promises); `advice` tells the kernel how it will be read.
pub fn map_npy(path: &Path, advice: npy_mmap::Advice) -> anyhow::Result<Box<dyn ArraySource>> {
    let mut options = npy_mmap::OpenOptions::new();
    options.max_header_size(INSPECT_MAX_HEADER).advice(advice);
    let array = wait_saying_so(path, |locking| options.clone().locking(locking).open(path))
        .map_err(|err| in_cli_words(err, path))?;
    let holes = array.has_holes()?;
    Ok(Box::new(MappedNpy { array, holes }))
}

/// Maps the archive at `path` read-only and finds the stored member `info`
/// in it: nothing of the data is read here.
fn map_member(path: &Path, info: &MemberInfo) -> anyhow::Result<Box<dyn ArraySource>> {
    let options = ReadOptions {
        parse: inspect_options(),
        to_native: false,
        ..Default::default()
    };
    let npz = wait_saying_so(path, |locking| {
        npy_mmap::OpenOptions::from(options)
            .locking(locking)
            .map_npz(path)
    })
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
    Ok(Box::new(MappedMember {
        npz,
        header,
        name: info.name.clone(),
        content,
        data,
        crc32: info.crc32,
    }))
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
        Self::read(file, path, options)
    }
}

/// Opens with `open`, first without waiting; when another process holds a
/// conflicting lock, says so on stderr, then waits as long as it takes (a
/// command line can be stopped with Ctrl-C; a library call cannot).
pub fn wait_saying_so<T>(
    path: &Path,
    open: impl Fn(npy_mmap::Locking) -> npy_mmap::Result<T>,
) -> npy_mmap::Result<T> {
    match open(npy_mmap::Locking::NonBlocking) {
        Err(err) if matches!(err.kind(), npy_mmap::ErrorKind::Locked { .. }) => {
            eprintln!(
                "npy: waiting for {}: another process is writing it (a read-write \
                 or live mapping, or an append); Ctrl-C stops",
                path.display()
            );
            open(npy_mmap::Locking::Blocking)
        }
        other => other,
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

/// What an archive is read from: a local file, or an object in a store
/// read by range (`npy_remote::blocking::RangeReader`).
pub trait ArchiveSource: Read + std::io::Seek + Send {}

impl<T: Read + std::io::Seek + Send> ArchiveSource for T {}

/// The archive type the CLI reads.
pub type Archive = npy_mmap::npz::NpzArchive<Box<dyn ArchiveSource>>;

/// An array opened for reading its values: its header, and its data read
/// the way its source allows. Nothing of the data is read at open; every
/// access is bounded in memory whatever the array's size.
///
/// A trait with one implementation per kind of source (a mapped `.npy`, an
/// array in memory, a mapped or a streamed npz member, an object in a
/// store): each source's own rules (holes, CRC-32 checks, concurrent ranged
/// GETs) live in its impl, and adding a source touches one place rather
/// than a match in every operation. `Send`: `render` reads a stream on a
/// thread of its own.
pub trait ArraySource: Send {
    /// The array's header.
    fn header(&self) -> &Header;

    /// The data bytes in the header's memory order, when they can be touched
    /// directly: a mapping of a file without holes, or data in memory.
    fn contiguous(&self) -> Option<&[u8]> {
        None
    }

    /// Checks the data against the checksum it is stored with, for commands
    /// that use [`contiguous`](Self::contiguous) data whole. Only a mapped
    /// npz member needs it: the others check theirs as they are read, or
    /// have none.
    fn verify(&self) -> anyhow::Result<()> {
        Ok(())
    }

    /// Calls `visit` with the data in memory order, `chunk_bytes` at a time
    /// (the last chunk may be shorter; a multiple of the item size keeps
    /// elements whole), until the data ends or `visit` breaks.
    fn for_each_chunk(&mut self, chunk_bytes: usize, visit: &mut Visit<'_>) -> anyhow::Result<()>;

    /// Says that the byte `ranges` of the data will be read next (a mapped
    /// file asks the kernel for them all at once). Only a hint: the default
    /// does nothing.
    fn prefetch(&self, _ranges: &[std::ops::Range<usize>]) {}

    /// The `width` bytes at each byte offset of the data in `offsets` (any
    /// order), one after another in the order of `offsets`. Reads only what
    /// is needed from memory or a mapping; otherwise one forward pass that
    /// stops after the last offset.
    fn gather(&mut self, offsets: &[usize], width: usize) -> anyhow::Result<Vec<u8>> {
        gather_forward(self, offsets, width)
    }
}

/// [`ArraySource::gather`] for sources with nothing better: a copy from
/// memory or a mapping, or one forward pass that stops after the last offset.
fn gather_forward<S: ArraySource + ?Sized>(
    source: &mut S,
    offsets: &[usize],
    width: usize,
) -> anyhow::Result<Vec<u8>> {
    let mut out = vec![0u8; offsets.len() * width];
    if let Some(data) = source.contiguous() {
        for (slot, &offset) in out.chunks_exact_mut(width.max(1)).zip(offsets) {
            slot.copy_from_slice(&data[offset..offset + width]);
        }
        return Ok(out);
    }
    let mut order: Vec<usize> = (0..offsets.len()).collect();
    order.sort_unstable_by_key(|&i| offsets[i]);
    let mut next = 0;
    let mut chunk_start = 0;
    // Chunks hold whole elements: every offset is a multiple of the width.
    let chunk_bytes = (READ_CHUNK / width.max(1)).max(1) * width.max(1);
    source.for_each_chunk(chunk_bytes, &mut |chunk| {
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

impl dyn ArraySource + '_ {
    /// The whole data in memory, in the header's memory order, for work
    /// that needs it whole when it cannot be used in place. Too little
    /// memory is an error, not an abort.
    pub fn read_all(&mut self) -> anyhow::Result<Vec<u8>> {
        let len = self.header().data_len()?;
        let mut data = Vec::new();
        data.try_reserve_exact(len)
            .with_context(|| format!("cannot hold the {len} bytes of data in memory"))?;
        self.for_each_chunk(READ_CHUNK, &mut |chunk| {
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
}

/// What [`ArraySource::for_each_chunk`] calls with each chunk.
pub type Visit<'v> = dyn FnMut(&[u8]) -> anyhow::Result<ControlFlow<()>> + 'v;

/// Bytes read at a time from a file with holes or a member stream.
const READ_CHUNK: usize = 4 << 20;

/// Visits the data, given in `parts` of any size, cut into chunks of
/// `chunk_bytes`: a chunk that lies within one part is passed in place,
/// one that spans parts is copied together. Says whether `visit` stopped.
fn rechunk<P: AsRef<[u8]>>(
    parts: impl IntoIterator<Item = anyhow::Result<P>>,
    chunk_bytes: usize,
    visit: &mut Visit<'_>,
) -> anyhow::Result<ControlFlow<()>> {
    let chunk_bytes = chunk_bytes.max(1);
    let mut pending = Vec::new();
    for part in parts {
        let part = part?;
        let mut rest = part.as_ref();
        while !rest.is_empty() {
            if pending.is_empty() && rest.len() >= chunk_bytes {
                let (chunk, after) = rest.split_at(chunk_bytes);
                rest = after;
                if visit(chunk)?.is_break() {
                    return Ok(ControlFlow::Break(()));
                }
                continue;
            }
            let take = (chunk_bytes - pending.len()).min(rest.len());
            pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if pending.len() == chunk_bytes {
                if visit(&pending)?.is_break() {
                    return Ok(ControlFlow::Break(()));
                }
                pending.clear();
            }
        }
    }
    if pending.is_empty() {
        Ok(ControlFlow::Continue(()))
    } else {
        visit(&pending)
    }
}

/// Visits `len` bytes that `read(offset, buffer)` fills, `chunk_bytes` at a
/// time through one buffer. Says whether `visit` stopped.
fn read_chunks(
    len: usize,
    chunk_bytes: usize,
    mut read: impl FnMut(usize, &mut [u8]) -> anyhow::Result<()>,
    visit: &mut Visit<'_>,
) -> anyhow::Result<ControlFlow<()>> {
    let chunk_bytes = chunk_bytes.max(1);
    let mut buffer = vec![0u8; chunk_bytes.min(len)];
    let mut done = 0;
    while done < len {
        let chunk = &mut buffer[..chunk_bytes.min(len - done)];
        read(done, chunk)?;
        done += chunk.len();
        if visit(chunk)?.is_break() {
            return Ok(ControlFlow::Break(()));
        }
    }
    Ok(ControlFlow::Continue(()))
}

/// A read-only mapping of an `.npy` file. With `holes`, the file is sparse
/// and is read through the file instead: touching a hole through the
/// mapping on a full filesystem (tmpfs) kills the process with SIGBUS.
struct MappedNpy {
    array: npy_mmap::MappedArray<npy_mmap::ReadOnly>,
    holes: bool,
}

impl ArraySource for MappedNpy {
    fn header(&self) -> &Header {
        self.array.header()
    }

    fn contiguous(&self) -> Option<&[u8]> {
        (!self.holes).then(|| self.array.bytes())
    }

    fn for_each_chunk(&mut self, chunk_bytes: usize, visit: &mut Visit<'_>) -> anyhow::Result<()> {
        if let Some(bytes) = self.contiguous() {
            let _ = rechunk([Ok(bytes)], chunk_bytes, visit)?;
        } else {
            let read = |offset, chunk: &mut [u8]| Ok(self.array.read_bytes_at(offset, chunk)?);
            let _ = read_chunks(self.array.bytes().len(), chunk_bytes, read, visit)?;
        }
        Ok(())
    }

    fn prefetch(&self, ranges: &[std::ops::Range<usize>]) {
        // A hint: a refused range only means the reads fault one by one.
        if !self.holes {
            let _ = self.array.prefetch_bytes(ranges);
        }
    }

    /// Through the mapping's planned gather: on a file that is not in
    /// memory, the pages of every offset are asked for at once.
    fn gather(&mut self, offsets: &[usize], width: usize) -> anyhow::Result<Vec<u8>> {
        if self.holes {
            return gather_forward(self, offsets, width);
        }
        let mut out = vec![0u8; offsets.len() * width];
        self.array.gather_bytes(offsets, width, &mut out)?;
        Ok(out)
    }
}

/// An array read whole into memory (standard input: a pipe can be read once).
impl ArraySource for npy_core::NpyArray {
    fn header(&self) -> &Header {
        npy_core::NpyArray::header(self)
    }

    fn contiguous(&self) -> Option<&[u8]> {
        Some(self.bytes())
    }

    fn for_each_chunk(&mut self, chunk_bytes: usize, visit: &mut Visit<'_>) -> anyhow::Result<()> {
        let _ = rechunk([Ok(self.bytes())], chunk_bytes, visit)?;
        Ok(())
    }
}

/// The data of the `.npy` stream on standard input, copied to a temporary
/// file ([`crate::stdin::spool_npy`]) and read from it a chunk at a time.
struct SpooledNpy {
    header: Header,
    file: File,
}

impl ArraySource for SpooledNpy {
    fn header(&self) -> &Header {
        &self.header
    }

    fn for_each_chunk(&mut self, chunk_bytes: usize, visit: &mut Visit<'_>) -> anyhow::Result<()> {
        use std::io::Seek;
        let len = self.header.data_len()?;
        // Every pass reads from the start, in order.
        self.file
            .rewind()
            .context("cannot read back standard input's copy")?;
        let read = |_, chunk: &mut [u8]| {
            self.file
                .read_exact(chunk)
                .context("cannot read back standard input's copy")
        };
        let _ = read_chunks(len, chunk_bytes, read, visit)?;
        Ok(())
    }
}

/// A stored (uncompressed) member of a local `.npz`, read in place from a
/// read-only mapping of the archive: as fast as an `.npy` file. Its CRC-32
/// is checked by every pass that reads all of it.
struct MappedMember {
    npz: npy_mmap::npz::MappedNpz,
    header: Header,
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

    /// Checks the CRC-32 of the content, given `crc` that has seen the data:
    /// the rest of the content is hashed around it.
    fn check(&self, data_crc: crc32fast::Hasher) -> anyhow::Result<()> {
        let bytes = self.npz.bytes();
        let mut crc = crc32fast::Hasher::new();
        crc.update(&bytes[self.content.start..self.data.start]);
        crc.combine(&data_crc);
        crc.update(&bytes[self.data.end..self.content.end]);
        // numpy's (zipfile's) wording.
        anyhow::ensure!(
            crc.finalize() == self.crc32,
            "Bad CRC-32 for file '{}'",
            self.name
        );
        Ok(())
    }
}

impl ArraySource for MappedMember {
    fn header(&self) -> &Header {
        &self.header
    }

    fn contiguous(&self) -> Option<&[u8]> {
        Some(self.data())
    }

    fn verify(&self) -> anyhow::Result<()> {
        let mut crc = crc32fast::Hasher::new();
        crc.update(self.data());
        self.check(crc)
    }

    fn for_each_chunk(&mut self, chunk_bytes: usize, visit: &mut Visit<'_>) -> anyhow::Result<()> {
        let mut crc = crc32fast::Hasher::new();
        let hashing = &mut |chunk: &[u8]| {
            crc.update(chunk);
            visit(chunk)
        };
        if rechunk([Ok(self.data())], chunk_bytes, hashing)?.is_continue() {
            self.check(crc)?;
        }
        Ok(())
    }
}

/// A member of an `.npz` archive, streamed (inflated as it is read) from
/// its start on every pass: it is never held whole in memory. The elements
/// a command shows come from the blocks holding them when the member has a
/// block index at hand (our writer's, or checkpoints `npy index` saved).
struct StreamedMember {
    archive: Archive,
    key: String,
    header: Header,
    /// Where the array data starts in the member's content.
    data_offset: u64,
}

impl StreamedMember {
    /// Reads only the member's header now; the data when it is used.
    fn open(mut archive: Archive, key: String) -> anyhow::Result<Self> {
        let parsed = archive.header(&key)?;
        Ok(StreamedMember {
            archive,
            key,
            header: parsed.header,
            data_offset: parsed.layout.data_offset as u64,
        })
    }
}

impl ArraySource for StreamedMember {
    fn header(&self) -> &Header {
        &self.header
    }

    fn for_each_chunk(&mut self, chunk_bytes: usize, visit: &mut Visit<'_>) -> anyhow::Result<()> {
        let key = &self.key;
        let mut reader = self.archive.reader(key)?;
        let npy_core::ParsedHeader { layout, .. } =
            Header::read_from(&mut reader, &inspect_options())?;
        let read = |_, chunk: &mut [u8]| {
            reader
                .read_exact(chunk)
                .with_context(|| format!("member '{key}' ends before its data does"))
        };
        if read_chunks(layout.data_len, chunk_bytes, read, visit)?.is_continue() {
            // The CRC-32 is checked when the stream is read to its end.
            std::io::copy(&mut reader, &mut std::io::sink())
                .with_context(|| format!("member '{key}'"))?;
        }
        Ok(())
    }

    fn gather(&mut self, offsets: &[usize], width: usize) -> anyhow::Result<Vec<u8>> {
        let (key, start) = (&self.key, self.data_offset);
        match crate::member::gather_blocks(&mut self.archive, key, start, offsets, width)? {
            Some(bytes) => Ok(bytes),
            None => gather_forward(self, offsets, width),
        }
    }
}

/// An `.npy` object in a store, read with ranged GETs.
impl ArraySource for npy_remote::blocking::Array {
    fn header(&self) -> &Header {
        self.remote().header()
    }

    fn for_each_chunk(&mut self, chunk_bytes: usize, visit: &mut Visit<'_>) -> anyhow::Result<()> {
        // Concurrent ranged GETs in order, cut into the chunks asked for.
        let parts = self.data_parts(0..self.remote().layout().data_len)?;
        let _ = rechunk(
            parts.map(|part| part.map_err(anyhow::Error::from)),
            chunk_bytes,
            visit,
        )?;
        Ok(())
    }

    fn gather(&mut self, offsets: &[usize], width: usize) -> anyhow::Result<Vec<u8>> {
        // Nearby elements share a request.
        Ok(self.read_at(offsets, width)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunks `cut` gives of 0..100 for `chunk_bytes`, checked to be
    /// full-sized but for the last.
    fn chunks_of(
        chunk_bytes: usize,
        cut: impl FnOnce(&[u8], &mut Visit<'_>) -> anyhow::Result<ControlFlow<()>>,
    ) -> Vec<Vec<u8>> {
        let data: Vec<u8> = (0..100).collect();
        let mut chunks = Vec::new();
        let flow = cut(&data, &mut |chunk| {
            chunks.push(chunk.to_vec());
            Ok(ControlFlow::Continue(()))
        })
        .unwrap();
        assert!(flow.is_continue());
        assert_eq!(chunks.concat(), data, "chunks of {chunk_bytes}");
        let (last, full) = chunks.split_last().unwrap();
        assert!(full.iter().all(|chunk| chunk.len() == chunk_bytes));
        assert!(!last.is_empty() && last.len() <= chunk_bytes);
        chunks
    }

    #[test]
    fn rechunk_cuts_parts_of_any_size_into_whole_chunks() {
        for chunk_bytes in [1, 8, 13, 64, 100, 200] {
            // Parts smaller, larger and straddling the chunks, an empty one among them.
            let chunks = chunks_of(chunk_bytes, |data, visit| {
                let parts = [
                    &data[..0],
                    &data[..7],
                    &data[7..37],
                    &data[37..38],
                    &data[38..],
                ];
                rechunk(parts.map(anyhow::Ok), chunk_bytes, visit)
            });
            assert_eq!(chunks.len(), 100usize.div_ceil(chunk_bytes));
            chunks_of(chunk_bytes, |data, visit| {
                read_chunks(
                    data.len(),
                    chunk_bytes,
                    |offset, chunk| {
                        chunk.copy_from_slice(&data[offset..offset + chunk.len()]);
                        Ok(())
                    },
                    visit,
                )
            });
        }
    }

    #[test]
    fn rechunk_stops_when_the_visitor_breaks_and_passes_errors_on() {
        let data = [7u8; 50];
        let mut seen = 0;
        let flow = rechunk([anyhow::Ok(&data[..20]), Ok(&data[20..])], 8, &mut |_| {
            seen += 1;
            Ok(if seen == 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            })
        })
        .unwrap();
        assert!(flow.is_break());
        assert_eq!(seen, 3);
        let parts = [Ok(&data[..]), Err(anyhow::anyhow!("the store failed"))];
        let err = rechunk(parts, 8, &mut |_| Ok(ControlFlow::Continue(()))).unwrap_err();
        assert_eq!(err.to_string(), "the store failed");
    }
}

//! The zip container as the npz writer lays it out.
//!
//! Reading uses the `zip` crate; writing is done here because the writer
//! needs what `zip::ZipWriter` does not offer: appending deflate streams
//! compressed in parallel, and a fixed, NumPy-like layout (zip64 local
//! headers always, array data 64-byte aligned).
//!
//! Layout of a member: local header (sizes 0xFFFFFFFF), name, zip64 extra
//! field (0x0001: uncompressed and compressed size), for stored members an
//! alignment extra field (0xa11e, APPNOTE 4.6.11) padding the data to 64
//! bytes, then the data. CRC and sizes are patched in after the data. The
//! central directory carries a zip64 extra field only for values that do not
//! fit 32 bits, then, for a deflated member of more than one block, its block
//! index (extra field 0x424e, `blocks.rs`; docs/FORMAT.md); a zip64 end
//! record follows when the directory needs one.

use std::io::{self, Seek, SeekFrom, Write};

const LOCAL_HEADER: u32 = 0x0403_4b50;
const CENTRAL_HEADER: u32 = 0x0201_4b50;
const END_OF_CENTRAL_DIRECTORY: u32 = 0x0605_4b50;
const ZIP64_END_OF_CENTRAL_DIRECTORY: u32 = 0x0606_4b50;
const ZIP64_END_LOCATOR: u32 = 0x0706_4b50;
const ZIP64_EXTRA: u16 = 0x0001;
const ALIGNMENT_EXTRA: u16 = 0xa11e;
/// Version 4.5: zip64.
const VERSION_NEEDED: u16 = 45;
/// Made by Unix (3), version 4.5, so the external attributes carry a mode.
const VERSION_MADE_BY: u16 = (3 << 8) | 45;
/// General purpose flag bit 11: the name is UTF-8.
const FLAG_UTF8: u16 = 1 << 11;
/// 1980-01-01 00:00:00, the earliest DOS date, as NumPy's savez writes.
const DOS_DATE: u16 = (1 << 5) | 1;
const DOS_TIME: u16 = 0;
/// A regular file, mode 0o600, as NumPy's savez writes.
const EXTERNAL_ATTRIBUTES: u32 = 0o100_600 << 16;
/// Fixed part of a local header, before the name.
const LOCAL_FIXED_LEN: u64 = 30;
/// Where the CRC-32 sits in a local header.
const LOCAL_CRC_OFFSET: u64 = 14;

/// Zip compression method numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Stored = 0,
    Deflated = 8,
}

/// One finished member, remembered for the central directory.
#[derive(Debug)]
struct Entry {
    name: Vec<u8>,
    method: Method,
    header_offset: u64,
    crc32: u32,
    compressed_size: u64,
    size: u64,
    /// Extra fields for the central directory only (a block index).
    central_extra: Vec<u8>,
}

/// A member whose header is written and whose data is being written.
#[derive(Debug)]
pub(crate) struct OpenMember {
    name: Vec<u8>,
    method: Method,
    header_offset: u64,
    /// Offset of the zip64 extra field's data (uncompressed size first).
    zip64_sizes_offset: u64,
    /// Offset of the first data byte.
    pub(crate) data_offset: u64,
}

/// Writes members and the central directory to a seekable sink.
#[derive(Debug)]
pub(crate) struct Container<W> {
    sink: W,
    /// Current write position, tracked so no seek is needed to learn it.
    position: u64,
    entries: Vec<Entry>,
}

fn utf8_flag(name: &[u8]) -> u16 {
    if name.is_ascii() { 0 } else { FLAG_UTF8 }
}

fn too_big(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what} does not fit a zip archive"),
    )
}

impl<W: Write + Seek> Container<W> {
    /// Starts an archive at the sink's current position.
    pub(crate) fn new(mut sink: W) -> io::Result<Self> {
        let position = sink.stream_position()?;
        Ok(Container {
            sink,
            position,
            entries: Vec::new(),
        })
    }

    /// Writes to the sink, keeping track of the position.
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.sink.write_all(bytes)?;
        self.position += bytes.len() as u64;
        Ok(())
    }

    /// Writes a local header; the data follows. Stored members get their
    /// data aligned to `align` bytes.
    pub(crate) fn start(
        &mut self,
        name: &str,
        method: Method,
        align: u64,
    ) -> io::Result<OpenMember> {
        let name = name.as_bytes().to_vec();
        let name_len = u16::try_from(name.len()).map_err(|_| too_big("a member name"))?;
        let header_offset = self.position;
        let zip64_len: u64 = 4 + 16;
        let unpadded_end = header_offset + LOCAL_FIXED_LEN + name.len() as u64 + zip64_len;
        let padding = match method {
            Method::Stored if align > 1 => {
                // The alignment field needs at least its 4-byte header and 2-byte value.
                let mut pad = (align - unpadded_end % align) % align;
                while pad != 0 && pad < 6 {
                    pad += align;
                }
                pad
            }
            _ => 0,
        };
        let extra_len =
            u16::try_from(zip64_len + padding).map_err(|_| too_big("an extra field"))?;

        let mut header = Vec::with_capacity((unpadded_end - header_offset + padding) as usize);
        header.extend_from_slice(&LOCAL_HEADER.to_le_bytes());
        header.extend_from_slice(&VERSION_NEEDED.to_le_bytes());
        header.extend_from_slice(&utf8_flag(&name).to_le_bytes());
        header.extend_from_slice(&(method as u16).to_le_bytes());
        header.extend_from_slice(&DOS_TIME.to_le_bytes());
        header.extend_from_slice(&DOS_DATE.to_le_bytes());
        header.extend_from_slice(&0u32.to_le_bytes()); // CRC-32, patched later
        header.extend_from_slice(&u32::MAX.to_le_bytes()); // sizes live in the zip64 field
        header.extend_from_slice(&u32::MAX.to_le_bytes());
        header.extend_from_slice(&name_len.to_le_bytes());
        header.extend_from_slice(&extra_len.to_le_bytes());
        header.extend_from_slice(&name);
        header.extend_from_slice(&ZIP64_EXTRA.to_le_bytes());
        header.extend_from_slice(&16u16.to_le_bytes());
        header.extend_from_slice(&[0; 16]); // sizes, patched later
        if padding > 0 {
            header.extend_from_slice(&ALIGNMENT_EXTRA.to_le_bytes());
            header.extend_from_slice(&((padding - 4) as u16).to_le_bytes());
            header.extend_from_slice(&(align as u16).to_le_bytes());
            header.resize(header.len() + padding as usize - 6, 0);
        }
        self.write_all(&header)?;
        Ok(OpenMember {
            name,
            method,
            header_offset,
            zip64_sizes_offset: header_offset + LOCAL_FIXED_LEN + u64::from(name_len) + 4,
            data_offset: self.position,
        })
    }

    /// Ends a member whose data has been written: patches CRC and sizes.
    /// `central_extra` goes into its central directory entry only.
    pub(crate) fn finish(
        &mut self,
        member: OpenMember,
        crc32: u32,
        size: u64,
        central_extra: Vec<u8>,
    ) -> io::Result<()> {
        let compressed_size = self.position - member.data_offset;
        let end = self.position;
        self.sink
            .seek(SeekFrom::Start(member.header_offset + LOCAL_CRC_OFFSET))?;
        self.sink.write_all(&crc32.to_le_bytes())?;
        self.sink.seek(SeekFrom::Start(member.zip64_sizes_offset))?;
        let mut sizes = [0u8; 16];
        sizes[..8].copy_from_slice(&size.to_le_bytes());
        sizes[8..].copy_from_slice(&compressed_size.to_le_bytes());
        self.sink.write_all(&sizes)?;
        self.sink.seek(SeekFrom::Start(end))?;
        self.entries.push(Entry {
            name: member.name,
            method: member.method,
            header_offset: member.header_offset,
            crc32,
            compressed_size,
            size,
            central_extra,
        });
        Ok(())
    }

    /// Drops a member that was started but not finished. Its bytes stay as
    /// dead space no directory entry points to (rewinding could leave stale
    /// bytes after the end record, as a generic sink cannot be truncated).
    pub(crate) fn abandon(&mut self, member: OpenMember) {
        drop(member);
    }

    /// Writes the central directory and end records; returns the sink.
    pub(crate) fn finish_archive(mut self) -> io::Result<W> {
        let directory_offset = self.position;
        let mut directory = Vec::new();
        for entry in &self.entries {
            let mut zip64 = Vec::new();
            let field32 = |value: u64, zip64: &mut Vec<u8>| {
                if value >= u64::from(u32::MAX) {
                    zip64.extend_from_slice(&value.to_le_bytes());
                    u32::MAX
                } else {
                    value as u32
                }
            };
            // APPNOTE 4.5.3 order: uncompressed size, compressed size, offset.
            let size = field32(entry.size, &mut zip64);
            let compressed_size = field32(entry.compressed_size, &mut zip64);
            let offset = field32(entry.header_offset, &mut zip64);
            let zip64_len = if zip64.is_empty() { 0 } else { 4 + zip64.len() };
            let extra_len = u16::try_from(zip64_len + entry.central_extra.len())
                .map_err(|_| too_big("an extra field"))?;
            directory.extend_from_slice(&CENTRAL_HEADER.to_le_bytes());
            directory.extend_from_slice(&VERSION_MADE_BY.to_le_bytes());
            directory.extend_from_slice(&VERSION_NEEDED.to_le_bytes());
            directory.extend_from_slice(&utf8_flag(&entry.name).to_le_bytes());
            directory.extend_from_slice(&(entry.method as u16).to_le_bytes());
            directory.extend_from_slice(&DOS_TIME.to_le_bytes());
            directory.extend_from_slice(&DOS_DATE.to_le_bytes());
            directory.extend_from_slice(&entry.crc32.to_le_bytes());
            directory.extend_from_slice(&compressed_size.to_le_bytes());
            directory.extend_from_slice(&size.to_le_bytes());
            directory.extend_from_slice(&(entry.name.len() as u16).to_le_bytes());
            directory.extend_from_slice(&extra_len.to_le_bytes());
            directory.extend_from_slice(&0u16.to_le_bytes()); // comment length
            directory.extend_from_slice(&0u16.to_le_bytes()); // disk number
            directory.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
            directory.extend_from_slice(&EXTERNAL_ATTRIBUTES.to_le_bytes());
            directory.extend_from_slice(&offset.to_le_bytes());
            directory.extend_from_slice(&entry.name);
            if !zip64.is_empty() {
                directory.extend_from_slice(&ZIP64_EXTRA.to_le_bytes());
                directory.extend_from_slice(&(zip64.len() as u16).to_le_bytes());
                directory.extend_from_slice(&zip64);
            }
            directory.extend_from_slice(&entry.central_extra);
        }
        let count = self.entries.len() as u64;
        let directory_len = directory.len() as u64;
        let needs_zip64 = count >= u64::from(u16::MAX)
            || directory_len >= u64::from(u32::MAX)
            || directory_offset >= u64::from(u32::MAX);
        if needs_zip64 {
            let zip64_end_offset = directory_offset + directory_len;
            directory.extend_from_slice(&ZIP64_END_OF_CENTRAL_DIRECTORY.to_le_bytes());
            directory.extend_from_slice(&44u64.to_le_bytes()); // size of the rest of the record
            directory.extend_from_slice(&VERSION_MADE_BY.to_le_bytes());
            directory.extend_from_slice(&VERSION_NEEDED.to_le_bytes());
            directory.extend_from_slice(&0u32.to_le_bytes()); // this disk
            directory.extend_from_slice(&0u32.to_le_bytes()); // directory's disk
            directory.extend_from_slice(&count.to_le_bytes());
            directory.extend_from_slice(&count.to_le_bytes());
            directory.extend_from_slice(&directory_len.to_le_bytes());
            directory.extend_from_slice(&directory_offset.to_le_bytes());
            directory.extend_from_slice(&ZIP64_END_LOCATOR.to_le_bytes());
            directory.extend_from_slice(&0u32.to_le_bytes());
            directory.extend_from_slice(&zip64_end_offset.to_le_bytes());
            directory.extend_from_slice(&1u32.to_le_bytes()); // total disks
        }
        let count16 = count.min(u64::from(u16::MAX)) as u16;
        directory.extend_from_slice(&END_OF_CENTRAL_DIRECTORY.to_le_bytes());
        directory.extend_from_slice(&0u16.to_le_bytes());
        directory.extend_from_slice(&0u16.to_le_bytes());
        directory.extend_from_slice(&count16.to_le_bytes());
        directory.extend_from_slice(&count16.to_le_bytes());
        directory.extend_from_slice(&(directory_len.min(u64::from(u32::MAX)) as u32).to_le_bytes());
        directory
            .extend_from_slice(&(directory_offset.min(u64::from(u32::MAX)) as u32).to_le_bytes());
        directory.extend_from_slice(&0u16.to_le_bytes()); // comment length
        self.write_all(&directory)?;
        self.sink.flush()?;
        Ok(self.sink)
    }
}

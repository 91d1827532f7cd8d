//! Archives held in memory (a mapping of an `.npy` archive, owned bytes):
//! stored members located by byte range, and borrowed without copying
//! when the bytes are a slice.

use std::io;
use std::ops::Range;

use npy_core::element::Element;
use npy_core::header::MAGIC;
use npy_core::npz::{ArchiveError, MemberCompression};
use npy_core::{ArrayView, Header, Layout, ParsedHeader, ReadOptions};

use super::{NpzArchive, archive_kind};
use crate::error::{Error, ErrorKind, Result, format_error_kind};

/// A stored `.npy` member in archive bytes: its parsed header and its array
/// data, borrowed from the bytes ([`NpzArchive::array_bytes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredArray<'a> {
    /// The member's header.
    pub header: Header,
    /// Where its header and data lie within the member.
    pub layout: Layout,
    /// The array data, exactly the bytes the header promises.
    pub data: &'a [u8],
}

/// A stored `.npy` member located in archive bytes: its parsed header and
/// where its array data lies in the archive ([`NpzArchive::array_range`]),
/// for archives over bytes that are not a borrowed slice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredRange {
    /// The member's header.
    pub header: Header,
    /// Where its header and data lie within the member.
    pub layout: Layout,
    /// The array data's bytes in the archive, exactly what the header promises.
    pub data: Range<usize>,
}

impl<B: AsRef<[u8]> + Clone> NpzArchive<io::Cursor<B>> {
    /// The archive bytes: a clone of `B` (a pointer copy for a slice, a
    /// count for an `Arc`).
    pub(crate) fn archive_bytes(&self) -> B {
        self.raw.with(|cursor| cursor.get_ref().clone())
    }

    /// Where a stored member's content (the `.npy` file it holds) lies in
    /// the archive bytes: nothing is read beyond the member's local header,
    /// so the CRC-32 is not checked. The central directory was read once,
    /// at open: this costs the same for the first member and the 6,000th.
    ///
    /// A compressed member is an error naming the alternative: load it.
    pub fn stored_range(&mut self, key: &str) -> Result<Range<usize>> {
        let index = self.resolve(key)?;
        let path = self.path.as_deref();
        let member = self.names[index].as_str();
        let fail = |kind| Error::from(kind).in_member(member).located(path);
        let len = self.archive_bytes().as_ref().len();
        let compression = self.compressions[index];
        let file = self
            .zip
            .by_index_raw(index)
            .map_err(|source| fail(archive_kind(source, member)))?;
        if compression != MemberCompression::Stored {
            return Err(fail(ErrorKind::Archive(ArchiveError::Compressed {
                compression,
            })));
        }
        let corrupt = |detail: String| fail(ErrorKind::Archive(ArchiveError::Corrupt { detail }));
        let start = file
            .data_start()
            .ok_or_else(|| corrupt("the local header was not read".to_owned()))?;
        // Its data must lie inside the archive (the sizes agree: checked at open).
        let end = start
            .checked_add(file.compressed_size())
            .filter(|&end| end <= len as u64)
            .ok_or_else(|| {
                corrupt(format!(
                    "data ({} bytes at offset {start}) runs past the end of the {len}-byte archive",
                    file.compressed_size(),
                ))
            })?;
        Ok(start as usize..end as usize)
    }

    /// A stored `.npy` member's parsed header and where its array data lies
    /// in the archive bytes (checked to hold all the data the header promises).
    pub fn array_range(&mut self, key: &str) -> Result<StoredRange> {
        let content = self.stored_range(key)?;
        let index = self.resolve(key)?;
        let bytes = self.archive_bytes();
        let member = &bytes.as_ref()[content.clone()];
        if !member.starts_with(&MAGIC) {
            return Err(self.member_error(index, ErrorKind::NotNpy));
        }
        let ParsedHeader { header, layout } =
            Header::parse(member, &self.options.parse).map_err(|source| {
                self.located(format_error_kind("parse", source).in_member(&self.names[index]))
            })?;
        let data = layout
            .data_offset
            .checked_add(layout.data_len)
            .filter(|&end| end <= member.len())
            .map(|end| content.start + layout.data_offset..content.start + end)
            .ok_or_else(|| {
                let detail = format!(
                    "the header promises {} data bytes but the member holds {}",
                    layout.data_len,
                    member.len().saturating_sub(layout.data_offset)
                );
                self.member_error(index, ErrorKind::Archive(ArchiveError::Corrupt { detail }))
            })?;
        Ok(StoredRange {
            header,
            layout,
            data,
        })
    }
}

impl<'a> NpzArchive<io::Cursor<&'a [u8]>> {
    /// Reads the central directory of an archive held in memory, e.g. a
    /// read-only mapping of an `.npz` file. Stored members can then be
    /// borrowed from `bytes` without copying ([`stored_member`](Self::stored_member),
    /// [`array_bytes`](Self::array_bytes)).
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self> {
        Self::new(io::Cursor::new(bytes))
    }

    /// [`from_bytes`](Self::from_bytes) with read options.
    pub(crate) fn from_bytes_with_options(bytes: &'a [u8], options: ReadOptions) -> Result<Self> {
        Self::with_options(io::Cursor::new(bytes), options)
    }

    /// The whole content of a stored member (the `.npy` file it holds),
    /// borrowed from the archive bytes ([`stored_range`](Self::stored_range)).
    pub fn stored_member(&mut self, key: &str) -> Result<&'a [u8]> {
        let range = self.stored_range(key)?;
        Ok(&self.archive_bytes()[range])
    }

    /// A stored `.npy` member's parsed header and its array data, borrowed
    /// from the archive bytes ([`array_range`](Self::array_range)).
    pub fn array_bytes(&mut self, key: &str) -> Result<StoredArray<'a>> {
        let StoredRange {
            header,
            layout,
            data,
        } = self.array_range(key)?;
        Ok(StoredArray {
            header,
            layout,
            data: &self.archive_bytes()[data],
        })
    }

    /// A typed view straight into a stored member's data: zero-copy, what
    /// NumPy cannot do (its `mmap_mode` is ignored for npz).
    ///
    /// Data we write is 64-byte aligned in the archive; data that is not
    /// aligned for `T` is npy-core's [`Misaligned`](npy_core::Error::Misaligned)
    /// error, which names the way out: an alignment-1 element type
    /// (`zerocopy::byteorder`), or loading it.
    pub fn view<T: Element>(&mut self, key: &str) -> Result<ArrayView<'a, T>> {
        let index = self.resolve(key)?;
        let StoredArray { header, data, .. } = self.array_bytes(key)?;
        ArrayView::from_header(data, &header)
            .map_err(|source| self.member_error(index, ErrorKind::Format(source)))
    }
}

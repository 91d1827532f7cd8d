//! Saving built block indexes beside the archive, and using them again.

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use npy_core::npz::MemberCompression;

use super::NpzArchive;
use crate::atomic::AtomicFile;
use crate::error::{Error, ErrorKind, Result, io_error};
use crate::npz::sidecar::{self, Identity};

/// Where the block indexes of the archive at `archive` are saved: the
/// archive's name with `.idx` appended (`data.npz.idx`).
pub fn index_path(archive: impl AsRef<Path>) -> PathBuf {
    let mut name = archive.as_ref().as_os_str().to_owned();
    name.push(".idx");
    PathBuf::from(name)
}

impl<R: Read + Seek> NpzArchive<R> {
    /// What a sidecar must have been written for: this archive's length and
    /// the CRC-32 of its central directory (every member's name, offset,
    /// sizes and CRC-32).
    fn identity(&self) -> Result<Identity> {
        let len = self.archive_len.saturating_sub(self.directory_start);
        let mut directory = vec![0u8; len as usize];
        self.raw
            .read_exact_at(self.directory_start, &mut directory)
            .map_err(|source| {
                self.located(Error::from(ErrorKind::Io {
                    operation: "read",
                    source,
                }))
            })?;
        Ok(Identity {
            archive_len: self.archive_len,
            directory_crc: crc32fast::hash(&directory),
        })
    }

    /// Saves the block indexes of the deflated members that have no written
    /// one (building those not built yet: one pass each) to `path`, through
    /// an [`AtomicFile`] (readers see the old file or the new, never part);
    /// returns how many members it holds. [`index_path`] is where
    /// [`OpenOptions::open_npz`](crate::OpenOptions::open_npz) archives look
    /// for it on first use.
    pub fn save_index(&mut self, path: impl AsRef<Path>) -> Result<usize> {
        let path = path.as_ref();
        let mut saved = Vec::new();
        for index in 0..self.names.len() {
            if self.compressions[index] != MemberCompression::Deflated {
                continue;
            }
            if let Some(blocks) = self.index_of_member(index)?
                && !blocks.is_written()
            {
                saved.push((self.names[index].clone(), blocks));
            }
        }
        let members: Vec<(&str, &crate::npz::BlockIndex)> = saved
            .iter()
            .map(|(name, index)| (name.as_str(), &**index))
            .collect();
        let bytes = sidecar::encode(self.identity()?, &members);
        let mut file =
            AtomicFile::create(path).map_err(io_error("create a temporary file for", path))?;
        file.write_all(&bytes).map_err(io_error("write", path))?;
        file.commit()?;
        Ok(saved.len())
    }

    /// Uses the block indexes saved at `path` (by [`save_index`](Self::save_index)),
    /// so their members need no pass; returns how many it holds.
    ///
    /// Errors: a file for another archive or for this one before it
    /// changed (its length and central directory differ), a damaged one, or
    /// one whose index does not describe its member (sizes, CRC-32): it is
    /// refused whole.
    pub fn load_index(&mut self, path: impl AsRef<Path>) -> Result<usize> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(io_error("read", path))?;
        let refused = |kind| Error::from(ErrorKind::Archive(kind)).located(Some(path));
        let saved = sidecar::decode(&bytes, self.identity()?).map_err(refused)?;
        let mut found = Vec::with_capacity(saved.len());
        for member in saved {
            let index = self.index_of(&member.name).filter(|&i| {
                self.compressions[i] == MemberCompression::Deflated
                    && self.info(&self.names[i]).is_ok_and(|info| {
                        (info.size, info.compressed_size, info.crc32)
                            == (
                                member.index.size(),
                                member.index.compressed_size(),
                                member.index.crc32(),
                            )
                    })
            });
            let Some(index) = index else {
                return Err(refused(crate::npz::blocks::corrupt(format!(
                    "its block index file describes a member '{}' the archive does not hold",
                    member.name
                ))));
            };
            found.push((index, member.index));
        }
        let count = found.len();
        for (index, blocks) in found {
            self.indexes
                .entry(index)
                .or_insert_with(|| Arc::new(blocks));
        }
        Ok(count)
    }

    /// Before a pass builds an index: the sidecar beside an archive opened
    /// from a path, once (one that is refused is left alone: the pass runs).
    pub(crate) fn try_sidecar(&mut self) {
        if self.sidecar_tried {
            return;
        }
        self.sidecar_tried = true;
        if let Some(path) = self.path.as_deref().map(index_path)
            && path.is_file()
        {
            let _ = self.load_index(&path);
        }
    }
}

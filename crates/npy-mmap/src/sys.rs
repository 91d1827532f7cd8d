//! The only `unsafe` code of the project: creating memory maps.
//!
//! Mapping a file is `unsafe` in memmap2 because the bytes behind the
//! returned slice belong to the file, and the file can change under the
//! program: another process may write the bytes (a data race Rust's aliasing
//! rules do not allow for) or shrink the file (the next access past the new
//! end raises SIGBUS). No code inside one process can rule that out, so the
//! contract is stated once, in `docs/SAFETY.md`, and the callers of this
//! module uphold their half of it:
//!
//! * the file was opened by this crate and is held with an advisory lock
//!   (shared while mapped), so processes that follow the locking rule never
//!   change its structure while it is mapped;
//! * the file length was checked (`fstat`) to cover `offset + len` before
//!   mapping, so no byte of the mapping lies past the end of the file;
//! * zero-length ranges are never mapped (`mmap` refuses length 0; memmap2
//!   would map one byte past the range instead).
//!
//! The three storage types wrap memmap2's maps so that nothing of memmap2
//! leaks into the public API. [`AnonymousMemory`] (no `unsafe`: anonymous
//! memory belongs to no file) holds arrays read into RAM.

use std::fs::File;
use std::io;
use std::ops::Range;

use memmap2::{Mmap, MmapMut, MmapOptions, UncheckedAdvice};

use crate::Advice;

/// What every mode's mapping provides.
pub trait Storage: Send + Sync + Sized {
    /// Whether the file must be opened for writing to create this mapping.
    const NEEDS_WRITE_ACCESS: bool;

    /// Maps `len` bytes of `file` starting at byte `offset` (any offset: the
    /// kernel mapping starts at the enclosing page boundary and the slice at
    /// `offset`). The caller has checked that the file holds `offset + len`.
    fn map(file: &File, offset: u64, len: usize) -> io::Result<Self>;

    /// The mapped bytes.
    fn bytes(&self) -> &[u8];

    /// Passes an access-pattern hint for `range` of [`bytes`](Self::bytes)
    /// (in bounds, checked by the caller) to the kernel.
    fn advise(&self, advice: Advice, range: Range<usize>) -> io::Result<()>;
}

/// A mapping that can be written through.
pub trait StorageMut: Storage {
    /// The mapped bytes, writable.
    fn bytes_mut(&mut self) -> &mut [u8];
}

/// Read-only shared mapping (`PROT_READ`, `MAP_SHARED`): numpy's `r`.
#[derive(Debug)]
pub struct ReadOnlyMap(Option<Mmap>);

/// Writable shared mapping (`MAP_SHARED`): numpy's `r+` and `w+`; writes
/// reach the file.
#[derive(Debug)]
pub struct SharedMap(Option<MmapMut>);

/// Writable private mapping (`MAP_PRIVATE`): numpy's `c`; writes stay in
/// this process.
#[derive(Debug)]
pub struct PrivateMap(Option<MmapMut>);

fn options(offset: u64, len: usize) -> MmapOptions {
    let mut options = MmapOptions::new();
    options.offset(offset).len(len);
    options
}

/// A hint as memmap2 takes it: checked ones, and the one whose meaning
/// depends on the kind of mapping.
enum Hint {
    Checked(memmap2::Advice),
    DontNeed,
}

fn hint(advice: Advice) -> io::Result<Hint> {
    Ok(Hint::Checked(match advice {
        Advice::Normal => memmap2::Advice::Normal,
        Advice::Random => memmap2::Advice::Random,
        Advice::Sequential => memmap2::Advice::Sequential,
        Advice::WillNeed => memmap2::Advice::WillNeed,
        Advice::DontNeed => return Ok(Hint::DontNeed),
        #[cfg(target_os = "linux")]
        Advice::PopulateRead => memmap2::Advice::PopulateRead,
        #[cfg(target_os = "linux")]
        Advice::PopulateWrite => memmap2::Advice::PopulateWrite,
        #[cfg(not(target_os = "linux"))]
        Advice::PopulateRead | Advice::PopulateWrite => {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "populate hints exist on Linux only",
            ));
        }
    }))
}

/// memmap2's two map types, as far as hints for *shared* mappings go.
trait SharedAdvise {
    fn advise_range(&self, advice: memmap2::Advice, offset: usize, len: usize) -> io::Result<()>;
    /// `MADV_DONTNEED`: only for mappings created `MAP_SHARED`.
    fn dont_need(&self, offset: usize, len: usize) -> io::Result<()>;
}

impl SharedAdvise for Mmap {
    fn advise_range(&self, advice: memmap2::Advice, offset: usize, len: usize) -> io::Result<()> {
        Mmap::advise_range(self, advice, offset, len)
    }

    fn dont_need(&self, offset: usize, len: usize) -> io::Result<()> {
        // SAFETY: on a shared file mapping MADV_DONTNEED only drops the
        // page-table entries; the next access reloads the same bytes from
        // the page cache, so no live reference sees its contents change.
        unsafe { self.unchecked_advise_range(UncheckedAdvice::DontNeed, offset, len) }
    }
}

impl SharedAdvise for MmapMut {
    fn advise_range(&self, advice: memmap2::Advice, offset: usize, len: usize) -> io::Result<()> {
        MmapMut::advise_range(self, advice, offset, len)
    }

    fn dont_need(&self, offset: usize, len: usize) -> io::Result<()> {
        // SAFETY: as for `Mmap`; dirty data is kept too (the kernel moves the
        // dirty bit to the page-cache page before dropping the entry). Only
        // `SharedMap` calls this: the private `PrivateMap` refuses DontNeed.
        unsafe { self.unchecked_advise_range(UncheckedAdvice::DontNeed, offset, len) }
    }
}

/// Every hint, on a shared mapping (or on nothing, for an empty one).
fn advise_shared(
    map: Option<&impl SharedAdvise>,
    advice: Advice,
    range: Range<usize>,
) -> io::Result<()> {
    let hint = hint(advice)?;
    let Some(map) = map.filter(|_| !range.is_empty()) else {
        return Ok(());
    };
    match hint {
        Hint::Checked(advice) => map.advise_range(advice, range.start, range.len()),
        Hint::DontNeed => map.dont_need(range.start, range.len()),
    }
}

impl Storage for ReadOnlyMap {
    const NEEDS_WRITE_ACCESS: bool = false;

    fn map(file: &File, offset: u64, len: usize) -> io::Result<Self> {
        if len == 0 {
            return Ok(ReadOnlyMap(None));
        }
        // SAFETY: see the module docs: the range lies inside the file (checked
        // by the caller), the file is locked shared, and what remains (other
        // programs ignoring the lock) is the contract in docs/SAFETY.md.
        let map = unsafe { options(offset, len).map(file)? };
        Ok(ReadOnlyMap(Some(map)))
    }

    fn bytes(&self) -> &[u8] {
        self.0.as_deref().unwrap_or_default()
    }

    fn advise(&self, advice: Advice, range: Range<usize>) -> io::Result<()> {
        advise_shared(self.0.as_ref(), advice, range)
    }
}

impl Storage for SharedMap {
    const NEEDS_WRITE_ACCESS: bool = true;

    fn map(file: &File, offset: u64, len: usize) -> io::Result<Self> {
        if len == 0 {
            return Ok(SharedMap(None));
        }
        // SAFETY: as for `ReadOnlyMap::map`; in addition, writes by this
        // process go through `&mut self`, so Rust's aliasing rules hold
        // inside the process. Concurrent writers in other processes must
        // write disjoint bytes (docs/SAFETY.md).
        let map = unsafe { options(offset, len).map_mut(file)? };
        Ok(SharedMap(Some(map)))
    }

    fn bytes(&self) -> &[u8] {
        self.0.as_deref().unwrap_or_default()
    }

    fn advise(&self, advice: Advice, range: Range<usize>) -> io::Result<()> {
        advise_shared(self.0.as_ref(), advice, range)
    }
}

impl StorageMut for SharedMap {
    fn bytes_mut(&mut self) -> &mut [u8] {
        self.0.as_deref_mut().unwrap_or_default()
    }
}

impl SharedMap {
    /// Writes the dirty pages of `len` bytes at `offset` (relative to the
    /// start of the mapping) back to the file and waits (`msync(MS_SYNC)`).
    pub fn flush_range(&self, offset: usize, len: usize) -> io::Result<()> {
        match &self.0 {
            Some(map) if len > 0 => map.flush_range(offset, len),
            _ => Ok(()),
        }
    }

    /// Starts writing back the dirty pages of `len` bytes at `offset`
    /// (relative to the mapping, which starts at byte `map_offset` of
    /// `file`) without waiting for the disk.
    ///
    /// Linux ignores `msync(MS_ASYNC)` (a no-op since 2.6.19: the kernel
    /// tracks dirty pages itself and writes them back when it likes), so
    /// there the writeback is started on the file instead, with
    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)`: the dirty pages of a shared
    /// mapping are the dirty pages of the file.
    pub fn start_flush_range(
        &self,
        file: &File,
        map_offset: u64,
        offset: usize,
        len: usize,
    ) -> io::Result<()> {
        let Some(map) = self.0.as_ref().filter(|_| len > 0) else {
            return Ok(());
        };
        #[cfg(target_os = "linux")]
        {
            let _ = map;
            start_writeback(file, map_offset + offset as u64, len)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (file, map_offset);
            map.flush_async_range(offset, len)
        }
    }
}

/// `sync_file_range(fd, offset, len, SYNC_FILE_RANGE_WRITE)`: queue the
/// dirty pages of the range for writing, return without waiting.
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, len: usize) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let too_big = || io::Error::new(io::ErrorKind::InvalidInput, "range past i64::MAX");
    let offset = i64::try_from(offset).map_err(|_| too_big())?;
    let len = i64::try_from(len).map_err(|_| too_big())?;
    // SAFETY: no memory is passed, only integers; the descriptor is valid
    // for the whole call because `file` is borrowed. The call cannot change
    // any byte of the file or of a mapping, only when they reach the disk.
    let status = unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
    };
    if status == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl Storage for PrivateMap {
    const NEEDS_WRITE_ACCESS: bool = false;

    fn map(file: &File, offset: u64, len: usize) -> io::Result<Self> {
        if len == 0 {
            return Ok(PrivateMap(None));
        }
        // SAFETY: as for `ReadOnlyMap::map`. Pages this process has not
        // written still show the file, so the contract about other writers
        // applies to them too.
        let map = unsafe { options(offset, len).map_copy(file)? };
        Ok(PrivateMap(Some(map)))
    }

    fn bytes(&self) -> &[u8] {
        self.0.as_deref().unwrap_or_default()
    }

    fn advise(&self, advice: Advice, range: Range<usize>) -> io::Result<()> {
        match hint(advice)? {
            // MADV_DONTNEED on a private mapping throws away this process's
            // copies: bytes visible through `&` would change. Refused.
            Hint::DontNeed => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "DontNeed would discard the copy-on-write changes of this mapping",
            )),
            Hint::Checked(advice) => match &self.0 {
                Some(map) if !range.is_empty() => {
                    map.advise_range(advice, range.start, range.len())
                }
                _ => Ok(()),
            },
        }
    }
}

impl StorageMut for PrivateMap {
    fn bytes_mut(&mut self) -> &mut [u8] {
        self.0.as_deref_mut().unwrap_or_default()
    }
}

/// Zeroed anonymous memory for an array read into RAM, asking the kernel
/// for transparent huge pages (`MADV_HUGEPAGE`, Linux): filling fresh 4 KiB
/// pages costs a fault each, and on big buffers those faults, not the
/// copying, set the speed. numpy asks for huge pages the same way, and we
/// follow numpy's switch for it: `NUMPY_MADVISE_HUGEPAGE=0` in the
/// environment turns it off (worth it in VMs that hand free memory back to
/// the host, where a fresh huge page is slow to touch; docs/BENCHMARKS.md).
#[derive(Debug)]
pub struct AnonymousMemory(MmapMut);

impl AnonymousMemory {
    /// `len` bytes (at least 1), page-aligned.
    pub fn new(len: usize) -> io::Result<AnonymousMemory> {
        let map = MmapMut::map_anon(len.max(1))?;
        #[cfg(target_os = "linux")]
        if huge_pages_wanted() {
            // Only a hint: without huge pages (THP set to `never`, or an
            // old kernel) the memory works the same, just slower to fill.
            let _ = map.advise(memmap2::Advice::HugePage);
        }
        Ok(AnonymousMemory(map))
    }
}

/// numpy's rule for `NUMPY_MADVISE_HUGEPAGE`: unset means yes, `0` means no.
#[cfg(target_os = "linux")]
fn huge_pages_wanted() -> bool {
    std::env::var_os("NUMPY_MADVISE_HUGEPAGE").is_none_or(|value| value != "0")
}

impl AsRef<[u8]> for AnonymousMemory {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl AsMut<[u8]> for AnonymousMemory {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

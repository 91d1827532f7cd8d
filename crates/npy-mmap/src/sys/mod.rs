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
use std::sync::Arc;

use memmap2::{Mmap, MmapMut, MmapOptions, UncheckedAdvice};

use crate::advice::Advice;

mod foreign;
pub use foreign::{ForeignBytes, ForeignKind, ForeignMap};
pub mod read_ahead;

/// What every mode's mapping provides.
pub trait Storage: Send + Sync + Sized {
    /// Whether the file must be opened for writing to create this mapping.
    const NEEDS_WRITE_ACCESS: bool;

    /// Maps `len` bytes of `file` starting at byte `offset` (any offset: the
    /// kernel mapping starts at the enclosing page boundary and the slice at
    /// `offset`).
    ///
    /// # Safety
    ///
    /// The file holds `offset + len` bytes, and the caller holds the locks
    /// that keep every cooperating process from shrinking the file and from
    /// writing these bytes in a way this mode's views cannot see safely (a
    /// data lock for the range, the structure lock shared; a [`Grant`]):
    /// [`map_data`] is the one caller, and checks both.
    unsafe fn map(file: &File, offset: u64, len: usize) -> io::Result<Self>;

    /// The mapped bytes.
    fn bytes(&self) -> &[u8];

    /// The mapped length, without forming a reference to the bytes (a
    /// writable mapping's bytes may be lent to foreign code meanwhile).
    fn len(&self) -> usize;

    /// The first mapped byte's address (dangling, never null, when
    /// nothing is mapped), without forming a reference to the bytes: for
    /// planning reads (page residency, read-ahead) of a mapping whose
    /// bytes foreign code may be writing.
    fn as_ptr(&self) -> *const u8;

    /// Passes an access-pattern hint for `range` of [`bytes`](Self::bytes)
    /// (in bounds, checked by the caller) to the kernel.
    fn advise(&self, advice: Advice, range: Range<usize>) -> io::Result<()>;

    /// Maps the pages of `range` in, readable ([`Advice::PopulateRead`]):
    /// now, or, where the mapping can (a read-only one of at least
    /// [`POPULATE_IN_BACKGROUND`] bytes), by a thread that starts at the
    /// range's first page and runs ahead of the caller's reads, while this
    /// returns at once. A read that overtakes the thread faults its page in
    /// itself, as without the hint.
    fn populate_ahead(&self, range: Range<usize>) -> io::Result<()> {
        self.advise(Advice::PopulateRead, range)
    }

    /// Writes the changes of `len` bytes at `offset` back to the file and
    /// waits; nothing to do unless writes reach the file.
    fn flush_range(&self, _offset: usize, _len: usize) -> io::Result<()> {
        Ok(())
    }
}

/// A mapping that can be written through.
pub trait StorageMut: Storage {
    /// The mapped bytes, writable.
    fn bytes_mut(&mut self) -> &mut [u8];
}

/// Read-only shared mapping (`PROT_READ`, `MAP_SHARED`): numpy's `r`.
/// Shared with the thread of [`Storage::populate_ahead`], which holds it
/// only weakly (and strongly for one step at a time), so dropping the map
/// unmaps it at once, or at the end of the thread's step.
#[derive(Debug)]
pub struct ReadOnlyMap(Option<Arc<Mmap>>);

/// From this length on, [`Storage::populate_ahead`] of a read-only mapping
/// runs in a thread of its own: below it, populating now costs less than
/// starting a thread (a few tens of µs).
pub const POPULATE_IN_BACKGROUND: usize = 16 << 20;

/// The bytes the populating thread maps in per step: small enough that it
/// lets go of a dropped mapping soon, large enough that its system calls
/// cost nothing beside the faults they save.
const POPULATE_STEP: usize = 8 << 20;

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

/// What may be mapped: a byte range of a file, and the file's length as
/// read under its structure lock. Only the `lock` module makes one, as part
/// of a data lock (`DataLock::grant`), after taking the locks that keep
/// every cooperating process from shrinking the file or writing these bytes
/// in a way the mapping's views cannot see safely: holding a `Grant` is
/// holding those locks. (It lives here, at the bottom, so that this module
/// knows nothing of the ones above it.)
#[derive(Debug)]
pub struct Grant {
    range: Range<u64>,
    file_len: u64,
}

impl Grant {
    /// For the `lock` module only (see the type's docs).
    pub(crate) fn new(range: Range<u64>, file_len: u64) -> Grant {
        Grant { range, file_len }
    }

    /// The bytes of the file granted.
    pub fn range(&self) -> Range<u64> {
        self.range.clone()
    }

    /// The file's length when the grant was made.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }
}

/// Maps the bytes `grant` covers of `file` in mode `S`.
///
/// The one way to create a file mapping: it checks the preconditions of
/// [`Storage::map`] that code can check. The grant is proof of the data
/// lock and carries the file's length read under the structure lock (which
/// keeps cooperating processes from shrinking the file), so no byte of the
/// mapping lies past its end.
pub fn map_data<S: Storage>(file: &File, grant: &Grant) -> io::Result<S> {
    let (offset, len) = checked_range(grant)?;
    // SAFETY: the range lies inside the file (`checked_range`, with the
    // structure lock held so no cooperating process can shrink it), and
    // `grant` comes with the data lock for this range and this mode's access.
    unsafe { S::map(file, offset, len) }
}

/// The offset and length of the bytes `grant` covers, checked to lie inside
/// the file's length as read under the structure lock.
fn checked_range(grant: &Grant) -> io::Result<(u64, usize)> {
    let range = grant.range();
    let file_len = grant.file_len();
    if range.end > file_len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "the file has {file_len} bytes, the mapping needs {}",
                range.end
            ),
        ));
    }
    let len = usize::try_from(range.end - range.start)
        .map_err(|_| io::Error::other("the mapping does not fit the address space"))?;
    Ok((range.start, len))
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

    unsafe fn map(file: &File, offset: u64, len: usize) -> io::Result<Self> {
        if len == 0 {
            return Ok(ReadOnlyMap(None));
        }
        // SAFETY: this function's contract: the range lies inside the file,
        // no cooperating process writes it (read data lock) or shrinks the
        // file (shared structure lock); programs ignoring the locks are the
        // contract in docs/SAFETY.md.
        let map = unsafe { options(offset, len).map(file)? };
        Ok(ReadOnlyMap(Some(Arc::new(map))))
    }

    fn bytes(&self) -> &[u8] {
        self.0.as_deref().map(|map| &map[..]).unwrap_or_default()
    }

    fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |map| map.len())
    }

    fn as_ptr(&self) -> *const u8 {
        // memmap2's `as_ptr` reads the address it stored; it forms no slice.
        self.0
            .as_ref()
            .map_or(std::ptr::NonNull::dangling().as_ptr(), |map| map.as_ptr())
    }

    fn advise(&self, advice: Advice, range: Range<usize>) -> io::Result<()> {
        advise_shared(self.0.as_deref(), advice, range)
    }

    fn populate_ahead(&self, range: Range<usize>) -> io::Result<()> {
        match self.0.as_ref() {
            Some(map) if range.len() >= POPULATE_IN_BACKGROUND => {
                // No thread to be had: populate now.
                populate_in_thread(map, range.clone())
                    .or_else(|_| self.advise(Advice::PopulateRead, range))
            }
            _ => self.advise(Advice::PopulateRead, range),
        }
    }
}

/// Starts the thread of [`ReadOnlyMap`]'s [`Storage::populate_ahead`].
#[cfg(target_os = "linux")]
fn populate_in_thread(map: &Arc<Mmap>, range: Range<usize>) -> io::Result<()> {
    let map = Arc::downgrade(map);
    let steps = (range.start..range.end).step_by(POPULATE_STEP);
    let end = range.end;
    std::thread::Builder::new()
        .name("npy-mmap-populate".into())
        .spawn(move || {
            for at in steps {
                // Dropped by its owner: nothing left to map in.
                let Some(map) = map.upgrade() else { return };
                // An error (the file cut short by a program ignoring the
                // locks: EFAULT, never SIGBUS) ends the work; the reads
                // fault their pages in as without the hint.
                let len = POPULATE_STEP.min(end - at);
                if map
                    .advise_range(memmap2::Advice::PopulateRead, at, len)
                    .is_err()
                {
                    return;
                }
            }
        })
        .map(drop)
}

/// Populate hints exist on Linux only: the caller's fallback says so.
#[cfg(not(target_os = "linux"))]
fn populate_in_thread(_: &Arc<Mmap>, _: Range<usize>) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "populate hints exist on Linux only",
    ))
}

impl Storage for SharedMap {
    const NEEDS_WRITE_ACCESS: bool = true;

    unsafe fn map(file: &File, offset: u64, len: usize) -> io::Result<Self> {
        if len == 0 {
            return Ok(SharedMap(None));
        }
        // SAFETY: as for `ReadOnlyMap::map`, with a write data lock: no other
        // mapping made through this crate, in any process, can see or write
        // these bytes, and writes by this process go through `&mut self`.
        let map = unsafe { options(offset, len).map_mut(file)? };
        Ok(SharedMap(Some(map)))
    }

    fn bytes(&self) -> &[u8] {
        self.0.as_deref().unwrap_or_default()
    }

    fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |map| map.len())
    }

    fn as_ptr(&self) -> *const u8 {
        // memmap2's `as_ptr` reads the address it stored; it forms no slice.
        self.0
            .as_ref()
            .map_or(std::ptr::NonNull::dangling().as_ptr(), |map| map.as_ptr())
    }

    fn advise(&self, advice: Advice, range: Range<usize>) -> io::Result<()> {
        advise_shared(self.0.as_ref(), advice, range)
    }

    fn flush_range(&self, offset: usize, len: usize) -> io::Result<()> {
        SharedMap::flush_range(self, offset, len)
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

/// `sync_file_range(fd, offset, len, SYNC_FILE_RANGE_WAIT_BEFORE |
/// SYNC_FILE_RANGE_WRITE)`: queue the dirty pages of the range for writing,
/// return without waiting for them. `WRITE` alone skips a page that is
/// already being written back, even when it was dirtied again since (it
/// then waited for the kernel's 30 s expiry: found by
/// `tests/modes.rs::flushes_clean_the_pages_they_name`); `WAIT_BEFORE`
/// first waits for such writeback of the range to end, which is short.
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
        libc::sync_file_range(
            file.as_raw_fd(),
            offset,
            len,
            libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE,
        )
    };
    if status == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl Storage for PrivateMap {
    const NEEDS_WRITE_ACCESS: bool = false;

    unsafe fn map(file: &File, offset: u64, len: usize) -> io::Result<Self> {
        if len == 0 {
            return Ok(PrivateMap(None));
        }
        // SAFETY: as for `ReadOnlyMap::map`. Pages this process has not
        // written still show the file, which is why a copy-on-write mapping
        // takes a read data lock like a read-only one.
        let map = unsafe { options(offset, len).map_copy(file)? };
        Ok(PrivateMap(Some(map)))
    }

    fn bytes(&self) -> &[u8] {
        self.0.as_deref().unwrap_or_default()
    }

    fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |map| map.len())
    }

    fn as_ptr(&self) -> *const u8 {
        // memmap2's `as_ptr` reads the address it stored; it forms no slice.
        self.0
            .as_ref()
            .map_or(std::ptr::NonNull::dangling().as_ptr(), |map| map.as_ptr())
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

/// A read (shared) or write (exclusive) byte-range lock: the lock lanes'
/// table (`lock::table`) is written in it on every system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LockKind {
    /// Shared: conflicts only with write locks.
    Read,
    /// Exclusive: conflicts with every lock.
    Write,
}

#[cfg(target_os = "linux")]
pub mod range_lock;

/// A writable shared mapping that never hands out `&[u8]` or `&mut [u8]`:
/// other live mappings (in this process or others) write the same bytes at
/// the same time, so the only sound access is through atomic types, whose
/// shared references allow concurrent mutation.
#[derive(Debug)]
pub struct LiveMap(Option<memmap2::MmapRaw>);

/// An atomic type a live mapping can be viewed as: an integer atomic of std,
/// or a bit-cast float wrapper built on one. Sealed to this crate.
///
/// # Safety
///
/// `Self` has the size and alignment of `size_of::<Self>()`, consists of
/// an `UnsafeCell` around plain integer bits (every bit pattern valid), and
/// is accessed only through atomic operations.
pub unsafe trait AtomicCell: Sync + Sized {}

impl LiveMap {
    /// Maps the bytes `grant` covers of `file`, writable and shared.
    pub fn map(file: &File, grant: &Grant) -> io::Result<LiveMap> {
        let (offset, len) = checked_range(grant)?;
        if len == 0 {
            return Ok(LiveMap(None));
        }
        // `map_raw` hands out no reference, only a pointer: nothing here
        // claims the bytes do not change.
        let map = options(offset, len).map_raw(file)?;
        Ok(LiveMap(Some(map)))
    }

    /// The mapping as `len() / size_of::<A>()` atomic cells, if its start
    /// is aligned for `A` and its length a multiple of `A`'s size.
    pub fn cells<A: AtomicCell>(&self) -> Option<&[A]> {
        let Some(map) = &self.0 else {
            return Some(&[]);
        };
        let size = std::mem::size_of::<A>();
        let ptr = map.as_mut_ptr();
        if !(ptr as usize).is_multiple_of(std::mem::align_of::<A>())
            || !map.len().is_multiple_of(size)
        {
            return None;
        }
        // SAFETY: the pointer is aligned for `A` (checked), the mapping is
        // `map.len()` bytes long, valid and writable for as long as `self`
        // (the returned slice borrows it), and `A` is an atomic cell (the
        // trait's contract): any bits are a valid value, and a shared
        // reference to it allows the concurrent atomic writes other live
        // mappings make. No `&[u8]` of these bytes exists anywhere.
        Some(unsafe { std::slice::from_raw_parts(ptr.cast::<A>(), map.len() / size) })
    }

    /// Writes the dirty pages back to the file and waits (`msync(MS_SYNC)`).
    pub fn flush(&self) -> io::Result<()> {
        match &self.0 {
            Some(map) => map.flush(),
            None => Ok(()),
        }
    }
}

macro_rules! atomic_cells {
    ($($atomic:ty),*) => {$(
        // SAFETY: std's integer atomics have the size and alignment of their
        // integer (documented), wrap an `UnsafeCell`, and take any bits.
        unsafe impl AtomicCell for $atomic {}
    )*};
}
atomic_cells!(
    std::sync::atomic::AtomicU8,
    std::sync::atomic::AtomicI8,
    std::sync::atomic::AtomicU16,
    std::sync::atomic::AtomicI16,
    std::sync::atomic::AtomicU32,
    std::sync::atomic::AtomicI32,
    std::sync::atomic::AtomicU64,
    std::sync::atomic::AtomicI64,
    // `#[repr(transparent)]` wrappers of `AtomicU32` and `AtomicU64`.
    crate::atomic_float::AtomicF32,
    crate::atomic_float::AtomicF64
);

mod fork;
pub use fork::on_fork;

//! Mappings lent to foreign code (numpy): addresses out, atomic loads in.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering};

use memmap2::UncheckedAdvice;

use super::{Grant, Hint, checked_range, hint, options};
use crate::advice::Advice;

/// How a [`ForeignMap`] maps its bytes: numpy's three modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ForeignKind {
    /// `PROT_READ`, `MAP_SHARED`: numpy's `r`.
    ReadOnly,
    /// Writable, `MAP_SHARED`: numpy's `r+` and `w+`.
    Shared,
    /// Writable, `MAP_PRIVATE`: numpy's `c`.
    Private,
}

/// A mapping lent to code outside Rust's rules (numpy): others may write
/// its bytes at any time (other processes, numpy in this one), so it never
/// hands out `&[u8]` or `&mut [u8]`, only its address, and Rust reads it
/// with atomic loads alone ([`load`](Self::load)).
#[derive(Debug)]
pub struct ForeignMap {
    map: Option<memmap2::MmapRaw>,
    kind: ForeignKind,
}

impl ForeignMap {
    /// Maps the bytes `grant` covers of `file` as `kind` says (`Shared`
    /// needs the file open for writing).
    pub fn map(file: &File, grant: &Grant, kind: ForeignKind) -> io::Result<ForeignMap> {
        let (offset, len) = checked_range(grant)?;
        if len == 0 {
            return Ok(ForeignMap { map: None, kind });
        }
        let options = options(offset, len);
        // `map_raw` and `map_raw_read_only` hand out no reference, only a
        // pointer: nothing here claims the bytes do not change.
        let map = match kind {
            ForeignKind::ReadOnly => options.map_raw_read_only(file)?,
            ForeignKind::Shared => options.map_raw(file)?,
            // SAFETY: `map_copy` is unsafe because the `MmapMut` it returns
            // dereferences to `&mut [u8]` over bytes that others may change
            // (its pages not yet written show the file). It is turned into
            // an `MmapRaw` at once and never dereferenced: only its address
            // and the atomic loads of `load` reach these bytes. The range
            // lies inside the file (`checked_range`) under the structure
            // lock, which keeps cooperating processes from shrinking it.
            ForeignKind::Private => memmap2::MmapRaw::from(unsafe { options.map_copy(file)? }),
        };
        Ok(ForeignMap {
            map: Some(map),
            kind,
        })
    }

    /// The first byte's address (dangling, never null, when empty).
    pub fn as_ptr(&self) -> *mut u8 {
        match &self.map {
            Some(map) => map.as_mut_ptr(),
            None => std::ptr::NonNull::dangling().as_ptr(),
        }
    }

    /// The mapped length in bytes.
    pub fn len(&self) -> usize {
        self.map.as_ref().map_or(0, memmap2::MmapRaw::len)
    }

    /// The mapped bytes, read with atomic loads only.
    pub fn bytes(&self) -> ForeignBytes<'_> {
        match &self.map {
            // SAFETY: the mapping is `map.len()` bytes, mapped (readable)
            // for as long as `self`, which the result borrows; nothing here
            // hands out a Rust reference to its bytes (see the type docs).
            Some(map) => unsafe { ForeignBytes::new(map.as_ptr(), map.len()) },
            None => ForeignBytes::EMPTY,
        }
    }

    /// Copies `out.len()` bytes at `offset` into `out` with relaxed atomic
    /// loads ([`ForeignBytes::load`]). `None` when the range passes the end.
    pub fn load(&self, offset: usize, out: &mut [u8]) -> Option<()> {
        self.bytes().load(offset, out)
    }

    /// Passes a hint for `range` (in bounds, checked by the caller) to the
    /// kernel; `DontNeed` is refused on a private mapping (it would throw
    /// away numpy's copy-on-write changes).
    pub fn advise(&self, advice: Advice, range: Range<usize>) -> io::Result<()> {
        let hint = hint(advice)?;
        let Some(map) = self.map.as_ref().filter(|_| !range.is_empty()) else {
            return Ok(());
        };
        match hint {
            Hint::Checked(advice) => map.advise_range(advice, range.start, range.len()),
            Hint::DontNeed if self.kind == ForeignKind::Private => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "DontNeed would discard the copy-on-write changes of this mapping",
            )),
            // SAFETY: on a shared file mapping MADV_DONTNEED only drops the
            // page-table entries; the next access reloads the same bytes
            // (dirty data included) from the page cache. No Rust reference
            // to these bytes exists at all.
            Hint::DontNeed => unsafe {
                map.unchecked_advise_range(UncheckedAdvice::DontNeed, range.start, range.len())
            },
        }
    }

    /// Writes the dirty pages of `len` bytes at `offset` back to the file
    /// and waits (`msync(MS_SYNC)`); nothing to do unless shared writable.
    pub fn flush_range(&self, offset: usize, len: usize) -> io::Result<()> {
        match &self.map {
            Some(map) if len > 0 && self.kind == ForeignKind::Shared => {
                map.flush_range(offset, len)
            }
            _ => Ok(()),
        }
    }
}

/// Bytes that foreign code owns and may write at any time, from any
/// thread or process (a numpy mapping, an array being saved while another
/// process writes the file under it): Rust reads them with relaxed atomic
/// loads only, never through a `&[u8]`, so a read is defined whatever
/// others write meanwhile (each aligned word is one value some writer
/// stored). The one place of the project that copies such bytes: the
/// foreign mappings ([`ForeignArray`](crate::ForeignArray)) and every
/// caller outside the crate (the Python package's door in) use it.
#[derive(Clone, Copy, Debug)]
pub struct ForeignBytes<'a> {
    ptr: *const u8,
    len: usize,
    _bytes: std::marker::PhantomData<&'a [AtomicU8]>,
}

// SAFETY: a `ForeignBytes` is an address and a length; every access
// through it is an atomic load, which any thread may make (the bytes
// themselves are shared by design: see the type docs).
unsafe impl Send for ForeignBytes<'_> {}
// SAFETY: as for `Send`: shared access is atomic loads only.
unsafe impl Sync for ForeignBytes<'_> {}

impl<'a> ForeignBytes<'a> {
    /// No bytes.
    pub const EMPTY: ForeignBytes<'static> = ForeignBytes {
        ptr: std::ptr::NonNull::<u8>::dangling().as_ptr(),
        len: 0,
        _bytes: std::marker::PhantomData,
    };

    /// The `len` bytes at `ptr`.
    ///
    /// # Safety
    ///
    /// For the whole lifetime `'a`, the `len` bytes at `ptr` are readable
    /// memory (one allocation or mapping, kept in place: a buffer export
    /// held, a mapping not unmapped), and no Rust code holds a `&mut` to
    /// any of them. Others may write them at any time (foreign code, other
    /// processes, atomics): that is what this type is for. `ptr` may
    /// dangle when `len` is 0.
    pub unsafe fn new(ptr: *const u8, len: usize) -> ForeignBytes<'a> {
        ForeignBytes {
            ptr,
            len,
            _bytes: std::marker::PhantomData,
        }
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes as atomic cells.
    fn cells(&self) -> &'a [AtomicU8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `new`'s contract: `len` readable bytes at `ptr` for `'a`
        // (non-null: `len > 0`, and `AtomicU8` has the size and alignment
        // of `u8` and takes any bits). A shared reference to atomics allows
        // the concurrent writes others make; the only operations used on
        // these cells are loads, which std documents as sound on read-only
        // memory for lock-free sizes (`PROT_READ` maps, read-only exports).
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<AtomicU8>(), self.len) }
    }

    /// Copies `out.len()` bytes at `offset` into `out` with relaxed atomic
    /// loads (eight bytes at a time where aligned): defined whatever others
    /// write meanwhile, each aligned word one value some writer stored.
    /// `None` when the range passes the end.
    pub fn load(&self, offset: usize, out: &mut [u8]) -> Option<()> {
        let cells = self.cells().get(offset..offset.checked_add(out.len())?)?;
        let address = cells.as_ptr() as usize;
        // One element of a native width, aligned (the common gather): one load.
        macro_rules! single {
            ($atomic:ty) => {{
                // SAFETY: `cells` holds exactly `size_of::<$atomic>()` bytes
                // of the mapping at an address aligned for `$atomic`
                // (checked by the match below); the atomic takes any bits
                // and is only loaded (see `cells`).
                let cell = unsafe { &*cells.as_ptr().cast::<$atomic>() };
                out.copy_from_slice(&cell.load(Ordering::Relaxed).to_ne_bytes());
                return Some(());
            }};
        }
        match out.len() {
            1 => single!(AtomicU8),
            2 if address.is_multiple_of(2) => single!(AtomicU16),
            4 if address.is_multiple_of(4) => single!(AtomicU32),
            8 if address.is_multiple_of(8) => single!(AtomicU64),
            _ => {}
        }
        let head = (address.next_multiple_of(8) - address).min(out.len());
        let (out_head, out_rest) = out.split_at_mut(head);
        for (byte, cell) in out_head.iter_mut().zip(&cells[..head]) {
            *byte = cell.load(Ordering::Relaxed);
        }
        let words = out_rest.len() / 8;
        // With no whole word left, `head` may have stopped short of the
        // alignment (the copy ends first): no word slice is formed at all.
        let word_cells: &[AtomicU64] = if words == 0 {
            &[]
        } else {
            // SAFETY: `words > 0`, so `head` reached the next multiple of 8:
            // `cells[head..]` starts 8-aligned and holds at least
            // `words * 8` bytes, all inside the mapping; `AtomicU64` takes
            // any bits, and is used for loads only (see `cells`).
            unsafe {
                std::slice::from_raw_parts(cells.as_ptr().add(head).cast::<AtomicU64>(), words)
            }
        };
        let (out_words, out_tail) = out_rest.split_at_mut(words * 8);
        for (chunk, cell) in out_words.chunks_exact_mut(8).zip(word_cells) {
            chunk.copy_from_slice(&cell.load(Ordering::Relaxed).to_ne_bytes());
        }
        for (byte, cell) in out_tail.iter_mut().zip(&cells[head + words * 8..]) {
            *byte = cell.load(Ordering::Relaxed);
        }
        Some(())
    }
}

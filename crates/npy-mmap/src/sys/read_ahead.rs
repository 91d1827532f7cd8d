//! Read-ahead for batched random reads (`array/reads.rs`,
//! `array/gather.rs`): which pages are in memory already, asking the
//! kernel to read the others now, and asking the processor for the cache
//! lines a copy loop reads next.

use std::fs::File;
use std::io;

/// The system's page size.
pub fn page_size() -> usize {
    rustix::param::page_size()
}

/// Whether the page holding the byte `at` bytes past `base` is in
/// memory (`mincore`), so that reading it will not wait for the disk.
/// `base` is the start of a live mapping made by this module (an address
/// only: nothing is read through it). `Ok(true)` where the system cannot
/// tell: callers then read as they would without a plan.
#[cfg(target_os = "linux")]
pub fn is_resident(base: *const u8, at: usize) -> io::Result<bool> {
    let page = page_size();
    let address = (base as usize).saturating_add(at);
    let aligned = address - address % page;
    let mut status = [0u8; 1];
    // SAFETY: mincore dereferences no memory at `aligned`: it asks the
    // kernel about the page of this process that holds `base + at`
    // (`aligned` is that page's start; mappings begin on a page
    // boundary, so it lies in the same mapping). It writes one byte per
    // page asked about into `status`, which has room for the one page.
    let result = unsafe { libc::mincore(aligned as *mut libc::c_void, 1, status.as_mut_ptr()) };
    if result == 0 {
        Ok(status[0] & 1 == 1)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Asks the processor to start loading the cache line at `address`
/// and returns at once (a prefetch instruction: it retires without
/// waiting for the line, so a loop can have more misses in flight than
/// its loads alone would). Only a hint: nothing is read through
/// `address`, which may be anything; the instruction never faults (a
/// page not mapped is skipped). On processors other than x86-64 and
/// AArch64 it does nothing.
#[inline(always)]
pub fn prefetch(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads no memory architecturally and cannot
    // fault, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast());
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as for x86-64: `prfm` is a hint that never faults, and
    // it touches no register but its address operand, no stack, no flags.
    unsafe {
        std::arch::asm!(
            "prfm pldl1keep, [{address}]",
            address = in(reg) address,
            options(nostack, readonly, preserves_flags)
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = address;
}

/// See the Linux version: elsewhere every page counts as resident.
#[cfg(not(target_os = "linux"))]
pub fn is_resident(_base: *const u8, _at: usize) -> io::Result<bool> {
    Ok(true)
}

/// Asks the kernel to start reading `len` bytes of `file` at `offset`
/// into the page cache (`posix_fadvise(WILLNEED)`) and returns without
/// waiting. Many such calls keep the disk's queue full, where page
/// faults would be served one after another. Only a hint: systems
/// without it do nothing.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
pub fn will_need(file: &File, offset: u64, len: u64) -> io::Result<()> {
    // A length of 0 would mean "to the end of the file".
    let Some(len) = std::num::NonZeroU64::new(len) else {
        return Ok(());
    };
    rustix::fs::fadvise(file, offset, Some(len), rustix::fs::Advice::WillNeed)
        .map_err(io::Error::from)
}

/// See the Linux version.
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
pub fn will_need(_file: &File, _offset: u64, _len: u64) -> io::Result<()> {
    Ok(())
}

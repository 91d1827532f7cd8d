//! A small batch right after a warm one skips the residency sample (eight
//! `mincore` calls cost as much as copying 64 windows), and a file that
//! goes cold meanwhile loses its planner for that one batch only: the
//! batch is slow, so the next one is sampled and planned again
//! (`array/reads.rs`, "Residency"). Planning is seen from outside by what
//! it allocates (the plan of the batch's pages), with a counting
//! allocator: this test is alone in its binary, so nothing else allocates.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

#[cfg(target_os = "linux")]
use common::cached_pages;
use common::{TempDir, npy_bytes, write_file};
use npy_core::Order;
use npy_mmap::Advice;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; the
// counter only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocations `f` makes.
fn allocations(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    f();
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[cfg(target_os = "linux")]
#[test]
fn a_file_evicted_between_small_batches_is_planned_again_by_the_second() {
    const LENGTH: usize = 1024;
    let dir = TempDir::new("gather-residency");
    // 64 MiB of u32 tokens, token i = i.
    let len = 16usize << 20;
    let data: Vec<u8> = (0..len as u32).flat_map(|v| v.to_le_bytes()).collect();
    let path = write_file(
        &dir,
        "tokens.npy",
        &npy_bytes("<u4", Order::C, &[len], &data),
    );
    drop(data);
    let mut state = 11u64;
    let mut batch = || -> Vec<usize> {
        (0..64)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % (len - LENGTH) as u64) as usize
            })
            .collect()
    };
    let batches: Vec<Vec<usize>> = (0..4).map(|_| batch()).collect();
    let array = npy_mmap::open(&path).unwrap();
    // Page faults read only their own pages (no read-around, which with a
    // large `read_ahead_kb` would bring the whole file in with one batch).
    array.advise(Advice::Random).unwrap();
    let mut out = vec![0u8; 64 * LENGTH * 4];
    let mut gather =
        |starts: &[usize]| allocations(|| array.gather_windows(starts, LENGTH, &mut out).unwrap());
    // The file was just written: warm. The first batch of a mapping is
    // sampled; the second, after a warm one, is not.
    gather(&batches[0]);
    let unplanned = gather(&batches[1]);

    let file = std::fs::File::open(&path).unwrap();
    file.sync_all().unwrap();
    array.advise(Advice::DontNeed).unwrap();
    rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed).unwrap();
    assert!(
        cached_pages(&file).iter().filter(|&&cached| cached).count() < 64,
        "the file could not be evicted from the page cache here (tmpfs?): this test needs a disk"
    );
    let first = gather(&batches[2]);
    let second = gather(&batches[3]);
    assert_eq!(
        first, unplanned,
        "the first batch after a warm one skips the sample, so it is not planned"
    );
    assert!(
        second > unplanned,
        "the batch after a cold one is sampled and planned ({second} allocations, as many as \
         an unplanned batch)"
    );
    let tokens: Vec<u32> = out
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    for (window, &start) in tokens.chunks_exact(LENGTH).zip(&batches[3]) {
        assert!(window.iter().zip(start as u32..).all(|(&t, e)| t == e));
    }
}

//! The planned gather's memory is bounded whatever the batch size: a cold
//! gather of 1,000,000 indices plans them 16 Ki at a time, so its own heap
//! use stays under a fixed buffer (documented in `array/gather.rs`: 16 Ki
//! spans and ranges, 640 KiB at most). A counting allocator measures the
//! peak of this one test (alone in its binary, so nothing else allocates).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{TempDir, npy_bytes, write_file};
use npy_core::Order;

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; the
// counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn a_million_index_cold_gather_stays_within_its_buffer() {
    let dir = TempDir::new("gather-memory");
    let len = 1 << 22; // 32 MiB of u64
    let data: Vec<u8> = (0..len as u64).flat_map(|v| v.to_le_bytes()).collect();
    let path = write_file(&dir, "a.npy", &npy_bytes("<u8", Order::C, &[len], &data));
    drop(data);
    let mut state = 7u64;
    let indices: Vec<usize> = (0..1_000_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % len as u64) as usize
        })
        .collect();
    let mut out = vec![0u64; indices.len()];
    let file = std::fs::File::open(&path).unwrap();
    file.sync_all().unwrap();
    rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed).unwrap();
    let array = npy_mmap::open(&path).unwrap();

    let before = CURRENT.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    array.gather(&indices, &mut out).unwrap();
    let used = PEAK.load(Ordering::Relaxed) - before;

    assert!(indices.iter().zip(&out).all(|(&i, &v)| v == i as u64));
    // The plan of one slice: 16 Ki spans and at most as many ranges, 16
    // bytes each, and the sort's scratch; not a byte per index.
    assert!(
        used < 1 << 20,
        "the gather allocated {used} bytes at its peak"
    );
    assert!(
        used > 0,
        "a cold gather plans (it allocated nothing: was it cold?)"
    );
}

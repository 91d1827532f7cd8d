//! A stream whose header claims a terabyte must fail without allocating it.
//!
//! This test binary counts its heap: the peak must stay near the first read
//! chunk, not the claimed size.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use npy_core::io::{ReadOptions, read_npy};
use npy_core::{Element, Error, Header, Order};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        PEAK.fetch_max(live, Ordering::SeqCst);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn a_short_stream_claiming_a_terabyte_allocates_little() {
    let header = Header {
        dtype: f64::dtype(),
        order: Order::C,
        shape: vec![1 << 37], // 1 TiB of f64
    };
    let mut file = header.to_bytes(None).unwrap();
    file.extend_from_slice(&[0; 100]);

    PEAK.store(LIVE.load(Ordering::SeqCst), Ordering::SeqCst);
    let before = PEAK.load(Ordering::SeqCst);
    let err = read_npy(file.as_slice(), &ReadOptions::default()).unwrap_err();
    let peak = PEAK.load(Ordering::SeqCst) - before;

    assert!(
        matches!(err, Error::TruncatedData { read: 12, count, .. } if count == 1 << 37),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("Failed to read all data for array. Expected (137438953472,) = 137438953472 elements, could only read 12 elements."),
        "{err}"
    );
    assert!(peak < 100 << 20, "peak allocation {peak} bytes");
}

//! A counting global allocator for resource-bound tests: `measure` runs a
//! closure and reports the peak of live heap bytes it added and how many
//! allocations it made, counting only the calling thread (so tests running
//! in parallel in the same binary do not disturb each other).
//!
//! A test binary includes it with `mod bounds_alloc;`, which also installs
//! it as that binary's global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

/// Heap use of the measuring thread.
struct Usage {
    active: Cell<bool>,
    live: Cell<isize>,
    peak: Cell<isize>,
    allocations: Cell<usize>,
}

thread_local! {
    // `const` initialisation: no lazy init and no destructor, so using it
    // from inside the allocator cannot recurse into the allocator.
    static USAGE: Usage = const {
        Usage {
            active: Cell::new(false),
            live: Cell::new(0),
            peak: Cell::new(0),
            allocations: Cell::new(0),
        }
    };
}

fn record(delta: isize, allocation: bool) {
    // `try_with`: the allocator also runs while thread-locals are torn down.
    let _ = USAGE.try_with(|u| {
        if u.active.get() {
            let live = u.live.get() + delta;
            u.live.set(live);
            u.peak.set(u.peak.get().max(live));
            if allocation {
                u.allocations.set(u.allocations.get() + 1);
            }
        }
    });
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size() as isize, true);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size() as isize, true);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size as isize - layout.size() as isize, true);
        // SAFETY: `ptr` came from this allocator with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        record(-(layout.size() as isize), false);
        // SAFETY: `ptr` came from this allocator with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What a measured closure cost on the heap.
#[derive(Clone, Copy, Debug)]
pub struct Cost {
    /// Most heap bytes live at once, beyond what was live before.
    pub peak_bytes: usize,
    /// Number of allocations and reallocations.
    pub allocations: usize,
}

/// Runs `f` on this thread and reports its heap cost.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Cost) {
    USAGE.with(|u| {
        u.live.set(0);
        u.peak.set(0);
        u.allocations.set(0);
        u.active.set(true);
    });
    let out = f();
    let cost = USAGE.with(|u| {
        u.active.set(false);
        Cost {
            peak_bytes: u.peak.get().max(0) as usize,
            allocations: u.allocations.get(),
        }
    });
    (out, cost)
}

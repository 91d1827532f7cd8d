//! What the last batch read through a mapping showed about its pages, so
//! that the next small batch can skip the residency sample
//! ([`super::reads`]'s module docs say why and what it costs a file that
//! goes cold).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The most items (elements, spans, rows) of a batch that skips the sample
/// after a batch copied at memory speed. Bigger batches are always
/// sampled: the sample costs them little (eight system calls against at
/// least a thousand copies), and a cold batch copied unplanned would cost
/// them a page fault per item, one after another.
pub(crate) const UNSAMPLED_BATCH: usize = 1024;

/// What the last batch of a mapping showed about its pages: whether it was
/// copied at memory speed, unplanned. Then the next small batch skips the
/// residency sample (the module docs say why). Shared by the threads that
/// read one mapping; only a hint, so relaxed loads and stores.
#[derive(Debug, Default)]
pub(crate) struct Residency {
    warm: AtomicBool,
}

impl Residency {
    /// Whether a batch of `items` may skip the sample.
    pub(crate) fn may_skip_sample(&self, items: usize) -> bool {
        items <= UNSAMPLED_BATCH && self.warm.load(Ordering::Relaxed)
    }

    /// Records a batch of `items` items and `bytes` bytes, `planned` or
    /// not, copied in `elapsed`: warm when it was not planned and took no
    /// longer than a copy from memory could ([`at_memory_speed`]).
    pub(crate) fn record(&self, items: usize, bytes: usize, planned: bool, elapsed: Duration) {
        let warm = !planned && at_memory_speed(items, bytes, elapsed);
        self.warm.store(warm, Ordering::Relaxed);
    }
}

/// Whether copying `items` spans of `bytes` in all took no longer than a
/// copy from memory could: 50 µs, plus 1 µs per span (a TLB and a cache
/// miss take about 0.1 µs), plus 1 ns per byte (1 GB/s; a warm copy runs
/// at 5-10 GB/s). A read from a disk takes 20 µs (fast NVMe) to 1 ms, so a
/// batch that waited for a few is slower; a batch that is slow for other
/// reasons (the thread was descheduled) only makes the next one sampled.
fn at_memory_speed(items: usize, bytes: usize, elapsed: Duration) -> bool {
    let items = u64::try_from(items).unwrap_or(u64::MAX);
    let bytes = u64::try_from(bytes).unwrap_or(u64::MAX);
    let limit_ns = 50_000u64
        .saturating_add(items.saturating_mul(1_000))
        .saturating_add(bytes);
    elapsed <= Duration::from_nanos(limit_ns)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Residency, UNSAMPLED_BATCH, at_memory_speed};

    #[test]
    fn memory_speed_allows_a_copy_and_no_disk_waits() {
        // 64 windows of 2 KiB: warm copies take 10-30 µs.
        let (items, bytes) = (64, 64 * 2048);
        assert!(at_memory_speed(items, bytes, Duration::from_micros(30)));
        // One read from a slow disk (1 ms), or a few from a fast one.
        assert!(!at_memory_speed(items, bytes, Duration::from_millis(1)));
        // Bigger batches get proportionally longer.
        assert!(at_memory_speed(1000, 1 << 30, Duration::from_millis(500)));
        // No overflow at the extremes.
        assert!(at_memory_speed(
            usize::MAX,
            usize::MAX,
            Duration::from_secs(3600)
        ));
    }

    #[test]
    fn only_small_batches_after_a_warm_unplanned_one_skip_the_sample() {
        let residency = Residency::default();
        let fast = Duration::from_micros(10);
        assert!(!residency.may_skip_sample(1), "a fresh mapping samples");
        residency.record(64, 1 << 17, false, fast);
        assert!(residency.may_skip_sample(UNSAMPLED_BATCH));
        assert!(!residency.may_skip_sample(UNSAMPLED_BATCH + 1));
        residency.record(64, 1 << 17, false, Duration::from_millis(5));
        assert!(!residency.may_skip_sample(64), "after a slow batch");
        residency.record(64, 1 << 17, false, fast);
        residency.record(64, 1 << 17, true, fast);
        assert!(!residency.may_skip_sample(64), "after a planned batch");
    }
}

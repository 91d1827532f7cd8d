//! The read planner: merged ranges cover every span, are sorted, disjoint,
//! aligned, and never closer than the gap; `locate` finds each span.

// One-range plans are the point of several checks.
#![allow(clippy::single_range_in_vec_init)]

use npy_core::plan::{Coalesce, locate};
use proptest::prelude::*;

#[test]
fn edges() {
    let pages = Coalesce {
        align: 4096,
        max_gap: 0,
    };
    assert_eq!(pages.ranges(Vec::<std::ops::Range<u64>>::new()), []);
    assert_eq!(pages.ranges([5..5, 9..9]), [], "empty spans need nothing");
    // A span straddling a page boundary takes both pages.
    assert_eq!(pages.ranges([4090..4100]), [0..8192]);
    // Touching pages merge; a one-page gap does not at max_gap 0.
    assert_eq!(pages.ranges([0..1, 4096..4097]), [0..8192]);
    assert_eq!(pages.ranges([0..1, 8192..8193]), [0..4096, 8192..12288]);
    // Saturation near the end of u64 instead of wrapping.
    assert_eq!(pages.ranges([u64::MAX - 10..u64::MAX - 1]).len(), 1);
    // Alignment 0 counts as 1.
    let exact = Coalesce {
        align: 0,
        max_gap: 0,
    };
    assert_eq!(exact.ranges([3..5, 1..2, 2..3]), [1..5]);
    assert_eq!(locate(&[1..5], &(2..4)), Some((0, 1)));
    assert_eq!(locate(&[1..5], &(4..6)), None);
    assert_eq!(locate(&[], &(4..6)), None);
}

proptest! {
    #[test]
    fn merged_ranges_cover_every_span_and_nothing_is_merged_twice(
        spans in proptest::collection::vec((0u64..1_000_000, 0u64..5000), 0..200),
        align in prop_oneof![Just(1u64), Just(512), Just(4096)],
        max_gap in 0u64..10_000,
    ) {
        let spans: Vec<std::ops::Range<u64>> =
            spans.into_iter().map(|(start, len)| start..start + len).collect();
        let plan = Coalesce { align, max_gap };
        let ranges = plan.ranges(spans.iter().cloned());
        for pair in ranges.windows(2) {
            prop_assert!(pair[0].end + max_gap < pair[1].start, "{:?}", pair);
        }
        for range in &ranges {
            prop_assert!(range.start < range.end);
            prop_assert_eq!(range.start % align, 0);
            prop_assert_eq!(range.end % align, 0);
        }
        for span in spans.iter().filter(|s| s.start < s.end) {
            let (at, offset) = locate(&ranges, span).expect("covered");
            prop_assert_eq!(ranges[at].start + offset as u64, span.start);
        }
        prop_assert!(ranges.len() <= spans.len());
    }
}

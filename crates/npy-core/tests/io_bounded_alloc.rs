//! A stream whose header claims a terabyte must fail without allocating it.
//!
//! This test binary counts its heap: the peak must stay near the first read
//! chunk, not the claimed size.

mod bounds_alloc;

use bounds_alloc::measure;
use npy_core::io::{ReadOptions, read_npy};
use npy_core::{Element, Error, Header, Order};

#[test]
fn a_short_stream_claiming_a_terabyte_allocates_little() {
    let header = Header {
        dtype: f64::dtype(),
        order: Order::C,
        shape: vec![1 << 37], // 1 TiB of f64
    };
    let mut file = header.to_bytes(None).unwrap();
    file.extend_from_slice(&[0; 100]);

    let (result, cost) = measure(|| read_npy(file.as_slice(), &ReadOptions::default()));
    let err = result.unwrap_err();
    let peak = cost.peak_bytes;

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
    assert!(cost.allocations < 100, "{cost:?}");
}

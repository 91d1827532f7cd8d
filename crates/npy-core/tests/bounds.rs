//! Resource bounds on hostile input: each case is refused with a typed
//! error, with heap use bounded by a small constant or a small multiple of
//! the input (measured by a counting allocator, see `bounds_alloc`), and
//! with work bounded: streams are read no further than the bytes present
//! (a counting reader), parsing is linear (allocations counted; a generous
//! wall-clock bound guards against hangs without being a speed claim).
//!
//! Complements `header.rs` (`huge_length_field_fails_fast_without_allocating`,
//! `pathological_headers_are_rejected_quickly`, `huge_dicts_are_checked_in_linear_time`),
//! which check the errors, and `io_bounded_alloc.rs` (a short stream claiming
//! a terabyte of data).

mod bounds_alloc;

use std::io::Read;
use std::time::{Duration, Instant};

use bounds_alloc::{Cost, measure};
use npy_core::{DType, Error, Header, ParseOptions, ReadOptions, read_npy};

/// Far above the milliseconds these take in a debug build on a loaded
/// machine; only a hang or super-linear blow-up can exceed it.
const GENEROUS: Duration = Duration::from_secs(5);

/// Counts the bytes a reader hands out.
struct Counted<'a> {
    bytes: &'a [u8],
    read: usize,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.bytes.read(buf)?;
        self.read += n;
        Ok(n)
    }
}

fn unlimited() -> ParseOptions {
    ParseOptions {
        max_header_size: usize::MAX,
        ..Default::default()
    }
}

/// A version 3.0 file prefix around `text` (no padding, no newline).
fn v3(text: &str) -> Vec<u8> {
    let mut out = b"\x93NUMPY\x03\x00".to_vec();
    out.extend_from_slice(&u32::try_from(text.len()).unwrap().to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out
}

/// Parses `bytes` with the slice parser and the stream reader under
/// `options`; both must fail. Returns the slice error and the larger cost.
fn refuse(bytes: &[u8], options: ParseOptions) -> (Error, Cost, usize) {
    let start = Instant::now();
    let (parsed, parse_cost) = measure(|| Header::parse(bytes, &options));
    let mut stream = Counted { bytes, read: 0 };
    let read_options = ReadOptions {
        parse: options,
        ..ReadOptions::default()
    };
    let (read, read_cost) = measure(|| read_npy(&mut stream, &read_options));
    assert!(start.elapsed() < GENEROUS, "{:?}", start.elapsed());
    let err = parsed.expect_err("the slice parser must refuse");
    assert!(read.is_err(), "the stream reader must refuse");
    assert!(stream.read <= bytes.len());
    let cost = Cost {
        peak_bytes: parse_cost.peak_bytes.max(read_cost.peak_bytes),
        allocations: parse_cost.allocations.max(read_cost.allocations),
    };
    (err, cost, stream.read)
}

#[test]
fn a_4_gib_header_length_on_a_100_byte_file() {
    let mut file = b"\x93NUMPY\x02\x00\xff\xff\xff\xff".to_vec();
    file.extend_from_slice(b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }");
    file.resize(100, b' ');

    // Default limit: refused from the 12-byte preamble, nothing else read.
    let (err, cost, read) = refuse(&file, ParseOptions::default());
    assert!(
        matches!(
            err,
            Error::HeaderTooLarge {
                length: 0xffff_ffff,
                max: 10_000
            }
        ),
        "{err:?}"
    );
    assert_eq!(read, 12);
    assert!(cost.peak_bytes < 4 << 10, "{cost:?}");

    // No limit at all: the header is only as long as the bytes that arrive.
    let (err, cost, read) = refuse(&file, unlimited());
    assert_eq!(
        err.to_string(),
        "EOF: reading array header, expected 4294967295 bytes got 88"
    );
    assert_eq!(read, 100);
    assert!(cost.peak_bytes < 128 << 10, "{cost:?}");
    assert!(cost.allocations < 64, "{cost:?}");
}

#[test]
fn shapes_whose_size_overflows() {
    let cases = [
        // Element count overflows usize.
        ("'<f8'", "(18446744073709551615, 2)"),
        // Element count fits, byte count does not.
        ("'<f8'", "(4611686018427387904,)"),
        // numpy's int64 product wraps this to 0 elements; we refuse it.
        ("'<f8'", "(4294967296, 4294967296)"),
        // Zero elements, but the strides would not be representable.
        ("'<f8'", "(0, 4611686018427387904, 4)"),
        // The itemsize is the multiplier that overflows.
        ("('<f8', (1048576, 1048576))", "(1048576, 1048576)"),
    ];
    for (descr, shape) in cases {
        let text = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}\n");
        let (err, cost, read) = refuse(&v3(&text), ParseOptions::default());
        assert!(
            matches!(err, Error::ArrayTooBig { .. } | Error::InvalidDescr { .. }),
            "{shape}: {err:?}"
        );
        assert_eq!(read, 12 + text.len(), "{shape}: header only, no data read");
        assert!(cost.peak_bytes < 16 << 10, "{shape}: {cost:?}");
    }
    // A dimension beyond usize, and one beyond any integer we read.
    for shape in ["(36893488147419103232,)", &format!("({},)", "9".repeat(60))] {
        let text = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}\n");
        let (err, cost, _) = refuse(&v3(&text), ParseOptions::default());
        assert!(
            matches!(
                err,
                Error::InvalidShape { .. } | Error::CannotParseHeader { .. }
            ),
            "{shape}: {err:?}"
        );
        assert!(cost.peak_bytes < 16 << 10, "{shape}: {cost:?}");
    }
}

#[test]
fn a_descr_nested_10_000_deep() {
    let depth = 10_000;
    let big = ParseOptions {
        max_header_size: 1 << 20,
        ..Default::default()
    };
    let nested_records = format!("{}'<i4'{}", "[('a', ".repeat(depth), ")]".repeat(depth));
    let nested_subarrays = format!("{}'<i4'{}", "(".repeat(depth), ", 2)".repeat(depth));
    let brackets = "[".repeat(depth);
    for descr in [&nested_records, &nested_subarrays, &brackets] {
        let text = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': (), }}\n");
        let bytes = v3(&text);
        let (err, cost, _) = refuse(&bytes, big);
        assert!(
            matches!(
                err,
                Error::CannotParseHeader {
                    reason: "too many nested brackets",
                    ..
                }
            ),
            "{err:?}"
        );
        // The error quotes the header: a few copies of the input at most.
        assert!(cost.peak_bytes < 8 * bytes.len() + (64 << 10), "{cost:?}");

        // The descr alone, through DType::parse.
        let start = Instant::now();
        let (parsed, cost) = measure(|| DType::parse(descr));
        assert!(start.elapsed() < GENEROUS);
        assert!(
            matches!(parsed, Err(npy_core::Error::InvalidDType { .. })),
            "{parsed:?}"
        );
        assert!(cost.peak_bytes < 8 * descr.len() + (64 << 10), "{cost:?}");
    }
}

#[test]
fn a_string_of_a_million_quotes() {
    let big = ParseOptions {
        max_header_size: 4 << 20,
        ..Default::default()
    };
    let quotes = "'".repeat(1_000_000);
    for text in [
        format!("{{'descr': {quotes}"),
        format!("{{'descr': {quotes}, 'fortran_order': False, 'shape': (), }}\n"),
        quotes.clone(),
        format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': (), }}\n",
            "\\'".repeat(500_000)
        ),
    ] {
        let bytes = v3(&text);
        let (err, cost, _) = refuse(&bytes, big);
        assert!(
            matches!(
                err,
                Error::CannotParseHeader { .. } | Error::InvalidDescr { .. }
            ),
            "{err:?}"
        );
        assert!(cost.peak_bytes < 8 * bytes.len(), "{cost:?}");
        // Linear work: allocations grow by doubling, not per quote.
        assert!(cost.allocations < 1_000, "{cost:?}");
    }
    // Under the default limit the same file is refused before it is read.
    let (err, cost, read) = refuse(&v3(&quotes), ParseOptions::default());
    assert!(matches!(err, Error::HeaderTooLarge { .. }), "{err:?}");
    assert_eq!(read, 12);
    assert!(cost.peak_bytes < 4 << 10, "{cost:?}");
}

#[test]
fn errors_quote_a_huge_header_briefly() {
    // 16 MB of header text, refused for what it is; the message names the
    // problem and the header's size, not all of it.
    let long = "x".repeat(16 << 20);
    let cases = [
        format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({long}, ), }}"),
        format!("{{'descr': '{long}', 'fortran_order': False, 'shape': (3,), }}"),
        format!("['{long}']"),
        format!("{{'descr': '<f8', 'fortran_order': False, 'shape': (3,), '{long}': 1}}"),
    ];
    for text in cases {
        let error = Header::parse(&v3(&text), &unlimited()).unwrap_err();
        let message = error.to_string();
        assert!(
            message.len() < 1000,
            "{} bytes: {}",
            message.len(),
            &message[..200]
        );
        assert!(message.contains("characters in all"), "{message}");
    }
}

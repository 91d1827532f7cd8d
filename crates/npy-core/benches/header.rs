//! Header parse/encode and dtype parse: the per-open cost of the format layer.
//!
//! Run: `cargo bench -p npy-core --bench header`.

use criterion::{Criterion, criterion_group, criterion_main};
use npy_core::{DType, Header, Order, ParseOptions};
use std::hint::black_box;

/// The header numpy writes for `np.save(f, np.zeros((1000, 1000)))`.
fn simple_header() -> Vec<u8> {
    let header = Header {
        dtype: DType::parse("'<f8'").expect("valid descr"),
        order: Order::C,
        shape: vec![1000, 1000],
    };
    header.to_bytes(None).expect("encodable")
}

/// A 50-field record header like `np.dtype([(f"field_{i}", "<f8") for i in range(50)])`.
fn record_descr() -> String {
    let fields: Vec<String> = (0..50).map(|i| format!("('field_{i}', '<f8')")).collect();
    format!("[{}]", fields.join(", "))
}

fn record_header() -> Vec<u8> {
    let header = Header {
        dtype: DType::parse(&record_descr()).expect("valid descr"),
        order: Order::C,
        shape: vec![1000],
    };
    header.to_bytes(None).expect("encodable")
}

fn bench_header(c: &mut Criterion) {
    let options = ParseOptions::default();
    let simple = simple_header();
    let record = record_header();
    c.bench_function("parse <f8 (1000, 1000)", |b| {
        b.iter(|| Header::parse(black_box(&simple), &options).expect("parses"))
    });
    c.bench_function("parse 50-field record", |b| {
        b.iter(|| Header::parse(black_box(&record), &options).expect("parses"))
    });
    let npy_core::ParsedHeader {
        header: simple_parsed,
        ..
    } = Header::parse(&simple, &options).expect("parses");
    let npy_core::ParsedHeader {
        header: record_parsed,
        ..
    } = Header::parse(&record, &options).expect("parses");
    c.bench_function("encode <f8 (1000, 1000)", |b| {
        b.iter(|| black_box(&simple_parsed).to_bytes(None).expect("encodes"))
    });
    c.bench_function("encode 50-field record", |b| {
        b.iter(|| black_box(&record_parsed).to_bytes(None).expect("encodes"))
    });
    let descr = record_descr();
    c.bench_function("dtype parse 50-field record", |b| {
        b.iter(|| DType::parse(black_box(&descr)).expect("parses"))
    });
}

criterion_group!(benches, bench_header);
criterion_main!(benches);

//! Object arrays: the restricted unpickler and the pickle writer, the cost
//! of `np.load(allow_pickle=True)` and `np.save` of `dtype=object`.
//!
//! Run: `cargo bench -p npy-core --bench pickle`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use npy_core::pickle::PyValue;
use npy_core::{DType, Header, NpyArray, Order, ReadOptions};
use std::hint::black_box;

/// 100,000 short strings and a few other values, as an object array.
fn object_array() -> NpyArray {
    let values = (0..100_000)
        .map(|i| match i % 10 {
            0 => PyValue::Int(i.into()),
            1 => PyValue::Float(i as f64 / 7.0),
            2 => PyValue::None,
            _ => PyValue::Str(format!("value {i}")),
        })
        .collect();
    let header = Header::new(DType::Object, Order::C, vec![100_000]);
    NpyArray::from_objects(header, values).expect("an object array")
}

fn bench_pickle(c: &mut Criterion) {
    let array = object_array();
    let mut file = Vec::new();
    npy_core::write_npy(&mut file, &array).expect("writes");
    let mut options = ReadOptions::default();
    options.parse.allow_pickle = true;
    let mut group = c.benchmark_group("object array of 100000 values");
    group.throughput(Throughput::Elements(100_000));
    group.bench_function("decode (read_npy, allow_pickle)", |b| {
        b.iter(|| npy_core::read_npy(black_box(&file[..]), &options).expect("reads"))
    });
    group.bench_function("encode (write_npy)", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(file.len());
            npy_core::write_npy(&mut out, black_box(&array)).expect("writes");
            out
        })
    });
    group.finish();
}

criterion_group!(benches, bench_pickle);
criterion_main!(benches);

//! Typed views over bytes and byte-order conversion: the in-memory costs
//! under every mapped or loaded array.
//!
//! Run: `cargo bench -p npy-core --bench view`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use npy_core::io::AlignedBytes;
use npy_core::swap::convert_byte_order;
use npy_core::{ArrayView, ByteOrder, DType, Order};
use std::hint::black_box;

/// 16 MiB of float64: bigger than the caches, small enough to bench quickly.
const LEN: usize = 2 << 20;

fn bench_views(c: &mut Criterion) {
    let dtype = DType::parse("<f8").expect("valid descr");
    let bytes = AlignedBytes::copy_from(&vec![1u8; LEN * 8]);

    c.bench_function("view creation <f8 (2097152,)", |b| {
        b.iter(|| {
            ArrayView::<f64>::new(black_box(&bytes), &dtype, &[LEN], Order::C).expect("views")
        })
    });
    let shape_3d = [128, 128, 128];
    c.bench_function("view creation <f8 (128, 128, 128)", |b| {
        b.iter(|| {
            ArrayView::<f64>::new(black_box(&bytes), &dtype, &shape_3d, Order::C).expect("views")
        })
    });

    // Random scalar reads: the index arithmetic of `get`, data in cache or not.
    let view = ArrayView::<f64>::new(&bytes, &dtype, &[LEN], Order::C).expect("views");
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let indices: Vec<usize> = (0..4096)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % LEN as u64) as usize
        })
        .collect();
    let mut group = c.benchmark_group("random get");
    group.throughput(Throughput::Elements(indices.len() as u64));
    group.bench_function("1-d view, 4096 reads", |b| {
        b.iter(|| {
            let mut total = 0.0;
            for &i in &indices {
                total += *view.get([black_box(i)]).expect("in bounds");
            }
            total
        })
    });
    let view_3d = ArrayView::<f64>::new(&bytes, &dtype, &shape_3d, Order::C).expect("views");
    group.bench_function("3-d view, 4096 reads", |b| {
        b.iter(|| {
            let mut total = 0.0;
            for &i in &indices {
                let index = [i >> 14, (i >> 7) & 127, i & 127];
                total += *view_3d.get(black_box(&index)).expect("in bounds");
            }
            total
        })
    });
    group.bench_function("1-d view, 4096 reads, get(i)", |b| {
        b.iter(|| {
            let mut total = 0.0;
            for &i in &indices {
                total += *view.get(black_box(i)).expect("in bounds");
            }
            total
        })
    });
    group.bench_function("1-d view, 4096 reads, view[i]", |b| {
        b.iter(|| {
            let mut total = 0.0;
            for &i in &indices {
                total += view[black_box(i)];
            }
            total
        })
    });
    let slice = view.as_slice().expect("contiguous");
    group.bench_function("1-d slice, 4096 reads, slice[i] (the limit)", |b| {
        b.iter(|| {
            let mut total = 0.0;
            for &i in &indices {
                total += slice[black_box(i)];
            }
            total
        })
    });
    group.bench_function("3-d view, 4096 reads, get([i, j, k])", |b| {
        b.iter(|| {
            let mut total = 0.0;
            for &i in &indices {
                let index = [i >> 14, (i >> 7) & 127, i & 127];
                total += *view_3d.get(black_box(index)).expect("in bounds");
            }
            total
        })
    });
    group.finish();
}

/// Random reads of an array far larger than the caches and the TLB's reach:
/// a loop of `get`s against one `gather` of the same indices.
fn bench_gather(c: &mut Criterion) {
    // 1 GiB of float64, 1,000,000 random indices.
    const BIG: usize = 128 << 20;
    let dtype = DType::parse("<f8").expect("valid descr");
    let bytes = AlignedBytes::copy_from(&vec![1u8; BIG * 8]);
    let view = ArrayView::<f64>::new(&bytes, &dtype, &[BIG], Order::C).expect("views");
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let indices: Vec<usize> = (0..1_000_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % BIG as u64) as usize
        })
        .collect();
    let mut out = vec![0.0; indices.len()];
    let mut group = c.benchmark_group("random 1 GiB");
    group.sample_size(10);
    group.throughput(Throughput::Elements(indices.len() as u64));
    group.bench_function("get loop, 1000000 reads", |b| {
        b.iter(|| {
            for (slot, &i) in out.iter_mut().zip(&indices) {
                *slot = *view.get(i).expect("in bounds");
            }
            black_box(&out);
        })
    });
    group.bench_function("gather, 1000000 reads", |b| {
        b.iter(|| {
            view.gather(black_box(&indices), &mut out)
                .expect("in bounds")
        })
    });
    group.finish();
}

fn bench_swap(c: &mut Criterion) {
    let big_endian = DType::parse(">f8").expect("valid descr");
    let record = DType::parse("[('a', '>f8'), ('b', '>i4'), ('c', '|u1'), ('d', '>u2')]")
        .expect("valid descr");
    let mut data = AlignedBytes::copy_from(&vec![7u8; LEN * 8]);
    let mut group = c.benchmark_group("byte swap");
    group.throughput(Throughput::Bytes(data.len() as u64));
    // Each iteration swaps the buffer: the direction alternates, the work does not.
    group.bench_function(">f8 16 MiB in place", |b| {
        b.iter(|| convert_byte_order(&big_endian, black_box(&mut data), ByteOrder::Little))
    });
    group.bench_function("record (f8, i4, u1, u2) 16 MiB in place", |b| {
        b.iter(|| convert_byte_order(&record, black_box(&mut data), ByteOrder::Little))
    });
    group.finish();
}

criterion_group!(benches, bench_views, bench_gather, bench_swap);
criterion_main!(benches);

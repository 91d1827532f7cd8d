//! Mapped files: open (a 4 KiB and a 4 GiB sparse file must cost the same),
//! view creation, random scalar reads and a sequential sum of a warm
//! mapping beside the same sum over RAM (the physical limit).
//!
//! Run: `cargo bench -p npy-mmap --bench mmap`. Files go to the system
//! temporary directory and are removed afterwards; the 4 GiB one is sparse
//! (no disk space used).

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use npy_core::DType;
use npy_mmap::{CreateOptions, ReadWrite};

/// 256 MiB of float64 for the sums and reads: far beyond the caches.
const DENSE_LEN: usize = 32 << 20;

/// A directory removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        let dir = std::env::temp_dir().join(format!("npy-mmap-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn f8() -> DType {
    DType::parse("<f8").expect("valid descr")
}

/// The summation every sum here uses (eight accumulators, vectorized), so
/// the mapped and in-RAM figures differ only in where the data lives.
fn sum(values: &[f64]) -> f64 {
    let mut lanes = [0.0f64; 8];
    let chunks = values.chunks_exact(8);
    let rest: f64 = chunks.remainder().iter().sum();
    for chunk in chunks {
        for (lane, value) in lanes.iter_mut().zip(chunk) {
            *lane += value;
        }
    }
    lanes.iter().sum::<f64>() + rest
}

fn bench_open(c: &mut Criterion) {
    let scratch = Scratch::new();
    let small = scratch.0.join("small.npy");
    let sparse = scratch.0.join("sparse-4g.npy");
    // 128-byte header + 496 elements = 4 KiB; 4 GiB of sparse zeros.
    CreateOptions::new(f8(), [496])
        .preallocate(&small)
        .expect("create");
    CreateOptions::new(f8(), [1 << 29])
        .preallocate(&sparse)
        .expect("create");

    let mut group = c.benchmark_group("open (r)");
    group.bench_function("4 KiB file", |b| {
        b.iter(|| npy_mmap::open(black_box(&small)).expect("opens"))
    });
    group.bench_function("4 GiB sparse file", |b| {
        b.iter(|| npy_mmap::open(black_box(&sparse)).expect("opens"))
    });
    group.bench_function("4 GiB sparse file, r+", |b| {
        b.iter(|| npy_mmap::open_rw(black_box(&sparse)).expect("opens"))
    });
    group.finish();

    let array = npy_mmap::open(&sparse).expect("opens");
    c.bench_function("view creation, mapped 4 GiB", |b| {
        b.iter(|| black_box(&array).view::<f64>().expect("views"))
    });
}

fn bench_data(c: &mut Criterion) {
    let scratch = Scratch::new();
    let path = scratch.0.join("dense.npy");
    let mut array = CreateOptions::new(f8(), [DENSE_LEN])
        .create(&path)
        .expect("create");
    for (i, value) in array
        .view_mut::<f64>()
        .expect("view")
        .as_slice_mut()
        .expect("contiguous")
        .iter_mut()
        .enumerate()
    {
        *value = (i % 1024) as f64;
    }
    array.flush().expect("flush");
    drop::<npy_mmap::MappedArray<ReadWrite>>(array);

    let array = npy_mmap::open(&path).expect("opens");
    let view = array.view::<f64>().expect("view");
    let mapped = view.as_slice().expect("contiguous");
    let in_ram = mapped.to_vec();
    assert_eq!(sum(mapped), sum(&in_ram));

    let mut group = c.benchmark_group("sequential sum 256 MiB");
    group.throughput(Throughput::Bytes((DENSE_LEN * 8) as u64));
    group.sample_size(20);
    group.bench_function("warm mapping", |b| b.iter(|| sum(black_box(mapped))));
    group.bench_function("in RAM (limit)", |b| b.iter(|| sum(black_box(&in_ram))));
    group.bench_function("open + sum, warm file", |b| {
        b.iter(|| {
            let array = npy_mmap::open(&path).expect("opens");
            sum(array
                .view::<f64>()
                .expect("view")
                .as_slice()
                .expect("contiguous"))
        })
    });
    group.finish();

    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let indices: Vec<usize> = (0..4096)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % DENSE_LEN as u64) as usize
        })
        .collect();
    let mut group = c.benchmark_group("random scalar reads, warm 256 MiB mapping");
    group.throughput(Throughput::Elements(indices.len() as u64));
    group.bench_function("view.get", |b| {
        b.iter(|| {
            let mut total = 0.0;
            for &i in &indices {
                total += *view.get([black_box(i)]).expect("in bounds");
            }
            total
        })
    });
    group.bench_function("slice index (floor)", |b| {
        b.iter(|| {
            let mut total = 0.0;
            for &i in &indices {
                total += mapped[black_box(i)];
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, bench_open, bench_data);
criterion_main!(benches);

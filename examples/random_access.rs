//! Random access into a big `.npy` file: open it (header only), read random
//! elements, report nanoseconds per read and the process's peak RSS.
//!
//! ```sh
//! cargo run --release --example random_access -- --create 8G      # sparse 8 GiB file, removed after
//! cargo run --release --example random_access -- data/big.npy      # any file; typed reads for float64
//! ```

mod common;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use npy_mmap::{Advice, CreateOptions, MappedArray, OpenOptions, ReadOnly};

use common::{COLS, XorShift};

/// Open a big .npy file memory-mapped and time random element reads.
#[derive(Parser)]
#[command(name = "random_access")]
struct Args {
    /// The .npy file to read (or use --create).
    file: Option<PathBuf>,
    /// Create a sparse float64 file of this size first (8G, 512M, ...); it
    /// reads as zeros and takes no disk space.
    #[arg(long, value_parser = common::parse_size, conflicts_with = "file")]
    create: Option<u64>,
    /// Directory for --create [default: a fresh directory under the system temp dir].
    #[arg(long, requires = "create")]
    dir: Option<PathBuf>,
    /// Keep the --create file.
    #[arg(long, requires = "create")]
    keep: bool,
    /// Random reads per pass.
    #[arg(long, default_value_t = 1_000_000)]
    reads: usize,
    /// Access-pattern hint given to the kernel when mapping.
    #[arg(long, value_enum, default_value_t = Hint::Random)]
    advice: Hint,
}

#[derive(Clone, Copy, ValueEnum)]
enum Hint {
    /// No read-around: each read faults one page (best for sparse access).
    Random,
    /// The kernel's default read-around.
    Normal,
    /// Fault the whole file in from the open on (Linux 5.14+), a thread
    /// running ahead of the reads: the open still returns at once.
    Populate,
}

impl Hint {
    fn advice(self) -> Advice {
        match self {
            Hint::Random => Advice::Random,
            Hint::Normal => Advice::Normal,
            Hint::Populate => Advice::PopulateRead,
        }
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    let (path, cleanup) = match (&args.file, args.create) {
        (Some(file), None) => (file.clone(), None),
        (None, Some(size)) => {
            let (dir, made_dir) = common::work_dir(args.dir.as_deref(), "random-access")?;
            let path = dir.join("random_access.npy");
            let rows = usize::try_from((size / (COLS as u64 * 8)).max(1))?;
            let start = Instant::now();
            CreateOptions::new(common::native_f8(), [rows, COLS])
                .preallocate(&path)
                .with_context(|| format!("creating {}", path.display()))?;
            println!(
                "created sparse {} ({rows}, {COLS}) float64 in {:.3} ms",
                path.display(),
                start.elapsed().as_secs_f64() * 1e3
            );
            let cleanup = (!args.keep).then_some((dir, made_dir));
            (path, cleanup)
        }
        _ => bail!("give a FILE or --create SIZE (see --help)"),
    };

    // Opening reads the header only: time many opens, report the median.
    let mut opens: Vec<f64> = (0..200)
        .map(|_| -> Result<f64> {
            let start = Instant::now();
            let array = npy_mmap::open(&path)?;
            let seconds = start.elapsed().as_secs_f64();
            drop(array);
            Ok(seconds * 1e9)
        })
        .collect::<Result<_>>()?;
    let open_ns = common::median_ns_per_op(&mut opens);

    let array = OpenOptions::new()
        .advice(args.advice.advice())
        .open(&path)?;
    println!(
        "{}: dtype {}, shape {:?}, {} of data; open (header only) {:.1} us median",
        path.display(),
        array.dtype().descr(),
        array.shape(),
        common::human(array.bytes().len() as u64),
        open_ns / 1e3
    );
    if array.bytes().is_empty() {
        bail!("the array is empty: nothing to read");
    }

    let native_f8 = array.view::<f64>().is_ok();
    for pass in ["cold", "warm"] {
        let ns = if native_f8 {
            typed_pass(&array, args.reads)?
        } else {
            byte_pass(&array, args.reads)
        };
        println!(
            "  {pass}: {ns:>8.1} ns/read  ({} random {}, median of 1000-read batches)",
            args.reads,
            if native_f8 {
                "view.get(&[..]) f64 reads"
            } else {
                "element byte reads"
            }
        );
    }
    if native_f8 {
        let ns = slice_pass(&array, args.reads)?;
        println!(
            "  baseline: {ns:>8.1} ns/read  (flat index into the raw &[f64] slice, same count)"
        );
    }
    println!("  {}", common::rss_report());

    drop(array);
    if let Some((dir, made_dir)) = cleanup {
        common::clean_up(&path, &dir, made_dir)?;
        println!("removed {} (use --keep to keep it)", path.display());
    }
    Ok(())
}

/// Flat element index → multi-index for `shape` (C order, logical).
fn unravel(mut flat: usize, shape: &[usize], out: &mut [usize]) {
    for (axis, &dim) in shape.iter().enumerate().rev() {
        out[axis] = flat % dim;
        flat /= dim;
    }
}

/// Times `reads` random `view.get` calls; returns median ns per read.
fn typed_pass(array: &MappedArray<ReadOnly>, reads: usize) -> Result<f64> {
    const BATCH: usize = 1000;
    let view = array.view::<f64>()?;
    let shape = view.shape().to_vec();
    let ndim = shape.len();
    let mut rng = XorShift::new(reads as u64);
    let mut indices = vec![0usize; BATCH * ndim];
    let mut batches = Vec::with_capacity(reads / BATCH + 1);
    let mut sum = 0.0;
    for done in (0..reads).step_by(BATCH) {
        let n = BATCH.min(reads - done);
        for index in indices.chunks_exact_mut(ndim.max(1)).take(n) {
            unravel(rng.below(view.len()), &shape, &mut index[..ndim]);
        }
        let start = Instant::now();
        for index in indices.chunks_exact(ndim.max(1)).take(n) {
            sum += *view.get(&index[..ndim]).context("in bounds")?;
        }
        batches.push(start.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    std::hint::black_box(sum);
    Ok(common::median_ns_per_op(&mut batches))
}

/// The same reads straight from the slice (flat index), as a baseline.
fn slice_pass(array: &MappedArray<ReadOnly>, reads: usize) -> Result<f64> {
    const BATCH: usize = 1000;
    let view = array.view::<f64>()?;
    let slice = view.as_slice().context("the whole array is contiguous")?;
    let mut rng = XorShift::new(reads as u64);
    let mut flat = vec![0usize; BATCH];
    let mut batches = Vec::with_capacity(reads / BATCH + 1);
    let mut sum = 0.0;
    for done in (0..reads).step_by(BATCH) {
        let n = BATCH.min(reads - done);
        flat[..n]
            .iter_mut()
            .for_each(|k| *k = rng.below(slice.len()));
        let start = Instant::now();
        for &k in &flat[..n] {
            sum += slice[k];
        }
        batches.push(start.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    std::hint::black_box(sum);
    Ok(common::median_ns_per_op(&mut batches))
}

/// For dtypes other than native float64: read one random element's bytes.
fn byte_pass(array: &MappedArray<ReadOnly>, reads: usize) -> f64 {
    const BATCH: usize = 1000;
    let bytes = array.bytes();
    let itemsize = array.dtype().itemsize().max(1);
    let count = bytes.len() / itemsize;
    let mut rng = XorShift::new(reads as u64);
    let mut flat = vec![0usize; BATCH];
    let mut batches = Vec::with_capacity(reads / BATCH + 1);
    let mut checksum = 0u64;
    for done in (0..reads).step_by(BATCH) {
        let n = BATCH.min(reads - done);
        flat[..n]
            .iter_mut()
            .for_each(|k| *k = rng.below(count) * itemsize);
        let start = Instant::now();
        for &at in &flat[..n] {
            checksum =
                checksum.wrapping_add(bytes[at..at + itemsize].iter().map(|&b| u64::from(b)).sum());
        }
        batches.push(start.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    std::hint::black_box(checksum);
    common::median_ns_per_op(&mut batches)
}

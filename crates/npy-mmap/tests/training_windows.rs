//! Batches of windows (`gather_windows`): runs of rows from random starts,
//! as a training loader draws them, from strict and foreign mappings.

mod common;

use common::TempDir;
#[cfg(target_os = "linux")]
use common::cached_pages;
use npy_core::{ArrayView, Order};
use npy_mmap::{ErrorKind, ForeignMode, OpenOptions};

fn tokens(dir: &TempDir, n: u32) -> std::path::PathBuf {
    let path = dir.join("tokens.npy");
    npy_mmap::save(&path, &(0..n).collect::<Vec<u32>>()[..]).unwrap();
    path
}

fn as_u32(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

#[test]
fn windows_at_the_ends_overlapping_and_repeated_are_numpys_slices() {
    let dir = TempDir::new("windows-ends");
    let path = tokens(&dir, 10_000);
    let strict = npy_mmap::open(&path).unwrap();
    let foreign = OpenOptions::new()
        .open_foreign(&path, ForeignMode::ReadOnly)
        .unwrap();
    let starts = [0, 8_999, 10_000 - 64, 5, 5, 40, 0];
    let mut expected = Vec::new();
    for &start in &starts {
        expected.extend(start as u32..start as u32 + 64);
    }
    let mut out = vec![0u8; starts.len() * 64 * 4];
    strict.gather_windows(&starts, 64, &mut out).unwrap();
    assert_eq!(as_u32(&out), expected);
    out.fill(0);
    foreign.gather_windows(&starts, 64, &mut out).unwrap();
    assert_eq!(as_u32(&out), expected);
    // Prefetching and releasing change no byte (what they do to the page
    // cache: `prefetch_reads_the_windows_of_a_cold_file` below).
    strict.prefetch_windows(&starts, 64).unwrap();
    foreign.prefetch_windows(&starts, 64).unwrap();
    foreign.release_windows(&starts, 64).unwrap();
    out.fill(0);
    strict.gather_windows(&starts, 64, &mut out).unwrap();
    assert_eq!(as_u32(&out), expected);
    // An empty batch, and windows of no rows.
    strict.gather_windows(&[], 64, &mut []).unwrap();
    strict.gather_windows(&[3, 10_000], 0, &mut []).unwrap();
}

#[test]
fn a_window_past_the_end_is_numpys_error_and_nothing_is_written() {
    let dir = TempDir::new("windows-past");
    let path = tokens(&dir, 1000);
    let strict = npy_mmap::open(&path).unwrap();
    let foreign = OpenOptions::new()
        .open_foreign(&path, ForeignMode::ReadOnly)
        .unwrap();
    for (starts, message) in [
        (
            vec![0, 990],
            "index 1000 is out of bounds for axis 0 with size 1000",
        ),
        (
            vec![1000],
            "index 1000 is out of bounds for axis 0 with size 1000",
        ),
        (
            vec![5000],
            "index 5000 is out of bounds for axis 0 with size 1000",
        ),
        (vec![usize::MAX], "out of bounds for axis 0 with size 1000"),
    ] {
        let mut out = vec![7u8; starts.len() * 16 * 4];
        let error = strict.gather_windows(&starts, 16, &mut out).unwrap_err();
        assert!(error.to_string().contains(message), "{error}");
        assert!(matches!(error.kind(), ErrorKind::Format(_)));
        let error = foreign.gather_windows(&starts, 16, &mut out).unwrap_err();
        assert!(error.to_string().contains(message), "{error}");
        assert!(out.iter().all(|&b| b == 7), "nothing written");
        assert!(strict.prefetch_windows(&starts, 16).is_err());
    }
    // A wrong output length.
    assert!(strict.gather_windows(&[0], 16, &mut [0u8; 10]).is_err());
}

#[test]
fn windows_of_rows_of_a_matrix_and_of_a_fortran_array() {
    let dir = TempDir::new("windows-rows");
    let c = dir.join("c.npy");
    let values: Vec<f64> = (0..60).map(f64::from).collect();
    npy_mmap::save(
        &c,
        &ArrayView::from_slice(&values, &[20, 3], Order::C).unwrap(),
    )
    .unwrap();
    let mut out = vec![0u8; 2 * 4 * 3 * 8];
    npy_mmap::open(&c)
        .unwrap()
        .gather_windows(&[16, 2], 4, &mut out)
        .unwrap();
    let got: Vec<f64> = out
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let expected: Vec<f64> = (48..60).chain(6..18).map(f64::from).collect();
    assert_eq!(got, expected);
    // Fortran order: rows run along the last axis (contiguous columns).
    let f = dir.join("f.npy");
    npy_mmap::save(
        &f,
        &ArrayView::from_slice(&values, &[3, 20], Order::Fortran).unwrap(),
    )
    .unwrap();
    let mut out = vec![0u8; 2 * 3 * 8];
    npy_mmap::open(&f)
        .unwrap()
        .gather_windows(&[19], 2, &mut out)
        .unwrap_err(); // 19 + 2 > 20
    npy_mmap::open(&f)
        .unwrap()
        .gather_windows(&[18], 2, &mut out)
        .unwrap();
    let got: Vec<f64> = out
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(got, (54..60).map(f64::from).collect::<Vec<_>>());
}

/// `prefetch_windows` asks the kernel to read the windows now: on a file
/// just evicted from the page cache, the windows' pages arrive without
/// anyone touching them, and a page far from every window stays out.
#[cfg(target_os = "linux")]
#[test]
fn prefetch_reads_the_windows_of_a_cold_file() {
    let dir = TempDir::new("windows-prefetch");
    // 32 MiB of u32 tokens; windows of 1,024 tokens (4 KiB) 8 MiB apart.
    let path = tokens(&dir, 8 << 20);
    let file = std::fs::File::open(&path).unwrap();
    rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed).unwrap();
    let starts = [0, 2 << 20, 4 << 20, (6 << 20) + 100];
    let page_of = |token: usize| (128 + 4 * token) / 4096;
    let far = page_of(7 << 20);
    assert!(
        cached_pages(&file).iter().all(|cached| !cached),
        "the file could not be evicted from the page cache here (tmpfs?): this test needs a disk"
    );
    let strict = npy_mmap::open(&path).unwrap();
    strict.prefetch_windows(&starts, 1024).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !starts.iter().all(|&s| {
        let cached = cached_pages(&file);
        cached[page_of(s)] && cached[page_of(s + 1023)]
    }) {
        assert!(
            std::time::Instant::now() < deadline,
            "the windows were not read within 10 s of the prefetch"
        );
        std::thread::yield_now();
    }
    assert!(
        !cached_pages(&file)[far],
        "a page far from every window was read too"
    );
    let mut out = vec![0u8; starts.len() * 1024 * 4];
    strict.gather_windows(&starts, 1024, &mut out).unwrap();
    let expected: Vec<u32> = starts
        .iter()
        .flat_map(|&s| s as u32..s as u32 + 1024)
        .collect();
    assert_eq!(as_u32(&out), expected);
}

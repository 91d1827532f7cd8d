//! Gathers that plan their I/O (`MappedArray::gather`, `gather_outer`,
//! `prefetch`): the same results as a plain loop of reads, cold (the file
//! evicted from the page cache) and warm, for every element size, both
//! orders, windows, sparse files, duplicates, unsorted and empty batches;
//! errors before anything is read or written.

mod common;

use std::fmt::Debug;
use std::path::Path;

use common::{TempDir, npy_bytes, write_file};
use npy_core::{DType, Element, Order};
use npy_mmap::{CreateOptions, ErrorKind, OpenOptions};

/// Drops the file's pages from the page cache (nothing may map it).
fn evict(path: &Path) {
    let file = std::fs::File::open(path).unwrap();
    file.sync_all().unwrap();
    rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed).unwrap();
}

/// Bytes that make every element of every size distinct.
fn pattern(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u64)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .rotate_left(17) as u8
                ^ (i >> 8) as u8
        })
        .collect()
}

/// Random indices of `shape` (xorshift), with repeats.
fn random_indices(shape: &[usize], count: usize, mut state: u64) -> Vec<Vec<usize>> {
    (0..count)
        .map(|_| {
            shape
                .iter()
                .map(|&d| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % d as u64) as usize
                })
                .collect()
        })
        .collect()
}

/// Gathers `indices` of the file at `path` cold, then warm, and checks
/// both against a loop of `view.get`.
fn check<T: Element + Copy + Default + PartialEq + Debug>(path: &Path, indices: &[Vec<usize>]) {
    for temperature in ["cold", "warm"] {
        if temperature == "cold" {
            evict(path);
        }
        let array = npy_mmap::open(path).unwrap();
        let mut got = vec![T::default(); indices.len()];
        array.gather(indices, &mut got).unwrap();
        let view = array.view::<T>().unwrap();
        let expected: Vec<T> = indices.iter().map(|i| *view.get(i).unwrap()).collect();
        assert_eq!(got, expected, "{temperature} {}", path.display());
    }
}

fn file_of(dir: &TempDir, descr: &str, order: Order, shape: &[usize]) -> std::path::PathBuf {
    let itemsize = DType::parse(descr).unwrap().itemsize();
    let len = shape.iter().product::<usize>() * itemsize;
    write_file(
        dir,
        &format!(
            "{}-{order:?}-{shape:?}.npy",
            descr.replace(['<', '>', '|'], "")
        ),
        &npy_bytes(descr, order, shape, &pattern(len)),
    )
}

#[test]
fn every_element_size_and_order_gathers_like_a_loop_cold_and_warm() {
    let dir = TempDir::new("gather-sizes");
    // 3 pages and more per array; elements straddle page boundaries where
    // the size does not divide 4096 (the data starts at byte 128).
    for order in [Order::C, Order::Fortran] {
        let shape = [97, 131];
        let indices = random_indices(&shape, 3000, 7);
        check::<u8>(&file_of(&dir, "|u1", order, &shape), &indices);
        check::<i16>(&file_of(&dir, "<i2", order, &shape), &indices);
        check::<i32>(&file_of(&dir, "<i4", order, &shape), &indices);
        check::<u64>(&file_of(&dir, "<u8", order, &shape), &indices);
        check::<zerocopy::byteorder::F64<zerocopy::BigEndian>>(
            &file_of(&dir, ">f8", order, &shape),
            &indices,
        );
        // 3-d, and a record of 12 bytes (straddles pages).
        let cube = [13, 17, 19];
        check::<u32>(
            &file_of(&dir, "<u4", order, &cube),
            &random_indices(&cube, 2000, 9),
        );
        check::<[u8; 12]>(&file_of(&dir, "|V12", order, &shape), &indices);
    }
}

#[test]
fn duplicates_unsorted_empty_and_zero_d() {
    let dir = TempDir::new("gather-edges");
    let path = file_of(&dir, "<u4", Order::C, &[5000]);
    check::<u32>(&path, &[vec![4999], vec![0], vec![4999], vec![17], vec![0]]);
    check::<u32>(&path, &[]);
    let scalar = file_of(&dir, "<u4", Order::C, &[]);
    check::<u32>(&scalar, &[vec![], vec![]]);
    // Any index form: fixed rank, plain usize.
    let array = npy_mmap::open(&path).unwrap();
    let mut out = [0u32; 2];
    array.gather(&[3usize, 1], &mut out).unwrap();
    let view = array.view::<u32>().unwrap();
    assert_eq!(out, [view[3], view[1]]);
    array.gather(&[[3usize], [1]], &mut out).unwrap();
    assert_eq!(out, [view[3], view[1]]);
}

#[test]
fn a_bad_index_fails_before_anything_is_read_or_written() {
    let dir = TempDir::new("gather-errors");
    let path = file_of(&dir, "<u4", Order::C, &[100, 3]);
    for temperature in ["cold", "warm"] {
        if temperature == "cold" {
            evict(&path);
        }
        let array = npy_mmap::open(&path).unwrap();
        let mut out = [7u32; 3];
        let error = array
            .gather(&[[0, 0], [99, 2], [100, 0]], &mut out)
            .unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("index 100 is out of bounds for axis 0 with size 100"),
            "{error}"
        );
        assert_eq!(out, [7; 3], "nothing written");
        let error = array.gather(&[[0, 0, 0]], &mut out[..1]).unwrap_err();
        assert!(matches!(
            error.kind(),
            ErrorKind::Format(npy_core::Error::IndexRank { .. })
        ));
        let error = array.gather(&[[0, 0]], &mut out).unwrap_err();
        assert!(matches!(
            error.kind(),
            ErrorKind::Format(npy_core::Error::OutputLength { .. })
        ));
        let error = array.gather(&[[0, 0]], &mut [0.0f32]).unwrap_err();
        assert!(matches!(
            error.kind(),
            ErrorKind::Format(npy_core::Error::TypeMismatch { .. })
        ));
        let error = array.gather_outer(&[3, 100], &mut [0u32; 6]).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("index 100 is out of bounds for axis 0 with size 100"),
            "{error}"
        );
        let error = array.prefetch::<u32, _>(&[[100, 0]]).unwrap_err();
        assert!(matches!(
            error.kind(),
            ErrorKind::Format(npy_core::Error::IndexOutOfBounds { .. })
        ));
        let error = array.prefetch_bytes(&[0..8, 0..1201]).unwrap_err();
        assert!(matches!(error.kind(), ErrorKind::BytesOutOfBounds { .. }));
    }
}

#[test]
fn outer_slices_gather_like_numpy_in_both_orders() {
    let dir = TempDir::new("gather-outer");
    for order in [Order::C, Order::Fortran] {
        // Rows of 4 KiB and a bit: each straddles a page boundary.
        let shape = [300, 1030];
        let path = file_of(&dir, "<f4", order, &shape);
        let rows = [299, 0, 17, 17, 150, 3];
        for temperature in ["cold", "warm"] {
            if temperature == "cold" {
                evict(&path);
            }
            let array = npy_mmap::open(&path).unwrap();
            let mut got = vec![0f32; rows.len() * 1030];
            array.gather_outer(&rows, &mut got).unwrap();
            let view = array.view::<f32>().unwrap();
            let mut expected = vec![0f32; rows.len() * 1030];
            view.gather_outer(&rows, &mut expected).unwrap();
            assert_eq!(
                got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                expected.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "{order:?} {temperature}"
            );
            assert_eq!(got[1030 + 5].to_bits(), view[[0, 5]].to_bits());
        }
    }
}

#[test]
fn windows_and_sparse_files_gather_like_a_loop() {
    let dir = TempDir::new("gather-window");
    // Sparse: created, never written but for a few elements (holes read as 0).
    let path = dir.join("sparse.npy");
    let mut array = CreateOptions::new(DType::parse("<u8").unwrap(), [4096, 64])
        .create(&path)
        .unwrap();
    array.view_mut::<u64>().unwrap()[[4000, 3]] = 42;
    array.view_mut::<u64>().unwrap()[[5, 63]] = 7;
    array.flush().unwrap();
    drop(array);
    let indices = random_indices(&[4096, 64], 5000, 3);
    check::<u64>(&path, &indices);
    evict(&path);
    let window = OpenOptions::new().rows(3990..4096).open(&path).unwrap();
    let mut out = [0u64; 3];
    window
        .gather(&[[10, 3], [0, 0], [10, 3]], &mut out)
        .unwrap();
    assert_eq!(out, [42, 0, 42]);
    let mut row = vec![0u64; 64];
    window.gather_outer(&[10], &mut row).unwrap();
    assert_eq!(row[3], 42);
}

#[test]
fn a_million_indices_are_planned_a_slice_at_a_time() {
    let dir = TempDir::new("gather-million");
    let path = file_of(&dir, "<u2", Order::C, &[1 << 21]);
    let indices: Vec<usize> = random_indices(&[1 << 21], 1_000_000, 11)
        .into_iter()
        .map(|i| i[0])
        .collect();
    evict(&path);
    let array = npy_mmap::open(&path).unwrap();
    let mut got = vec![0u16; indices.len()];
    array.gather(&indices, &mut got).unwrap();
    let view = array.view::<u16>().unwrap();
    assert!(indices.iter().zip(&got).all(|(&i, &v)| view[i] == v));
    // Prefetching returns at once and changes nothing.
    array.prefetch::<u16, _>(&indices[..1000]).unwrap();
    array.prefetch_bytes(&[0..4096, 8192..8200]).unwrap();
}

#[test]
fn untyped_gathers_copy_the_bytes_at_each_offset() {
    let dir = TempDir::new("gather-bytes");
    let path = file_of(&dir, "|V12", Order::C, &[3000, 5]);
    let offsets: Vec<usize> = random_indices(&[3000 * 5], 4000, 5)
        .into_iter()
        .map(|i| i[0] * 12)
        .collect();
    for temperature in ["cold", "warm"] {
        if temperature == "cold" {
            evict(&path);
        }
        let array = npy_mmap::open(&path).unwrap();
        let mut out = vec![0u8; offsets.len() * 12];
        array.gather_bytes(&offsets, 12, &mut out).unwrap();
        let bytes = array.bytes();
        for (slot, &at) in out.chunks_exact(12).zip(&offsets) {
            assert_eq!(slot, &bytes[at..at + 12], "{temperature}");
        }
        // Errors before anything is written.
        let mut out = [9u8; 24];
        let error = array
            .gather_bytes(&[0, 3000 * 5 * 12 - 11], 12, &mut out)
            .unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::BytesOutOfBounds { .. }),
            "{error:?}"
        );
        assert_eq!(out, [9; 24]);
        let error = array
            .gather_bytes(&[usize::MAX], 12, &mut out[..12])
            .unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::BytesOutOfBounds { .. }),
            "{error:?}"
        );
        let error = array.gather_bytes(&[0], 12, &mut out).unwrap_err();
        assert!(matches!(
            error.kind(),
            ErrorKind::Format(npy_core::Error::OutputLength { .. })
        ));
    }
}

/// A bad outer index gets numpy's message whether or not the file is in
/// memory (the cold path once said "range 100000..100001 is out of
/// bounds", the warm one "index 100000 is out of bounds").
#[test]
fn a_bad_outer_index_reads_the_same_cold_and_warm() {
    let dir = TempDir::new("gather-outer-error");
    let path = file_of(&dir, "<u4", Order::C, &[100_000, 3]);
    for temperature in ["cold", "warm"] {
        if temperature == "cold" {
            evict(&path);
        }
        let array = npy_mmap::open(&path).unwrap();
        let mut out = [7u32; 6];
        let error = array
            .gather_outer(&[99_999, 100_000], &mut out)
            .unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("index 100000 is out of bounds for axis 0 with size 100000"),
            "{temperature}: {error}"
        );
        assert_eq!(out, [7; 6], "nothing written");
    }
}

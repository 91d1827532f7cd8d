//! Saving to a path: exact numpy bytes, atomic replacement, readers of the
//! old file unaffected, nothing left behind on error.

mod common;

use common::TempDir;
use npy_core::{DType, Header, Order};

#[test]
fn save_of_a_shaped_slice_writes_what_np_save_writes() {
    let dir = TempDir::new("save-bytes");
    let path = dir.join("a.npy");
    let values: Vec<f64> = (0..6).map(f64::from).collect();
    npy_mmap::save(
        &path,
        &npy_core::ArrayView::from_slice(&values, &[2, 3], Order::C).unwrap(),
    )
    .unwrap();
    let expected = common::npy_bytes("'<f8'", Order::C, &[2, 3], &common::f64_bytes(0.0, 6));
    assert_eq!(std::fs::read(&path).unwrap(), expected);
    assert_eq!(dir.entries(), ["a.npy"]);
}

#[test]
fn overwriting_a_mapped_file_leaves_the_reader_intact() {
    let dir = TempDir::new("save-mapped");
    let path = dir.join("a.npy");
    npy_mmap::save(&path, &[1.0f64, 2.0, 3.0][..]).unwrap();
    let reader = npy_mmap::open(&path).unwrap();

    // Replace it with a smaller array: a truncate-in-place would SIGBUS the reader.
    npy_mmap::save(&path, &[9u8][..]).unwrap();

    assert_eq!(reader.view::<f64>().unwrap().to_vec(), [1.0, 2.0, 3.0]);
    let fresh = npy_mmap::open(&path).unwrap();
    assert_eq!(fresh.view::<u8>().unwrap().to_vec(), [9]);
    assert_eq!(dir.entries(), ["a.npy"]);
}

#[test]
fn a_failed_save_keeps_the_old_file_and_leaves_no_temporary() {
    let dir = TempDir::new("save-fail");
    let path = dir.join("a.npy");
    npy_mmap::save(&path, &[7i32, 8][..]).unwrap();
    let before = std::fs::read(&path).unwrap();

    let header = Header {
        dtype: DType::parse("<i4").unwrap(),
        order: Order::C,
        shape: vec![3],
    };
    let lying = common::Lying {
        header,
        data: vec![0; 8],
    };
    let error = npy_mmap::save(&path, &lying).unwrap_err();
    assert!(error.to_string().contains("12"), "{error}");

    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(dir.entries(), ["a.npy"]);
}

//! Loads of arrays large enough to be read by every core at once: the same
//! bytes, byte order conversion and errors as a read by one.

mod common;

use common::{TempDir, write_file};
use npy_core::ReadOptions;
use npy_mmap::OpenOptions;

/// A v1 `.npy` file: `descr` and `shape` in the header (padded to 64
/// bytes, as numpy pads), then `data`.
fn npy(descr: &str, shape: usize, data: &[u8]) -> Vec<u8> {
    let mut dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': ({shape},), }}");
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    file.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    file.extend_from_slice(dict.as_bytes());
    file.extend_from_slice(data);
    file
}

/// 40 MiB and some: more than one piece per core, and a last piece cut short.
const LEN: usize = (40 << 20) / 8 + 3;

#[test]
fn a_large_big_endian_file_loads_as_native_values() {
    let dir = TempDir::new("load-large-be");
    let values: Vec<f64> = (0..LEN).map(|i| i as f64 * 0.5).collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    let path = write_file(&dir, "be.npy", &npy("'>f8'", LEN, &data));
    let native = OpenOptions::from(ReadOptions {
        to_native: true,
        ..ReadOptions::default()
    })
    .load(&path)
    .unwrap();
    assert_eq!(native.header().dtype.descr(), "<f8");
    assert_eq!(
        native.view::<f64>().unwrap().as_slice().unwrap(),
        &values[..]
    );
    // As stored when not asked to convert.
    let stored = npy_mmap::load(&path).unwrap();
    assert_eq!(stored.header().dtype.descr(), ">f8");
    assert_eq!(stored.bytes(), &data[..]);
}

#[test]
fn a_large_record_file_converts_each_field() {
    let dir = TempDir::new("load-large-record");
    // 12-byte records (a big-endian i4, a big-endian u8): pieces must hold
    // whole records for each to convert on its own.
    let count = (40 << 20) / 12 + 5;
    let data: Vec<u8> = (0..count as u64)
        .flat_map(|i| {
            let mut record = (i as i32 - 7).to_be_bytes().to_vec();
            record.extend_from_slice(&(i * 3).to_be_bytes());
            record
        })
        .collect();
    let path = write_file(
        &dir,
        "records.npy",
        &npy("[('a', '>i4'), ('b', '>u8')]", count, &data),
    );
    let native = OpenOptions::from(ReadOptions {
        to_native: true,
        ..ReadOptions::default()
    })
    .load(&path)
    .unwrap();
    let expected: Vec<u8> = (0..count as u64)
        .flat_map(|i| {
            let mut record = (i as i32 - 7).to_le_bytes().to_vec();
            record.extend_from_slice(&(i * 3).to_le_bytes());
            record
        })
        .collect();
    assert!(
        native.bytes() == &expected[..],
        "records converted field by field"
    );
}

#[test]
fn a_large_truncated_file_is_numpys_error_before_anything_is_read() {
    let dir = TempDir::new("load-large-short");
    let data = vec![0u8; LEN * 8 - 1000];
    let path = write_file(&dir, "short.npy", &npy("'<f8'", LEN, &data));
    let message = npy_mmap::load(&path).unwrap_err().to_string();
    let expected = format!(
        "Failed to read all data for array. Expected ({LEN},) = {LEN} elements, could only read {} elements.",
        (LEN * 8 - 1000) / 8
    );
    assert!(message.contains(&expected), "{message}");
}

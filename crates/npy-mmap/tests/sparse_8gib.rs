//! An 8 GiB sparse file: creating and opening cost nothing, touching a few
//! elements at both ends costs a few pages. (One test in this binary, so
//! that no other test moves the process's RSS.)

mod common;

use common::TempDir;
use npy_core::DType;
use npy_mmap::{Advice, CreateOptions, OpenOptions};

/// This process's resident set size in KiB (Linux: /proc/self/status VmRSS).
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn get(bytes: &[u8], i: usize) -> f64 {
    f64::from_ne_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap())
}

fn set(bytes: &mut [u8], i: usize, value: f64) {
    bytes[i * 8..i * 8 + 8].copy_from_slice(&value.to_ne_bytes());
}

#[test]
#[cfg(target_os = "linux")]
fn an_8_gib_sparse_file_opens_without_reading_it() {
    use std::os::unix::fs::MetadataExt;

    let dir = TempDir::new("sparse8g");
    let path = dir.join("big.npy");
    let len: usize = (8 << 30) / 8 + 3; // just over 8 GiB of f8
    let dtype = DType::parse(if cfg!(target_endian = "little") {
        "<f8"
    } else {
        ">f8"
    })
    .unwrap();
    let created = CreateOptions::new(dtype, [len]).preallocate(&path).unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.len(), created.data_end() as u64);
    assert!(meta.len() > 8 << 30);
    assert!(
        meta.blocks() * 512 < 1 << 20,
        "no disk used: {} blocks",
        meta.blocks()
    );

    let before = rss_kib();
    // Random: no read-around; on a disk with an 8 MiB read-ahead every
    // first touch would otherwise fault in (and zero) megabytes.
    let mut array = OpenOptions::new()
        .advice(Advice::Random)
        .open_rw(&path)
        .unwrap();
    let after_open = rss_kib();
    assert!(
        after_open < before + 4 * 1024,
        "opening must not read the data: RSS {before} KiB -> {after_open} KiB"
    );
    assert_eq!(array.bytes().len(), len * 8);

    // Touch elements near both ends and at a spread of offsets in between.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut picks: Vec<usize> = vec![0, 1, 511, len / 2, len - 2, len - 1];
    for _ in 0..200 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        picks.push((state % len as u64) as usize);
    }
    for &i in &picks {
        assert_eq!(get(array.bytes(), i), 0.0, "a sparse file reads as zeros");
        set(array.bytes_mut(), i, i as f64 + 0.5);
    }
    array.flush().unwrap();
    let after_touch = rss_kib();
    // Each pick touches one or two pages (4 KiB, or whatever the kernel
    // faults around a read); far below the file's 8 GiB.
    assert!(
        after_touch < before + 64 * 1024,
        "touching {} elements: RSS {before} KiB -> {after_touch} KiB",
        picks.len()
    );
    drop(array);

    let reopened = npy_mmap::open(&path).unwrap();
    for &i in &picks {
        assert_eq!(get(reopened.bytes(), i), i as f64 + 0.5);
    }
    assert_eq!(get(reopened.bytes(), 2), 0.0);
    let meta = std::fs::metadata(&path).unwrap();
    assert!(
        meta.blocks() * 512 < 64 << 20,
        "still sparse: {} blocks",
        meta.blocks()
    );
}

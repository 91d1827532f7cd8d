//! Foreign mappings (numpy's sharing): their atomic copies against the
//! file's bytes for every width and alignment, their modes and hints.

use npy_core::DType;
use npy_mmap::{Advice, CreateOptions, ErrorKind, ForeignMode, OpenOptions};

mod common;

use common::TempDir;

/// A file of 4,096 bytes whose byte k is k * 7 (mod 256), and those bytes.
fn pattern(dir: &std::path::Path) -> (std::path::PathBuf, Vec<u8>) {
    let path = dir.join("bytes.npy");
    let bytes: Vec<u8> = (0..4096u32).map(|k| (k * 7) as u8).collect();
    npy_mmap::save(&path, &bytes[..]).unwrap();
    (path, bytes)
}

#[test]
fn copies_and_gathers_equal_the_files_bytes_at_every_width_and_alignment() {
    let dir = TempDir::new("foreign-copies");
    let (path, bytes) = pattern(dir.path());
    for mode in [
        ForeignMode::ReadOnly,
        ForeignMode::ReadWrite,
        ForeignMode::CopyOnWrite,
    ] {
        let array = OpenOptions::new().open_foreign(&path, mode).unwrap();
        assert_eq!(array.len(), bytes.len());
        for width in 1..=33 {
            for start in 0..17 {
                let mut out = vec![0u8; width];
                array.copy_to(start, &mut out).unwrap();
                assert_eq!(out, bytes[start..start + width], "{mode:?} {start}+{width}");
            }
            // Scattered, repeated and neighbouring items (a run) in one gather.
            let offsets = [
                5 * width,
                0,
                100,
                101 + width,
                101 + 2 * width,
                100,
                4096 - width,
            ];
            let mut out = vec![0u8; offsets.len() * width];
            array.gather_bytes(&offsets, width, &mut out).unwrap();
            let expected: Vec<u8> = offsets
                .iter()
                .flat_map(|&at| bytes[at..at + width].iter().copied())
                .collect();
            assert_eq!(out, expected, "{mode:?} width {width}");
        }
        // Out of range: an error, nothing read.
        let error = array.copy_to(4090, &mut [0u8; 8]).unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::BytesOutOfBounds { .. }),
            "{error}"
        );
        let error = array
            .gather_bytes(&[0, 4093], 4, &mut [0u8; 8])
            .unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::BytesOutOfBounds { .. }),
            "{error}"
        );
        assert_eq!(array.as_mut_ptr().is_some(), mode != ForeignMode::ReadOnly);
    }
}

#[test]
fn writes_through_the_address_reach_the_file_and_other_foreign_mappings() {
    let dir = TempDir::new("foreign-writes");
    let path = dir.join("w.npy");
    let created = CreateOptions::new(DType::parse("|u1").unwrap(), [64])
        .create_foreign(&path)
        .unwrap();
    let reader = OpenOptions::new()
        .open_foreign(&path, ForeignMode::ReadOnly)
        .unwrap();
    let private = OpenOptions::new()
        .open_foreign(&path, ForeignMode::CopyOnWrite)
        .unwrap();
    // What foreign code does with the address: a store through it (an
    // atomic one, as Rust may write these bytes only with atomics). The
    // file, and every shared mapping of it, sees the change.
    let address = created.as_mut_ptr().expect("a writable mapping");
    // SAFETY: byte 3 of the 64 mapped bytes, valid while `created` lives;
    // every access to these bytes here is atomic.
    unsafe { std::sync::atomic::AtomicU8::from_ptr(address.add(3)) }
        .store(42, std::sync::atomic::Ordering::Relaxed);
    let mut on_disk = [0u8];
    let mut file = std::fs::File::open(&path).unwrap();
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(created.layout().data_offset as u64 + 3))
        .unwrap();
    file.read_exact(&mut on_disk).unwrap();
    assert_eq!(
        on_disk,
        [42],
        "the file (through the page cache) sees the store"
    );
    for array in [&created, &reader, &private] {
        let mut byte = [0u8];
        array.copy_to(3, &mut byte).unwrap();
        assert_eq!(byte, [42]);
    }
    created.flush().unwrap();
    assert!(
        private.advise(Advice::DontNeed).is_err(),
        "DontNeed would drop copy-on-write pages"
    );
    reader.advise(Advice::DontNeed).unwrap();
    drop((created, reader, private));
}

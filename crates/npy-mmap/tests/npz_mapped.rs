//! Stored members of a mapped archive file are views into the mapping.
#![cfg(feature = "npz")]

use std::path::PathBuf;

use npy_mmap::npz::{Compression, MappedNpz, NpzError, NpzWriter};
use zerocopy::byteorder::{I64, LittleEndian};

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("npz-mapped-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn views_point_into_the_mapping_and_are_aligned() {
    let dir = temp_dir("views");
    let path = dir.join("a.npz");
    let values: Vec<f64> = (0..10_000).map(|i| i as f64 * 1.5).collect();
    let mut writer = NpzWriter::create(&path).unwrap();
    writer
        .add_raw_member("misc", b"shifts the next member")
        .unwrap();
    writer.add_slice("v", &values, &[100, 100]).unwrap();
    writer.add_slice("w", &[1u16, 2, 3], &[3]).unwrap();
    writer.commit().unwrap();

    let mapped = MappedNpz::open(&path).unwrap();
    let mut archive = mapped.archive().unwrap();
    let v = archive.view::<f64>("v").unwrap();
    let w = archive.view::<u16>("w").unwrap();
    let range = mapped.bytes().as_ptr_range();
    let v_data = v.as_slice().unwrap();
    assert!(
        range.contains(&v_data.as_ptr().cast()),
        "zero-copy: inside the mapping"
    );
    assert_eq!(
        v_data.as_ptr() as usize % 64,
        0,
        "aligned in memory, not only in the file"
    );
    assert_eq!(v.get([99, 99]), Some(&values[9_999]));
    assert_eq!(w.to_vec(), [1, 2, 3]);
    drop(archive);
    // Views outlive the archive value: they borrow the mapping.
    assert_eq!(v.get([0, 1]), Some(&1.5));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn rewriting_the_path_leaves_mapped_readers_intact() {
    let dir = temp_dir("rewrite");
    let path = dir.join("a.npz");
    let mut writer = NpzWriter::create(&path).unwrap();
    writer.add_slice("x", &[1i64; 1000], &[1000]).unwrap();
    writer.commit().unwrap();

    let mapped = MappedNpz::open(&path).unwrap();
    let mut archive = mapped.archive().unwrap();
    let old = archive.view::<i64>("x").unwrap();

    let mut writer = NpzWriter::create(&path).unwrap();
    writer.add_slice("x", &[2i64; 10], &[10]).unwrap();
    writer.commit().unwrap();

    assert_eq!(old.len(), 1000);
    assert!(old.iter().all(|&v| v == 1));
    let fresh = MappedNpz::open(&path).unwrap();
    assert_eq!(
        fresh.archive().unwrap().view::<i64>("x").unwrap().to_vec(),
        [2; 10]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn compressed_members_name_the_alternative() {
    let dir = temp_dir("compressed");
    let path = dir.join("c.npz");
    let mut writer = NpzWriter::create_with_compression(&path, Compression::DEFLATED).unwrap();
    writer.add_slice("z", &[0f32; 100], &[100]).unwrap();
    writer.commit().unwrap();
    let mapped = MappedNpz::open(&path).unwrap();
    let error = mapped.archive().unwrap().view::<f32>("z").unwrap_err();
    assert!(matches!(error, NpzError::Compressed { .. }), "{error}");
    assert!(error.to_string().contains("load"), "{error}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn numpys_unaligned_members_need_an_unaligned_type() {
    // numpy's savez does not align member data: arr_0 (<i8) starts at an odd offset.
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/npz/savez_mixed.npz");
    let mapped = MappedNpz::open(&path).unwrap();
    let mut archive = mapped.archive().unwrap();
    let error = archive.view::<i64>("arr_0").unwrap_err();
    assert!(
        matches!(error, NpzError::Misaligned { align: 8, .. }),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains("'arr_0.npy'") && message.contains("unaligned"),
        "{message}"
    );
    let values: Vec<i64> = archive
        .view::<I64<LittleEndian>>("arr_0")
        .unwrap()
        .iter()
        .map(|v| v.get())
        .collect();
    assert_eq!(values, [0, 1, 2, 3, 4]);
}

#[test]
fn missing_or_empty_files_are_errors() {
    let dir = temp_dir("bad");
    assert!(matches!(
        MappedNpz::open(dir.join("absent.npz")).unwrap_err(),
        NpzError::File(_)
    ));
    std::fs::write(dir.join("empty.npz"), b"").unwrap();
    let mapped = MappedNpz::open(dir.join("empty.npz")).unwrap();
    assert!(mapped.bytes().is_empty());
    assert!(matches!(
        mapped.archive().unwrap_err(),
        NpzError::NotAZip(_)
    ));
    std::fs::write(dir.join("junk.npz"), vec![0x50; 5000]).unwrap();
    let mapped = MappedNpz::open(dir.join("junk.npz")).unwrap();
    assert!(mapped.archive().is_err());
    std::fs::remove_dir_all(dir).unwrap();
}

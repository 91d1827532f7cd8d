//! Stored members of a mapped archive file are views into the mapping.
#![cfg(feature = "npz")]

use npy_mmap::ErrorKind;
use std::path::PathBuf;

use npy_mmap::npz::{Compression, NpzWriter};
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
    writer
        .add(
            "v",
            &npy_core::ArrayView::from_slice(&values, &[100, 100], npy_core::Order::C).unwrap(),
        )
        .unwrap();
    writer.add("w", &[1u16, 2, 3][..]).unwrap();
    writer.finish().unwrap();

    let mapped = npy_mmap::OpenOptions::new().map_npz(&path).unwrap();
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
    writer.add("x", &[1i64; 1000][..]).unwrap();
    writer.finish().unwrap();

    let mapped = npy_mmap::OpenOptions::new().map_npz(&path).unwrap();
    let mut archive = mapped.archive().unwrap();
    let old = archive.view::<i64>("x").unwrap();

    let mut writer = NpzWriter::create(&path).unwrap();
    writer.add("x", &[2i64; 10][..]).unwrap();
    writer.finish().unwrap();

    assert_eq!(old.len(), 1000);
    assert!(old.iter().all(|&v| v == 1));
    let fresh = npy_mmap::OpenOptions::new().map_npz(&path).unwrap();
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
    let mut writer = NpzWriter::create(&path).unwrap();
    writer.set_compression(Compression::DEFLATED).unwrap();
    writer.add("z", &[0f32; 100][..]).unwrap();
    writer.finish().unwrap();
    let mapped = npy_mmap::OpenOptions::new().map_npz(&path).unwrap();
    let error = mapped.archive().unwrap().view::<f32>("z").unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Archive(npy_core::npz::ArchiveError::Compressed { .. })
        ),
        "{error}"
    );
    assert!(error.to_string().contains("load"), "{error}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn numpys_unaligned_members_need_an_unaligned_type() {
    // numpy's savez does not align member data: arr_0 (<i8) starts at an odd offset.
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/npz/savez_mixed.npz");
    let mapped = npy_mmap::OpenOptions::new().map_npz(&path).unwrap();
    let mut archive = mapped.archive().unwrap();
    let error = archive.view::<i64>("arr_0").unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Format(npy_core::Error::Misaligned { align: 8, .. })
        ),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains("'arr_0.npy'") && message.contains("alignment-1"),
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
        (npy_mmap::OpenOptions::new()
            .map_npz(dir.join("absent.npz"))
            .unwrap_err())
        .kind(),
        ErrorKind::Io {
            operation: "open",
            ..
        }
    ));
    std::fs::write(dir.join("empty.npz"), b"").unwrap();
    let mapped = npy_mmap::OpenOptions::new()
        .map_npz(dir.join("empty.npz"))
        .unwrap();
    assert!(mapped.bytes().is_empty());
    assert!(matches!(
        (mapped.archive().unwrap_err()).kind(),
        ErrorKind::Archive(npy_core::npz::ArchiveError::NotAZip { .. })
    ));
    std::fs::write(dir.join("junk.npz"), vec![0x50; 5000]).unwrap();
    let mapped = npy_mmap::OpenOptions::new()
        .map_npz(dir.join("junk.npz"))
        .unwrap();
    let error = mapped.archive().unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Archive(npy_core::npz::ArchiveError::NotAZip { .. })
        ),
        "{error:?}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

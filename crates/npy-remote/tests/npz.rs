//! `.npz` archives in a store: listed from the tail in one request, members
//! read by range or inflated, checked against numpy's fixtures and
//! npy-mmap's local reader.

mod support;

use std::io::Cursor;

use npy_core::npz::ArchiveError;
use npy_core::{DType, Header, Order};
use npy_mmap::npz::{Compression, NpzArchive, NpzWriter};
use npy_remote::ErrorKind;
use npy_remote::Transfer;
use npy_remote::npz::{MemberCompression, NpzOptions, RemoteNpz};
use support::{fixtures_dir, manifest, pattern, put};

#[tokio::test]
async fn numpys_archives_list_in_one_request_and_load_like_locally() {
    let mut checked = 0;
    for entry in manifest()["npz"].as_array().unwrap() {
        let file = entry["file"].as_str().unwrap();
        let bytes = std::fs::read(fixtures_dir().join(file)).unwrap();
        let (store, path) = put(bytes.clone()).await;
        let opened = RemoteNpz::open(store.clone(), path, NpzOptions::default()).await;
        if !entry["open_error"].is_null() {
            let err = opened.unwrap_err();
            assert!(
                matches!(err.kind(), ErrorKind::Archive(ArchiveError::NotAZip { .. })),
                "{file}: {err}"
            );
            continue;
        }
        let archive = opened.unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(store.gets().0, 1, "{file}");
        let keys: Vec<&str> = archive.members().iter().map(|m| m.key.as_str()).collect();
        let expected: Vec<&str> = entry["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap())
            .collect();
        assert_eq!(keys, expected, "{file}");
        let mut local = NpzArchive::new(Cursor::new(bytes)).unwrap();
        for key in keys {
            let remote = archive.read_raw(key).await;
            match local.read_raw(key) {
                Ok(content) => assert_eq!(remote.unwrap(), content, "{file}:{key}"),
                Err(e) => {
                    // The same kind, locally and remotely.
                    let err = remote.unwrap_err();
                    let npy_mmap::ErrorKind::Archive(local) = e.kind() else {
                        panic!("{file}:{key}: {e}");
                    };
                    assert!(
                        matches!(local, ArchiveError::BadCrc { .. }),
                        "{file}:{key}: {e}"
                    );
                    assert!(
                        matches!(err.kind(), ErrorKind::Archive(remote) if remote == local),
                        "{file}:{key}: {err}"
                    );
                    assert_eq!(err.member(), e.member(), "{file}:{key}");
                    continue;
                }
            }
            if local.is_npy(key).unwrap() {
                let remote = archive.load(key).await;
                match local.load(key) {
                    Ok(array) => {
                        let remote = remote.unwrap();
                        assert_eq!(
                            (remote.header(), remote.bytes()),
                            (array.header(), array.bytes()),
                            "{file}:{key}"
                        );
                    }
                    Err(e) => assert_eq!(
                        support::format_error(&remote.unwrap_err())
                            .unwrap()
                            .to_string(),
                        match e.kind() {
                            npy_mmap::ErrorKind::Format(source) => source.to_string(),
                            _ => panic!("{file}:{key}: {e}"),
                        }
                    ),
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked}");
}

/// Two archives of our writer: a big stored array with a raw member, and
/// a deflated array holding `compressed`.
fn our_archive(compressed: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    let header = Header::new(DType::parse("<u2").unwrap(), Order::C, vec![100_000, 8]);
    let data = pattern(header.data_len().unwrap());
    writer
        .add("rows", &npy_core::NpyBytes::new(&header, &data).unwrap())
        .unwrap();
    writer.add_raw_member("notes.txt", b"hello").unwrap();
    let bytes = writer.into_inner().unwrap().into_inner();
    let mut deflated = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    deflated
        .set_compression(Compression::Deflated { level: 6 })
        .unwrap();
    let z = Header::new(
        DType::parse("<u1").unwrap(),
        Order::C,
        vec![compressed.len()],
    );
    deflated
        .add("z", &npy_core::NpyBytes::new(&z, compressed).unwrap())
        .unwrap();
    let deflated = deflated.into_inner().unwrap().into_inner();
    (bytes, deflated)
}

#[tokio::test]
async fn stored_member_rows_are_read_by_range() {
    let (bytes, _) = our_archive(&[]);
    let (store, path) = put(bytes.clone()).await;
    let archive = RemoteNpz::open(store.clone(), path, NpzOptions::default())
        .await
        .unwrap();
    store.reset();
    let array = archive.array("rows").await.unwrap();
    assert_eq!(
        store.gets().0,
        1,
        "local header and array header in one GET"
    );
    assert_eq!(array.header().shape, [100_000, 8]);
    store.reset();
    let rows = array.read_rows(50_000..50_010).await.unwrap();
    assert_eq!(store.gets(), (1, 160));
    let local = NpzArchive::new(Cursor::new(bytes))
        .unwrap()
        .load("rows")
        .unwrap();
    assert_eq!(rows.bytes(), &local.bytes()[800_000..800_160]);
    assert_eq!(
        archive.member("notes.txt").unwrap().compression,
        MemberCompression::Stored
    );
    assert_eq!(archive.read_raw("notes.txt").await.unwrap(), b"hello");
}

#[tokio::test]
async fn deflated_members_are_inflated_from_concurrent_parts() {
    let content = pattern(3_000_000);
    let (_, bytes) = our_archive(&content);
    let (store, path) = put(bytes).await;
    let options = NpzOptions {
        transfer: Transfer {
            part_size: 1000,
            concurrency: 4,
            ..Transfer::default()
        },
        ..NpzOptions::default()
    };
    let archive = RemoteNpz::open(store.clone(), path, options).await.unwrap();
    let member = archive.member("z").unwrap();
    assert_eq!(member.compression, MemberCompression::Deflated);
    assert!(member.compressed_size > 2000, "several parts");
    let loaded = archive.load("z").await.unwrap();
    assert_eq!(loaded.bytes(), &content[..]);
    let header = archive.header("z").await.unwrap().header;
    assert_eq!(header.shape, [3_000_000]);
    let err = archive.array("z").await.unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Archive(ArchiveError::Compressed {
                compression: MemberCompression::Deflated
            })
        ),
        "{err}"
    );
    assert_eq!(err.member(), Some("z.npy"));
}

#[tokio::test]
async fn a_large_directory_takes_a_second_suffix_request() {
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    for i in 0..1500 {
        writer
            .add(&format!("member_with_a_long_name_{i:05}"), &[i as u32][..])
            .unwrap();
    }
    let bytes = writer.into_inner().unwrap().into_inner();
    let (store, path) = put(bytes).await;
    let archive = RemoteNpz::open(store.clone(), path.clone(), NpzOptions::default())
        .await
        .unwrap();
    assert_eq!(archive.members().len(), 1500);
    assert_eq!(store.gets().0, 2);
    let loaded = archive.load("member_with_a_long_name_01234").await.unwrap();
    assert_eq!(loaded.view::<u32>().unwrap().to_vec(), [1234]);
    // A directory above the limit is refused before it is fetched.
    let small = NpzOptions {
        max_directory: 100_000,
        ..NpzOptions::default()
    };
    let err = RemoteNpz::open(store, path, small).await.unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Archive(ArchiveError::DirectoryTooLarge { max: 100_000, .. })
        ),
        "{err}"
    );
}

/// A key that names no member is numpy's KeyError, told from a corrupt
/// archive by its kind: the same kind npy-mmap reports for a local archive.
#[tokio::test]
async fn a_missing_member_is_not_a_corrupt_archive() {
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    writer.add("a", &[1u8, 2, 3][..]).unwrap();
    let bytes = writer.into_inner().unwrap().into_inner();
    let (store, path) = put(bytes.clone()).await;
    let archive = RemoteNpz::open(store, path, NpzOptions::default())
        .await
        .unwrap();
    let missing = ArchiveError::NotAFile { key: "b".into() };
    for err in [
        archive.member("b").unwrap_err(),
        archive.load("b").await.unwrap_err(),
    ] {
        assert!(
            matches!(err.kind(), ErrorKind::Archive(kind) if *kind == missing),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "archive.npz: b is not a file in the archive"
        );
    }
    let local = NpzArchive::new(Cursor::new(bytes))
        .unwrap()
        .load("b")
        .unwrap_err();
    assert!(
        matches!(local.kind(), npy_mmap::ErrorKind::Archive(kind) if *kind == missing),
        "{local}"
    );
}

#[test]
fn the_range_reader_lets_file_code_read_an_object() {
    let runtime = npy_remote::blocking::Runtime::new().unwrap();
    let (bytes, _) = our_archive(&[]);
    let (store, path) = runtime.block_on(put(bytes.clone()));
    let reader =
        npy_remote::blocking::RangeReader::open(&runtime, store.clone(), path, 256 << 10, 4)
            .unwrap();
    assert_eq!(reader.size(), bytes.len() as u64);
    let mut archive = NpzArchive::new(reader).unwrap();
    assert_eq!(archive.keys(), ["rows", "notes.txt"]);
    let rows = archive.load("rows").unwrap();
    let local = NpzArchive::new(Cursor::new(bytes.clone()))
        .unwrap()
        .load("rows")
        .unwrap();
    assert_eq!(rows.bytes(), local.bytes());
    // 1.6 MB read in 256 KiB blocks: about seven requests, not one per read call.
    let (requests, fetched) = store.gets();
    assert!(requests <= 10, "{requests}");
    assert!(fetched < 2 * bytes.len() as u64, "{fetched}");
}

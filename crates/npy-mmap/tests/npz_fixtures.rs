//! Every numpy-written archive under tests/fixtures/npz/ reads as numpy says
//! (tests/fixtures/manifest.json): keys, member table, values, raw members,
//! and per-member errors with numpy's wording.
#![cfg(feature = "npz")]

// Only the pure helpers of the shared module are used here: its paths are
// relative to the root package, not to this crate.
#[path = "../../../tests/support/mod.rs"]
mod support;

use std::path::PathBuf;

use npy_core::{DType, ReadOptions};
use npy_mmap::npz::{Member, MemberCompression, NpzArchive};
use serde_json::Value;
use support::{data_is_c_le, from_hex};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

fn archives() -> Vec<Value> {
    let text = std::fs::read_to_string(fixtures().join("manifest.json")).expect("manifest");
    let manifest: Value = serde_json::from_str(&text).expect("manifest json");
    manifest["npz"].as_array().expect("npz section").clone()
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} in {value}"))
}

fn has_wording(message: &str, expect: &Value) -> bool {
    match expect.as_array() {
        None => true,
        Some(phrases) => phrases
            .iter()
            .any(|p| message.contains(p.as_str().unwrap())),
    }
}

fn native() -> ReadOptions {
    ReadOptions {
        to_native: true,
        ..ReadOptions::default()
    }
}

#[test]
fn the_manifest_lists_archives() {
    assert!(archives().len() >= 10);
}

#[test]
fn archives_open_or_fail_like_numpy() {
    for archive in archives() {
        let file = text(&archive, "file");
        let opened = npy_mmap::OpenOptions::new().open_npz(fixtures().join(file));
        match (&archive["open_error"], opened) {
            (Value::Null, Ok(npz)) => {
                let files: Vec<&str> = archive["files"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| f.as_str().unwrap())
                    .collect();
                assert_eq!(npz.keys(), files, "{file}");
            }
            (Value::Null, Err(error)) => panic!("{file}: numpy opens it, we fail: {error}"),
            (error, Ok(_)) => panic!("{file}: numpy fails ({error}), we open it"),
            (error, Err(ours)) => assert!(
                has_wording(&ours.to_string(), &error["expect"]),
                "{file}: {ours} lacks {}",
                error["expect"]
            ),
        }
    }
}

#[test]
fn member_table_matches_the_central_directory() {
    for archive in archives().iter().filter(|a| a["open_error"].is_null()) {
        let file = text(archive, "file");
        let npz = npy_mmap::OpenOptions::new()
            .open_npz(fixtures().join(file))
            .unwrap();
        for member in archive["members"].as_array().unwrap() {
            let key = text(member, "key");
            let info = npz.info(text(member, "member")).unwrap();
            let expected = match text(member, "compression") {
                "stored" => MemberCompression::Stored,
                "deflated" => MemberCompression::Deflated,
                other => panic!("{other}"),
            };
            assert_eq!(info.key, key, "{file}");
            assert_eq!(info.name, text(member, "member"), "{file}");
            assert_eq!(info.compression, expected, "{file}:{key}");
            assert_eq!(Some(u64::from(info.crc32)), member["crc32"].as_u64());
            assert_eq!(Some(info.size), member["file_size"].as_u64());
            assert_eq!(
                Some(info.compressed_size),
                member["compressed_size"].as_u64()
            );
            assert_eq!(Some(info.header_offset), member["header_offset"].as_u64());
        }
    }
}

/// Loads every member through the streaming path and compares with numpy.
#[test]
fn members_load_like_numpy() {
    let mut checked = 0;
    for archive in archives().iter().filter(|a| a["open_error"].is_null()) {
        let file = text(archive, "file");
        let path = fixtures().join(file);
        let mut npz = npy_mmap::OpenOptions::from(native())
            .open_npz(&path)
            .unwrap();
        for member in archive["members"].as_array().unwrap() {
            let key = text(member, "key");
            let name = text(member, "member");
            let got = npz.get(key);
            if member["error"].is_object() {
                let error = got.expect_err(&format!("{file}:{name} should fail"));
                let message = error.to_string();
                assert!(
                    has_wording(&message, &member["error"]["expect"]),
                    "{file}:{name}: {message} lacks {}",
                    member["error"]["expect"]
                );
                assert!(message.contains(name), "{message} should name {name}");
                checked += 1;
                continue;
            }
            match (text(member, "kind"), got.unwrap()) {
                ("raw", Member::Raw(bytes)) => {
                    assert_eq!(bytes, from_hex(text(member, "raw_hex")), "{file}:{name}");
                    let error = npz.load(key).unwrap_err();
                    assert!(
                        matches!(error.kind(), npy_mmap::ErrorKind::NotNpy),
                        "{file}:{name}: {error:?}"
                    );
                }
                ("npy", Member::Array(array)) => {
                    let npy = &member["npy"];
                    let header = array.header();
                    assert_eq!(header.shape.len(), npy["shape"].as_array().unwrap().len());
                    let expected = from_hex(text(npy, "c_le_hex"));
                    if data_is_c_le(header) {
                        assert_eq!(array.bytes(), expected, "{file}:{name}");
                    } else {
                        // Fortran order: compare in logical C order.
                        let values = array.view::<f64>().unwrap().to_vec();
                        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
                        assert_eq!(bytes, expected, "{file}:{name}");
                    }
                    // The header alone agrees, read without the data.
                    let alone = npz.header(key).unwrap().header;
                    assert_eq!(alone.shape, header.shape);
                    assert_eq!(
                        alone.dtype.descr(),
                        DType::parse(text(npy, "descr").trim_matches('\''))
                            .map(|d| d.descr())
                            .unwrap_or_else(|_| text(npy, "descr").to_owned())
                    );
                }
                (kind, other) => panic!("{file}:{name}: numpy says {kind}, we got {other:?}"),
            }
            checked += 1;
        }
    }
    assert!(checked >= 25, "only {checked} members checked");
}

/// Stored members are found in place: the borrowed bytes start exactly where
/// numpy's zipfile says the member's data starts.
#[test]
fn stored_members_are_borrowed_at_numpys_offsets() {
    let mut checked = 0;
    for archive in archives().iter().filter(|a| a["open_error"].is_null()) {
        let file = text(archive, "file");
        let bytes = std::fs::read(fixtures().join(file)).unwrap();
        let mut npz = NpzArchive::from_bytes(&bytes).unwrap();
        for member in archive["members"].as_array().unwrap() {
            let name = text(member, "member");
            let Some(offset) = member["archive_data_offset"].as_u64() else {
                assert!(
                    npz.stored_member(name).is_err(),
                    "{file}:{name} is deflated"
                );
                continue;
            };
            let content = npz.stored_member(name).unwrap();
            assert_eq!(
                content.as_ptr() as usize - bytes.as_ptr() as usize,
                offset as usize
            );
            assert_eq!(Some(content.len() as u64), member["file_size"].as_u64());
            if member["kind"] == "npy" {
                let npy = &member["npy"];
                let npy_mmap::npz::StoredArray {
                    header,
                    layout,
                    data,
                } = npz.array_bytes(name).unwrap();
                assert_eq!(Some(layout.data_offset as u64), npy["data_offset"].as_u64());
                if data_is_c_le(&header) {
                    assert_eq!(data, from_hex(text(npy, "c_le_hex")), "{file}:{name}");
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} stored members checked");
}

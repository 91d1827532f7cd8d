//! numpy's fixtures (tests/fixtures, written by real numpy) put into a
//! store: what we read remotely is what numpy loaded (its C-order
//! little-endian bytes in the manifest) and what npy-core reads locally;
//! the bad fixtures fail with the same messages as locally.

mod support;

use std::sync::Arc;

use npy_core::{Order, ParseOptions, ReadOptions, read_npy};
use npy_remote::object_store::memory::InMemory;
use npy_remote::object_store::path::Path;
use npy_remote::object_store::{ObjectStore, ObjectStoreExt};
use npy_remote::{RemoteArray, Transfer};
use serde_json::Value;
use support::{fixtures_dir, manifest};

fn options(entry: &Value) -> ReadOptions {
    let max_header_size = entry["max_header_size"]
        .as_u64()
        .map_or(ParseOptions::default().max_header_size, |n| n as usize);
    ReadOptions {
        parse: ParseOptions {
            max_header_size,
            ..Default::default()
        },
        to_native: true,
        ..ReadOptions::default()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every fixture in `section`, put into one in-memory store.
async fn store_with(section: &str) -> (Arc<dyn ObjectStore>, Vec<(Value, Vec<u8>)>) {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let mut entries = Vec::new();
    for entry in manifest()[section].as_array().unwrap() {
        let file = entry["file"].as_str().unwrap();
        let bytes = std::fs::read(fixtures_dir().join(file)).unwrap();
        store
            .put(&Path::from(file), bytes.clone().into())
            .await
            .unwrap();
        entries.push((entry.clone(), bytes));
    }
    (store, entries)
}

#[tokio::test]
async fn remote_reads_equal_numpys_and_local_reads() {
    let (store, entries) = store_with("npy").await;
    assert!(entries.len() > 80);
    for (entry, bytes) in entries {
        let file = entry["file"].as_str().unwrap();
        let small_parts = Transfer {
            part_size: 7, // many parts, unaligned to elements: reassembly is exact
            ..Transfer::default()
        };
        let array = RemoteArray::open_with(
            store.clone(),
            Path::from(file),
            options(&entry),
            small_parts,
        )
        .await
        .unwrap_or_else(|e| panic!("{file}: {e}"));
        let local = read_npy(&bytes[..], &options(&entry)).unwrap();
        let remote = array.read_all().await.unwrap();
        assert_eq!(remote.header(), local.header(), "{file}");
        assert_eq!(remote.bytes(), local.bytes(), "{file}");
        assert_eq!(
            array.layout().data_offset,
            entry["data_offset"].as_u64().unwrap() as usize,
            "{file}"
        );
        let one_d_or_c = local.header().order == Order::C || local.header().shape.len() < 2;
        if one_d_or_c {
            assert_eq!(
                hex(remote.bytes()),
                entry["c_le_hex"].as_str().unwrap(),
                "{file}"
            );
        }
        // The last row alone is the same bytes as in the whole array.
        let rows = array.rows();
        if rows > 1 && array.row_bytes() > 0 {
            let last = array.read_rows(rows - 1..rows).await.unwrap();
            let row_bytes = array.row_bytes();
            assert_eq!(
                last.bytes(),
                &local.bytes()[(rows - 1) * row_bytes..],
                "{file}"
            );
        }
    }
}

#[tokio::test]
async fn bad_fixtures_fail_as_they_do_locally() {
    let (store, entries) = store_with("bad").await;
    let mut compared = 0;
    for (entry, bytes) in entries {
        let file = entry["file"].as_str().unwrap();
        let local = read_npy(&bytes[..], &options(&entry));
        let remote = match RemoteArray::open_with(
            store.clone(),
            Path::from(file),
            options(&entry),
            Transfer::default(),
        )
        .await
        {
            Ok(array) => array.read_all().await.map(drop),
            Err(e) => Err(e),
        };
        match (local, remote) {
            (Err(local), Err(remote)) => {
                let message = support::format_error(&remote)
                    .unwrap_or_else(|| panic!("{file}: {remote}"))
                    .to_string();
                assert_eq!(message, local.to_string(), "{file}");
                compared += 1;
            }
            (Ok(_), Ok(())) => {} // trailing bytes numpy also ignores
            (local, remote) => panic!("{file}: local {:?}, remote {:?}", local.err(), remote.err()),
        }
    }
    assert!(compared >= 20, "only {compared} bad fixtures failed");
}

//! Slices of deflated `.npz` members in a store (issue 38): only the
//! compressed blocks a range needs are fetched, pinned to the version
//! listed; members without a block index still read right.

mod support;

use std::io::Cursor;

use npy_mmap::npz::{Compression, NpzWriter};
use npy_remote::npz::{NpzOptions, RemoteNpz};
use npy_remote::object_store::ObjectStoreExt;
use support::put;

/// 1.5 M float64 rows (11.4 MiB: 12 blocks) of a compressible signal.
fn signal() -> Vec<f64> {
    (0..1_500_000)
        .map(|i| ((i as f64 * 1e-3).sin() * 100.0 * 1024.0).round() / 1024.0)
        .collect()
}

fn deflated(data: &[f64]) -> Vec<u8> {
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    writer.set_compression(Compression::DEFLATED).unwrap();
    writer.add("x", data).unwrap();
    writer.into_inner().unwrap().into_inner()
}

/// The compressed size of the index's largest block.
fn largest_block(index: &npy_mmap::npz::BlockIndex) -> u64 {
    (0..index.len())
        .map(|i| index.input_range(i..i + 1))
        .map(|r| r.end - r.start)
        .max()
        .unwrap()
}

#[tokio::test]
async fn a_1_mib_slice_fetches_at_most_two_blocks_and_the_header() {
    let data = signal();
    let bytes = deflated(&data);
    let (store, path) = put(bytes).await;
    let archive = RemoteNpz::open(store.clone(), path, NpzOptions::default())
        .await
        .unwrap();
    let (_, directory) = store.gets();
    let index = archive
        .block_index("x")
        .unwrap()
        .expect("our writer's index");
    assert_eq!(index.len(), 12);
    let member = archive.member("x").unwrap().clone();
    let largest_block = largest_block(&index);
    store.reset();
    // 131,072 rows = 1 MiB, across a block boundary.
    let rows = archive.read_rows("x", 700_000..831_072).await.unwrap();
    assert!(rows.view::<f64>().unwrap().to_vec() == data[700_000..831_072]);
    let (requests, fetched) = store.gets();
    // The local header with the first 64 KiB (the .npy header), then the blocks.
    assert_eq!(requests, 2);
    assert!(
        fetched <= 2 * largest_block + (64 << 10) + 512,
        "fetched {fetched} bytes (directory {directory}, member {} compressed)",
        member.compressed_size
    );
    // A second slice reuses the header: one request, its blocks only.
    store.reset();
    let rows = archive.read_rows("x", 10..20).await.unwrap();
    assert!(rows.view::<f64>().unwrap().to_vec() == data[10..20]);
    let (requests, fetched) = store.gets();
    assert_eq!(requests, 1);
    assert!(fetched <= largest_block, "fetched {fetched}");
}

#[tokio::test]
async fn members_without_an_index_read_right_and_a_replaced_object_is_refused() {
    let data = signal();
    let (store, path) = put(without_index(&data)).await;
    let archive = RemoteNpz::open(store.clone(), path.clone(), NpzOptions::default())
        .await
        .unwrap();
    assert!(archive.block_index("x").unwrap().is_none());
    let rows = archive.read_rows("x", 1_400_000..1_400_010).await.unwrap();
    assert!(rows.view::<f64>().unwrap().to_vec() == data[1_400_000..1_400_010]);
    // Replaced after listing: reads are pinned to the version listed.
    store
        .put(&path, deflated(&data[..1000]).into())
        .await
        .unwrap();
    let error = archive.read_rows("x", 0..10).await.unwrap_err();
    assert!(!error.to_string().is_empty());
}

/// An archive whose member reads as another writer's (numpy's): its index
/// field renamed.
fn without_index(data: &[f64]) -> Vec<u8> {
    let mut bytes = deflated(data);
    let id = npy_mmap::npz::EXTRA_FIELD_ID.to_le_bytes();
    let at = bytes.windows(2).rposition(|w| w == id).unwrap();
    bytes[at] = b'Q';
    bytes
}

#[tokio::test]
async fn another_writers_member_gets_checkpoints_in_one_pass_then_slices_fetch_their_blocks() {
    let data = signal();
    let (store, path) = put(without_index(&data)).await;
    let archive = RemoteNpz::open(store.clone(), path, NpzOptions::default())
        .await
        .unwrap();
    let member = archive.member("x").unwrap().clone();
    assert!(archive.block_index("x").unwrap().is_none());
    store.reset();
    let index = archive.build_index("x").await.unwrap().expect("built");
    assert!(
        !index.is_written() && index.len() >= 10,
        "{} checkpoints",
        index.len()
    );
    // One pass: the member's compressed bytes once (and its local header).
    let (_, fetched) = store.gets();
    assert!(fetched >= member.compressed_size && fetched <= member.compressed_size + (64 << 10));
    // Kept for the archive's life: asked again, no request.
    store.reset();
    assert!(archive.build_index("x").await.unwrap().is_some());
    assert!(archive.block_index("x").unwrap().is_some());
    assert_eq!(store.gets().0, 0);
    // A 1 MiB slice now fetches about its blocks, not the member up to it.
    let largest = largest_block(&index);
    store.reset();
    let rows = archive.read_rows("x", 1_300_000..1_431_072).await.unwrap();
    assert!(rows.view::<f64>().unwrap().to_vec() == data[1_300_000..1_431_072]);
    let (_, fetched) = store.gets();
    assert!(
        fetched <= 3 * largest + (64 << 10),
        "fetched {fetched} of {} compressed",
        member.compressed_size
    );
}

#[tokio::test]
async fn a_member_whose_bytes_are_not_the_directorys_builds_no_checkpoints() {
    let data = signal();
    let mut bytes = without_index(&data);
    // A byte of the deflate stream changed: the content's CRC-32 differs
    // (or the stream no longer inflates).
    let at = bytes.len() / 2;
    bytes[at] ^= 0x40;
    let (store, path) = put(bytes).await;
    let archive = RemoteNpz::open(store, path, NpzOptions::default())
        .await
        .unwrap();
    let error = archive.build_index("x").await.unwrap_err();
    assert!(
        error.to_string().contains("'x'") || error.to_string().contains("x.npy"),
        "{error}"
    );
    assert!(archive.block_index("x").unwrap().is_none());
}

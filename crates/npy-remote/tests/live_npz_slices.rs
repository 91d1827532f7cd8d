//! Live: a slice of a deflated member over a real S3-protocol server
//! (moto, `scripts/s3-server.sh`) fetches only the blocks it needs.
//!
//!     scripts/s3-server.sh start && eval "$(scripts/s3-server.sh env)"
//!     cargo test -p npy-remote --test live_npz_slices -- --ignored

mod support;

use std::io::Cursor;

use npy_mmap::npz::{Compression, NpzWriter};
use npy_remote::Store;
use npy_remote::npz::{NpzOptions, RemoteNpz};
use npy_remote::object_store::ObjectStoreExt;
use support::Counting;

#[tokio::test]
#[ignore = "needs the local S3 server (scripts/s3-server.sh)"]
async fn a_1_mib_slice_of_a_deflated_member_over_s3_fetches_two_blocks_at_most() {
    let bucket = std::env::var("NPY_S3_BUCKET")
        .expect("NPY_S3_BUCKET: run `eval \"$(scripts/s3-server.sh env)\"` first");
    let data: Vec<f64> = (0..3_000_000)
        .map(|i| ((i as f64 * 1e-3).sin() * 100.0 * 1024.0).round() / 1024.0)
        .collect();
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    writer.set_compression(Compression::DEFLATED).unwrap();
    writer.add("x", &data[..]).unwrap();
    let bytes = writer.into_inner().unwrap().into_inner();
    let (store, path) = Store::from_url(&format!("s3://{bucket}/npz-slices/a.npz")).unwrap();
    store.objects().put(&path, bytes.into()).await.unwrap();

    let counting = Counting::new(store.objects().clone());
    let archive = RemoteNpz::open(counting.clone(), path, NpzOptions::default())
        .await
        .unwrap();
    let (_, directory) = counting.gets();
    let index = archive.block_index("x").unwrap().unwrap();
    let largest = (0..index.len())
        .map(|i| index.input_range(i..i + 1))
        .map(|r| r.end - r.start)
        .max()
        .unwrap();
    counting.reset();
    let rows = archive.read_rows("x", 2_000_000..2_131_072).await.unwrap();
    assert!(rows.view::<f64>().unwrap().to_vec() == data[2_000_000..2_131_072]);
    let (requests, fetched) = counting.gets();
    eprintln!(
        "1 MiB slice: {requests} GETs, {fetched} bytes (blocks of up to {largest} bytes; \
         directory {directory} bytes; member {} bytes compressed)",
        archive.member("x").unwrap().compressed_size
    );
    assert_eq!(requests, 2);
    assert!(fetched <= 2 * largest + (64 << 10) + 512, "{fetched}");
}

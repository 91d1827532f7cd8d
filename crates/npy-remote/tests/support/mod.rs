//! Shared by the npy-remote tests: the counting store under a short name,
//! test data and the numpy fixtures.
#![allow(dead_code)]

use std::ops::Range;

#[allow(unused_imports)] // not every test file counts
pub use npy_store_counter::CountingStore as Counting;

/// npy-core's error, when `error` is a format error: for comparing with a
/// local read's.
pub fn format_error(error: &npy_remote::Error) -> Option<&npy_core::Error> {
    match error.kind() {
        npy_remote::ErrorKind::Format(source) => Some(source),
        _ => None,
    }
}

/// The bytes of rows `rows` of a C-order array of `row_bytes`-byte rows
/// whose data is the byte pattern `(i * 7 + 3) as u8`.
pub fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i.wrapping_mul(7) + 3) as u8).collect()
}

/// `range` of `data` as a `Vec`.
pub fn slice(data: &[u8], range: Range<usize>) -> Vec<u8> {
    data[range].to_vec()
}

/// The repository's numpy fixtures directory.
pub fn fixtures_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// The fixtures manifest (numpy's answers).
pub fn manifest() -> serde_json::Value {
    let text = std::fs::read_to_string(fixtures_dir().join("manifest.json")).expect("manifest");
    serde_json::from_str(&text).expect("manifest JSON")
}

/// `bytes` put as `archive.npz` in a counting in-memory store, its counts
/// reset: the store and the path.
pub async fn put(
    bytes: Vec<u8>,
) -> (
    std::sync::Arc<Counting<npy_remote::object_store::memory::InMemory>>,
    npy_remote::object_store::path::Path,
) {
    use npy_remote::object_store::ObjectStoreExt;
    let store = Counting::new(npy_remote::object_store::memory::InMemory::new());
    let path = npy_remote::object_store::path::Path::from("archive.npz");
    store.put(&path, bytes.into()).await.unwrap();
    store.reset();
    (store, path)
}

//! Reading from in-memory and local-file stores: the request budget
//! (counted by a wrapper store), row ranges, whole arrays, scattered reads,
//! prefetching blocks, and the same errors as local files.

mod support;

use std::sync::Arc;

use npy_core::{DType, Header, Order, ParseOptions, ReadOptions};
use npy_remote::ErrorKind;
use npy_remote::object_store::memory::InMemory;
use npy_remote::object_store::path::Path;
use npy_remote::object_store::{ObjectStore, ObjectStoreExt};
use npy_remote::{OPEN_PREFIX, RemoteArray, Transfer};
use support::{Counting, pattern};

/// An array of `shape` `<u2` (C order unless `order`) with pattern data,
/// put into a counting in-memory store; returns (store, path, file bytes).
async fn put_array(shape: &[usize], order: Order) -> (Arc<Counting<InMemory>>, Path, Vec<u8>) {
    let header = Header::new(DType::parse("<u2").unwrap(), order, shape.to_vec());
    let mut file = header.to_bytes(None).unwrap();
    file.extend(pattern(header.data_len().unwrap()));
    let store = Counting::new(InMemory::new());
    let path = Path::from("data/a.npy");
    store.put(&path, file.clone().into()).await.unwrap();
    store.reset();
    (store, path, file)
}

#[tokio::test]
async fn open_is_one_request_of_at_most_4_kib() {
    // 64 MiB of data: open must not depend on it.
    let (store, path, file) = put_array(&[1 << 20, 32], Order::C).await;
    let array = RemoteArray::open(store.clone(), path).await.unwrap();
    let (requests, bytes) = store.gets();
    assert_eq!(requests, 1);
    assert_eq!(bytes, OPEN_PREFIX);
    assert_eq!(array.header().shape, [1 << 20, 32]);
    assert_eq!(array.object_size(), file.len() as u64);
    assert_eq!(array.layout().data_offset, 128);
}

#[tokio::test]
async fn a_long_header_costs_a_second_request() {
    // 300 fields: a header of several KiB.
    let fields: Vec<String> = (0..300)
        .map(|i| format!("('field_{i:04}', '<f8')"))
        .collect();
    let descr = format!("[{}]", fields.join(", "));
    let header = Header::new(DType::parse(&descr).unwrap(), Order::C, vec![3]);
    let mut file = header.to_bytes(None).unwrap();
    assert!(file.len() as u64 > OPEN_PREFIX);
    file.extend(pattern(header.data_len().unwrap()));
    let store = Counting::new(InMemory::new());
    let path = Path::from("wide.npy");
    store.put(&path, file.clone().into()).await.unwrap();
    store.reset();
    let array = RemoteArray::open(store.clone(), path).await.unwrap();
    assert_eq!(store.gets().0, 2);
    assert_eq!(store.gets().1, array.layout().data_offset as u64);
    assert_eq!(array.header(), &header);
}

#[tokio::test]
async fn a_row_range_fetches_exactly_its_bytes() {
    let (store, path, file) = put_array(&[1000, 5], Order::C).await;
    let array = RemoteArray::open(store.clone(), path).await.unwrap();
    store.reset();
    let rows = array.read_rows(100..250).await.unwrap();
    assert_eq!(store.gets(), (1, 150 * 10));
    assert_eq!(rows.header().shape, [150, 5]);
    assert_eq!(rows.bytes(), &file[128 + 1000..128 + 2500]);
}

#[tokio::test]
async fn fortran_rows_run_along_the_last_axis() {
    let (store, path, file) = put_array(&[4, 3, 50], Order::Fortran).await;
    let array = RemoteArray::open(store.clone(), path).await.unwrap();
    assert_eq!((array.rows(), array.row_bytes()), (50, 24));
    let rows = array.read_rows(10..12).await.unwrap();
    assert_eq!(rows.header().shape, [4, 3, 2]);
    assert_eq!(rows.bytes(), &file[128 + 240..128 + 288]);
}

#[tokio::test]
async fn whole_reads_use_concurrent_parts_of_the_configured_size() {
    let (store, path, file) = put_array(&[4096, 64], Order::C).await; // 512 KiB
    let transfer = Transfer {
        part_size: 64 << 10,
        concurrency: 3,
        ..Transfer::default()
    };
    let array = RemoteArray::open_with(store.clone(), path, ReadOptions::default(), transfer)
        .await
        .unwrap();
    store.reset();
    let all = array.read_all().await.unwrap();
    assert_eq!(store.gets(), (8, 512 << 10));
    assert_eq!(all.bytes(), &file[128..]);
    assert_eq!(all.header().shape, [4096, 64]);
}

#[tokio::test]
async fn clustered_scattered_reads_make_far_fewer_requests() {
    let (store, path, file) = put_array(&[100_000, 4], Order::C).await; // 800 KB
    let array = RemoteArray::open(store.clone(), path).await.unwrap();
    store.reset();
    // 1000 rows in 5 clusters of 200 nearby rows each, shuffled.
    let mut rows: Vec<usize> = (0..1000)
        .map(|i| (i % 5) * 20_000 + (i * 37) % 400)
        .collect();
    rows.reverse();
    let gathered = array.read_rows_at(&rows).await.unwrap();
    let (requests, _) = store.gets();
    assert!(requests <= 5, "{requests} requests for 1000 clustered rows");
    assert_eq!(gathered.header().shape, [1000, 4]);
    for (i, &row) in rows.iter().enumerate() {
        assert_eq!(
            &gathered.bytes()[i * 8..i * 8 + 8],
            &file[128 + row * 8..128 + row * 8 + 8],
            "row {row}"
        );
    }
}

#[tokio::test]
async fn far_apart_reads_are_not_merged() {
    let (store, path, _) = put_array(&[1 << 20, 1], Order::C).await; // 2 MiB
    let transfer = Transfer {
        coalesce_gap: 1024,
        ..Transfer::default()
    };
    let array = RemoteArray::open_with(store.clone(), path, ReadOptions::default(), transfer)
        .await
        .unwrap();
    store.reset();
    let rows: Vec<usize> = (0..10).map(|i| i * 100_000).collect();
    array.read_rows_at(&rows).await.unwrap();
    assert_eq!(store.gets(), (10, 20));
}

#[tokio::test]
async fn elements_are_read_by_index_and_converted() {
    let header = Header::new(DType::parse(">i4").unwrap(), Order::Fortran, vec![3, 4]);
    let values: Vec<i32> = (0..12).map(|i| i * 1000 - 5).collect(); // Fortran order
    let mut file = header.to_bytes(None).unwrap();
    file.extend(values.iter().flat_map(|v| v.to_be_bytes()));
    let store = Arc::new(InMemory::new());
    let path = Path::from("be.npy");
    store.put(&path, file.into()).await.unwrap();
    let options = ReadOptions {
        to_native: true,
        ..ReadOptions::default()
    };
    let array = RemoteArray::open_with(store, path, options, Transfer::default())
        .await
        .unwrap();
    let bytes = array
        .read_elements(&[vec![2, 3], vec![0, 0], vec![1, 2]])
        .await
        .unwrap();
    let got: Vec<i32> = bytes
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    // Fortran: element [i, j] is at i + 3 j.
    assert_eq!(got, [values[11], values[0], values[7]]);
    let err = array.read_elements(&[vec![3, 0]]).await.unwrap_err();
    assert!(
        err.to_string()
            .ends_with("index 3 is out of bounds for axis 0 with size 3"),
        "{err}"
    );
    // Any index form, as the mapped gather takes.
    let same = array.read_elements(&[[2usize, 3], [0, 0]]).await.unwrap();
    assert_eq!(same, bytes[..8]);
}

#[tokio::test]
async fn row_blocks_cover_the_array_in_order() {
    let (store, path, file) = put_array(&[1001, 3], Order::C).await;
    let array = RemoteArray::open(store.clone(), path).await.unwrap();
    let mut blocks = array.row_blocks(100);
    let mut seen = Vec::new();
    let mut next_row = 0;
    while let Some(block) = blocks.next().await {
        let (rows, block) = block.unwrap();
        assert_eq!(rows.start, next_row);
        next_row = rows.end;
        assert_eq!(block.header().shape, [rows.len(), 3]);
        seen.extend_from_slice(block.bytes());
    }
    assert_eq!(next_row, 1001);
    assert_eq!(seen, &file[128..]);
}

#[tokio::test]
async fn row_blocks_are_a_stream_too() {
    use futures::StreamExt;
    let (store, path, file) = put_array(&[250, 2], Order::C).await;
    let array = RemoteArray::open(store, path).await.unwrap();
    let blocks: Vec<_> = array.row_blocks(100).into_stream().collect().await;
    let rows: Vec<_> = blocks
        .iter()
        .map(|b| b.as_ref().unwrap().0.clone())
        .collect();
    assert_eq!(rows, [0..100, 100..200, 200..250]);
    assert_eq!(blocks[2].as_ref().unwrap().1.bytes(), &file[128 + 800..]);
}

#[tokio::test]
async fn out_of_bounds_rows_are_refused() {
    let (store, path, _) = put_array(&[10, 2], Order::C).await;
    let array = RemoteArray::open(store, path).await.unwrap();
    let err = array.read_rows(5..11).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "data/a.npy: range 5..11 is out of bounds for axis 0 with size 10"
    );
    let err = array.read_rows_at(&[3, 10]).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "data/a.npy: range 10..11 is out of bounds for axis 0 with size 10"
    );
}

#[tokio::test]
async fn a_short_object_gives_numpys_error() {
    let (_, _, file) = put_array(&[10, 2], Order::C).await;
    let store = Arc::new(InMemory::new());
    let path = Path::from("short.npy");
    store
        .put(&path, file[..file.len() - 3].to_vec().into())
        .await
        .unwrap();
    let err = RemoteArray::open(store, path).await.unwrap_err();
    let local = npy_core::read_npy(&file[..file.len() - 3], &ReadOptions::default()).unwrap_err();
    assert_eq!(
        support::format_error(&err).unwrap().to_string(),
        local.to_string()
    );
    assert!(
        err.to_string()
            .starts_with("short.npy: Failed to read all data"),
        "{err}"
    );
}

#[tokio::test]
async fn an_empty_object_and_a_missing_one() {
    let store = Arc::new(InMemory::new());
    store
        .put(&Path::from("empty"), Vec::new().into())
        .await
        .unwrap();
    let err = RemoteArray::open(store.clone(), Path::from("empty"))
        .await
        .unwrap_err();
    let local = npy_core::read_npy(&[][..], &ReadOptions::default()).unwrap_err();
    assert_eq!(
        support::format_error(&err).unwrap().to_string(),
        local.to_string()
    );
    let err = RemoteArray::open(store, Path::from("nothing.npy"))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert!(err.to_string().starts_with("open nothing.npy: "), "{err}");
}

#[tokio::test]
async fn max_header_size_is_applied_before_the_header_is_fetched() {
    let (store, path, _) = put_array(&[10], Order::C).await;
    let options = ReadOptions {
        parse: ParseOptions {
            max_header_size: 50,
            ..Default::default()
        },
        ..ReadOptions::default()
    };
    let err = RemoteArray::open_with(store, path, options, Transfer::default())
        .await
        .unwrap_err();
    assert!(matches!(
        support::format_error(&err),
        Some(npy_core::Error::HeaderTooLarge {
            length: 118,
            max: 50
        })
    ));
}

#[tokio::test]
async fn local_file_system_store_reads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, file) = put_array(&[300, 7], Order::C).await;
    std::fs::write(dir.path().join("a.npy"), &file).unwrap();
    let store: Arc<dyn ObjectStore> = Arc::new(
        npy_remote::object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap(),
    );
    let array = RemoteArray::open(store, Path::from("a.npy")).await.unwrap();
    assert_eq!(
        array.read_rows(1..3).await.unwrap().bytes(),
        &file[128 + 14..128 + 42]
    );
    assert_eq!(array.read_all().await.unwrap().bytes(), &file[128..]);
    // And through a file:// URL.
    let url = format!("file://{}", dir.path().join("a.npy").display());
    let array = RemoteArray::open_url(&url).await.unwrap();
    assert_eq!(array.header().shape, [300, 7]);
}

#[test]
fn the_blocking_facade_reads_without_an_async_caller() {
    let runtime = npy_remote::blocking::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let header = Header::new(DType::parse("<u2").unwrap(), Order::C, vec![50, 2]);
    let mut file = header.to_bytes(None).unwrap();
    file.extend(pattern(200));
    std::fs::write(dir.path().join("b.npy"), &file).unwrap();
    let url = format!("file://{}", dir.path().join("b.npy").display());
    let array = runtime.open_url(&url).unwrap();
    assert_eq!(array.read_rows(49..50).unwrap().bytes(), &file[128 + 196..]);
    let blocks: Vec<_> = array.row_blocks(20).map(|b| b.unwrap().0).collect();
    assert_eq!(blocks, [0..20, 20..40, 40..50]);
}

#[tokio::test]
async fn a_part_size_larger_than_any_object_reads_in_one_request() {
    let (store, path, file) = put_array(&[100, 3], Order::C).await;
    let one = Transfer {
        part_size: usize::MAX,
        concurrency: 1,
        ..Transfer::default()
    };
    let array = RemoteArray::open_with(store.clone(), path, ReadOptions::default(), one)
        .await
        .unwrap();
    store.reset();
    assert_eq!(array.read_all().await.unwrap().bytes(), &file[128..]);
    assert_eq!(store.gets(), (1, 600));
}

#[tokio::test]
async fn reads_after_the_object_is_replaced_fail_instead_of_mixing_versions() {
    let (store, path, file) = put_array(&[100, 3], Order::C).await;
    let array = RemoteArray::open(store.clone(), path.clone())
        .await
        .unwrap();
    assert_eq!(
        array.read_rows(0..1).await.unwrap().bytes(),
        &file[128..134]
    );
    store.put(&path, file.clone().into()).await.unwrap(); // same bytes, a new version
    let err = array.read_rows(0..1).await.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Changed { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("read data/a.npy: the object changed"),
        "{err}"
    );
    // Opened again, it reads.
    let array = RemoteArray::open(store, path).await.unwrap();
    assert_eq!(
        array.read_rows_at(&[99]).await.unwrap().bytes(),
        &file[128 + 594..]
    );
}

/// TLS comes from rustls with ring, the one crypto provider compiled in
/// (no aws-lc): building an HTTPS client must find it. Nothing listens on
/// the port, so the open fails with an I/O error, never a panic about a
/// missing provider.
#[tokio::test]
async fn https_clients_find_their_crypto_provider() {
    let error = RemoteArray::open_url("https://127.0.0.1:9/array.npy")
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(!text.contains("CryptoProvider"), "{text}");
    assert!(text.contains("127.0.0.1:9"), "{text}");
}

#[tokio::test]
async fn windows_make_one_request_per_planned_span() {
    // A token array of 1 Mi u2 (2 MiB); 4 windows of 1,024 tokens, two of
    // them overlapping: three spans after planning, so three requests.
    let (store, path, file) = put_array(&[1 << 20], Order::C).await;
    let transfer = Transfer {
        coalesce_gap: 0,
        ..Transfer::default()
    };
    let array = RemoteArray::open_with(store.clone(), path, ReadOptions::default(), transfer)
        .await
        .unwrap();
    store.reset();
    let starts = [500_000, 10, 700_000, 10 + 512];
    let batch = array.read_windows(&starts, 1024).await.unwrap();
    assert_eq!(store.gets().0, 3, "requests for 3 planned spans");
    for (k, &start) in starts.iter().enumerate() {
        let at = 128 + start * 2;
        assert_eq!(
            &batch[k * 2048..(k + 1) * 2048],
            &file[at..at + 2048],
            "window {k}"
        );
    }
    // Past the end: numpy's words, no request.
    store.reset();
    let error = array
        .read_windows(&[(1 << 20) - 10], 1024)
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("index 1048576 is out of bounds for axis 0 with size 1048576"),
        "{error}"
    );
    assert_eq!(store.gets().0, 0);
    assert!(array.read_windows(&[], 1024).await.unwrap().is_empty());
}

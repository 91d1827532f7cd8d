//! Uploads byte-identical to np.save, the streaming writer and the
//! parallel-writer plan, on in-memory and local-file stores.

mod support;

use std::sync::Arc;

use bytes::Bytes;
use npy_core::{DType, Header, Order};
use npy_remote::object_store::memory::InMemory;
use npy_remote::object_store::path::Path;
use npy_remote::object_store::{ObjectStore, ObjectStoreExt};
use npy_remote::{
    ErrorKind, MIN_PART_SIZE, PlanError, PlanOptions, RemoteArray, Store, StreamWriter,
    UploadOptions, WritePlan, upload,
};
use support::{Counting, fixtures_dir, manifest, pattern};

async fn object(store: &Store, path: &Path) -> Vec<u8> {
    store
        .objects()
        .get(path)
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap()
        .to_vec()
}

async fn exists(store: &Store, path: &Path) -> bool {
    store.objects().head(path).await.is_ok()
}

#[tokio::test]
async fn uploads_are_byte_identical_to_numpys_files() {
    let store = Store::with_multipart(Arc::new(InMemory::new()));
    let mut checked = 0;
    for entry in manifest()["npy"].as_array().unwrap() {
        // Files np.save wrote (not hand-made legacy layouts).
        if entry["np_save_header"].as_bool() != Some(true) {
            continue;
        }
        let file = entry["file"].as_str().unwrap();
        let bytes = std::fs::read(fixtures_dir().join(file)).unwrap();
        let parse = npy_core::ParseOptions {
            max_header_size: usize::MAX,
            ..Default::default()
        };
        let npy_core::ParsedHeader { header, layout } = Header::parse(&bytes, &parse).unwrap();
        let data = Bytes::copy_from_slice(&bytes[layout.data_offset..layout.data_end()]);
        let path = Path::from(file);
        upload(
            &store,
            &path,
            &npy_core::NpyBytes::new(&header, &data).unwrap(),
            UploadOptions::default(),
        )
        .await
        .unwrap();
        assert_eq!(
            object(&store, &path).await,
            &bytes[..layout.data_end()],
            "{file}"
        );
        checked += 1;
    }
    assert!(checked > 40, "{checked}");
}

#[tokio::test]
async fn a_small_array_is_one_put_and_a_wrong_length_is_refused() {
    let counting = Counting::new(InMemory::new());
    let store = Store::new(counting.clone());
    let header = Header::new(DType::parse("<i8").unwrap(), Order::C, vec![100]);
    let path = Path::from("small.npy");
    upload(
        &store,
        &path,
        &npy_core::NpyBytes::new(&header, &pattern(800)).unwrap(),
        UploadOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(counting.puts(), 1);
    // A source whose data does not match its header is refused before
    // anything is stored, small (one PUT) or big (multipart, aborted).
    for (len, options) in [
        (801, UploadOptions::default()),
        (
            6 << 20,
            UploadOptions {
                part_size: 5 << 20,
                concurrency: 2,
            },
        ),
    ] {
        let lying = Lying {
            header: header.clone(),
            data: pattern(len),
        };
        let err = upload(&store, &Path::from("lying.npy"), &lying, options)
            .await
            .unwrap_err();
        assert!(err.to_string().contains(&len.to_string()), "{err}");
        let missing = store
            .objects()
            .head(&Path::from("lying.npy"))
            .await
            .unwrap_err();
        assert!(
            matches!(missing, npy_remote::object_store::Error::NotFound { .. }),
            "{missing:?}"
        );
    }
    assert_eq!(counting.puts(), 1);
}

/// A source whose data is not what its header describes.
struct Lying {
    header: Header,
    data: Vec<u8>,
}

impl npy_core::NpySource for Lying {
    fn npy_header(&self) -> Header {
        self.header.clone()
    }

    fn npy_data(&self) -> npy_core::Result<npy_core::DataChunks<'_>> {
        Ok(Box::new(std::iter::once(std::borrow::Cow::Borrowed(
            &self.data[..],
        ))))
    }
}

#[tokio::test]
async fn a_big_array_is_a_multipart_upload_on_memory_and_local_stores() {
    let dir = tempfile::tempdir().unwrap();
    let local =
        npy_remote::object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap();
    let counting = Counting::new(InMemory::new());
    let header = Header::new(
        DType::parse("<f4").unwrap(),
        Order::Fortran,
        vec![1000, 4500],
    ); // 18 MB
    let data = pattern(header.data_len().unwrap());
    let mut expected = header.to_bytes(None).unwrap();
    expected.extend_from_slice(&data);
    let options = UploadOptions {
        part_size: MIN_PART_SIZE,
        concurrency: 2,
    };
    for store in [Store::new(counting.clone()), Store::new(Arc::new(local))] {
        let path = Path::from("big.npy");
        upload(
            &store,
            &path,
            &npy_core::NpyBytes::new(&header, &data).unwrap(),
            options,
        )
        .await
        .unwrap();
        assert_eq!(object(&store, &path).await, expected);
    }
    assert_eq!(counting.puts(), 0, "multipart, not a single PUT");
}

#[tokio::test]
async fn the_streaming_writer_puts_the_header_part_last() {
    let store = Store::with_multipart(Arc::new(InMemory::new()));
    let path = Path::from("stream.npy");
    let dtype = DType::parse("<u2").unwrap();
    let options = UploadOptions {
        part_size: MIN_PART_SIZE,
        concurrency: 2,
    };
    let mut writer = StreamWriter::new(
        &store,
        path.clone(),
        dtype.clone(),
        Order::C,
        vec![0, 6],
        options,
    )
    .unwrap();
    let rows = 1_500_000; // 18 MB: four parts
    let data = pattern(rows * 12);
    for chunk in data.chunks(777_777 * 12) {
        writer.write(chunk).await.unwrap();
    }
    let header = writer.finish().await.unwrap();
    assert_eq!(header.shape, [rows, 6]);
    let mut expected = Header::new(dtype, Order::C, vec![rows, 6])
        .to_bytes(None)
        .unwrap();
    expected.extend_from_slice(&data);
    assert_eq!(object(&store, &path).await, expected);
    let array = RemoteArray::open(store.objects().clone(), path)
        .await
        .unwrap();
    assert_eq!(array.header().shape, [rows, 6]);
}

#[tokio::test]
async fn the_streaming_writer_refuses_partial_rows_and_leaves_no_object() {
    let store = Store::with_multipart(Arc::new(InMemory::new()));
    let path = Path::from("partial.npy");
    let dtype = DType::parse("<f8").unwrap();
    let mut writer = StreamWriter::new(
        &store,
        path.clone(),
        dtype.clone(),
        Order::Fortran,
        vec![3, 0],
        UploadOptions::default(),
    )
    .unwrap();
    writer.write(&pattern(3 * 8 * 10 + 5)).await.unwrap();
    let err = writer.finish().await.unwrap_err();
    assert!(
        err.to_string()
            .contains("not a whole number of rows of 24 bytes"),
        "{err}"
    );
    assert!(!exists(&store, &path).await);
    // A small complete one is a single PUT of a Fortran array.
    let mut writer = StreamWriter::new(
        &store,
        path.clone(),
        dtype,
        Order::Fortran,
        vec![3, 0],
        UploadOptions::default(),
    )
    .unwrap();
    writer.write(&pattern(3 * 8 * 10)).await.unwrap();
    assert_eq!(writer.finish().await.unwrap().shape, [3, 10]);
    assert_eq!(
        RemoteArray::open(store.objects().clone(), path)
            .await
            .unwrap()
            .rows(),
        10
    );
}

#[tokio::test]
async fn streaming_needs_numbered_parts() {
    let store = Store::new(Arc::new(InMemory::new()));
    let err = StreamWriter::new(
        &store,
        Path::from("x"),
        DType::parse("<f8").unwrap(),
        Order::C,
        vec![0],
        UploadOptions::default(),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("not supported by this store"),
        "{err}"
    );
}

/// Rows `rows` of the plan test's data (C order, 8-byte rows of pattern).
fn rows_data(data: &[u8], rows: &std::ops::Range<usize>, row_bytes: usize) -> Bytes {
    Bytes::copy_from_slice(&data[rows.start * row_bytes..rows.end * row_bytes])
}

#[tokio::test]
async fn workers_upload_their_parts_of_a_plan_in_any_order() {
    let store = Store::with_multipart(Arc::new(InMemory::new()));
    let path = Path::from("planned.npy");
    let shape = vec![2_000_000, 2];
    let dtype = DType::parse("<i4").unwrap();
    let plan = WritePlan::create(
        &store,
        &path,
        dtype.clone(),
        Order::C,
        shape.clone(),
        PlanOptions { part_size: 0 },
    )
    .await
    .unwrap();
    // 16 MB in parts of at least 5 MiB.
    assert_eq!(plan.parts.len(), 4);
    for part in &plan.parts[..3] {
        assert!(part.bytes.end - part.bytes.start >= MIN_PART_SIZE as u64);
    }
    let plan = WritePlan::from_json(&plan.to_json()).unwrap();
    let data = pattern(16_000_000);
    let assignments = plan.assign(3);
    assert_eq!(assignments.iter().map(Vec::len).sum::<usize>(), 4);
    let mut workers = Vec::new();
    for parts in assignments.into_iter().rev() {
        let (plan, store, data) = (plan.clone(), store.clone(), data.clone());
        workers.push(tokio::spawn(async move {
            let mut receipts = Vec::new();
            for index in parts.into_iter().rev() {
                let rows = plan.parts[index].rows.clone();
                receipts.push(
                    plan.upload_part(&store, index, rows_data(&data, &rows, 8))
                        .await
                        .unwrap(),
                );
            }
            receipts
        }));
    }
    let mut receipts = Vec::new();
    for worker in workers {
        receipts.extend(worker.await.unwrap());
    }
    plan.complete(&store, &receipts).await.unwrap();
    let mut expected = Header::new(dtype, Order::C, shape).to_bytes(None).unwrap();
    expected.extend_from_slice(&data);
    assert_eq!(object(&store, &path).await, expected);
}

#[tokio::test]
async fn a_missing_part_aborts_the_plan_and_leaves_no_object() {
    let store = Store::with_multipart(Arc::new(InMemory::new()));
    let path = Path::from("aborted.npy");
    let plan = WritePlan::create(
        &store,
        &path,
        DType::parse("<f8").unwrap(),
        Order::C,
        vec![2_000_000],
        PlanOptions { part_size: 0 },
    )
    .await
    .unwrap();
    assert_eq!(plan.parts.len(), 4);
    let data = pattern(16_000_000);
    let mut receipts = Vec::new();
    for index in [0, 1, 3] {
        let rows = plan.parts[index].rows.clone();
        receipts.push(
            plan.upload_part(&store, index, rows_data(&data, &rows, 8))
                .await
                .unwrap(),
        );
    }
    let err = plan.complete(&store, &receipts).await.unwrap_err();
    let missing = PlanError::PartMissing {
        index: 2,
        rows: 1310720..1966080,
    };
    assert!(
        matches!(err.kind(), ErrorKind::Plan(problem) if *problem == missing),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .ends_with("part 2 (rows 1310720..1966080) was not uploaded; the upload was aborted"),
        "{err}"
    );
    assert!(!exists(&store, &path).await);
    // A part with the wrong number of bytes is refused before upload.
    let err = plan
        .upload_part(&store, 1, Bytes::from_static(b"short"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Plan(PlanError::PartLength {
                index: 1,
                actual: 5,
                ..
            })
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn plans_keep_within_the_part_count_and_size_rules() {
    let store = Store::with_multipart(Arc::new(InMemory::new()));
    let dtype = DType::parse("u1").unwrap();
    // 100 GB of 1-byte rows: 10,000 parts at most, so parts of ≥ 10 MB.
    let plan = WritePlan::create(
        &store,
        &Path::from("huge.npy"),
        dtype.clone(),
        Order::C,
        vec![100_000_000_000],
        PlanOptions::default(),
    )
    .await
    .unwrap();
    assert!(plan.parts.len() <= 10_000);
    assert_eq!(plan.parts.last().unwrap().rows.end, 100_000_000_000);
    assert_eq!(plan.parts.last().unwrap().bytes.end, 128 + 100_000_000_000);
    // A row larger than the largest part cannot be planned.
    let err = WritePlan::create(
        &store,
        &Path::from("wide.npy"),
        dtype.clone(),
        Order::C,
        vec![2, 6 << 30],
        PlanOptions::default(),
    )
    .await
    .unwrap_err();
    let too_large = PlanError::RowTooLarge {
        row_bytes: 6 << 30,
        max_part_size: npy_remote::MAX_PART_SIZE,
    };
    assert!(
        matches!(err.kind(), ErrorKind::Plan(problem) if *problem == too_large),
        "{err:?}"
    );
    // An empty array is one part holding the header.
    let plan = WritePlan::create(
        &store,
        &Path::from("empty.npy"),
        dtype,
        Order::C,
        vec![0, 3],
        PlanOptions::default(),
    )
    .await
    .unwrap();
    let receipt = plan.upload_part(&store, 0, Bytes::new()).await.unwrap();
    plan.complete(&store, &[receipt]).await.unwrap();
    let array = RemoteArray::open(store.objects().clone(), Path::from("empty.npy"))
        .await
        .unwrap();
    assert_eq!(array.header().shape, [0, 3]);
    let _: &dyn ObjectStore = store.objects().as_ref();
}

#[tokio::test]
async fn whole_objects_copy_up_and_down_in_parts() {
    let counting = Counting::new(InMemory::new());
    let store = Store::new(counting.clone());
    let path = Path::from("copied.bin");
    let bytes = pattern(12_345_678);
    let options = UploadOptions {
        part_size: MIN_PART_SIZE,
        concurrency: 2,
    };
    let mut sent = 0;
    npy_remote::upload_reader(
        &store,
        &path,
        &mut &bytes[..],
        bytes.len() as u64,
        options,
        |n| sent = n,
    )
    .await
    .unwrap();
    assert_eq!(sent, bytes.len() as u64);
    assert_eq!(counting.puts(), 0, "a multipart upload");
    counting.reset();
    let mut back = Vec::new();
    let transfer = npy_remote::Transfer {
        part_size: 1 << 20,
        ..Default::default()
    };
    let size = npy_remote::download(store.objects(), &path, &mut back, transfer, |_| {})
        .await
        .unwrap();
    assert_eq!(size, bytes.len() as u64);
    assert_eq!(back, bytes);
    assert_eq!(counting.gets(), (12, bytes.len() as u64));
    // A source shorter than announced: the upload is aborted, no object.
    let err = npy_remote::upload_reader(
        &store,
        &Path::from("short.bin"),
        &mut &bytes[..],
        bytes.len() as u64 + 1,
        options,
        |_| {},
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("short.bin"), "{err}");
    assert!(!exists(&store, &Path::from("short.bin")).await);
}

//! The live suite against a real S3-protocol server on 127.0.0.1 (moto's
//! server, started by `scripts/s3-server.sh start`; its credentials and
//! endpoint come from `scripts/s3-server.sh env`, the way `object_store`
//! reads them from the environment). numpy checks go through s3fs in the
//! venv (`NPY_PYTHON` from scripts/setup-venv.sh). `.ci/run` runs these;
//! without the server or Python they fail, they never skip.
//!
//!     scripts/s3-server.sh start && eval "$(scripts/s3-server.sh env)"
//!     NPY_PYTHON="$(scripts/setup-venv.sh)" cargo test -p npy-remote --test live_s3 -- --ignored

mod support;

use std::process::Command;
use std::sync::Arc;

use bytes::Bytes;
use npy_core::{DType, Header, Order, ReadOptions};
use npy_remote::object_store::ObjectStore;
use npy_remote::object_store::path::Path;
use npy_remote::{
    ErrorKind, MIN_PART_SIZE, OPEN_PREFIX, PlanError, PlanOptions, RemoteArray, Store, Transfer,
    UploadOptions, UploadedPart, WritePlan, upload,
};
use support::{Counting, pattern};

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run `scripts/s3-server.sh start` and `eval \"$(scripts/s3-server.sh env)\"` first (and NPY_PYTHON=\"$(scripts/setup-venv.sh)\")")
    })
}

/// `s3://<bucket>/<test>/<key>`: each test writes under its own prefix.
fn url(key: &str) -> String {
    format!("s3://{}/{key}", env("NPY_S3_BUCKET"))
}

fn store(key: &str) -> (Store, Path) {
    Store::from_url(&url(key)).unwrap()
}

/// Runs Python code with the venv's numpy and s3fs; `S3` is an
/// `s3fs.S3FileSystem` on the local server. Returns stdout.
fn python(code: &str) -> String {
    let prelude = "import os, sys, json, numpy as np, s3fs\n\
                   S3 = s3fs.S3FileSystem(client_kwargs={'endpoint_url': os.environ['AWS_ENDPOINT_URL']})\n";
    let out = Command::new(env("NPY_PYTHON"))
        .args(["-c", &format!("{prelude}{code}")])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
#[ignore = "needs the local S3 server (scripts/s3-server.sh)"]
async fn open_and_read_over_s3_within_the_request_budget() {
    let (plain, path) = store("read/a.npy");
    let header = Header::new(DType::parse(">f8").unwrap(), Order::C, vec![200_000, 4]); // 6.4 MB
    let values: Vec<f64> = (0..800_000).map(|i| i as f64 * 0.5).collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    upload(
        &plain,
        &path,
        &npy_core::NpyBytes::new(&header, &data).unwrap(),
        UploadOptions::default(),
    )
    .await
    .unwrap();

    let counting = Counting::new(plain.objects().clone());
    let options = ReadOptions {
        to_native: true,
        ..ReadOptions::default()
    };
    let transfer = Transfer {
        part_size: 1 << 20,
        ..Transfer::default()
    };
    let array = RemoteArray::open_with(counting.clone(), path, options, transfer)
        .await
        .unwrap();
    assert_eq!(counting.gets(), (1, OPEN_PREFIX));
    assert_eq!(array.object_size(), 128 + data.len() as u64);

    counting.reset();
    let rows = array.read_rows(1000..1010).await.unwrap();
    assert_eq!(counting.gets(), (1, 320));
    assert_eq!(rows.view::<f64>().unwrap().to_vec(), values[4000..4040]);

    counting.reset();
    let all = array.read_all().await.unwrap();
    assert_eq!(counting.gets(), (7, data.len() as u64)); // 6.4 MB in 1 MiB parts
    assert_eq!(all.view::<f64>().unwrap().to_vec(), values);

    counting.reset();
    let picks: Vec<usize> = (0..1000).map(|i| (i * 7919) % 200_000).collect();
    let scattered = array.read_rows_at(&picks).await.unwrap();
    let (requests, _) = counting.gets();
    assert!(requests < 1000, "{requests}");
    let got = scattered.view::<f64>().unwrap().to_vec();
    for (i, &row) in picks.iter().enumerate() {
        assert_eq!(got[i * 4..i * 4 + 4], values[row * 4..row * 4 + 4]);
    }
}

#[tokio::test]
#[ignore = "needs the local S3 server (scripts/s3-server.sh)"]
async fn multipart_uploads_are_what_numpy_reads_and_we_read_numpys() {
    let (store, path) = store("multipart/big.npy");
    let header = Header::new(
        DType::parse("<i4").unwrap(),
        Order::Fortran,
        vec![3000, 2000],
    ); // 24 MB
    let data: Vec<u8> = (0..6_000_000i32).flat_map(i32::to_le_bytes).collect();
    let options = UploadOptions {
        part_size: MIN_PART_SIZE,
        concurrency: 4,
    };
    upload(
        &store,
        &path,
        &npy_core::NpyBytes::new(&header, &data).unwrap(),
        options,
    )
    .await
    .unwrap();
    let check = python(&format!(
        "a = np.load(S3.open('{}', 'rb'))\n\
         e = np.arange(6_000_000, dtype='<i4').reshape((3000, 2000), order='F')\n\
         print(a.dtype, a.shape, np.isfortran(a), bool((a == e).all()))",
        url("multipart/big.npy").trim_start_matches("s3://")
    ));
    assert_eq!(check.trim(), "int32 (3000, 2000) True True");

    // And numpy's file, written through s3fs, read by us.
    python(&format!(
        "with S3.open('{}', 'wb') as f: np.save(f, np.arange(60, dtype='>u2').reshape(3, 4, 5))",
        url("multipart/numpy.npy").trim_start_matches("s3://")
    ));
    let array = RemoteArray::open_url(&url("multipart/numpy.npy"))
        .await
        .unwrap();
    assert_eq!(array.header().shape, [3, 4, 5]);
    let rows = array.read_rows(1..2).await.unwrap();
    let got: Vec<u16> = rows
        .bytes()
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect();
    assert_eq!(got, (20..40).collect::<Vec<u16>>());
}

/// Runs the example worker `worker` of `workers` on the plan in `plan_file`.
fn spawn_worker(
    plan_file: &std::path::Path,
    worker: usize,
    workers: usize,
    die_after: Option<usize>,
) -> std::process::Child {
    // Cargo builds the package's examples for its tests, next to `deps/`.
    let exe = std::env::current_exe().unwrap();
    let examples = exe.parent().unwrap().parent().unwrap().join("examples");
    let mut command = Command::new(examples.join("plan_worker"));
    command
        .arg(plan_file)
        .arg(worker.to_string())
        .arg(workers.to_string());
    if let Some(parts) = die_after {
        command.args(["--die-after", &parts.to_string()]);
    }
    command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn the plan_worker example")
}

/// A plan for an `<i8` array of `rows` × 4 at `key`, written to a temp file.
async fn plan_for(key: &str, rows: usize) -> (WritePlan, tempfile::TempDir, std::path::PathBuf) {
    let plan = WritePlan::create_at_url(
        &url(key),
        DType::parse("<i8").unwrap(),
        Order::C,
        vec![rows, 4],
        PlanOptions { part_size: 0 },
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plan.json");
    std::fs::write(&file, plan.to_json()).unwrap();
    (plan, dir, file)
}

#[tokio::test]
#[ignore = "needs the local S3 server (scripts/s3-server.sh)"]
async fn four_worker_processes_write_one_array_through_a_plan() {
    let rows = 800_000; // 25.6 MB: five parts of ≥ 5 MiB
    let (plan, _dir, file) = plan_for("plan/array.npy", rows).await;
    assert_eq!(plan.parts.len(), 5);
    let workers: Vec<_> = (0..4).map(|w| spawn_worker(&file, w, 4, None)).collect();
    let mut receipts: Vec<UploadedPart> = Vec::new();
    for worker in workers {
        let out = worker.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        receipts.extend(serde_json::from_slice::<Vec<UploadedPart>>(&out.stdout).unwrap());
    }
    let (store, _) = store("plan/array.npy");
    plan.complete(&store, &receipts).await.unwrap();
    let check = python(&format!(
        "a = np.load(S3.open('{}', 'rb'))\n\
         print(a.dtype, a.shape, bool((a == np.arange({rows} * 4).reshape({rows}, 4)).all()))",
        url("plan/array.npy").trim_start_matches("s3://")
    ));
    assert_eq!(check.trim(), format!("int64 ({rows}, 4) True"));
}

#[tokio::test]
#[ignore = "needs the local S3 server (scripts/s3-server.sh)"]
async fn a_dead_worker_aborts_the_upload_and_leaves_no_object() {
    let (plan, _dir, file) = plan_for("plan/dead.npy", 800_000).await;
    let workers: Vec<_> = (0..4)
        .map(|w| spawn_worker(&file, w, 4, (w == 3).then_some(0)))
        .collect();
    let mut receipts: Vec<UploadedPart> = Vec::new();
    let mut failed = 0;
    for worker in workers {
        let out = worker.wait_with_output().unwrap();
        if out.status.success() {
            receipts.extend(serde_json::from_slice::<Vec<UploadedPart>>(&out.stdout).unwrap());
        } else {
            failed += 1;
        }
    }
    assert_eq!(failed, 1);
    let (store, path) = store("plan/dead.npy");
    let err = plan.complete(&store, &receipts).await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Plan(PlanError::PartMissing { .. })),
        "{err:?}"
    );
    let err = RemoteArray::open(store.objects().clone(), path)
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    // The upload itself is gone: no parts left behind on the server.
    let uploads = python(&format!(
        "import boto3\n\
         s3 = boto3.client('s3', endpoint_url=os.environ['AWS_ENDPOINT_URL'])\n\
         print(len(s3.list_multipart_uploads(Bucket='{}', Prefix='plan/dead.npy').get('Uploads', [])))",
        env("NPY_S3_BUCKET")
    ));
    assert_eq!(uploads.trim(), "0");
}

#[tokio::test]
#[ignore = "needs the local S3 server (scripts/s3-server.sh)"]
async fn missing_and_truncated_objects_fail_like_local_files() {
    let err = RemoteArray::open_url(&url("errors/nothing.npy"))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert!(
        err.to_string().starts_with("open errors/nothing.npy: "),
        "{err}"
    );

    let (store, path) = store("errors/truncated.npy");
    let header = Header::new(DType::parse("<f4").unwrap(), Order::C, vec![100]);
    let mut file = header.to_bytes(None).unwrap();
    file.extend(pattern(399)); // one byte short
    use npy_remote::object_store::ObjectStoreExt;
    store
        .objects()
        .put(&path, file.clone().into())
        .await
        .unwrap();
    let err = RemoteArray::open(store.objects().clone(), path)
        .await
        .unwrap_err();
    let local = npy_core::read_npy(&file[..], &ReadOptions::default()).unwrap_err();
    assert_eq!(
        support::format_error(&err).unwrap().to_string(),
        local.to_string()
    );
    assert!(err.to_string().contains("Failed to read all data"), "{err}");
}

#[tokio::test]
#[ignore = "needs the local S3 server (scripts/s3-server.sh)"]
async fn bad_credentials_are_refused_with_the_path_and_operation() {
    let (good, path) = store("auth/a.npy");
    upload(
        &good,
        &path,
        &npy_core::NpyBytes::new(
            &Header::new(DType::parse("u1").unwrap(), Order::C, vec![3]),
            &Bytes::from_static(&[1, 2, 3]),
        )
        .unwrap(),
        UploadOptions::default(),
    )
    .await
    .unwrap();
    // A client of our own: its TLS provider first (npy-remote's from_url does it).
    npy_remote::install_tls();
    let bad = npy_remote::object_store::aws::AmazonS3Builder::from_env()
        .with_url(url("auth/a.npy"))
        .with_access_key_id("AKIANOTAKEY")
        .with_secret_access_key("wrong")
        .build()
        .unwrap();
    let bad: Arc<dyn ObjectStore> = Arc::new(bad);
    let err = RemoteArray::open(bad, path).await.unwrap_err();
    let message = err.to_string();
    assert!(message.starts_with("open auth/a.npy: "), "{message}");
    assert!(!err.is_not_found());
    assert!(
        message.contains("InvalidAccessKeyId") || message.contains("403"),
        "{message}"
    );
}

#[tokio::test]
#[ignore = "needs the local S3 server (scripts/s3-server.sh)"]
async fn npz_archives_numpy_wrote_are_read_from_the_tail_over_s3() {
    python(&format!(
        "with S3.open('{}', 'wb') as f: np.savez(f, rows=np.arange(200_000, dtype='<i4').reshape(50_000, 4), meta=np.array(['a', 'bc']))\n\
         with S3.open('{}', 'wb') as f: np.savez_compressed(f, z=np.arange(1_000_000, dtype='<i8') % 7)",
        url("npz/stored.npz").trim_start_matches("s3://"),
        url("npz/deflated.npz").trim_start_matches("s3://"),
    ));
    let (store, path) = store("npz/stored.npz");
    let counting = Counting::new(store.objects().clone());
    let archive = npy_remote::npz::RemoteNpz::open(counting.clone(), path, Default::default())
        .await
        .unwrap();
    assert_eq!(counting.gets().0, 1);
    let keys: Vec<&str> = archive.members().iter().map(|m| m.key.as_str()).collect();
    assert_eq!(keys, ["rows", "meta"]);
    counting.reset();
    let rows = archive.array("rows").await.unwrap();
    let got = rows.read_rows(40_000..40_002).await.unwrap();
    assert_eq!(counting.gets().0, 2);
    assert_eq!(
        got.view::<i32>().unwrap().to_vec(),
        (160_000..160_008).collect::<Vec<i32>>()
    );

    let archive = npy_remote::npz::RemoteNpz::open_url(&url("npz/deflated.npz"))
        .await
        .unwrap();
    let z = archive.load("z").await.unwrap();
    let expected: Vec<i64> = (0..1_000_000).map(|i| i % 7).collect();
    assert_eq!(z.view::<i64>().unwrap().to_vec(), expected);
}

#[tokio::test]
#[ignore = "needs the local S3 server (scripts/s3-server.sh)"]
async fn a_replaced_object_is_not_read_as_a_mix_of_versions() {
    let (store, path) = store("changed/a.npy");
    let header = Header::new(DType::parse("<u2").unwrap(), Order::C, vec![1000]);
    upload(
        &store,
        &path,
        &npy_core::NpyBytes::new(&header, &pattern(2000)).unwrap(),
        UploadOptions::default(),
    )
    .await
    .unwrap();
    let array = RemoteArray::open(store.objects().clone(), path.clone())
        .await
        .unwrap();
    array.read_rows(0..10).await.unwrap();
    upload(
        &store,
        &path,
        &npy_core::NpyBytes::new(
            &header,
            &pattern(2000).into_iter().rev().collect::<Vec<u8>>(),
        )
        .unwrap(),
        UploadOptions::default(),
    )
    .await
    .unwrap();
    let err = array.read_rows(0..10).await.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Changed { .. }), "{err}");
}

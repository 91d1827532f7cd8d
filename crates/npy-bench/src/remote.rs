//! `npy-remote-compare`: npy-remote against numpy + s3fs on the local S3
//! server (scripts/s3-server.sh), and npy-remote alone behind
//! object_store's throttled store (per-request latency, per-stream
//! bandwidth). Prints markdown tables for docs/BENCHMARKS.md.
//!
//! ```text
//! scripts/s3-server.sh start && eval "$(scripts/s3-server.sh env)"
//! NPY_PYTHON="$(scripts/setup-venv.sh)" cargo run --release -p npy-bench \
//!     --features remote --bin npy-remote-compare -- --whole 1G
//! ```

use std::io::Write as _;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use bytes::Bytes;
use clap::Parser;
use futures::FutureExt as _;
use npy_bench::{Samples, parse_size, random_indices};
use npy_core::{DType, Header, Order, ReadOptions};
use npy_remote::object_store::memory::InMemory;
use npy_remote::object_store::path::Path;
use npy_remote::object_store::throttle::{ThrottleConfig, ThrottledStore};
use npy_remote::object_store::{ObjectStore, ObjectStoreExt};
use npy_remote::{RemoteArray, Store, Transfer, UploadOptions, upload};
use npy_store_counter::CountingStore;

/// Remote reads side by side with numpy + s3fs.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Size of the array on the S3 server (`<f4`, 1 KiB rows).
    #[arg(long, default_value = "1G", value_parser = parse_size)]
    whole: u64,
    /// Size of the array behind the throttled store.
    #[arg(long, default_value = "256M", value_parser = parse_size)]
    throttled: u64,
    /// Latency per GET of the throttled store, in milliseconds.
    #[arg(long, default_value_t = 20)]
    latency_ms: u64,
    /// Bandwidth per stream of the throttled store, in MB/s.
    #[arg(long, default_value_t = 100)]
    stream_mbps: u64,
    /// Repetitions of each measurement (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Skip numpy + s3fs (and the S3 server): the throttled table only.
    #[arg(long)]
    throttled_only: bool,
}

/// Bytes per row: 256 `<f4`.
const ROW_BYTES: usize = 1024;

/// One measured case: median seconds, requests, bytes.
struct Measured {
    seconds: Samples,
    requests: u64,
    bytes: u64,
}

impl Measured {
    fn cell(&self) -> String {
        let median = self.seconds.median().unwrap_or(f64::NAN);
        let time = if median < 1.0 {
            format!("{:.1} ms", median * 1e3)
        } else {
            format!("{median:.2} s")
        };
        format!("{time}, {} req, {}", self.requests, human(self.bytes))
    }
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

/// Runs `work` `reps` times on a fresh count; the counts are the last run's.
async fn measure<S, F, Fut>(
    counting: &CountingStore<S>,
    reps: usize,
    mut work: F,
) -> Result<Measured>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = npy_remote::Result<()>>,
{
    let mut seconds = Vec::with_capacity(reps);
    for _ in 0..reps {
        counting.reset();
        let start = Instant::now();
        work().await?;
        seconds.push(start.elapsed().as_secs_f64());
    }
    let (requests, bytes) = counting.gets();
    Ok(Measured {
        seconds: Samples::new(seconds),
        requests,
        bytes,
    })
}

/// The cases on `store`: open, 1 MiB of rows, the whole array
/// concurrently and as one stream, 1000 random rows (and, with
/// `uncoalesced_too`, the same rows without coalescing: one request each).
async fn our_cases<S: ObjectStore>(
    counting: Arc<CountingStore<S>>,
    path: &Path,
    reps: usize,
    uncoalesced_too: bool,
) -> Result<Vec<(&'static str, Measured)>> {
    let store: Arc<dyn ObjectStore> = counting.clone();
    let mut out = Vec::new();
    out.push((
        "open",
        measure(&counting, reps, || async {
            RemoteArray::open(store.clone(), path.clone())
                .await
                .map(drop)
        })
        .await?,
    ));
    let array = RemoteArray::open(store.clone(), path.clone()).await?;
    let rows = array.rows();
    let per_mib = (1 << 20) / ROW_BYTES;
    out.push((
        "rows_1mib",
        measure(&counting, reps, || {
            array
                .read_rows(rows / 2..rows / 2 + per_mib)
                .map(|r| r.map(drop))
        })
        .await?,
    ));
    out.push((
        "whole",
        measure(&counting, reps, || array.read_all().map(|r| r.map(drop))).await?,
    ));
    let single = Transfer {
        part_size: usize::MAX,
        concurrency: 1,
        ..Transfer::default()
    };
    let one_stream =
        RemoteArray::open_with(store.clone(), path.clone(), ReadOptions::default(), single).await?;
    out.push((
        "whole_one_stream",
        measure(&counting, reps, || {
            one_stream.read_all().map(|r| r.map(drop))
        })
        .await?,
    ));
    let picks = random_indices(1000, rows);
    out.push((
        "random_rows",
        measure(&counting, reps, || {
            array.read_rows_at(&picks).map(|r| r.map(drop))
        })
        .await?,
    ));
    if !uncoalesced_too {
        return Ok(out);
    }
    let uncoalesced = Transfer {
        coalesce_gap: 0,
        ..Transfer::default()
    };
    let one_each = RemoteArray::open_with(
        store.clone(),
        path.clone(),
        ReadOptions::default(),
        uncoalesced,
    )
    .await?;
    out.push((
        "random_rows_uncoalesced",
        measure(&counting, reps, || {
            one_each.read_rows_at(&picks).map(|r| r.map(drop))
        })
        .await?,
    ));
    Ok(out)
}

/// The array's header and data: `<f4`, 256 per row, values from the row index.
fn array(bytes: u64) -> (Header, Bytes) {
    let rows = (bytes as usize / ROW_BYTES).max(1);
    let header = Header::new(
        DType::parse("<f4").unwrap(),
        Order::C,
        vec![rows, ROW_BYTES / 4],
    );
    let data: Vec<u8> = (0..rows * ROW_BYTES / 4)
        .flat_map(|i| (i as f32).to_le_bytes())
        .collect();
    (header, Bytes::from(data))
}

const LABELS: [(&str, &str); 7] = [
    ("open", "open (header)"),
    ("rows_1mib", "1 MiB row range"),
    ("whole", "whole array, concurrent (8 × 8 MiB)"),
    ("whole_one_stream", "whole array, one stream"),
    ("random_rows", "1,000 random rows"),
    (
        "random_rows_uncoalesced",
        "1,000 random rows, not coalesced (gap 0, 10 in flight)",
    ),
    ("", ""),
];

fn label(case: &str) -> &'static str {
    LABELS
        .iter()
        .find(|(id, _)| *id == case)
        .map_or("?", |(_, l)| l)
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    if !args.throttled_only {
        s3_table(&args).await?;
    }
    throttled_table(&args).await
}

async fn s3_table(args: &Args) -> Result<()> {
    let bucket = std::env::var("NPY_S3_BUCKET")
        .context("run `scripts/s3-server.sh start` and eval its env first")?;
    let url = format!("s3://{bucket}/bench/rows.npy");
    let (store, path) = Store::from_url(&url)?;
    let (header, data) = array(args.whole);
    let rows = header.shape[0];
    let started = Instant::now();
    upload(
        &store,
        &path,
        &npy_core::NpyBytes::new(&header, &data).unwrap(),
        UploadOptions::default(),
    )
    .await?;
    eprintln!(
        "uploaded {} in {:.1} s",
        human(args.whole),
        started.elapsed().as_secs_f64()
    );
    let counting = CountingStore::new(store.objects().clone());
    let ours = our_cases(counting, &path, args.reps, false).await?;
    let python = std::env::var("NPY_PYTHON").context("NPY_PYTHON: scripts/setup-venv.sh")?;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../benches/remote_numpy.py");
    // The same 1000 random rows as ours, on standard input.
    let picks = serde_json::to_vec(&random_indices(1000, rows))?;
    let mut child = Command::new(python)
        .args([
            script,
            &url,
            &rows.to_string(),
            &ROW_BYTES.to_string(),
            &args.reps.to_string(),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    child.stdin.take().context("stdin")?.write_all(&picks)?;
    let output = child.wait_with_output()?;
    anyhow::ensure!(
        output.status.success(),
        "numpy side failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let numpy: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    println!(
        "### Local S3 server (moto), {} array of 1 KiB rows, median of {}\n",
        human(args.whole),
        args.reps
    );
    println!("| case | npy-remote | numpy + s3fs |\n| --- | --- | --- |");
    for (case, measured) in &ours {
        let theirs = match case {
            &"whole_one_stream" | &"random_rows_uncoalesced" => "".to_string(),
            case => numpy_cell(&numpy[case]),
        };
        println!("| {} | {} | {} |", label(case), measured.cell(), theirs);
    }
    println!();
    Ok(())
}

fn numpy_cell(value: &serde_json::Value) -> String {
    let seconds: Vec<f64> = value["seconds"]
        .as_array()
        .map(|a| a.iter().filter_map(|s| s.as_f64()).collect())
        .unwrap_or_default();
    Measured {
        seconds: Samples::new(seconds),
        requests: value["requests"].as_u64().unwrap_or(0),
        bytes: value["bytes"].as_u64().unwrap_or(0),
    }
    .cell()
}

async fn throttled_table(args: &Args) -> Result<()> {
    let config = ThrottleConfig {
        wait_get_per_call: Duration::from_millis(args.latency_ms),
        // Per-stream bandwidth: the reason concurrent parts pay.
        wait_get_per_byte: Duration::from_nanos(1000 / args.stream_mbps.max(1)),
        ..ThrottleConfig::default()
    };
    let memory = InMemory::new();
    let path = Path::from("rows.npy");
    let (header, data) = array(args.throttled);
    let mut file = header.to_bytes(None)?;
    file.extend_from_slice(&data);
    memory.put(&path, file.into()).await?;
    let counting = CountingStore::new(ThrottledStore::new(memory, config));
    let ours = our_cases(counting, &path, args.reps, true).await?;
    println!(
        "### Throttled store: {} ms per GET, {} MB/s per stream, {} array, median of {}\n",
        args.latency_ms,
        args.stream_mbps,
        human(args.throttled),
        args.reps
    );
    println!("| case | npy-remote |\n| --- | --- |");
    for (case, measured) in &ours {
        println!("| {} | {} |", label(case), measured.cell());
    }
    Ok(())
}

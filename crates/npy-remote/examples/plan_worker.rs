//! One worker of a parallel-writer plan: reads the plan (JSON) a coordinator
//! made, uploads the parts assigned to it, from any machine, and prints the
//! receipts (JSON) for the coordinator to complete the upload with.
//!
//! ```text
//! plan_worker PLAN.json WORKER WORKERS [--die-after PARTS]
//! ```
//!
//! The array is `<i8` in C order; element `i` (in C order) holds `i`, so
//! anyone can check the result (numpy: `np.arange(n).reshape(shape)`).
//! `--die-after` makes the worker crash after uploading that many parts, as
//! a worker that dies would (the live suite checks the upload is aborted).

use std::process::ExitCode;

use anyhow::{Context, bail};
use bytes::Bytes;
use npy_remote::WritePlan;
use npy_remote::blocking::Runtime;

fn main() -> anyhow::Result<ExitCode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [plan_file, worker, workers, rest @ ..] = args.as_slice() else {
        bail!("usage: plan_worker PLAN.json WORKER WORKERS [--die-after PARTS]");
    };
    let die_after = match rest {
        [] => None,
        [flag, parts] if flag == "--die-after" => Some(parts.parse::<usize>()?),
        _ => bail!("unknown arguments {rest:?}"),
    };
    let plan =
        WritePlan::from_json(&std::fs::read_to_string(plan_file).context("reading the plan")?)?;
    let header = plan.header()?;
    if header.dtype.descr() != "<i8" {
        bail!(
            "this worker writes <i8 arrays, the plan is for {}",
            header.dtype.descr()
        );
    }
    let store = plan.store()?;
    let runtime = Runtime::new()?;
    let assigned = plan.assign(workers.parse()?)[worker.parse::<usize>()?].clone();
    let row_len = (plan.row_bytes / 8) as i64;
    let mut receipts = Vec::new();
    for (done, index) in assigned.into_iter().enumerate() {
        if die_after == Some(done) {
            std::process::abort();
        }
        let rows = plan.parts[index].rows.clone();
        let first = rows.start as i64 * row_len;
        let last = rows.end as i64 * row_len;
        let data: Vec<u8> = (first..last).flat_map(i64::to_le_bytes).collect();
        receipts.push(runtime.block_on(plan.upload_part(&store, index, Bytes::from(data)))?);
    }
    println!("{}", serde_json::to_string(&receipts)?);
    Ok(ExitCode::SUCCESS)
}

//! Save an in-memory array to a new file (page cache; no fsync, like np.save).

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, ensure};
use ndarray::ArrayView1;
use npy_bench::{Contender, Row};
use npy_core::Order;
use npyz::WriterBuilder as _;
use serde_json::json;

use crate::data::WholeFiles;
use crate::{Harness, remove_if_exists};

use super::{Schedule, gib, path_str, run_ops, timed};
use Contender::{NdarrayNpy, Npyz, Ours};

// 6. Save an in-memory array to a new file (page cache; no fsync, like np.save).
pub fn save(h: &mut Harness, files: &WholeFiles) -> Result<()> {
    let runs = h.args.runs;
    let out = h.args.dir.join("saved.npy");
    let report = h.numpy(
        "save",
        json!({"len": files.len, "out": path_str(&out), "runs": runs}),
    );
    let values: Vec<f64> = (0..files.len).map(|i| i as f64 * 0.5).collect();
    let shape = [files.len];
    let mut row = Row::new("save", format!("save {} (<f8)", gib(h.args.whole)))
        .with_bytes(files.len as u64 * 8);
    // Untimed before each run: remove the last file and wait for the disk,
    // so no run pays for the writeback of the one before (numpy's side too).
    let fresh = |out: &Path| -> Result<PathBuf> {
        remove_if_exists(out)?;
        ensure!(Command::new("sync").status()?.success(), "sync failed");
        Ok(out.to_path_buf())
    };
    // Consecutive, like numpy's side and for the reason `whole_read` gives:
    // each save fills fresh page-cache memory.
    run_ops(
        runs,
        &mut row,
        vec![
            (
                Ours,
                Box::new(|| {
                    let out = fresh(&out)?;
                    // `np.save`'s promise (no sync) at its best: the
                    // atomic replace, the file's blocks allocated first.
                    timed(|| {
                        let view = npy_core::ArrayView::from_slice(&values, &shape, Order::C)?;
                        Ok(npy_mmap::save_unsynced(&out, &view)?)
                    })
                }),
            ),
            (
                NdarrayNpy,
                Box::new(|| {
                    let out = fresh(&out)?;
                    timed(|| {
                        Ok(ndarray_npy::write_npy(
                            &out,
                            &ArrayView1::from(&values[..]),
                        )?)
                    })
                }),
            ),
            (
                Npyz,
                Box::new(|| {
                    let out = fresh(&out)?;
                    timed(|| {
                        let mut writer = npyz::WriteOptions::<f64>::new()
                            .default_dtype()
                            .shape(&[values.len() as u64])
                            .writer(BufWriter::new(File::create(&out)?))
                            .begin_nd()?;
                        writer.extend(values.iter().copied())?;
                        writer.finish()?;
                        Ok(())
                    })
                }),
            ),
        ],
        Schedule::Consecutive,
    )?;
    remove_if_exists(&out)?;
    h.push(row, report.as_ref());
    Ok(())
}

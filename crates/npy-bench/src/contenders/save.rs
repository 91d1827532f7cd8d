//! Save an in-memory array to a new file (page cache; no fsync, like np.save).

use std::fs::File;
use std::hint::black_box;
use std::io::{BufReader, BufWriter, Cursor, Write as _};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use anyhow::{Context as _, Result, bail, ensure};
use memmap2::{Mmap, MmapMut};
use ndarray::{Array1, ArrayView1, ArrayViewMut1, Ix1, OwnedRepr, s};
use ndarray_npy::{ReadNpyExt as _, ViewMutNpyExt as _, ViewNpyExt as _};
use npy_bench::{Contender, Row, Samples, sum_f64};
use npy_core::{DType, Header, Order, ParseOptions, ReadOptions, write_slice};
use npy_mmap::npz::{Compression, MappedNpz, NpzArchive, NpzWriter};
use npy_mmap::{Advice, CreateOptions, OpenOptions, ReadOnly, ReadWrite};
use npyz::WriterBuilder as _;
use serde_json::json;

use crate::data::{BigFiles, NpzFiles, WholeFiles};
use crate::{Harness, micro, remove_if_exists, time};

use super::{Op, Schedule, gib, interleaved, map_file, path_str, run_ops, seconds_per_read, timed};
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
                    timed(|| {
                        let file = BufWriter::new(File::create(&out)?);
                        Ok(write_slice(file, &values, &shape, Order::C)?)
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

//! Whole-array read into memory, as native float64.

use std::fs::File;
use std::io::BufReader;

use anyhow::{Result, ensure};
use ndarray::Array1;
use ndarray_npy::ReadNpyExt as _;
use npy_bench::{Contender, Row};
use npy_core::ReadOptions;
use serde_json::json;

use crate::Harness;
use crate::data::WholeFiles;

use super::{Schedule, gib, interleaved, path_str, run_ops, timed};
use Contender::{NdarrayNpy, Npyz, Ours};

// 5. Whole-array read into memory, as native float64.
pub fn whole_read(h: &mut Harness, files: &WholeFiles) -> Result<()> {
    let runs = h.args.runs;
    let report = h.numpy(
        "read",
        json!({"native": path_str(&files.native), "big_endian": path_str(&files.big_endian), "runs": runs}),
    );
    let last = (files.len.max(1) - 1) as f64 * 0.5;
    let check = move |value: Option<f64>| -> Result<()> {
        ensure!(value == Some(last), "last element {value:?} != {last}");
        Ok(())
    };
    let bytes = files.len as u64 * 8;
    let size = gib(h.args.whole);
    for (id, label, path) in [
        (
            "read.native",
            format!("read {size} into memory (<f8)"),
            &files.native,
        ),
        (
            "read.be",
            format!("read {size} into memory (>f8 → native)"),
            &files.big_endian,
        ),
    ] {
        // Warm the page cache.
        npy_mmap::load(path)?;
        let mut row = Row::new(id, label).with_bytes(bytes);
        // Consecutive, like numpy's side: each run then reuses the memory the
        // previous one freed. Interleaved, a contender's freed memory can be
        // handed back to the VM's host before its next run, and the next
        // fresh gigabyte then costs host faults (docs/BENCHMARKS.md).
        run_ops(
            runs,
            &mut row,
            vec![
                (
                    Ours,
                    Box::new(|| {
                        timed(|| {
                            let options = ReadOptions {
                                to_native: true,
                                ..ReadOptions::default()
                            };
                            let array = npy_mmap::OpenOptions::from(options).load(path)?;
                            check(
                                array
                                    .view::<f64>()?
                                    .as_slice()
                                    .and_then(|s| s.last().copied()),
                            )?;
                            Ok(array)
                        })
                    }),
                ),
                (
                    NdarrayNpy,
                    Box::new(|| {
                        timed(|| {
                            let array = Array1::<f64>::read_npy(File::open(path)?)?;
                            check(array.last().copied())?;
                            Ok(array)
                        })
                    }),
                ),
                (
                    Npyz,
                    Box::new(|| {
                        timed(|| {
                            let file = BufReader::new(File::open(path)?);
                            let values = npyz::NpyFile::new(file)?.into_vec::<f64>()?;
                            check(values.last().copied())?;
                            Ok(values)
                        })
                    }),
                ),
            ],
            Schedule::Consecutive,
        )?;
        h.push(row, report.as_ref());
    }
    // The floor: copying the same bytes from RAM into fresh memory.
    let mut row = Row::new(
        "read.limit",
        format!("memcpy {size} into fresh memory (limit)"),
    )
    .with_bytes(bytes);
    let source = vec![1u8; files.len * 8];
    interleaved(
        runs,
        &mut row,
        vec![(Ours, Box::new(|| timed(|| Ok(source.to_vec()))))],
    )?;
    drop(source);
    h.push(row, None);
    Ok(())
}

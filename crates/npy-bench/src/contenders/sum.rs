//! Sequential sum of a warm file, and the in-RAM limit.

use anyhow::{Result, ensure};
use ndarray::ArrayView1;
use ndarray_npy::ViewNpyExt as _;
use npy_bench::{Contender, Row, sum_f64};
use npy_mmap::{Advice, OpenOptions};
use serde_json::json;

use crate::Harness;
use crate::data::BigFiles;

use super::{gib, interleaved, map_file, path_str, timed};
use Contender::{NdarrayNpy, Npyz, Ours};

// 3. Sequential sum of a warm file, and the in-RAM limit.
pub fn sum(h: &mut Harness, files: &BigFiles) -> Result<()> {
    let runs = h.args.runs;
    let expected = files.expected_sum();
    let check = move |sum: f64| -> Result<f64> {
        ensure!(sum == expected, "sum {sum} != {expected}");
        Ok(sum)
    };
    // Warm the page cache (the data was synced to disk when written).
    check(sum_f64(
        npy_mmap::open(&files.big)?
            .view::<f64>()?
            .as_slice()
            .expect("contiguous"),
    ))?;
    let report = h.numpy(
        "sum",
        json!({"big": path_str(&files.big), "runs": runs, "expected": expected}),
    );
    let size = gib(h.args.big);
    let bytes = files.big_len as u64 * 8;

    let mut row = Row::new(
        "sum.warm",
        format!("sum {size} float64, warm file (open + sum)"),
    )
    .with_bytes(bytes);
    interleaved(
        runs,
        &mut row,
        vec![
            (
                Ours,
                Box::new(|| {
                    timed(|| {
                        // The crate docs' advice for a scan: a thread maps
                        // the pages in ahead of the sum (no faults in it).
                        let array = OpenOptions::new()
                            .advice(Advice::PopulateRead)
                            .open(&files.big)?;
                        check(sum_f64(
                            array.view::<f64>()?.as_slice().expect("contiguous"),
                        ))
                    })
                }),
            ),
            (
                NdarrayNpy,
                Box::new(|| {
                    timed(|| {
                        let map = map_file(&files.big)?;
                        let view = ArrayView1::<f64>::view_npy(&map)?;
                        check(sum_f64(view.as_slice().expect("contiguous")))
                    })
                }),
            ),
            (
                Npyz,
                Box::new(|| {
                    timed(|| {
                        let map = map_file(&files.big)?;
                        let data = npyz::NpyFile::new(&map[..])?.data::<f64>()?;
                        check(data.sum::<std::io::Result<f64>>()?)
                    })
                }),
            ),
        ],
    )?;
    h.push(row, report.as_ref());

    // The same with the pages already mapped: what the faults cost.
    let mut row = Row::new(
        "sum.mapped",
        format!("sum {size} float64, mapping already faulted in"),
    )
    .with_bytes(bytes);
    {
        let ours = npy_mmap::open(&files.big)?;
        let ours_view = ours.view::<f64>()?;
        let ours_slice = ours_view.as_slice().expect("contiguous");
        let map = map_file(&files.big)?;
        let theirs = ArrayView1::<f64>::view_npy(&map)?;
        let theirs_slice = theirs.as_slice().expect("contiguous");
        check(sum_f64(ours_slice))?;
        check(sum_f64(theirs_slice))?;
        interleaved(
            runs,
            &mut row,
            vec![
                (Ours, Box::new(|| timed(|| check(sum_f64(ours_slice))))),
                (
                    NdarrayNpy,
                    Box::new(|| timed(|| check(sum_f64(theirs_slice)))),
                ),
            ],
        )?;
    }
    h.push(row, report.as_ref());

    // The physical limit: the same loop over memory that is no file's.
    let mut row =
        Row::new("sum.ram", format!("sum {size} float64 in RAM (limit)")).with_bytes(bytes);
    let in_ram: Vec<f64> = (0..files.big_len).map(|i| (i % 1024) as f64).collect();
    interleaved(
        runs,
        &mut row,
        vec![(Ours, Box::new(|| timed(|| check(sum_f64(&in_ram)))))],
    )?;
    drop(in_ram);
    h.push(row, report.as_ref());
    Ok(())
}

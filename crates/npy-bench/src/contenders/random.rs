//! Random scalar reads from a warm, mapped file.

use std::io::Cursor;

use anyhow::Result;
use ndarray::ArrayView1;
use ndarray_npy::ViewNpyExt as _;
use npy_bench::{Contender, Row, sum_f64};
use serde_json::json;

use crate::Harness;
use crate::data::BigFiles;

use super::{gib, interleaved, map_file, path_str, seconds_per_read};
use Contender::{NdarrayNpy, Npyz, Ours};

// 4. Random scalar reads from a warm, mapped file.
pub fn random_reads(h: &mut Harness, files: &BigFiles) -> Result<()> {
    let runs = h.args.runs;
    let report = h.numpy(
        "reads",
        json!({"big": path_str(&files.big), "indices": path_str(&files.indices), "runs": runs}),
    );
    let indices = &files.index_values;
    let mut row = Row::new(
        "reads.random",
        format!(
            "random scalar read, warm {} file (per read, {} reads)",
            gib(h.args.big),
            indices.len()
        ),
    );

    let ours = npy_mmap::open(&files.big)?;
    let ours_view = ours.view::<f64>()?;
    let map = map_file(&files.big)?;
    let theirs = ArrayView1::<f64>::view_npy(&map)?;
    // Fault every page in first: the figure is for a warm mapping.
    sum_f64(ours_view.as_slice().expect("contiguous"));
    sum_f64(theirs.as_slice().expect("contiguous"));
    let mut npyz_reader = npyz::NpyFile::new(Cursor::new(&map[..]))?.data::<f64>()?;
    interleaved(
        runs,
        &mut row,
        vec![
            (
                Ours,
                Box::new(|| {
                    seconds_per_read(indices, |i| Ok(*ours_view.get(&[i]).expect("in bounds")))
                }),
            ),
            (
                NdarrayNpy,
                Box::new(|| seconds_per_read(indices, |i| Ok(theirs[i]))),
            ),
            (
                Npyz,
                Box::new(|| seconds_per_read(indices, |i| Ok(npyz_reader.read_at(i as u64)?))),
            ),
        ],
    )?;
    h.push(row, report.as_ref());
    Ok(())
}

//! Random scalar reads from a warm, mapped file: one at a time, and
//! gathered in one batch.

use std::io::Cursor;

use anyhow::Result;
use ndarray::ArrayView1;
use ndarray_npy::ViewNpyExt as _;
use npy_bench::{Contender, Row, sum_f64};
use serde_json::json;

use crate::Harness;
use crate::data::BigFiles;

use super::{gib, interleaved, map_file, path_str, seconds_per_read, timed};
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
                Box::new(|| seconds_per_read(indices, |i| Ok(ours_view[i]))),
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

    // The same reads as one batch into a buffer: ours gathers through the
    // mapping (`MappedArray::gather`: the planner's residency sample, the
    // index checks, the prefetching copy), the others do what their
    // documentation shows, a loop of indexed reads: ndarray-npy at its
    // fastest, a plain loop over the view's slice (numpy: fancy indexing,
    // `a[indices]`, in compare.py).
    let mut gather_row = Row::new(
        "reads.gather",
        format!(
            "random gather, warm {} file (per element, {} elements)",
            gib(h.args.big),
            indices.len()
        ),
    );
    let mut out = vec![0.0; indices.len()];
    let mut out_theirs = vec![0.0; indices.len()];
    let mut out_npyz = vec![0.0; indices.len()];
    let per_element = |seconds: f64| seconds / indices.len().max(1) as f64;
    let flat = theirs.as_slice().expect("contiguous");
    // One untimed pass each first, as for the single reads: the same start.
    ours.gather(indices, &mut out)?;
    interleaved(
        runs,
        &mut gather_row,
        vec![
            (
                Ours,
                Box::new(|| Ok(per_element(timed(|| Ok(ours.gather(indices, &mut out)?))?))),
            ),
            (
                NdarrayNpy,
                Box::new(|| {
                    Ok(per_element(timed(|| {
                        for (slot, &i) in out_theirs.iter_mut().zip(indices) {
                            *slot = flat[i];
                        }
                        Ok(())
                    })?))
                }),
            ),
            (
                Npyz,
                Box::new(|| {
                    read_loop(indices, &mut out_npyz, |i| {
                        Ok(npyz_reader.read_at(i as u64)?)
                    })
                    .map(per_element)
                }),
            ),
        ],
    )?;
    h.push(gather_row, report.as_ref());

    // Whole rows: the file seen as rows of 64 float64 (512 bytes), 100,000
    // of them at random. Ours: `gather_outer`; the crates: a loop copying
    // each row; numpy: `a.reshape(-1, 64)[rows]`.
    const ROW: usize = 64;
    // 100,000 rows (51 MB): more than the processor's caches hold, so each
    // run reads memory, as scattered rows of a big file do.
    const OUTER_ROWS: usize = 100_000;
    let row_count = files.big_len / ROW;
    let rows: Vec<usize> = indices
        .iter()
        .take(OUTER_ROWS)
        .map(|&i| i / ROW % row_count.max(1))
        .collect();
    let mut outer_row = Row::new(
        "reads.gather_outer",
        format!(
            "random rows of 512 bytes, warm {} file (per row, {} rows)",
            gib(h.args.big),
            rows.len()
        ),
    );
    // Ours: the same file opened as a (rows, 64) array, as a user of a
    // 2-D file has it, and its `MappedArray::gather_outer`.
    let grid = npy_mmap::OpenOptions::new()
        .headerless(npy_core::headerless::Headerless::new(
            npy_core::DType::parse("<f8")?,
            ours.layout().data_offset,
            Some(vec![row_count, ROW]),
            npy_core::Order::C,
        ))
        .open(&files.big)?;
    // Every output written once first: no run pays for its first faults.
    let mut out = vec![1.0; rows.len() * ROW];
    let mut out_theirs = vec![1.0; rows.len() * ROW];
    let mut out_npyz = vec![1.0; rows.len() * ROW];
    let per_row = |seconds: f64| seconds / rows.len().max(1) as f64;
    grid.gather_outer(&rows, &mut out)?;
    interleaved(
        runs,
        &mut outer_row,
        vec![
            (
                Ours,
                Box::new(|| Ok(per_row(timed(|| Ok(grid.gather_outer(&rows, &mut out)?))?))),
            ),
            (
                NdarrayNpy,
                Box::new(|| {
                    Ok(per_row(timed(|| {
                        for (slot, &r) in out_theirs.chunks_exact_mut(ROW).zip(&rows) {
                            slot.copy_from_slice(&flat[r * ROW..(r + 1) * ROW]);
                        }
                        Ok(())
                    })?))
                }),
            ),
            (
                Npyz,
                Box::new(|| {
                    Ok(per_row(timed(|| {
                        for (slot, &r) in out_npyz.chunks_exact_mut(ROW).zip(&rows) {
                            for (k, value) in slot.iter_mut().enumerate() {
                                *value = npyz_reader.read_at((r * ROW + k) as u64)?;
                            }
                        }
                        Ok(())
                    })?))
                }),
            ),
        ],
    )?;
    h.push(outer_row, report.as_ref());
    Ok(())
}

/// Seconds a loop of `read(i)` into `out` takes: the peers' gather.
pub(super) fn read_loop(
    indices: &[usize],
    out: &mut [f64],
    mut read: impl FnMut(usize) -> Result<f64>,
) -> Result<f64> {
    timed(|| {
        for (slot, &i) in out.iter_mut().zip(indices) {
            *slot = read(i)?;
        }
        Ok(())
    })
}

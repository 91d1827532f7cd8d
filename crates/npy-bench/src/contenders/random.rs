//! Random scalar reads from a warm, mapped file.

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

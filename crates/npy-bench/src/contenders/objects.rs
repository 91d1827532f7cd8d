//! Object arrays: numpy's pickle of short strings, decoded by our

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

// 9. Object arrays: numpy's pickle of short strings, decoded by our
// restricted unpickler and by np.load(allow_pickle=True); saved back.
pub fn objects(h: &mut Harness) -> Result<()> {
    let path = h.args.dir.join("objects.npy");
    let count = h.args.objects;
    // numpy writes the file (so ours decodes numpy's own pickle) and times itself.
    let report = h.numpy(
        "objects",
        json!({"path": path_str(&path), "count": count, "runs": h.args.runs.max(5)}),
    );
    let mut options = ReadOptions::default();
    options.parse.allow_pickle = true;
    let mut loaded = None;
    let load = Samples::new(
        (0..h.args.runs.max(5))
            .map(|_| {
                let (seconds, array) = time(|| npy_mmap::load_with(&path, &options));
                loaded = Some(array);
                seconds
            })
            .collect(),
    );
    let array = loaded.expect("at least one run")?;
    let values = array.objects().map_or(0, <[_]>::len);
    ensure!(values == count, "decoded {values} values, expected {count}");
    let mut row = Row::new(
        "objects.load",
        format!("load object array, {count} short str"),
    );
    row.set(Ours, load);
    h.push(row, report.as_ref());
    let copy = h.args.dir.join("objects-ours.npy");
    let save = Samples::new(
        (0..h.args.runs.max(5))
            .map(|_| time(|| npy_mmap::save_array(&copy, &array).expect("saves")).0)
            .collect(),
    );
    let mut row = Row::new(
        "objects.save",
        format!("save object array, {count} short str"),
    );
    row.set(Ours, save);
    h.push(row, report.as_ref());
    h.cleanup(&[path, copy])
}

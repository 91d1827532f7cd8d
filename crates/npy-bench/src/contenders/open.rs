//! Open read-only, mapped where the contender can, with a typed view.

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

// 2. Open read-only, mapped where the contender can, with a typed view.
pub fn open(h: &mut Harness, files: &BigFiles) -> Result<()> {
    let report = h.numpy(
        "open",
        json!({"small": path_str(&files.small), "big": path_str(&files.big)}),
    );
    let big_label = format!("open {} file (r)", gib(h.args.big));
    for (id, label, path) in [
        ("open.4k", "open 4 KiB file (r)".to_owned(), &files.small),
        ("open.big", big_label, &files.big),
    ] {
        let mut row = Row::new(id, label);
        row.set(
            Ours,
            micro(11, || {
                let array = npy_mmap::open(path).expect("opens");
                black_box(array.view::<f64>().expect("f64").len());
            }),
        );
        row.set(
            NdarrayNpy,
            micro(11, || {
                let map = map_file(path).expect("maps");
                black_box(ArrayView1::<f64>::view_npy(&map).expect("views").len());
            }),
        );
        row.set(
            Npyz,
            micro(11, || {
                let map = map_file(path).expect("maps");
                black_box(npyz::NpyFile::new(&map[..]).expect("parses").len());
            }),
        );
        h.push(row, report.as_ref());
    }
    // The floor: the system calls alone (open, mmap, munmap, close), no header.
    let mut row = Row::new(
        "open.limit",
        format!(
            "open + mmap + munmap {}, no header (limit)",
            gib(h.args.big)
        ),
    );
    row.set(
        Ours,
        micro(11, || {
            black_box(map_file(&files.big).expect("maps").len());
        }),
    );
    h.push(row, None);
    Ok(())
}

//! Open read-only, mapped where the contender can, with a typed view.

use std::hint::black_box;

use anyhow::Result;
use ndarray::ArrayView1;
use ndarray_npy::ViewNpyExt as _;
use npy_bench::{Contender, Row};
use serde_json::json;

use crate::data::BigFiles;
use crate::{Harness, micro};

use super::{gib, map_file, path_str};
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

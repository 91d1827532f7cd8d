//! Header parse, in process.

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

// 1. Header parse, in process.
pub fn header(h: &mut Harness) -> Result<()> {
    let report = h.numpy("header", json!({"runs": 11}));
    let simple = Header::new(DType::parse("<f8")?, Order::C, vec![1000, 1000]).to_bytes(None)?;
    let fields: Vec<String> = (0..50).map(|i| format!("('field_{i}', '<f8')")).collect();
    let record_dtype = DType::parse(&format!("[{}]", fields.join(", ")))?;
    let record = Header::new(record_dtype, Order::C, vec![1000]).to_bytes(None)?;
    let options = ParseOptions::default();
    for (id, label, bytes) in [
        ("header.simple", "header parse <f8 (1000, 1000)", simple),
        ("header.record", "header parse 50-field record", record),
    ] {
        let mut row = Row::new(id, label);
        row.set(
            Ours,
            micro(11, || {
                black_box(Header::parse(black_box(&bytes), &options).expect("parses"));
            }),
        );
        row.set(
            NdarrayNpy,
            micro(11, || {
                let mut reader = black_box(&bytes[..]);
                black_box(
                    ndarray_npy::npy::header::Header::from_reader(&mut reader).expect("parses"),
                );
            }),
        );
        row.set(
            Npyz,
            micro(11, || {
                black_box(npyz::NpyHeader::from_reader(black_box(&bytes[..])).expect("parses"));
            }),
        );
        h.push(row, report.as_ref());
    }
    Ok(())
}

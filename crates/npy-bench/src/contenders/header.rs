//! Header parse, in process.

use std::hint::black_box;

use anyhow::Result;
use npy_bench::{Contender, Row};
use npy_core::{DType, Header, Order, ParseOptions};
use serde_json::json;

use crate::{Harness, micro};

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

//! Feature `rayon`: filling a mapping from rayon's threads.
#![cfg(feature = "rayon")]

mod common;

use common::TempDir;
use npy_core::{DType, Order};
use npy_mmap::CreateOptions;
use npy_mmap::ErrorKind;
use rayon::prelude::*;

#[test]
fn threads_fill_disjoint_chunks_of_a_preallocated_file() {
    let dir = TempDir::new("par-fill");
    for order in [Order::C, Order::Fortran] {
        let path = dir.join(&format!("{order:?}.npy"));
        let (rows, cols) = (1001, 3);
        let shape = match order {
            Order::C => [rows, cols],
            Order::Fortran => [cols, rows],
        };
        let mut array = CreateOptions::new(DType::parse("<u8").unwrap(), shape)
            .order(order)
            .create(&path)
            .unwrap();
        let chunks = array.par_rows_mut::<u64>(64).unwrap();
        assert_eq!(chunks.len(), 16);
        let mut filled: Vec<std::ops::Range<usize>> = chunks
            .map(|(rows, mut chunk)| {
                for (i, row) in rows.clone().enumerate() {
                    for j in 0..cols {
                        let index = match order {
                            Order::C => [i, j],
                            Order::Fortran => [j, i],
                        };
                        *chunk.get_mut(index).unwrap() = (row * cols + j) as u64;
                    }
                }
                rows
            })
            .collect();
        // The chunks partition the rows: each row handed out exactly once.
        filled.sort_by_key(|rows| rows.start);
        assert_eq!(filled.len(), 16);
        assert_eq!(filled.first().map(|r| r.start), Some(0));
        assert_eq!(filled.last().map(|r| r.end), Some(rows));
        assert!(
            filled.windows(2).all(|w| w[0].end == w[1].start),
            "{filled:?}"
        );
        array.flush().unwrap();
        drop(array);
        let array = npy_mmap::open(&path).unwrap();
        let view = array.view::<u64>().unwrap();
        for row in 0..rows {
            for j in 0..cols {
                let index = match order {
                    Order::C => [row, j],
                    Order::Fortran => [j, row],
                };
                assert_eq!(
                    view.get(index),
                    Some(&((row * cols + j) as u64)),
                    "{order:?} {index:?}"
                );
            }
        }
    }
}

#[test]
fn chunking_edges_and_type_errors() {
    let dir = TempDir::new("par-edges");
    let path = dir.join("a.npy");
    let mut array = CreateOptions::new(DType::parse("<f4").unwrap(), [5, 2])
        .create(&path)
        .unwrap();
    let ranges: Vec<_> = array
        .par_rows_mut::<f32>(100)
        .unwrap()
        .map(|(r, _)| r)
        .collect();
    assert_eq!(ranges, vec![(0..5)]);
    let ranges: Vec<_> = array
        .par_rows_mut::<f32>(0)
        .unwrap()
        .map(|(r, _)| r)
        .collect();
    assert_eq!(ranges, [0..1, 1..2, 2..3, 3..4, 4..5]);
    assert!(matches!(
        (array.par_rows_mut::<f64>(2))
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::Format(npy_core::Error::TypeMismatch { .. }))
    ));
}

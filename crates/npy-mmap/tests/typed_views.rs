//! Typed access through npy-core's views: orders, byte orders, alignment,
//! records, booleans, parallel chunks.

mod common;

use common::{TempDir, f64_bytes, npy_bytes, raw_v1, write_file};
use npy_core::{Bool, Order};
use npy_mmap::{CreateOptions, ErrorKind, OpenOptions};
use zerocopy::byteorder::{BigEndian, F64, I32, LittleEndian};

#[test]
fn c_order_indexing_and_slices() {
    let dir = TempDir::new("typed-c");
    let path = write_file(
        &dir,
        "a.npy",
        &npy_bytes("<f8", Order::C, &[4, 3], &f64_bytes(0.0, 12)),
    );
    let array = npy_mmap::open(&path).unwrap();
    let view = array.view::<f64>().unwrap();
    assert_eq!(view.shape(), [4, 3]);
    assert_eq!(view.get([2, 1]), Some(&7.0));
    assert_eq!(view.get([4, 0]), None, "out of bounds is None, not a panic");
    assert_eq!(view.get([0]), None, "wrong number of indices");
    assert_eq!(view.as_slice().unwrap().len(), 12);
}

#[test]
fn fortran_order_indexing_in_whole_arrays_and_windows() {
    let dir = TempDir::new("typed-f");
    // Memory holds 0..12 column-major for shape (3, 4): element [i, j] = i + 3j.
    let data: Vec<u8> = (0..12i32).flat_map(i32::to_le_bytes).collect();
    let path = write_file(
        &dir,
        "a.npy",
        &npy_bytes("<i4", Order::Fortran, &[3, 4], &data),
    );
    let array = npy_mmap::open(&path).unwrap();
    let view = array.view::<i32>().unwrap();
    for i in 0..3 {
        for j in 0..4 {
            assert_eq!(view.get([i, j]), Some(&(i as i32 + 3 * j as i32)));
        }
    }
    let window = OpenOptions::new().rows(1..3).open(&path).unwrap();
    let view = window.view::<i32>().unwrap();
    assert_eq!(view.shape(), [3, 2]);
    let first = window.rows().start;
    for i in 0..3 {
        for j in 0..2 {
            assert_eq!(view.get([i, j]), Some(&(i as i32 + 3 * (j + first) as i32)));
        }
    }
}

#[test]
fn big_endian_files_need_byte_order_types() {
    let dir = TempDir::new("typed-be");
    let data: Vec<u8> = (0..6)
        .flat_map(|v| (v as f64 * 1.5).to_be_bytes())
        .collect();
    let path = write_file(&dir, "a.npy", &npy_bytes(">f8", Order::C, &[2, 3], &data));
    let mut array = npy_mmap::open_rw(&path).unwrap();
    let error = array.view::<f64>().unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Format(npy_core::Error::TypeMismatch { .. })
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains(">f8"), "{error}");
    let view = array.view::<F64<BigEndian>>().unwrap();
    assert_eq!(view.get([1, 2]).unwrap().get(), 7.5);
    *array
        .view_mut::<F64<BigEndian>>()
        .unwrap()
        .get_mut([0, 1])
        .unwrap() = F64::new(-2.0);
    array.flush().unwrap();
    drop(array);
    let file = std::fs::read(&path).unwrap();
    assert_eq!(file[128 + 8..128 + 16], (-2.0f64).to_be_bytes());
}

#[test]
fn misaligned_data_offsets_need_unaligned_types() {
    let dir = TempDir::new("typed-misaligned");
    let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
    let path = write_file(&dir, "a.npy", &raw_v1(dict, 64, 3, &f64_bytes(1.0, 3)));
    let array = npy_mmap::open(&path).unwrap();
    let error = array.view::<f64>().unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Format(npy_core::Error::Misaligned { align: 8, .. })
        ),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("needs 8-byte alignment"),
        "{error}"
    );
    let view = array.view::<F64<LittleEndian>>().unwrap();
    let values: Vec<f64> = view.iter().map(|v| v.get()).collect();
    assert_eq!(values, [1.0, 2.0, 3.0]);
}

#[test]
fn legacy_16_byte_alignment_is_enough_for_native_views() {
    let dir = TempDir::new("typed-legacy16");
    let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
    let path = write_file(&dir, "a.npy", &raw_v1(dict, 16, 0, &f64_bytes(1.0, 3)));
    let array = npy_mmap::open(&path).unwrap();
    assert_eq!(array.view::<f64>().unwrap().to_vec(), [1.0, 2.0, 3.0]);
}

#[test]
fn structured_records_by_field_name() {
    let dir = TempDir::new("typed-records");
    let mut data = Vec::new();
    for k in 0..3i32 {
        data.extend_from_slice(&k.to_le_bytes());
        data.extend_from_slice(&(k as f64 / 2.0).to_le_bytes());
    }
    let path = write_file(
        &dir,
        "a.npy",
        &npy_bytes("[('x', '<i4'), ('y', '<f8')]", Order::C, &[3], &data),
    );
    let array = npy_mmap::open(&path).unwrap();
    let records = array.raw_view().unwrap();
    let second = records.get([2]).unwrap();
    assert_eq!(second.field("x").unwrap().read::<i32>().unwrap(), 2);
    assert_eq!(second.field("y").unwrap().read::<f64>().unwrap(), 1.0);
    assert!(array.view::<f64>().is_err(), "a record is not an f64");
}

#[test]
fn booleans_any_byte_with_bool_wrapper_validated_with_bool() {
    let dir = TempDir::new("typed-bool");
    let path = write_file(
        &dir,
        "a.npy",
        &npy_bytes("|b1", Order::C, &[4], &[0, 1, 2, 0]),
    );
    let array = npy_mmap::open(&path).unwrap();
    let error = array.view::<bool>().unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Format(npy_core::Error::InvalidElement { index: 2, .. })
        ),
        "{error:?}"
    );
    let truth: Vec<bool> = array
        .view::<Bool>()
        .unwrap()
        .iter()
        .map(|b| b.get())
        .collect();
    assert_eq!(truth, [false, true, true, false]);
}

#[test]
fn view_of_a_created_file_round_trips() {
    let dir = TempDir::new("typed-create");
    let path = dir.join("a.npy");
    let mut array = CreateOptions::new(npy_core::DType::parse(">i4").unwrap(), [5, 2])
        .create(&path)
        .unwrap();
    {
        let mut view = array.view_mut::<I32<BigEndian>>().unwrap();
        let mut k = 0;
        view.for_each_mut(|v| {
            *v = I32::new(k);
            k += 1;
        });
    }
    array.flush().unwrap();
    drop(array);
    let array = npy_mmap::open(&path).unwrap();
    let values: Vec<i32> = array
        .view::<I32<BigEndian>>()
        .unwrap()
        .iter()
        .map(|v| v.get())
        .collect();
    assert_eq!(values, (0..10).collect::<Vec<_>>());
}

#[test]
fn threads_fill_disjoint_row_chunks() {
    let dir = TempDir::new("typed-threads");
    for order in [Order::C, Order::Fortran] {
        let path = dir.join(&format!("{order:?}.npy"));
        let (rows, cols) = (103, 7);
        let shape = match order {
            Order::C => [rows, cols],
            Order::Fortran => [cols, rows],
        };
        let mut array = CreateOptions::new(f8(), shape)
            .order(order)
            .create(&path)
            .unwrap();
        let axis = array.row_axis().unwrap();
        let chunks = array.row_chunks_mut::<f64>(10).unwrap();
        assert_eq!(chunks.len(), 11);
        assert_eq!(chunks.last().unwrap().0, 100..103);
        std::thread::scope(|scope| {
            for (range, mut chunk) in chunks {
                scope.spawn(move || {
                    for local in 0..range.len() {
                        for col in 0..cols {
                            let row = range.start + local;
                            let index = if axis == 0 {
                                [local, col]
                            } else {
                                [col, local]
                            };
                            *chunk.get_mut(index).unwrap() = (row * cols + col) as f64;
                        }
                    }
                });
            }
        });
        array.flush().unwrap();
        drop(array);
        let array = OpenOptions::new().open_rw(&path).unwrap();
        let view = array.view::<f64>().unwrap();
        for row in 0..rows {
            for col in 0..cols {
                let index = if axis == 0 { [row, col] } else { [col, row] };
                assert_eq!(
                    view.get(index),
                    Some(&((row * cols + col) as f64)),
                    "{order:?}"
                );
            }
        }
    }
}

#[test]
fn row_chunks_of_zero_d_and_empty_arrays() {
    let dir = TempDir::new("typed-chunks-edge");
    let mut scalar = CreateOptions::new(f8(), [])
        .create(dir.join("s.npy"))
        .unwrap();
    let chunks = scalar.row_chunks_mut::<f64>(0).unwrap();
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].0, 0..1);
    let mut no_rows = CreateOptions::new(f8(), [0, 3])
        .create(dir.join("e.npy"))
        .unwrap();
    assert!(no_rows.row_chunks_mut::<f64>(4).unwrap().is_empty());
    let mut empty_rows = CreateOptions::new(f8(), [3, 0])
        .create(dir.join("z.npy"))
        .unwrap();
    let chunks = empty_rows.row_chunks_mut::<f64>(2).unwrap();
    assert_eq!(chunks.len(), 1, "rows of zero bytes are not split");
    assert_eq!(chunks[0].0, 0..3);
    assert!(chunks[0].1.is_empty());
}

fn f8() -> npy_core::DType {
    npy_core::DType::parse("<f8").unwrap()
}

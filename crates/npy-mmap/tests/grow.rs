//! Growing files in place: `Appender` on numpy-written and own files, and
//! `RowWriter` for arrays of unknown length.

mod common;

use std::path::{Path, PathBuf};

use common::{TempDir, npy_bytes, write_file};
use npy_core::{DType, Order};
use npy_mmap::{CreateOptions, ErrorKind, Locking, OpenOptions};

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The bytes of `values` (native order: the `<` fixtures used here assume a
/// little-endian machine).
fn le_bytes<T: zerocopy::IntoBytes + zerocopy::Immutable>(values: &[T]) -> Vec<u8> {
    zerocopy::IntoBytes::as_bytes(values).to_vec()
}

fn values_f64(path: &Path) -> (Vec<usize>, Vec<f64>) {
    let array = npy_mmap::open(path).unwrap();
    let values = array.view::<f64>().unwrap().to_vec();
    (array.shape().to_vec(), values)
}

#[test]
fn appending_to_a_numpy_file_gives_what_np_save_writes() {
    let dir = TempDir::new("grow-numpy");
    // numpy's (3, 4) float64 of 0.5, 1.5, ... 11.5.
    let path = write_file(&dir, "a.npy", &fixture("f8_c_2d.npy"));
    let mut appender = npy_mmap::OpenOptions::new().append(&path).unwrap();
    assert_eq!(
        (appender.axis(), appender.rows(), appender.row_bytes()),
        (0, 3, 32)
    );
    let more: Vec<f64> = (12..20).map(|i| f64::from(i) + 0.5).collect();
    assert_eq!(appender.append(&more).unwrap(), 5);
    assert_eq!(appender.header().shape, [5, 4]);
    drop(appender);

    let all: Vec<f64> = (0..20).map(|i| f64::from(i) + 0.5).collect();
    let expected = npy_bytes("<f8", Order::C, &[5, 4], &le_bytes(&all));
    assert_eq!(std::fs::read(&path).unwrap(), expected);
    assert_eq!(values_f64(&path), (vec![5, 4], all));
}

#[test]
fn fortran_files_grow_along_their_last_axis() {
    let dir = TempDir::new("grow-fortran");
    // numpy's (3, 4) Fortran float64: logical values 0.5 .. 11.5.
    let path = write_file(&dir, "f.npy", &fixture("f8_f_2d.npy"));
    let mut appender = npy_mmap::OpenOptions::new().append(&path).unwrap();
    assert_eq!(
        (appender.axis(), appender.rows(), appender.row_bytes()),
        (1, 4, 24)
    );
    // One more column: [100, 101, 102] down the rows.
    appender.append(&[100.0f64, 101.0, 102.0]).unwrap();
    drop(appender);
    let array = npy_mmap::open(&path).unwrap();
    assert_eq!(
        (array.shape(), array.order()),
        (&[3, 5][..], Order::Fortran)
    );
    let view = array.view::<f64>().unwrap();
    assert_eq!(view.get([2, 3]), Some(&11.5));
    assert_eq!(view.get([0, 4]), Some(&100.0));
    assert_eq!(view.get([2, 4]), Some(&102.0));
}

#[test]
fn old_headers_grow_while_the_digits_fit_then_say_why_not() {
    let dir = TempDir::new("grow-legacy");
    // A header with no padding at all: '(2, 3)' can become '(9, 3)', not '(10, 3)'.
    let path = write_file(&dir, "old.npy", &fixture("legacy_no_padding.npy"));
    let before = std::fs::read(&path).unwrap();
    let mut appender = npy_mmap::OpenOptions::new().append(&path).unwrap();
    assert_eq!(appender.append(&[7i32; 3 * 7]).unwrap(), 9);
    let grown = std::fs::read(&path).unwrap();
    assert_eq!(grown.len(), before.len() + 7 * 12);
    assert_eq!(
        &grown[..10],
        &before[..10],
        "same preamble, same header length"
    );

    let err = appender.append(&[8i32; 3]).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::NoRoomToGrow {
                needed: 61,
                available: 60,
                ..
            }
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("no room to grow to shape [10, 3]"),
        "{message}"
    );
    assert!(
        message.contains("np.save(path, np.load(path))"),
        "{message}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        grown,
        "a refused append changes nothing"
    );

    // 16-byte alignment left 10 spare characters.
    let path = write_file(&dir, "align16.npy", &fixture("legacy_align16_v1.npy"));
    let mut appender = npy_mmap::OpenOptions::new().append(&path).unwrap();
    appender.append(&vec![1i32; 3 * 98]).unwrap();
    assert_eq!(npy_mmap::open(&path).unwrap().shape(), [100, 3]);
}

#[test]
fn what_cannot_grow_is_refused_before_writing() {
    let dir = TempDir::new("grow-refused");
    let scalar = write_file(&dir, "0d.npy", &fixture("f8_0d.npy"));
    assert!(matches!(
        (npy_mmap::OpenOptions::new().append(&scalar))
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::CannotGrow { .. })
    ));
    let empty_rows = write_file(&dir, "3x0.npy", &fixture("f8_3x0.npy"));
    let err = npy_mmap::OpenOptions::new()
        .append(&empty_rows)
        .unwrap_err();
    assert!(err.to_string().contains("rows hold no bytes"), "{err}");

    let path = write_file(&dir, "a.npy", &fixture("f8_c_2d.npy"));
    let before = std::fs::read(&path).unwrap();
    let mut appender = npy_mmap::OpenOptions::new().append(&path).unwrap();
    assert!(matches!(
        (appender.append(&[1.0f64; 3]))
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::PartialRow {
            bytes: 24,
            row_bytes: 32
        })
    ));
    assert!(matches!(
        (appender.append(&[1.0f32; 8]))
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::Format(npy_core::Error::TypeMismatch { .. }))
    ));
    assert!(matches!(
        (appender.append_bytes(&[0; 31]))
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::PartialRow {
            bytes: 31,
            row_bytes: 32
        })
    ));
    assert_eq!(std::fs::read(&path).unwrap(), before);

    // A truncated file is not appended to.
    std::fs::write(&path, &before[..before.len() - 1]).unwrap();
    assert!(matches!(
        (npy_mmap::OpenOptions::new().append(&path))
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::FileTooShort { .. })
    ));
}

#[test]
fn lock_free_readers_of_the_old_length_keep_working() {
    let dir = TempDir::new("grow-readers");
    let path = write_file(&dir, "a.npy", &fixture("f8_c_2d.npy"));
    // Like numpy's mmap_mode='r': no lock.
    // SAFETY: the appender below only writes past the mapped bytes and
    // rewrites the header (not mapped); nothing shrinks the file.
    let mut options = OpenOptions::new();
    unsafe { options.ignore_locks() };
    let old = options.open(&path).unwrap();
    let before = old.view::<f64>().unwrap().to_vec();

    let mut appender = npy_mmap::OpenOptions::new().append(&path).unwrap();
    appender.append(&[9.0f64; 4 * 1000]).unwrap();
    assert_eq!(old.shape(), [3, 4]);
    assert_eq!(old.view::<f64>().unwrap().to_vec(), before);
    assert_eq!(npy_mmap::open(&path).unwrap().shape(), [1003, 4]);
}

#[test]
fn a_locking_reader_holds_growth_off() {
    let dir = TempDir::new("grow-locked");
    let path = write_file(&dir, "a.npy", &fixture("f8_c_2d.npy"));
    let mut appender = npy_mmap::OpenOptions::new()
        .locking(Locking::NonBlocking)
        .append(&path)
        .unwrap();
    let reader = npy_mmap::open(&path).unwrap();
    // The reader is this process's own: waiting for it could never end, so
    // even a blocking append fails at once.
    assert!(matches!(
        (appender.append(&[1.0f64; 4]))
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::Conflict { .. })
    ));
    let mut blocking = npy_mmap::OpenOptions::new().append(&path).unwrap();
    assert!(matches!(
        (blocking.append(&[1.0f64; 4]))
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::Conflict { .. })
    ));
    drop(reader);
    assert_eq!(appender.append(&[1.0f64; 4]).unwrap(), 4);
}

#[test]
fn appenders_take_turns_and_see_each_others_rows() {
    let dir = TempDir::new("grow-turns");
    let path = write_file(&dir, "a.npy", &fixture("f8_c_2d.npy"));
    let mut first = npy_mmap::OpenOptions::new().append(&path).unwrap();
    let mut second = npy_mmap::OpenOptions::new().append(&path).unwrap();
    assert_eq!(first.append(&[100.0f64; 4]).unwrap(), 4);
    assert_eq!(second.append(&[200.0f64; 8]).unwrap(), 6);
    assert_eq!(first.append(&[300.0f64; 4]).unwrap(), 7);
    let (shape, values) = values_f64(&path);
    assert_eq!(shape, [7, 4]);
    let firsts: Vec<f64> = values.chunks(4).map(|row| row[0]).collect();
    assert_eq!(firsts, [0.5, 4.5, 8.5, 100.0, 200.0, 200.0, 300.0]);
}

#[test]
fn bytes_left_by_an_interrupted_append_are_replaced() {
    let dir = TempDir::new("grow-trailing");
    let mut bytes = fixture("f8_c_2d.npy");
    let clean_len = bytes.len();
    bytes.extend_from_slice(&[0xee; 100]); // half-written rows, header never updated
    let path = write_file(&dir, "a.npy", &bytes);
    let mut appender = npy_mmap::OpenOptions::new().append(&path).unwrap();
    appender.append(&[1.0f64; 4]).unwrap();
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        clean_len as u64 + 32
    );
    let (shape, values) = values_f64(&path);
    assert_eq!((shape, &values[12..]), (vec![4, 4], &[1.0; 4][..]));
}

#[test]
fn streaming_writes_what_np_save_would_for_the_final_shape() {
    let dir = TempDir::new("grow-stream");
    let path = dir.join("s.npy");
    let mut writer = CreateOptions::new(DType::parse("<f8").unwrap(), [0, 4])
        .stream(&path)
        .unwrap();
    let all: Vec<f64> = (0..1000).map(f64::from).collect();
    for chunk in all.chunks(7) {
        writer.write_rows(chunk).unwrap();
    }
    assert_eq!(writer.rows(), 250);
    let header = writer.finish().unwrap();
    assert_eq!(header.shape, [250, 4]);
    let expected = npy_bytes("<f8", Order::C, &[250, 4], &le_bytes(&all));
    assert_eq!(std::fs::read(&path).unwrap(), expected);

    // Fortran order: columns are the rows; io::copy works too.
    let path = dir.join("f.npy");
    let mut options = CreateOptions::new(DType::parse("<i2").unwrap(), [2, 0]);
    let mut writer = options.order(Order::Fortran).stream(&path).unwrap();
    let data = le_bytes(&[1i16, 2, 3, 4, 5, 6]);
    std::io::copy(&mut data.as_slice(), &mut writer).unwrap();
    writer.finish().unwrap();
    let array = npy_mmap::open(&path).unwrap();
    assert_eq!(array.shape(), [2, 3]);
    assert_eq!(array.view::<i16>().unwrap().to_vec(), [1, 3, 5, 2, 4, 6]);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        npy_bytes("<i2", Order::Fortran, &[2, 3], &data)
    );
}

#[test]
fn the_header_keeps_its_length_across_digit_boundaries() {
    let dir = TempDir::new("grow-digits");
    let path = dir.join("d.npy");
    let mut writer = CreateOptions::new(DType::parse("|u1").unwrap(), [0])
        .stream(&path)
        .unwrap();
    writer.write_rows(&[1u8; 9]).unwrap();
    writer.sync().unwrap();
    assert_eq!(writer.header().shape, [9]);
    writer.write_rows(&[2u8]).unwrap();
    writer.finish().unwrap();
    let mut appender = npy_mmap::OpenOptions::new().append(&path).unwrap();
    assert_eq!(appender.append(&[3u8; 90]).unwrap(), 100);
    assert_eq!(appender.append(&vec![4u8; 99_900]).unwrap(), 100_000);
    drop(appender);
    let array = npy_mmap::open(&path).unwrap();
    assert_eq!(array.layout().data_offset, 128);
    assert_eq!(array.shape(), [100_000]);
    let view = array.view::<u8>().unwrap();
    assert_eq!(
        (
            view.get([8]),
            view.get([9]),
            view.get([99]),
            view.get([99_999])
        ),
        (Some(&1), Some(&2), Some(&3), Some(&4))
    );
}

#[test]
fn stream_errors_and_unfinished_files() {
    let dir = TempDir::new("grow-stream-errors");
    let path = dir.join("bad.npy");
    let err = CreateOptions::new(DType::parse("<f8").unwrap(), [5, 2])
        .stream(&path)
        .unwrap_err();
    assert!(
        err.to_string().contains("length of axis 0 must be 0"),
        "{err}"
    );
    assert!(!path.exists());

    let path = dir.join("partial.npy");
    let mut writer = CreateOptions::new(DType::parse("<u4").unwrap(), [0, 2])
        .stream(&path)
        .unwrap();
    assert!(matches!(
        (writer.write_rows(&[1.0f32]))
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::Format(npy_core::Error::TypeMismatch { .. }))
    ));
    writer.write_rows(&[1u32, 2, 3]).unwrap();
    // Readers that take locks wait for the writer to finish; in this
    // process, where the writer could never finish while they wait, they
    // are refused at once, blocking or not, with the writer named (round 3:
    // a blocking open waited for ever).
    for locking in [Locking::NonBlocking, Locking::Blocking] {
        let error = OpenOptions::new()
            .locking(locking)
            .open(&path)
            .expect_err("opened while this process streams the file");
        assert!(
            matches!(error.kind(), ErrorKind::Conflict { .. }),
            "{error:?}"
        );
        assert!(
            error.to_string().contains(
                "conflicts with a RowWriter (CreateOptions::stream) writing the file that this \
                 process holds"
            ),
            "{error}"
        );
    }
    let error = OpenOptions::new()
        .locking(Locking::Blocking)
        .append(&path)
        .expect_err("appending while this process streams the file");
    assert!(
        matches!(error.kind(), ErrorKind::Conflict { .. }),
        "{error:?}"
    );
    assert!(matches!(
        (writer.sync()).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::PartialRow {
            bytes: 4,
            row_bytes: 8
        })
    ));
    writer.write_rows(&[4u32]).unwrap();
    writer.sync().unwrap();
    writer.write_rows(&[5u32, 6]).unwrap();
    drop(writer); // not finished: the file holds the synced rows
    let array = npy_mmap::open(&path).unwrap();
    assert_eq!(array.shape(), [2, 2]);
    assert_eq!(array.view::<u32>().unwrap().to_vec(), [1, 2, 3, 4]);
    assert_eq!(array.trailing_bytes(), 8);

    // Existing files are not replaced unless asked.
    let err = CreateOptions::new(DType::parse("<u4").unwrap(), [0])
        .stream(&path)
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::AlreadyExists), "{err:?}");
}

#[test]
fn a_stream_dropped_before_any_sync_leaves_no_file() {
    let dir = TempDir::new("grow-stream-dropped");
    let path = dir.join("forgotten.npy");
    let mut writer = CreateOptions::new(DType::parse("<u4").unwrap(), [0, 2])
        .stream(&path)
        .unwrap();
    writer.write_rows(&[1u32, 2, 3, 4]).unwrap();
    assert!(path.exists(), "the file exists while it is written");
    drop(writer); // never synced nor finished
    assert!(
        !path.exists(),
        "an unfinished stream must not pass for a finished 0-row array"
    );
    assert!(dir.entries().is_empty(), "{:?}", dir.entries());

    // Finished, the same writes are an array of their rows.
    let mut writer = CreateOptions::new(DType::parse("<u4").unwrap(), [0, 2])
        .stream(&path)
        .unwrap();
    writer.write_rows(&[1u32, 2, 3, 4]).unwrap();
    assert_eq!(writer.finish().unwrap().shape, [2, 2]);
    assert_eq!(npy_mmap::open(&path).unwrap().shape(), [2, 2]);
}

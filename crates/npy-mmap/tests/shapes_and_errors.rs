//! Truncated and header-only files, object dtypes, zero-size and 0-d arrays,
//! legacy alignment.

mod common;

use common::{TempDir, f64_bytes, npy_bytes, raw_v1, write_file};
use npy_core::Order;
use npy_mmap::{Error, ErrorKind, OpenOptions};

fn open_each_mode(path: &std::path::Path) -> [Result<usize, Error>; 3] {
    let options = OpenOptions::new();
    [
        options.open(path).map(|a| a.bytes().len()),
        options.open_rw(path).map(|a| a.bytes().len()),
        options.open_cow(path).map(|a| a.bytes().len()),
    ]
}

#[test]
fn truncated_data_is_an_error_at_open_in_every_mode() {
    let dir = TempDir::new("err-truncated");
    let mut file = npy_bytes("<f8", Order::C, &[10, 3], &f64_bytes(0.0, 30));
    file.truncate(file.len() - 1);
    let path = write_file(&dir, "a.npy", &file);
    for result in open_each_mode(&path) {
        let error = result.unwrap_err();
        assert!(
            matches!(
                error.kind(),
                ErrorKind::FileTooShort {
                    expected: 368,
                    actual: 367,
                    data_offset: 128,
                    data_len: 240,
                    ..
                }
            ),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(
            message.contains(": mmap length is greater than file size"),
            "{message}"
        );
        assert!(message.contains("needs 368 bytes"), "{message}");
        assert!(message.contains("has 367"), "{message}");
    }
    // Unlike numpy's r+, nothing extended the file.
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 367);
}

#[test]
fn header_only_file_with_data_promised_is_truncated() {
    let dir = TempDir::new("err-header-only");
    let file = npy_bytes("<i4", Order::C, &[5], &[0; 20]);
    let path = write_file(&dir, "a.npy", &file[..128]);
    for result in open_each_mode(&path) {
        assert!(matches!(
            (result).as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::FileTooShort {
                expected: 148,
                actual: 128,
                ..
            })
        ));
    }
}

#[test]
fn a_file_cut_inside_the_header_reports_the_header() {
    let dir = TempDir::new("err-cut-header");
    let file = npy_bytes("<i4", Order::C, &[5], &[0; 20]);
    for cut in [0, 5, 9, 11, 60, 127] {
        let path = write_file(&dir, "a.npy", &file[..cut]);
        let error = npy_mmap::open(&path).unwrap_err();
        let ErrorKind::Format(source) = error.kind() else {
            panic!("cut at {cut}: {error:?}")
        };
        assert!(source.to_string().starts_with("EOF: reading"), "{source}");
        assert!(error.to_string().contains("a.npy"), "{error}");
    }
}

#[test]
fn not_an_npy_file() {
    let dir = TempDir::new("err-magic");
    let path = write_file(&dir, "a.npy", b"GIF89a this is a picture, not an npy file");
    let error = npy_mmap::open(&path).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the magic string is not correct"),
        "{error}"
    );
    // An archive gets told what it is, and how to open it.
    let path = write_file(&dir, "b.npy", b"PK\x03\x04 this is a zip, not an npy file");
    let error = npy_mmap::open(&path).unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::IsAnArchive), "{error:?}");
    assert!(error.to_string().contains("open_npz"), "{error}");
}

#[test]
fn missing_file_names_the_path() {
    let dir = TempDir::new("err-missing");
    let error = npy_mmap::open(dir.join("nope.npy")).unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Io { operation: "open", source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    );
    assert!(error.to_string().contains("nope.npy"), "{error}");
}

#[test]
fn max_header_size_is_honoured() {
    let dir = TempDir::new("err-header-size");
    let path = write_file(
        &dir,
        "a.npy",
        &npy_bytes("<f8", Order::C, &[2], &f64_bytes(0.0, 2)),
    );
    let error = OpenOptions::new()
        .max_header_size(100)
        .open(&path)
        .unwrap_err();
    assert!(
        error.to_string().contains("Header info length (118)"),
        "{error}"
    );
    assert!(OpenOptions::new().max_header_size(118).open(&path).is_ok());
}

#[test]
fn object_dtypes_are_refused_with_numpys_words() {
    let dir = TempDir::new("err-object");
    let dict = "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }";
    let path = write_file(&dir, "a.npy", &raw_v1(dict, 64, 0, &[0x80; 24]));
    for result in open_each_mode(&path) {
        let error = result.unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::ObjectsNotMappable),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .contains(": Array can't be memory-mapped: Python objects in dtype."),
            "{error}"
        );
    }
}

#[test]
fn zero_size_arrays_open_without_a_mapping() {
    let dir = TempDir::new("zero-size");
    for shape in [&[0][..], &[0, 5], &[3, 0], &[4, 0, 2]] {
        let path = write_file(&dir, "a.npy", &npy_bytes("<f8", Order::C, shape, &[]));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 128, "header only");
        for result in open_each_mode(&path) {
            assert_eq!(result.unwrap(), 0, "shape {shape:?}");
        }
        let mut array = npy_mmap::open_rw(&path).unwrap();
        assert_eq!(array.shape(), shape);
        assert!(array.bytes_mut().is_empty());
        array.flush().unwrap();
        array.advise(npy_mmap::Advice::WillNeed).unwrap();
        let rows = shape[0];
        let window = OpenOptions::new().rows(0..rows).open(&path).unwrap();
        assert_eq!(window.shape(), shape);
    }
}

#[test]
fn zero_d_arrays_have_one_element() {
    let dir = TempDir::new("zero-d");
    let path = write_file(
        &dir,
        "a.npy",
        &npy_bytes("<f8", Order::C, &[], &f64_bytes(2.5, 1)),
    );
    let mut array = npy_mmap::open_rw(&path).unwrap();
    assert_eq!(array.shape(), [] as [usize; 0]);
    assert_eq!(array.bytes(), 2.5f64.to_le_bytes());
    assert_eq!(array.rows(), 0..1);
    assert_eq!(array.row_axis(), None);
    array.bytes_mut().copy_from_slice(&(-3.0f64).to_le_bytes());
    array.flush_rows(0..1).unwrap();
    drop(array);
    assert_eq!(
        npy_mmap::open(&path).unwrap().bytes(),
        (-3.0f64).to_le_bytes()
    );
    let error = OpenOptions::new().rows(0..1).open(&path).unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::NoRows));
}

#[test]
fn legacy_16_byte_alignment_maps() {
    let dir = TempDir::new("legacy16");
    let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
    let file = raw_v1(dict, 16, 0, &f64_bytes(1.0, 3));
    assert_eq!((file.len() - 24) % 16, 0);
    assert_ne!((file.len() - 24) % 64, 0, "not numpy's modern alignment");
    let path = write_file(&dir, "a.npy", &file);
    let array = npy_mmap::open(&path).unwrap();
    assert_eq!(array.layout().data_offset, file.len() - 24);
    assert_eq!(array.bytes(), &f64_bytes(1.0, 3)[..]);
}

#[test]
fn odd_data_offsets_map_at_the_right_byte() {
    let dir = TempDir::new("odd-offset");
    let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
    let file = raw_v1(dict, 64, 3, &f64_bytes(1.0, 3));
    let path = write_file(&dir, "a.npy", &file);
    let array = npy_mmap::open(&path).unwrap();
    assert_eq!(array.layout().data_offset % 64, 3);
    assert_eq!(array.bytes(), &f64_bytes(1.0, 3)[..]);
    assert_eq!(
        array.bytes().as_ptr() as usize % 64,
        3,
        "the map starts at a page"
    );
}

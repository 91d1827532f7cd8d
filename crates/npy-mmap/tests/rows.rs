//! Rows: map only a range of a file's rows (`OpenOptions::rows`).

mod common;

use common::{TempDir, npy_bytes, write_file};
use npy_core::Order;
use npy_mmap::{ErrorKind, OpenOptions};

/// A (rows, cols) u16 file whose element at flat position k holds k.
fn counting_file(dir: &TempDir, order: Order, shape: &[usize]) -> (std::path::PathBuf, Vec<u8>) {
    let count: usize = shape.iter().product();
    let data: Vec<u8> = (0..count).flat_map(|k| (k as u16).to_le_bytes()).collect();
    let file = npy_bytes("<u2", order, shape, &data);
    (write_file(dir, "a.npy", &file), data)
}

#[test]
fn c_order_row_ranges_are_row_slabs() {
    let dir = TempDir::new("win-c");
    let (path, data) = counting_file(&dir, Order::C, &[1000, 7]);
    // 37 * 14 = 518 bytes past the data start: not page aligned.
    for rows in [0..1000, 37..91, 999..1000, 500..500] {
        let window = OpenOptions::new().rows(rows.clone()).open(&path).unwrap();
        assert_eq!(window.shape(), [rows.len(), 7]);
        assert_eq!(
            window.header().shape,
            [1000, 7],
            "the header keeps the file's shape"
        );
        assert_eq!(window.rows(), rows);
        assert_eq!(window.row_axis(), Some(0));
        assert_eq!(window.bytes(), &data[rows.start * 14..rows.end * 14]);
        assert_eq!(window.is_partial(), rows.len() != 1000);
    }
}

#[test]
fn fortran_order_row_ranges_run_along_the_last_axis() {
    let dir = TempDir::new("win-f");
    let (path, data) = counting_file(&dir, Order::Fortran, &[3, 4, 5]);
    let window = OpenOptions::new().rows(1..4).open(&path).unwrap();
    assert_eq!(window.shape(), [3, 4, 3]);
    assert_eq!(window.row_axis(), Some(2));
    assert_eq!(window.row_bytes(), 3 * 4 * 2);
    assert_eq!(window.bytes(), &data[24..4 * 24]);
}

#[test]
fn writes_through_a_row_range_land_at_the_right_rows() {
    let dir = TempDir::new("win-write");
    let (path, data) = counting_file(&dir, Order::C, &[3000, 5]);
    let mut window = OpenOptions::new().rows(2000..2500).open_rw(&path).unwrap();
    window.bytes_mut().fill(0xFF);
    window.flush_rows(0..500).unwrap();
    drop(window);
    let after = std::fs::read(&path).unwrap();
    let body = &after[128..];
    assert_eq!(&body[..2000 * 10], &data[..2000 * 10]);
    assert!(body[2000 * 10..2500 * 10].iter().all(|&b| b == 0xFF));
    assert_eq!(&body[2500 * 10..], &data[2500 * 10..]);
}

#[test]
fn row_ranges_out_of_bounds_are_errors() {
    let dir = TempDir::new("win-oob");
    let (path, _) = counting_file(&dir, Order::C, &[10, 2]);
    for rows in [5..11, 11..11, usize::MAX - 1..usize::MAX] {
        let error = OpenOptions::new()
            .rows(rows.clone())
            .open(&path)
            .unwrap_err();
        assert!(
            matches!(
                error.kind(),
                ErrorKind::Format(npy_core::Error::RangeOutOfBounds { start, end, axis: 0, len: 10 })
                    if *start == rows.start && *end == rows.end
            ),
            "{error:?}"
        );
    }
    #[allow(clippy::reversed_empty_ranges)]
    let backwards = OpenOptions::new().rows(6..5).open(&path);
    assert!(matches!(
        (backwards).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Format(npy_core::Error::ReversedRange {
            start: 6,
            end: 5
        }))
    ));
    let message = backwards.unwrap_err().to_string();
    assert!(message.contains("reversed"), "{message}");
}

#[test]
fn a_row_range_of_a_truncated_file_is_still_refused() {
    let dir = TempDir::new("win-trunc");
    let (path, _) = counting_file(&dir, Order::C, &[10, 2]);
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(128 + 39).unwrap();
    // Rows 0..2 are present, but the file as a whole is broken.
    let error = OpenOptions::new().rows(0..2).open(&path).unwrap_err();
    assert!(matches!(
        error.kind(),
        ErrorKind::FileTooShort {
            expected: 168,
            actual: 167,
            ..
        }
    ));
}

/// The size of the memory mapping that contains `address` (Linux: /proc/self/maps).
#[cfg(target_os = "linux")]
fn mapping_size_at(address: usize) -> usize {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    for line in maps.lines() {
        let range = line.split_whitespace().next().unwrap();
        let (start, end) = range.split_once('-').unwrap();
        let (start, end) = (
            usize::from_str_radix(start, 16).unwrap(),
            usize::from_str_radix(end, 16).unwrap(),
        );
        if (start..end).contains(&address) {
            return end - start;
        }
    }
    panic!("no mapping holds {address:#x}");
}

#[test]
#[cfg(target_os = "linux")]
fn a_row_range_maps_only_its_rows() {
    let dir = TempDir::new("win-size");
    let path = dir.join("big.npy");
    // 64 MiB of f8 in 16 windows of 4 MiB; sparse, so nothing is written.
    npy_mmap::CreateOptions::new(npy_core::DType::parse("<f8").unwrap(), [16 * 512, 1024])
        .preallocate(&path)
        .unwrap();
    let whole = npy_mmap::open(&path).unwrap();
    assert!(mapping_size_at(whole.bytes().as_ptr() as usize) >= 64 << 20);
    for w in [0, 7, 15] {
        let rows = w * 512..(w + 1) * 512;
        let window = OpenOptions::new().rows(rows).open(&path).unwrap();
        assert_eq!(window.bytes().len(), 4 << 20);
        let mapped = mapping_size_at(window.bytes().as_ptr() as usize);
        // The window's bytes plus the part of a page before them, no more.
        assert!(
            (4 << 20..=(4 << 20) + 4096 * 16).contains(&mapped),
            "window {w} maps {mapped} bytes"
        );
    }
}

/// Everything a mapping says about itself (both array types have the same
/// accessors, not a shared trait).
macro_rules! description {
    ($array:expr) => {
        (
            $array.path().to_path_buf(),
            $array.header().clone(),
            *$array.layout(),
            $array.dtype().clone(),
            $array.order(),
            $array.shape().to_vec(),
            $array.rows(),
            $array.row_axis(),
            $array.row_bytes(),
            $array.is_partial(),
        )
    };
}

#[test]
fn live_and_plain_row_ranges_describe_themselves_alike() {
    let dir = TempDir::new("win-live");
    // Rows run along axis 0 in C order, the last axis in Fortran order.
    for (order, shape) in [(Order::C, [40, 7]), (Order::Fortran, [7, 40])] {
        let (path, _) = counting_file(&dir, order, &shape);
        for rows in [0..40, 3..9] {
            let plain = OpenOptions::new().rows(rows.clone()).open(&path).unwrap();
            let described = description!(plain);
            assert_eq!(described.9, rows.len() != 40);
            drop(plain);
            let live = OpenOptions::new()
                .rows(rows.clone())
                .open_live(&path)
                .unwrap();
            assert_eq!(description!(live), described, "{order:?} rows {rows:?}");
        }
    }
}

//! The three open modes: what reaches the file and what does not.

mod common;

use std::sync::atomic::Ordering;

use common::{TempDir, f64_bytes, npy_bytes, write_file};
use npy_core::Order;
use npy_mmap::{Advice, ErrorKind, OpenOptions};

#[test]
fn read_only_sees_the_file_data() {
    let dir = TempDir::new("modes-r");
    let file = npy_bytes("<f8", Order::C, &[4, 3], &f64_bytes(0.0, 12));
    let path = write_file(&dir, "a.npy", &file);
    let array = npy_mmap::open(&path).unwrap();
    assert_eq!(array.shape(), [4, 3]);
    assert_eq!(array.header().shape, [4, 3]);
    assert_eq!(array.layout().data_offset, 128);
    assert_eq!(array.bytes(), &file[128..]);
    assert_eq!(array.rows(), 0..4);
    assert_eq!(array.row_bytes(), 24);
    assert_eq!(array.trailing_bytes(), 0);
    assert!(!array.is_partial());
}

#[test]
fn read_write_changes_reach_the_file() {
    let dir = TempDir::new("modes-rplus");
    let file = npy_bytes("<f8", Order::C, &[4, 3], &f64_bytes(0.0, 12));
    let path = write_file(&dir, "a.npy", &file);
    let mut array = npy_mmap::open_rw(&path).unwrap();
    array.bytes_mut()[5 * 8..6 * 8].copy_from_slice(&(-1.0f64).to_le_bytes());
    array.flush().unwrap();
    drop(array);
    let after = std::fs::read(&path).unwrap();
    let mut expected = file.clone();
    expected[128 + 40..128 + 48].copy_from_slice(&(-1.0f64).to_le_bytes());
    assert_eq!(after, expected);
}

#[test]
fn changes_are_visible_to_other_mappings_without_a_flush() {
    let dir = TempDir::new("modes-shared");
    let file = npy_bytes("<u1", Order::C, &[10], &[0; 10]);
    let path = write_file(&dir, "a.npy", &file);
    // Shared mappings of one file share the page cache: no flush needed
    // within a machine; flush is for durability.
    let mut writer = npy_mmap::open_rw(&path).unwrap();
    writer.bytes_mut()[3] = 42;
    drop(writer); // unmapped, not flushed
    assert_eq!(npy_mmap::open(&path).unwrap().bytes()[3], 42);
    // At the same time, only live mappings may share the bytes.
    let live_writer = OpenOptions::new().open_live(&path).unwrap();
    let live_reader = OpenOptions::new().open_live(&path).unwrap();
    live_writer.atomics::<u8>().unwrap()[4].store(43, Ordering::Relaxed);
    assert_eq!(
        live_reader.atomics::<u8>().unwrap()[4].load(Ordering::Relaxed),
        43
    );
}

#[test]
fn copy_on_write_changes_never_reach_the_file() {
    let dir = TempDir::new("modes-c");
    let file = npy_bytes("<f8", Order::C, &[4, 3], &f64_bytes(0.0, 12));
    let path = write_file(&dir, "a.npy", &file);
    let mut array = npy_mmap::open_cow(&path).unwrap();
    let reader = npy_mmap::open(&path).unwrap();
    array.bytes_mut().fill(0xAB);
    assert!(array.bytes().iter().all(|&b| b == 0xAB));
    // Another mapping of the file, the file itself, and a reopen: unchanged.
    assert_eq!(reader.bytes(), &file[128..]);
    drop(array);
    assert_eq!(std::fs::read(&path).unwrap(), file);
    let again = OpenOptions::new().open_cow(&path).unwrap();
    assert_eq!(again.bytes(), &file[128..]);
}

#[test]
fn copy_on_write_refuses_dont_need_but_takes_other_hints() {
    let dir = TempDir::new("modes-c-advice");
    let path = write_file(
        &dir,
        "a.npy",
        &npy_bytes("<u1", Order::C, &[4096], &[7; 4096]),
    );
    let mut array = npy_mmap::open_cow(&path).unwrap();
    array.bytes_mut()[0] = 1;
    for advice in [
        Advice::Normal,
        Advice::Random,
        Advice::Sequential,
        Advice::WillNeed,
    ] {
        array.advise(advice).unwrap();
    }
    let error = array.advise(Advice::DontNeed).unwrap_err();
    assert!(error.to_string().contains("copy-on-write"), "{error}");
    assert_eq!(array.bytes()[0], 1, "the private copy survives");
}

#[test]
fn dont_need_on_shared_mappings_keeps_the_data() {
    let dir = TempDir::new("modes-dontneed");
    let path = write_file(
        &dir,
        "a.npy",
        &npy_bytes("<u1", Order::C, &[8192], &[7; 8192]),
    );
    let mut writer = npy_mmap::open_rw(&path).unwrap();
    writer.bytes_mut()[5000] = 9;
    writer.advise(Advice::DontNeed).unwrap();
    assert_eq!(writer.bytes()[5000], 9, "dirty data is not lost");
    drop(writer);
    let reader = OpenOptions::new()
        .advice(Advice::DontNeed)
        .open(&path)
        .unwrap();
    assert_eq!(reader.bytes()[5000], 9);
    assert_eq!(reader.bytes()[0], 7);
}

#[test]
fn trailing_bytes_are_allowed_and_reported() {
    let dir = TempDir::new("modes-trailing");
    let mut file = npy_bytes("<f8", Order::C, &[2], &f64_bytes(1.0, 2));
    file.extend_from_slice(b"garbage");
    let path = write_file(&dir, "a.npy", &file);
    let array = npy_mmap::open(&path).unwrap();
    assert_eq!(array.trailing_bytes(), 7);
    assert_eq!(array.file_len(), file.len() as u64);
    assert_eq!(
        array.bytes(),
        &f64_bytes(1.0, 2)[..],
        "the view excludes them"
    );
    drop(array);
    let rw = npy_mmap::open_rw(&path).unwrap();
    assert_eq!(rw.trailing_bytes(), 7);
}

#[test]
fn flush_ranges_are_checked_and_work() {
    let dir = TempDir::new("modes-flush");
    let path = write_file(
        &dir,
        "a.npy",
        &npy_bytes("<f8", Order::C, &[100, 10], &[0; 8000]),
    );
    let mut array = npy_mmap::open_rw(&path).unwrap();
    array.bytes_mut()[80 * 50] = 1;
    array.flush_rows(50..51).unwrap();
    array.flush_bytes(0..8000).unwrap();
    array.flush_async().unwrap();
    assert_eq!(array.row_byte_range(50..51).unwrap(), 4000..4080);
    let error = array.flush_rows(90..101).unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("a.npy: range 90..101 is out of bounds for axis 0 with size 100"),
        "{error}"
    );
    #[allow(clippy::reversed_empty_ranges)]
    let error = array.flush_bytes(10..5).unwrap_err();
    assert!(matches!(
        error.kind(),
        ErrorKind::BytesOutOfBounds {
            start: 10,
            end: 5,
            len: 8000
        }
    ));
    assert!(matches!(
        array.flush_bytes(0..8001).unwrap_err().kind(),
        ErrorKind::BytesOutOfBounds { end: 8001, .. }
    ));
    drop(array);
    assert_eq!(std::fs::read(&path).unwrap()[128 + 4000], 1);
}

#[test]
fn async_flushes_of_a_row_range_are_checked_and_keep_the_data() {
    let dir = TempDir::new("modes-flush-async");
    let path = write_file(
        &dir,
        "a.npy",
        &npy_bytes("<f8", Order::C, &[100, 10], &[0; 8000]),
    );
    // A window starting mid-file: writeback starts at the window's file offset.
    let mut window = OpenOptions::new().rows(30..60).open_rw(&path).unwrap();
    let mut view = window.view_mut::<f64>().unwrap();
    for (i, value) in view.as_slice_mut().unwrap().iter_mut().enumerate() {
        *value = i as f64;
    }
    window.flush_rows_async(0..10).unwrap();
    window.flush_bytes_async(800..2400).unwrap();
    window.flush_async().unwrap();
    let error = window.flush_rows_async(20..31).unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("a.npy: range 20..31 is out of bounds for axis 0 with size 30"),
        "{error}"
    );
    assert!(matches!(
        window.flush_bytes_async(0..2401).unwrap_err().kind(),
        ErrorKind::BytesOutOfBounds { end: 2401, .. }
    ));
    drop(window);
    let file = std::fs::read(&path).unwrap();
    let data = &file[128..];
    assert_eq!(&data[..300 * 8], &[0; 2400][..], "rows before the window");
    for i in 0..300 {
        let at = (300 + i) * 8;
        assert_eq!(data[at..at + 8], (i as f64).to_le_bytes(), "element {i}");
    }
    assert_eq!(&data[600 * 8..], &[0; 3200][..], "rows after the window");
}

#[test]
fn each_mode_method_names_its_mode() {
    let dir = TempDir::new("modes-generic");
    let path = write_file(&dir, "a.npy", &npy_bytes("|u1", Order::C, &[3], &[1, 2, 3]));
    fn first<M: npy_mmap::Mode>(array: npy_mmap::MappedArray<M>) -> (u8, &'static str) {
        (array.bytes()[0], M::NUMPY_MODE)
    }
    let options = OpenOptions::new();
    assert_eq!(first(options.open(&path).unwrap()), (1, "r"));
    assert_eq!(first(options.open_rw(&path).unwrap()), (1, "r+"));
    assert_eq!(first(options.open_cow(&path).unwrap()), (1, "c"));
}

#[test]
fn hints_for_row_ranges_are_checked() {
    let dir = TempDir::new("modes-advise-rows");
    let path = write_file(
        &dir,
        "a.npy",
        &npy_bytes("<u2", Order::C, &[1000, 8], &[3; 16000]),
    );
    let array = npy_mmap::open_rw(&path).unwrap();
    array.advise_rows(100..900, Advice::Sequential).unwrap();
    array.advise_rows(0..0, Advice::DontNeed).unwrap();
    array.advise_bytes(1..2, Advice::WillNeed).unwrap();
    let error = array.advise_rows(999..1001, Advice::Random).unwrap_err();
    assert!(matches!(
        error.kind(),
        ErrorKind::Format(npy_core::Error::RangeOutOfBounds { len: 1000, .. })
    ));
    assert!(matches!(
        array
            .advise_bytes(0..16001, Advice::Random)
            .unwrap_err()
            .kind(),
        ErrorKind::BytesOutOfBounds { end: 16001, .. }
    ));
}

#[test]
#[cfg(target_os = "linux")]
fn populate_write_prefaults_a_writable_row_range() {
    let dir = TempDir::new("modes-populate");
    let path = dir.join("a.npy");
    npy_mmap::CreateOptions::new(npy_core::DType::parse("<f8").unwrap(), [4096, 64])
        .preallocate(&path)
        .unwrap();
    let mut window = OpenOptions::new()
        .rows(1024..2048)
        .advice(Advice::PopulateWrite)
        .open_rw(&path)
        .unwrap();
    assert!(
        window.bytes().iter().all(|&b| b == 0),
        "populating keeps the zeros"
    );
    window.bytes_mut()[0] = 1;
    window.advise_rows(0..10, Advice::PopulateRead).unwrap();
    drop(window);
    let reader = npy_mmap::open(&path).unwrap();
    reader.advise(Advice::PopulateRead).unwrap();
    // A read-only mapping cannot be populated writable.
    let error = reader.advise(Advice::PopulateWrite).unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Io { .. }), "{error:?}");
    assert_eq!(reader.bytes()[1024 * 64 * 8], 1);
}

#[test]
fn fill_blocks_fills_every_row_in_either_order_and_stops_at_an_error() {
    let dir = TempDir::new("modes-fill-blocks");
    for order in [Order::C, Order::Fortran] {
        // (rows along axis 0 in C order, along the last axis in Fortran order)
        let shape: &[usize] = match order {
            Order::C => &[10, 3],
            Order::Fortran => &[3, 10],
        };
        let path = write_file(&dir, "a.npy", &npy_bytes("<f8", order, shape, &[0; 240]));
        let mut window = OpenOptions::new().rows(2..9).open_rw(&path).unwrap();
        let mut blocks = Vec::new();
        window
            .fill_blocks::<f64>(3, |rows, mut block| {
                blocks.push(rows.clone());
                let values = block.as_slice_mut().expect("a block is contiguous");
                assert_eq!(values.len(), rows.len() * 3);
                for (i, value) in values.iter_mut().enumerate() {
                    // Memory order inside the block: row-major rows, 3 each.
                    *value = ((2 + rows.start) * 3 + i) as f64;
                }
                Ok(())
            })
            .unwrap();
        assert_eq!(blocks, [0..3, 3..6, 6..7], "{order:?}");
        drop(window);
        let data = &std::fs::read(&path).unwrap()[128..];
        let values: Vec<f64> = data
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let expected: Vec<f64> = (0..30)
            .map(|i| if (6..27).contains(&i) { i as f64 } else { 0.0 })
            .collect();
        assert_eq!(
            values, expected,
            "{order:?}: rows 2..9 filled, the rest untouched"
        );

        let mut whole = npy_mmap::open_rw(&path).unwrap();
        let mut calls = 0;
        let error = whole
            .fill_blocks::<f64>(4, |rows, _| {
                calls += 1;
                if rows.start == 4 {
                    Err(Stop::AtRow(4))?
                }
                Ok(())
            })
            .unwrap_err();
        let npy_mmap::ErrorKind::Fill { source } = error.kind() else {
            panic!("{order:?}: {error:?}")
        };
        assert!(
            matches!(source.downcast_ref::<Stop>(), Some(Stop::AtRow(4))),
            "{order:?}"
        );
        assert_eq!(calls, 2, "{order:?}: no block after the error");
    }
}

/// A caller's own error type for `fill_blocks`.
#[derive(Debug)]
enum Stop {
    AtRow(usize),
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Stop::AtRow(row) = self;
        write!(f, "stopped at row {row}")
    }
}

impl std::error::Error for Stop {}

/// Whether the page holding `address` (of this process) is dirty in the page
/// cache: its frame from `/proc/self/pagemap`, its flags from
/// `/proc/kpageflags` (bit 4, `KPF_DIRTY`). Both need root for frame numbers.
#[cfg(target_os = "linux")]
fn page_is_dirty(address: *const u8) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let read_u64 = |file: &str, index: u64| {
        let mut file = std::fs::File::open(file).unwrap();
        file.seek(SeekFrom::Start(index * 8)).unwrap();
        let mut entry = [0u8; 8];
        file.read_exact(&mut entry).unwrap();
        u64::from_le_bytes(entry)
    };
    let entry = read_u64("/proc/self/pagemap", address as u64 / 4096);
    assert!(entry >> 63 == 1, "the page is not present");
    let frame = entry & ((1 << 55) - 1);
    assert!(
        frame != 0,
        "no frame numbers in /proc/self/pagemap: this test needs root (CI runs it with --ignored)"
    );
    read_u64("/proc/kpageflags", frame) >> 4 & 1 == 1
}

/// Round 3: the flush checks above pass even if a flush does nothing (the
/// page cache shows the bytes either way). Here the kernel says which pages
/// are dirty: a flush of a range cleans its pages, an async flush
/// starts writeback that cleans them soon (a no-op would leave them dirty
/// for the kernel's 30 s expiry).
#[test]
#[cfg(target_os = "linux")]
#[ignore = "needs root to read /proc/kpageflags (CI runs it with --ignored)"]
fn flushes_clean_the_pages_they_name() {
    let dir = TempDir::new("modes-flush-dirty");
    // Rows of one page each, so every row has its own page.
    let path = write_file(
        &dir,
        "a.npy",
        &npy_bytes("<f8", Order::C, &[64, 512], &vec![0; 64 * 4096]),
    );
    let mut array = npy_mmap::open_rw(&path).unwrap();
    let row_address = |array: &npy_mmap::MappedArray<npy_mmap::ReadWrite>, row: usize| {
        array.bytes()[array.row_byte_range(row..row + 1).unwrap()].as_ptr()
    };
    let dirty = |array: &npy_mmap::MappedArray<npy_mmap::ReadWrite>, row: usize| {
        page_is_dirty(row_address(array, row))
    };
    let touch = |array: &mut npy_mmap::MappedArray<npy_mmap::ReadWrite>, row: usize| {
        let range = array.row_byte_range(row..row + 1).unwrap();
        array.bytes_mut()[range.start + 8] ^= 1;
    };

    // Each flush, on a freshly dirtied page. (Other pages may be cleaned
    // too: ext4's journal writes back the whole file's data with a sync.)
    touch(&mut array, 50);
    assert!(dirty(&array, 50), "row 50 after a write");
    array.flush_rows(50..51).unwrap();
    assert!(!dirty(&array, 50), "flush_rows(50..51) left its page dirty");
    touch(&mut array, 10);
    assert!(dirty(&array, 10), "row 10 after a write");
    let row_10 = array.row_byte_range(10..11).unwrap();
    array.flush_bytes(row_10).unwrap();
    assert!(!dirty(&array, 10), "flush_bytes left its page dirty");
    touch(&mut array, 20);
    assert!(dirty(&array, 20), "row 20 after a write");
    array.flush().unwrap();
    assert!(!dirty(&array, 20), "flush left a page dirty");

    // Asynchronous: writeback starts now and ends soon.
    let wait_clean =
        |array: &npy_mmap::MappedArray<npy_mmap::ReadWrite>, row: usize, what: &str| {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
            while dirty(array, row) {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{what} did not clean row {row}"
                );
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        };
    touch(&mut array, 30);
    assert!(dirty(&array, 30));
    array.flush_rows_async(30..31).unwrap();
    wait_clean(&array, 30, "flush_rows_async");
    touch(&mut array, 40);
    assert!(dirty(&array, 40));
    let row_40 = array.row_byte_range(40..41).unwrap();
    array.flush_bytes_async(row_40).unwrap();
    wait_clean(&array, 40, "flush_bytes_async");
    touch(&mut array, 5);
    assert!(dirty(&array, 5));
    array.flush_async().unwrap();
    wait_clean(&array, 5, "flush_async");
}

/// Round 3 (first use): the fill pattern the README teaches read
/// `as_slice_mut().chunks_mut(cols)` as rows, which on a Fortran-order file
/// lays the values across columns without a word. Rows come from
/// `as_c_slice_mut`, which a Fortran-order view refuses: the fill fails and
/// the file keeps its zeros.
#[test]
fn the_taught_fill_refuses_a_fortran_order_file() {
    let dir = TempDir::new("modes-fill-fortran");
    let path = dir.join("f.npy");
    let mut options = npy_mmap::CreateOptions::new(npy_core::DType::parse("<f8").unwrap(), [6, 4]);
    options.order(Order::Fortran);
    options.preallocate(&path).unwrap();
    let mut array = npy_mmap::open_rw(&path).unwrap();
    let error = array
        .fill_blocks::<f64>(2, |_, mut view| {
            let values = view
                .as_c_slice_mut()
                .ok_or("rows of a Fortran-order file are not contiguous")?;
            values.fill(1.0);
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Fill { .. }), "{error:?}");
    assert!(error.to_string().contains("not contiguous"), "{error}");
    let view = array.view::<f64>().unwrap();
    assert!(view.as_c_slice().is_none());
    assert!(view.as_slice().is_some(), "memory order stays available");
    assert!(view.as_slice().unwrap().iter().all(|&v| v == 0.0));
    drop(view);
    drop(array);
    // A C-order file: the same fill writes rows.
    let path = dir.join("c.npy");
    npy_mmap::CreateOptions::new(npy_core::DType::parse("<f8").unwrap(), [6, 4])
        .preallocate(&path)
        .unwrap();
    let mut array = npy_mmap::open_rw(&path).unwrap();
    array
        .fill_blocks::<f64>(2, |rows, mut view| {
            let values = view.as_c_slice_mut().ok_or("not contiguous")?;
            for (i, row) in values.chunks_mut(4).enumerate() {
                row.fill((rows.start + i) as f64);
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(array.view::<f64>().unwrap()[[5, 3]], 5.0);
}

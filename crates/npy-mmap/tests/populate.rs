//! `Advice::PopulateRead` given at open: the pages are mapped in by a
//! thread while the open returns (Linux: `MADV_POPULATE_READ`), and a
//! mapping dropped meanwhile is unmapped all the same.
#![cfg(target_os = "linux")]

mod common;

use std::time::{Duration, Instant};

use common::TempDir;
use npy_mmap::{Advice, OpenOptions};

/// The resident bytes of the mapping that holds `address`
/// (`/proc/self/smaps`), or `None` when no mapping holds it.
fn resident_bytes(address: usize) -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((range, _)) = line.split_once(' ')
            && let Some((start, end)) = range.split_once('-')
            && let (Ok(start), Ok(end)) = (
                usize::from_str_radix(start, 16),
                usize::from_str_radix(end, 16),
            )
        {
            inside = (start..end).contains(&address);
        } else if inside && let Some(kb) = line.strip_prefix("Rss:") {
            return Some(
                kb.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .unwrap()
                    * 1024,
            );
        }
    }
    None
}

/// Whether a mapping of this process maps `path` (`/proc/self/maps`).
fn maps_file(path: &std::path::Path) -> bool {
    let path = path.to_str().unwrap();
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .any(|line| line.ends_with(path))
}

/// Waits until `done()` holds, failing after a minute (the work is
/// milliseconds; the minute only bounds a broken build).
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn populate_read_at_open_maps_every_page_in() {
    let dir = TempDir::new("populate-every-page");
    let path = dir.join("big.npy");
    let values: Vec<f64> = (0..(64 << 20) / 8).map(|i| i as f64).collect();
    npy_mmap::save(&path, &values).unwrap();
    let array = OpenOptions::new()
        .advice(Advice::PopulateRead)
        .open(&path)
        .unwrap();
    let address = array.bytes().as_ptr() as usize;
    let len = array.bytes().len() as u64;
    eventually("every page of the mapping resident", || {
        resident_bytes(address).is_some_and(|rss| rss >= len)
    });
    assert_eq!(
        array.view::<f64>().unwrap().as_slice().unwrap(),
        &values[..]
    );
}

#[test]
fn a_mapping_dropped_while_it_is_populated_is_unmapped() {
    let dir = TempDir::new("populate-dropped");
    let path = dir.join("big.npy");
    npy_mmap::CreateOptions::new(npy_core::DType::parse("<f8").unwrap(), [32 << 20])
        .preallocate(&path)
        .unwrap();
    for _ in 0..4 {
        let array = OpenOptions::new()
            .advice(Advice::PopulateRead)
            .open(&path)
            .unwrap();
        assert!(maps_file(&path));
        drop(array);
        eventually("the dropped mapping gone", || !maps_file(&path));
    }
    // Nothing of ours holds the file: it can be opened for writing at once.
    let writer = OpenOptions::new().open_rw(&path).unwrap();
    assert_eq!(writer.bytes().len(), 256 << 20);
}

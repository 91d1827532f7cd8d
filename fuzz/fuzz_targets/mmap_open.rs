//! Arbitrary bytes as a file, opened with a read-only mapping (numpy's
//! `mmap_mode='r'`); every data byte the view exposes is read, so a view
//! that runs past the end of the file would fault here. The same file is
//! also read into memory with `load` (converting to native byte order),
//! which must agree with the mapping on the data bytes.
#![no_main]

use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use npy_mmap::OpenOptions;

/// One scratch file per fuzzing process, rewritten for every input; in
/// memory (`/dev/shm`) where there is one, as disk writes dominate the cost.
fn scratch() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let shm = std::path::Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        dir.join(format!("npy-fuzz-mmap-{}.npy", std::process::id()))
    })
}

fuzz_target!(|bytes: &[u8]| {
    // The first byte picks an optional row window; the rest is the file.
    let Some((&window, file)) = bytes.split_first() else {
        return;
    };
    let path = scratch();
    {
        let mut out = std::fs::File::create(path).expect("scratch file");
        out.write_all(file).expect("write scratch file");
    }
    let mut options = OpenOptions::new();
    if window != 0 {
        let start = usize::from(window >> 4);
        options.rows(start..start + usize::from(window & 0x0f));
    }
    let native = npy_core::ReadOptions {
        to_native: true,
        ..Default::default()
    };
    let loaded = npy_mmap::OpenOptions::from(native).load(path);
    let Ok(array) = options.open(path) else {
        return;
    };
    if !array.is_partial() {
        // Whatever maps must load: both check the same header and length.
        let loaded = loaded.expect("a file that maps also loads");
        assert_eq!(loaded.bytes().len(), array.bytes().len());
        assert_eq!(loaded.header().shape, array.header().shape);
    }
    let data = array.bytes();
    assert!(array.layout().data_offset as u64 + data.len() as u64 <= file.len() as u64);
    let checksum = data.iter().fold(0u8, |sum, &b| sum.wrapping_add(b));
    std::hint::black_box(checksum);
    if let Ok(records) = array.raw_view() {
        for record in records.iter().take(4) {
            let _ = record.value();
        }
    }
});

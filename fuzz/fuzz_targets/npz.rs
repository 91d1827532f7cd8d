//! The npz reader on arbitrary bytes: central directory, member lookup,
//! loading (stored and deflated members), and zero-copy member access.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npy_mmap::npz::{NpzArchive, StoredArray};

fuzz_target!(|bytes: &[u8]| {
    let Ok(mut archive) = NpzArchive::from_bytes(bytes) else {
        return;
    };
    let keys: Vec<String> = archive.keys().iter().take(8).cloned().collect();
    for key in &keys {
        let _ = archive.info(key);
        let _ = archive.is_npy(key);
        let _ = archive.get(key);
        if let Ok(StoredArray { layout, data, .. }) = archive.array_bytes(key) {
            assert_eq!(data.len(), layout.data_len);
        }
    }
});

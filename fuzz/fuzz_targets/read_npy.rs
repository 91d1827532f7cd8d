//! The whole stream reader on arbitrary bytes; on success, decode a few
//! elements (every dtype's Value path) and check write → read gives it back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npy_core::{NpyBytes, ReadOptions, read_npy, write_npy};

fuzz_target!(|bytes: &[u8]| {
    let to_native = bytes.last().is_some_and(|b| b & 1 == 1);
    let options = ReadOptions {
        to_native,
        ..ReadOptions::default()
    };
    let Ok(array) = read_npy(bytes, &options) else {
        return;
    };
    assert_eq!(array.bytes().len(), array.layout().data_len);
    if let Ok(records) = array.raw_view() {
        for record in records.iter().take(4) {
            if let Ok(value) = record.value() {
                let _ = value.to_string();
            }
        }
    }
    let mut out = Vec::new();
    let source = NpyBytes::new(array.header(), array.bytes()).expect("read bytes fit their header");
    if write_npy(&mut out, &source).is_ok() {
        let back = read_npy(out.as_slice(), &ReadOptions::default()).expect("our own file reads");
        assert_eq!(back.header(), array.header());
        assert_eq!(back.bytes(), array.bytes());
    }
});

//! The header parser (preamble, Python literal, dict checks, descr) on
//! arbitrary bytes, plus two identities on whatever it accepts:
//! encode → parse gives the same header, descr → parse the same dtype.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npy_core::{DType, Header, ParseOptions};

fuzz_target!(|bytes: &[u8]| {
    // A raised limit so long inputs reach the literal parser.
    let options = ParseOptions {
        max_header_size: 1 << 20,
        ..Default::default()
    };
    if let Ok(npy_core::ParsedHeader { header, layout }) = Header::parse(bytes, &options) {
        assert!(layout.data_offset <= bytes.len());
        assert_eq!(Some(layout.data_len), header.data_len().ok());
        if let Ok(encoded) = header.to_bytes(None) {
            let npy_core::ParsedHeader { header: again, .. } =
                Header::parse(&encoded, &options).expect("our own header parses");
            assert_eq!(again, header);
        }
    }
    if let Ok(text) = std::str::from_utf8(bytes)
        && let Ok(dtype) = DType::parse(text)
    {
        let descr = dtype.descr();
        // Hand-built shapes aside, every parsed dtype has a descr that means it.
        let again = DType::parse(&descr).expect("our own descr parses");
        assert_eq!(again, dtype, "{descr}");
    }
});

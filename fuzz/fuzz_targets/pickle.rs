//! The restricted unpickler on arbitrary bytes: a whole `.npy` file (seeds
//! are numpy's object arrays) goes through `read_npy` with `allow_pickle`;
//! anything else is a raw pickle. Whatever decodes must print, pickle again
//! and decode to the same values (after the one change numpy's unpickling
//! makes: byte-swapped nested arrays come back native, and stay so); the
//! one pass (`pickle::build`) decodes the same values or refuses too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npy_core::pickle::{self, Encoding, PickleOptions, PyValue, Tree};
use npy_core::{ReadOptions, read_npy, write_npy};

fuzz_target!(|bytes: &[u8]| {
    let encoding = match bytes.last().map(|b| b % 3) {
        Some(0) => Encoding::Ascii,
        Some(1) => Encoding::Latin1,
        _ => Encoding::Bytes,
    };
    let options = PickleOptions {
        encoding,
        ..PickleOptions::default()
    };
    if bytes.starts_with(b"\x93NUMPY") {
        let mut read = ReadOptions::default();
        read.parse.allow_pickle = true;
        read.pickle = options;
        let Ok(array) = read_npy(bytes, &read) else {
            return;
        };
        let mut out = Vec::new();
        write_npy(&mut out, &array).expect("a decoded array writes");
        let once = read_npy(out.as_slice(), &read).expect("our own file reads");
        assert_eq!(once.header(), array.header());
        let mut again = Vec::new();
        write_npy(&mut again, &once).expect("writes");
        assert_eq!(read_npy(again.as_slice(), &read).expect("reads"), once);
        return;
    }
    // The one pass (each str made as it is read) agrees with the decode
    // then the walk: the same value, or both refuse.
    let once = pickle::build(bytes, &options, &mut Tree);
    let Ok((value, used)) = pickle::unpickle(bytes, &options) else {
        assert!(
            once.is_err(),
            "the one pass accepts what the decode refuses"
        );
        return;
    };
    let (made, made_used) = once.expect("the one pass accepts what the decode accepts");
    assert_eq!(
        (format!("{made:?}"), made_used),
        (format!("{value:?}"), used)
    );
    assert!(used as usize <= bytes.len());
    let _ = value.to_string();
    let once = round_trip(&value, &options);
    assert_eq!(round_trip(&once, &options), once);
});

fn round_trip(value: &PyValue, options: &PickleOptions) -> PyValue {
    let bytes = pickle::dumps(value).expect("a decoded value pickles");
    pickle::loads(&bytes, options).expect("our own pickle decodes")
}

//! Hostile pickles against the restricted unpickler: each is refused with an
//! error that says why (naming the opcode or global), using heap bounded by
//! a small multiple of the input (a counting allocator, `bounds_alloc`) and
//! time bounded by a generous wall-clock guard against hangs (not a speed
//! claim). Nothing here can run code: there is nothing to call.

mod bounds_alloc;

use std::time::{Duration, Instant};

use bounds_alloc::{Cost, measure};
use npy_core::pickle::{self, PickleOptions, PyValue};
use npy_core::{DType, Error, Header, Order, ReadOptions, read_npy};

const GENEROUS: Duration = Duration::from_secs(10);

/// A protocol-4 pickle: PROTO 4, `body`, STOP.
fn p4(body: &[u8]) -> Vec<u8> {
    [&[0x80, 4][..], body, b"."].concat()
}

fn short_unicode(s: &str) -> Vec<u8> {
    [&[0x8c, s.len() as u8][..], s.as_bytes()].concat()
}

/// Decodes `bytes`, which must fail; returns the message and the heap cost.
fn refuse(bytes: &[u8]) -> (String, Cost) {
    let start = Instant::now();
    let (result, cost) = measure(|| pickle::loads(bytes, &PickleOptions::default()));
    assert!(start.elapsed() < GENEROUS, "took {:?}", start.elapsed());
    let error = result.expect_err("a hostile pickle must be refused");
    assert!(
        matches!(error, Error::Unpickling { .. }),
        "not an unpickling error: {error:?}"
    );
    (error.to_string(), cost)
}

/// Heap use allowed for an input of `len` bytes: the output budget
/// (`max_expansion` = 64 times the input, plus 1 MiB) and the arena (a few
/// words per opcode).
fn small_multiple(len: usize) -> usize {
    2 * (64 * len + (1 << 20))
}

const ALLOWED: &[u8] = &[
    0x80, 0x95, b'.', b'(', b'0', b'1', b'2', b'N', 0x88, 0x89, b'J', b'K', b'M', 0x8a, 0x8b, b'G',
    0x8c, b'X', 0x8d, b'C', b'B', 0x8e, 0x96, b'U', b'T', b')', 0x85, 0x86, 0x87, b't', b']', b'l',
    b'a', b'e', b'}', b'd', b's', b'u', 0x8f, 0x90, 0x91, b'h', b'j', b'q', b'r', 0x94, b'c', 0x93,
    b'R', b'b',
];

#[test]
fn every_opcode_outside_the_allowed_set_is_refused_by_name() {
    let named = [
        (b'I', "INT"),
        (b'L', "LONG"),
        (b'F', "FLOAT"),
        (b'S', "STRING"),
        (b'V', "UNICODE"),
        (b'g', "GET"),
        (b'p', "PUT"),
        (b'P', "PERSID"),
        (b'Q', "BINPERSID"),
        (b'i', "INST"),
        (b'o', "OBJ"),
        (0x81, "NEWOBJ"),
        (0x92, "NEWOBJ_EX"),
        (0x82, "EXT1"),
        (0x83, "EXT2"),
        (0x84, "EXT4"),
        (0x97, "NEXT_BUFFER"),
        (0x98, "READONLY_BUFFER"),
    ];
    let mut refused = 0;
    for op in 0..=255u8 {
        if ALLOWED.contains(&op) {
            continue;
        }
        // Operands that would satisfy any opcode, so only the opcode can fail.
        let mut body = vec![b'N', b'N', b'(', op];
        body.extend_from_slice(b"0\n0\n\x00\x00\x00\x00\x00\x00\x00\x00");
        let (message, _) = refuse(&p4(&body));
        match named.iter().find(|(code, _)| *code == op) {
            Some((_, name)) => assert!(
                message.contains(&format!("opcode {name} ")) && message.contains("not allowed"),
                "{op:#x}: {message}"
            ),
            None => assert!(message.contains("invalid load key"), "{op:#x}: {message}"),
        }
        assert!(message.contains("at byte 5"), "{op:#x}: {message}");
        refused += 1;
    }
    assert_eq!(refused, 256 - ALLOWED.len());
}

#[test]
fn forbidden_globals_are_refused_by_name_in_both_spellings() {
    let forbidden = [
        ("os", "system"),
        ("posix", "system"),
        ("subprocess", "Popen"),
        ("builtins", "eval"),
        ("builtins", "exec"),
        ("builtins", "getattr"),
        ("builtins", "__import__"),
        ("__builtin__", "eval"),
        ("copy_reg", "_reconstructor"),
        ("copyreg", "_reconstructor"),
        ("pandas.core.frame", "DataFrame"),
        ("datetime", "date"),
        ("collections", "OrderedDict"),
        ("numpy", "load"),
        ("numpy.ma.core", "_mareconstruct"),
        ("numpy.matrixlib.defmatrix", "matrix"),
        ("numpy._core.multiarray", "fromstring"),
        ("numpy", "_reconstruct"),
        ("builtins", "ndarray"),
    ];
    for (module, name) in forbidden {
        let stack_global = p4(&[short_unicode(module), short_unicode(name), vec![0x93]].concat());
        let global = [
            b"\x80\x02c".as_slice(),
            format!("{module}\n{name}\n").as_bytes(),
            b")R.",
        ]
        .concat();
        for bytes in [stack_global, global] {
            let (message, cost) = refuse(&bytes);
            assert!(
                message.contains(&format!("global '{module}.{name}' is not allowed")),
                "{message}"
            );
            assert!(cost.peak_bytes < 1 << 16, "{cost:?}");
        }
    }
}

#[test]
fn reduce_and_build_only_interpret_the_known_patterns() {
    let global = |module: &str, name: &str| {
        [short_unicode(module), short_unicode(name), vec![0x93]].concat()
    };
    let cases: Vec<(Vec<u8>, &str)> = vec![
        // Calling something that is not a global.
        (
            [short_unicode("os.system"), b")R".to_vec()].concat(),
            "not callable",
        ),
        // numpy.ndarray called directly (not through _reconstruct).
        (
            [global("numpy", "ndarray"), b"K\x03\x85\x85R".to_vec()].concat(),
            "unexpected arguments",
        ),
        // _reconstruct of a class other than ndarray (set).
        (
            [
                global("numpy._core.multiarray", "_reconstruct"),
                global("builtins", "set"),
                b"K\x00\x85C\x01b\x87R".to_vec(),
            ]
            .concat(),
            "only numpy.ndarray is allowed",
        ),
        // set() with an int.
        (
            [global("builtins", "set"), b"K\x01\x85R".to_vec()].concat(),
            "unexpected arguments",
        ),
        // _codecs.encode with another codec.
        (
            [
                global("_codecs", "encode"),
                short_unicode("x"),
                short_unicode("rot13"),
                b"\x86R".to_vec(),
            ]
            .concat(),
            "unsupported encoding",
        ),
        // Arguments that are not a tuple.
        (
            [global("builtins", "complex"), b"NR".to_vec()].concat(),
            "must be a tuple",
        ),
        // BUILD on a list: there is no state to set.
        (b"]}b".to_vec(), "BUILD on a list"),
        // A dtype never finished by BUILD used as an array's dtype.
        (
            [
                global("numpy._core.multiarray", "_reconstruct"),
                global("numpy", "ndarray"),
                b"K\x00\x85C\x01b\x87R(K\x01K\x01\x85".to_vec(),
                global("numpy", "dtype"),
                short_unicode("f8"),
                b"\x89\x88\x87R\x89C\x08\x00\x00\x00\x00\x00\x00\x00\x00tb".to_vec(),
            ]
            .concat(),
            "before its state was set",
        ),
        // A global left where a value belongs (a builtin type such as
        // `set` is a value, `PyValue::Type`; numpy's callables are not).
        (global("numpy", "dtype"), "leaves a global"),
    ];
    for (body, expected) in cases {
        let (message, _) = refuse(&p4(&body));
        assert!(
            message.contains(expected),
            "expected {expected:?}: {message}"
        );
    }
}

/// `_reconstruct(ndarray, (0,), b'b')` BUILD `(1, shape, dtype(type), False, data)`.
fn array_pickle(shape: &[u32], type_str: &str, state: &[u8], data: &[u8]) -> Vec<u8> {
    let mut body = [
        short_unicode("numpy._core.multiarray"),
        short_unicode("_reconstruct"),
        vec![0x93],
        short_unicode("numpy"),
        short_unicode("ndarray"),
        vec![0x93],
        b"K\x00\x85C\x01b\x87R(K\x01(".to_vec(),
    ]
    .concat();
    for dim in shape {
        body.push(b'J');
        body.extend_from_slice(&dim.to_le_bytes());
    }
    body.extend_from_slice(b"t");
    body.extend([short_unicode("numpy"), short_unicode("dtype"), vec![0x93]].concat());
    body.extend(short_unicode(type_str));
    body.extend_from_slice(b"\x89\x88\x87R");
    body.extend_from_slice(state);
    body.extend_from_slice(b"b\x89");
    body.extend_from_slice(data);
    body.extend_from_slice(b"tb");
    p4(&body)
}

const F8_STATE: &[u8] = b"(K\x03\x8c\x01<NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t";
const O8_STATE: &[u8] = b"(K\x03\x8c\x01|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x3ft";

#[test]
fn arrays_whose_data_does_not_match_their_shape_are_refused_before_allocating() {
    // A billion float64 elements claimed, 8 bytes given.
    let bytes = array_pickle(
        &[1_000_000_000],
        "f8",
        F8_STATE,
        b"C\x08\x00\x00\x00\x00\x00\x00\x00\x00",
    );
    let (message, cost) = refuse(&bytes);
    assert!(
        message.contains("needs 8000000000 bytes of data, the pickle has 8"),
        "{message}"
    );
    assert!(cost.peak_bytes < small_multiple(bytes.len()), "{cost:?}");
    // A shape whose size overflows.
    let bytes = array_pickle(&[0x7fff_ffff; 4], "f8", F8_STATE, b"C\x00");
    let (message, _) = refuse(&bytes);
    assert!(message.contains("array is too big"), "{message}");
    // An object array whose list is shorter than its shape.
    let bytes = array_pickle(&[3], "O8", O8_STATE, b"](NNe");
    let (message, _) = refuse(&bytes);
    assert!(message.contains("holds 2 items"), "{message}");
    // Negative dimension.
    let bytes = array_pickle(&[u32::MAX], "f8", F8_STATE, b"C\x00");
    let (message, _) = refuse(&bytes);
    assert!(message.contains("negative dimensions"), "{message}");
    // The same pickle with matching data decodes (the cases above fail for
    // the reason given, not for a malformed pickle).
    let good = array_pickle(
        &[1],
        "f8",
        F8_STATE,
        b"C\x08\x00\x00\x00\x00\x00\x00\xf8\x3f",
    );
    let value = pickle::loads(&good, &PickleOptions::default()).unwrap();
    let PyValue::Array(array) = value else {
        panic!("{value:?}")
    };
    assert_eq!(array.view::<f64>().unwrap().to_vec(), [1.5]);
}

#[test]
fn memo_abuse_is_refused() {
    // Getting what was never put.
    for body in [&b"h\x05"[..], b"j\xff\xff\xff\xff", b"N\x94h\x01"] {
        let (message, _) = refuse(&p4(body));
        assert!(message.contains("memo value not found"), "{message}");
    }
    // Puts at scattered huge indices cost memory per put, not per index.
    let mut body = b"N".to_vec();
    for i in 0..10_000u32 {
        body.push(b'r');
        body.extend_from_slice(&(i.wrapping_mul(2_654_435_761) | 0x8000_0000).to_le_bytes());
    }
    body.extend_from_slice(b"j\x00\x00\x00\x80");
    let bytes = p4(&body);
    let (result, cost) = measure(|| pickle::loads(&bytes, &PickleOptions::default()));
    assert_eq!(result.unwrap(), PyValue::None);
    assert!(cost.peak_bytes < small_multiple(bytes.len()), "{cost:?}");
}

#[test]
fn shared_objects_cannot_expand_without_bound() {
    // "Billion laughs": each level is a list of ten references to the
    // previous one; 30 levels would expand to 10^30 values.
    let mut body = b"]K\x00a\x94".to_vec(); // memo 0: [0]
    for level in 1..30u32 {
        body.extend_from_slice(b"](");
        for _ in 0..10 {
            body.push(b'j');
            body.extend_from_slice(&(level - 1).to_le_bytes());
        }
        body.extend_from_slice(b"e\x94");
    }
    let bytes = p4(&body);
    let (message, cost) = refuse(&bytes);
    assert!(message.contains("times the pickle's size"), "{message}");
    assert!(cost.peak_bytes < small_multiple(bytes.len()), "{cost:?}");
    // Raising the limit is the trusting caller's choice, and it still stops.
    let options = PickleOptions {
        max_expansion: 1000,
        ..PickleOptions::default()
    };
    let error = pickle::loads(&bytes, &options).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("would take more than 1000 times the pickle's size"),
        "{error}"
    );
}

#[test]
fn deep_nesting_is_refused_without_recursion() {
    let depth = 100_000;
    let lists = p4(&[b"](".repeat(depth), b"N".to_vec(), b"e".repeat(depth)].concat());
    let tuples = p4(&[b"(".repeat(depth), b"N".to_vec(), b"t".repeat(depth)].concat());
    let dicts = p4(&[b"}(K\x00".repeat(depth), b"N".to_vec(), b"u".repeat(depth)].concat());
    let sets = p4(&[b"(".repeat(depth), b")".to_vec(), b"\x91".repeat(depth)].concat());
    for bytes in [lists, tuples, dicts, sets] {
        let (message, cost) = refuse(&bytes);
        assert!(
            message.contains("nested deeper than 1000 levels"),
            "{message}"
        );
        assert!(cost.peak_bytes < small_multiple(bytes.len()), "{cost:?}");
    }
    // A list that holds itself is infinitely deep.
    let (message, _) = refuse(&p4(b"]\x94h\x00a"));
    assert!(message.contains("holds itself"), "{message}");
    // At the limit it decodes.
    let ok = p4(&[b"](".repeat(999), b"N".to_vec(), b"e".repeat(999)].concat());
    assert!(pickle::loads(&ok, &PickleOptions::default()).is_ok());
}

#[test]
fn huge_declared_lengths_fail_on_the_bytes_present() {
    let cases: Vec<Vec<u8>> = vec![
        [&[0x8d][..], &u64::MAX.to_le_bytes(), b"abc"].concat(),
        [&[0x8e][..], &(1u64 << 62).to_le_bytes(), b"abc"].concat(),
        [&[0x96][..], &(1u64 << 62).to_le_bytes(), b"abc"].concat(),
        [&[b'X'][..], &u32::MAX.to_le_bytes(), b"abc"].concat(),
        [&[b'B'][..], &u32::MAX.to_le_bytes(), b"abc"].concat(),
        [&[b'T'][..], &i32::MAX.to_le_bytes(), b"abc"].concat(),
        [&[0x8b][..], &i32::MAX.to_le_bytes(), b"abc"].concat(),
        [&[0x95][..], &(1u64 << 60).to_le_bytes(), b"N."].concat(),
    ];
    for body in cases {
        let bytes = [&[0x80, 4][..], &body].concat();
        let (message, cost) = refuse(&bytes);
        assert!(message.contains("truncated"), "{message}");
        assert!(cost.peak_bytes < 1 << 20, "{cost:?}");
        assert!(cost.allocations < 64, "{cost:?}");
    }
    let (message, _) = refuse(&p4(&[&[b'T'][..], &(-1i32).to_le_bytes()].concat()));
    assert!(message.contains("negative byte count"), "{message}");
}

#[test]
fn malformed_streams_are_refused() {
    let cases: &[(&[u8], &str)] = &[
        (b"", "truncated"),
        (b"\x80\x04", "truncated"),
        (b"\x80\x06N.", "unsupported pickle protocol: 6"),
        (b"\x80\x04.", "stack underflow"),
        (b"\x80\x04Na.", "stack underflow"),
        (b"\x80\x04NNa.", "APPEND to a None"),
        (b"\x80\x04(N\x87.", "stack underflow"),
        (b"\x80\x04}(Nu.", "odd number of items"),
        (b"\x80\x041.", "could not find MARK"),
        (b"\x80\x04KzKz\x93.", "STACK_GLOBAL requires str"),
        (b"\x80\x04\x8c\x02\xff\xfe.", "invalid UTF-8"),
        (
            b"\x80\x04\x95\x02\x00\x00\x00\x00\x00\x00\x00X\x05\x00\x00\x00abcde.",
            "exhausted before end of frame",
        ),
        (b"\x80\x02cos\nsys", "truncated"),
        (
            b"\x80\x02cnumpy\x00\nndarray\n.",
            "'numpy\x00.ndarray' is not allowed",
        ),
    ];
    for (bytes, expected) in cases {
        let (message, _) = refuse(bytes);
        assert!(
            message.contains(expected),
            "{bytes:?}: expected {expected:?}: {message}"
        );
    }
    let (message, _) = refuse(b"\x80\x04N.trailing");
    assert!(
        message.contains("8 bytes follow the pickle's STOP"),
        "{message}"
    );
}

/// Python 2 strings follow np.load's `encoding`.
#[test]
fn python_2_strings_follow_the_encoding() {
    let bytes = p4(b"U\x03\xe9t\xe9");
    let mut options = PickleOptions::default();
    let error = pickle::loads(&bytes, &options).unwrap_err();
    // Its own variant: npy-python raises numpy's UnicodeError for it.
    assert!(
        matches!(
            error,
            Error::Python2Str {
                byte: 0xe9,
                index: 0,
                ..
            }
        ),
        "{error:?}"
    );
    let error = error.to_string();
    assert!(
        error.contains("'ascii' codec can't decode byte 0xe9"),
        "{error}"
    );
    options.encoding = pickle::Encoding::Latin1;
    assert_eq!(
        pickle::loads(&bytes, &options).unwrap(),
        PyValue::from("été")
    );
    options.encoding = pickle::Encoding::Bytes;
    assert_eq!(
        pickle::loads(&bytes, &options).unwrap(),
        PyValue::Bytes(b"\xe9t\xe9".to_vec())
    );
}

/// Through a whole file: a header that allows pickles, then a hostile pickle.
#[test]
fn hostile_pickles_in_npy_files_are_refused_by_read_npy() {
    let header = Header::new(DType::Object, Order::C, vec![1]);
    let mut options = ReadOptions::default();
    options.parse.allow_pickle = true;
    let cases: &[(&[u8], &str)] = &[
        (
            b"\x80\x02cposix\nsystem\nX\x02\x00\x00\x00id\x85R.",
            "'posix.system' is not allowed",
        ),
        // A plain list where the header promises an array.
        (b"\x80\x04]N\x85.", "the pickle holds a Python"),
        (b"\x80\x04](Ne.", "holds a Python list"),
    ];
    for (pickle, expected) in cases {
        let file = [header.to_bytes(None).unwrap(), pickle.to_vec()].concat();
        let error = read_npy(file.as_slice(), &options).unwrap_err().to_string();
        assert!(error.contains(expected), "{error}");
        // Without allow_pickle the pickle is never looked at.
        let error = read_npy(file.as_slice(), &ReadOptions::default()).unwrap_err();
        assert!(matches!(error, Error::ObjectDType), "{error}");
    }
}

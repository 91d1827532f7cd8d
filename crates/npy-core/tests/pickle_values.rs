//! `PyValue`: conversions from and to Rust types, Python's repr, and the
//! pickler's round trip through the unpickler (numpy reading what we write is
//! in the workspace's live interop suite).

use npy_core::pickle::{self, PickleOptions, PyValue};
use npy_core::{DType, Header, NpyArray, Order};

fn every_kind() -> Vec<PyValue> {
    let floats = NpyArray::from_objects(
        Header::new(DType::Object, Order::Fortran, vec![2, 3]),
        (0..6).map(PyValue::from).collect(),
    )
    .unwrap();
    vec![
        PyValue::None,
        true.into(),
        0.into(),
        (-1i64).into(),
        i64::MIN.into(),
        u64::MAX.into(),
        (i128::MIN + 1).into(),
        1.5.into(),
        f64::NAN.into(),
        PyValue::Complex(-0.0, 2.0),
        "é\u{1F600}'".into(),
        PyValue::Bytes(b"\x00'\"".to_vec()),
        PyValue::ByteArray(vec![1, 2]),
        PyValue::Tuple(vec![]),
        PyValue::Tuple(vec![1.into()]),
        PyValue::Tuple((0..5).map(PyValue::from).collect()),
        PyValue::List((0..2500).map(PyValue::from).collect()),
        PyValue::Dict(vec![
            ("k".into(), PyValue::List(vec![])),
            (2.into(), PyValue::None),
        ]),
        PyValue::Set(vec![1.into()]),
        PyValue::FrozenSet(vec![]),
        floats.into(),
    ]
}

#[test]
fn every_kind_round_trips_through_the_pickler() {
    let value = PyValue::List(every_kind());
    let bytes = pickle::dumps(&value).unwrap();
    assert_eq!(
        pickle::loads(&bytes, &PickleOptions::default()).unwrap(),
        value
    );
}

#[test]
fn reprs_are_pythons() {
    let expected = [
        "None",
        "True",
        "0",
        "-1",
        "-9223372036854775808",
        "18446744073709551615",
        "-170141183460469231731687303715884105727",
        "1.5",
        "nan",
        "(-0+2j)",
        "\"é\u{1F600}'\"",
        "b'\\x00\\'\"'",
        "bytearray(b'\\x01\\x02')",
        "()",
        "(1,)",
        "(0, 1, 2, 3, 4)",
    ];
    for (value, repr) in every_kind().iter().zip(expected) {
        assert_eq!(value.to_string(), repr);
    }
    let dict = &every_kind()[17];
    assert_eq!(dict.to_string(), "{'k': [], 2: None}");
    assert_eq!(PyValue::Set(vec![]).to_string(), "set()");
    assert_eq!(
        PyValue::FrozenSet(vec![1.into()]).to_string(),
        "frozenset({1})"
    );
}

#[test]
fn ints_are_stored_in_their_smallest_form() {
    assert_eq!(
        PyValue::from(u64::from(u32::MAX)),
        PyValue::Int(i64::from(u32::MAX))
    );
    assert_eq!(
        PyValue::from(1u64 << 63),
        PyValue::BigInt(vec![0, 0, 0, 0, 0, 0, 0, 0x80, 0])
    );
    assert_eq!(PyValue::int_from_le_bytes(&[0xff, 0xff]), PyValue::Int(-1));
    assert_eq!(PyValue::int_from_le_bytes(&[]), PyValue::Int(0));
    assert_eq!(PyValue::Int(-129).int_le_bytes(), Some(vec![0x7f, 0xff]));
}

#[test]
fn conversions_to_rust_types() {
    assert_eq!(i64::try_from(PyValue::Int(-3)).unwrap(), -3);
    assert_eq!(f64::try_from(PyValue::Int(2)).unwrap(), 2.0);
    assert_eq!(String::try_from(PyValue::from("x")).unwrap(), "x");
    assert_eq!(
        Vec::<u8>::try_from(PyValue::ByteArray(vec![7])).unwrap(),
        [7]
    );
    assert!(bool::try_from(PyValue::Bool(true)).unwrap());
    assert_eq!(
        Vec::<PyValue>::try_from(PyValue::from(vec![1, 2])).unwrap(),
        [PyValue::Int(1), PyValue::Int(2)]
    );
    assert_eq!(PyValue::from(None::<i32>), PyValue::None);
    let error = i64::try_from(PyValue::from(1u64 << 63))
        .unwrap_err()
        .to_string();
    assert_eq!(error, "expected an int that fits i64, found a Python int");
    let error = String::try_from(PyValue::None).unwrap_err().to_string();
    assert_eq!(error, "expected a str, found a Python NoneType");
    let array: NpyArray = PyValue::from(
        NpyArray::from_objects(
            Header::new(DType::Object, Order::C, vec![]),
            vec![PyValue::None],
        )
        .unwrap(),
    )
    .try_into()
    .unwrap();
    assert_eq!(array.objects(), Some(&[PyValue::None][..]));
}

#[test]
fn object_arrays_need_one_value_per_element() {
    let header = Header::new(DType::Object, Order::C, vec![2, 2]);
    let error = NpyArray::from_objects(header, vec![PyValue::None]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "an object array of shape (2, 2) holds 4 values, not 1"
    );
    let floats = Header::new(DType::parse("<f8").unwrap(), Order::C, vec![1]);
    assert!(matches!(
        NpyArray::from_objects(floats, vec![PyValue::None]),
        Err(npy_core::Error::TypeMismatch { .. })
    ));
}

/// A value the memo shares is copied to every place that holds it, however
/// many (past any small counter), and the last place gets it too.
#[test]
fn shared_values_reach_every_place_that_holds_them() {
    for copies in [2usize, 255, 256, 300] {
        // ["share", then copies - 1 more references to it]
        let mut body = b"\x80\x04](\x8c\x05share\x94".to_vec();
        body.extend(b"h\x00".repeat(copies - 1));
        body.extend(b"e.");
        let value = pickle::loads(&body, &PickleOptions::default()).unwrap();
        assert_eq!(
            value,
            PyValue::List(vec![PyValue::from("share"); copies]),
            "{copies}"
        );
    }
}

//! `Value` decoding of every dtype kind, and byte-order conversion, against bytes NumPy wrote.

use npy_core::swap::convert_byte_order;
use npy_core::value::{f16_to_f64, x87_to_f64};
use npy_core::{
    ByteOrder, DType, DateTimeUnit, Error, Field, Order, RawView, Scalar, ScalarKind, Structured,
    TimeUnit, Value,
};

fn scalar(kind: ScalarKind, byte_order: ByteOrder, itemsize: usize) -> DType {
    DType::Scalar(Scalar {
        kind,
        byte_order,
        itemsize,
    })
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn decode(dtype: &DType, hex_bytes: &str) -> Value {
    Value::decode(dtype, &hex(hex_bytes)).unwrap()
}

#[test]
fn half_floats_decode_exactly() {
    // np.array(v, '<f2').tobytes().hex() and float(np.float16(v))
    let f2 = scalar(ScalarKind::Float, ByteOrder::Little, 2);
    assert_eq!(decode(&f2, "003c"), Value::Float(1.0));
    assert_eq!(decode(&f2, "00c1"), Value::Float(-2.5));
    assert_eq!(decode(&f2, "662e"), Value::Float(0.0999755859375));
    assert_eq!(decode(&f2, "ff7b"), Value::Float(65504.0));
    assert_eq!(decode(&f2, "0100"), Value::Float(5.960464477539063e-08));
    assert_eq!(decode(&f2, "007c"), Value::Float(f64::INFINITY));
    let negative_zero = decode(&f2, "0080").as_f64().unwrap();
    assert!(negative_zero == 0.0 && negative_zero.is_sign_negative());
    assert!(f16_to_f64(0x7e00).is_nan());
    let big = scalar(ScalarKind::Float, ByteOrder::Big, 2);
    assert_eq!(decode(&big, "3c00"), Value::Float(1.0));
}

#[test]
fn x87_long_doubles_decode_best_effort() {
    // np.array(np.longdouble(v)).tobytes() on x86-64: 10 significant bytes + 6 padding.
    let g = scalar(ScalarKind::Float, ByteOrder::Little, 16);
    let cases = [
        ("00000000000000a00040", 2.5),
        ("2dddac0340e421bfe3c3", -1e300),
        ("c005384f86733d9c170c", 0.0),
        ("618c55fe2383bad1e673", f64::INFINITY),
        ("35c26821a2da0fc90040", std::f64::consts::PI),
    ];
    for (bytes, expected) in cases {
        let mut raw = hex(bytes);
        raw.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef, 0x7f, 0]); // garbage padding
        let value = Value::decode(&g, &raw).unwrap();
        assert_eq!(
            value,
            Value::LongDouble(raw.clone(), Some(expected)),
            "{bytes}"
        );
        assert_eq!(x87_to_f64(raw[..10].try_into().unwrap()), expected);
    }
    // Infinity with the integer bit only, and a NaN.
    assert!(x87_to_f64(&hex("0000000000000080ff7f").try_into().unwrap()).is_infinite());
    assert!(x87_to_f64(&hex("0000000000000040ff7f").try_into().unwrap()).is_nan());
    // Big-endian long doubles have no known format.
    let big = scalar(ScalarKind::Float, ByteOrder::Big, 16);
    assert!(matches!(
        Value::decode(&big, &[0; 16]).unwrap(),
        Value::LongDouble(_, None)
    ));
    assert_eq!(
        Value::LongDouble(vec![0xab], None).to_string(),
        "longdouble(0xab)"
    );
}

#[test]
fn integers_bools_and_complex() {
    let i2 = scalar(ScalarKind::Int, ByteOrder::Big, 2);
    assert_eq!(decode(&i2, "fffe"), Value::Int(-2));
    let i1 = scalar(ScalarKind::Int, ByteOrder::NotApplicable, 1);
    assert_eq!(decode(&i1, "80"), Value::Int(-128));
    let u8_ = scalar(ScalarKind::UInt, ByteOrder::Little, 8);
    assert_eq!(decode(&u8_, "ffffffffffffffff"), Value::UInt(u64::MAX));
    let b1 = scalar(ScalarKind::Bool, ByteOrder::NotApplicable, 1);
    assert_eq!(decode(&b1, "00"), Value::Bool(false));
    assert_eq!(decode(&b1, "02"), Value::Bool(true));
    // np.array([1+2j], '>c8').tobytes()
    let c8 = scalar(ScalarKind::Complex, ByteOrder::Big, 8);
    let z = decode(&c8, "3f80000040000000");
    assert_eq!(z, Value::Complex(1.0, 2.0));
    assert_eq!(z.to_string(), "(1+2j)");
    assert_eq!(Value::Complex(-0.5, -3.0).to_string(), "(-0.5-3j)");
    assert_eq!(Value::Complex(1.0, f64::NAN).to_string(), "(1+nanj)");
    assert_eq!(decode(&i2, "fffe").as_f64(), Some(-2.0));
}

#[test]
fn strings_strip_trailing_nuls() {
    // np.array(['hé', '', 'a\x00b'], '<U3').tobytes()
    let u3 = scalar(ScalarKind::Unicode, ByteOrder::Little, 12);
    let data = hex("68000000e900000000000000000000000000000000000000610000000000000062000000");
    let values: Vec<Value> = data
        .chunks(12)
        .map(|c| Value::decode(&u3, c).unwrap())
        .collect();
    assert_eq!(
        values,
        [
            Value::Str("hé".into()),
            Value::Str(String::new()),
            Value::Str("a\0b".into())
        ]
    );
    let big = scalar(ScalarKind::Unicode, ByteOrder::Big, 8);
    assert_eq!(decode(&big, "00000068000000e9"), Value::Str("hé".into()));
    assert_eq!(
        decode(&big, "0000006800110000"),
        Value::Str("h\u{fffd}".into())
    );
    let s4 = scalar(ScalarKind::Bytes, ByteOrder::NotApplicable, 4);
    let bytes = Value::decode(&s4, b"a\0b\0").unwrap();
    assert_eq!(bytes, Value::Bytes(b"a\0b".to_vec()));
    assert_eq!(bytes.to_string(), r"b'a\x00b'");
    assert_eq!(Value::Bytes(b"it's".to_vec()).to_string(), r#"b"it's""#);
    assert_eq!(Value::Str("a'b\"".into()).to_string(), r#"'a\'b"'"#);
    let v2 = scalar(ScalarKind::Void, ByteOrder::NotApplicable, 2);
    assert_eq!(decode(&v2, "0100"), Value::Void(vec![1, 0]));
}

fn unit(unit: TimeUnit, multiple: u32) -> Option<DateTimeUnit> {
    Some(DateTimeUnit { unit, multiple })
}

#[test]
fn datetimes_and_timedeltas() {
    let m8 = |u| scalar(ScalarKind::DateTime(u), ByteOrder::Little, 8);
    let at = |u, ticks: i64| Value::decode(&m8(u), &ticks.to_le_bytes()).unwrap();
    let nat = at(unit(TimeUnit::Second, 1), i64::MIN);
    assert_eq!(nat, Value::DateTime(None, unit(TimeUnit::Second, 1)));
    assert_eq!(nat.to_string(), "NaT");
    // str(np.datetime64(ticks, unit))
    let cases = [
        (TimeUnit::Second, 1, 1_700_000_000, "2023-11-14T22:13:20"),
        (TimeUnit::Millisecond, 1, -1, "1969-12-31T23:59:59.999"),
        (TimeUnit::Day, 1, 19_000, "2022-01-08"),
        (TimeUnit::Month, 1, -13, "1968-12"),
        (TimeUnit::Year, 1, 54, "2024"),
        (TimeUnit::Week, 1, 1, "1970-01-08"),
        (TimeUnit::Hour, 1, 5, "1970-01-01T05"),
        (TimeUnit::Minute, 1, 61, "1970-01-01T01:01"),
        (TimeUnit::Microsecond, 1, 1, "1970-01-01T00:00:00.000001"),
        (
            TimeUnit::Picosecond,
            1,
            1500,
            "1970-01-01T00:00:00.000000001500",
        ),
        (TimeUnit::Nanosecond, 1, -1, "1969-12-31T23:59:59.999999999"),
        (
            TimeUnit::Second,
            1,
            -86_400 * 365 * 3000,
            "-1029-12-29T00:00:00",
        ),
        (TimeUnit::Second, 10, 3, "1970-01-01T00:00:30"),
    ];
    for (u, multiple, ticks, expected) in cases {
        let value = at(unit(u, multiple), ticks);
        assert_eq!(value, Value::DateTime(Some(ticks), unit(u, multiple)));
        assert_eq!(value.to_string(), expected, "{u:?} {ticks}");
    }
    let m8_big = scalar(
        ScalarKind::TimeDelta(unit(TimeUnit::Second, 10)),
        ByteOrder::Big,
        8,
    );
    let delta = Value::decode(&m8_big, &3i64.to_be_bytes()).unwrap();
    assert_eq!(delta, Value::TimeDelta(Some(3), unit(TimeUnit::Second, 10)));
    assert_eq!(delta.to_string(), "30 seconds");
    assert_eq!(at(None, 5).to_string(), "5");
}

#[test]
fn floats_print_like_python() {
    for (x, text) in [
        (1.0, "1.0"),
        (0.1, "0.1"),
        (1e-7, "1e-07"),
        (1e16, "1e+16"),
        (-2.5e-300, "-2.5e-300"),
        (f64::NAN, "nan"),
        (f64::NEG_INFINITY, "-inf"),
    ] {
        assert_eq!(Value::Float(x).to_string(), text);
    }
    assert_eq!(Value::Bool(true).to_string(), "True");
}

fn records_dtype() -> DType {
    // [('a', '<i4'), ('b', '>f8', (2,)), ('', '|V2'), ('c', [('d', '|S2')])]
    DType::Structured(Structured {
        fields: vec![
            Field {
                name: "a".into(),
                title: None,
                dtype: scalar(ScalarKind::Int, ByteOrder::Little, 4),
                offset: 0,
            },
            Field {
                name: "b".into(),
                title: None,
                dtype: DType::SubArray(
                    Box::new(scalar(ScalarKind::Float, ByteOrder::Big, 8)),
                    vec![2],
                ),
                offset: 4,
            },
            Field {
                name: "c".into(),
                title: None,
                dtype: DType::Structured(Structured {
                    fields: vec![Field {
                        name: "d".into(),
                        title: None,
                        dtype: scalar(ScalarKind::Bytes, ByteOrder::NotApplicable, 2),
                        offset: 0,
                    }],
                    itemsize: 2,
                }),
                offset: 22,
            },
        ],
        itemsize: 24,
    })
}

fn record_bytes() -> Vec<u8> {
    let mut data = Vec::new();
    data.extend_from_slice(&7i32.to_le_bytes());
    data.extend_from_slice(&1.5f64.to_be_bytes());
    data.extend_from_slice(&(-2.0f64).to_be_bytes());
    data.extend_from_slice(&[0xee, 0xee]); // padding
    data.extend_from_slice(b"x\0");
    data
}

#[test]
fn records_and_subarrays_decode_recursively() {
    let dtype = records_dtype();
    let value = Value::decode(&dtype, &record_bytes()).unwrap();
    assert_eq!(
        value,
        Value::Record(vec![
            ("a".into(), Value::Int(7)),
            (
                "b".into(),
                Value::SubArray(vec![2], vec![Value::Float(1.5), Value::Float(-2.0)])
            ),
            (
                "c".into(),
                Value::Record(vec![("d".into(), Value::Bytes(b"x".to_vec()))])
            ),
        ])
    );
    assert_eq!(value.to_string(), "(7, [1.5, -2.0], (b'x',))");
    let bytes = record_bytes();
    let view = RawView::new(&bytes, &dtype, &[], Order::C).unwrap();
    assert_eq!(view.get([]).unwrap().value().unwrap(), value);
    assert!(matches!(
        Value::decode(&dtype, &[0; 23]),
        Err(Error::DataLength {
            expected: 24,
            actual: 23
        })
    ));
    let grid = Value::SubArray(vec![2, 2], (1..=4).map(Value::Int).collect());
    assert_eq!(grid.to_string(), "[[1, 2], [3, 4]]");
}

#[test]
fn byte_swapping_round_trips_every_kind() {
    let dtype = records_dtype();
    let original = record_bytes();
    let mut data = [original.clone(), original.clone()].concat();
    let big = convert_byte_order(&dtype, &mut data, ByteOrder::Big);
    assert_eq!(big, dtype.with_byte_order(ByteOrder::Big));
    // 'a' swapped, 'b' already big, padding and bytes untouched.
    assert_eq!(data[..4], 7i32.to_be_bytes());
    assert_eq!(data[4..22], original[4..22]);
    assert_eq!(data[22..24], original[22..24]);
    assert_eq!(
        Value::decode(&big, &data[24..]).unwrap(),
        Value::decode(&dtype, &original).unwrap()
    );
    let little = convert_byte_order(&big, &mut data, ByteOrder::Little);
    assert_eq!(little, dtype.with_byte_order(ByteOrder::Little));
    assert_eq!(data[..4], original[..4]);
    assert_eq!(data[4..12], 1.5f64.to_le_bytes());

    // Complex swaps its halves separately; U swaps each code unit.
    let c8 = scalar(ScalarKind::Complex, ByteOrder::Big, 8);
    let mut z = hex("3f80000040000000");
    let c8_le = convert_byte_order(&c8, &mut z, ByteOrder::Little);
    assert_eq!(z, hex("0000803f00000040"));
    assert_eq!(Value::decode(&c8_le, &z).unwrap(), Value::Complex(1.0, 2.0));
    let u2 = scalar(ScalarKind::Unicode, ByteOrder::Big, 8);
    let mut text = hex("00000068000000e9");
    let u2_le = convert_byte_order(&u2, &mut text, ByteOrder::Little);
    assert_eq!(text, hex("68000000e9000000"));
    assert_eq!(
        Value::decode(&u2_le, &text).unwrap(),
        Value::Str("hé".into())
    );

    // Bool, S and V have no byte order.
    let s3 = scalar(ScalarKind::Bytes, ByteOrder::NotApplicable, 3);
    let mut raw = *b"abc";
    assert_eq!(convert_byte_order(&s3, &mut raw, ByteOrder::Big), s3);
    assert_eq!(&raw, b"abc");

    // Plain numbers in bulk, with a partial trailing element left alone.
    let i4 = scalar(ScalarKind::Int, ByteOrder::Little, 4);
    let mut numbers: Vec<u8> = (0..10u8).collect();
    convert_byte_order(&i4, &mut numbers, ByteOrder::Big);
    assert_eq!(numbers, [3, 2, 1, 0, 7, 6, 5, 4, 8, 9]);
}

#[test]
fn subarray_of_records_swaps_each_item() {
    let pair = DType::Structured(Structured {
        fields: vec![
            Field {
                name: "x".into(),
                title: None,
                dtype: scalar(ScalarKind::UInt, ByteOrder::Little, 2),
                offset: 0,
            },
            Field {
                name: "y".into(),
                title: None,
                dtype: scalar(ScalarKind::UInt, ByteOrder::NotApplicable, 1),
                offset: 2,
            },
        ],
        itemsize: 3,
    });
    let dtype = DType::SubArray(Box::new(pair), vec![2]);
    let mut data = vec![1, 2, 3, 4, 5, 6];
    convert_byte_order(&dtype, &mut data, ByteOrder::Big);
    assert_eq!(data, [2, 1, 3, 5, 4, 6]);
}

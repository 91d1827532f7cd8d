//! Header parsing and encoding, checked against bytes written by NumPy 2.4.6
//! (CPython 3.11) and against NumPy's reader behaviour.

use npy_core::{
    ByteOrder, DType, Error, Field, Header, Order, ParseOptions, ParsedHeader, Preamble, Scalar,
    ScalarKind, Structured, Version,
};

/// A header as NumPy lays it out: prefix, dict text, `spaces` spaces, newline.
fn numpy_bytes(prefix: &[u8], text: &[u8], spaces: usize) -> Vec<u8> {
    let mut out = prefix.to_vec();
    out.extend_from_slice(text);
    out.extend(std::iter::repeat_n(b' ', spaces));
    out.push(b'\n');
    out
}

/// A version 1.0 file prefix around `text` (no padding), for reader tests.
fn v1(text: &str) -> Vec<u8> {
    let latin1: Vec<u8> = text
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap())
        .collect();
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&u16::try_from(latin1.len()).unwrap().to_le_bytes());
    out.extend_from_slice(&latin1);
    out
}

/// A version 3.0 file prefix around `text` (no padding).
fn v3(text: &str) -> Vec<u8> {
    let mut out = b"\x93NUMPY\x03\x00".to_vec();
    out.extend_from_slice(&u32::try_from(text.len()).unwrap().to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out
}

fn parse(bytes: &[u8]) -> Result<ParsedHeader, Error> {
    Header::parse(bytes, &ParseOptions::default())
}

/// The error's message and its causes', `outer: inner` (a message never
/// repeats its cause: the cause is the source).
fn parse_err(bytes: &[u8]) -> String {
    let error = parse(bytes).expect_err("must be rejected");
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(&error);
    while let Some(inner) = cause {
        text.push_str(&format!(": {inner}"));
        cause = inner.source();
    }
    text
}

fn f8() -> DType {
    DType::Scalar(Scalar::new(ScalarKind::Float, ByteOrder::Little, 8))
}

fn dict(descr: &str, fortran: &str, shape: &str) -> String {
    format!("{{'descr': {descr}, 'fortran_order': {fortran}, 'shape': {shape}, }}")
}

/// Checks that `header` encodes to exactly `expected` and that `expected`
/// parses back to `header`, through both the slice and the stream reader.
fn assert_numpy_bytes(header: &Header, version: Option<Version>, expected: &[u8]) {
    assert_eq!(
        String::from_utf8_lossy(&header.to_bytes(version).unwrap()),
        String::from_utf8_lossy(expected)
    );
    let options = ParseOptions {
        max_header_size: 1 << 20,
        ..Default::default()
    };
    let npy_core::ParsedHeader {
        header: parsed,
        layout,
    } = Header::parse(expected, &options).unwrap();
    assert_eq!(&parsed, header);
    assert_eq!(layout.data_offset, expected.len());
    assert_eq!(
        layout.header_len,
        expected.len() - layout.version.prefix_len()
    );
    let npy_core::ParsedHeader {
        header: streamed, ..
    } = Header::read_from(&mut &expected[..], &options).unwrap();
    assert_eq!(&streamed, header);
}

// ---------------------------------------------------------------- writing

#[test]
fn c_order_matches_numpy() {
    // np.save(b, np.zeros((3,4)))
    let expected = numpy_bytes(
        b"\x93NUMPY\x01\x00v\x00",
        b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }",
        58,
    );
    assert_numpy_bytes(&Header::new(f8(), Order::C, vec![3, 4]), None, &expected);
}

#[test]
fn fortran_order_grows_along_the_last_axis() {
    // np.save(b, np.asfortranarray(np.zeros((3,4))))
    let expected = numpy_bytes(
        b"\x93NUMPY\x01\x00v\x00",
        b"{'descr': '<f8', 'fortran_order': True, 'shape': (3, 4), }",
        59,
    );
    assert_numpy_bytes(
        &Header::new(f8(), Order::Fortran, vec![3, 4]),
        None,
        &expected,
    );
    // The growth padding follows the last axis: a long last axis eats it.
    let long_last = Header::new(f8(), Order::Fortran, vec![3, 10_000_000_000]);
    let long_first = Header::new(f8(), Order::Fortran, vec![10_000_000_000, 3]);
    assert_eq!(long_last.to_bytes(None).unwrap().len(), 128);
    let text_len = |h: &Header| {
        let b = h.to_bytes(None).unwrap();
        b.iter().rposition(|&c| c == b'}').unwrap()
    };
    assert_eq!(text_len(&long_last), text_len(&long_first));
}

#[test]
fn zero_d_has_no_growth_padding() {
    // np.save(b, np.float64(1.5))
    let expected = numpy_bytes(
        b"\x93NUMPY\x01\x00v\x00",
        b"{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
        62,
    );
    assert_numpy_bytes(&Header::new(f8(), Order::C, vec![]), None, &expected);
}

#[test]
fn forced_versions_match_numpy() {
    let header = Header::new(f8(), Order::C, vec![3]);
    let text = b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
    // np.lib.format.write_array(b, np.zeros(3), version=(2,0))
    let expected = numpy_bytes(b"\x93NUMPY\x02\x00t\x00\x00\x00", text, 58);
    assert_numpy_bytes(&header, Some(Version::V2), &expected);
    // np.lib.format.write_array(b, np.zeros(3), version=(3,0))
    let expected = numpy_bytes(b"\x93NUMPY\x03\x00t\x00\x00\x00", text, 58);
    assert_numpy_bytes(&header, Some(Version::V3), &expected);
}

#[test]
fn cjk_field_name_picks_version_3() {
    // np.save(b, np.zeros(2, dtype=[('中文', '<f4')]))
    let expected = numpy_bytes(
        b"\x93NUMPY\x03\x00t\x00\x00\x00",
        "{'descr': [('中文', '<f4')], 'fortran_order': False, 'shape': (2,), }".as_bytes(),
        44,
    );
    let dtype = DType::parse("[('中文', '<f4')]").unwrap();
    let header = Header::new(dtype, Order::C, vec![2]);
    assert_numpy_bytes(&header, None, &expected);
    // Versions 1.0 and 2.0 are latin-1: they cannot hold it.
    let err = header.to_bytes(Some(Version::V1)).unwrap_err();
    assert!(
        matches!(err, Error::HeaderNotLatin1 { version: "(1, 0)" }),
        "{err}"
    );
    assert!(matches!(
        header.to_bytes(Some(Version::V2)),
        Err(npy_core::Error::HeaderNotLatin1 { .. })
    ));
}

#[test]
fn cafe_stays_version_1_in_latin_1() {
    // np.save(b, np.zeros(2, dtype=[('café', '<i4')])): byte 0xE9, not UTF-8.
    let expected = numpy_bytes(
        b"\x93NUMPY\x01\x00v\x00",
        b"{'descr': [('caf\xe9', '<i4')], 'fortran_order': False, 'shape': (2,), }",
        48,
    );
    let header = Header::new(
        DType::parse("[('café', '<i4')]").unwrap(),
        Order::C,
        vec![2],
    );
    assert_numpy_bytes(&header, None, &expected);
}

#[test]
fn aligned_record_padding_matches_numpy() {
    // np.save(b, np.zeros(2, dtype=np.dtype([('a','u1'),('b','<i8'),('c','u1')], align=True)))
    let expected = numpy_bytes(
        b"\x93NUMPY\x01\x00\xb6\x00",
        b"{'descr': [('a', '|u1'), ('', '|V7'), ('b', '<i8'), ('c', '|u1'), ('', '|V7')], \
          'fortran_order': False, 'shape': (2,), }",
        61,
    );
    let u1 = DType::Scalar(Scalar::new(ScalarKind::UInt, ByteOrder::NotApplicable, 1));
    let i8 = DType::Scalar(Scalar::new(ScalarKind::Int, ByteOrder::Little, 8));
    let field = |name: &str, dtype: &DType, offset| Field {
        name: name.into(),
        title: None,
        dtype: dtype.clone(),
        offset,
    };
    let record = DType::Structured(Structured {
        fields: vec![field("a", &u1, 0), field("b", &i8, 8), field("c", &u1, 16)],
        itemsize: 24,
    });
    assert_numpy_bytes(&Header::new(record, Order::C, vec![2]), None, &expected);
}

#[test]
fn quoting_and_escapes_match_python_repr() {
    // np.save(b, np.zeros(1, dtype=[("it's", '<i2'), ('a"b\'c', '>u4'), ('x\u200b', '|b1')]))
    let expected = numpy_bytes(
        b"\x93NUMPY\x01\x00\xb6\x00",
        br#"{'descr': [("it's", '<i2'), ('a"b\'c', '>u4'), ('x\u200b', '|b1')], 'fortran_order': False, 'shape': (1,), }"#,
        73,
    );
    let dtype =
        DType::parse(r#"[("it's", '<i2'), ('a"b\'c', '>u4'), ('x\u200b', '|b1')]"#).unwrap();
    let DType::Structured(record) = &dtype else {
        panic!("not a record")
    };
    assert_eq!(record.fields[1].name, "a\"b'c");
    assert_eq!(record.fields[2].name, "x\u{200b}");
    assert_numpy_bytes(&Header::new(dtype, Order::C, vec![1]), None, &expected);
}

#[test]
fn datetime_and_zero_size_shapes_match_numpy() {
    // np.save(b, np.zeros(4, dtype='>M8[10s]'))
    let expected = numpy_bytes(
        b"\x93NUMPY\x01\x00v\x00",
        b"{'descr': '>M8[10s]', 'fortran_order': False, 'shape': (4,), }",
        55,
    );
    assert_numpy_bytes(
        &Header::new(DType::parse("'>M8[10s]'").unwrap(), Order::C, vec![4]),
        None,
        &expected,
    );
    // np.save(b, np.zeros((2**40, 0)))
    let expected = numpy_bytes(
        b"\x93NUMPY\x01\x00v\x00",
        b"{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776, 0), }",
        46,
    );
    let header = Header::new(f8(), Order::C, vec![1 << 40, 0]);
    assert_numpy_bytes(&header, None, &expected);
    assert_eq!(header.element_count().unwrap(), 0);
    assert_eq!(header.data_len().unwrap(), 0);
}

#[test]
fn growth_axis_boundary_128_to_192() {
    // for n in (31, 32): write_array_header_1_0 of [('f'*n, '<f8')] with shape
    // (1,) and (10**20,) gives 128 and 192 bytes: the 1..64 padding rule adds
    // a full 64 when the text already ends on the boundary.
    for (name_len, expected) in [(31, 128), (32, 192)] {
        let dtype = DType::parse(&format!("[('{}', '<f8')]", "f".repeat(name_len))).unwrap();
        for first_dim in [1, 9, 10, 1_000_000_000_000_000_000] {
            let bytes = Header::new(dtype.clone(), Order::C, vec![first_dim])
                .to_bytes(None)
                .unwrap();
            assert_eq!(bytes.len(), expected, "name {name_len}, dim {first_dim}");
            assert!(bytes.ends_with(b" \n"));
        }
    }
}

#[test]
fn long_headers_switch_to_version_2() {
    // d = np.dtype([('n%04d_%s' % (i, 'x'*90), '<i4') for i in range(700)])
    // np.save(b, np.zeros(3, d)) -> b'\x93NUMPY\x02\x00t*\x01\x00', header 76404 bytes
    let fields: Vec<String> = (0..700)
        .map(|i| format!("('n{i:04}_{}', '<i4')", "x".repeat(90)))
        .collect();
    let dtype = DType::parse(&format!("[{}]", fields.join(", "))).unwrap();
    let header = Header::new(dtype, Order::C, vec![3]);
    let bytes = header.to_bytes(None).unwrap();
    assert_eq!(&bytes[..12], b"\x93NUMPY\x02\x00t*\x01\x00");
    assert_eq!(bytes.len(), 76416);
    // NumPy's reader refuses it with the default limit, and so do we.
    let err = parse(&bytes).unwrap_err();
    assert!(
        matches!(
            err,
            Error::HeaderTooLarge {
                length: 76404,
                max: 10000
            }
        ),
        "{err}"
    );
    assert!(err.to_string().starts_with(
        "Header info length (76404) is large and may not be safe to load securely.\n"
    ));
    let big = ParseOptions {
        max_header_size: 76404,
        ..Default::default()
    };
    assert_eq!(Header::parse(&bytes, &big).unwrap().header, header);
}

#[test]
fn version_1_too_long_is_an_error_with_numpys_wording() {
    // _write_array_header(b, {'descr': [('a'*70000,'<i4')], ...}, (1,0))
    // -> ValueError: Header length 70064 too big for version=(1, 0)
    let dtype = DType::parse(&format!("[('{}', '<i4')]", "a".repeat(70000))).unwrap();
    let header = Header::new(dtype, Order::C, vec![]);
    let err = header.to_bytes(Some(Version::V1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Header length 70064 too big for version=(1, 0)"
    );
    assert_eq!(header.to_bytes(None).unwrap()[6], 2);
}

#[test]
fn writing_refuses_what_cannot_be_read_back() {
    let too_big = Header::new(f8(), Order::C, vec![1 << 32, 1 << 32]);
    assert!(matches!(
        too_big.to_bytes(None),
        Err(Error::ArrayTooBig { .. })
    ));
    let too_many_dims = Header::new(f8(), Order::C, vec![1; 65]);
    assert!(matches!(
        too_many_dims.to_bytes(None),
        Err(Error::TooManyDimensions { found: 65, max: 64 })
    ));
    // 64 dimensions are fine (np.save(b, np.zeros((1,)*64)) works).
    assert!(
        Header::new(f8(), Order::C, vec![1; 64])
            .to_bytes(None)
            .is_ok()
    );
    for (kind, itemsize) in [
        (ScalarKind::Int, 3),
        (ScalarKind::Unicode, 5),
        (ScalarKind::DateTime(None), 4),
        (ScalarKind::Float, 1),
    ] {
        let odd = DType::Scalar(Scalar::new(kind, ByteOrder::Little, itemsize));
        let err = Header::new(odd, Order::C, vec![1])
            .to_bytes(None)
            .unwrap_err();
        assert!(matches!(err, Error::InvalidDType { .. }), "{err}");
    }
    let overlapping = DType::Structured(Structured {
        fields: vec![
            Field {
                name: "a".into(),
                title: None,
                dtype: f8(),
                offset: 0,
            },
            Field {
                name: "b".into(),
                title: None,
                dtype: f8(),
                offset: 4,
            },
        ],
        itemsize: 16,
    });
    let err = Header::new(overlapping, Order::C, vec![1])
        .to_bytes(None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "dtype.descr is not defined for types with overlapping or out-of-order fields"
    );
}

// ---------------------------------------------------------------- reading

#[test]
fn python_literal_spellings_numpy_accepts() {
    let expected = |shape: &[usize], order| Header::new(f8(), order, shape.to_vec());
    let cases = [
        (
            r#"{"descr": "<f8", "fortran_order": False, "shape": (3,)}"#,
            expected(&[3], Order::C),
        ),
        (
            "{u'descr': u'<f8', u'fortran_order': False, u'shape': (3,)}",
            expected(&[3], Order::C),
        ),
        (
            "{'shape': (3,), 'descr': '<f8', 'fortran_order': True}",
            expected(&[3], Order::Fortran),
        ),
        (
            "{'descr':'<f8','fortran_order':False,'shape':(0x3,+2,-0)}",
            expected(&[3, 2, 0], Order::C),
        ),
        (
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1_0, 0o7, 0b1,)}",
            expected(&[10, 7, 1], Order::C),
        ),
        (
            "\n{'descr': '<f8', # comment\r\n 'fortran_order': False, 'shape': (3,)}\r\n",
            expected(&[3], Order::C),
        ),
        (
            "  {'descr': '<' 'f8', 'fortran_order': False, 'shape': ()}  ",
            expected(&[], Order::C),
        ),
        (
            "{'descr': '<f8', 'fortran_order': False, 'shape': (3,),}",
            expected(&[3], Order::C),
        ),
        (
            "{'descr':'<f8','fortran_order':False,'shape':(3,)}",
            expected(&[3], Order::C),
        ),
        (
            "{'descr': '''<f8''', 'fortran_order': False, 'shape': (\n3,\n)}\t\x0c",
            expected(&[3], Order::C),
        ),
    ];
    for (text, header) in cases {
        assert_eq!(parse(&v1(text)).unwrap().header, header, "{text:?}");
        assert_eq!(parse(&v3(text)).unwrap().header, header, "{text:?}");
    }
}

#[test]
fn python_2_long_suffix_only_in_versions_1_and_2() {
    let text = "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L)}";
    assert_eq!(parse(&v1(text)).unwrap().header.shape, [2, 3]);
    // NumPy: ValueError: Cannot parse header: "{'descr': ... (2L, 3L)}"
    let err = parse_err(&v3(text));
    assert!(
        err.starts_with(
            r#"Cannot parse header: "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L)}""#
        ),
        "{err}"
    );
}

#[test]
fn the_parse_says_when_a_header_was_written_by_python_2() {
    let old = "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L)}";
    assert!(parse(&v1(old)).unwrap().layout.python2_header);
    // An `L` that reads as it is (a field name, a string) is not Python 2's.
    for text in [
        "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)}",
        "{'descr': [('L', '<i4'), ('aL1', '<f8')], 'fortran_order': False, 'shape': (4,)}",
    ] {
        assert!(!parse(&v1(text)).unwrap().layout.python2_header, "{text}");
    }
}

#[test]
fn legacy_layouts_are_read() {
    // 16-byte alignment (pre-1.14), no newline, no padding, CRLF.
    let text = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
    for tail in ["", "\n", "   \r\n", &" ".repeat(11)] {
        let bytes = v1(&format!("{text}{tail}"));
        let ParsedHeader { header, layout } = parse(&bytes).unwrap();
        assert_eq!(header.shape, [3]);
        assert_eq!(layout.data_offset, bytes.len());
        assert_eq!(layout.data_len, 24);
    }
}

#[test]
fn latin_1_decoding_for_versions_1_and_2() {
    // UTF-8 bytes in a v1 header are read as latin-1 mojibake, like NumPy.
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let text = "{'descr': [('café', '<i4')], 'fortran_order': False, 'shape': ()}";
    bytes.extend_from_slice(&u16::try_from(text.len()).unwrap().to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
    let DType::Structured(record) = parse(&bytes).unwrap().header.dtype else {
        panic!("not a record")
    };
    assert_eq!(record.fields[0].name, "cafÃ©");
    // Invalid UTF-8 in a v3 header is refused.
    let mut bad = b"\x93NUMPY\x03\x00".to_vec();
    let text = b"{'descr': [('caf\xe9', '<i4')], 'fortran_order': False, 'shape': ()}";
    bad.extend_from_slice(&u32::try_from(text.len()).unwrap().to_le_bytes());
    bad.extend_from_slice(text);
    assert!(matches!(
        parse(&bad),
        Err(Error::HeaderNotUtf8 { valid_up_to: 16 })
    ));
}

#[test]
fn rejections_use_numpys_wording() {
    let ok_descr = "'<f8'";
    let cases = [
        (dict(ok_descr, "False", "(3)"), "shape is not valid: 3"),
        (dict(ok_descr, "False", "[3]"), "shape is not valid: [3]"),
        (
            dict(ok_descr, "False", "(3.0,)"),
            "shape is not valid: (3.0,)",
        ),
        (
            dict(ok_descr, "False", "((3,),)"),
            "shape is not valid: ((3,),)",
        ),
        (dict(ok_descr, "False", "None"), "shape is not valid: None"),
        (
            dict(ok_descr, "0", "(3,)"),
            "fortran_order is not a valid bool: 0",
        ),
        (
            dict(ok_descr, "None", "(3,)"),
            "fortran_order is not a valid bool: None",
        ),
        (
            dict(ok_descr, "'False'", "(3,)"),
            "fortran_order is not a valid bool: 'False'",
        ),
        (
            "{'descr': '<f8', 'shape': (3,)}".into(),
            "Header does not contain the correct keys: ['descr', 'shape']",
        ),
        (
            "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'extra': 1}".into(),
            "Header does not contain the correct keys: ['descr', 'extra', 'fortran_order', 'shape']",
        ),
        (
            "{'shape': (3,), 'fortran_order': False, 'shape': (3,)}".into(),
            "Header does not contain the correct keys: ['fortran_order', 'shape']",
        ),
        (
            "['descr', 'fortran_order', 'shape']".into(),
            "Header is not a dictionary: ['descr', 'fortran_order', 'shape']",
        ),
        (
            dict("'xyz'", "False", "(3,)"),
            "descr is not a valid dtype descriptor: 'xyz': data type 'xyz' not understood",
        ),
        (
            dict("[('a', '<i4'), ('a', '<f8')]", "False", "(3,)"),
            "descr is not a valid dtype descriptor: [('a', '<i4'), ('a', '<f8')]: \
             invalid dtype: name already used as a name or title: ('a', '<f8')",
        ),
        (
            dict("[(1, '<i4')]", "False", "(3,)"),
            "descr is not a valid dtype descriptor: [(1, '<i4')]: \
             invalid dtype: field names must be strings: (1, '<i4')",
        ),
        (
            dict("5", "False", "(3,)"),
            "descr is not a valid dtype descriptor: 5: invalid dtype: a descr is a string, \
             a (base, shape) tuple or a list of fields, not 5",
        ),
    ];
    for (text, message) in cases {
        assert_eq!(parse_err(&v1(&text)), message, "{text}");
    }
}

#[test]
fn syntax_errors_report_the_header_and_position() {
    let text = "{'descr': '<f8', 'fortran_order': false, 'shape': (3,)}";
    assert_eq!(
        parse_err(&v1(text)),
        format!("Cannot parse header: \"{text}\" (a name is not a literal at character 34)")
    );
    for bad in [
        "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)} x",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1+1,)}",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}\0",
        "\n {'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
        "{'descr': '<f8', 'fortran_order': False, 'shape': {3}}",
        "",
    ] {
        let err = parse(&v1(bad)).unwrap_err();
        assert!(
            matches!(err, Error::CannotParseHeader { .. }),
            "{bad:?}: {err}"
        );
    }
}

#[test]
fn deliberate_differences_from_numpy() {
    // Duplicate keys: NumPy keeps the last value; we refuse the ambiguity.
    let text = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'descr': '<i4'}";
    assert_eq!(
        parse_err(&v1(text)),
        "Header contains the key 'descr' more than once"
    );
    // Negative and bool dimensions pass NumPy's header check and fail later.
    assert_eq!(
        parse_err(&v1(&dict("'<f8'", "False", "(-1,)"))),
        "shape is not valid: (-1,)"
    );
    assert_eq!(
        parse_err(&v1(&dict("'<f8'", "False", "(True,)"))),
        "shape is not valid: (True,)"
    );
    // Sizes NumPy would wrap around: (2**32, 2**32) has 0 elements in NumPy.
    let err = parse(&v1(&dict("'<f8'", "False", "(4294967296, 4294967296)"))).unwrap_err();
    assert!(matches!(err, Error::ArrayTooBig { .. }), "{err}");
    assert!(err.to_string().starts_with("array is too big;"));
    let err = parse(&v1(&dict("'<f8'", "False", "(2305843009213693952, 4)"))).unwrap_err();
    assert!(matches!(err, Error::ArrayTooBig { .. }), "{err}");
    let err = parse(&v1(&dict("'<f8'", "False", "(0, 18446744073709551616)"))).unwrap_err();
    assert!(matches!(err, Error::InvalidShape { .. }), "{err}");
    // The largest size that fits isize is accepted.
    let ParsedHeader { header: h, layout } =
        parse(&v1(&dict("'|u1'", "False", "(9223372036854775807,)"))).unwrap();
    assert_eq!(h.element_count().unwrap(), isize::MAX as usize);
    assert_eq!(layout.data_len, isize::MAX as usize);
    assert!(matches!(
        parse(&v1(&dict("'<i2'", "False", "(9223372036854775807,)"))),
        Err(npy_core::Error::ArrayTooBig { itemsize: 2, .. })
    ));
}

#[test]
fn object_dtypes_are_refused_anywhere() {
    for descr in [
        "'O'",
        "'|O'",
        "'|O8'",
        "'|O4'",
        "'<O'",
        "'object'",
        "[('a', '|O')]",
        "[('a', '<i4'), ('b', [('c', '|O8')])]",
        "[('a', '|O', (2,))]",
        "('|O', (3,))",
    ] {
        let err = parse(&v1(&dict(descr, "False", "(3,)"))).unwrap_err();
        assert!(matches!(err, Error::ObjectDType), "{descr}: {err}");
        assert!(
            err.to_string()
                .starts_with("Object arrays cannot be loaded when allow_pickle=False"),
        );
    }
}

#[test]
fn preamble_errors_follow_numpy() {
    assert_eq!(
        parse_err(b""),
        "EOF: reading magic string, expected 8 bytes got 0"
    );
    assert_eq!(
        parse_err(b"\x93NUMPY\x01"),
        "EOF: reading magic string, expected 8 bytes got 7"
    );
    assert_eq!(
        parse_err(b"\x93numpy\x01\x00\x10\x00"),
        r"the magic string is not correct; expected b'\x93NUMPY', got b'\x93numpy'"
    );
    for (major, minor) in [(1, 1), (0, 0), (2, 1), (4, 0), (255, 255)] {
        assert_eq!(
            parse_err(&[0x93, b'N', b'U', b'M', b'P', b'Y', major, minor, 0, 0, 0, 0]),
            format!(
                "we only support format version (1,0), (2,0), and (3,0), not ({major}, {minor})"
            )
        );
    }
    assert_eq!(
        parse_err(b"\x93NUMPY\x01\x00\x10"),
        "EOF: reading array header length, expected 2 bytes got 1"
    );
    assert_eq!(
        parse_err(b"\x93NUMPY\x02\x00"),
        "EOF: reading array header length, expected 4 bytes got 0"
    );
    // Zero-size array file cut by one byte: "expected 118 bytes got 117".
    let full = Header::new(f8(), Order::C, vec![0]).to_bytes(None).unwrap();
    assert_eq!(
        parse_err(&full[..full.len() - 1]),
        "EOF: reading array header, expected 118 bytes got 117"
    );
    let err =
        Header::read_from(&mut &full[..full.len() - 1], &ParseOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "EOF: reading array header, expected 118 bytes got 117"
    );
}

#[test]
fn preamble_from_a_12_byte_read() {
    let file = Header::new(f8(), Order::C, vec![5])
        .to_bytes(Some(Version::V1))
        .unwrap();
    let preamble = Preamble::parse(&file[..Preamble::MAX_LEN]).unwrap();
    assert_eq!(preamble.version, Version::V1);
    assert_eq!(preamble.prefix_len(), 10);
    assert_eq!(preamble.data_offset(), 128);
    preamble.check_size(&ParseOptions::default()).unwrap();
    let file = Header::new(f8(), Order::C, vec![5])
        .to_bytes(Some(Version::V3))
        .unwrap();
    let preamble = Preamble::parse(&file[..Preamble::MAX_LEN]).unwrap();
    assert_eq!(
        (preamble.version, preamble.header_len, preamble.prefix_len()),
        (Version::V3, 116, 12)
    );
}

#[test]
fn header_size_limit_counts_characters_like_numpy() {
    let pad_to = |text: &str, chars: usize| {
        let n = chars - text.chars().count();
        format!("{text}{}", " ".repeat(n))
    };
    let text = dict("'<f8'", "False", "(3,)");
    // Exactly 10000 accepted, 10001 refused.
    assert!(parse(&v1(&pad_to(&text, 10000))).is_ok());
    let err = parse(&v1(&pad_to(&text, 10001))).unwrap_err();
    assert!(
        matches!(
            err,
            Error::HeaderTooLarge {
                length: 10001,
                max: 10000
            }
        ),
        "{err}"
    );
    // v3: 10000 characters in more than 10000 bytes are accepted.
    let wide = dict("[('中文', '<f8')]", "False", "(3,)");
    let bytes = v3(&pad_to(&wide, 10000));
    assert!(bytes.len() > 10012);
    assert!(parse(&bytes).is_ok());
    assert!(matches!(
        parse(&v3(&pad_to(&wide, 10001))),
        Err(Error::HeaderTooLarge { length: 10001, .. })
    ));
    // A custom limit.
    let small = ParseOptions {
        max_header_size: 50,
        ..Default::default()
    };
    assert!(matches!(
        Header::parse(&v1(&text), &small),
        Err(Error::HeaderTooLarge { max: 50, .. })
    ));
}

#[test]
fn huge_length_field_fails_fast_without_allocating() {
    // A 4 GiB length field on a 12-byte buffer.
    let bytes = b"\x93NUMPY\x02\x00\xff\xff\xff\xff";
    let err = parse(bytes).unwrap_err();
    assert!(
        matches!(
            err,
            Error::HeaderTooLarge {
                length: 4294967295,
                ..
            }
        ),
        "{err}"
    );
    // Even with no limit, the slice parser only reports the missing bytes,
    let unlimited = ParseOptions {
        max_header_size: usize::MAX,
        ..Default::default()
    };
    assert_eq!(
        Header::parse(bytes, &unlimited).unwrap_err().to_string(),
        "EOF: reading array header, expected 4294967295 bytes got 0"
    );
    // and the stream reader only holds what actually arrives.
    let mut stream = bytes.to_vec();
    stream.extend_from_slice(b"{'descr'");
    assert_eq!(
        Header::read_from(&mut &stream[..], &unlimited)
            .unwrap_err()
            .to_string(),
        "EOF: reading array header, expected 4294967295 bytes got 8"
    );
}

#[test]
fn pathological_headers_are_rejected_quickly() {
    let big = ParseOptions {
        max_header_size: 4_000_000,
        ..Default::default()
    };
    let deep = format!("{{'descr': {}", "[".repeat(10_000));
    let err = Header::parse(&v3(&deep), &big).unwrap_err();
    assert!(matches!(
        err,
        Error::CannotParseHeader {
            reason: "too many nested brackets",
            ..
        }
    ));
    let quotes = format!("{{'descr': {}", "'".repeat(1_000_000));
    let err = Header::parse(&v3(&quotes), &big).unwrap_err();
    assert!(matches!(err, Error::CannotParseHeader { .. }), "{err}");
    let parens = "(".repeat(3_000_000);
    assert!(matches!(
        Header::parse(&v3(&parens), &big),
        Err(npy_core::Error::CannotParseHeader { .. })
    ));
}

/// Hands out one byte per `read` call, like a slow pipe.
struct Trickle<'a>(&'a [u8]);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match (self.0.split_first(), buf.first_mut()) {
            (Some((&b, rest)), Some(slot)) => {
                *slot = b;
                self.0 = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

#[test]
fn read_from_a_non_seekable_stream_stops_at_the_data() {
    let header = Header::new(f8(), Order::Fortran, vec![2, 2]);
    let mut file = header.to_bytes(None).unwrap();
    file.extend_from_slice(&[7u8; 32]);
    let mut stream = Trickle(&file);
    let npy_core::ParsedHeader {
        header: read,
        layout,
    } = Header::read_from(&mut stream, &ParseOptions::default()).unwrap();
    assert_eq!(read, header);
    assert_eq!(
        (layout.data_offset, layout.data_len, layout.data_end()),
        (128, 32, 160)
    );
    assert_eq!(stream.0, &[7u8; 32]);
}

#[test]
fn parse_leaves_trailing_bytes_to_the_caller() {
    let header = Header::new(f8(), Order::C, vec![1]);
    let mut file = header.to_bytes(None).unwrap();
    file.extend_from_slice(&[0u8; 8 + 5]);
    let ParsedHeader { layout, .. } = parse(&file).unwrap();
    assert_eq!(layout.data_end(), file.len() - 5);
    // And a prefix that stops right after the header is enough.
    assert_eq!(parse(&file[..128]).unwrap().layout, layout);
}

#[test]
fn top_level_subarray_descr_is_kept() {
    // NumPy never writes it; np.load(mmap_mode='r') appends (2,) to the shape.
    let ParsedHeader { header, layout } =
        parse(&v1(&dict("('<i4', (2,))", "False", "(3,)"))).unwrap();
    assert_eq!(header.dtype.descr(), "('<i4', (2,))");
    assert_eq!(header.element_count().unwrap(), 3);
    assert_eq!(layout.data_len, 24);
}

#[test]
fn mutated_and_truncated_headers_never_panic() {
    let dtype = DType::parse(
        r#"[('a', '|u1'), ('', '|V3'), (('t', "it's"), '>i4', (2, 3)), ('c', [('d', '<M8[10s]')], 2)]"#,
    )
    .unwrap();
    let headers = [
        Header::new(dtype.clone(), Order::C, vec![3, 4]),
        Header::new(dtype, Order::Fortran, vec![]),
        Header::new(f8(), Order::C, vec![0]),
    ];
    let interesting = [
        0u8, b' ', b'\'', b'"', b'(', b')', b'[', b']', b'{', b'}', b',', b':', b'\\', b'#', b'\n',
        b'\r', b'0', b'9', b'-', b'L', b'x', b'u', b'b', b'r', 0x80, 0xe9, 0xff,
    ];
    let mut outcomes = [0usize; 2];
    for header in &headers {
        for version in [Version::V1, Version::V3] {
            let bytes = header.to_bytes(Some(version)).unwrap();
            for cut in 0..bytes.len() {
                // Every strict prefix is missing its newline at least.
                assert!(parse(&bytes[..cut]).is_err(), "prefix {cut}");
            }
            for at in 0..bytes.len() {
                for &value in &interesting {
                    let mut mutated = bytes.clone();
                    mutated[at] = value;
                    outcomes[usize::from(parse(&mutated).is_ok())] += 1;
                    let _ = Header::read_from(&mut &mutated[..], &ParseOptions::default());
                }
            }
        }
    }
    // Both outcomes happen: mutations in the padding are harmless.
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
}

#[test]
fn huge_dicts_are_checked_in_linear_time() {
    // 200,000 distinct extra keys (or one key repeated) under a raised limit:
    // a quadratic key check would take minutes.
    let big = ParseOptions {
        max_header_size: 8_000_000,
        ..Default::default()
    };
    let extra: String = (0..200_000).map(|i| format!("'k{i}': 0, ")).collect();
    let text = format!("{{{extra}'descr': '<f8', 'fortran_order': False, 'shape': ()}}");
    let err = Header::parse(&v3(&text), &big).unwrap_err();
    assert!(err.to_string().starts_with(
        "Header does not contain the correct keys: ['descr', 'fortran_order', 'k0', 'k1', 'k10'"
    ));
    let repeated = "'shape': (), ".repeat(200_000);
    let text = format!("{{{repeated}'descr': '<f8', 'fortran_order': False}}");
    let err = Header::parse(&v3(&text), &big).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Header contains the key 'shape' more than once"
    );
}

//! DType parsing and descr generation, checked against NumPy 2.4.6 on x86-64
//! Linux (`np.dtype(s).str`, `np.lib.format.dtype_to_descr`,
//! `np.lib.format.descr_to_dtype`).

use npy_core::{
    ByteOrder, DType, DateTimeUnit, Error, Field, Scalar, ScalarKind, Structured, TimeUnit,
};

fn descr_of(text: &str) -> String {
    DType::parse(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .header_repr()
}

#[test]
fn type_strings_resolve_like_numpy() {
    // np.dtype(s).str for each s.
    let cases = [
        ("?", "|b1"),
        ("b1", "|b1"),
        ("<b1", "|b1"),
        ("=?", "|b1"),
        ("b", "|i1"),
        ("B", "|u1"),
        (">u1", "|u1"),
        ("<i1", "|i1"),
        ("h", "<i2"),
        ("H", "<u2"),
        ("i", "<i4"),
        ("<i", "<i4"),
        ("I", "<u4"),
        ("l", "<i8"),
        ("L", "<u8"),
        ("q", "<i8"),
        ("Q", "<u8"),
        ("p", "<i8"),
        ("P", "<u8"),
        ("e", "<f2"),
        ("f", "<f4"),
        ("<f", "<f4"),
        ("d", "<f8"),
        (">d", ">f8"),
        ("g", "<f16"),
        ("=g", "<f16"),
        ("F", "<c8"),
        ("D", "<c16"),
        ("G", "<c32"),
        ("S", "|S0"),
        ("a", "|S0"),
        ("U", "<U0"),
        ("V", "|V0"),
        ("c", "|S1"),
        ("M", "<M8"),
        ("m", "<m8"),
        ("i4", "<i4"),
        ("i04", "<i4"),
        ("=i4", "<i4"),
        ("|i4", "<i4"),
        ("|u2", "<u2"),
        (">i8", ">i8"),
        ("<f2", "<f2"),
        ("f16", "<f16"),
        (">f16", ">f16"),
        ("c32", "<c32"),
        ("<S4", "|S4"),
        (">S3", "|S3"),
        ("a4", "|S4"),
        ("S01", "|S1"),
        ("S0", "|S0"),
        (">U2", ">U2"),
        ("|U2", "<U2"),
        ("U0", "<U0"),
        ("<V4", "|V4"),
        ("V0", "|V0"),
        ("M8", "<M8"),
        ("M8[10s]", "<M8[10s]"),
        ("<M8[1s]", "<M8[s]"),
        ("M8[01s]", "<M8[s]"),
        (">m8[250ms]", ">m8[250ms]"),
        ("m8[0s]", "<m8[0s]"),
        ("M8[2147483647Y]", "<M8[2147483647Y]"),
        ("M8[μs]", "<M8[us]"),
        ("m8[generic]", "<m8"),
        ("V2147483647", "|V2147483647"),
        ("U536870911", "<U536870911"),
        ("bool", "|b1"),
        ("bool_", "|b1"),
        ("int8", "|i1"),
        ("byte", "|i1"),
        ("ubyte", "|u1"),
        ("short", "<i2"),
        ("ushort", "<u2"),
        ("intc", "<i4"),
        ("uintc", "<u4"),
        ("int", "<i8"),
        ("int_", "<i8"),
        ("intp", "<i8"),
        ("long", "<i8"),
        ("longlong", "<i8"),
        ("uint", "<u8"),
        ("uintp", "<u8"),
        ("ulong", "<u8"),
        ("ulonglong", "<u8"),
        ("int64", "<i8"),
        ("uint64", "<u8"),
        ("half", "<f2"),
        ("single", "<f4"),
        ("double", "<f8"),
        ("float", "<f8"),
        ("float64", "<f8"),
        ("float128", "<f16"),
        ("longdouble", "<f16"),
        ("complex", "<c16"),
        ("complex256", "<c32"),
        ("clongdouble", "<c32"),
        ("bytes", "|S0"),
        ("bytes_", "|S0"),
        ("str", "<U0"),
        ("str_", "<U0"),
        ("void", "|V0"),
        ("datetime64", "<M8"),
        ("<datetime64", "<M8"),
        ("datetime64[ns]", "<M8[ns]"),
        ("timedelta64[D]", "<m8[D]"),
        ("datetime64[10s]", "<M8[10s]"),
    ];
    for (input, expected) in cases {
        let quoted = format!("'{expected}'");
        // Bare and quoted spellings give the same dtype.
        assert_eq!(descr_of(input), quoted, "{input}");
        assert_eq!(descr_of(&format!("'{input}'")), quoted, "{input}");
    }
}

#[test]
fn unknown_type_strings_use_numpys_message() {
    // np.dtype(s) raises TypeError: data type 's' not understood.
    for bad in [
        "xyz",
        "<int32",
        "<i16",
        "<I4",
        "I4",
        "<i0",
        "<i4 ",
        "u",
        "?1",
        "b2",
        "c1",
        "M4",
        "O16",
        "f10",
        "float96",
        "float_",
        "int0",
        "Y",
        "v4",
        "s4",
        "S-1",
        "U536870912",
        "S4294967296",
        "V2147483648",
        "S99999999999",
        "i8[ns]",
        "M[s]",
        "<",
        "",
    ] {
        let err = DType::parse(&format!("'{bad}'")).unwrap_err();
        let Error::DTypeNotUnderstood { .. } = err else {
            panic!("{bad}: {err}")
        };
        assert_eq!(err.to_string(), format!("data type '{bad}' not understood"));
    }
    // Bad datetime metadata has its own wording.
    for bad in [
        "M8[B]",
        "M8[]",
        "M8[10 s]",
        "M8[s/2]",
        "M8[2147483648s]",
        "M8[-1s]",
    ] {
        let err = DType::parse(&format!("'{bad}'")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid dtype: Invalid datetime metadata string"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn long_doubles_of_32_bit_x86_are_kept_as_raw_bytes() {
    // NumPy on x86-64 refuses '<f12', but 32-bit x86 NumPy writes it.
    let d = DType::parse("'<f12'").unwrap();
    assert_eq!(d.itemsize(), 12);
    assert_eq!(d.descr(), "<f12");
    assert_eq!(d.header_repr(), "'<f12'");
    assert_eq!(DType::parse("'>c24'").unwrap().itemsize(), 24);
}

#[test]
fn scalars_are_normalised() {
    let d = DType::parse("'|i4'").unwrap();
    assert_eq!(
        d,
        DType::Scalar(Scalar {
            kind: ScalarKind::Int,
            byte_order: ByteOrder::NATIVE,
            itemsize: 4
        })
    );
    let u1 = DType::parse("'>u1'").unwrap();
    assert_eq!(
        u1,
        DType::Scalar(Scalar {
            kind: ScalarKind::UInt,
            byte_order: ByteOrder::NotApplicable,
            itemsize: 1
        })
    );
    let hand_built = Scalar {
        kind: ScalarKind::Bytes,
        byte_order: ByteOrder::Big,
        itemsize: 3,
    };
    assert_eq!(hand_built.type_str(), "|S3");
    assert_eq!(hand_built.normalized().byte_order, ByteOrder::NotApplicable);
    let dt = DType::parse("'>M8[3D]'").unwrap();
    assert_eq!(
        dt,
        DType::Scalar(Scalar::new(
            ScalarKind::DateTime(Some(DateTimeUnit {
                unit: TimeUnit::Day,
                multiple: 3
            })),
            ByteOrder::Big,
            8
        ))
    );
    for unit in TimeUnit::ALL {
        let text = format!("'<m8[7{}]'", unit.symbol());
        assert_eq!(descr_of(&text), text);
    }
}

#[test]
fn structured_descrs_round_trip() {
    // Each is its own dtype_to_descr(descr_to_dtype(x)) in NumPy.
    for descr in [
        "[('x', '<i4'), ('y', '>f8', (2, 3))]",
        "[('a', '|u1'), ('', '|V3'), ('b', '<i4'), ('', '|V4')]",
        "[('a', '|S3')]",
        "[('a', '|S3'), ('b', [('c', '<f8', (2,)), ('d', '|b1')])]",
        "[(('title', 'n'), '<i4'), ('m', '<f8')]",
        "[(('t', 'n'), '<i4', (2,))]",
        "[(\"it's\", '<i2')]",
        "[('c', ('<f8', (5,)), (2,))]",
        "[('s', [('a', '<i4')], (3,))]",
        "[('a', '<i4', (0,))]",
        "[('a', '<i4', (2, 1))]",
        "[('a', '<i4', (1,))]",
        "[('', '<i4'), ('b', '<i4')]",
        "[('', [('a', '<i4')])]",
        "[('', '|V8')]",
        "[]",
        "[('a', '<U3'), ('b', '>M8[ms]'), ('c', '<c16'), ('d', '|V0')]",
        "('<i4', (2,))",
        "(('<f8', (5,)), (2,))",
        "([('a', '<i4')], (2, 3))",
    ] {
        let dtype = DType::parse(descr).unwrap_or_else(|e| panic!("{descr}: {e}"));
        assert_eq!(dtype.descr(), descr);
        assert_eq!(DType::parse(&dtype.descr()).unwrap(), dtype);
    }
}

#[test]
fn read_side_spellings_of_records() {
    // descr_to_dtype(x) then dtype_to_descr, in NumPy.
    let cases = [
        ("[['a', '<i4']]", "[('a', '<i4')]"),
        ("[('a', '<i4', 3)]", "[('a', '<i4', (3,))]"),
        ("[('a', '<i4', 1)]", "[('a', '<i4', (1,))]"),
        ("[('a', '<i4', ())]", "[('a', '<i4')]"),
        (
            "[('a', 'i4'), ('b', 'float64')]",
            "[('a', '<i4'), ('b', '<f8')]",
        ),
        ("[('', '|V4', (2,))]", "[('', '|V8')]"),
        ("[('', '<i4', (2,))]", "[('', '|V8')]"),
        ("[('', ('<i4', (2,)))]", "[('', '|V8')]"),
        ("[('', '|V4'), ('a', '<i4')]", "[('', '|V4'), ('a', '<i4')]"),
        ("('<i4', 2)", "('<i4', (2,))"),
        ("('<i4', ())", "'<i4'"),
        ("[(u'a', u'<i4',),]", "[('a', '<i4')]"),
    ];
    for (input, expected) in cases {
        assert_eq!(descr_of(input), expected, "{input}");
    }
}

#[test]
fn padding_entries_become_record_gaps() {
    let DType::Structured(record) =
        DType::parse("[('a', '|u1'), ('', '|V3'), ('b', '<i4'), ('', '|V4')]").unwrap()
    else {
        panic!("not a record")
    };
    assert_eq!(record.itemsize, 12);
    let names: Vec<(&str, usize)> = record
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.offset))
        .collect();
    assert_eq!(names, [("a", 0), ("b", 4)]);
    // A '' name on a non-void type is a real field named '' (descr_to_dtype).
    let DType::Structured(record) = DType::parse("[('', '<i4'), ('b', '<i4')]").unwrap() else {
        panic!("not a record")
    };
    assert_eq!(record.fields[0].name, "");
    assert_eq!(record.fields[1].offset, 4);
    // Titles.
    let DType::Structured(record) = DType::parse("[(('my title', 'n'), '<i4')]").unwrap() else {
        panic!("not a record")
    };
    assert_eq!(record.fields[0].title.as_deref(), Some("my title"));
    assert_eq!(record.fields[0].name, "n");
}

#[test]
fn hand_built_records_get_numpys_descr() {
    // np.dtype({'names':['a','b'],'formats':['u1','<i4'],'offsets':[0,4],'itemsize':12}).descr
    let field = |name: &str, dtype: DType, offset| Field {
        name: name.into(),
        title: None,
        dtype,
        offset,
    };
    let record = DType::Structured(Structured {
        fields: vec![
            field("a", DType::parse("u1").unwrap(), 0),
            field("b", DType::parse("<i4").unwrap(), 4),
        ],
        itemsize: 12,
    });
    assert_eq!(
        record.descr(),
        "[('a', '|u1'), ('', '|V3'), ('b', '<i4'), ('', '|V4')]"
    );
    // np.dtype({'names':[],'formats':[],'itemsize':8}).descr
    let empty = DType::Structured(Structured {
        fields: vec![],
        itemsize: 8,
    });
    assert_eq!(empty.descr(), "[('', '|V8')]");
}

#[test]
fn malformed_records_are_refused() {
    for (descr, message) in [
        (
            "[('a', '<i4'), ('a', '<f8')]",
            "name already used as a name or title",
        ),
        (
            "[(('a', 'a'), '<i4')]",
            "title already used as a name or title",
        ),
        (
            "[(('t', 'a'), '<i4'), ('t', '<i4')]",
            "name already used as a name or title",
        ),
        ("[(1, '<i4')]", "field names must be strings"),
        ("[(('t', 1), '<i4')]", "field names must be strings"),
        (
            "[((1, 'n'), '<i4')]",
            "field titles other than strings are not supported",
        ),
        (
            "[('a',)]",
            "a field must be a (name, type) or (name, type, shape) tuple",
        ),
        (
            "[('a', '<i4', (2,), 1)]",
            "a field must be a (name, type) or (name, type, shape) tuple",
        ),
        (
            "['a']",
            "a field must be a (name, type) or (name, type, shape) tuple",
        ),
        (
            "[('a', '<i4', -1)]",
            "invalid shape in fixed-type tuple: dimension smaller than zero",
        ),
        ("[('a', '<i4', 'x')]", "invalid shape in fixed-type tuple"),
        ("('<i4', (2.0,))", "invalid shape in fixed-type tuple"),
        (
            "('<i4', (2147483648,))",
            "invalid shape in fixed-type tuple: dimension does not fit into a C int",
        ),
        (
            "('|S1000', (4194304,))",
            "invalid shape in fixed-type tuple: dtype size in bytes must fit into a C int",
        ),
        (
            "[('a', '|S1000000000'), ('b', '|S1000000000'), ('c', '|S1000000000')]",
            "dtype size in bytes must fit into a C int",
        ),
        ("('<i4', (2,), 3)", "Tuple must have size 2, but has size 3"),
        (
            "{'a': '<i4'}",
            "a descr is a string, a (base, shape) tuple or a list of fields",
        ),
        ("[('a', '<i4')", "expected ',' or a closing bracket"),
    ] {
        let err = DType::parse(descr).unwrap_err();
        assert!(matches!(err, Error::InvalidDType { .. }), "{descr}: {err}");
        assert!(err.to_string().contains(message), "{descr}: {err}");
    }
}

#[test]
fn duplicate_names_are_found_in_large_records() {
    let fields = |n: usize| {
        (0..n)
            .map(|i| format!("('f{i}', '<i1')"))
            .collect::<Vec<_>>()
    };
    // A duplicate on either side of the switch from scanning to hashing.
    for (count, duplicate_of) in [(40, 0), (40, 35), (33, 31), (100, 99)] {
        let mut entries = fields(count);
        entries.push(format!("('f{duplicate_of}', '<i1')"));
        let descr = format!("[{}]", entries.join(", "));
        let err = DType::parse(&descr).unwrap_err();
        assert!(
            err.to_string().contains("name already used"),
            "{count}/{duplicate_of}: {err}"
        );
    }
    let unique = format!("[{}]", fields(100).join(", "));
    assert_eq!(
        DType::parse(&unique).expect("distinct names").itemsize(),
        100
    );
}

#[test]
fn objects_are_refused_at_any_depth() {
    for descr in [
        "O",
        "'|O8'",
        "object_",
        "[('a', [('b', [('c', 'O')])])]",
        "[('a', ('O', (2,)))]",
    ] {
        assert!(
            matches!(DType::parse(descr), Err(Error::ObjectDType)),
            "{descr}"
        );
    }
}

#[test]
fn byte_order_helpers() {
    let d = DType::parse("[('a', '>i4'), ('b', '|u1'), ('c', '<f8', (2,))]").unwrap();
    assert!(!d.is_native_byte_order());
    let native = d.with_byte_order(ByteOrder::NATIVE);
    assert!(native.is_native_byte_order());
    let big = d.with_byte_order(ByteOrder::Big);
    assert_eq!(
        big.descr(),
        "[('a', '>i4'), ('b', '|u1'), ('c', '>f8', (2,))]"
    );
    assert_eq!(big.itemsize(), d.itemsize());
}

#[test]
fn deep_nesting_is_bounded() {
    // 30 nested records fit the nesting limit; 40 do not, and fail cleanly.
    let nest = |depth: usize| {
        let mut descr = "'<i4'".to_owned();
        for _ in 0..depth {
            descr = format!("[('a', {descr})]");
        }
        descr
    };
    let d = DType::parse(&nest(30)).unwrap();
    assert_eq!(d.itemsize(), 4);
    assert_eq!(d.descr(), nest(30));
    for deep in [nest(40), "[".repeat(100_000)] {
        let parsed = DType::parse(&deep);
        assert!(
            matches!(&parsed, Err(npy_core::Error::InvalidDType { reason }) if reason.contains("too many nested brackets")),
            "{parsed:?}"
        );
    }
}

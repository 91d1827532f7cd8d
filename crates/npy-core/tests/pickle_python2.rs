//! Object arrays written by Python 2 and old numpy, as `np.load(...,
//! allow_pickle=True, encoding='latin1')` reads them (numpy's own test files
//! `py2-objarr.npy` and `py2-np0-objarr.npy` hold exactly these pickles):
//! spellings of old numpy's globals, and builtin types used as values.
//! The pickles are written here by hand, opcode by opcode (protocol 2, as
//! Python 2's `cPickle` writes them); no Python 2 runs.

use npy_core::io::{ReadOptions, read_npy};
use npy_core::pickle::{self, Encoding, PickleOptions, PyValue};
use npy_core::{DType, Order};

/// `GLOBAL` opcode: `c<module>\n<name>\n`.
fn global(module: &str, name: &str) -> Vec<u8> {
    format!("c{module}\n{name}\n").into_bytes()
}

/// The object array `[None, xrange, u'優良', '不良' (UTF-8 bytes as a py2 str)]`
/// as Python 2's numpy pickles it, with `_reconstruct` from `module`.
fn py2_object_array(module: &str) -> Vec<u8> {
    let mut p = vec![0x80, 2]; // PROTO 2
    p.extend(global(module, "_reconstruct"));
    p.extend(global("numpy", "ndarray"));
    p.extend([b'K', 0, 0x85]); // BININT1 0, TUPLE1
    p.extend([b'U', 1, b'b', 0x87, b'R']); // SHORT_BINSTRING 'b', TUPLE3, REDUCE
    p.push(b'('); // MARK: the state tuple
    p.extend([b'K', 1, b'K', 4, 0x85]); // version 1, shape (4,)
    p.extend(global("numpy", "dtype"));
    p.extend([b'U', 2, b'O', b'8', b'K', 0, b'K', 1, 0x87, b'R']); // dtype('O8', 0, 1)
    p.push(b'('); // dtype state (3, '|', None, None, None, -1, -1, 63)
    p.extend([b'K', 3, b'U', 1, b'|', b'N', b'N', b'N']);
    p.extend([b'J', 0xff, 0xff, 0xff, 0xff, b'J', 0xff, 0xff, 0xff, 0xff]);
    p.extend([b'K', 63, b't', b'b']); // TUPLE, BUILD
    p.push(0x89); // NEWFALSE: not Fortran
    p.extend([b']', b'(']); // EMPTY_LIST, MARK
    p.push(b'N');
    p.extend(global("__builtin__", "xrange"));
    let text = "優良".as_bytes();
    p.push(b'X');
    p.extend((text.len() as u32).to_le_bytes());
    p.extend(text);
    let bytes = "不良".as_bytes();
    p.extend([b'U', bytes.len() as u8]);
    p.extend(bytes);
    p.extend([b'e', b't', b'b', b'.']); // APPENDS, TUPLE, BUILD, STOP
    p
}

fn latin1() -> PickleOptions {
    PickleOptions {
        encoding: Encoding::Latin1,
        ..PickleOptions::default()
    }
}

#[test]
fn old_numpy_object_arrays_with_a_builtin_type_as_a_value() {
    for module in [
        "numpy.core.multiarray",
        "numpy.core._internal",
        "numpy._core.multiarray",
    ] {
        let value = pickle::loads(&py2_object_array(module), &latin1()).unwrap();
        let PyValue::Array(array) = value else {
            panic!("{module}: not an array: {value:?}")
        };
        assert_eq!(array.header().dtype, DType::Object);
        assert_eq!(array.header().shape, vec![4]);
        assert_eq!(array.header().order, Order::C);
        let latin1_text: String = "不良".as_bytes().iter().map(|&b| b as char).collect();
        assert_eq!(
            array.objects().unwrap(),
            &[
                PyValue::None,
                PyValue::Type("range".into()),
                PyValue::Str("優良".into()),
                PyValue::Str(latin1_text),
            ]
        );
    }
}

#[test]
fn python2_spellings_of_builtin_types_are_python3_names() {
    let mut p = vec![0x80, 2, b']', b'('];
    for name in [
        "xrange",
        "unicode",
        "long",
        "basestring",
        "int",
        "set",
        "bytearray",
    ] {
        p.extend(global("__builtin__", name));
    }
    p.extend(global("builtins", "range"));
    p.extend([b'e', b'.']);
    let value = pickle::loads(&p, &latin1()).unwrap();
    let names = [
        "range",
        "str",
        "int",
        "str",
        "int",
        "set",
        "bytearray",
        "range",
    ];
    assert_eq!(
        value,
        PyValue::List(names.iter().map(|n| PyValue::Type((*n).into())).collect())
    );
    assert_eq!(
        value.to_string(),
        format!("[{}]", names.map(|n| format!("<class '{n}'>")).join(", "))
    );
}

#[test]
fn types_round_trip_through_the_pickler() {
    let value = PyValue::List(vec![
        PyValue::Type("range".into()),
        PyValue::Type("set".into()),
    ]);
    let bytes = pickle::dumps(&value).unwrap();
    assert_eq!(
        pickle::loads(&bytes, &PickleOptions::default()).unwrap(),
        value
    );
    // Only the builtin types the unpickler reads back are written.
    let error = pickle::dumps(&PyValue::Type("eval".into())).unwrap_err();
    assert!(error.to_string().contains("eval"), "{error}");
}

#[test]
fn other_builtins_and_calls_of_types_are_still_refused() {
    for (module, name) in [
        ("__builtin__", "eval"),
        ("builtins", "getattr"),
        ("__builtin__", "open"),
    ] {
        let mut p = vec![0x80, 2];
        p.extend(global(module, name));
        p.push(b'.');
        let error = pickle::loads(&p, &latin1()).unwrap_err();
        assert!(
            error
                .to_string()
                .contains(&format!("'{module}.{name}' is not allowed")),
            "{error}"
        );
    }
    // A type is a value, never called: xrange(5) is refused.
    let mut p = vec![0x80, 2];
    p.extend(global("__builtin__", "xrange"));
    p.extend([b'K', 5, 0x85, b'R', b'.']);
    assert!(pickle::loads(&p, &latin1()).is_err());
    // Nor built: BUILD on a type has no meaning here.
    let mut p = vec![0x80, 2];
    p.extend(global("__builtin__", "int"));
    p.extend([b'N', b'b', b'.']);
    assert!(pickle::loads(&p, &latin1()).is_err());
    // numpy.core._internal offers nothing but _reconstruct.
    let mut p = vec![0x80, 2];
    p.extend(global("numpy.core._internal", "_ctypes"));
    p.push(b'.');
    assert!(pickle::loads(&p, &latin1()).is_err());
}

#[test]
fn a_python2_npy_file_reads_with_latin1_and_bytes() {
    let header = b"{'descr': '|O8', 'fortran_order': False, 'shape': (4,), }            \n";
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    file.extend((header.len() as u16).to_le_bytes());
    file.extend(header);
    file.extend(py2_object_array("numpy.core.multiarray"));
    for (encoding, last) in [
        (
            Encoding::Latin1,
            PyValue::Str("不良".as_bytes().iter().map(|&b| b as char).collect()),
        ),
        (Encoding::Bytes, PyValue::Bytes("不良".as_bytes().to_vec())),
    ] {
        let mut options = ReadOptions::default();
        options.parse.allow_pickle = true;
        options.pickle.encoding = encoding;
        let array = read_npy(&mut &file[..], &options).unwrap();
        let objects = array.objects().unwrap();
        assert_eq!(objects[1], PyValue::Type("range".into()));
        assert_eq!(objects[3], last);
    }
}

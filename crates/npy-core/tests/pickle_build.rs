//! The unpickler's builder interface (`pickle::Build`): a caller's own
//! values made straight from the pickle, shared objects made once and
//! shared, the same pickles refused as with `PyValue`s (`Tree`); the one
//! pass (`pickle::build`, `io::build_objects`) makes the same values.

use std::borrow::Cow;
use std::rc::Rc;

use npy_core::io::{build_objects, decode_objects, read_objects};
use npy_core::pickle::{self, Build, NumpyScalar, PickleOptions, PyValue, Tree};
use npy_core::{DType, Header, NpyArray, Order, ReadOptions, Result};

/// Values as reference-counted nodes, so a test can see which are one
/// object (`Rc::ptr_eq`), and how many of each kind were made.
#[derive(Debug, PartialEq)]
enum Obj {
    None,
    Bool(bool),
    Int(i64),
    Big(Vec<u8>),
    Float(u64),
    Complex(u64, u64),
    Str(String),
    Bytes(Vec<u8>),
    ByteArray(Vec<u8>),
    Tuple(Vec<Rc<Obj>>),
    List(Vec<Rc<Obj>>),
    Dict(Vec<(Rc<Obj>, Rc<Obj>)>),
    Set(Vec<Rc<Obj>>),
    FrozenSet(Vec<Rc<Obj>>),
    Array(String),
    Objects(Vec<usize>, Vec<Rc<Obj>>),
    Scalar(String),
    Type(&'static str),
}

#[derive(Default)]
struct Rcs {
    strs: usize,
}

impl Build for Rcs {
    type Value = Rc<Obj>;
    fn none(&mut self) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::None))
    }
    fn bool(&mut self, value: bool) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::Bool(value)))
    }
    fn int(&mut self, value: i64) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::Int(value)))
    }
    fn big_int(&mut self, le_bytes: &[u8]) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::Big(le_bytes.to_vec())))
    }
    fn float(&mut self, value: f64) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::Float(value.to_bits())))
    }
    fn complex(&mut self, re: f64, im: f64) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::Complex(re.to_bits(), im.to_bits())))
    }
    fn str(&mut self, text: &str) -> Result<Rc<Obj>> {
        self.strs += 1;
        Ok(Rc::new(Obj::Str(text.to_owned())))
    }
    fn str_text<'v>(&self, value: &'v Rc<Obj>) -> Option<Cow<'v, str>> {
        match &**value {
            Obj::Str(text) => Some(Cow::Borrowed(text)),
            _ => None,
        }
    }
    fn bytes(&mut self, bytes: &[u8]) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::Bytes(bytes.to_vec())))
    }
    fn byte_array(&mut self, bytes: &[u8]) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::ByteArray(bytes.to_vec())))
    }
    fn tuple(&mut self, items: Vec<Rc<Obj>>) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::Tuple(items)))
    }
    fn list(&mut self, items: Vec<Rc<Obj>>) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::List(items)))
    }
    fn dict(&mut self, pairs: Vec<(Rc<Obj>, Rc<Obj>)>) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::Dict(pairs)))
    }
    fn set(&mut self, items: Vec<Rc<Obj>>) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::Set(items)))
    }
    fn frozen_set(&mut self, items: Vec<Rc<Obj>>) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::FrozenSet(items)))
    }
    fn array(&mut self, array: NpyArray) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::Array(array.header().dtype.descr())))
    }
    fn object_array(&mut self, header: Header, items: Vec<Rc<Obj>>) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::Objects(header.shape, items)))
    }
    fn scalar(&mut self, scalar: &NumpyScalar) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::Scalar(scalar.dtype.descr())))
    }
    fn builtin_type(&mut self, name: &'static str) -> Result<Rc<Obj>> {
        Ok(Rc::new(Obj::Type(name)))
    }
}

/// `bytes` decoded then built, checked to be what the one pass makes.
fn build(bytes: &[u8]) -> Result<(Rc<Obj>, Rcs)> {
    let mut rcs = Rcs::default();
    let decoded = pickle::decode(bytes, &PickleOptions::default())?;
    assert_eq!(decoded.consumed(), bytes.len() as u64);
    let value = decoded.build(&mut rcs)?;
    let (once, once_rcs) = one_pass(bytes).expect("the one pass makes it too");
    assert_eq!(once, value, "the one pass makes the same value");
    // It makes every str as it is read, a global's names too.
    assert!(once_rcs.strs >= rcs.strs);
    Ok((value, rcs))
}

/// `bytes` decoded and built in one pass.
fn one_pass(bytes: &[u8]) -> Result<(Rc<Obj>, Rcs)> {
    let mut rcs = Rcs::default();
    let (value, used) = pickle::build(bytes, &PickleOptions::default(), &mut rcs)?;
    assert_eq!(used, bytes.len() as u64);
    Ok((value, rcs))
}

fn items(obj: &Obj) -> &[Rc<Obj>] {
    match obj {
        Obj::List(items) | Obj::Tuple(items) | Obj::Objects(_, items) => items,
        other => panic!("not a sequence: {other:?}"),
    }
}

#[test]
fn a_shared_object_is_made_once_and_shared() {
    // ["share", <the same str> x2, [1], <the same list>] through the memo.
    let body = b"\x80\x04](\x8c\x05share\x94h\x00h\x00]\x94K\x01ah\x01e.";
    let (value, rcs) = build(body).unwrap();
    let items = items(&value);
    assert_eq!(items.len(), 5);
    assert_eq!(rcs.strs, 1, "the str is made once");
    assert!(Rc::ptr_eq(&items[0], &items[1]) && Rc::ptr_eq(&items[1], &items[2]));
    assert!(Rc::ptr_eq(&items[3], &items[4]));
    assert_eq!(*items[3], Obj::List(vec![Rc::new(Obj::Int(1))]));
    // A list memoized empty and filled later is the filled list everywhere.
    assert_eq!(
        pickle::loads(body, &PickleOptions::default()).unwrap(),
        PyValue::List(vec![
            "share".into(),
            "share".into(),
            "share".into(),
            PyValue::List(vec![1.into()]),
            PyValue::List(vec![1.into()]),
        ])
    );
}

#[test]
fn every_kind_builds_as_the_tree_says() {
    let scalar = PyValue::Scalar(Box::new(NumpyScalar {
        dtype: DType::parse("<i2").unwrap(),
        bytes: vec![1, 0],
    }));
    let header = Header::new(DType::parse(">f4").unwrap(), Order::C, vec![2]);
    let layout = header.layout(None).unwrap();
    let data = NpyArray::from_parts(
        header,
        layout,
        npy_core::io::AlignedBytes::copy_from(&[0, 0, 0, 1, 0, 0, 0, 2]),
    )
    .unwrap();
    let objects = NpyArray::from_objects(
        Header::new(DType::Object, Order::Fortran, vec![2, 2]),
        vec!["a".into(), 1.into(), PyValue::None, 2.5.into()],
    )
    .unwrap();
    let value = PyValue::List(vec![
        PyValue::None,
        true.into(),
        (-5).into(),
        u64::MAX.into(),
        1.5.into(),
        PyValue::Complex(1.0, -2.0),
        "é\u{1F600}".into(),
        PyValue::Bytes(b"\x00\xff".to_vec()),
        PyValue::ByteArray(vec![7]),
        PyValue::Tuple(vec![1.into()]),
        PyValue::Dict(vec![("k".into(), PyValue::Set(vec![1.into()]))]),
        PyValue::FrozenSet(vec![]),
        data.into(),
        objects.into(),
        scalar,
        PyValue::Type("range".into()),
    ]);
    let bytes = pickle::dumps(&value).unwrap();
    // The tree through the trait is what `loads` gives.
    let tree = pickle::decode(bytes.as_slice(), &PickleOptions::default())
        .unwrap()
        .build(&mut Tree)
        .unwrap();
    assert_eq!(
        tree,
        pickle::loads(&bytes, &PickleOptions::default()).unwrap()
    );
    let (built, _) = build(&bytes).unwrap();
    let items = items(&built);
    assert_eq!(
        *items[3],
        Obj::Big(vec![0xff; 8].into_iter().chain([0]).collect())
    );
    assert_eq!(*items[6], Obj::Str("é\u{1F600}".into()));
    assert_eq!(*items[7], Obj::Bytes(b"\x00\xff".to_vec()));
    assert_eq!(
        *items[12],
        Obj::Array("<f4".into()),
        "made native, as numpy does"
    );
    // Fortran order: the items in memory order.
    let Obj::Objects(shape, cells) = &*items[13] else {
        panic!("{:?}", items[13]);
    };
    assert_eq!(shape, &[2, 2]);
    assert_eq!(*cells[0], Obj::Str("a".into()));
    assert_eq!(*cells[1], Obj::Int(1));
    assert_eq!(*items[14], Obj::Scalar("<i2".into()));
    assert_eq!(*items[15], Obj::Type("range"));
}

#[test]
fn bad_pickles_are_refused_whatever_builds_them() {
    let cases: [(&[u8], &str); 6] = [
        // A list that holds itself.
        (b"\x80\x04]\x94h\x00a.", "holds itself"),
        // os.system
        (
            b"\x80\x04\x8c\x02os\x8c\x06system\x93.",
            "'os.system' is not allowed",
        ),
        // Invalid UTF-8.
        (b"\x80\x04\x8c\x01\xff.", "invalid UTF-8"),
        // Two strs that are one character split in two: each invalid alone.
        (b"\x80\x04](\x8c\x01\xc3\x8c\x01\xa9e.", "invalid UTF-8"),
        // A memo bomb: each list holds the one before twice.
        (&memo_bomb(40), "times the pickle's size"),
        // One str of 200 bytes, fetched from the memo 20,000 times: each
        // use pays its text (the one pass made it once, as Python would).
        (&str_bomb(20_000), "times the pickle's size"),
    ];
    for (bytes, message) in cases {
        let error = build(bytes).map(|_| ()).unwrap_err().to_string();
        assert!(error.contains(message), "{message}: {error}");
        let error = one_pass(bytes).map(|_| ()).unwrap_err().to_string();
        assert!(error.contains(message), "one pass, {message}: {error}");
        let error = pickle::loads(bytes, &PickleOptions::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains(message), "{message}: {error}");
    }
}

fn str_bomb(uses: usize) -> Vec<u8> {
    let mut body = b"\x80\x04](\x8c\xc8".to_vec();
    body.extend([b'x'; 200]);
    body.push(b'\x94');
    for _ in 0..uses {
        body.extend(b"h\x00");
    }
    body.extend(b"e.");
    body
}

fn memo_bomb(levels: u8) -> Vec<u8> {
    let mut body = b"\x80\x04]\x94".to_vec();
    for level in 0..levels {
        // [previous, previous], memoized as the next.
        body.extend([b'h', level, b'h', level, b'\x86', b'\x94']);
    }
    body.push(b'.');
    body
}

#[test]
fn object_data_builds_the_items_of_an_object_array() {
    let strings: Vec<PyValue> = (0..1000).map(|i| format!("item-{i}").into()).collect();
    let array = NpyArray::from_objects(
        Header::new(DType::Object, Order::C, vec![10, 100]),
        strings.clone(),
    )
    .unwrap();
    let mut file = Vec::new();
    npy_core::write_npy(&mut file, &array).unwrap();
    let mut options = ReadOptions::default();
    options.parse.allow_pickle = true;
    let mut stream = file.as_slice();
    let parsed = Header::read_from(&mut stream, &options.parse).unwrap();
    let objects = decode_objects(stream, &parsed.header, parsed.layout, &options).unwrap();
    assert_eq!(objects.header().shape, [10, 100]);
    assert_eq!(
        objects.layout().data_offset + objects.layout().data_len,
        file.len()
    );
    let mut rcs = Rcs::default();
    let items = objects.build_items(&mut rcs).unwrap();
    assert_eq!(items.len(), 1000);
    assert_eq!(*items[999], Obj::Str("item-999".into()));
    // The same in one pass, with the pickle's length.
    let mut stream = file.as_slice();
    let parsed = Header::read_from(&mut stream, &options.parse).unwrap();
    let (layout, once) = build_objects(
        stream,
        &parsed.header,
        parsed.layout,
        &options,
        Some(file.len() as u64),
        &mut rcs,
    )
    .unwrap();
    assert_eq!(layout.data_offset + layout.data_len, file.len());
    assert_eq!(once, items);
    let mut stream = file.as_slice();
    let parsed = Header::read_from(&mut stream, &options.parse).unwrap();
    let read = read_objects(stream, &parsed.header, parsed.layout, &options).unwrap();
    assert_eq!(read.objects().unwrap(), strings.as_slice());
    // A header that does not describe the pickle's array is refused before
    // anything is made.
    let mut stream = file.as_slice();
    let parsed = Header::read_from(&mut stream, &options.parse).unwrap();
    let wrong = Header::new(DType::Object, Order::C, vec![1000]);
    let error = decode_objects(stream, &wrong, parsed.layout, &options).unwrap_err();
    assert!(error.to_string().contains("shape (10, 100)"), "{error}");
    let mut stream = file.as_slice();
    let parsed = Header::read_from(&mut stream, &options.parse).unwrap();
    let error = build_objects(stream, &wrong, parsed.layout, &options, None, &mut rcs).unwrap_err();
    assert!(error.to_string().contains("shape (10, 100)"), "{error}");
    // A header that declares 2^40 items: the room made at once follows the
    // bytes there are, never the header alone.
    let huge = Header::new(DType::Object, Order::C, vec![1 << 40]);
    let mut stream = file.as_slice();
    let parsed = Header::read_from(&mut stream, &options.parse).unwrap();
    let available = Some(stream.len() as u64);
    let error = build_objects(stream, &huge, parsed.layout, &options, available, &mut rcs)
        .map(|_| ())
        .unwrap_err();
    assert!(error.to_string().contains("shape (10, 100)"), "{error}");
    // Cut after many strings: an error, whatever was made dropped.
    let mut stream = &file[..file.len() - 40];
    let parsed = Header::read_from(&mut stream, &options.parse).unwrap();
    let error = build_objects(
        stream,
        &parsed.header,
        parsed.layout,
        &options,
        None,
        &mut rcs,
    )
    .map(|_| ())
    .unwrap_err();
    assert!(error.to_string().contains("truncated"), "{error}");
}

/// `np.array(['f8', 'x', np.zeros(2)], dtype=object)` pickled by Python
/// (protocol 4), its nested array's dtype `dtype('f8', ...)` changed to
/// take its `'f8'` from the memo: the first item's `str`, which the one
/// pass made before a pattern read it (Python loads it: a float64 array).
const DTYPE_FROM_AN_ITEM: &str = concat!(
    "800495e3000000000000008c166e756d70792e5f636f72652e6d756c74696172726179948c0c5f72",
    "65636f6e7374727563749493948c056e756d7079948c076e6461727261799493944b008594430162",
    "9487945294284b014b03859468038c0564747970659493948c024f3894898887945294284b038c01",
    "7c944e4e4e4affffffff4affffffff4b3f749462895d94288c026638948c017894680268054b0085",
    "94680787945294284b014b028594680c681394898887945294284b038c013c944e4e4e4affffffff",
    "4affffffff4b007494628943100000000000000000000000000000000094749462657494622e",
);

#[test]
fn the_one_pass_reads_back_a_str_it_made_for_a_pattern() {
    let hex = DTYPE_FROM_AN_ITEM;
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let (value, _) = build(&bytes).unwrap();
    let Obj::Objects(shape, items) = &*value else {
        panic!("not an object array: {value:?}");
    };
    assert_eq!(shape, &[3]);
    assert_eq!(*items[0], Obj::Str("f8".into()));
    assert_eq!(*items[2], Obj::Array("<f8".into()));
    let (made, _) = pickle::build(bytes.as_slice(), &PickleOptions::default(), &mut Tree).unwrap();
    assert_eq!(
        made,
        pickle::loads(&bytes, &PickleOptions::default()).unwrap()
    );
}

/// `body` in one protocol-4 frame.
fn framed(body: &[u8]) -> Vec<u8> {
    let mut out = b"\x80\x04\x95".to_vec();
    out.extend((body.len() as u64).to_le_bytes());
    out.extend(body);
    out
}

#[test]
fn runs_of_short_strings_decode_as_the_opcodes_say() {
    let list = |items: &[&str]| PyValue::List(items.iter().map(|&s| s.into()).collect());
    let options = PickleOptions::default();
    // Memoized and not, fetched back from the memo; framed and not.
    let body = b"](\x8c\x01a\x94\x8c\x02bc\x94\x8c\x01d\x8c\x00h\x01e.";
    let expected = list(&["a", "bc", "d", "", "bc"]);
    assert_eq!(pickle::loads(&framed(body), &options).unwrap(), expected);
    let plain = [&b"\x80\x04"[..], body].concat();
    assert_eq!(pickle::loads(&plain, &options).unwrap(), expected);
    // A frame that ends after a string's opcode: its length and text follow
    // outside the frame, from the stream.
    let mut split = framed(b"](\x8c\x01a\x94\x8c");
    split.extend(b"\x01b\x94e.");
    assert_eq!(pickle::loads(&split, &options).unwrap(), list(&["a", "b"]));
    // A frame that ends inside a string's text is refused.
    let mut cut = framed(b"](\x8c\x01a\x94\x8c\x03b");
    cut.extend(b"cde.");
    let error = pickle::loads(&cut, &options).unwrap_err().to_string();
    assert!(error.contains("exhausted before end of frame"), "{error}");
    // A memo with entries far beyond its dense part (BINPUT 5 first):
    // MEMOIZE numbers the entries after all of them.
    let sparse = framed(b"\x8c\x01xq\x050](\x8c\x01a\x94\x8c\x01b\x94h\x01h\x02h\x05e.");
    assert_eq!(
        pickle::loads(&sparse, &options).unwrap(),
        list(&["a", "b", "a", "b", "x"])
    );
}

/// `(a, l)`: `a = np.array(['x', 'y'], dtype=object)` pickled by Python
/// (protocol 4), then the list of its state fetched again from the memo
/// (Python loads it: the array and a list holding the same two strs).
const ARRAY_AND_ITS_LIST: &str = concat!(
    "80049595000000000000008c166e756d70792e5f636f72652e6d756c74696172726179948c0c5f72",
    "65636f6e7374727563749493948c056e756d7079948c076e6461727261799493944b008594430162",
    "9487945294284b014b02859468038c0564747970659493948c024f3894898887945294284b038c01",
    "7c944e4e4e4affffffff4affffffff4b3f749462895d94288c0178948c017994657494626812862e",
);

#[test]
fn an_object_arrays_list_used_again_holds_the_same_items() {
    let hex = ARRAY_AND_ITS_LIST;
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    for (value, how) in [
        (build(&bytes).unwrap().0, "decoded"),
        (one_pass(&bytes).unwrap().0, "one pass"),
    ] {
        let [array, list] = items(&value) else {
            panic!("not a pair: {value:?}");
        };
        let (cells, listed) = (items(array), items(list));
        assert_eq!(*cells[1], Obj::Str("y".into()));
        // One object each, as Python's memo makes them.
        assert!(
            Rc::ptr_eq(&cells[0], &listed[0]) && Rc::ptr_eq(&cells[1], &listed[1]),
            "{how}"
        );
    }
}

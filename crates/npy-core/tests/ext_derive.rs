//! Feature `derive`: `#[derive(NpyRecord)]` structs against numpy-written
//! structured files: views are checked then zero-copy, and writing gives
//! numpy's exact bytes (descr with padding entries included).
#![cfg(feature = "derive")]

mod ext_support;

use ext_support::{fixture, fixture_bytes};
use npy_core::ext::derive::{FieldLayout, NpyRecord, explain_mismatch};
use npy_core::io::write_npy;
use npy_core::{DType, Element, Error, NpyArray, Order};
use zerocopy::byteorder::{BigEndian, F32, F64, I16, I32, LittleEndian};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, TryFromBytes};

type Le = LittleEndian;
type Be = BigEndian;

/// Writes `records` with the fixture's shape and order and compares with
/// numpy's file byte for byte.
fn assert_writes_like_numpy<T: Element>(name: &str, array: &NpyArray, records: &[T]) {
    let mut file = Vec::new();
    write_npy(
        &mut file,
        &npy_core::ArrayView::from_slice(records, &array.header().shape, array.header().order)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(file, fixture_bytes(name), "{name}");
}

/// rec_simple.npy: [('x', '<i4'), ('y', '<f8')], numpy's packed layout.
#[derive(
    Clone, Copy, Debug, PartialEq, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
struct Simple {
    x: I32<Le>,
    y: F64<Le>,
}

#[test]
fn packed_records_with_alignment_one_fields() {
    let array = fixture("rec_simple.npy");
    let view = array.view::<Simple>().unwrap();
    let got: Vec<(i32, f64)> = view.iter().map(|r| (r.x.get(), r.y.get())).collect();
    assert_eq!(got[0], (1, 0.5));
    assert_eq!(got[1].0, -2);
    assert!(got[1].1.is_nan());
    assert_eq!(got[2], (3, f64::NEG_INFINITY));
    assert_eq!(
        view.as_slice().unwrap().as_ptr().cast::<u8>(),
        array.bytes().as_ptr()
    );
    assert_writes_like_numpy("rec_simple.npy", &array, view.as_slice().unwrap());

    // Fortran order and 0-d arrays of the same dtype.
    let array = fixture("rec_0d.npy");
    let record = *array.view::<Simple>().unwrap().get([]).unwrap();
    assert_eq!(record.x.get(), -2);
    assert_writes_like_numpy("rec_0d.npy", &array, &[record]);
}

/// rec_aligned.npy: np.dtype([('a', 'u1'), ('b', '<i4'), ('c', 'u1'), ('d', '<f8')], align=True)
#[derive(
    Clone, Copy, Debug, PartialEq, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
struct Aligned {
    a: u8,
    #[npy(padding)]
    _pad0: [u8; 3],
    b: i32,
    c: u8,
    #[npy(padding)]
    _pad1: [u8; 7],
    d: f64,
}

#[test]
fn numpy_align_true_layouts_match_repr_c_with_padding_fields() {
    let array = fixture("rec_aligned.npy");
    let view = array.view::<Aligned>().unwrap();
    let got: Vec<(u8, i32, u8, f64)> = view.iter().map(|r| (r.a, r.b, r.c, r.d)).collect();
    assert_eq!(got, [(1, -3, 5, 0.25), (2, 4, 6, 8.0)]);
    assert_eq!(
        Aligned::dtype().descr(),
        "[('a', '|u1'), ('', '|V3'), ('b', '<i4'), ('c', '|u1'), ('', '|V7'), ('d', '<f8')]"
    );
    // numpy writes whatever its padding bytes hold; the fixture's are zero.
    assert_writes_like_numpy("rec_aligned.npy", &array, view.as_slice().unwrap());
}

/// rec_offsets_itemsize.npy: explicit offsets and itemsize, gaps everywhere.
#[derive(
    Clone, Copy, Debug, PartialEq, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
struct Offsets {
    #[npy(padding)]
    _lead: [u8; 2],
    a: I16<Le>,
    #[npy(padding)]
    _mid: [u8; 4],
    b: I32<Be>,
    #[npy(padding)]
    _tail: [u8; 4],
}

#[test]
fn leading_middle_and_trailing_gaps() {
    let array = fixture("rec_offsets_itemsize.npy");
    let view = array.view::<Offsets>().unwrap();
    let got: Vec<(i16, i32)> = view.iter().map(|r| (r.a.get(), r.b.get())).collect();
    assert_eq!(got, [(1, 70_000), (-1, -70_000), (300, 0)]);
    assert_writes_like_numpy("rec_offsets_itemsize.npy", &array, view.as_slice().unwrap());
}

/// rec_nested.npy: [('a', [('b', '<i2'), ('c', '>f4')]), ('d', '|u1')]
#[derive(
    Clone, Copy, Debug, PartialEq, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
struct Inner {
    b: I16<Le>,
    c: F32<Be>,
}

#[derive(
    Clone, Copy, Debug, PartialEq, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
struct Nested {
    a: Inner,
    d: u8,
}

#[test]
fn nested_records() {
    let array = fixture("rec_nested.npy");
    let view = array.view::<Nested>().unwrap();
    let got: Vec<(i16, f32, u8)> = view
        .iter()
        .map(|r| (r.a.b.get(), r.a.c.get(), r.d))
        .collect();
    assert_eq!(got, [(7, 1.25, 200), (-7, -0.0, 1)]);
    assert_writes_like_numpy("rec_nested.npy", &array, view.as_slice().unwrap());
    // The inner struct alone is not the outer dtype.
    assert!(matches!(
        array.view::<Inner>(),
        Err(npy_core::Error::TypeMismatch { .. })
    ));
}

/// rec_subarray.npy: [('x', '<i4'), ('y', '>f8', (2, 3))]
#[derive(
    Clone, Copy, Debug, PartialEq, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
struct Sub {
    x: I32<Le>,
    y: [[F64<Be>; 3]; 2],
}

/// rec_subarray_nested.npy: [('c', ('<f8', (5,)), (2,)), ('r', [('p', '<i2'), ('q', '|S2')], (2,))]
#[derive(
    Clone, Copy, Debug, PartialEq, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
struct PQ {
    p: I16<Le>,
    q: [u8; 2],
}

#[derive(
    Clone, Copy, Debug, PartialEq, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
struct SubNested {
    c: [[F64<Le>; 5]; 2],
    r: [PQ; 2],
}

#[test]
fn subarray_fields_and_byte_strings() {
    let array = fixture("rec_subarray.npy");
    let view = array.view::<Sub>().unwrap();
    let second = view.get([1]).unwrap();
    let y: Vec<f64> = second.y.iter().flatten().map(|v| v.get()).collect();
    assert_eq!(
        (second.x.get(), y),
        (2, vec![1.5, 1.75, 2.0, 2.25, 2.5, 2.75])
    );
    assert_writes_like_numpy("rec_subarray.npy", &array, view.as_slice().unwrap());

    // numpy keeps the nested subarray ('<f8', (5,)) of shape (2,); it is
    // the same memory as ('<f8', (2, 5)), which is what we write.
    let array = fixture("rec_subarray_nested.npy");
    let view = array.view::<SubNested>().unwrap();
    let second = view.get([1]).unwrap();
    let c: Vec<f64> = second.c.iter().flatten().map(|v| v.get()).collect();
    assert_eq!(c, (10..20).map(f64::from).collect::<Vec<_>>());
    let r: Vec<(i16, [u8; 2])> = second.r.iter().map(|pq| (pq.p.get(), pq.q)).collect();
    assert_eq!(r, [(3, *b"\0\0"), (4, *b"zz")]);
    assert_eq!(
        SubNested::dtype().descr(),
        "[('c', '<f8', (2, 5)), ('r', [('p', '<i2'), ('q', '|S2')], (2,))]"
    );
    let mut file = Vec::new();
    write_npy(
        &mut file,
        &npy_core::ArrayView::from_slice(view.as_slice().unwrap(), &[2], Order::C).unwrap(),
    )
    .unwrap();
    let back = npy_core::io::read_npy(file.as_slice(), &Default::default()).unwrap();
    assert_eq!(back.bytes(), array.bytes());
    assert_eq!(back.view::<SubNested>().unwrap().to_vec(), view.to_vec());
}

/// rec_f_2d.npy: a (2, 3) Fortran array of [('x', '<i4'), ('y', '>f8')]
#[derive(
    Clone, Copy, Debug, PartialEq, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
struct XY {
    x: I32<Le>,
    y: F64<Be>,
}

#[test]
fn fortran_ordered_records_index_logically() {
    let array = fixture("rec_f_2d.npy");
    let view = array.view::<XY>().unwrap();
    assert_eq!(view.shape(), [2, 3]);
    // numpy's values in logical order: x = 0..6, y = -x / 2.
    let got: Vec<(i32, f64)> = view.iter().map(|r| (r.x.get(), r.y.get())).collect();
    let want: Vec<(i32, f64)> = (0..6).map(|i| (i, -f64::from(i) / 2.0)).collect();
    assert_eq!(got, want);
    assert_eq!(view.get([1, 0]).unwrap().x.get(), 3);
    let memory_order = view.as_slice().unwrap();
    assert_writes_like_numpy("rec_f_2d.npy", &array, memory_order);
}

/// rec_big_endian.npy: [('a', '>i4'), ('b', '>f8'), ('c', '<u2'), ('d', '>c8'), ('e', '|b1')]
#[cfg(feature = "num-complex")]
#[derive(Clone, Copy, Debug, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
struct Mixed {
    a: I32<Be>,
    b: F64<Be>,
    c: zerocopy::byteorder::U16<Le>,
    d: npy_core::ext::num_complex::NpyComplex<F32<Be>>,
    e: npy_core::Bool,
}

#[cfg(feature = "num-complex")]
#[test]
fn byte_orders_complex_and_bool_fields() {
    let array = fixture("rec_big_endian.npy");
    let view = array.view::<Mixed>().unwrap();
    let last = view.get([2]).unwrap();
    assert_eq!(
        (last.a.get(), last.b.get(), last.c.get()),
        (i32::MAX, f64::INFINITY, 65535)
    );
    assert!(last.d.re.get().is_nan() && last.e.get());
    let first = view.get([0]).unwrap();
    assert_eq!((first.d.re.get(), first.d.im.get()), (1.0, 2.0));
    assert_writes_like_numpy("rec_big_endian.npy", &array, view.as_slice().unwrap());
}

/// A `bool` field is validated when the view is created, like `bool` arrays.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    npy_core::NpyRecord,
    TryFromBytes,
    IntoBytes,
    Immutable,
    KnownLayout,
)]
#[repr(C)]
struct Flagged {
    flag: bool,
    value: u8,
}

#[test]
fn bool_fields_are_validated() {
    let dtype = Flagged::dtype();
    assert_eq!(dtype.descr(), "[('flag', '|b1'), ('value', '|u1')]");
    let good = [1u8, 7, 0, 8];
    let view = npy_core::ArrayView::<Flagged>::new(&good, &dtype, &[2], Order::C).unwrap();
    assert_eq!(
        view.to_vec(),
        [
            Flagged {
                flag: true,
                value: 7
            },
            Flagged {
                flag: false,
                value: 8
            }
        ]
    );
    let bad = [1u8, 7, 2, 8];
    assert!(matches!(
        npy_core::ArrayView::<Flagged>::new(&bad, &dtype, &[2], Order::C),
        Err(Error::InvalidElement { index: 1, .. })
    ));
}

/// Titles are ignored; `rename` reaches names Rust cannot spell ('' here).
#[derive(
    Clone, Copy, Debug, PartialEq, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
struct Renamed {
    #[npy(rename = "")]
    unnamed: I32<Le>,
    b: F32<Le>,
}

#[derive(
    Clone, Copy, Debug, PartialEq, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
struct Titled(I32<Le>, F32<Be>);

#[test]
fn renamed_titled_and_tuple_structs() {
    let array = fixture("rec_empty_name.npy");
    let got: Vec<(i32, f32)> = array
        .view::<Renamed>()
        .unwrap()
        .iter()
        .map(|r| (r.unnamed.get(), r.b.get()))
        .collect();
    assert_eq!(got, [(9, 0.5), (-9, 2.0)]);
    assert_writes_like_numpy(
        "rec_empty_name.npy",
        &array,
        array.view::<Renamed>().unwrap().as_slice().unwrap(),
    );

    // [(('X title', 'x'), '<i4'), (('Y', 'y'), '>f4')]: a tuple struct is
    // named f0, f1 like numpy's defaults, so it does not match x, y...
    let array = fixture("rec_titles.npy");
    assert_eq!(
        explain_mismatch::<Titled>(&array.header().dtype).unwrap(),
        "field 0 is 'x' in the file, 'f0' in the struct"
    );
    // ...but the same layout with the right names does, titles or not.
    #[derive(Clone, Copy, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout)]
    #[repr(C)]
    struct WithTitles {
        x: I32<Le>,
        y: F32<Be>,
    }
    let got: Vec<(i32, f32)> = array
        .view::<WithTitles>()
        .unwrap()
        .iter()
        .map(|r| (r.x.get(), r.y.get()))
        .collect();
    assert_eq!(got, [(5, 1.5), (6, -1.5)]);
    assert_eq!(Titled::dtype().descr(), "[('f0', '<i4'), ('f1', '>f4')]");
}

#[test]
fn every_kind_of_difference_is_refused_with_a_reason() {
    let aligned = fixture("rec_aligned.npy");
    let dtype = &aligned.header().dtype;
    assert!(explain_mismatch::<Aligned>(dtype).is_none());
    let refused = |descr: &str| {
        let dtype = DType::parse(descr).unwrap();
        assert!(!Aligned::matches(&dtype), "{descr}");
        explain_mismatch::<Aligned>(&dtype).unwrap()
    };
    // Same fields, numpy's packed layout (align=False).
    assert_eq!(
        refused("[('a', '|u1'), ('b', '<i4'), ('c', '|u1'), ('d', '<f8')]"),
        "the file's records are 14 bytes, the struct's 24"
    );
    // Same size, a field moved.
    assert_eq!(
        refused(
            "[('a', '|u1'), ('', '|V3'), ('b', '<i4'), ('', '|V1'), ('c', '|u1'), ('', '|V6'), ('d', '<f8')]"
        ),
        "field 'c' is at byte 9 in the file, 8 in the struct"
    );
    // Byte order, kind, name, count.
    assert_eq!(
        refused(
            "[('a', '|u1'), ('', '|V3'), ('b', '>i4'), ('c', '|u1'), ('', '|V7'), ('d', '<f8')]"
        ),
        "field 'b' is >i4 in the file, <i4 in the struct"
    );
    assert_eq!(
        refused(
            "[('a', '|u1'), ('', '|V3'), ('b', '<f4'), ('c', '|u1'), ('', '|V7'), ('d', '<f8')]"
        ),
        "field 'b' is <f4 in the file, <i4 in the struct"
    );
    assert_eq!(
        refused(
            "[('a', '|u1'), ('', '|V3'), ('B', '<i4'), ('c', '|u1'), ('', '|V7'), ('d', '<f8')]"
        ),
        "field 1 is 'B' in the file, 'b' in the struct"
    );
    assert_eq!(
        refused("[('a', '|u1'), ('', '|V3'), ('b', '<i4'), ('c', '|u1'), ('', '|V15')]"),
        "the file has 3 fields, the struct 4"
    );
    assert_eq!(
        refused(
            "[('a', '|u1'), ('', '|V3'), ('b', '<i4'), ('c', '|u1'), ('', '|V7'), ('d', '<f8'), ('e', '|V0')]"
        ),
        "the file has 5 fields, the struct 4"
    );
    assert_eq!(
        refused("'<f8'"),
        "the file's dtype <f8 is not a structured dtype"
    );
    // A subarray of the wrong shape.
    let sub = DType::parse("[('x', '<i4'), ('y', '>f8', (3, 2))]").unwrap();
    assert_eq!(
        explain_mismatch::<Sub>(&sub).unwrap(),
        "field 'y' is ('>f8', (3, 2)) in the file, ('>f8', (2, 3)) in the struct"
    );
    // And a view says TypeMismatch, naming both dtypes.
    let packed = fixture("rec_simple.npy");
    match packed.view::<Aligned>() {
        Err(Error::TypeMismatch {
            found, requested, ..
        }) => {
            assert_eq!(*found, packed.header().dtype);
            assert_eq!(*requested, Aligned::dtype());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn field_layouts_are_introspectable() {
    let fields: Vec<(&str, usize)> = Aligned::fields()
        .iter()
        .map(|f| (f.name(), f.offset()))
        .collect();
    assert_eq!(fields, [("a", 0), ("b", 4), ("c", 8), ("d", 16)]);
    let y = &Sub::fields()[1];
    assert_eq!(y.dtype(), DType::parse("('>f8', (2, 3))").unwrap());
    assert!(y.matches(&DType::parse("(('>f8', (3,)), (2,))").unwrap()));
    let manual = FieldLayout::new::<u8>("m", 3, &[4]);
    assert_eq!(manual.dtype().descr(), "('|u1', (4,))");
}

/// `#[npy(subarray)]`: a `[u8; N]` field as `('x', '|u1', (N,))` instead of `S<N>`.
#[derive(
    Clone, Copy, Debug, PartialEq, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
struct Bytes {
    text: [u8; 3],
    #[npy(subarray)]
    raw: [u8; 3],
}

#[test]
fn byte_arrays_are_strings_unless_marked() {
    assert_eq!(
        Bytes::dtype().descr(),
        "[('text', '|S3'), ('raw', '|u1', (3,))]"
    );
    let view_bytes = [b'a', b'b', 0, 1, 2, 3];
    let view =
        npy_core::ArrayView::<Bytes>::new(&view_bytes, &Bytes::dtype(), &[1], Order::C).unwrap();
    assert_eq!(
        view.to_vec(),
        [Bytes {
            text: *b"ab\0",
            raw: [1, 2, 3]
        }]
    );
    // V3 reads as a byte string too; a u1 subarray does not read as S3.
    assert!(Bytes::matches(
        &DType::parse("[('text', '|V3'), ('raw', '|u1', (3,))]").unwrap()
    ));
    assert!(!Bytes::matches(
        &DType::parse("[('text', '|u1', (3,)), ('raw', '|u1', (3,))]").unwrap()
    ));
}

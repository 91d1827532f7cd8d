//! Typed and raw views over byte slices, checked against NumPy's indexing semantics.

use npy_core::element::{Bool, Element};
use npy_core::{
    ArrayView, ArrayViewMut, ByteOrder, DType, Error, Field, Header, Order, RawView, Scalar,
    ScalarKind, Structured,
};
use zerocopy::IntoBytes;
use zerocopy::byteorder::{BigEndian, F64, I16, I32, LittleEndian, U16};

fn scalar(kind: ScalarKind, byte_order: ByteOrder, itemsize: usize) -> DType {
    DType::Scalar(Scalar {
        kind,
        byte_order,
        itemsize,
    })
}

fn field(name: &str, offset: usize, dtype: DType) -> Field {
    Field {
        name: name.into(),
        title: None,
        dtype,
        offset,
    }
}

#[test]
fn c_order_index_is_row_major() {
    // np.arange(6, dtype='<i4').reshape(2, 3)
    let memory: Vec<i32> = (0..6).collect();
    let v = ArrayView::<i32>::new(memory.as_bytes(), &i32::dtype(), &[2, 3], Order::C).unwrap();
    assert_eq!(v.shape(), [2, 3]);
    assert_eq!(v.strides(), [3, 1]);
    assert_eq!((v.ndim(), v.len(), v.order()), (2, 6, Order::C));
    assert_eq!(v.get([0, 1]), Some(&1));
    assert_eq!(v.get([1, 0]), Some(&3));
    assert_eq!(v.get([1, 2]), Some(&5));
    assert_eq!(v.get([2, 0]), None);
    assert_eq!(v.get([0, 3]), None);
    assert_eq!(v.get([0]), None);
    assert_eq!(v.get([0, 0, 0]), None);
    assert_eq!(v.to_vec(), [0, 1, 2, 3, 4, 5]);
    assert_eq!(v.as_slice(), Some(&memory[..]));
}

#[test]
fn fortran_order_index_is_column_major() {
    // Memory [0..6] of a (2, 3) F-order array is np.arange(6).reshape(3, 2).T:
    // [[0, 2, 4], [1, 3, 5]].
    let memory: Vec<i32> = (0..6).collect();
    let v =
        ArrayView::<i32>::new(memory.as_bytes(), &i32::dtype(), &[2, 3], Order::Fortran).unwrap();
    assert_eq!(v.strides(), [1, 2]);
    assert_eq!(v.get([0, 1]), Some(&2));
    assert_eq!(v.get([1, 0]), Some(&1));
    assert_eq!(v.get([1, 2]), Some(&5));
    assert_eq!(v.to_vec(), [0, 2, 4, 1, 3, 5]);
    assert_eq!(v.iter().copied().collect::<Vec<_>>(), [0, 2, 4, 1, 3, 5]);
    assert!(v.is_f_contiguous() && !v.is_c_contiguous());
    // as_slice is memory order.
    assert_eq!(v.as_slice(), Some(&memory[..]));
}

#[test]
fn three_d_fortran_matches_numpy() {
    // a = np.arange(24).reshape(4,3,2).T (shape (2,3,4), F-contiguous, memory = 0..24)
    // a[1, 2, 3] == 23, a[1, 0, 0] == 1, a[0, 1, 0] == 2, a[0, 0, 1] == 6
    let memory: Vec<u64> = (0..24).collect();
    let v = ArrayView::<u64>::new(memory.as_bytes(), &u64::dtype(), &[2, 3, 4], Order::Fortran)
        .unwrap();
    assert_eq!(v.get([1, 2, 3]), Some(&23));
    assert_eq!(v.get([1, 0, 0]), Some(&1));
    assert_eq!(v.get([0, 1, 0]), Some(&2));
    assert_eq!(v.get([0, 0, 1]), Some(&6));
    // Logical order: a.ravel() == [0, 6, 12, 18, 2, 8, ...]
    assert_eq!(v.to_vec()[..6], [0, 6, 12, 18, 2, 8]);
}

#[test]
fn outer_slices_work_in_both_orders() {
    let memory: Vec<f64> = (0..12).map(f64::from).collect();
    let c = ArrayView::<f64>::new(memory.as_bytes(), &f64::dtype(), &[4, 3], Order::C).unwrap();
    let rows = c.slice_outer(1..3).unwrap();
    assert_eq!(rows.shape(), [2, 3]);
    assert_eq!(rows.to_vec(), [3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    assert_eq!(rows.as_slice(), Some(&memory[3..9]));
    assert_eq!(rows.get([1, 2]), Some(&8.0));

    let f =
        ArrayView::<f64>::new(memory.as_bytes(), &f64::dtype(), &[4, 3], Order::Fortran).unwrap();
    // a = np.arange(12.).reshape(3, 4).T; a[1:3] == [[1, 5, 9], [2, 6, 10]]
    let rows = f.slice_outer(1..3).unwrap();
    assert_eq!(rows.to_vec(), [1.0, 5.0, 9.0, 2.0, 6.0, 10.0]);
    assert_eq!(rows.get([1, 0]), Some(&2.0));
    assert_eq!(
        rows.as_slice(),
        None,
        "an outer slice of an F array has gaps"
    );
    assert_eq!(rows.slice_outer(1..).unwrap().to_vec(), [2.0, 6.0, 10.0]);
    assert_eq!(f.slice_outer(..).unwrap().to_vec(), f.to_vec());
    assert_eq!(f.slice_outer(4..).unwrap().len(), 0);
    assert_eq!(f.slice_outer(..=0).unwrap().to_vec(), [0.0, 4.0, 8.0]);

    let err = f.slice_outer(2..5).unwrap_err();
    assert!(
        matches!(
            err,
            Error::RangeOutOfBounds {
                start: 2,
                end: 5,
                axis: 0,
                len: 4
            }
        ),
        "{err:?}"
    );
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = f.slice_outer(3..1).unwrap_err();
    assert!(
        matches!(reversed, Error::ReversedRange { start: 3, end: 1 }),
        "{reversed:?}"
    );
    assert_eq!(
        reversed.to_string(),
        "range 3..1 is reversed: its start is past its end"
    );
    let past = f.slice_outer(..=usize::MAX).unwrap_err();
    assert!(
        matches!(
            past,
            Error::RangeOutOfBounds {
                end: usize::MAX,
                ..
            }
        ),
        "{past:?}"
    );
    let scalar = ArrayView::<f64>::new(memory.as_bytes(), &f64::dtype(), &[], Order::C).unwrap();
    assert!(matches!(
        scalar.slice_outer(0..0),
        Err(Error::IndexRank { ndim: 0, given: 1 })
    ));
    assert_eq!(scalar.get([]), Some(&0.0));
}

#[test]
fn misaligned_native_view_is_an_error_and_byteorder_types_are_not() {
    let storage = [1.5f64, 2.5, 0.0];
    let bytes = &storage.as_bytes()[1..17];
    let err = ArrayView::<f64>::new(bytes, &f64::dtype(), &[2], Order::C).unwrap_err();
    match err {
        Error::Misaligned {
            rust_type, align, ..
        } => assert_eq!((rust_type, align), ("f64", 8)),
        other => panic!("{other:?}"),
    }
    let mut aligned = [0f64; 3];
    let err = ArrayViewMut::<f64>::new(
        &mut aligned.as_mut_bytes()[1..17],
        &f64::dtype(),
        &[2],
        Order::C,
    );
    assert!(matches!(err, Err(Error::Misaligned { .. })));

    // The same data through an alignment-1 type.
    let mut shifted = vec![0u8];
    shifted.extend_from_slice(&storage.as_bytes()[..16]);
    let native = scalar(ScalarKind::Float, ByteOrder::NATIVE, 8);
    if ByteOrder::NATIVE == ByteOrder::Little {
        let v =
            ArrayView::<F64<LittleEndian>>::new(&shifted[1..], &native, &[2], Order::C).unwrap();
        assert_eq!(v.iter().map(|x| x.get()).collect::<Vec<_>>(), [1.5, 2.5]);
    }
}

#[test]
fn big_endian_data_views_without_copying() {
    // np.array([1, -2, 3], dtype='>i4').tobytes()
    let bytes = [0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 3];
    let be_i4 = scalar(ScalarKind::Int, ByteOrder::Big, 4);
    let v = ArrayView::<I32<BigEndian>>::new(&bytes, &be_i4, &[3], Order::C).unwrap();
    assert_eq!(v.iter().map(|x| x.get()).collect::<Vec<_>>(), [1, -2, 3]);
    assert_eq!(
        v.as_slice().unwrap().as_bytes().as_ptr(),
        bytes.as_ptr(),
        "no copy"
    );
    // Native i32 refuses big-endian data on a little-endian machine.
    if ByteOrder::NATIVE == ByteOrder::Little {
        assert!(matches!(
            ArrayView::<i32>::new(&bytes, &be_i4, &[3], Order::C),
            Err(Error::TypeMismatch { .. })
        ));
    }
    let mut bytes = bytes;
    let mut m = ArrayViewMut::<I32<BigEndian>>::new(&mut bytes, &be_i4, &[3], Order::C).unwrap();
    m.get_mut([1]).unwrap().set(0x0102_0304);
    assert_eq!(bytes[4..8], [1, 2, 3, 4]);

    let be_u2 = scalar(ScalarKind::UInt, ByteOrder::Big, 2);
    let v = ArrayView::<U16<BigEndian>>::new(&[0x12, 0x34], &be_u2, &[], Order::C).unwrap();
    assert_eq!(v.get([]).unwrap().get(), 0x1234);
}

#[test]
fn data_length_is_checked_and_trailing_bytes_ignored() {
    let data = [0u8; 10];
    let err = ArrayView::<u8>::new(&data, &u8::dtype(), &[11], Order::C).unwrap_err();
    assert!(matches!(
        err,
        Error::DataLength {
            expected: 11,
            actual: 10
        }
    ));
    let v = ArrayView::<u8>::new(&data, &u8::dtype(), &[3, 3], Order::C).unwrap();
    assert_eq!(v.as_slice().unwrap().len(), 9);
}

#[test]
fn from_header_uses_shape_order_and_subarray_dtype() {
    // np.lib.format with descr ('<i2', (2,)) and shape (3,): NumPy's memmap loads shape (3, 2).
    let header = Header {
        dtype: DType::SubArray(Box::new(i16::dtype()), vec![2]),
        order: Order::Fortran,
        shape: vec![3],
    };
    let memory: Vec<i16> = (0..6).collect();
    let v = ArrayView::<i16>::from_header(memory.as_bytes(), &header).unwrap();
    assert_eq!(v.shape(), [3, 2]);
    assert_eq!(v.get([2, 1]), Some(&5));
    assert_eq!(v.to_vec(), [0, 1, 2, 3, 4, 5]);
}

#[test]
fn mutable_views_write_through_in_logical_order() {
    let mut memory = vec![0u32; 6];
    {
        let mut m = ArrayViewMut::<u32>::new(
            memory.as_mut_bytes(),
            &u32::dtype(),
            &[2, 3],
            Order::Fortran,
        )
        .unwrap();
        let mut next = 0;
        m.for_each_mut(|x| {
            *x = next;
            next += 1;
        });
        *m.get_mut([0, 0]).unwrap() = 100;
        assert_eq!(m.get([0, 0]), Some(&100));
        let mut row = m.slice_outer_mut(1..2).unwrap();
        row.fill(7);
        assert_eq!(m.view().to_vec(), [100, 1, 2, 7, 7, 7]);
    }
    // Logical [[0,1,2],[3,4,5]] in F memory is [0,3,1,4,2,5]; then edits.
    assert_eq!(memory, [100, 7, 1, 7, 2, 7]);

    let mut m =
        ArrayViewMut::<u32>::new(memory.as_mut_bytes(), &u32::dtype(), &[6], Order::C).unwrap();
    m.as_slice_mut().unwrap().reverse();
    let rows = m.into_slice_outer(4..).unwrap();
    assert_eq!(rows.into_view().to_vec(), [7, 100]);
}

#[test]
fn bool_views_check_every_byte_once_and_bool_newtype_never() {
    let data = [1u8, 0, 1, 2];
    let err = ArrayView::<bool>::new(&data, &bool::dtype(), &[4], Order::C).unwrap_err();
    assert!(matches!(err, Error::InvalidElement { index: 3, .. }));
    let v = ArrayView::<bool>::new(&data[..3], &bool::dtype(), &[3], Order::C).unwrap();
    assert_eq!(v.to_vec(), [true, false, true]);
    let v = ArrayView::<Bool>::new(&data, &bool::dtype(), &[4], Order::C).unwrap();
    assert!(v.get([3]).unwrap().get());
    assert!(matches!(
        ArrayView::<u8>::new(&data, &bool::dtype(), &[4], Order::C),
        Err(Error::TypeMismatch { .. })
    ));
}

#[test]
fn byte_string_elements() {
    // np.array([b'ab', b'c'], dtype='S3').tobytes()
    let data = *b"ab\0c\0\0";
    let s3 = scalar(ScalarKind::Bytes, ByteOrder::NotApplicable, 3);
    let v = ArrayView::<[u8; 3]>::new(&data, &s3, &[2], Order::C).unwrap();
    assert_eq!(v.to_vec(), [*b"ab\0", *b"c\0\0"]);
}

fn point_dtype() -> DType {
    // np.dtype([('x', '<i2'), ('y', '>f8')], align=True): x at 0, 6 bytes padding, y at 8.
    DType::Structured(Structured {
        fields: vec![
            field("x", 0, scalar(ScalarKind::Int, ByteOrder::Little, 2)),
            field("y", 8, scalar(ScalarKind::Float, ByteOrder::Big, 8)),
        ],
        itemsize: 16,
    })
}

#[test]
fn records_with_padding_and_nesting() {
    // np.dtype([('id', '|u1'), ('pos', point_dtype), ('tags', '|S2', (2,))])
    // id at 0, pos at 1 (16 bytes, unaligned!), tags at 17, itemsize 21 + 3 trailing pad = 24.
    let dtype = DType::Structured(Structured {
        fields: vec![
            field("id", 0, u8::dtype()),
            field("pos", 1, point_dtype()),
            field(
                "tags",
                17,
                DType::SubArray(
                    Box::new(scalar(ScalarKind::Bytes, ByteOrder::NotApplicable, 2)),
                    vec![2],
                ),
            ),
        ],
        itemsize: 24,
    });
    let mut data = vec![0u8; 48];
    for (i, record) in data.chunks_exact_mut(24).enumerate() {
        record[0] = 10 + i as u8;
        record[1..3].copy_from_slice(&(-(i as i16) - 1).to_le_bytes());
        record[3..9].fill(0xAA); // padding garbage
        record[9..17].copy_from_slice(&(0.5 + i as f64).to_be_bytes());
        record[17..21].copy_from_slice(if i == 0 { b"hiyo" } else { b"a\0b\0" });
    }
    let view = RawView::new(&data, &dtype, &[2], Order::C).unwrap();
    assert_eq!(view.shape(), [2]);
    let second = view.get([1]).unwrap();
    assert_eq!(second.bytes().len(), 24);
    assert_eq!(second.field("id").unwrap().read::<u8>().unwrap(), 11);
    let pos = second.field("pos").unwrap();
    assert_eq!(pos.dtype(), &point_dtype());
    assert_eq!(
        pos.field("x")
            .unwrap()
            .read::<zerocopy::byteorder::I16<LittleEndian>>()
            .unwrap()
            .get(),
        -2
    );
    assert_eq!(
        pos.field("y")
            .unwrap()
            .read::<F64<BigEndian>>()
            .unwrap()
            .get(),
        1.5
    );
    assert!(pos.field("z").is_none());
    assert!(second.field("x").is_none(), "no flattening of nested names");
    // Wrong type for a field.
    assert!(matches!(
        pos.field("y").unwrap().read::<f64>(),
        Err(Error::TypeMismatch { .. })
    ));
    // A subarray field as a typed view.
    let tags = view.get([0]).unwrap().field("tags").unwrap();
    let tags = tags.view::<[u8; 2]>().unwrap();
    assert_eq!(tags.shape(), [2]);
    assert_eq!(tags.to_vec(), [*b"hi", *b"yo"]);
    // Field order and names.
    let names: Vec<&str> = second.fields().map(|(name, _)| name).collect();
    assert_eq!(names, ["id", "pos", "tags"]);
    // Iteration and rows.
    let ids: Vec<u8> = view
        .iter()
        .map(|r| r.field("id").unwrap().read::<u8>().unwrap())
        .collect();
    assert_eq!(ids, [10, 11]);
    let tail = view.slice_outer(1..).unwrap();
    assert_eq!(tail.len(), 1);
    assert_eq!(tail.get([0]).unwrap(), second);
}

#[test]
fn record_view_of_fortran_scalars_and_short_data() {
    let memory: Vec<u16> = (0..6).collect();
    let dtype = u16::dtype();
    let view = RawView::new(memory.as_bytes(), &dtype, &[2, 3], Order::Fortran).unwrap();
    let logical: Vec<u16> = view.iter().map(|r| r.read::<u16>().unwrap()).collect();
    assert_eq!(logical, [0, 2, 4, 1, 3, 5]);
    let rows: Vec<u16> = view
        .slice_outer(1..2)
        .unwrap()
        .iter()
        .map(|r| r.read::<u16>().unwrap())
        .collect();
    assert_eq!(rows, [1, 3, 5]);
    assert!(matches!(
        RawView::new(&memory.as_bytes()[..11], &dtype, &[2, 3], Order::C),
        Err(Error::DataLength {
            expected: 12,
            actual: 11
        })
    ));
}

#[test]
fn record_field_titles_are_found_too() {
    let dtype = DType::Structured(Structured {
        fields: vec![Field {
            name: "t".into(),
            title: Some("Temperature".into()),
            dtype: u8::dtype(),
            offset: 0,
        }],
        itemsize: 1,
    });
    let view = RawView::new(&[42], &dtype, &[], Order::C).unwrap();
    let r = view.get([]).unwrap();
    assert_eq!(r.field("Temperature").unwrap().read::<u8>().unwrap(), 42);
    assert_eq!(r.field("t").unwrap().read::<u8>().unwrap(), 42);
}

#[test]
fn error_messages_name_both_dtypes_and_the_alignment() {
    let data = [0f32; 4];
    let err = ArrayView::<f64>::new(data.as_bytes(), &f32::dtype(), &[2], Order::C).unwrap_err();
    assert_eq!(err.to_string(), "cannot view <f4 data as <f8 (f64)");
    let records = DType::parse("[('x', '<i4')]").unwrap();
    let err = ArrayView::<i32>::new(data.as_bytes(), &records, &[4], Order::C).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot view [('x', '<i4')] data as <i4 (i32)"
    );
    let err =
        ArrayView::<f32>::new(&data.as_bytes()[1..5], &f32::dtype(), &[1], Order::C).unwrap_err();
    assert!(err.to_string().contains("needs 4-byte alignment"), "{err}");
}

#[test]
fn foreign_byte_order_errors_say_what_to_do() {
    let data = [0u8; 8];
    let big_i2 = DType::parse(">i2").unwrap();
    let err = ArrayView::<i16>::new(&data, &big_i2, &[4], Order::C).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot view >i2 data as <i2 (i16); the data is BigEndian: view it as \
         zerocopy::byteorder::I16<BigEndian> (any alignment, no copy), or convert it to \
         native byte order first (ReadOptions::to_native, NpyArray::convert_byte_order)"
    );
    // The type it names does read the data.
    let view = ArrayView::<I16<BigEndian>>::new(&data, &big_i2, &[4], Order::C).unwrap();
    assert_eq!(view.len(), 4);
    // No byte-order type for f2: only the conversion is named.
    let big_f2 = DType::parse(">f2").unwrap();
    let little_f2 = DType::parse("<f2").unwrap();
    let message = npy_core::Error::TypeMismatch {
        found: Box::new(big_f2),
        requested: Box::new(little_f2),
        rust_type: "half::f16",
    }
    .to_string();
    assert!(
        message.ends_with("; convert it to native byte order first (ReadOptions::to_native, NpyArray::convert_byte_order)"),
        "{message}"
    );
    // Different kinds get no byte-order advice.
    let err = ArrayView::<u16>::new(&data, &big_i2, &[4], Order::C).unwrap_err();
    assert_eq!(err.to_string(), "cannot view >i2 data as <u2 (u16)");
}

#[test]
fn parsed_aligned_record_with_titles_and_nesting() {
    // np.dtype([('a', 'u1'), (('Title', 'b'), '<i4'), ('c', [('d', '<u2'), ('e', '|S3')])], align=True).descr
    let dtype = DType::parse(
        "[('a', '|u1'), ('', '|V3'), (('Title', 'b'), '<i4'), ('c', [('d', '<u2'), ('e', '|S3'), ('', '|V1')]), ('', '|V2')]",
    )
    .unwrap();
    assert_eq!(dtype.itemsize(), 16);
    let mut record = vec![9u8, 0xAA, 0xAA, 0xAA];
    record.extend_from_slice(&(-5i32).to_le_bytes());
    record.extend_from_slice(&300u16.to_le_bytes());
    record.extend_from_slice(b"ok\0\xAA\xAA\xAA");
    let view = RawView::new(&record, &dtype, &[1], Order::C).unwrap();
    let r = view.get([0]).unwrap();
    assert_eq!(r.field("a").unwrap().read::<u8>().unwrap(), 9);
    assert_eq!(
        r.field("Title")
            .unwrap()
            .read::<zerocopy::byteorder::I32<LittleEndian>>()
            .unwrap()
            .get(),
        -5
    );
    let c = r.field("c").unwrap();
    assert_eq!(c.field("d").unwrap().read::<u16>().unwrap(), 300);
    assert_eq!(c.field("e").unwrap().read::<[u8; 3]>().unwrap(), *b"ok\0");
    assert_eq!(r.value().unwrap().to_string(), "(9, -5, (300, b'ok'))");
}

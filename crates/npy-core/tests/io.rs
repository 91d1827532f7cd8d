//! Streaming read and write against bytes written by `np.save`.

use std::io::{self, Read};

use npy_core::io::{
    AlignedBytes, NpyArray, NpyWriter, ReadOptions, read_data, read_npy, write_npy,
};
use npy_core::swap::convert_byte_order;
use npy_core::{
    ByteOrder, DType, Element, Error, Header, Order, ParseOptions, Scalar, ScalarKind, Value,
};
use zerocopy::byteorder::{BigEndian, I32};

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// A (2, 3) '<i4' header dict: `{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }`.
const HEADER_I4_2X3: &str = "934e554d5059010076007b276465736372273a20273c6934272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a";

/// `np.save(f, np.arange(6, dtype='<i4').reshape(2, 3))`
fn numpy_i4_2x3() -> Vec<u8> {
    hex(&format!(
        "{HEADER_I4_2X3}000000000100000002000000030000000400000005000000"
    ))
}

/// `np.save(f, np.asfortranarray(np.arange(6, dtype='<f8').reshape(2, 3)))`
fn numpy_f8_fortran() -> Vec<u8> {
    hex(
        "934e554d5059010076007b276465736372273a20273c6638272c2027666f727472616e5f6f72646572273a20547275652c20277368617065273a2028322c2033292c207d20202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a00000000000000000000000000000840000000000000f03f000000000000104000000000000000400000000000001440",
    )
}

/// `np.save(f, np.array([1, -2, 3], dtype='>i4'))`
fn numpy_big_i4() -> Vec<u8> {
    hex(
        "934e554d5059010076007b276465736372273a20273e6934272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028332c292c207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a00000001fffffffe00000003",
    )
}

/// `a = np.zeros(2, [('id', 'u1'), ('pos', '>f8', (2,))]); a['id'] = [5, 6];
/// a['pos'] = [[1, 2], [3, 4]]; np.save(f, a)`
fn numpy_records() -> Vec<u8> {
    hex(
        "934e554d5059010076007b276465736372273a205b28276964272c20277c753127292c202827706f73272c20273e6638272c2028322c29295d2c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c292c207d202020202020202020202020202020202020202020202020202020200a053ff000000000000040000000000000000640080000000000004010000000000000",
    )
}

/// A reader that is not `Seek`, returns at most `chunk` bytes per call and
/// is interrupted every other call, like a slow pipe.
struct Trickle<'a> {
    data: &'a [u8],
    chunk: usize,
    calls: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.calls += 1;
        if self.calls.is_multiple_of(2) {
            return Err(io::Error::from(io::ErrorKind::Interrupted));
        }
        let n = buf.len().min(self.chunk).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn reads_numpy_files_in_c_and_fortran_order() {
    let array = read_npy(numpy_i4_2x3().as_slice(), &ReadOptions::default()).unwrap();
    assert_eq!(array.header().shape, [2, 3]);
    assert_eq!(array.layout().data_offset, 128);
    assert_eq!(array.bytes().len(), 24);
    assert_eq!(array.view::<i32>().unwrap().to_vec(), [0, 1, 2, 3, 4, 5]);

    let array = read_npy(numpy_f8_fortran().as_slice(), &ReadOptions::default()).unwrap();
    assert_eq!(array.header().order, Order::Fortran);
    let view = array.view::<f64>().unwrap();
    assert_eq!(view.to_vec(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(view.get([1, 0]), Some(&3.0));
    assert!((array.bytes().as_ptr() as usize).is_multiple_of(16));
}

#[test]
fn reads_from_a_non_seekable_trickling_reader() {
    let file = numpy_f8_fortran();
    let mut reader = Trickle {
        data: &file,
        chunk: 7,
        calls: 0,
    };
    let array = read_npy(&mut reader, &ReadOptions::default()).unwrap();
    assert_eq!(
        array.view::<f64>().unwrap().to_vec(),
        [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    assert!(reader.data.is_empty());
}

#[test]
fn consecutive_arrays_in_one_stream() {
    let mut stream = numpy_i4_2x3();
    stream.extend(numpy_big_i4());
    let mut reader = stream.as_slice();
    let first = read_npy(&mut reader, &ReadOptions::default()).unwrap();
    let second = read_npy(&mut reader, &ReadOptions::default()).unwrap();
    assert_eq!(first.header().shape, [2, 3]);
    assert_eq!(second.header().shape, [3]);
    assert!(reader.is_empty());
}

#[test]
fn big_endian_data_views_directly_or_converts_to_native() {
    let file = numpy_big_i4();
    let array = read_npy(file.as_slice(), &ReadOptions::default()).unwrap();
    let be: Vec<i32> = array
        .view::<I32<BigEndian>>()
        .unwrap()
        .iter()
        .map(|x| x.get())
        .collect();
    assert_eq!(be, [1, -2, 3]);

    let options = ReadOptions {
        to_native: true,
        ..ReadOptions::default()
    };
    let mut native = read_npy(file.as_slice(), &options).unwrap();
    assert_eq!(native.header().dtype, i32::dtype());
    assert_eq!(native.view::<i32>().unwrap().to_vec(), [1, -2, 3]);
    native.view_mut::<i32>().unwrap().fill(9);
    native.convert_byte_order(ByteOrder::Big);
    assert_eq!(native.bytes()[..4], [0, 0, 0, 9]);
    let (header, layout, data) = native.into_parts();
    assert_eq!(header.dtype.descr(), ">i4");
    assert_eq!(layout.data_len, 12);
    assert_eq!(data.len(), 12);
}

#[test]
fn records_from_a_stream() {
    let array = read_npy(numpy_records().as_slice(), &ReadOptions::default()).unwrap();
    let records = array.raw_view().unwrap();
    let second = records.get([1]).unwrap();
    assert_eq!(second.field("id").unwrap().read::<u8>().unwrap(), 6);
    assert_eq!(
        second.field("pos").unwrap().value().unwrap(),
        Value::SubArray(vec![2], vec![Value::Float(3.0), Value::Float(4.0)])
    );
    assert_eq!(second.value().unwrap().to_string(), "(6, [3.0, 4.0])");
}

#[test]
fn truncated_data_uses_numpys_message() {
    let mut file = numpy_i4_2x3();
    file.truncate(file.len() - 5);
    let err = read_npy(file.as_slice(), &ReadOptions::default()).unwrap_err();
    assert!(matches!(
        err,
        Error::TruncatedData {
            count: 6,
            read: 4,
            ..
        }
    ));
    assert_eq!(
        err.to_string(),
        "Failed to read all data for array. Expected (2, 3) = 6 elements, \
         could only read 4 elements. (file seems not fully written?)"
    );
}

/// A big-endian record array of 7-byte elements, a little over 3 MiB: the
/// pieces converted on the way do not end on element boundaries.
fn big_endian_records() -> (Header, Vec<u8>) {
    let header = Header {
        dtype: DType::parse("[('a', '>i4'), ('b', '>u2'), ('c', 'u1')]").unwrap(),
        order: Order::C,
        shape: vec![450_001],
    };
    let data: Vec<u8> = (0..header.data_len().unwrap())
        .map(|i| (i * 31 % 251) as u8)
        .collect();
    (header, data)
}

#[test]
fn conversion_on_the_way_matches_converting_afterwards() {
    let (header, data) = big_endian_records();
    let mut file = Vec::new();
    write_npy(&mut file, &npy_core::NpyBytes::new(&header, &data).unwrap()).unwrap();
    let mut expected = data.clone();
    let native = convert_byte_order(&header.dtype, &mut expected, ByteOrder::NATIVE);
    assert_ne!(expected, data, "the conversion changes bytes");

    let options = ReadOptions {
        to_native: true,
        ..ReadOptions::default()
    };
    let mut reader = Trickle {
        data: &file,
        chunk: 100_003,
        calls: 0,
    };
    let array = read_npy(&mut reader, &options).unwrap();
    assert_eq!(array.header().dtype, native);
    assert!(
        array.bytes() == expected.as_slice(),
        "read_npy converted every element once"
    );

    let mut stream = file.as_slice();
    let npy_core::ParsedHeader {
        header: parsed,
        layout,
    } = Header::read_from(&mut stream, &ParseOptions::default()).unwrap();
    let mut dest = vec![0; layout.data_len];
    let dtype = read_data(&mut stream, &parsed, &mut dest, Some(ByteOrder::NATIVE)).unwrap();
    assert_eq!(dtype, native);
    assert!(dest == expected, "read_data converted every element once");
    assert!(stream.is_empty());
}

#[test]
fn read_data_checks_the_destination_and_the_stream() {
    let file = numpy_big_i4();
    let mut stream = file.as_slice();
    let npy_core::ParsedHeader { header, .. } =
        Header::read_from(&mut stream, &ParseOptions::default()).unwrap();
    let data = stream;

    let mut dest = [0u8; 12];
    let dtype = read_data(data, &header, &mut dest, None).unwrap();
    assert_eq!(dtype.header_repr(), "'>i4'");
    assert_eq!(&dest, data, "no conversion asked: the bytes as stored");

    let error = read_data(data, &header, &mut [0u8; 11], None).unwrap_err();
    assert!(matches!(
        error,
        Error::DataLength {
            expected: 12,
            actual: 11
        }
    ));
    let error = read_data(&data[..9], &header, &mut dest, Some(ByteOrder::Little)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Failed to read all data for array. Expected (3,) = 3 elements, \
         could only read 2 elements. (file seems not fully written?)"
    );
}

/// Memory owned elsewhere: bytes `.1` of some 16-byte words (a range
/// starting at 1 is never 16-byte aligned).
struct Words(Vec<u128>, std::ops::Range<usize>);

impl AsRef<[u8]> for Words {
    fn as_ref(&self) -> &[u8] {
        &zerocopy::IntoBytes::as_bytes(self.0.as_slice())[self.1.clone()]
    }
}

impl AsMut<[u8]> for Words {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut zerocopy::IntoBytes::as_mut_bytes(self.0.as_mut_slice())[self.1.clone()]
    }
}

#[test]
fn arrays_from_parts_and_memory_owned_elsewhere() {
    let header = Header {
        dtype: u16::dtype(),
        order: Order::C,
        shape: vec![2],
    };
    let mut file = Vec::new();
    write_npy(
        &mut file,
        &npy_core::ArrayView::from_slice(&[0u16, 0], &[2], Order::C).unwrap(),
    )
    .unwrap();
    let npy_core::ParsedHeader { layout, .. } =
        Header::parse(&file, &ParseOptions::default()).unwrap();

    let misaligned = AlignedBytes::from_owner(Words(vec![0; 1], 1..16)).unwrap_err();
    assert_eq!(misaligned.as_ref().len(), 15, "given back untouched");

    let owned = AlignedBytes::from_owner(Words(vec![0; 1], 0..16))
        .ok()
        .unwrap();
    let error = NpyArray::from_parts(header.clone(), layout, owned).unwrap_err();
    assert!(matches!(
        error,
        Error::DataLength {
            expected: 4,
            actual: 16
        }
    ));

    let mut owned = AlignedBytes::from_owner(Words(vec![0; 1], 0..4))
        .ok()
        .unwrap();
    assert_eq!(owned.len(), 4);
    owned.copy_from_slice(&[1, 0, 2, 0]);
    let array = NpyArray::from_parts(header, layout, owned).unwrap();
    let expected = [u16::from_ne_bytes([1, 0]), u16::from_ne_bytes([2, 0])];
    assert_eq!(array.view::<u16>().unwrap().to_vec(), expected);
}

#[test]
fn writes_exactly_what_numpy_writes() {
    let mut out = Vec::new();
    write_npy(
        &mut out,
        &npy_core::ArrayView::from_slice(&[0i32, 1, 2, 3, 4, 5], &[2, 3], Order::C).unwrap(),
    )
    .unwrap();
    assert_eq!(out, numpy_i4_2x3());

    let mut out = Vec::new();
    // Fortran data is given in memory order.
    write_npy(
        &mut out,
        &npy_core::ArrayView::from_slice(
            &[0.0f64, 3.0, 1.0, 4.0, 2.0, 5.0],
            &[2, 3],
            Order::Fortran,
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(out, numpy_f8_fortran());

    let big = DType::Scalar(Scalar {
        kind: ScalarKind::Int,
        byte_order: ByteOrder::Big,
        itemsize: 4,
    });
    let header = Header {
        dtype: big,
        order: Order::C,
        shape: vec![3],
    };
    let mut out = Vec::new();
    write_npy(
        &mut out,
        &npy_core::NpyBytes::new(&header, &hex("00000001fffffffe00000003")).unwrap(),
    )
    .unwrap();
    assert_eq!(out, numpy_big_i4());
}

#[test]
fn write_length_is_checked_before_writing() {
    let header = Header {
        dtype: i32::dtype(),
        order: Order::C,
        shape: vec![2, 3],
    };
    // The sources check their length when they are made, before any writer.
    let err = npy_core::NpyBytes::new(&header, &[0; 23]).unwrap_err();
    assert!(matches!(
        err,
        Error::DataLength {
            expected: 24,
            actual: 23
        }
    ));
    assert!(matches!(
        npy_core::ArrayView::from_slice(&[1u8, 2], &[3], Order::C),
        Err(Error::DataLength {
            expected: 3,
            actual: 2
        })
    ));
    // A source that lies about its length is caught by the writer.
    let mut out = Vec::new();
    let err = write_npy(
        &mut out,
        &Lying {
            header,
            data: vec![0; 28],
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            Error::DataLength {
                expected: 24,
                actual: 28
            }
        ),
        "{err}"
    );
}

/// A source whose data is not what its header describes.
struct Lying {
    header: Header,
    data: Vec<u8>,
}

impl npy_core::NpySource for Lying {
    fn npy_header(&self) -> Header {
        self.header.clone()
    }

    fn npy_data(&self) -> npy_core::Result<npy_core::DataChunks<'_>> {
        Ok(Box::new(std::iter::once(std::borrow::Cow::Borrowed(
            &self.data[..],
        ))))
    }
}

#[test]
fn streaming_writer_checks_counts_and_types() {
    let header = Header {
        dtype: i32::dtype(),
        order: Order::C,
        shape: vec![2, 3],
    };
    let mut writer = NpyWriter::new(Vec::new(), &header, None).unwrap();
    writer.write_elements(&[0i32, 1]).unwrap();
    assert!(matches!(
        writer.write_elements(&[0i64]),
        Err(Error::TypeMismatch { .. })
    ));
    writer.write_bytes(&2i32.to_le_bytes()).unwrap();
    assert_eq!((writer.written(), writer.remaining()), (12, 12));
    assert!(matches!(
        writer.write_elements(&[3i32, 4, 5, 6]),
        Err(Error::DataLength {
            expected: 24,
            actual: 28
        })
    ));
    assert_eq!(writer.written(), 12, "a rejected chunk writes nothing");
    writer.write_elements(&[3i32, 4, 5]).unwrap();
    assert_eq!(writer.finish().unwrap(), numpy_i4_2x3());

    let short = NpyWriter::new(Vec::new(), &header, None).unwrap();
    assert!(matches!(
        short.finish(),
        Err(Error::DataLength {
            expected: 24,
            actual: 0
        })
    ));
}

#[test]
fn round_trip_through_a_stream() {
    let data: Vec<u16> = (0..1000).collect();
    let mut file = Vec::new();
    write_npy(
        &mut file,
        &npy_core::ArrayView::from_slice(&data, &[10, 100], Order::C).unwrap(),
    )
    .unwrap();
    let array = read_npy(
        Trickle {
            data: &file,
            chunk: 333,
            calls: 0,
        },
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(array.view::<u16>().unwrap().as_slice(), Some(&data[..]));
    assert_eq!(
        array
            .view::<u16>()
            .unwrap()
            .slice_outer(9..)
            .unwrap()
            .to_vec(),
        data[900..]
    );
}

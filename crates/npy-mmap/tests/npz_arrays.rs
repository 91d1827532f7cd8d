//! Arrays through the npz writer and reader: round trips, streaming, views
//! straight into the archive bytes, alignment, and length checks.
#![cfg(feature = "npz")]

mod common;

use npy_mmap::ErrorKind;
use std::io::{Cursor, Write};

use npy_core::io::AlignedBytes;
use npy_core::{ArrayView, Element, Header, Order};
use npy_mmap::npz::{Compression, Member, NpzArchive, NpzWriter};
use zerocopy::IntoBytes;
use zerocopy::byteorder::{F64, LittleEndian};

const BOTH: [Compression; 2] = [Compression::Stored, Compression::DEFLATED];

fn write(compression: Compression, build: impl FnOnce(&mut NpzWriter<Cursor<Vec<u8>>>)) -> Vec<u8> {
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    writer.set_compression(compression).unwrap();
    build(&mut writer);
    writer.into_inner().unwrap().into_inner()
}

#[test]
fn slices_round_trip_with_dtype_and_shape() {
    let floats: Vec<f64> = (0..600).map(|i| i as f64 * 0.5 - 3.0).collect();
    let ints: Vec<i32> = (0..24).map(|i| i * i - 50).collect();
    for compression in BOTH {
        let bytes = write(compression, |w| {
            w.add(
                "floats",
                &npy_core::ArrayView::from_slice(&floats, &[20, 30], npy_core::Order::C).unwrap(),
            )
            .unwrap();
            w.add(
                "group/ints",
                &npy_core::ArrayView::from_slice(&ints, &[2, 3, 4], npy_core::Order::C).unwrap(),
            )
            .unwrap();
            w.add(
                "empty",
                &npy_core::ArrayView::<u8>::from_slice(&[], &[0, 5], npy_core::Order::C).unwrap(),
            )
            .unwrap();
        });
        let mut archive = NpzArchive::new(Cursor::new(bytes)).unwrap();
        assert_eq!(archive.keys(), ["floats", "group/ints", "empty"]);
        let loaded = archive.load("floats").unwrap();
        assert_eq!(loaded.header().shape, [20, 30]);
        assert_eq!(loaded.header().dtype, f64::dtype());
        assert_eq!(loaded.view::<f64>().unwrap().to_vec(), floats);
        let loaded = archive.load("group/ints.npy").unwrap();
        assert_eq!(
            loaded.view::<i32>().unwrap().get([1, 2, 3]),
            Some(&ints[23])
        );
        let empty = archive.load("empty").unwrap();
        assert_eq!(empty.header().shape, [0, 5]);
        assert!(empty.bytes().is_empty());
    }
}

#[test]
fn views_keep_their_memory_order() {
    let data: Vec<f32> = (0..6).map(|i| i as f32).collect();
    // Memory [0..6] read as a 2x3 Fortran array: logical rows [0, 2, 4], [1, 3, 5].
    let fortran =
        ArrayView::<f32>::new(data.as_bytes(), &f32::dtype(), &[2, 3], Order::Fortran).unwrap();
    let bytes = write(Compression::Stored, |w| w.add("f", &fortran).unwrap());
    let mut archive = NpzArchive::new(Cursor::new(bytes)).unwrap();
    let header = archive.header("f").unwrap().header;
    assert_eq!(header.order, Order::Fortran);
    let loaded = archive.load("f").unwrap();
    assert_eq!(
        loaded.view::<f32>().unwrap().to_vec(),
        [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]
    );
}

#[test]
fn chunked_members_stream_into_the_archive() {
    let header = Header {
        dtype: u16::dtype(),
        order: Order::C,
        shape: vec![300_000],
    };
    let values: Vec<u16> = (0..300_000u32).map(|i| (i % 65_521) as u16).collect();
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    for compression in BOTH {
        let bytes = write(compression, |w| {
            let mut member = w.start_array("c", &header).unwrap();
            for piece in raw.chunks(4099) {
                std::io::Write::write_all(&mut member, piece).unwrap();
            }
            member.finish().unwrap();
        });
        let mut archive = NpzArchive::new(Cursor::new(bytes)).unwrap();
        assert_eq!(
            archive.load("c").unwrap().view::<u16>().unwrap().to_vec(),
            values
        );
    }
}

#[test]
fn data_length_must_match_the_header() {
    let header = Header {
        dtype: i64::dtype(),
        order: Order::C,
        shape: vec![4],
    };
    for compression in BOTH {
        let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
        writer.set_compression(compression).unwrap();
        let error = writer
            .add(
                "short",
                &common::Lying {
                    header: header.clone(),
                    data: vec![0; 31],
                },
            )
            .unwrap_err();
        assert!(
            matches!(
                error.kind(),
                ErrorKind::Format(npy_core::Error::DataLength {
                    expected: 32,
                    actual: 31,
                })
            ),
            "{error}"
        );
        // Too much data: refused before it is written, with the length it
        // would have reached.
        let error = writer
            .add(
                "long",
                &common::Lying {
                    header: header.clone(),
                    data: vec![0; 40],
                },
            )
            .unwrap_err();
        assert!(
            matches!(
                error.kind(),
                ErrorKind::Format(npy_core::Error::DataLength {
                    expected: 32,
                    actual: 40,
                })
            ),
            "{error}"
        );
        assert_eq!(error.member(), Some("long.npy"));
        let mut member = writer.start_array("long", &header).unwrap();
        let error = member.write_all(&[0; 33]).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("more data than the header's 32 bytes"),
            "{error}"
        );
        drop(member);
        // Neither failed member is in the archive; the names are free again.
        writer
            .add(
                "short",
                &npy_core::NpyBytes::new(&header, &[1; 32]).unwrap(),
            )
            .unwrap();
        let mut archive =
            NpzArchive::new(Cursor::new(writer.into_inner().unwrap().into_inner())).unwrap();
        assert_eq!(archive.keys(), ["short"]);
        assert_eq!(archive.load("short").unwrap().bytes(), [1; 32]);
    }
}

#[test]
fn get_returns_arrays_and_raw_bytes_like_numpy() {
    let bytes = write(Compression::Stored, |w| {
        w.add("a", &[1i8, 2, 3][..]).unwrap();
        w.add_raw_member("meta", b"not an array").unwrap();
    });
    let mut archive = NpzArchive::new(Cursor::new(bytes)).unwrap();
    assert!(matches!(archive.get("a").unwrap(), Member::Array(a) if a.bytes() == [1, 2, 3]));
    assert_eq!(
        archive.get("meta").unwrap(),
        Member::Raw(b"not an array".to_vec())
    );
    let error = archive.load("meta").unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::NotNpy), "{error}");
}

#[test]
fn positional_arrays_are_named_like_savez() {
    let bytes = write(Compression::Stored, |w| {
        w.add("kw", &[0u8][..]).unwrap();
        for value in [10u8, 11] {
            let key = w.next_positional_key().unwrap();
            w.add(&key, &[value][..]).unwrap();
        }
        let error = w.add("arr_1", &[0u8][..]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "Cannot use un-named variables and keyword arr_1"
        );
    });
    let mut archive = NpzArchive::new(Cursor::new(bytes)).unwrap();
    assert_eq!(archive.keys(), ["kw", "arr_0", "arr_1"]);
    assert_eq!(archive.load("arr_1").unwrap().bytes(), [11]);
}

#[test]
fn stored_views_point_into_the_archive_bytes() {
    let values: Vec<f64> = (0..1000).map(|i| i as f64 / 7.0).collect();
    let bytes = write(Compression::Stored, |w| {
        w.add_raw_member("odd name to shift things", b"123")
            .unwrap();
        w.add(
            "v",
            &npy_core::ArrayView::from_slice(&values, &[10, 100], npy_core::Order::C).unwrap(),
        )
        .unwrap();
    });
    // An aligned copy of the archive, as a page-aligned mapping would be.
    let archive_bytes = AlignedBytes::copy_from(&bytes);
    let mut archive = NpzArchive::from_bytes(&archive_bytes).unwrap();
    let view = archive.view::<f64>("v").unwrap();
    assert_eq!(view.shape(), [10, 100]);
    assert_eq!(view.get([3, 4]), Some(&values[304]));
    let slice = view.as_slice().unwrap();
    let range = archive_bytes.as_ptr_range();
    assert!(
        range.contains(&slice.as_ptr().cast()),
        "the view is zero-copy"
    );
    let offset = slice.as_ptr() as usize - archive_bytes.as_ptr() as usize;
    assert_eq!(
        offset % 64,
        0,
        "array data is 64-byte aligned in the archive"
    );
    let wrong_type = archive.view::<f32>("v").unwrap_err();
    assert!(wrong_type.to_string().contains("'v.npy'"), "{wrong_type}");
}

#[test]
fn misaligned_data_says_so_and_unaligned_views_work() {
    let values = [1.5f64, -2.25, 1e300];
    let bytes = write(Compression::Stored, |w| {
        w.add(
            "v",
            &npy_core::ArrayView::from_slice(&values, &[3], npy_core::Order::C).unwrap(),
        )
        .unwrap()
    });
    // Shift the whole archive by one byte off an aligned base.
    let mut shifted = vec![0u8];
    shifted.extend_from_slice(&bytes);
    let aligned = AlignedBytes::copy_from(&shifted);
    let mut archive = NpzArchive::from_bytes(&aligned[1..]).unwrap();
    let error = archive.view::<f64>("v").unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Format(npy_core::Error::Misaligned { align: 8, .. })
        ),
        "{error}"
    );
    assert!(error.to_string().contains("'v.npy'"));
    let unaligned = archive.view::<F64<LittleEndian>>("v").unwrap();
    let read: Vec<f64> = unaligned.iter().map(|v| v.get()).collect();
    assert_eq!(read, values);
}

#[test]
fn header_limit_applies_to_members() {
    // A structured dtype with many fields makes a header over 10000 characters.
    let fields: Vec<String> = (0..800)
        .map(|i| format!("('field_{i:04}', '<i1')"))
        .collect();
    let dtype = npy_core::DType::parse(&format!("[{}]", fields.join(", "))).unwrap();
    let header = Header {
        dtype,
        order: Order::C,
        shape: vec![1],
    };
    let bytes = write(Compression::DEFLATED, |w| {
        w.add(
            "wide",
            &npy_core::NpyBytes::new(&header, &[7; 800]).unwrap(),
        )
        .unwrap();
    });
    let mut strict = NpzArchive::new(Cursor::new(bytes.clone())).unwrap();
    let error = strict.load("wide").unwrap_err();
    assert!(error.to_string().contains("wide.npy"), "{error}");
    let options = npy_core::ReadOptions {
        parse: npy_core::ParseOptions {
            max_header_size: 100_000,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut relaxed = npy_mmap::OpenOptions::from(options)
        .read_npz(Cursor::new(bytes))
        .unwrap();
    assert_eq!(relaxed.load("wide").unwrap().bytes(), [7; 800]);
}

#[test]
fn finish_makes_a_path_archive_appear_and_a_dropped_writer_leaves_none() {
    let dir = common::TempDir::new("npz-finish");
    let path = dir.join("out.npz");
    let mut writer = NpzWriter::create(&path).unwrap();
    writer.add("a", &[1u8, 2, 3][..]).unwrap();
    drop(writer); // never finished
    assert!(dir.entries().is_empty(), "{:?}", dir.entries());

    let mut writer = NpzWriter::create(&path).unwrap();
    writer.add("a", &[1u8, 2, 3][..]).unwrap();
    writer.finish().unwrap(); // the name both peer crates use
    let mut archive = npy_mmap::OpenOptions::new().open_npz(&path).unwrap();
    assert_eq!(archive.load("a").unwrap().bytes(), [1, 2, 3]);
    assert_eq!(dir.entries(), ["out.npz"]);
}

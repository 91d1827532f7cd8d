//! Property tests: for any dtype (records nested a few levels, titles,
//! padding, strings, datetimes, subarrays, either byte order), any small
//! shape (0-d and zero-size included) and either memory order,
//!
//! * `write_npy` → `read_npy` gives back the same header and data bytes;
//! * header encode → parse is the identity, in every version that can hold it;
//! * `DType::descr` → `DType::parse` is the identity;
//! * random byte mutations and truncations of valid files never panic the
//!   header parser or the stream reader.
//!
//! Bounded to a few seconds: 256 cases per property, shapes of at most 3
//! dimensions of at most 4, data of at most 64 KiB per case.

use npy_core::{
    DType, Field, Header, Order, ParseOptions, ReadOptions, Structured, Version, read_npy,
    write_npy,
};
use proptest::prelude::*;
use proptest::sample::select;

const TIME_UNITS: [&str; 13] = [
    "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as",
];

/// Field names that stress quoting and encoding (quotes, backslash,
/// control characters, latin-1 and non-latin-1 text), and the empty name.
const NAMES: [&str; 12] = [
    "a",
    "x1",
    "it's",
    "q\"uote",
    "back\\slash",
    "café",
    "名前",
    "",
    "f0",
    "tab\t",
    "new\nline",
    "sp ace",
];

fn byte_order() -> impl Strategy<Value = char> {
    select(vec!['<', '>'])
}

/// A type string NumPy writes, parsed: every scalar kind, both byte orders,
/// zero-size strings and voids, datetime units with multiples.
fn scalar() -> impl Strategy<Value = DType> {
    let text = prop_oneof![
        Just("|b1".to_owned()),
        (
            byte_order(),
            select(vec!['i', 'u']),
            select(vec![1, 2, 4, 8])
        )
            .prop_map(|(o, k, n)| format!("{o}{k}{n}")),
        (byte_order(), select(vec![2, 4, 8, 16])).prop_map(|(o, n)| format!("{o}f{n}")),
        (byte_order(), select(vec![8, 16, 32])).prop_map(|(o, n)| format!("{o}c{n}")),
        (0..7usize).prop_map(|n| format!("|S{n}")),
        (byte_order(), 0..4usize).prop_map(|(o, n)| format!("{o}U{n}")),
        (0..7usize).prop_map(|n| format!("|V{n}")),
        (
            byte_order(),
            select(vec!['M', 'm']),
            proptest::option::of((
                select(vec![1u32, 1, 2, 10, 250]),
                select(TIME_UNITS.to_vec())
            )),
        )
            .prop_map(|(o, k, unit)| match unit {
                None => format!("{o}{k}8"),
                Some((multiple, unit)) => format!("{o}{k}8[{multiple}{unit}]"),
            }),
    ];
    text.prop_map(|t| DType::parse(&t).unwrap_or_else(|e| panic!("{t}: {e}")))
}

/// Whether NumPy reads an entry of this type named `''` as padding: its
/// `dtype.type` is `np.void` without fields (void scalars and every subarray).
fn reads_as_padding(dtype: &DType) -> bool {
    match dtype {
        DType::Scalar(s) => s.kind == npy_core::ScalarKind::Void,
        DType::SubArray(..) => true,
        _ => false,
    }
}

/// A structured record from field types: distinct names (and titles),
/// increasing offsets with random gaps, and tail padding.
fn record(fields: Vec<(DType, usize, bool)>, names: Vec<usize>, tail: usize) -> DType {
    let mut used: Vec<String> = Vec::new();
    let mut offset = 0;
    let mut out = Vec::new();
    for (i, (dtype, gap, titled)) in fields.into_iter().enumerate() {
        let mut name = NAMES[names[i % names.len()] % NAMES.len()].to_owned();
        // An unnamed void or subarray entry is padding, not a field (as in
        // NumPy's descr_to_dtype); and names are unique.
        if (name.is_empty() && reads_as_padding(&dtype)) || used.contains(&name) {
            name = format!("f{i}_{}", used.len());
        }
        used.push(name.clone());
        let title = titled.then(|| format!("title {i} of {name}"));
        if let Some(t) = &title {
            used.push(t.clone());
        }
        offset += gap;
        let size = dtype.itemsize();
        out.push(Field {
            name,
            title,
            dtype,
            offset,
        });
        offset += size;
    }
    DType::Structured(Structured {
        fields: out,
        itemsize: offset + tail,
    })
}

/// Any dtype: scalars, records nested up to three levels, subarrays of
/// scalars or records.
fn dtype() -> impl Strategy<Value = DType> {
    scalar().prop_recursive(3, 24, 4, |inner| {
        let not_subarray = inner.clone().prop_map(|d| match d {
            DType::SubArray(base, _) => *base,
            d => d,
        });
        prop_oneof![
            (not_subarray, proptest::collection::vec(1..4usize, 1..3))
                .prop_map(|(base, shape)| DType::SubArray(Box::new(base), shape)),
            (
                proptest::collection::vec((inner, 0..4usize, proptest::bool::weighted(0.2)), 0..4),
                proptest::collection::vec(0..NAMES.len(), 1..5),
                0..4usize,
            )
                .prop_map(|(fields, names, tail)| record(fields, names, tail)),
        ]
    })
}

fn header() -> impl Strategy<Value = Header> {
    (
        dtype(),
        select(vec![Order::C, Order::Fortran]),
        proptest::collection::vec(0..5usize, 0..4),
    )
        .prop_map(|(dtype, order, shape)| Header::new(dtype, order, shape))
        .prop_filter("at most 64 KiB of data", |h| {
            h.data_len().is_ok_and(|n| n <= 1 << 16)
        })
}

/// A header with data bytes of exactly the right length.
fn array() -> impl Strategy<Value = (Header, Vec<u8>)> {
    header().prop_flat_map(|h| {
        let len = h.data_len().unwrap();
        (Just(h), proptest::collection::vec(any::<u8>(), len))
    })
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn write_then_read_gives_back_header_and_bytes((header, data) in array()) {
        let mut file = Vec::new();
        write_npy(&mut file, &npy_core::NpyBytes::new(&header, &data).unwrap()).unwrap();
        let encoded = header.to_bytes(None).unwrap();
        prop_assert_eq!(&file[..encoded.len()], &encoded[..]);
        prop_assert_eq!(encoded.len() % 64, 0);
        let options = ReadOptions {
            parse: ParseOptions { max_header_size: usize::MAX, ..Default::default() },
            ..ReadOptions::default()
        };
        let array = read_npy(file.as_slice(), &options).unwrap();
        prop_assert_eq!(array.header(), &header);
        prop_assert_eq!(array.bytes(), &data[..]);
        prop_assert_eq!(array.layout().data_offset, encoded.len());
    }

    #[test]
    fn header_encode_then_parse_is_the_identity(header in header()) {
        let unlimited = ParseOptions { max_header_size: usize::MAX, ..Default::default() };
        let mut encoded_any = false;
        for version in [None, Some(Version::V1), Some(Version::V2), Some(Version::V3)] {
            // V1/V2 refuse non-latin-1 names and V1 refuses long headers.
            let Ok(bytes) = header.to_bytes(version) else {
                prop_assert!(version.is_some(), "automatic version must always encode");
                continue;
            };
            encoded_any = true;
            let npy_core::ParsedHeader { header: parsed, layout } = Header::parse(&bytes, &unlimited).unwrap();
            prop_assert_eq!(&parsed, &header);
            prop_assert_eq!(layout.data_offset, bytes.len());
            if let Some(v) = version {
                prop_assert_eq!(layout.version, v);
            }
            // Parsing the stream form agrees with parsing the slice.
            let npy_core::ParsedHeader { header: streamed, .. } = Header::read_from(&mut bytes.as_slice(), &unlimited).unwrap();
            prop_assert_eq!(&streamed, &header);
        }
        prop_assert!(encoded_any);
    }

    #[test]
    fn descr_then_parse_is_the_identity(dtype in dtype()) {
        let descr = dtype.descr();
        let parsed = DType::parse(&descr).unwrap_or_else(|e| panic!("{descr}: {e}"));
        prop_assert_eq!(&parsed, &dtype, "{}", descr);
        prop_assert_eq!(parsed.descr(), descr);
        // The header's quoted form and Display/FromStr agree with it.
        prop_assert_eq!(DType::parse(&dtype.header_repr()).unwrap(), dtype.clone());
        prop_assert_eq!(dtype.to_string(), dtype.descr());
        prop_assert_eq!(dtype.descr().parse::<DType>().unwrap(), dtype);
    }

    #[test]
    fn mutated_files_never_panic(
        (header, data) in array(),
        mutations in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        let mut file = Vec::new();
        write_npy(&mut file, &npy_core::NpyBytes::new(&header, &data).unwrap()).unwrap();
        for &(at, value) in &mutations {
            let at = at % file.len();
            file[at] = value;
        }
        for bytes in [&file[..], &file[..cut % (file.len() + 1)]] {
            if let Ok(npy_core::ParsedHeader { layout, .. }) = Header::parse(bytes, &ParseOptions::default()) {
                prop_assert!(layout.data_offset <= bytes.len());
            }
            let _ = Header::read_from(&mut &bytes[..], &ParseOptions::default());
            for to_native in [false, true] {
                let options = ReadOptions { to_native, ..ReadOptions::default() };
                if let Ok(array) = read_npy(bytes, &options) {
                    prop_assert_eq!(array.bytes().len(), array.layout().data_len);
                    prop_assert!(array.layout().data_end() <= bytes.len());
                }
            }
        }
    }
}

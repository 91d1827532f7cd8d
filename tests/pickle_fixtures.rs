//! Object arrays (`dtype=object`) written by numpy, decoded by the restricted
//! unpickler through every reader, and compared with what
//! `np.load(allow_pickle=True)` gave (manifest sections `object` and
//! `object_npz`, see `scripts/gen_fixtures.py`).

mod support;

use npy_core::pickle::{Encoding, PyValue};
use npy_core::{NpyArray, ReadOptions, read_npy};
use serde_json::Value;
use support::{array_json, fixture_bytes, fixtures_dir, manifest, native, sets_sorted};

fn section(name: &str) -> Vec<Value> {
    manifest()[name]
        .as_array()
        .unwrap_or_else(|| panic!("manifest has no {name} list"))
        .clone()
}

fn encoding(name: &str) -> Encoding {
    match name {
        "ASCII" => Encoding::Ascii,
        "latin1" => Encoding::Latin1,
        "bytes" => Encoding::Bytes,
        other => panic!("unknown encoding {other}"),
    }
}

fn allowing(encoding: Encoding) -> ReadOptions {
    let mut options = ReadOptions::default();
    options.parse.allow_pickle = true;
    options.pickle.encoding = encoding;
    options
}

/// Checks one read against numpy's answer for that encoding; returns a
/// description of the disagreement, if any.
fn disagreement(numpy: &Value, ours: Result<NpyArray, String>) -> Option<String> {
    match ours {
        Ok(array) if numpy.get("array").is_some() => {
            let ours = sets_sorted(&array_json(&array));
            let numpy = sets_sorted(&numpy["array"]);
            (ours != numpy).then(|| format!("ours {ours}\nnumpy {numpy}"))
        }
        Ok(_) => Some(format!("decoded what numpy refuses: {numpy}")),
        // A self-referencing list is not a tree: refused, saying why.
        Err(e) if numpy["self_reference"] == true && e.contains("holds itself") => None,
        // numpy's UnicodeDecodeError for Python 2 strings under 'ASCII'.
        Err(e) if numpy.get("error").is_some() && e.contains("'ascii' codec can't decode") => None,
        Err(e) => Some(format!("refused: {e}; numpy: {numpy}")),
    }
}

fn check_all(what: &str, read: impl Fn(&str, &ReadOptions) -> Result<NpyArray, String>) {
    let mut problems = Vec::new();
    let mut checked = 0;
    for entry in section("object") {
        let file = entry["file"].as_str().expect("file");
        for (name, numpy) in entry["loads"].as_object().expect("loads") {
            checked += 1;
            if let Some(problem) = disagreement(numpy, read(file, &allowing(encoding(name)))) {
                problems.push(format!("{file} ({name}): {problem}"));
            }
        }
    }
    assert!(checked >= 20, "{what}: only {checked} reads checked");
    assert!(problems.is_empty(), "{what}:\n{}", problems.join("\n\n"));
}

#[test]
fn read_npy_decodes_what_numpy_loads() {
    check_all("read_npy", |file, options| {
        read_npy(fixture_bytes(file).as_slice(), options).map_err(|e| e.to_string())
    });
}

#[test]
fn load_decodes_what_numpy_loads() {
    check_all("OpenOptions::load", |file, options| {
        npy_mmap::OpenOptions::from(*options)
            .load(fixtures_dir().join(file))
            .map_err(|e| e.to_string())
    });
}

#[test]
fn object_arrays_are_refused_by_default_with_numpys_wording() {
    for entry in section("object") {
        let file = entry["file"].as_str().expect("file");
        let numpy = entry["default_error"]["message"]
            .as_str()
            .expect("numpy refuses");
        let bytes = fixture_bytes(file);
        let error = read_npy(bytes.as_slice(), &ReadOptions::default()).unwrap_err();
        assert!(error.to_string().starts_with(numpy), "{file}: {error}");
        let error = npy_mmap::load(fixtures_dir().join(file)).unwrap_err();
        assert!(error.to_string().contains(numpy), "{file}: {error}");
        // Mapping is refused whatever the options, in numpy's words.
        let error = npy_mmap::open(fixtures_dir().join(file)).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("Array can't be memory-mapped: Python objects in dtype."),
            "{file}: {error}"
        );
    }
}

#[test]
fn a_record_with_an_object_field_is_refused_clearly() {
    let bytes = fixture_bytes("bad/record_object_field.npy");
    let error = read_npy(bytes.as_slice(), &allowing(Encoding::Ascii)).unwrap_err();
    assert!(matches!(error, npy_core::Error::ObjectField), "{error}");
    assert!(
        error
            .to_string()
            .contains("object fields are not supported")
    );
}

#[test]
fn npz_members_decode_like_numpy() {
    let mut checked = 0;
    for archive in section("object_npz") {
        let file = archive["file"].as_str().expect("file");
        let path = fixtures_dir().join(file);
        let mut npz = npy_mmap::OpenOptions::from(allowing(Encoding::Ascii))
            .open_npz(&path)
            .unwrap();
        let mut by_default = npy_mmap::OpenOptions::new().open_npz(&path).unwrap();
        for (key, numpy) in archive["members"].as_object().expect("members") {
            checked += 1;
            let array = npz
                .load(key)
                .unwrap_or_else(|e| panic!("{file}:{key}: {e}"));
            assert_eq!(
                sets_sorted(&array_json(&array)),
                sets_sorted(&numpy["array"]),
                "{file}:{key}"
            );
            let default = by_default.load(key);
            match array.objects() {
                Some(_) => {
                    let error = default.unwrap_err().to_string();
                    assert!(error.contains("Object arrays cannot be loaded"), "{error}");
                }
                None => assert_eq!(default.unwrap(), array),
            }
        }
    }
    assert!(checked >= 5);
}

/// Everything decoded is written back (`write_array`) and reads back equal;
/// numpy loading our files is in the live interop suite.
#[test]
fn decoded_arrays_round_trip_through_write_array() {
    let mut checked = 0;
    for entry in section("object") {
        let file = entry["file"].as_str().expect("file");
        let options = allowing(Encoding::Latin1);
        let Ok(array) = read_npy(fixture_bytes(file).as_slice(), &options) else {
            continue;
        };
        let mut written = Vec::new();
        npy_core::write_npy(&mut written, &array).unwrap();
        let back = read_npy(written.as_slice(), &options).unwrap();
        assert_eq!(back.header(), array.header(), "{file}");
        let expected: Vec<PyValue> = array.objects().unwrap().iter().map(native).collect();
        assert_eq!(back.objects(), Some(expected.as_slice()), "{file}");
        checked += 1;
    }
    assert!(checked >= 18, "only {checked} round trips");
}

/// A stream may hold several arrays: reading an object array stops where its
/// pickle ends, so the next array reads normally.
#[test]
fn read_npy_stops_at_the_end_of_the_pickle() {
    let first = fixture_bytes("object/obj_issue_example.npy");
    let second = fixture_bytes("f8_c_2d.npy");
    let stream = [first.as_slice(), second.as_slice()].concat();
    let mut reader = stream.as_slice();
    let options = allowing(Encoding::Ascii);
    let objects = read_npy(&mut reader, &options).unwrap();
    assert_eq!(objects.objects().map(<[_]>::len), Some(9));
    assert_eq!(
        objects.layout().data_offset + objects.layout().data_len,
        first.len()
    );
    let floats = read_npy(&mut reader, &options).unwrap();
    assert_eq!(floats.view::<f64>().unwrap().get([1, 0]), Some(&4.5));
    assert!(reader.is_empty());
}

/// `ReadOptions::max_data_len` bounds an object array's pickle like any
/// array's data: a longer pickle is refused after reading one byte more
/// than allowed, never decoded past it.
#[test]
fn max_data_len_bounds_the_pickle() {
    let bytes = fixture_bytes("object/obj_kinds.npy");
    let pickle_len = bytes.len() - 128;
    let mut options = allowing(Encoding::Ascii);
    options.max_data_len = Some(pickle_len);
    let array = read_npy(bytes.as_slice(), &options).unwrap();
    assert_eq!(array.layout().data_len, pickle_len);
    for max in [0, 100, pickle_len - 1] {
        options.max_data_len = Some(max);
        let error = read_npy(bytes.as_slice(), &options).unwrap_err();
        assert!(
            matches!(error, npy_core::Error::DataTooLarge { max: m, .. } if m == max),
            "{max}: {error}"
        );
        let error = npy_mmap::OpenOptions::from(options)
            .load(fixtures_dir().join("object/obj_kinds.npy"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("ReadOptions::max_data_len"), "{error}");
    }
}

//! Every numpy-written fixture, memory-mapped: the mapping shows numpy's data
//! at numpy's offsets, and every malformed file is refused with numpy's
//! words (what `np.load(mmap_mode='r')` says, or what its header check says).
//! The same files read into memory with `npy_mmap::load` give what npy-core's
//! stream reader gives.

mod support;

use npy_mmap::{Error, OpenOptions};
use serde_json::Value;
use support::{data_is_c_le, fixtures_dir, manifest, temp_dir, to_hex};

fn entries(section: &str) -> Vec<Value> {
    manifest()[section]
        .as_array()
        .unwrap_or_else(|| panic!("manifest has no {section} list"))
        .clone()
}

fn number(entry: &Value, key: &str) -> usize {
    entry[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} in {entry}"))
        .try_into()
        .unwrap()
}

/// Whether `message` holds the first line of what numpy's `call` said about
/// the malformed fixture `entry`, or one of the phrases the manifest expects.
fn says_what_numpy_says(entry: &Value, call: &str, message: &str) -> bool {
    let numpy_words = entry["errors"][call]["message"]
        .as_str()
        .map(|m| m.lines().next().unwrap_or(m));
    let phrases = entry["expect"].as_array().into_iter().flatten();
    numpy_words.is_some_and(|words| message.contains(words))
        || phrases
            .filter_map(Value::as_str)
            .any(|p| message.contains(p))
}

fn open_options(entry: &Value) -> OpenOptions {
    let mut options = OpenOptions::new();
    if let Some(max) = entry["max_header_size"].as_u64() {
        options.max_header_size(max.try_into().unwrap());
    }
    options
}

#[test]
fn every_fixture_maps_to_numpys_data() {
    let mut failures = Vec::new();
    let npy = entries("npy");
    assert!(npy.len() > 50, "the manifest lists the fixtures");
    for entry in &npy {
        let file = entry["file"].as_str().unwrap();
        let path = fixtures_dir().join(file);
        let bytes = std::fs::read(&path).unwrap();
        let array = match open_options(entry).open(&path) {
            Ok(array) => array,
            Err(e) => {
                failures.push(format!("{file}: {e}"));
                continue;
            }
        };
        let (offset, nbytes) = (number(entry, "data_offset"), number(entry, "nbytes"));
        let shape: Vec<usize> = entry["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        let mut check = |what: &str, ok: bool| {
            if !ok {
                failures.push(format!("{file}: {what}"));
            }
        };
        check("shape", array.shape() == shape);
        check(
            "fortran_order",
            (array.order() == npy_core::Order::Fortran)
                == entry["fortran_order"].as_bool().unwrap(),
        );
        check("data offset", array.layout().data_offset == offset);
        check(
            "data bytes",
            array.bytes() == &bytes[offset..offset + nbytes],
        );
        check(
            "trailing bytes",
            array.trailing_bytes() == number(entry, "trailing_bytes") as u64,
        );
        if data_is_c_le(array.header()) {
            check(
                "c_le_hex",
                to_hex(array.bytes()) == entry["c_le_hex"].as_str().unwrap(),
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures:\n{}",
        failures.len(),
        npy.len(),
        failures.join("\n")
    );
}

#[test]
fn every_malformed_fixture_is_refused_in_every_mode_with_numpys_words() {
    let mut failures = Vec::new();
    let dir = temp_dir("mmap-fixtures-bad");
    for entry in entries("bad") {
        let file = entry["file"].as_str().unwrap();
        // A private copy: r+ must not be able to touch the fixture, and
        // numpy's r+ would even extend a short file (we refuse).
        let path = dir.join(file.replace('/', "_"));
        std::fs::copy(fixtures_dir().join(file), &path).unwrap();
        let results: [(&str, Result<(), Error>); 3] = [
            ("r", OpenOptions::new().open(&path).map(drop)),
            ("r+", OpenOptions::new().open_rw(&path).map(drop)),
            ("c", OpenOptions::new().open_cow(&path).map(drop)),
        ];
        for (mode, result) in results {
            match result {
                Ok(()) => failures.push(format!("{file} ({mode}): accepted a file numpy refuses")),
                Err(e) => {
                    let message = e.to_string();
                    if !says_what_numpy_says(&entry, "np.load(mmap_mode='r')", &message) {
                        failures.push(format!(
                            "{file} ({mode}): {message:?} lacks numpy's wording"
                        ));
                    }
                }
            }
        }
        let original = std::fs::read(fixtures_dir().join(file)).unwrap();
        if std::fs::read(&path).unwrap() != original {
            failures.push(format!("{file}: a refused open changed the file"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_fixture_loads_like_the_stream_reader_reads_it() {
    let mut failures = Vec::new();
    for entry in entries("npy") {
        let file = entry["file"].as_str().unwrap();
        let path = fixtures_dir().join(file);
        for to_native in [false, true] {
            let mut options = npy_core::io::ReadOptions {
                to_native,
                ..Default::default()
            };
            if let Some(max) = entry["max_header_size"].as_u64() {
                options.parse.max_header_size = max.try_into().unwrap();
            }
            let streamed = std::fs::File::open(&path)
                .map_err(npy_core::Error::from)
                .and_then(|f| npy_core::io::read_npy(f, &options));
            match (npy_mmap::OpenOptions::from(options).load(&path), streamed) {
                (Ok(loaded), Ok(streamed)) => {
                    if loaded != streamed {
                        failures.push(format!("{file} (to_native {to_native}): differs"));
                    }
                }
                (loaded, streamed) => failures.push(format!(
                    "{file} (to_native {to_native}): load {:?}, read_npy {:?}",
                    loaded.err(),
                    streamed.err()
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_malformed_fixture_is_refused_by_load_with_numpys_words() {
    let mut failures = Vec::new();
    for entry in entries("bad") {
        let file = entry["file"].as_str().unwrap();
        match npy_mmap::load(fixtures_dir().join(file)) {
            Ok(_) => failures.push(format!("{file}: accepted a file numpy refuses")),
            Err(e) => {
                let message = e.to_string();
                if !says_what_numpy_says(&entry, "np.load", &message) {
                    failures.push(format!("{file}: {message:?} lacks numpy's wording"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn load_refuses_a_short_file_before_allocating_what_it_claims() {
    let dir = temp_dir("mmap-fixtures-load-short");
    let path = dir.join("claims-a-terabyte.npy");
    let header = npy_core::Header {
        dtype: npy_core::DType::parse("<f8").unwrap(),
        order: npy_core::Order::C,
        shape: vec![1 << 37],
    };
    let mut bytes = header.to_bytes(None).unwrap();
    bytes.extend_from_slice(&[0; 100]);
    std::fs::write(&path, &bytes).unwrap();
    let error = npy_mmap::load(&path).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{}: Failed to read all data for array. Expected (137438953472,) = 137438953472 \
             elements, could only read 12 elements. (file seems not fully written?)",
            path.display()
        )
    );
}

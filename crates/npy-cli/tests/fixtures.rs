//! The binary over the numpy-written fixtures in `tests/fixtures/`, checked
//! against numpy's own answers in `manifest.json` (no Python needed).

mod common;

use std::ffi::OsStr;

use common::{assert_exit, fixtures, npy, stderr, stdout};
use serde_json::Value;

fn manifest() -> Value {
    let text = std::fs::read_to_string(fixtures().join("manifest.json")).expect("manifest.json");
    serde_json::from_str(&text).expect("manifest.json is JSON")
}

fn entries<'a>(manifest: &'a Value, section: &str) -> &'a [Value] {
    manifest[section].as_array().expect("a list of entries")
}

#[test]
fn info_json_agrees_with_numpy_on_every_fixture() {
    let manifest = manifest();
    for entry in entries(&manifest, "npy") {
        let file = entry["file"].as_str().unwrap();
        let output = npy([
            OsStr::new("info"),
            OsStr::new("--json"),
            fixtures().join(file).as_os_str(),
        ]);
        assert_exit(&output, 0);
        let info: Value = serde_json::from_str(&stdout(&output)).expect("one JSON object");
        for key in [
            "version",
            "shape",
            "fortran_order",
            "itemsize",
            "nbytes",
            "header_len",
            "data_offset",
            "file_size",
            "trailing_bytes",
        ] {
            assert_eq!(info[key], entry[key], "{file}: {key}");
        }
        // A scalar descr is numpy's quoted type string.
        let descr = entry["descr"].as_str().unwrap();
        if let Some(inner) = descr.strip_prefix('\'').and_then(|d| d.strip_suffix('\'')) {
            assert_eq!(info["descr"], inner, "{file}");
        } else {
            assert!(info["descr"].is_array(), "{file}: {}", info["descr"]);
        }
    }
}

#[test]
fn info_text_shows_the_descr_numpy_writes() {
    let manifest = manifest();
    for entry in entries(&manifest, "npy") {
        let file = entry["file"].as_str().unwrap();
        let output = npy([OsStr::new("info"), fixtures().join(file).as_os_str()]);
        assert_exit(&output, 0);
        let text = stdout(&output);
        let dtype_line = text
            .lines()
            .find(|line| line.starts_with("dtype:"))
            .unwrap_or_else(|| panic!("{file}: no dtype line in\n{text}"));
        assert_eq!(
            dtype_line.trim_start_matches("dtype:").trim(),
            entry["descr"].as_str().unwrap(),
            "{file}"
        );
    }
}

#[test]
fn validate_rejects_every_bad_fixture_with_numpys_wording() {
    let manifest = manifest();
    for entry in entries(&manifest, "bad") {
        let file = entry["file"].as_str().unwrap();
        let output = npy([OsStr::new("validate"), fixtures().join(file).as_os_str()]);
        // (Records with object fields are not decoded at all: still refused.)
        if entry["errors"]["np.load"]["message"]
            == "Object arrays cannot be loaded when allow_pickle=False"
            && file != "bad/record_object_field.npy"
        {
            // Valid files numpy only declines to unpickle: valid, with a
            // note that the pickle was not decoded (issue 24).
            assert_exit(&output, 0);
            assert!(stderr(&output).contains("were not decoded"), "{file}");
            continue;
        }
        assert_exit(&output, 1);
        let report = stdout(&output);
        assert_eq!(report.lines().count(), 1, "{file}: {report}");
        if let Some(expect) = entry["expect"].as_array() {
            assert!(
                expect.iter().any(|e| report.contains(e.as_str().unwrap())),
                "{file}: {report} does not contain any of {expect:?}"
            );
        }
    }
}

#[test]
fn validate_accepts_numpys_files_and_flags_what_numpy_tolerates() {
    let manifest = manifest();
    for entry in entries(&manifest, "npy") {
        let file = entry["file"].as_str().unwrap();
        let path = fixtures().join(file);
        let needs = entry.get("max_header_size").and_then(Value::as_u64);
        let trailing = entry["trailing_bytes"].as_u64().unwrap();
        let output = npy([OsStr::new("validate"), path.as_os_str()]);
        if let Some(needs) = needs {
            assert_exit(&output, 1);
            assert!(stdout(&output).contains("max_header_size"), "{file}");
            let raised = needs.to_string();
            let output = npy([
                OsStr::new("validate"),
                OsStr::new("--max-header-size"),
                OsStr::new(&raised),
                path.as_os_str(),
            ]);
            assert_exit(&output, 0);
        } else if trailing > 0 {
            // numpy and the library ignore bytes after the data: a note, not
            // a problem, unless asked to be strict.
            assert_exit(&output, 0);
            assert!(stderr(&output).contains("trailing bytes"), "{file}");
            let strict = npy([
                OsStr::new("validate"),
                OsStr::new("--strict"),
                path.as_os_str(),
            ]);
            assert_exit(&strict, 1);
            assert!(stdout(&strict).contains("trailing bytes"), "{file}");
        } else {
            assert_exit(&output, 0);
        }
    }
}

/// numpy 2.4's `print(np.load(path))` for a selection of fixtures.
#[test]
fn show_prints_like_numpy() {
    let cases: [(&str, &str); 10] = [
        (
            "f8_c_2d.npy",
            "[[ 0.5  1.5  2.5  3.5]\n [ 4.5  5.5  6.5  7.5]\n [ 8.5  9.5 10.5 11.5]]\n",
        ),
        (
            "M8_ns_be.npy",
            "['2262-04-11T23:47:16.854775807'                           'NaT'\n '1677-09-21T00:12:43.145224193']\n",
        ),
        (
            "c16_be.npy",
            "[ 0. +0.j   -0. +0.j    1.5-2.25j  nan+1.j   -inf +infj  0.1+0.2j ]\n",
        ),
        ("U3_be.npy", "['' 'a' 'été' '日本' '😀x' 'a\\x00b' '𝄞']\n"),
        (
            "V4.npy",
            "[b'\\x01\\x02\\x03\\x04' b'\\x00\\x00\\x00\\x00' b'\\xFF\\x00\\xFE\\x00']\n",
        ),
        (
            "f16_be.npy",
            "[ 0.00000000e+000 -0.00000000e+000  1.50000000e+000 -2.25000000e+000\n              inf             -inf              nan  1.00000000e+300\n  4.94065646e-324  1.00000000e-001]\n",
        ),
        (
            "rec_strings_times.npy",
            "[(b'ab', 'é', '2024-01-01T00:00:00.001',    -5, b'\\x01\\x02',  1.5)\n (b'xyz', '😀',                     'NaT', 'NaT', b'\\xFE\\xFF', -2. )]\n",
        ),
        (
            "rec_subarray_nested.npy",
            "[([[ 0.,  1.,  2.,  3.,  4.], [ 5.,  6.,  7.,  8.,  9.]], [(1, b'ab'), (2, b'c')])\n ([[10., 11., 12., 13., 14.], [15., 16., 17., 18., 19.]], [(3, b''), (4, b'zz')])]\n",
        ),
        ("rec_0d.npy", "(-2, nan)\n"),
        ("U2_f_2d.npy", "[['a' 'bc' 'é']\n ['日' '' 'zz']]\n"),
    ];
    for (file, expected) in cases {
        let output = npy([OsStr::new("show"), fixtures().join(file).as_os_str()]);
        assert_exit(&output, 0);
        assert_eq!(stdout(&output), expected, "{file}");
    }
}

#[test]
fn show_selects_rows_like_a_python_slice() {
    let path = fixtures().join("f8_c_2d.npy");
    let show = |extra: &[&str]| {
        let mut args = vec![OsStr::new("show"), path.as_os_str()];
        args.extend(extra.iter().map(OsStr::new));
        let output = npy(&args);
        assert_exit(&output, 0);
        stdout(&output)
    };
    assert_eq!(show(&["--rows", "1:2"]), "[[4.5 5.5 6.5 7.5]]\n");
    assert_eq!(show(&["--rows", "-1:"]), "[[ 8.5  9.5 10.5 11.5]]\n");
    assert_eq!(show(&["--limit", "1"]), "[[0.5 1.5 2.5 3.5]]\n");
    assert_eq!(
        show(&["--rows", "1:", "--limit", "1"]),
        "[[4.5 5.5 6.5 7.5]]\n"
    );
    assert_eq!(show(&["--rows", "1:1"]), "[]\n");
    // Past the rows: refused (issue 24), where a Python slice prints [].
    let output = npy([
        OsStr::new("show"),
        path.as_os_str(),
        OsStr::new("--rows"),
        OsStr::new("5:9"),
    ]);
    assert_exit(&output, 1);
    assert!(stderr(&output).contains("range 5..9 is out of bounds for axis 0 with size 3"));
    // Fortran order is read element by element in logical order.
    let output = npy([
        OsStr::new("show"),
        fixtures().join("f8_f_2d.npy").as_os_str(),
    ]);
    let expected = npy([
        OsStr::new("show"),
        fixtures().join("f8_c_2d.npy").as_os_str(),
    ]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), stdout(&expected));
}

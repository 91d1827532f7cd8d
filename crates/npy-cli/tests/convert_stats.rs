//! `npy convert` (byte-identical to np.save of the result) and `npy stats`.

mod common;

use std::ffi::OsStr;

use common::{assert_exit, fixtures, npy, scratch, stderr, stdout};

/// Pairs of numpy-written fixtures holding the same values in two layouts:
/// converting the first must give the second byte for byte.
const PAIRS: [(&str, &str, &[&str]); 14] = [
    ("f8_c_2d", "f8_f_2d", &["--order", "F"]),
    ("f8_f_2d", "f8_c_2d", &["--order", "C"]),
    ("f4_c_3d", "f4_f_3d", &["--order", "F"]),
    ("f8_le", "f8_be", &["--byte-order", "big"]),
    ("f8_be", "f8_le", &["--byte-order", "little"]),
    ("i2_le", "i2_be", &["--byte-order", "big"]),
    ("u2_le", "u2_be", &["--byte-order", "big"]),
    ("i8_le", "i8_be", &["--byte-order", "big"]),
    ("f2_le", "f2_be", &["--byte-order", "big"]),
    ("c8_le", "c8_be", &["--byte-order", "big"]),
    ("c16_le", "c16_be", &["--byte-order", "big"]),
    ("c32_le", "c32_be", &["--byte-order", "big"]),
    ("f16_le", "f16_be", &["--byte-order", "big"]),
    ("U3_le", "U3_be", &["--byte-order", "big"]),
];

#[test]
fn conversions_match_numpys_files_byte_for_byte() {
    let dir = scratch("conversions_match_numpys_files_byte_for_byte");
    for (from, to, options) in PAIRS {
        let out = dir.join(format!("{from}-to-{to}.npy"));
        let mut args = vec![OsStr::new("convert"), OsStr::new(""), out.as_os_str()];
        let input = fixtures().join(format!("{from}.npy"));
        args[1] = input.as_os_str();
        args.extend(options.iter().map(OsStr::new));
        let output = npy(&args);
        assert_exit(&output, 0);
        let expected = std::fs::read(fixtures().join(format!("{to}.npy"))).unwrap();
        assert!(
            std::fs::read(&out).unwrap() == expected,
            "{from} {options:?} differs from {to}"
        );
    }
    // Nothing but the outputs is left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), PAIRS.len());
}

#[test]
fn memory_order_round_trips_and_versions_are_honoured() {
    let dir = scratch("memory_order_round_trips_and_versions_are_honoured");
    let original = fixtures().join("rec_f_2d.npy");
    let c = dir.join("c.npy");
    let back = dir.join("back.npy");
    assert_exit(
        &npy([
            OsStr::new("convert"),
            original.as_os_str(),
            c.as_os_str(),
            OsStr::new("--order"),
            OsStr::new("C"),
        ]),
        0,
    );
    assert_exit(
        &npy([
            OsStr::new("convert"),
            c.as_os_str(),
            back.as_os_str(),
            OsStr::new("--order"),
            OsStr::new("F"),
        ]),
        0,
    );
    assert_eq!(
        std::fs::read(&back).unwrap(),
        std::fs::read(&original).unwrap()
    );

    let v2 = dir.join("v2.npy");
    assert_exit(
        &npy([
            OsStr::new("convert"),
            original.as_os_str(),
            v2.as_os_str(),
            OsStr::new("--version"),
            OsStr::new("2"),
        ]),
        0,
    );
    let bytes = std::fs::read(&v2).unwrap();
    assert_eq!(&bytes[6..8], b"\x02\x00");
    let info = npy([OsStr::new("info"), OsStr::new("--json"), v2.as_os_str()]);
    let info: serde_json::Value = serde_json::from_str(&stdout(&info)).unwrap();
    assert_eq!(info["version"], "2.0");
    assert_eq!(info["data_offset"].as_u64().unwrap() % 64, 0);
}

#[test]
fn a_truncated_input_is_refused_and_nothing_is_written() {
    let dir = scratch("a_truncated_input_is_refused_and_nothing_is_written");
    let out = dir.join("out.npy");
    let output = npy([
        OsStr::new("convert"),
        fixtures().join("bad/truncated_data.npy").as_os_str(),
        out.as_os_str(),
        OsStr::new("--order"),
        OsStr::new("F"),
    ]);
    assert_exit(&output, 1);
    assert!(stderr(&output).contains("truncated"), "{}", stderr(&output));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

fn stats_json(file: &str) -> serde_json::Value {
    let output = npy([
        OsStr::new("stats"),
        OsStr::new("--json"),
        fixtures().join(file).as_os_str(),
    ]);
    assert_exit(&output, 0);
    serde_json::from_str(&stdout(&output)).unwrap()
}

// Expected values are numpy's nanmin/nanmax/nanmean/nanstd of the same files.
#[test]
fn stats_match_numpy() {
    let i2 = stats_json("i2_be.npy");
    assert_eq!(i2["count"], 8);
    assert_eq!(i2["nan"], 0);
    assert_eq!(i2["min"], -32768);
    assert_eq!(i2["max"], 32767);
    assert_eq!(i2["mean"], -2714.375);
    assert!((i2["std"].as_f64().unwrap() - 20436.869965441747).abs() < 1e-9);

    let u8 = stats_json("u8_le.npy");
    assert_eq!(u8["max"], u64::MAX);

    let f4 = stats_json("f4_c_3d.npy");
    assert_eq!(
        (f4["min"].clone(), f4["max"].clone(), f4["mean"].clone()),
        (
            serde_json::json!(-11.25),
            serde_json::json!(11.75),
            serde_json::json!(0.25)
        )
    );
    assert!((f4["std"].as_f64().unwrap() - 6.922186552431729).abs() < 1e-12);

    // NaN is counted; infinities are values (numpy: nanmin -inf, nanmean nan).
    let f8 = stats_json("f8_be.npy");
    assert_eq!(f8["count"], 16);
    assert_eq!(f8["nan"], 1);
    assert_eq!(f8["min"], "-inf");
    assert_eq!(f8["max"], "inf");
}

#[test]
fn stats_refuses_non_numeric_arrays() {
    for file in ["rec_simple.npy", "U3_le.npy", "M8_ms_le.npy"] {
        let output = npy([OsStr::new("stats"), fixtures().join(file).as_os_str()]);
        assert_exit(&output, 1);
        assert!(
            stderr(&output).starts_with("npy: error: stats "),
            "{file}: {}",
            stderr(&output)
        );
    }
}

/// `npy create` writes what numpy's `open_memmap(mode='w+')` writes (the
/// bytes of np.save of zeros), sparse unless --reserve.
#[test]
fn create_writes_numpys_bytes_for_zeros() {
    let dir = scratch("create_writes_numpys_bytes_for_zeros");
    let create = |name: &str, extra: &[&str]| {
        let path = dir.join(name);
        let mut args = vec![OsStr::new("create"), path.as_os_str()];
        args.extend(extra.iter().map(OsStr::new));
        (npy(&args), path)
    };
    // numpy: np.save(np.zeros((3, 4))) is 128 header bytes + 96 zero bytes.
    let (output, path) = create("zeros.npy", &["--dtype", "<f8", "--shape", "3,4"]);
    assert_exit(&output, 0);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(
        &bytes[..128],
        &common::npy_bytes(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }",
            20,
            &[]
        )[..]
    );
    assert_eq!(bytes.len(), 128 + 96);
    assert!(bytes[128..].iter().all(|b| *b == 0));

    let (output, path) = create(
        "records.npy",
        &[
            "--dtype",
            "[('x', '<i4'), ('y', '>f8', (2, 3))]",
            "--shape",
            "2",
            "--reserve",
        ],
    );
    assert_exit(&output, 0);
    let info = npy([OsStr::new("info"), OsStr::new("--json"), path.as_os_str()]);
    let info: serde_json::Value = serde_json::from_str(&stdout(&info)).unwrap();
    assert_eq!(
        info["descr"],
        serde_json::json!([["x", "<i4"], ["y", ">f8", [2, 3]]])
    );
    assert_eq!(info["shape"], serde_json::json!([2]));
    assert_eq!(info["nbytes"], 104);

    let (output, path) = create("scalar.npy", &["--dtype", "|S7", "--shape", ""]);
    assert_exit(&output, 0);
    let shown = npy([OsStr::new("show"), path.as_os_str()]);
    assert_eq!(stdout(&shown), "np.bytes_(b'')\n");

    let (output, path) = create(
        "fortran.npy",
        &["--dtype", "<i2", "--shape", "2,3", "--order", "F"],
    );
    assert_exit(&output, 0);
    let info = npy([OsStr::new("info"), OsStr::new("--json"), path.as_os_str()]);
    let info: serde_json::Value = serde_json::from_str(&stdout(&info)).unwrap();
    assert_eq!(info["fortran_order"], true);
}

#[test]
fn create_refuses_existing_files_and_unknown_dtypes() {
    let dir = scratch("create_refuses_existing_files_and_unknown_dtypes");
    let path = dir.join("exists.npy");
    std::fs::write(&path, b"precious").unwrap();
    let output = npy([
        OsStr::new("create"),
        path.as_os_str(),
        OsStr::new("--dtype"),
        OsStr::new("<f8"),
        OsStr::new("--shape"),
        OsStr::new("1"),
    ]);
    assert_exit(&output, 1);
    assert!(stderr(&output).contains("exists"), "{}", stderr(&output));
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");

    let output = npy([
        OsStr::new("create"),
        dir.join("new.npy").as_os_str(),
        OsStr::new("--dtype"),
        OsStr::new("<x8"),
        OsStr::new("--shape"),
        OsStr::new("1"),
    ]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("not understood"),
        "{}",
        stderr(&output)
    );
    assert!(!dir.join("new.npy").exists());
}

/// Runs `npy` with `args`, which must fail with a message containing `text`.
#[track_caller]
fn assert_refused(args: &[&OsStr], text: &str) {
    let output = npy(args);
    assert_exit(&output, 1);
    assert!(stderr(&output).contains(text), "{}", stderr(&output));
}

fn stats_of(args: &[&OsStr]) -> serde_json::Value {
    let mut all = vec![OsStr::new("stats"), OsStr::new("--json")];
    all.extend_from_slice(args);
    let output = npy(&all);
    assert_exit(&output, 0);
    serde_json::from_str(&stdout(&output)).unwrap()
}

/// An `.npy` of little-endian f8 `values` (shape `(n,)`).
fn f8_file(dir: &std::path::Path, name: &str, values: &[f64]) -> std::path::PathBuf {
    let dict = format!(
        "{{'descr': '<f8', 'fortran_order': False, 'shape': ({},), }}",
        values.len()
    );
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    common::write(dir, name, &common::npy_bytes(&dict, 0, &data))
}

/// The values numpy decoded from a fixture (from the manifest), each as a
/// list of numbers in numpy's text (one, or two for complex).
fn numpy_values(file: &str) -> Vec<Vec<serde_json::Value>> {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("manifest.json")).unwrap())
            .unwrap();
    let entry = manifest["npy"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["file"] == file)
        .unwrap_or_else(|| panic!("{file} is in the manifest"));
    entry["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| match v {
            serde_json::Value::Array(parts) => parts.clone(),
            one => vec![one.clone()],
        })
        .collect()
}

/// numpy's text of a float ("nan", "-inf", "0.1") as the number.
fn number(text: &serde_json::Value) -> f64 {
    text.as_str().unwrap().parse().unwrap()
}

/// float16 and complex data are decoded exactly, so their statistics are
/// those of float64 files holding the same values (the part asked for).
#[test]
fn stats_of_float16_and_complex_are_those_of_their_values() {
    let dir = scratch("stats_of_float16_and_complex_are_those_of_their_values");
    // f2_le/f2_be: the values numpy decoded (the fixtures' manifest), both byte orders.
    let f2: Vec<f64> = numpy_values("f2_le.npy")
        .iter()
        .map(|v| number(&v[0]))
        .collect();
    let expected = stats_of(&[f8_file(&dir, "f2_as_f8.npy", &f2).as_os_str()]);
    for file in ["f2_le.npy", "f2_be.npy"] {
        assert_eq!(
            stats_of(&[fixtures().join(file).as_os_str()]),
            expected,
            "{file}"
        );
    }
    // c16_be: numpy's (re, im) pairs.
    let c16: Vec<(f64, f64)> = numpy_values("c16_be.npy")
        .iter()
        .map(|v| (number(&v[0]), number(&v[1])))
        .collect();
    type PartOf = fn(f64, f64) -> f64;
    let parts: [(&str, PartOf); 4] = [
        ("abs", f64::hypot),
        ("real", |re, _| re),
        ("imag", |_, im| im),
        ("angle", |re, im| im.atan2(re)),
    ];
    for (part, value) in parts {
        let values: Vec<f64> = c16.iter().map(|&(re, im)| value(re, im)).collect();
        let mut expected = stats_of(&[f8_file(&dir, &format!("{part}.npy"), &values).as_os_str()]);
        expected["part"] = serde_json::json!(part);
        let c16_be = fixtures().join("c16_be.npy");
        let got = stats_of(&[c16_be.as_os_str(), OsStr::new("--part"), OsStr::new(part)]);
        assert_eq!(got, expected, "{part}");
    }
    // The magnitude unless --part says otherwise; the text output names the part.
    let c16_le = fixtures().join("c16_le.npy");
    assert_eq!(stats_of(&[c16_le.as_os_str()])["part"], "abs");
    let text = npy([OsStr::new("stats"), c16_le.as_os_str()]);
    assert!(
        stdout(&text).starts_with("part:  abs\n"),
        "{}",
        stdout(&text)
    );
    // --part is for complex arrays only.
    assert_refused(
        &[
            OsStr::new("stats"),
            fixtures().join("f8_le.npy").as_os_str(),
            OsStr::new("--part"),
            OsStr::new("real"),
        ],
        "--part applies to complex arrays",
    );
}

/// A stored member is read in place from a mapping of the archive, a
/// compressed one streamed: both give the statistics of the same .npy, and
/// a member failing its CRC-32 is refused either way.
#[test]
fn stats_and_convert_of_npz_members_match_the_npy_files() {
    let dir = scratch("stats_and_convert_of_npz_members_match_the_npy_files");
    let inputs = ["f8_c_2d", "c8_le", "i2_be", "f2_le"];
    let paths: Vec<_> = inputs
        .iter()
        .map(|name| fixtures().join(format!("{name}.npy")))
        .collect();
    for compress in [false, true] {
        let archive = dir.join(if compress {
            "deflated.npz"
        } else {
            "stored.npz"
        });
        let mut args = vec![OsStr::new("pack"), archive.as_os_str()];
        args.extend(paths.iter().map(|p| p.as_os_str()));
        if compress {
            args.push(OsStr::new("--compress"));
        }
        assert_exit(&npy(&args), 0);
        for (name, path) in inputs.iter().zip(&paths) {
            let member = OsStr::new(name);
            assert_eq!(
                stats_of(&[archive.as_os_str(), OsStr::new("--member"), member]),
                stats_of(&[path.as_os_str()]),
                "{name} (compressed: {compress})"
            );
            // convert --member: np.save's bytes of the member, reordered.
            let out = dir.join(format!("{name}_{compress}.npy"));
            let output = npy([
                OsStr::new("convert"),
                archive.as_os_str(),
                out.as_os_str(),
                OsStr::new("--member"),
                member,
            ]);
            assert_exit(&output, 0);
            assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(path).unwrap());
        }
        // Reordered: the F-order fixture of the same values.
        let out = dir.join(format!("f_{compress}.npy"));
        let output = npy([
            OsStr::new("convert"),
            archive.as_os_str(),
            out.as_os_str(),
            OsStr::new("--member"),
            OsStr::new("f8_c_2d"),
            OsStr::new("--order"),
            OsStr::new("F"),
        ]);
        assert_exit(&output, 0);
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(fixtures().join("f8_f_2d.npy")).unwrap()
        );
    }
    // numpy's bad_crc.npz: member a has a data byte flipped (stored).
    let bad = fixtures().join("npz/bad_crc.npz");
    for command in ["stats", "convert"] {
        let out = dir.join("bad.npy");
        let mut args = vec![OsStr::new(command), bad.as_os_str()];
        if command == "convert" {
            args.push(out.as_os_str());
        }
        args.extend([OsStr::new("--member"), OsStr::new("a")]);
        assert_refused(&args, "Bad CRC-32 for file 'a.npy'");
        assert!(!out.exists(), "{command}");
    }
    // --member names a member of an archive only.
    assert_refused(
        &[
            OsStr::new("convert"),
            paths[0].as_os_str(),
            dir.join("x.npy").as_os_str(),
            OsStr::new("--member"),
            OsStr::new("a"),
        ],
        "--member does not apply",
    );
}

/// `--no-sync` writes the same bytes, replaces the output whole and leaves
/// no temporary file, on success and on failure.
#[test]
fn convert_without_sync_writes_the_same_file_and_no_temporary() {
    let dir = scratch("convert_without_sync_writes_the_same_file_and_no_temporary");
    let out = dir.join("out.npy");
    let output = npy([
        OsStr::new("convert"),
        fixtures().join("f8_c_2d.npy").as_os_str(),
        out.as_os_str(),
        OsStr::new("--order"),
        OsStr::new("F"),
        OsStr::new("--no-sync"),
    ]);
    assert_exit(&output, 0);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(fixtures().join("f8_f_2d.npy")).unwrap()
    );
    let output = npy([
        OsStr::new("convert"),
        fixtures().join("bad/truncated_data.npy").as_os_str(),
        out.as_os_str(),
        OsStr::new("--no-sync"),
    ]);
    assert_exit(&output, 1);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(fixtures().join("f8_f_2d.npy")).unwrap(),
        "a failed run leaves the old output"
    );
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, ["out.npy"]);
}

/// `create --force` replaces an existing file (numpy's open_memmap 'w+'
/// truncates); without it the file is refused and kept.
#[test]
fn create_force_replaces_an_existing_file() {
    let dir = scratch("create_force_replaces_an_existing_file");
    let path = common::write(&dir, "exists.npy", &common::arange_3x4());
    let create = |force: bool| {
        let mut args = vec![
            OsStr::new("create"),
            path.as_os_str(),
            OsStr::new("--dtype"),
            OsStr::new("<i2"),
            OsStr::new("--shape"),
            OsStr::new("5"),
        ];
        if force {
            args.push(OsStr::new("--force"));
        }
        npy(&args)
    };
    let output = create(false);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("or replace it with --force"),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read(&path).unwrap(), common::arange_3x4());
    assert_exit(&create(true), 0);
    let expected = common::npy_bytes(
        "{'descr': '<i2', 'fortran_order': False, 'shape': (5,), }",
        0,
        &[0; 10],
    );
    assert_eq!(std::fs::read(&path).unwrap(), expected);
    let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(names.len(), 1, "no temporary left behind");
}

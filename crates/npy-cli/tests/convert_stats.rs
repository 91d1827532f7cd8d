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

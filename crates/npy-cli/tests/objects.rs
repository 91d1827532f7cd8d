//! Object arrays (`dtype=object`) in the CLI, against numpy's answers in
//! `manifest.json` (sections `object` and `object_npz`): `show
//! --allow-pickle` prints exactly numpy's `str()`, `info` describes them
//! without decoding, `validate --allow-pickle` decodes the pickle to its end.

mod common;

use std::ffi::OsStr;

use common::{assert_exit, fixtures, npy, scratch, stderr, stdout};
use serde_json::Value;

fn section(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(fixtures().join("manifest.json")).unwrap();
    let manifest: Value = serde_json::from_str(&text).unwrap();
    manifest[name].as_array().unwrap().clone()
}

#[test]
fn show_prints_numpys_str_of_every_object_fixture() {
    let mut checked = 0;
    for entry in section("object") {
        let file = entry["file"].as_str().unwrap();
        let path = fixtures().join(file);
        for (encoding, numpy) in entry["loads"].as_object().unwrap() {
            let args = [
                OsStr::new("show"),
                OsStr::new("--allow-pickle"),
                OsStr::new("--encoding"),
                OsStr::new(encoding),
                path.as_os_str(),
            ];
            let output = npy(args);
            checked += 1;
            if numpy["self_reference"] == true {
                // numpy prints `[list([[...]])]`; a tree cannot hold itself.
                assert_exit(&output, 1);
                assert!(stderr(&output).contains("holds itself"), "{file}");
            } else if let Some(error) = numpy.get("error") {
                assert_exit(&output, 1);
                assert!(error["message"].as_str().unwrap().contains("'ascii'"));
                assert!(
                    stderr(&output).contains("'ascii' codec can't decode"),
                    "{file}"
                );
            } else {
                assert_exit(&output, 0);
                let expected = format!("{}\n", numpy["str"].as_str().unwrap());
                assert_eq!(stdout(&output), expected, "{file} ({encoding})");
            }
        }
    }
    assert!(checked >= 20);
}

#[test]
fn show_prints_npz_object_members_like_numpy() {
    for archive in section("object_npz") {
        let path = fixtures().join(archive["file"].as_str().unwrap());
        for (key, numpy) in archive["members"].as_object().unwrap() {
            let output = npy([
                OsStr::new("show"),
                OsStr::new("--allow-pickle"),
                path.as_os_str(),
                OsStr::new("--member"),
                OsStr::new(key),
            ]);
            assert_exit(&output, 0);
            let expected = format!("{}\n", numpy["str"].as_str().unwrap());
            assert_eq!(stdout(&output), expected, "{key}");
        }
    }
}

#[test]
fn object_arrays_need_allow_pickle_everywhere() {
    let path = fixtures().join("object/obj_issue_example.npy");
    let output = npy([OsStr::new("show"), path.as_os_str()]);
    assert_exit(&output, 1);
    let message = stderr(&output);
    assert!(
        message.contains("Object arrays cannot be loaded when allow_pickle=False"),
        "{message}"
    );
    assert!(message.contains("--allow-pickle"), "{message}");
    let archive = fixtures().join("npz/objects.npz");
    let output = npy([
        OsStr::new("show"),
        archive.as_os_str(),
        OsStr::new("--member"),
        OsStr::new("obj"),
    ]);
    assert_exit(&output, 1);
    assert!(stderr(&output).contains("allow_pickle=False"));
    // Numeric members of the same archive show as before.
    let output = npy([
        OsStr::new("show"),
        archive.as_os_str(),
        OsStr::new("--member"),
        OsStr::new("num"),
    ]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "[0 1 2]\n");
    // Mapping refuses objects in numpy's words.
    let output = npy([OsStr::new("stats"), path.as_os_str()]);
    assert_exit(&output, 1);
    assert!(stderr(&output).contains("Array can't be memory-mapped: Python objects in dtype."));
}

#[test]
fn show_selects_rows_of_object_arrays() {
    let path = fixtures().join("object/obj_f_2d.npy");
    let output = npy([
        OsStr::new("show"),
        OsStr::new("--allow-pickle"),
        OsStr::new("--rows"),
        OsStr::new("1:"),
        path.as_os_str(),
    ]);
    assert_exit(&output, 0);
    // numpy: str(np.load(path, allow_pickle=True)[1:])
    assert_eq!(stdout(&output), "[[list([1]) (2,) {3}]]\n");
    let path = fixtures().join("object/obj_big_strings.npy");
    let output = npy([
        OsStr::new("show"),
        OsStr::new("--allow-pickle"),
        OsStr::new("--limit"),
        OsStr::new("3"),
        path.as_os_str(),
    ]);
    assert_eq!(stdout(&output), "['s0' 's1' 's2']\n");
}

#[test]
fn info_describes_object_arrays_without_decoding_them() {
    for entry in section("object") {
        let file = entry["file"].as_str().unwrap();
        let output = npy([
            OsStr::new("info"),
            OsStr::new("--json"),
            fixtures().join(file).as_os_str(),
        ]);
        assert_exit(&output, 0);
        let info: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(info["descr"], "|O", "{file}");
        assert_eq!(info["shape"], entry["shape"], "{file}");
        assert_eq!(info["fortran_order"], entry["fortran_order"], "{file}");
        assert_eq!(info["data_offset"], entry["data_offset"], "{file}");
        let count: u64 = entry["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .product();
        assert_eq!(info["nbytes"], count * 8, "{file}: numpy's nbytes");
        let pickle = entry["file_size"].as_u64().unwrap() - entry["data_offset"].as_u64().unwrap();
        assert_eq!(info["pickle_bytes"], pickle, "{file}");
    }
    let output = npy([
        OsStr::new("info"),
        fixtures().join("object/obj_0d.npy").as_os_str(),
    ]);
    let text = stdout(&output);
    assert!(text.contains("dtype:         '|O'"), "{text}");
    assert!(text.contains("a pickle of"), "{text}");
}

/// Issue 24: `convert` of an object array said to call
/// `OpenOptions::allow_pickle`; it takes `--allow-pickle` (and `--encoding`),
/// and no command gives Rust API advice.
#[test]
fn convert_takes_allow_pickle_and_gives_cli_advice() {
    let dir = scratch("convert_objects");
    for file in ["obj_kinds.npy", "obj_f_2d.npy", "obj_nested_arrays.npy"] {
        let input = fixtures().join("object").join(file);
        let output_path = dir.join(file);
        let refused = npy([
            OsStr::new("convert"),
            input.as_os_str(),
            output_path.as_os_str(),
        ]);
        assert_exit(&refused, 1);
        let message = stderr(&refused);
        assert!(message.contains("--allow-pickle"), "{message}");
        assert!(!message.contains("::"), "no Rust names: {message}");
        assert!(!output_path.exists());
        let converted = npy([
            OsStr::new("convert"),
            OsStr::new("--allow-pickle"),
            input.as_os_str(),
            output_path.as_os_str(),
            OsStr::new("--version"),
            OsStr::new("2"),
        ]);
        assert_exit(&converted, 0);
        let show = |path: &std::path::Path| {
            let output = npy([
                OsStr::new("show"),
                OsStr::new("--allow-pickle"),
                path.as_os_str(),
            ]);
            assert_exit(&output, 0);
            stdout(&output)
        };
        assert_eq!(show(&output_path), show(&input), "{file}");
        let info = stdout(&npy([OsStr::new("info"), output_path.as_os_str()]));
        assert!(info.starts_with("version:       2.0"), "{info}");
    }
    // The other commands that read numbers say what to type, not what to call.
    let input = fixtures().join("object/obj_kinds.npy");
    for command in ["stats", "render"] {
        let png = dir.join("x.png");
        let mut args = vec![OsStr::new(command), input.as_os_str()];
        if command == "render" {
            args.push(png.as_os_str());
        }
        let output = npy(&args);
        assert_exit(&output, 1);
        let message = stderr(&output);
        assert!(message.contains("--allow-pickle"), "{command}: {message}");
        assert!(!message.contains("::"), "{command}: {message}");
    }
}

/// Issue 24: a valid object array is valid without `--allow-pickle` too;
/// validate says its contents were not decoded (exit 0, a note on stderr).
#[test]
fn validate_without_allow_pickle_calls_object_arrays_valid_and_says_they_were_not_decoded() {
    let note = "its header is valid; its contents (a Python pickle) were not decoded, \
                --allow-pickle decodes and checks them";
    let good = fixtures().join("object/obj_kinds.npy");
    let output = npy([OsStr::new("validate"), good.as_os_str()]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "");
    assert_eq!(
        stderr(&output),
        format!(
            "npy: note: {}: an object array (dtype=object): {note}\n",
            good.display()
        )
    );
    // Every member of an archive: the object member is noted, the rest checked.
    let archive = fixtures().join("npz/objects.npz");
    let output = npy([OsStr::new("validate"), archive.as_os_str()]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "");
    assert!(
        stderr(&output).contains("member 'obj.npy': an object array (dtype=object): "),
        "{}",
        stderr(&output)
    );
    // A broken file is still invalid: a header cut short.
    let bytes = std::fs::read(&good).unwrap();
    let dir = scratch("validate_objects_unpickled");
    let cut = dir.join("cut.npy");
    std::fs::write(&cut, &bytes[..40]).unwrap();
    let output = npy([OsStr::new("validate"), cut.as_os_str()]);
    assert_exit(&output, 1);
}

#[test]
fn validate_decodes_the_pickle_to_the_end_of_the_file() {
    let dir = fixtures().join("object");
    let good = dir.join("obj_kinds.npy");
    let output = npy([
        OsStr::new("validate"),
        OsStr::new("--allow-pickle"),
        good.as_os_str(),
    ]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "");
    // Every fixture numpy loads is valid; the two it cannot (as a tree, or in ASCII) are not.
    for entry in section("object") {
        let path = fixtures().join(entry["file"].as_str().unwrap());
        let loads = &entry["loads"]["ASCII"];
        let output = npy([
            OsStr::new("validate"),
            OsStr::new("--allow-pickle"),
            path.as_os_str(),
        ]);
        let expected = if loads.get("array").is_some() { 0 } else { 1 };
        assert_exit(&output, expected);
    }
    let py2 = dir.join("obj_py2.npy");
    let output = npy([
        OsStr::new("validate"),
        OsStr::new("--allow-pickle"),
        OsStr::new("--encoding"),
        OsStr::new("latin1"),
        py2.as_os_str(),
    ]);
    assert_exit(&output, 0);
    // Bytes after the pickle, and a pickle cut short.
    let bytes = std::fs::read(&good).unwrap();
    let scratch = scratch("validate_objects");
    let trailing = scratch.join("trailing.npy");
    std::fs::write(&trailing, [bytes.as_slice(), b"junk"].concat()).unwrap();
    let truncated = scratch.join("truncated.npy");
    std::fs::write(&truncated, &bytes[..bytes.len() - 1]).unwrap();
    // Bytes after the pickle are a note, as after any array's data (numpy
    // ignores them), and a problem with --strict.
    let output = npy([
        OsStr::new("validate"),
        OsStr::new("--allow-pickle"),
        trailing.as_os_str(),
    ]);
    assert_exit(&output, 0);
    let note = stderr(&output);
    assert!(
        note.contains("4 trailing bytes after the 920 bytes of pickled data"),
        "{note}"
    );
    let output = npy([
        OsStr::new("validate"),
        OsStr::new("--allow-pickle"),
        OsStr::new("--strict"),
        trailing.as_os_str(),
        truncated.as_os_str(),
    ]);
    assert_exit(&output, 1);
    let text = stdout(&output);
    assert!(
        text.contains("trailing.npy: 4 trailing bytes after the 920 bytes of pickled data"),
        "{text}"
    );
    assert!(
        text.contains("truncated.npy: cannot unpickle the object array data"),
        "{text}"
    );
    assert!(text.contains("pickle data was truncated"), "{text}");
    // Archives: members with objects decode to their end too.
    for archive in section("object_npz") {
        let path = fixtures().join(archive["file"].as_str().unwrap());
        let output = npy([
            OsStr::new("validate"),
            OsStr::new("--allow-pickle"),
            path.as_os_str(),
        ]);
        assert_exit(&output, 0);
        // Without it they are valid too, their pickles not decoded (a note).
        let output = npy([OsStr::new("validate"), path.as_os_str()]);
        assert_exit(&output, 0);
        assert!(stderr(&output).contains("were not decoded"));
    }
}

/// Object arrays numpy writes on the spot, holding arrays of every dtype and
/// random nested values: `show --allow-pickle` prints numpy's `str()`.
const GENERATE_OBJECTS: &str = r#"
import json, random, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
out = sys.argv[1]
rng = random.Random(11)
arrays = [
    np.arange(12.0).reshape(3, 4) * 1.1, np.asfortranarray(np.arange(6.0).reshape(2, 3) / 7),
    np.array([np.nan, -np.inf, 0.0, -0.0, 1e-300, 1e300]), np.arange(5.0, dtype=">f8") / 3,
    np.linspace(0, 1, 7, dtype=np.float32), np.array([0.1, 1000.5, -2.0], dtype=np.float16),
    np.arange(-5, 5, dtype=np.int8), np.array([0, 2**64 - 1], dtype=np.uint64),
    np.arange(2 * 3 * 400).reshape(2, 3, 400), np.array([True, False]),
    np.array([1 + 2j, -3.5 - 4j]), np.array([b"ab", b"", b"a'b"], dtype="S5"),
    np.array(["ab", "", "\u00e9t\u00e9"], dtype="U4"),
    np.array(["2020-01-01T12:34:56", "NaT"], dtype="M8[s]"), np.array([1, -5, "NaT"], dtype="m8[ms]"),
    np.array([(1, 2.5, b"x")], dtype=[("a", "<i4"), ("b", ">f8"), ("c", "S2")]),
    np.array(3.25), np.zeros((0, 3)), np.arange(40, dtype=np.float64) * 12345.678,
]
def leaf():
    return rng.choice([None, True, rng.randint(-10**12, 10**12), rng.random() * 10 ** rng.randint(-8, 8),
                       "t" * rng.randint(0, 30), b"b" * rng.randint(0, 3), (1, "x"), {"k": [1, 2]},
                       {3, 4}, np.float64(rng.random()), rng.choice(arrays)])
cases = {
    "arrays": arrays,
    "mixed": [leaf() for _ in range(60)],
    "grid": [[leaf() for _ in range(4)] for _ in range(3)],
    "big": [leaf() for _ in range(1500)],
    "lists": [[leaf(), [leaf()]] for _ in range(8)],
}
expected = {}
for name, values in cases.items():
    a = np.empty(len(values), dtype=object)
    a[:] = values if name != "grid" else [None] * len(values)
    if name == "grid":
        a = np.empty((3, 4), dtype=object)
        for i in range(3):
            for j in range(4):
                a[i, j] = values[i][j]
    np.save(f"{out}/{name}.npy", a)
    expected[name] = str(np.load(f"{out}/{name}.npy", allow_pickle=True))
json.dump(expected, open(f"{out}/expected.json", "w"))
"#;

#[test]
#[ignore = "needs numpy: run with NPY_PYTHON set (just interop)"]
fn show_prints_what_numpy_prints_for_fresh_object_arrays() {
    let dir = scratch("objects_interop");
    let python = std::env::var("NPY_PYTHON").expect("NPY_PYTHON names a Python with numpy");
    let status = std::process::Command::new(python)
        .args(["-c", GENERATE_OBJECTS])
        .arg(&dir)
        .status()
        .unwrap();
    assert!(status.success(), "the numpy generator failed");
    let text = std::fs::read_to_string(dir.join("expected.json")).unwrap();
    let expected: Value = serde_json::from_str(&text).unwrap();
    let mut failures = Vec::new();
    for (name, numpy) in expected.as_object().unwrap() {
        let path = dir.join(format!("{name}.npy"));
        let output = npy([
            OsStr::new("show"),
            OsStr::new("--allow-pickle"),
            path.as_os_str(),
        ]);
        let want = format!("{}\n", numpy.as_str().unwrap());
        if stdout(&output) != want {
            failures.push(format!(
                "{name}:\n--- numpy\n{want}--- npy\n{}{}",
                stdout(&output),
                stderr(&output)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The two's-complement little-endian bytes of `10^exponent + delta`
/// (`delta` is -1, 0 or 1), built limb by limb.
fn power_of_ten_bytes(exponent: usize, delta: i64) -> Vec<u8> {
    let mut limbs = vec![1u32];
    for _ in 0..exponent {
        let mut carry = 0u64;
        for limb in &mut limbs {
            let product = u64::from(*limb) * 10 + carry;
            *limb = product as u32;
            carry = product >> 32;
        }
        if carry > 0 {
            limbs.push(carry as u32);
        }
    }
    if delta < 0 {
        // 10^k ends in a nonzero limb only at the top: borrow through zeros.
        for limb in &mut limbs {
            let (value, borrow) = limb.overflowing_sub(1);
            *limb = value;
            if !borrow {
                break;
            }
        }
    } else {
        limbs[0] += delta as u32;
    }
    let mut bytes: Vec<u8> = limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
    bytes.push(0);
    bytes
}

/// Python refuses to turn an int of more than 4300 digits into text
/// ("Exceeds the limit (4300 digits) for integer string conversion"): the
/// conversion is quadratic, and a 400 KB int made `show` run for a minute.
/// `show` prints such ints as `<int of N bits: exceeds the limit ...>`, at a
/// cost linear in the bytes, and prints every int Python would print.
#[test]
fn show_prints_ints_beyond_pythons_digit_limit_briefly() {
    use npy_core::pickle::PyValue;
    use npy_core::{DType, Header, NpyArray, Order};

    let dir = scratch("huge-ints");
    // 400,000 bytes of 0x55: 3,199,999 bits, about 963,000 digits.
    let mut huge = vec![0x55u8; 400_000];
    let mut negative_huge = huge.clone();
    negative_huge.push(0xaa);
    huge.push(0x00);
    let values = vec![
        PyValue::int_from_le_bytes(&power_of_ten_bytes(4300, -1)),
        PyValue::int_from_le_bytes(&power_of_ten_bytes(4300, 0)),
        PyValue::int_from_le_bytes(&huge),
        PyValue::int_from_le_bytes(&negative_huge),
    ];
    let header = Header {
        dtype: DType::Object,
        order: Order::C,
        shape: vec![values.len()],
    };
    let array = NpyArray::from_objects(header, values).unwrap();
    let path = dir.join("huge.npy");
    let mut file = std::fs::File::create(&path).unwrap();
    npy_core::write_npy(&mut file, &array).unwrap();
    drop(file);
    let output = npy([
        OsStr::new("show"),
        OsStr::new("--allow-pickle"),
        path.as_os_str(),
    ]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    // 10^4300 - 1 has 4300 digits: Python prints it, and so do we.
    assert!(
        text.contains(&"9".repeat(4300)),
        "{}",
        &text[..200.min(text.len())]
    );
    let limit = "exceeds the limit (4300 digits) for integer string conversion>";
    // 10^4300 has 4301 digits and 14,285 bits.
    assert!(
        text.contains(&format!("<int of 14285 bits: {limit}")),
        "{text}"
    );
    assert!(
        text.contains(&format!("<int of 3199999 bits: {limit}")),
        "{text}"
    );
    // Top byte 0xaa of 400,001: |n| = !n + 1, whose top byte is 0x55: 3,200,007 bits.
    assert!(
        text.contains(&format!("<-int of 3200007 bits: {limit}")),
        "{text}"
    );
    assert!(text.len() < 10_000, "{} bytes of output", text.len());
}

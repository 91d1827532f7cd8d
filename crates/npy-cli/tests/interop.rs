//! Live numpy interop (ignored by default; `just interop` runs it with
//! `NPY_PYTHON` pointing at a Python that has numpy): numpy writes arrays of
//! every dtype, and `npy show` / `npy info --json` must print what numpy
//! prints and reports for them.

mod common;

use std::path::Path;

use common::{assert_exit, npy, scratch, stdout};

/// Writes one .npy per case into `dir` and `expected.json`: for each file
/// numpy's `str()` of the loaded array and the header facts `info` reports.
const GENERATE: &str = r#"
import json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
out = sys.argv[1]
rng = np.random.default_rng(7)
cases = {
    "f8_2d": np.arange(12.0).reshape(3, 4) * 1.1,
    "f8_fortran": np.asfortranarray(np.arange(12.0).reshape(3, 4) / 7),
    "f8_big": rng.standard_normal((300, 400)),
    "f8_special": np.array([np.nan, -np.inf, 0.0, -0.0, 1e-300, 1e300]),
    "f8_be": np.arange(5.0, dtype=">f8") / 3,
    "f4": np.linspace(0, 1, 7, dtype=np.float32),
    "f2": np.array([0.1, 1000.5, -2.0, 65504], dtype=np.float16),
    "g": np.arange(4, dtype=np.longdouble) / 4,
    "i1": np.arange(-5, 5, dtype=np.int8),
    "u8": np.array([0, 2**64 - 1], dtype=np.uint64),
    "i8_3d": np.arange(2 * 3 * 1001).reshape(2, 3, 1001),
    "i2_be": np.arange(-3, 3, dtype=">i2"),
    "b1": np.array([True, False, True]),
    "c16": np.array([1 + 2j, -3.5 - 4j, np.nan + 1j]),
    "c8_be": np.array([1 + 2j, 3 - 4j], dtype=">c8"),
    "S5": np.array([b"ab", b"", b"hello", b"a'b"], dtype="S5"),
    "U4": np.array(["ab", "", "\u00e9t\u00e9", "x\ny"], dtype="U4"),
    "V3": np.zeros(2, dtype="V3"),
    "M8_s": np.array(["2020-01-01T12:34:56", "NaT", "1969-07-20T20:17:40"], dtype="M8[s]"),
    "M8_D": np.array(["2020-02-29", "1900-01-01"], dtype="M8[D]"),
    "M8_ns": np.array([1, -1], dtype="M8[ns]"),
    "m8_ms": np.array([1, -5, "NaT"], dtype="m8[ms]"),
    "record": np.array([(1, 2.5, b"x"), (-3, 4.0, b"yz")], dtype=[("a", "<i4"), ("b", ">f8"), ("c", "S2")]),
    "record_sub": np.zeros(3, dtype=[("x", "<i4"), ("y", ">f8", (2, 3))]),
    "record_nested": np.zeros(2, dtype=[("p", [("q", "<f4"), ("r", "u1")]), ("s", "?")]),
    "zero_d": np.array(3.25),
    "zero_d_record": np.zeros((), dtype=[("a", "<i4"), ("b", "<f8")]),
    "empty": np.zeros((0, 3)),
    "wide": np.arange(40, dtype=np.float64) * 12345.678,
}
expected = {}
for name, array in cases.items():
    path = f"{out}/{name}.npy"
    np.save(path, array)
    loaded = np.load(path)
    expected[name] = {
        "str": str(loaded),
        "descr": json.loads(json.dumps(np.lib.format.dtype_to_descr(loaded.dtype))),
        "shape": list(loaded.shape),
        "fortran_order": bool(np.isfortran(loaded)) and loaded.ndim > 1,
        "itemsize": loaded.dtype.itemsize,
        "nbytes": loaded.nbytes,
    }
json.dump(expected, open(f"{out}/expected.json", "w"))
"#;

fn generate(dir: &Path) -> serde_json::Value {
    common::numpy_answers(GENERATE, dir, "expected.json")
}

#[test]
#[ignore = "needs numpy: run with NPY_PYTHON set (just interop)"]
fn show_prints_what_numpy_prints() {
    let dir = scratch("show_prints_what_numpy_prints");
    let expected = generate(&dir);
    let mut failures = Vec::new();
    for (name, facts) in expected.as_object().unwrap() {
        let output = npy(["show".as_ref(), dir.join(format!("{name}.npy")).as_os_str()]);
        let want = format!("{}\n", facts["str"].as_str().unwrap());
        if output.status.code() != Some(0) || stdout(&output) != want {
            failures.push(format!(
                "{name}:\n--- numpy\n{want}--- npy ({:?})\n{}{}",
                output.status.code(),
                stdout(&output),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs numpy: run with NPY_PYTHON set (just interop)"]
fn info_json_reports_numpys_header_facts() {
    let dir = scratch("info_json_reports_numpys_header_facts");
    let expected = generate(&dir);
    for (name, facts) in expected.as_object().unwrap() {
        let output = npy([
            "info".as_ref(),
            "--json".as_ref(),
            dir.join(format!("{name}.npy")).as_os_str(),
        ]);
        assert_exit(&output, 0);
        let info: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
        for key in ["descr", "shape", "fortran_order", "itemsize", "nbytes"] {
            assert_eq!(info[key], facts[key], "{name}: {key}");
        }
        assert_eq!(info["data_offset"].as_u64().unwrap() % 64, 0, "{name}");
    }
}

/// float16 and complex arrays (both byte orders, NaN and inf included) and
/// numpy's statistics of them: nanmin/nanmax/nanmean/nanstd (ddof=0) of
/// the values as float64 (for complex: of np.abs, .real, .imag, np.angle).
/// An .npz of the same arrays holds them stored (mapped by `npy stats`).
const STATS: &str = r#"
import json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
out = sys.argv[1]
rng = np.random.default_rng(11)
cases = {
    "f2": (rng.standard_normal(5000) * 100).astype(np.float16),
    "f2_be": np.array([0.1, np.nan, -np.inf, 65504, 6e-8, -2.5], dtype=">f2"),
    "c8": (rng.standard_normal(3000) + 1j * rng.standard_normal(3000)).astype(np.complex64),
    "c16_be": np.array([1 + 2j, -3.5 - 4j, complex(np.nan, 1), 0j, complex(-np.inf, 2)], dtype=">c16"),
    "c16_f": np.asfortranarray((np.arange(12) - 5.5 + 1j * np.arange(12)[::-1]).reshape(3, 4)),
}
parts = {"abs": np.abs, "real": np.real, "imag": np.imag, "angle": np.angle}
def stats(values):
    v = np.asarray(values, dtype=np.float64)
    number = lambda x: x if np.isfinite(x) else str(x)
    return {"count": int(v.size), "nan": int(np.isnan(v).sum()),
            "min": number(float(np.nanmin(v))), "max": number(float(np.nanmax(v))),
            "mean": number(float(np.nanmean(v))), "std": number(float(np.nanstd(v)))}
expected = {}
for name, array in cases.items():
    np.save(f"{out}/{name}.npy", array)
    if array.dtype.kind == "c":
        for part, f in parts.items():
            # np.abs and np.angle of complex64 are float32, like the stored parts.
            expected[f"{name}:{part}"] = stats(f(array))
    else:
        expected[name] = stats(array)
np.savez(f"{out}/all.npz", **cases)
json.dump(expected, open(f"{out}/expected.json", "w"))
"#;

#[test]
#[ignore = "needs numpy: run with NPY_PYTHON set (just interop)"]
fn stats_of_float16_and_complex_match_numpy() {
    let dir = scratch("stats_of_float16_and_complex_match_numpy");
    let expected = common::numpy_answers(STATS, &dir, "expected.json");
    let mut failures = Vec::new();
    for (case, want) in expected.as_object().unwrap() {
        let (name, part) = case
            .split_once(':')
            .map_or((case.as_str(), None), |(n, p)| (n, Some(p)));
        let npy_path = dir.join(format!("{name}.npy"));
        let npz_path = dir.join("all.npz");
        let os = std::ffi::OsStr::new;
        let sources = [
            vec![npy_path.as_os_str()],
            vec![npz_path.as_os_str(), os("--member"), os(name)],
        ];
        for source in sources {
            let mut args = vec![os("stats"), os("--json")];
            args.extend(source);
            if let Some(part) = part {
                args.extend([os("--part"), os(part)]);
            }
            let output = npy(&args);
            assert_exit(&output, 0);
            let got: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
            for key in ["count", "nan", "min", "max", "mean", "std"] {
                let close = match (got[key].as_f64(), want[key].as_f64()) {
                    // float32 results (np.abs, np.angle of complex64) may
                    // round differently from their float64 computation.
                    (Some(a), Some(b)) => (a - b).abs() <= 1e-6 * b.abs().max(1e-300),
                    _ => got[key] == want[key],
                };
                if !close {
                    failures.push(format!(
                        "{case} {args:?}: {key}: npy {} numpy {}",
                        got[key], want[key]
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

//! Live interop with the pinned numpy: numpy writes, we read; we write, numpy reads.
//!
//! Every test is `#[ignore]`: it needs the venv from `scripts/setup-venv.sh`.
//! CI runs them with `cargo test -- --ignored` after creating it, and
//! [`support::python`] panics (never skips) when the venv is missing.

mod support;

use std::ffi::OsStr;
use std::path::Path;

use npy_core::{
    ByteOrder, DType, Element, Header, NpyWriter, Order, ParseOptions, ReadOptions, ScalarKind,
    Version, read_npy, write_npy,
};
use serde_json::Value;
use support::{
    has_big_endian_long_double, logical_c_bytes, repo_root, run_python, temp_dir, to_hex,
    value_disagreements,
};

/// numpy writes a matrix of arrays (every dtype family × byte order × memory order
/// × shape) with `np.save`, and describes each with the fixture generator's
/// `describe_npy` (same fields as `manifest.json`). Prints a JSON list.
const NUMPY_WRITES: &str = r#"
import json, sys, warnings
import numpy as np
sys.path.insert(0, sys.argv[1])
from gen_fixtures import describe_npy, longdouble

out = sys.argv[2]
rng = np.random.default_rng(2024)
SHAPES = [((7,), "C"), ((3, 5), "C"), ((3, 5), "F"), ((2, 3, 4), "F"), ((), "C"), ((0, 4), "C"), ((4, 0), "F")]
STRINGS = ["", "a", "\u00e9\u00e9", "\u65e5\u672c", "\U0001F600", "a\x00b"]

def values(dtype, n):
    if dtype.kind == "b":
        return rng.integers(0, 2, n).astype(dtype)
    if dtype.kind == "U":
        return np.array([STRINGS[i % len(STRINGS)] for i in range(n)], dtype=dtype)
    if dtype.kind in "fc" and dtype.itemsize in (16, 32):
        parts = rng.standard_normal(n * (2 if dtype.kind == "c" else 1))
        vals = parts.view(np.complex128) if dtype.kind == "c" else parts
        return longdouble(vals, dtype.byteorder if dtype.byteorder == ">" else "<", dtype.kind == "c")
    raw = rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).tobytes()
    return np.frombuffer(raw, dtype=dtype, count=n).copy() if dtype.itemsize else np.zeros(n, dtype)

CODES = ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "g", "c8", "c16", "G",
         "S7", "U4", "V3", "M8[us]", "M8[10s]", "m8[ms]", "m8[3D]",
         [("x", "i4"), ("y", "f8", (2, 3))],
         [("a", [("b", "i2"), ("c", "f4")]), ("s", "S3"), ("u", "U2"), ("t", "M8[ms]")]]

cases = []
for code in CODES:
    for order_char in "<>":
        dtype = np.dtype(code).newbyteorder(order_char)
        for shape, mem in SHAPES:
            n = int(np.prod(shape))
            arr = values(dtype, n).reshape(shape)
            if mem == "F":
                arr = np.asfortranarray(arr)
            name = f"{len(cases):03d}.npy"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                np.save(f"{out}/{name}", arr)
            with open(f"{out}/{name}", "rb") as f:
                entry = describe_npy(f.read())
            entry["file"] = name
            cases.append(entry)
print(json.dumps(cases))
"#;

fn scripts_dir() -> std::ffi::OsString {
    repo_root().join("scripts").into_os_string()
}

fn numpy_written(dir: &Path) -> Vec<Value> {
    let out = run_python(NUMPY_WRITES, &[&scripts_dir(), dir.as_os_str()]);
    let cases: Value = serde_json::from_str(&out).expect("numpy's JSON");
    cases.as_array().expect("list").clone()
}

fn shape_of(entry: &Value) -> Vec<usize> {
    entry["shape"]
        .as_array()
        .expect("shape")
        .iter()
        .map(|d| d.as_u64().expect("dim") as usize)
        .collect()
}

/// numpy writes every dtype family in both byte orders and both memory orders;
/// we parse each header to numpy's answers, and `read_npy` gives numpy's
/// bytes (in logical C order, little-endian) and numpy's values for every file.
#[test]
#[ignore = "needs numpy: run scripts/setup-venv.sh, then cargo test -- --ignored"]
fn numpy_writes_we_read() {
    let dir = temp_dir("numpy-writes");
    let cases = numpy_written(&dir);
    assert!(cases.len() > 300, "numpy wrote only {} files", cases.len());
    let mut failures = Vec::new();
    let mut data_checked = 0;
    for case in &cases {
        let file = case["file"].as_str().expect("file");
        let bytes = std::fs::read(dir.join(file)).expect("numpy's file");
        let npy_core::ParsedHeader { header, layout } =
            match Header::parse(&bytes, &ParseOptions::default()) {
                Ok(parsed) => parsed,
                Err(e) => {
                    failures.push(format!("{file} ({}): {e}", case["descr"]));
                    continue;
                }
            };
        let descr = header.dtype.header_repr();
        let fortran = header.order == Order::Fortran;
        let expect = (
            case["descr"].as_str().expect("descr"),
            shape_of(case),
            case["fortran_order"].as_bool().expect("bool"),
            case["data_offset"].as_u64().expect("offset") as usize,
            case["nbytes"].as_u64().expect("nbytes") as usize,
        );
        let ours = (
            descr.as_str(),
            header.shape.clone(),
            fortran,
            layout.data_offset,
            layout.data_len,
        );
        if ours != expect {
            failures.push(format!("{file}: ours {ours:?}, numpy {expect:?}"));
            continue;
        }
        if header.to_bytes(None).ok().as_deref() != Some(&bytes[..layout.data_offset]) {
            failures.push(format!(
                "{file} ({descr}): to_bytes differs from np.save's header"
            ));
        }
        // Every case through read_npy: converted to native order, its logical
        // C-order bytes are numpy's little-endian C-order bytes, and its values
        // are numpy's; in stored order the values decode the same (except
        // big-endian long doubles, which `Value` documents it cannot decode).
        const { assert!(cfg!(target_endian = "little"), "c_le_hex is little-endian") };
        data_checked += 1;
        for to_native in [true, false] {
            let options = ReadOptions {
                to_native,
                ..ReadOptions::default()
            };
            let array = match read_npy(&bytes[..], &options) {
                Ok(array) => array,
                Err(e) => {
                    failures.push(format!("{file} ({descr}): read_npy: {e}"));
                    continue;
                }
            };
            if to_native {
                match logical_c_bytes(&array) {
                    Ok(data) if to_hex(&data) == case["c_le_hex"].as_str().expect("hex") => {}
                    Ok(_) => failures.push(format!("{file} ({descr}): data differs from numpy's")),
                    Err(e) => failures.push(format!("{file} ({descr}): records view: {e}")),
                }
            } else if has_big_endian_long_double(&header.dtype) {
                continue;
            }
            for problem in value_disagreements(&array, case) {
                failures.push(format!(
                    "{file} ({descr}, to_native {to_native}): {problem}"
                ));
            }
        }
    }
    assert!(data_checked > 300, "only {data_checked} data comparisons");
    assert!(
        failures.is_empty(),
        "{} of {} numpy files disagree:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// A small deterministic generator, so data differ per element without a rand dependency.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Writes one element of `dtype` at `out` with values numpy accepts as-is
/// (bools 0/1, valid code points, zeroed long double padding, zeroed record gaps).
fn fill_element(dtype: &DType, out: &mut [u8], rng: &mut SplitMix) {
    match dtype {
        // Object arrays hold values, not bytes (tests/interop_pickle.rs).
        DType::Object => {}
        DType::Structured(record) => {
            for field in &record.fields {
                let end = field.offset + field.dtype.itemsize();
                fill_element(&field.dtype, &mut out[field.offset..end], rng);
            }
        }
        DType::SubArray(base, _) => {
            for chunk in out.chunks_exact_mut(base.itemsize().max(1)) {
                fill_element(base, chunk, rng);
            }
        }
        DType::Scalar(scalar) => {
            let big = scalar.byte_order == ByteOrder::Big;
            match scalar.kind {
                ScalarKind::Bool => out[0] = (rng.next() & 1) as u8,
                ScalarKind::Unicode => {
                    const CHARS: [char; 6] = ['a', 'Z', '\u{e9}', '\u{65e5}', '\u{1F600}', '\0'];
                    for unit in out.chunks_exact_mut(4) {
                        let c = CHARS[(rng.next() % CHARS.len() as u64) as usize] as u32;
                        unit.copy_from_slice(&if big {
                            c.to_be_bytes()
                        } else {
                            c.to_le_bytes()
                        });
                    }
                }
                // x87 long double: 10 value bytes, 6 padding bytes that must be zero.
                ScalarKind::Float | ScalarKind::Complex if scalar.itemsize % 16 == 0 => {
                    for part in out.chunks_exact_mut(16) {
                        part.fill(0);
                        let value = if big { &mut part[6..] } else { &mut part[..10] };
                        for b in value.iter_mut() {
                            *b = rng.next() as u8;
                        }
                    }
                }
                _ => out.iter_mut().for_each(|b| *b = rng.next() as u8),
            }
        }
        other => panic!("no filler for {other}"),
    }
}

/// Runs [`NUMPY_CHECKS`] over the files we wrote (`cases`, saved as JSON
/// for it) and fails listing every problem it prints.
fn numpy_checks(dir: &Path, cases: &[Value]) {
    let list = dir.join("cases.json");
    std::fs::write(&list, serde_json::to_vec(cases).expect("json")).expect("write list");
    let out = run_python(NUMPY_CHECKS, &[list.as_os_str()]);
    let problems: Vec<String> = serde_json::from_str(&out).expect("numpy's JSON");
    assert!(
        problems.is_empty(),
        "numpy disagrees with {} of {} files we wrote:\n{}",
        problems.len(),
        cases.len(),
        problems.join("\n")
    );
}

/// The descrs we write: every dtype family, both byte orders, records with
/// padding, titles, nested and subarray fields, names that need v3 or escapes.
fn descrs_we_write() -> Vec<String> {
    let mut descrs: Vec<String> = [
        "'|b1'",
        "'|i1'",
        "'|u1'",
        "'<i2'",
        "'>i2'",
        "'<u4'",
        "'>i4'",
        "'<i8'",
        "'>u8'",
        "'<f2'",
        "'>f2'",
        "'<f4'",
        "'>f4'",
        "'<f8'",
        "'>f8'",
        "'<f16'",
        "'>f16'",
        "'<c8'",
        "'>c8'",
        "'<c16'",
        "'>c16'",
        "'<c32'",
        "'>c32'",
        "'|S5'",
        "'<U3'",
        "'>U3'",
        "'|V4'",
        "'<M8[ns]'",
        "'>M8[10s]'",
        "'<M8'",
        "'<m8[3D]'",
        "'>m8[ms]'",
        "[('x', '<i4'), ('y', '>f8', (2, 3))]",
        "[('a', '|u1'), ('', '|V3'), ('b', '<i4'), ('c', '|u1'), ('', '|V7'), ('d', '>f8')]",
        "[(('X title', 'x'), '<i4'), (('Y', 'y'), '>f4')]",
        "[('a', [('b', '<i2'), ('c', '>f4')]), ('s', '|S3'), ('u', '>U2'), ('t', '<M8[ms]')]",
        "[('c', ('<f8', (5,)), (2,)), ('r', [('p', '<i2'), ('q', '|S2')], (2,))]",
        "[('caf\u{e9}', '<i2'), (\"it's\", '<i2'), ('a\\'b\"c\\\\d', '<i2')]",
        "[('\u{6570}\u{636e}', '<i4'), ('\u{1F600}', '>u2')]",
        "[('', '<i4'), ('b', '<f4')]",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    // 500 long names: the header no longer fits a 16-bit length, so version 2.0.
    let fields: Vec<String> = (0..500)
        .map(|i| format!("('field_{i:03}_{}', '|u1')", "x".repeat(120)))
        .collect();
    descrs.push(format!("[{}]", fields.join(", ")));
    descrs
}

/// numpy loads each file we wrote and checks dtype, shape, order, version,
/// the data bytes (`data_hex`, in memory order) and values (`values`, as
/// numpy's `tolist()` gives them, in memory order) when the case has them,
/// and that `np.save` of what it loaded gives our file byte for byte.
/// Prints the list of disagreements.
const NUMPY_CHECKS: &str = r#"
import io, json, sys, warnings
import numpy as np
from numpy.lib import format as npf
from numpy.lib import _format_impl

problems = []
cases = json.load(open(sys.argv[1]))
for case in cases:
    path, label = case["file"], case.get("how", case["descr"][:60])
    raw = open(path, "rb").read()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arr = np.load(path, max_header_size=10**7)
            with open(path, "rb") as f:
                version = npf.read_magic(f)
                shape, fortran, dtype = _format_impl._read_array_header(f, version, max_header_size=10**7)
    except Exception as e:
        problems.append(f"{path} {label}: numpy refuses it: {type(e).__name__}: {e}")
        continue
    def check(what, got, want):
        if got != want:
            problems.append(f"{path} {label}: {what}: numpy {got!r:.300}, we meant {want!r:.300}")
    check("descr", repr(npf.dtype_to_descr(arr.dtype)), case["descr"])
    check("shape", list(arr.shape), case["shape"])
    check("fortran_order", fortran, case["fortran_order"])
    check("version", "%d.%d" % version, case["version"])
    memory_order = "F" if fortran else "C"
    if "data_hex" in case:
        check("data", arr.tobytes(order=memory_order).hex(), case["data_hex"])
    if "values" in case:
        values = arr.ravel(order=memory_order).tolist()
        if arr.dtype.kind == "S":
            values = [v.decode("latin-1") for v in values]
        check("values", values, case["values"])
    header = {"descr": npf.dtype_to_descr(arr.dtype), "fortran_order": fortran, "shape": shape}
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _format_impl._write_array_header(buf, header, None)
    check("numpy's header for it", raw[:len(buf.getvalue())], buf.getvalue())
    # np.save of the loaded array reproduces the file (except zero-size Fortran
    # arrays, which np.save always writes with fortran_order False).
    if not (fortran and arr.size == 0):
        buf = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.save(buf, arr)
        check("np.save of it", buf.getvalue(), raw)
print(json.dumps(problems))
"#;

/// We write files with `write_npy` (any dtype; data in the header's memory
/// order and byte order), numpy reads them back and re-saves them identically.
#[test]
#[ignore = "needs numpy: run scripts/setup-venv.sh, then cargo test -- --ignored"]
fn we_write_numpy_reads() {
    let dir = temp_dir("we-write");
    let shapes: [(&[usize], Order); 8] = [
        (&[], Order::C),
        (&[5], Order::C),
        (&[3, 4], Order::C),
        (&[3, 4], Order::Fortran),
        (&[2, 3, 4], Order::Fortran),
        (&[0], Order::C),
        (&[0, 3], Order::Fortran),
        (&[1; 64], Order::C),
    ];
    let mut rng = SplitMix(0x5EED);
    let mut cases = Vec::new();
    for descr in descrs_we_write() {
        let dtype = DType::parse(&descr).unwrap_or_else(|e| panic!("parse {descr}: {e}"));
        for (shape, order) in shapes {
            if shape.len() == 64 && descr.len() > 1000 {
                continue; // one v2 case is plenty
            }
            let header = Header {
                dtype: dtype.clone(),
                order,
                shape: shape.to_vec(),
            };
            let mut data = vec![0u8; header.data_len().expect("size")];
            for element in data.chunks_exact_mut(dtype.itemsize().max(1)) {
                fill_element(&dtype, element, &mut rng);
            }
            let mut file = Vec::new();
            write_npy(&mut file, &npy_core::NpyBytes::new(&header, &data).unwrap())
                .expect("write_npy");
            let version = match file[6] {
                1 => Version::V1,
                2 => Version::V2,
                _ => Version::V3,
            };
            let path = dir.join(format!("{:03}.npy", cases.len()));
            std::fs::write(&path, &file).expect("write");
            cases.push(serde_json::json!({
                "file": path,
                "descr": dtype.header_repr(),
                "shape": shape,
                "fortran_order": order == Order::Fortran,
                "version": match version { Version::V1 => "1.0", Version::V2 => "2.0", Version::V3 => "3.0" },
                "data_hex": to_hex(&data),
            }));
        }
    }
    assert!(cases.len() > 300, "wrote only {} files", cases.len());
    numpy_checks(&dir, &cases);
}

/// The committed fixtures are exactly what the generator makes with this numpy.
#[test]
#[ignore = "needs numpy: run scripts/setup-venv.sh, then cargo test -- --ignored"]
fn fixtures_are_up_to_date() {
    let script = repo_root().join("scripts").join("gen_fixtures.py");
    let out = run_python(
        "import runpy, sys; sys.argv = [sys.argv[1], '--check']; runpy.run_path(sys.argv[0], run_name='__main__')",
        &[OsStr::new(&script)],
    );
    assert!(
        out.contains("match a fresh run"),
        "unexpected output: {out}"
    );
}

/// How a typed case is written.
#[derive(Clone, Copy, Debug)]
enum Writer {
    /// `write_npy` of a slice with a shape, in one call.
    Slice,
    /// `NpyWriter::write_elements` in chunks of 7 elements.
    Chunks,
}

/// Writes `data` (memory order) as `shape`/`order` with `writer` and records
/// what numpy should find: `dtype` is numpy's `dtype.str`, `values` the
/// elements as numpy's `tolist()` gives them, in memory order.
fn write_typed<T: Element>(
    dir: &Path,
    cases: &mut Vec<Value>,
    (data, values, dtype): (&[T], &[Value], &str),
    shape: &[usize],
    order: Order,
    writer: Writer,
) {
    let path = dir.join(format!("typed_{:03}.npy", cases.len()));
    let file = std::fs::File::create(&path).expect("create");
    // np.save's rule: fortran_order only for data that is Fortran- but not
    // also C-contiguous (an empty array, or one with at most one axis
    // longer than 1, is both). A view is written the way np.save writes the
    // same array; NpyWriter writes the header it is given.
    let also_c_contiguous = shape.contains(&0) || shape.iter().filter(|&&d| d != 1).count() <= 1;
    let fortran = match writer {
        Writer::Slice => order == Order::Fortran && !also_c_contiguous,
        Writer::Chunks => order == Order::Fortran,
    };
    match writer {
        Writer::Slice => write_npy(
            file,
            &npy_core::ArrayView::from_slice(data, shape, order).unwrap(),
        )
        .expect("write_npy"),
        Writer::Chunks => {
            let header = Header {
                dtype: T::dtype(),
                order,
                shape: shape.to_vec(),
            };
            let mut npy = NpyWriter::new(file, &header, None).expect("NpyWriter::new");
            for chunk in data.chunks(7) {
                npy.write_elements(chunk).expect("write_elements");
            }
            npy.finish().expect("finish");
        }
    }
    cases.push(serde_json::json!({
        "file": path,
        "how": format!("{writer:?} {} {shape:?} {order:?}", std::any::type_name::<T>()),
        "descr": format!("'{dtype}'"),
        "shape": shape,
        "fortran_order": fortran,
        "version": "1.0",
        "values": values,
    }));
}

/// Rust values written with `write_npy` and `NpyWriter` (every native
/// element type, C and Fortran order, 0-d and empty arrays) load in numpy as
/// exactly those values, in the layout we meant.
#[test]
#[ignore = "needs numpy: run scripts/setup-venv.sh, then cargo test -- --ignored"]
fn typed_writes_numpy_reads() {
    let dir = temp_dir("typed-writes");
    let mut cases = Vec::new();
    // 24 elements: fits every shape below.
    let n = 24;
    let ints: Vec<i64> = (0..n).map(|i| (i - 12) * 0x0123_4567_89AB).collect();
    macro_rules! typed {
        ($ty:ty, $dtype:expr, $make:expr) => {{
            let data: Vec<$ty> = (0..n).map($make).collect();
            let values: Vec<Value> = data.iter().map(|&x| Value::from(x)).collect();
            (data, values, $dtype)
        }};
    }
    let bools = typed!(bool, "|b1", |i| i % 3 == 0);
    let i8s = typed!(i8, "|i1", |i| (i * 11 - 128) as i8);
    let u8s = typed!(u8, "|u1", |i| (i * 11) as u8);
    let i16s = typed!(i16, "<i2", |i| (ints[i as usize] >> 24) as i16);
    let u16s = typed!(u16, "<u2", |i| (i * 2741) as u16);
    let i32s = typed!(i32, "<i4", |i| (ints[i as usize] >> 8) as i32);
    let u32s = typed!(u32, "<u4", |i| (i as u32).wrapping_mul(0x9E37_79B9));
    let i64s = typed!(i64, "<i8", |i| ints[i as usize] * 1000);
    let u64s = typed!(u64, "<u8", |i| (i as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let f32s = typed!(f32, "<f4", |i| (i as f32 - 7.5) * 0.1);
    let f64s = typed!(f64, "<f8", |i| (i as f64 - 7.5) * 1e-300
        + f64::from(i as u8) * 0.3);
    let bytes: Vec<[u8; 5]> = (0..n)
        .map(|i| [b'a' + i as u8, 0xe9, 0, i as u8 % 2, 0])
        .collect();
    // numpy's S scalars drop trailing NULs; the inner NUL stays.
    let byte_values: Vec<Value> = bytes
        .iter()
        .map(|b| {
            let end = b.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
            Value::from(b[..end].iter().map(|&c| char::from(c)).collect::<String>())
        })
        .collect();
    let bytes = (bytes, byte_values, "|S5");

    let layouts: [(&[usize], Order); 7] = [
        (&[24], Order::C),
        (&[4, 6], Order::C),
        (&[4, 6], Order::Fortran),
        (&[2, 3, 4], Order::Fortran),
        (&[], Order::C),
        (&[0, 6], Order::C),
        (&[6, 0], Order::Fortran),
    ];
    macro_rules! all_layouts {
        ($($case:expr),*) => {$(
            for (shape, order) in layouts {
                let count = shape.iter().product::<usize>();
                for writer in [Writer::Slice, Writer::Chunks] {
                    let (data, values, dtype) = &$case;
                    let case = (&data[..count], &values[..count], *dtype);
                    write_typed(&dir, &mut cases, case, shape, order, writer);
                }
            }
        )*};
    }
    all_layouts!(
        bools, i8s, u8s, i16s, u16s, i32s, u32s, i64s, u64s, f32s, f64s, bytes
    );

    assert!(cases.len() > 150, "wrote only {} files", cases.len());
    numpy_checks(&dir, &cases);
}

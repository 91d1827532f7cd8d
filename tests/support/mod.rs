//! Shared helpers for the root package's integration tests: where the fixtures
//! are, the manifest of numpy's answers, and the numpy venv for live interop.
//!
//! Each test binary uses a subset of these, hence the `dead_code` allowance.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The repository root (the root package's manifest directory).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `tests/fixtures/`: files written by numpy (see `scripts/gen_fixtures.py`).
pub fn fixtures_dir() -> PathBuf {
    repo_root().join("tests").join("fixtures")
}

/// The bytes of a fixture, by its path relative to [`fixtures_dir`].
pub fn fixture_bytes(relative: &str) -> Vec<u8> {
    let path = fixtures_dir().join(relative);
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading fixture {}: {e}", path.display()))
}

/// `tests/fixtures/manifest.json`: numpy's answers for every fixture.
pub fn manifest() -> serde_json::Value {
    let path = fixtures_dir().join("manifest.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// The Python that has the pinned numpy: `$NPY_PYTHON`, else `<repo>/.venv`'s.
///
/// Panics with the command to run when neither exists, so an interop run can
/// never pass by silently skipping.
pub fn python() -> PathBuf {
    let path = match std::env::var_os("NPY_PYTHON") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => venv_python(&repo_root().join(".venv")),
    };
    assert!(
        path.exists(),
        "no Python with numpy at {}: run scripts/setup-venv.sh (or set NPY_PYTHON)",
        path.display()
    );
    path
}

fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

/// Runs `python -c code args...` and returns its stdout; panics with stderr on failure.
///
/// Inside `code`, `sys.argv[1:]` are `args`.
pub fn run_python(code: &str, args: &[&OsStr]) -> String {
    let python = python();
    let output = Command::new(&python)
        .arg("-c")
        .arg(code)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", python.display()));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "python failed ({}):\n--- code ---\n{code}\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// A fresh, empty directory for one test, under the system temp dir.
///
/// Unique per process and call, so tests running in parallel never share one.
/// Left in place after the test so a failure can be inspected.
pub fn temp_dir(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("npy-mmap-test-{name}-{}-{n}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap_or_else(|e| panic!("clearing {}: {e}", dir.display()));
    }
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
    dir
}

/// Lower-case hex of `bytes` (the manifest's `c_le_hex` format).
pub fn to_hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Bytes from hex text; panics on malformed input (manifest data is generated).
pub fn from_hex(hex: &str) -> Vec<u8> {
    assert!(hex.len().is_multiple_of(2), "odd-length hex");
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digit"))
        .collect()
}

/// Whether any scalar inside `dtype` is stored big-endian.
pub fn has_big_endian(dtype: &npy_core::DType) -> bool {
    use npy_core::{ByteOrder, DType};
    match dtype {
        DType::Scalar(s) => s.byte_order == ByteOrder::Big,
        DType::Structured(r) => r.fields.iter().any(|f| has_big_endian(&f.dtype)),
        DType::SubArray(base, _) => has_big_endian(base),
        _ => false,
    }
}

/// Whether `dtype` is a big-endian long double (or long double complex), which
/// `npy_core::Value` documents it cannot decode (only little-endian x87 is known).
pub fn has_big_endian_long_double(dtype: &npy_core::DType) -> bool {
    use npy_core::{ByteOrder, DType, ScalarKind};
    matches!(dtype, DType::Scalar(s)
        if s.byte_order == ByteOrder::Big
            && matches!((s.kind, s.itemsize), (ScalarKind::Float, 12 | 16) | (ScalarKind::Complex, 24 | 32)))
}

/// Whether the array's stored bytes already are its little-endian C-order bytes
/// (the manifest's `c_le_hex`): no big-endian scalar, and no transposition.
pub fn data_is_c_le(header: &npy_core::Header) -> bool {
    let transposed = header.order == npy_core::Order::Fortran
        && header.shape.iter().filter(|&&d| d > 1).count() > 1;
    !transposed && !has_big_endian(&header.dtype)
}

/// The data of a read array in logical C order (last index fastest), whatever
/// its memory order: npy-core's record view iterates logically.
pub fn logical_c_bytes(array: &npy_core::NpyArray) -> npy_core::Result<Vec<u8>> {
    Ok(array
        .raw_view()?
        .iter()
        .flat_map(|element| element.bytes())
        .copied()
        .collect())
}

/// Whether `ours` is the element numpy recorded as `numpy`, for a manifest
/// entry's `values_kind` (format in `scripts/gen_fixtures.py`'s docstring).
///
/// Floats are repr strings, equal when they parse to the same bits (so -0.0
/// and 0.0 differ) or are both NaN; long doubles compare their f64 value;
/// NaT is numpy's int64 minimum.
pub fn same_value(kind: &str, ours: &npy_core::Value, numpy: &serde_json::Value) -> bool {
    use npy_core::Value;
    let same_float = |x: f64, numpy: &serde_json::Value| {
        numpy
            .as_str()
            .and_then(|s| s.parse::<f64>().ok())
            .is_some_and(|n| n.to_bits() == x.to_bits() || (n.is_nan() && x.is_nan()))
    };
    match (kind, ours) {
        ("bool", Value::Bool(b)) => numpy.as_bool() == Some(*b),
        ("int", Value::Int(i)) => numpy.as_i64() == Some(*i),
        ("uint", Value::UInt(u)) => numpy.as_u64() == Some(*u),
        ("float", Value::Float(x) | Value::LongDouble(_, Some(x))) => same_float(*x, numpy),
        ("complex", Value::Complex(re, im)) => match numpy.as_array().map(Vec::as_slice) {
            Some([n_re, n_im]) => same_float(*re, n_re) && same_float(*im, n_im),
            _ => false,
        },
        // numpy's bytes are latin-1 text: one char per byte.
        ("bytes", Value::Bytes(bytes)) => numpy.as_str().is_some_and(|s| {
            s.chars()
                .map(u32::from)
                .eq(bytes.iter().map(|&b| u32::from(b)))
        }),
        ("str", Value::Str(text)) => numpy.as_str() == Some(text.as_str()),
        ("datetime", Value::DateTime(ticks, _)) | ("timedelta", Value::TimeDelta(ticks, _)) => {
            numpy.as_i64() == Some(ticks.unwrap_or(i64::MIN))
        }
        _ => false,
    }
}

/// Where an array read by npy-core disagrees with numpy's description of the
/// same file (a manifest entry, or `describe_npy` output): element count and,
/// element by element in logical order, the decoded [`npy_core::Value`]s
/// against numpy's `values`. Entries without `values` (void, records,
/// subarrays) are covered by the byte comparison alone.
pub fn value_disagreements(array: &npy_core::NpyArray, entry: &serde_json::Value) -> Vec<String> {
    let Some(kind) = entry["values_kind"].as_str() else {
        return Vec::new();
    };
    let numpy = entry["values"].as_array().expect("values list");
    let records = match array.raw_view() {
        Ok(records) => records,
        Err(e) => return vec![format!("records view: {e}")],
    };
    let mut found = Vec::new();
    if records.len() != numpy.len() {
        found.push(format!(
            "{} elements, numpy has {}",
            records.len(),
            numpy.len()
        ));
    }
    for (i, (element, want)) in records.iter().zip(numpy).enumerate() {
        match element.value() {
            Ok(value) if same_value(kind, &value, want) => {}
            Ok(value) => found.push(format!("value {i}: ours {value:?}, numpy {want}")),
            Err(e) => found.push(format!("value {i}: decode failed: {e}")),
        }
    }
    found
}

/// A fresh directory under the system temp dir (`npy-<tag>-<pid>`), removed
/// with everything in it when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("npy-{tag}-{}", std::process::id()));
        drop(std::fs::remove_dir_all(&dir));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        drop(std::fs::remove_dir_all(&self.0));
    }
}

// ---- object arrays (dtype=object) --------------------------------------------

use npy_core::NpyArray;
use npy_core::pickle::PyValue;
use serde_json::Value;

/// A value in the manifest's tagged JSON form (`obj_json` in the generator).
pub fn value_json(value: &PyValue) -> Value {
    let items = |items: &[PyValue]| Value::Array(items.iter().map(value_json).collect());
    match value {
        PyValue::None => serde_json::json!(["none"]),
        PyValue::Bool(b) => serde_json::json!(["bool", b]),
        PyValue::Int(_) | PyValue::BigInt(_) => serde_json::json!(["int", value.to_string()]),
        PyValue::Float(_) => serde_json::json!(["float", value.to_string()]),
        PyValue::Complex(re, im) => serde_json::json!([
            "complex",
            PyValue::Float(*re).to_string(),
            PyValue::Float(*im).to_string()
        ]),
        PyValue::Str(s) => serde_json::json!(["str", s]),
        PyValue::Bytes(b) => serde_json::json!(["bytes", to_hex(b)]),
        PyValue::ByteArray(b) => serde_json::json!(["bytearray", to_hex(b)]),
        PyValue::Tuple(v) => serde_json::json!(["tuple", items(v)]),
        PyValue::List(v) => serde_json::json!(["list", items(v)]),
        PyValue::Set(v) => serde_json::json!(["set", items(v)]),
        PyValue::FrozenSet(v) => serde_json::json!(["frozenset", items(v)]),
        PyValue::Dict(pairs) => serde_json::json!([
            "dict",
            pairs
                .iter()
                .map(|(k, v)| serde_json::json!([value_json(k), value_json(v)]))
                .collect::<Vec<_>>()
        ]),
        PyValue::Array(array) => serde_json::json!(["array", array_json(array)]),
        PyValue::Scalar(scalar) => {
            serde_json::json!(["scalar", scalar.dtype.header_repr(), to_hex(&scalar.bytes)])
        }
        PyValue::Type(name) => serde_json::json!(["type", name]),
    }
}

pub fn array_json(array: &NpyArray) -> Value {
    let header = array.header();
    let mut out = serde_json::json!({
        "descr": header.dtype.header_repr(),
        "shape": header.shape,
        "fortran_order": header.order == npy_core::Order::Fortran,
    });
    match array.objects() {
        Some(values) => out["objects"] = values.iter().map(value_json).collect(),
        None => out["hex"] = serde_json::json!(to_hex(array.bytes())),
    }
    out
}

/// `value` with every nested array of a byte-swapped scalar type in native
/// order: numpy's `ndarray.__setstate__` (the form `write_array` writes, as
/// numpy does) swaps such arrays on load; protocol 5's `_frombuffer` keeps them.
pub fn native(value: &PyValue) -> PyValue {
    let all = |items: &[PyValue]| items.iter().map(native).collect();
    match value {
        PyValue::Array(array) => match array.objects() {
            Some(items) => PyValue::Array(Box::new(
                NpyArray::from_objects(array.header().clone(), all(items)).unwrap(),
            )),
            None => {
                let mut array = array.clone();
                if matches!(array.header().dtype, npy_core::DType::Scalar(_)) {
                    array.convert_byte_order(npy_core::ByteOrder::NATIVE);
                }
                PyValue::Array(array)
            }
        },
        PyValue::List(items) => PyValue::List(all(items)),
        PyValue::Tuple(items) => PyValue::Tuple(all(items)),
        other => other.clone(),
    }
}

/// `json` (from [`value_json`] / [`array_json`], or the generator's) with
/// the items of every set and frozenset sorted: sets have no order, and
/// Python's iteration order after loading need not be the pickle's.
pub fn sets_sorted(json: &Value) -> Value {
    match json {
        Value::Array(items) => {
            let mut items: Vec<Value> = items.iter().map(sets_sorted).collect();
            if matches!(items.first(), Some(Value::String(tag)) if tag == "set" || tag == "frozenset")
                && let Some(Value::Array(members)) = items.get_mut(1)
            {
                members.sort_by_key(|member| member.to_string());
            }
            Value::Array(items)
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (key.clone(), sets_sorted(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// One test of a binary at a time, for tests that start processes: a child
/// is started with `fork`, which for a moment (until `exec` closes them)
/// holds copies of every descriptor of this process, and with them its
/// locks, so a test that expects an exact lock outcome must not run while
/// another test is starting children.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Starts this test binary again as a child that runs only its test
/// `child_entry_point`, with `job` in the environment variable `env`, and
/// waits until the child prints a line ending in "ready"; its stdin and
/// stdout are pipes.
pub fn spawn_child(
    env: &str,
    job: &str,
) -> std::io::Result<(
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
)> {
    use std::io::BufRead;
    let mut child = Command::new(std::env::current_exe()?)
        .args([
            "child_entry_point",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(env, job)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    let piped = child
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("no stdout"))?;
    let mut stdout = std::io::BufReader::new(piped);
    let mut line = String::new();
    loop {
        line.clear();
        if stdout.read_line(&mut line)? == 0 {
            let status = child.wait()?;
            return Err(std::io::Error::other(format!(
                "child {job} ended before it was ready: {status}"
            )));
        }
        if line.trim_end().ends_with("ready") {
            return Ok((child, stdout));
        }
    }
}

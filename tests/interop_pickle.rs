//! Live object-array interop with the pinned numpy, both ways: numpy writes
//! object arrays (np.save, pickle protocols 2/3/5, savez) that we decode to
//! the values numpy itself loads, and we write object arrays (`save_array`,
//! `write_array`, `NpzWriter::add_array`) that `np.load(allow_pickle=True)`
//! loads as equal objects and nested arrays (same dtype, shape, values).
//!
//! Every test is `#[ignore]`: it needs the venv from `scripts/setup-venv.sh`.
//! CI runs them with `cargo test -- --ignored`.

mod support;

use npy_core::pickle::{NumpyScalar, PyValue};
use npy_core::{DType, Header, NpyArray, Order, ReadOptions};
use npy_mmap::npz::{Compression, NpzWriter};
use serde_json::Value;
use support::{array_json, native, repo_root, run_python, sets_sorted, temp_dir};

/// The generator's JSON form of values (`obj_json`, `array_json` in
/// scripts/gen_fixtures.py), so both sides describe values one way.
const PRELUDE: &str = r#"
import io, json, pickle, sys, warnings
sys.path.insert(0, sys.argv[1])
import numpy as np
from gen_fixtures import array_json
"#;

fn allowing() -> ReadOptions {
    let mut options = ReadOptions::default();
    options.parse.allow_pickle = true;
    options
}

fn python(code: &str, dir: &std::path::Path) -> Value {
    let scripts = repo_root().join("scripts");
    let text = run_python(
        &format!("{PRELUDE}{code}"),
        &[scripts.as_os_str(), dir.as_os_str()],
    );
    serde_json::from_str(&text).expect("json from numpy")
}

#[test]
#[ignore = "needs numpy: NPY_PYTHON=$(scripts/setup-venv.sh) cargo test -- --ignored"]
fn we_decode_what_numpy_writes() {
    let dir = temp_dir("pickle-from-numpy");
    // Random nested values of every kind, saved every way numpy saves them.
    let numpy = python(
        r#"
import random
from numpy.lib import format as npf
rng = random.Random(1234)
def leaf():
    return rng.choice([
        None, rng.random() < 0.5, rng.randint(-2**70, 2**70), rng.randint(-300, 300), rng.random() * 1e6,
        complex(rng.random(), -rng.random()), "".join(rng.choice("aé日😀'\"\\\n") for _ in range(rng.randint(0, 6))),
        bytes(rng.randrange(256) for _ in range(rng.randint(0, 5))), bytearray(b"x" * rng.randint(0, 3)),
        np.float32(rng.random()), np.int16(rng.randint(-9, 9)), np.str_("n"),
        np.arange(rng.randint(0, 5)).astype(rng.choice(["<i4", ">i8", "<f8", "<c16", "|u1", "<U3", "|S2", "?"])),
        np.asfortranarray(np.arange(6.0).reshape(2, 3)), np.array("0-d"),
        np.zeros(2, dtype=[("a", "<i2"), ("b", "<f4", (2,))]),
    ])
def value(depth):
    if depth > 3 or rng.random() < 0.4:
        return leaf()
    kind = rng.choice(["list", "tuple", "dict", "set", "frozenset"])
    items = [value(depth + 1) for _ in range(rng.randint(0, 4))]
    if kind == "list": return items
    if kind == "tuple": return tuple(items)
    if kind == "dict": return {i: v for i, v in enumerate(items)}
    hashable = [rng.randint(0, 99) for _ in items]
    return set(hashable) if kind == "set" else frozenset(hashable)
out = {}
dir = sys.argv[2]
for n, shape in enumerate([(50,), (4, 5), (2, 3, 2), (), (0,)]):
    a = np.empty(shape, dtype=object)
    for index in np.ndindex(shape):
        a[index] = value(0)
    for order in "CF":
        arr = np.asfortranarray(a) if order == "F" else a
        name = f"{dir}/save_{n}_{order}.npy"
        np.save(name, arr)
        out[name] = array_json(np.load(name, allow_pickle=True))
        for protocol in (2, 3, 5):
            name = f"{dir}/p{protocol}_{n}_{order}.npy"
            with open(name, "wb") as f:
                npf.write_array_header_1_0(f, npf.header_data_from_array_1_0(arr))
                pickle.dump(arr, f, protocol=protocol)
            out[name] = array_json(np.load(name, allow_pickle=True))
np.savez_compressed(f"{dir}/archive.npz", a=a, b=np.arange(3))
print(json.dumps(out))
"#,
        &dir,
    );
    let files = numpy.as_object().unwrap();
    assert!(files.len() >= 40);
    for (file, expected) in files {
        let array = npy_mmap::OpenOptions::from(allowing())
            .load(file)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            sets_sorted(&array_json(&array)),
            sets_sorted(expected),
            "{file}"
        );
    }
    let mut archive = npy_mmap::OpenOptions::from(allowing())
        .open_npz(dir.join("archive.npz"))
        .unwrap();
    assert_eq!(archive.load("a").unwrap().header().shape, [0]);
    assert_eq!(
        archive.load("b").unwrap().view::<i64>().unwrap().to_vec(),
        [0, 1, 2]
    );
}

fn scalar(descr: &str, bytes: Vec<u8>) -> PyValue {
    let dtype = DType::parse(descr).unwrap();
    PyValue::Scalar(Box::new(NumpyScalar { dtype, bytes }))
}

/// Values of every kind, nested arrays of many dtypes among them.
fn every_kind() -> Vec<PyValue> {
    let array = |descr: &str, shape: Vec<usize>, order: Order| {
        let header = Header::new(DType::parse(descr).unwrap(), order, shape);
        let len = header.data_len().unwrap();
        let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8 & 0x3f).collect();
        let layout = npy_core::Layout {
            version: npy_core::Version::V1,
            header_len: 0,
            data_offset: 0,
            data_len: len,
            python2_header: false,
        };
        let bytes = npy_core::io::AlignedBytes::copy_from(&data);
        PyValue::from(NpyArray::from_parts(header, layout, bytes).unwrap())
    };
    let nested_objects = NpyArray::from_objects(
        Header::new(DType::Object, Order::Fortran, vec![2, 2]),
        vec![
            1.into(),
            "two".into(),
            PyValue::None,
            PyValue::from(vec![3]),
        ],
    )
    .unwrap();
    vec![
        PyValue::None,
        true.into(),
        (-5).into(),
        u64::MAX.into(),
        i128::MIN.into(),
        0.1.into(),
        f64::NEG_INFINITY.into(),
        PyValue::Complex(1.5, -0.0),
        "é日😀 'quoted' \"too\"".into(),
        PyValue::Bytes(vec![0, 255, 39]),
        PyValue::ByteArray(b"ab".to_vec()),
        PyValue::Tuple(vec![]),
        PyValue::Tuple(vec![1.into(), PyValue::Tuple(vec!["x".into()])]),
        PyValue::List((0..1500).map(PyValue::from).collect()),
        PyValue::Dict(vec![
            ("k".into(), PyValue::List(vec![])),
            (PyValue::Tuple(vec![1.into()]), PyValue::None),
        ]),
        PyValue::Set(vec![1.into(), 2.into()]),
        PyValue::FrozenSet(vec!["f".into()]),
        scalar("<f8", 1.5f64.to_le_bytes().to_vec()),
        scalar("<i4", (-3i32).to_le_bytes().to_vec()),
        array("<i8", vec![3], Order::C),
        array("|u1", vec![4], Order::C),
        array(">i2", vec![2], Order::C),
        array("<f4", vec![2, 3], Order::Fortran),
        array("<c16", vec![1], Order::C),
        array("|b1", vec![2], Order::C),
        array("<U3", vec![2], Order::C),
        array("|S4", vec![1], Order::C),
        array("<M8[ns]", vec![2], Order::C),
        array("<m8[10s]", vec![1], Order::C),
        array(
            "[('x', '<i4'), (('T', 'y'), '>f8', (2,))]",
            vec![2],
            Order::C,
        ),
        array("<f8", vec![], Order::C),
        array("<f8", vec![2, 0], Order::C),
        nested_objects.into(),
    ]
}

#[test]
#[ignore = "needs numpy: NPY_PYTHON=$(scripts/setup-venv.sh) cargo test -- --ignored"]
fn numpy_loads_what_we_write() {
    let dir = temp_dir("pickle-to-numpy");
    let values = every_kind();
    let count = values.len();
    let mut written = Vec::new();
    for order in [Order::C, Order::Fortran] {
        // (count / 3, 3) would drop a value; pad to a multiple of 3.
        let mut items = values.clone();
        while !items.len().is_multiple_of(3) {
            items.push(PyValue::None);
        }
        let shape = vec![items.len() / 3, 3];
        let array =
            NpyArray::from_objects(Header::new(DType::Object, order, shape), items).unwrap();
        let path = dir.join(format!("ours_{order:?}.npy"));
        npy_mmap::save(&path, &array).unwrap();
        written.push((path, array));
    }
    for (name, shape, items) in [
        ("zero_d", vec![], vec![PyValue::from(vec![1, 2])]),
        ("empty", vec![0], vec![]),
        ("flat", vec![count], values.clone()),
    ] {
        let array =
            NpyArray::from_objects(Header::new(DType::Object, Order::C, shape), items).unwrap();
        let path = dir.join(format!("{name}.npy"));
        let mut file = std::fs::File::create(&path).unwrap();
        npy_core::write_npy(&mut file, &array).unwrap();
        written.push((path, array));
    }
    let archive = dir.join("ours.npz");
    let mut npz = NpzWriter::create(&archive).unwrap();
    npz.set_compression(Compression::DEFLATED).unwrap();
    npz.add("objects", &written[0].1).unwrap();
    npz.add("numbers", &[1.5f64, 2.5][..]).unwrap();
    npz.finish().unwrap();

    let numpy = python(
        r#"
import os
out = {}
for name in sorted(os.listdir(sys.argv[2])):
    path = os.path.join(sys.argv[2], name)
    if name.endswith(".npy"):
        out[name] = array_json(np.load(path, allow_pickle=True))
    else:
        with np.load(path, allow_pickle=True) as z:
            out[name] = {key: array_json(z[key]) for key in z.files}
print(json.dumps(out))
"#,
        &dir,
    );
    for (path, array) in &written {
        let name = path.file_name().unwrap().to_str().unwrap();
        // numpy's unpickling swaps byte-swapped arrays to native order.
        let values: Vec<PyValue> = array.objects().unwrap().iter().map(native).collect();
        let expected = NpyArray::from_objects(array.header().clone(), values).unwrap();
        assert_eq!(
            sets_sorted(&numpy[name]),
            sets_sorted(&array_json(&expected)),
            "{name}"
        );
    }
    let members = &numpy["ours.npz"];
    let first: Vec<PyValue> = written[0].1.objects().unwrap().iter().map(native).collect();
    let first = NpyArray::from_objects(written[0].1.header().clone(), first).unwrap();
    assert_eq!(
        sets_sorted(&members["objects"]),
        sets_sorted(&array_json(&first))
    );
    assert_eq!(
        members["numbers"]["hex"],
        "000000000000f83f0000000000000440"
    );
}

//! Live npz interop with the pinned numpy: we write archives numpy loads
//! (names, dtypes, values, zip integrity, alignment), numpy writes archives
//! we read (savez, savez_compressed, streamed, nested and UTF-8 names).
//!
//! Every test is `#[ignore]`: it needs the venv from `scripts/setup-venv.sh`.
//! CI runs them with `cargo test -- --ignored`.

mod support;

use std::ffi::OsStr;
use std::io::Write;

use npy_core::{DType, Element, Header, Order, ReadOptions};
use npy_mmap::npz::{Compression, Member, NpzArchive, NpzWriter};
use serde_json::Value;
use support::{from_hex, run_python, temp_dir, to_hex};

/// Loads the archive in argv[1] with numpy and prints, per key: dtype.str,
/// shape, fortran flag, and the data as little-endian C-order hex; raw
/// members as hex of their bytes. Also zip integrity and the alignment of
/// every stored member's array data.
const NUMPY_LOADS: &str = r#"
import json, sys, zipfile
import numpy as np
path = sys.argv[1]
out = {"members": {}, "aligned": True}
with zipfile.ZipFile(path) as zf:
    out["testzip"] = zf.testzip()
    raw = open(path, "rb").read()
    for info in zf.infolist():
        if info.compress_type == zipfile.ZIP_STORED:
            nlen, elen = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little"), \
                         int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
            start = info.header_offset + 30 + nlen + elen
            content = raw[start:start + info.file_size]
            if content.startswith(b"\x93NUMPY"):
                hlen = int.from_bytes(content[8:10], "little") + 10 if content[6] == 1 else int.from_bytes(content[8:12], "little") + 12
                out["aligned"] &= (start + hlen) % 64 == 0
with np.load(path) as z:
    out["files"] = list(z.files)
    for key in z.files:
        v = z[key]
        if isinstance(v, bytes):
            out["members"][key] = {"raw": v.hex()}
        else:
            le = v.astype(v.dtype.newbyteorder("<")) if v.dtype.byteorder == ">" else v
            out["members"][key] = {"dtype": v.dtype.str, "descr": repr(np.lib.format.dtype_to_descr(v.dtype)),
                                   "shape": list(v.shape), "fortran": bool(v.flags.f_contiguous and not v.flags.c_contiguous),
                                   "hex": np.ascontiguousarray(le).tobytes().hex()}
print(json.dumps(out))
"#;

fn numpy_loads(path: &std::path::Path) -> Value {
    let text = run_python(NUMPY_LOADS, &[path.as_os_str()]);
    serde_json::from_str(&text).expect("json from numpy")
}

fn le_bytes<T: Copy, const N: usize>(values: &[T], to_le: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|&v| to_le(v)).collect()
}

#[test]
#[ignore = "needs numpy (scripts/setup-venv.sh)"]
fn we_write_numpy_loads() {
    let dir = temp_dir("npz-we-write");
    let floats: Vec<f64> = (0..60).map(|i| i as f64 / 3.0 - 7.0).collect();
    let ints: Vec<i32> = (0..24).map(|i| i * 1000 - 7).collect();
    // A multi-megabyte member, so deflate runs on several chunks in parallel.
    let big: Vec<u32> = (0..1_500_000u32).map(|i| (i / 3) ^ (i % 17)).collect();
    let big_endian = Header {
        dtype: DType::parse("'>i2'").unwrap(),
        order: Order::C,
        shape: vec![3],
    };
    let record = Header {
        dtype: DType::parse("[('x', '<i4'), ('y', '>f8', (2,))]").unwrap(),
        order: Order::C,
        shape: vec![2],
    };
    let record_bytes: Vec<u8> = (0..40u8).collect();
    let fortran = Header {
        dtype: f64::dtype(),
        order: Order::Fortran,
        shape: vec![2, 3],
    };
    for (name, compression) in [
        ("stored.npz", Compression::Stored),
        ("deflated.npz", Compression::DEFLATED),
        ("fast.npz", Compression::Deflated { level: 1 }),
    ] {
        let path = dir.join(name);
        let mut writer = NpzWriter::create(&path).unwrap();
        writer.set_compression(compression).unwrap();
        writer
            .add(
                "floats",
                &npy_core::ArrayView::from_slice(&floats, &[6, 10], npy_core::Order::C).unwrap(),
            )
            .unwrap();
        writer
            .add(
                "group/sub/ints",
                &npy_core::ArrayView::from_slice(&ints, &[2, 3, 4], npy_core::Order::C).unwrap(),
            )
            .unwrap();
        writer
            .add(
                "données",
                &npy_core::ArrayView::from_slice(&[true, false, true], &[3], npy_core::Order::C)
                    .unwrap(),
            )
            .unwrap();
        writer.add("big", &big[..]).unwrap();
        writer
            .add(
                "empty",
                &npy_core::ArrayView::<f32>::from_slice(&[], &[0, 3], npy_core::Order::C).unwrap(),
            )
            .unwrap();
        writer
            .add(
                "scalar",
                &npy_core::ArrayView::from_slice(&[2.5f64], &[], npy_core::Order::C).unwrap(),
            )
            .unwrap();
        writer
            .add(
                "be",
                &npy_core::NpyBytes::new(&big_endian, &[0, 1, 0, 2, 1, 0]).unwrap(),
            )
            .unwrap();
        writer
            .add(
                "rec",
                &npy_core::NpyBytes::new(&record, &record_bytes).unwrap(),
            )
            .unwrap();
        writer
            .add(
                "fortran",
                &npy_core::NpyBytes::new(
                    &fortran,
                    &le_bytes(&[0.0f64, 3.0, 1.0, 4.0, 2.0, 5.0], f64::to_le_bytes),
                )
                .unwrap(),
            )
            .unwrap();
        let key = writer.next_positional_key().unwrap();
        writer.add(&key, &[9u8, 8][..]).unwrap();
        let mut raw = writer.start_raw_member("notes.txt").unwrap();
        raw.write_all(b"free text").unwrap();
        raw.finish().unwrap();
        writer.finish().unwrap();

        let numpy = numpy_loads(&path);
        assert_eq!(
            numpy["testzip"],
            Value::Null,
            "{name}: zipfile finds a bad CRC"
        );
        assert_eq!(
            numpy["aligned"], true,
            "{name}: stored array data is not 64-byte aligned"
        );
        assert_eq!(
            numpy["files"],
            serde_json::json!([
                "floats",
                "group/sub/ints",
                "données",
                "big",
                "empty",
                "scalar",
                "be",
                "rec",
                "fortran",
                "arr_0",
                "notes.txt"
            ]),
            "{name}"
        );
        let members = &numpy["members"];
        let check = |key: &str, dtype: &str, shape: Value, hex: String| {
            let m = &members[key];
            assert_eq!(m["dtype"], dtype, "{name}:{key}");
            assert_eq!(m["shape"], shape, "{name}:{key}");
            assert!(m["hex"] == hex.as_str(), "{name}:{key}: values differ");
        };
        check(
            "floats",
            "<f8",
            serde_json::json!([6, 10]),
            to_hex(&le_bytes(&floats, f64::to_le_bytes)),
        );
        check(
            "group/sub/ints",
            "<i4",
            serde_json::json!([2, 3, 4]),
            to_hex(&le_bytes(&ints, i32::to_le_bytes)),
        );
        check("données", "|b1", serde_json::json!([3]), "010001".into());
        check(
            "big",
            "<u4",
            serde_json::json!([big.len()]),
            to_hex(&le_bytes(&big, u32::to_le_bytes)),
        );
        check("empty", "<f4", serde_json::json!([0, 3]), String::new());
        check(
            "scalar",
            "<f8",
            serde_json::json!([]),
            to_hex(&2.5f64.to_le_bytes()),
        );
        check("be", ">i2", serde_json::json!([3]), "010002000001".into());
        check("arr_0", "|u1", serde_json::json!([2]), "0908".into());
        assert_eq!(
            members["rec"]["descr"],
            "[('x', '<i4'), ('y', '>f8', (2,))]"
        );
        assert_eq!(members["fortran"]["fortran"], true);
        check(
            "fortran",
            "<f8",
            serde_json::json!([2, 3]),
            to_hex(&le_bytes(
                &[0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0],
                f64::to_le_bytes,
            )),
        );
        assert_eq!(members["notes.txt"]["raw"], to_hex(b"free text"));
    }
}

/// numpy writes with savez, savez_compressed and to a non-seekable stream
/// (data descriptors); prints each array as little-endian C-order hex.
const NUMPY_WRITES: &str = r#"
import io, json, sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
arrays = {
    "f8": rng.standard_normal((40, 30)),
    "nested/i2be": np.arange(-50, 50, dtype=">i2").reshape(10, 10),
    "fortran": np.asfortranarray(rng.integers(0, 1000, (7, 9))),
    "\u6570\u636e": np.array(["ab", "\u00e9"], dtype="<U2"),
    "big": np.arange(700_000, dtype="<u4") // 5,
}
class NonSeekable(io.RawIOBase):
    def __init__(self, f): self.f = f
    def writable(self): return True
    def write(self, b): return self.f.write(b)
np.savez(d + "/savez.npz", *[np.arange(3)], **arrays)
np.savez_compressed(d + "/compressed.npz", *[np.arange(3)], **arrays)
with open(d + "/streamed.npz", "wb") as f:
    np.savez(NonSeekable(f), *[np.arange(3)], **arrays)
out = {}
for k, v in list(arrays.items()) + [("arr_0", np.arange(3))]:
    le = v.astype(v.dtype.newbyteorder("<")) if v.dtype.byteorder == ">" else v
    out[k] = {"shape": list(v.shape), "hex": np.ascontiguousarray(le).tobytes().hex()}
print(json.dumps(out))
"#;

#[test]
#[ignore = "needs numpy (scripts/setup-venv.sh)"]
fn numpy_writes_we_read() {
    let dir = temp_dir("npz-numpy-writes");
    let text = run_python(NUMPY_WRITES, &[OsStr::new(&dir)]);
    let expected: Value = serde_json::from_str(&text).unwrap();
    let expected = expected.as_object().unwrap();
    let native = ReadOptions {
        to_native: true,
        ..ReadOptions::default()
    };
    for name in ["savez.npz", "compressed.npz", "streamed.npz"] {
        let mut archive = npy_mmap::OpenOptions::from(native)
            .open_npz(dir.join(name))
            .unwrap();
        assert_eq!(archive.len(), expected.len(), "{name}");
        for (key, want) in expected {
            let array = archive
                .load(key)
                .unwrap_or_else(|e| panic!("{name}:{key}: {e}"));
            let shape: Vec<usize> = want["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            assert_eq!(array.header().shape, shape, "{name}:{key}");
            let want_bytes = from_hex(want["hex"].as_str().unwrap());
            let got = if array.header().order == Order::Fortran {
                let values = array.view::<i64>().unwrap().to_vec();
                le_bytes(&values, i64::to_le_bytes)
            } else {
                array.bytes().to_vec()
            };
            assert!(got == want_bytes, "{name}:{key}: values differ");
        }
        // numpy's savez does not align member data, but every stored member
        // can still be borrowed in place.
        if name != "compressed.npz" {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            let mut in_place = NpzArchive::from_bytes(&bytes).unwrap();
            let data = in_place.array_bytes("big").unwrap().data;
            assert_eq!(data.len(), 700_000 * 4);
            assert!(matches!(in_place.get("arr_0").unwrap(), Member::Array(_)));
        }
    }
}

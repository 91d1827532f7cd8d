//! Live numpy interop for the ecosystem features: files grown in place and
//! streamed (npy-mmap's `Appender`, `RowWriter`) load in numpy as the same
//! bytes `np.save` writes; `#[derive(NpyRecord)]` structs read and write
//! numpy's `align=True` nested layouts.
//!
//! Every test is `#[ignore]`: it needs the venv from `scripts/setup-venv.sh`.

mod support;

use std::ffi::OsStr;

use npy_core::io::write_npy;
use npy_core::{DType, Element, NpyRecord, Order};
use npy_mmap::CreateOptions;
use support::{run_python, temp_dir};
use zerocopy::byteorder::{BigEndian, I32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

#[test]
#[ignore = "needs numpy: run scripts/setup-venv.sh, then cargo test -- --ignored"]
fn numpy_loads_grown_and_streamed_files_as_np_save_writes_them() {
    let dir = temp_dir("interop-grow");
    let c = dir.join("c.npy");
    let f = dir.join("f.npy");
    run_python(
        "import sys, numpy as np\n\
         np.save(sys.argv[1], np.arange(12, dtype='<f8').reshape(3, 4))\n\
         np.save(sys.argv[2], np.asfortranarray(np.arange(6, dtype='>i4').reshape(2, 3)))\n",
        &[c.as_os_str(), f.as_os_str()],
    );
    // C order: rows along axis 0, across the 1-to-2-digit boundary.
    let mut appender = npy_mmap::OpenOptions::new().append(&c).unwrap();
    let more: Vec<f64> = (12..48).map(f64::from).collect();
    assert_eq!(appender.append(&more).unwrap(), 12);
    // Fortran order, big-endian: columns along the last axis.
    let mut appender = npy_mmap::OpenOptions::new().append(&f).unwrap();
    let column: Vec<u8> = [6i32, 7].iter().flat_map(|v| v.to_be_bytes()).collect();
    assert_eq!(appender.append_bytes(&column).unwrap(), 4);
    drop(appender);

    let streamed = dir.join("streamed.npy");
    let mut writer = CreateOptions::new(DType::parse("<u2").unwrap(), [0, 5])
        .stream(&streamed)
        .unwrap();
    for row in 0..1234u16 {
        writer.write_rows(&[row, row, row, row, row]).unwrap();
    }
    assert_eq!(writer.finish().unwrap().shape, [1234, 5]);

    let out = run_python(
        "import io, sys, numpy as np\n\
         def check(path, expected):\n\
         \x20   a = np.load(path)\n\
         \x20   assert a.dtype == expected.dtype and np.array_equal(a, expected), (a, expected)\n\
         \x20   assert np.isfortran(a) == np.isfortran(expected)\n\
         \x20   buf = io.BytesIO(); np.save(buf, expected)\n\
         \x20   assert open(path, 'rb').read() == buf.getvalue(), path\n\
         \x20   m = np.load(path, mmap_mode='r+'); assert np.array_equal(m, expected)\n\
         check(sys.argv[1], np.arange(48, dtype='<f8').reshape(12, 4))\n\
         f = np.asfortranarray(np.array([[0, 1, 2, 6], [3, 4, 5, 7]], dtype='>i4'))\n\
         check(sys.argv[2], f)\n\
         check(sys.argv[3], np.repeat(np.arange(1234, dtype='<u2'), 5).reshape(1234, 5))\n\
         print('ok')\n",
        &[c.as_os_str(), f.as_os_str(), streamed.as_os_str()],
    );
    assert_eq!(out.trim(), "ok");
}

/// np.dtype([('flag', 'u1'), ('v', '<f8')], align=True): 7 padding bytes.
#[derive(
    Clone, Copy, Debug, PartialEq, NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
struct Inner {
    flag: u8,
    #[npy(padding)]
    _pad: [u8; 7],
    v: f64,
}

/// The outer aligned dtype of the test below: nested record, subarray,
/// byte string and a big-endian field, with numpy's alignment padding.
#[derive(
    Clone, Copy, Debug, PartialEq, NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
struct Outer {
    id: u16,
    #[npy(padding)]
    _pad0: [u8; 6],
    inner: Inner,
    pos: [[f32; 3]; 2],
    name: [u8; 3],
    #[npy(padding)]
    _pad1: [u8; 1],
    big: I32<BigEndian>,
}

const OUTER_DTYPE: &str = "np.dtype([('id', '<u2'), \
    ('inner', np.dtype([('flag', 'u1'), ('v', '<f8')], align=True)), \
    ('pos', '<f4', (2, 3)), ('name', 'S3'), ('big', '>i4')], align=True)";

fn outer(i: u16) -> Outer {
    let x = f32::from(i);
    Outer {
        id: i,
        _pad0: [0; 6],
        inner: Inner {
            flag: (i % 2) as u8,
            _pad: [0; 7],
            v: f64::from(i) / 4.0,
        },
        pos: [[x, x + 0.5, x + 1.0], [-x, -x - 0.5, -x - 1.0]],
        name: [b'a' + (i % 26) as u8, b'b', b'c'],
        _pad1: [0],
        big: I32::new(-i32::from(i) * 1000),
    }
}

#[test]
#[ignore = "needs numpy: run scripts/setup-venv.sh, then cargo test -- --ignored"]
fn derived_records_match_numpys_aligned_nested_layouts() {
    let dir = temp_dir("interop-derive");
    let theirs = dir.join("theirs.npy");
    let ours = dir.join("ours.npy");
    let fill = format!(
        "import sys, numpy as np\n\
         dt = {OUTER_DTYPE}\n\
         a = np.zeros(5, dtype=dt)\n\
         for i in range(5):\n\
         \x20   x = np.float32(i)\n\
         \x20   a[i] = (i, (i % 2, i / 4), [[x, x + 0.5, x + 1], [-x, -x - 0.5, -x - 1]], bytes([97 + i % 26]) + b'bc', -i * 1000)\n"
    );
    run_python(
        &format!("{fill}np.save(sys.argv[1], a)\n"),
        &[theirs.as_os_str()],
    );

    // numpy's file: the view is checked against the struct, then zero-copy.
    let array = npy_mmap::open(&theirs).unwrap();
    let view = array.view::<Outer>().unwrap();
    let expected: Vec<Outer> = (0..5).map(outer).collect();
    assert_eq!(view.to_vec(), expected);

    // Our file: same dtype (numpy compares equal), same bytes as np.save.
    let mut file = Vec::new();
    write_npy(
        &mut file,
        &npy_core::ArrayView::from_slice(&expected, &[5], Order::C).unwrap(),
    )
    .unwrap();
    std::fs::write(&ours, &file).unwrap();
    let out = run_python(
        &format!(
            "{fill}import io\n\
             b = np.load(sys.argv[2])\n\
             assert b.dtype == dt, (b.dtype, dt)\n\
             assert np.array_equal(a, b), (a, b)\n\
             buf = io.BytesIO(); np.save(buf, a)\n\
             assert open(sys.argv[2], 'rb').read() == buf.getvalue()\n\
             print(dt.itemsize)\n"
        ),
        &[OsStr::new("unused"), ours.as_os_str()],
    );
    assert_eq!(out.trim(), size_of::<Outer>().to_string());
    assert_eq!(Outer::dtype().itemsize(), 56);
}

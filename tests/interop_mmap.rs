//! Live interop of the mappings with numpy: numpy's `open_memmap` files
//! opened and changed by us, our created files loaded (and mapped) by numpy.
//!
//! Every test is `#[ignore]`: it needs the venv from `scripts/setup-venv.sh`
//! (or `NPY_PYTHON`). CI runs them with `cargo test -- --ignored`.

mod support;

use std::ffi::OsStr;
use std::path::Path;

use npy_core::{DType, Order, Version};
use npy_mmap::{CreateOptions, ErrorKind, OpenOptions, ReadWrite};
use support::{run_python, temp_dir};
use zerocopy::byteorder::{BigEndian, I32};

/// Every logical index of `shape`, in C order (the last index fastest).
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let count: usize = shape.iter().product();
    let mut all = Vec::with_capacity(count);
    let mut index = vec![0; shape.len()];
    for _ in 0..count {
        all.push(index.clone());
        for axis in (0..shape.len()).rev() {
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    all
}

fn arg(path: &Path) -> &OsStr {
    path.as_os_str()
}

#[test]
#[ignore = "needs numpy: scripts/setup-venv.sh, then cargo test -- --ignored"]
fn numpy_open_memmap_files_are_changed_through_r_plus() {
    let dir = temp_dir("interop-mmap-rplus");
    for (name, order) in [("c.npy", "False"), ("f.npy", "True")] {
        let path = dir.join(name);
        run_python(
            &format!(
                "import sys, numpy as np\n\
                 from numpy.lib.format import open_memmap\n\
                 a = open_memmap(sys.argv[1], mode='w+', dtype='<f8', shape=(100, 7), fortran_order={order})\n\
                 a[:] = np.arange(700.0).reshape(100, 7)\n\
                 a.flush(); del a\n"
            ),
            &[arg(&path)],
        );
        let mut array = npy_mmap::open_rw(&path).unwrap();
        assert_eq!(array.shape(), [100, 7]);
        {
            let mut view = array.view_mut::<f64>().unwrap();
            for (k, index) in indices(&[100, 7]).iter().enumerate() {
                assert_eq!(view.get(index), Some(&(k as f64)), "{name} {index:?}");
            }
            *view.get_mut([3, 4]).unwrap() = -1.0;
            *view.get_mut([99, 6]).unwrap() = -2.0;
        }
        array.flush().unwrap();
        drop(array);
        let out = run_python(
            "import sys, numpy as np\n\
             a = np.load(sys.argv[1])\n\
             e = np.arange(700.0).reshape(100, 7); e[3, 4] = -1; e[99, 6] = -2\n\
             print(bool((a == e).all()), a.flags.f_contiguous)\n",
            &[arg(&path)],
        );
        let fortran = order == "True";
        assert_eq!(
            out.trim(),
            format!("True {}", if fortran { "True" } else { "False" })
        );
    }
}

#[test]
#[ignore = "needs numpy: scripts/setup-venv.sh, then cargo test -- --ignored"]
fn files_we_create_are_what_np_save_writes() {
    let dir = temp_dir("interop-mmap-create");
    let cases: [(&str, &[usize], Order, Option<Version>); 6] = [
        ("<f8", &[6, 5], Order::C, None),
        ("<f8", &[6, 5], Order::Fortran, None),
        ("<i4", &[2, 3, 4], Order::Fortran, None),
        ("<u2", &[], Order::C, None),
        ("<f8", &[0, 3], Order::C, None),
        ("<i8", &[9], Order::C, Some(Version::V2)),
    ];
    for (i, (descr, shape, order, version)) in cases.into_iter().enumerate() {
        let path = dir.join(format!("ours{i}.npy"));
        let mut options = CreateOptions::new(DType::parse(descr).unwrap(), shape);
        options.order(order);
        if let Some(version) = version {
            options.version(version);
        }
        let mut array = options.create(&path).unwrap();
        fill_logical(&mut array, descr, shape);
        array.flush().unwrap();
        drop(array);
        // numpy: the same array through np.save is byte-identical, and both
        // np.load and np.load(mmap_mode='r') see the values.
        let shape_py = format!(
            "({})",
            shape.iter().map(|d| format!("{d},")).collect::<String>()
        );
        let fortran = order == Order::Fortran;
        let version_py = match version {
            Some(Version::V2) => "(2, 0)",
            _ => "None",
        };
        let out = run_python(
            &format!(
                "import sys, io, numpy as np\n\
                 from numpy.lib import format as fmt\n\
                 e = np.arange(int(np.prod({shape_py}))).reshape({shape_py}).astype('{descr}')\n\
                 e = np.asfortranarray(e) if {fortran_py} else e\n\
                 b = io.BytesIO(); fmt.write_array(b, e, version={version_py})\n\
                 ours = open(sys.argv[1], 'rb').read()\n\
                 a = np.load(sys.argv[1]); m = np.load(sys.argv[1], mmap_mode='r')\n\
                 print(ours == b.getvalue(), a.dtype == e.dtype and a.shape == e.shape and bool((a == e).all()), \
                       bool((m == e).all()), m.flags.f_contiguous == e.flags.f_contiguous or e.ndim < 2)\n",
                fortran_py = if fortran { "True" } else { "False" },
            ),
            &[arg(&path)],
        );
        assert_eq!(
            out.trim(),
            "True True True True",
            "{descr} {shape:?} {order:?}"
        );
    }
}

/// Stores each element's C-order logical position, as the dtype's type.
fn fill_logical(array: &mut npy_mmap::MappedArray<ReadWrite>, descr: &str, shape: &[usize]) {
    let all = indices(shape);
    macro_rules! fill {
        ($t:ty) => {{
            let mut view = array.view_mut::<$t>().unwrap();
            for (k, index) in all.iter().enumerate() {
                *view.get_mut(index).unwrap() = k as $t;
            }
        }};
    }
    match descr {
        "<f8" => fill!(f64),
        "<i4" => fill!(i32),
        "<u2" => fill!(u16),
        "<i8" => fill!(i64),
        other => panic!("no filler for {other}"),
    }
}

#[test]
#[ignore = "needs numpy: scripts/setup-venv.sh, then cargo test -- --ignored"]
fn windows_written_by_us_are_seen_by_numpy_memmap() {
    let dir = temp_dir("interop-mmap-window");
    let path = dir.join("w.npy");
    CreateOptions::new(DType::parse(">i4").unwrap(), [50, 3])
        .preallocate(&path)
        .unwrap();
    for rows in [0..20, 20..50] {
        let mut window = OpenOptions::new()
            .rows(rows.clone())
            .open_rw(&path)
            .unwrap();
        let mut view = window.view_mut::<I32<BigEndian>>().unwrap();
        for local in 0..rows.len() {
            for col in 0..3 {
                *view.get_mut([local, col]).unwrap() =
                    I32::new(((rows.start + local) * 3 + col) as i32);
            }
        }
        drop(view);
        window.flush().unwrap();
    }
    let out = run_python(
        "import sys, numpy as np\n\
         m = np.load(sys.argv[1], mmap_mode='r')\n\
         print(m.dtype.str, m.shape, bool((m == np.arange(150).reshape(50, 3)).all()))\n",
        &[arg(&path)],
    );
    assert_eq!(out.trim(), ">i4 (50, 3) True");
}

#[test]
#[ignore = "needs numpy: scripts/setup-venv.sh, then cargo test -- --ignored"]
fn numpy_refuses_short_files_for_r_with_our_wording() {
    let dir = temp_dir("interop-mmap-short");
    let path = dir.join("short.npy");
    run_python(
        "import sys, numpy as np\n\
         np.save(sys.argv[1], np.zeros((10, 3)))\n\
         open(sys.argv[1], 'r+b').truncate(128 + 239)\n",
        &[arg(&path)],
    );
    let out = run_python(
        "import sys, numpy as np\n\
         try:\n    np.load(sys.argv[1], mmap_mode='r')\n\
         except ValueError as e:\n    print(e)\n",
        &[arg(&path)],
    );
    let ours = npy_mmap::open(&path).unwrap_err();
    assert!(matches!(
        ours.kind(),
        ErrorKind::FileTooShort {
            expected: 368,
            actual: 367,
            ..
        }
    ));
    // Ours names the file first, then numpy's words.
    assert!(
        ours.to_string()
            .starts_with(&format!("{}: {}", path.display(), out.trim())),
        "numpy: {out:?}, ours: {ours}"
    );
}

#[test]
#[ignore = "needs numpy: scripts/setup-venv.sh, then cargo test -- --ignored"]
fn copy_on_write_leaves_numpys_file_alone() {
    let dir = temp_dir("interop-mmap-cow");
    let path = dir.join("c.npy");
    run_python(
        "import sys, numpy as np\nnp.save(sys.argv[1], np.arange(12.0).reshape(3, 4))\n",
        &[arg(&path)],
    );
    let mut array = npy_mmap::open_cow(&path).unwrap();
    array.view_mut::<f64>().unwrap().fill(7.0);
    assert_eq!(array.view::<f64>().unwrap().get([2, 3]), Some(&7.0));
    drop(array);
    let out = run_python(
        "import sys, numpy as np\nprint(bool((np.load(sys.argv[1]) == np.arange(12.0).reshape(3, 4)).all()))\n",
        &[arg(&path)],
    );
    assert_eq!(out.trim(), "True");
}

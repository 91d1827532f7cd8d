//! Feature `ndarray`: mappings as ndarray views, and ndarray arrays as npz
//! members like np.savez.
#![cfg(feature = "ndarray")]

use ndarray::Axis;

#[cfg(feature = "npz")]
#[test]
fn members_keep_c_and_fortran_layouts_and_copy_the_rest() {
    use ndarray::{Array3, ShapeBuilder, s};
    use npy_core::Order;
    use npy_mmap::npz::{NpzArchive, NpzWriter};

    let c = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 100 + j * 10 + k) as i64);
    let f = Array3::from_shape_fn((2, 3, 4).f(), |(i, j, k)| (i * 100 + j * 10 + k) as i64);
    let strided = c.slice(s![.., ..;2, ..;-1]);
    let mut npz = NpzWriter::new(std::io::Cursor::new(Vec::new())).unwrap();
    npz.add("c", &c).unwrap();
    npz.add("f", &f).unwrap();
    npz.add("strided", &strided).unwrap();
    let bytes = npz.into_inner().unwrap().into_inner();

    let mut archive = NpzArchive::from_bytes(&bytes).unwrap();
    for (key, order, expected) in [
        ("c", Order::C, c.view().into_dyn()),
        ("f", Order::Fortran, f.view().into_dyn()),
        ("strided", Order::C, strided.into_dyn()),
    ] {
        let array = archive.load(key).unwrap();
        assert_eq!(array.header().order, order, "{key}");
        assert_eq!(array.view::<i64>().unwrap().to_ndarray(), expected, "{key}");
    }
}

#[test]
fn mapped_files_are_ndarray_views_of_the_mapping() {
    let dir = std::env::temp_dir().join(format!("npy-mmap-test-ndarray-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("f.npy");
    // numpy's (3, 4) Fortran-ordered float64, values 0.5 .. 11.5 in logical order.
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/f8_f_2d.npy");
    std::fs::copy(fixture, &path).unwrap();
    {
        let mut array = npy_mmap::open_rw(&path).unwrap();
        let mapped = array.bytes().as_ptr();
        let view = array.view::<f64>().unwrap().to_ndarray();
        assert_eq!(view.as_ptr().cast::<u8>(), mapped, "no copy");
        assert_eq!(view.strides(), [1, 3]);
        assert_eq!(view[[2, 3]], 11.5);
        let mut view = array.view_mut::<f64>().unwrap().into_ndarray();
        view.index_axis_mut(Axis(1), 0).fill(-1.0);
        array.flush().unwrap();
    }
    let array = npy_mmap::open(&path).unwrap();
    let view = array.view::<f64>().unwrap().to_ndarray();
    assert_eq!(
        view.index_axis(Axis(1), 0)
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        [-1.0; 3]
    );
    assert_eq!(view[[0, 1]], 1.5);
    drop(array);
    std::fs::remove_dir_all(&dir).unwrap();
}

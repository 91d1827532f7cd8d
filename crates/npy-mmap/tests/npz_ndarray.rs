//! Features `npz` + `ndarray`: ndarray arrays as npz members, like np.savez.
#![cfg(all(feature = "npz", feature = "ndarray"))]

use ndarray::{Array3, ShapeBuilder, s};
use npy_core::Order;
use npy_mmap::npz::{NpzArchive, NpzWriter};

#[test]
fn members_keep_c_and_fortran_layouts_and_copy_the_rest() {
    let c = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 100 + j * 10 + k) as i64);
    let f = Array3::from_shape_fn((2, 3, 4).f(), |(i, j, k)| (i * 100 + j * 10 + k) as i64);
    let strided = c.slice(s![.., ..;2, ..;-1]);
    let mut npz = NpzWriter::new(std::io::Cursor::new(Vec::new())).unwrap();
    npz.add_ndarray("c", &c).unwrap();
    npz.add_ndarray("f", &f).unwrap();
    npz.add_ndarray("strided", &strided).unwrap();
    let bytes = npz.finish().unwrap().into_inner();

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

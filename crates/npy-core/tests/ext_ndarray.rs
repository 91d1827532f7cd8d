//! Feature `ndarray`: views as ndarray views (strides, no copy) and writing
//! ndarray arrays like `np.save`, against numpy's files.
#![cfg(feature = "ndarray")]

mod ext_support;

use std::borrow::Cow;

// The `<f8`/`<f4` fixtures used here are native on little-endian machines.
use ext_support::{fixture, fixture_bytes};
use ndarray::{Array, Array0, Array1, Array2, ArrayViewD, Axis, Dimension, IxDyn, ShapeBuilder, s};
use npy_core::io::{ReadOptions, read_npy, write_npy};
use npy_core::{ArrayView, ArrayViewMut, DType, Element, Header, NpySource, Order};
use zerocopy::IntoBytes;

/// Every element of the ndarray view equals the npy view's at the same index.
fn assert_same_elements<T: PartialEq + std::fmt::Debug>(
    npy: &ArrayView<'_, T>,
    nd: &ArrayViewD<'_, T>,
) {
    assert_eq!(nd.shape(), npy.shape());
    for (index, value) in nd.indexed_iter() {
        assert_eq!(Some(value), npy.get(index.slice()), "at {index:?}");
    }
    let logical: Vec<&T> = npy.iter().collect();
    assert_eq!(nd.iter().collect::<Vec<_>>(), logical);
}

#[test]
fn c_and_fortran_files_keep_their_strides_without_copying() {
    for (name, strides) in [("f4_c_3d.npy", [12, 4, 1]), ("f4_f_3d.npy", [1, 2, 6])] {
        let array = fixture(name);
        let view = array.view::<f32>().unwrap();
        let nd = view.to_ndarray();
        assert_eq!(nd.strides(), strides.map(|s: isize| s));
        assert_eq!(
            nd.as_ptr().cast::<u8>(),
            array.bytes().as_ptr(),
            "{name} was copied"
        );
        assert_same_elements(&view, &nd);
        // numpy's values, logical order: -11.25, -10.25, ...
        let expected: Vec<f32> = (0..24).map(|i| i as f32 - 11.25).collect();
        assert_eq!(nd.iter().copied().collect::<Vec<_>>(), expected);
        let from: ArrayViewD<'_, f32> = view.clone().into();
        assert_eq!(from, nd);
    }
}

#[test]
fn row_ranges_and_subarrays_map_to_strided_ndarray_views() {
    let array = fixture("f8_f_2d.npy");
    let view = array.view::<f64>().unwrap();
    let rows = view.slice_outer(1..3).unwrap();
    let nd = rows.to_ndarray();
    assert_eq!(nd.strides(), [1, 3]);
    assert_same_elements(&rows, &nd);
    assert_eq!(nd, view.to_ndarray().slice(s![1..3, ..]).into_dyn());

    // A Fortran array of ('<f8', (2, 3)) elements: shape (4, 5, 2, 3).
    let data: Vec<f64> = (0..120).map(f64::from).collect();
    let dtype = DType::SubArray(Box::new(f64::dtype()), vec![2, 3]);
    let view = ArrayView::<f64>::new(
        zerocopy::IntoBytes::as_bytes(&data[..]),
        &dtype,
        &[4, 5],
        Order::Fortran,
    )
    .unwrap();
    let nd = view.to_ndarray();
    assert_eq!(nd.shape(), [4, 5, 2, 3]);
    assert_same_elements(&view, &nd);
    assert_same_elements(
        &view.slice_outer(3..).unwrap(),
        &view.slice_outer(3..).unwrap().to_ndarray(),
    );
}

#[test]
fn empty_and_zero_dimensional_arrays() {
    for name in ["f8_0x5_c.npy", "f8_0x5_f.npy", "f8_3x0.npy", "f8_empty.npy"] {
        let array = fixture(name);
        let view = array.view::<f64>().unwrap();
        let nd = view.to_ndarray();
        assert_eq!(nd.shape(), view.shape(), "{name}");
        assert_eq!(nd.len(), 0);
    }
    let array = fixture("f8_0d.npy");
    let nd = array.view::<f64>().unwrap().to_ndarray();
    assert_eq!(nd.ndim(), 0);
    assert_eq!(nd[IxDyn(&[])], 3.25);
}

#[test]
fn mutable_views_write_through() {
    let mut array = fixture("f8_f_2d.npy");
    {
        let mut view = array.view_mut::<f64>().unwrap();
        let mut nd = view.as_ndarray_mut();
        nd[[2, 3]] = -1.0;
        nd.index_axis_mut(Axis(0), 0).fill(9.0);
        assert_eq!(view.get([2, 3]), Some(&-1.0));
        let mut rows = view.slice_outer_mut(1..2).unwrap();
        rows.as_ndarray_mut().fill(7.0);
    }
    let view = array.view::<f64>().unwrap();
    let expected = [9.0, 9.0, 9.0, 9.0, 7.0, 7.0, 7.0, 7.0, 8.5, 9.5, 10.5, -1.0];
    assert_eq!(view.to_vec(), expected);
    let bytes = array.bytes().to_vec();
    let mut copy = bytes.clone();
    let owned = ArrayViewMut::<f64>::new(&mut copy, &f64::dtype(), &[3, 4], Order::Fortran)
        .unwrap()
        .into_ndarray();
    assert_eq!(owned.strides(), [1, 3]);
    assert_eq!((owned[[2, 3]], owned[[1, 0]]), (-1.0, 7.0));
}

#[test]
fn writing_matches_np_save_for_c_fortran_and_strided_arrays() {
    let values = |n: usize| (0..n).map(|i| i as f64 + 0.5);
    let c = Array2::from_shape_vec((3, 4), values(12).collect()).unwrap();
    let mut out = Vec::new();
    write_npy(&mut out, &c).unwrap();
    assert_eq!(out, fixture_bytes("f8_c_2d.npy"));
    // np.save of the same values in Fortran order: column-major on disk.
    let f = Array2::from_shape_fn((3, 4).f(), |(i, j)| c[[i, j]]);
    let mut out = Vec::new();
    write_npy(&mut out, &f).unwrap();
    assert_eq!(out, fixture_bytes("f8_f_2d.npy"));

    // numpy's (arange(12) + 0.5).reshape(3, 4)[:, ::2], written in C order.
    let strided = c.slice(s![.., ..;2]);
    let mut out = Vec::new();
    write_npy(&mut out, &strided).unwrap();
    assert_eq!(out, fixture_bytes("f8_noncontiguous.npy"));

    let mut out = Vec::new();
    write_npy(&mut out, &Array0::from_elem((), 3.25)).unwrap();
    assert_eq!(out, fixture_bytes("f8_0d.npy"));
    let mut out = Vec::new();
    write_npy(&mut out, &Array2::<f64>::zeros((3, 0))).unwrap();
    assert_eq!(out, fixture_bytes("f8_3x0.npy"));
}

/// The header and data chunks an `NpySource` gives.
fn to_npy_parts<S: NpySource>(source: &S) -> (Header, Vec<Cow<'_, [u8]>>) {
    (source.npy_header(), source.npy_data().unwrap().collect())
}

/// Whether `chunks` is one chunk borrowing memory at `address`.
fn borrows(chunks: &[Cow<'_, [u8]>], address: *const i32) -> bool {
    matches!(chunks, [Cow::Borrowed(d)] if d.as_ptr() == address.cast())
}

#[test]
fn parts_borrow_contiguous_data_and_copy_the_rest() {
    let a = Array::from_shape_vec((2, 3, 4), (0..24).collect::<Vec<i32>>()).unwrap();
    let (header, data) = to_npy_parts(&a);
    assert_eq!(
        (header.order, header.shape.as_slice()),
        (Order::C, &[2, 3, 4][..])
    );
    assert!(borrows(&data, a.as_ptr()));

    let t = a.t();
    let (header, data) = to_npy_parts(&t);
    assert_eq!(
        (header.order, header.shape.as_slice()),
        (Order::Fortran, &[4, 3, 2][..])
    );
    assert!(borrows(&data, a.as_ptr()));

    // Negative strides: copied in logical C order.
    let r = a.slice(s![..;-1, .., 1..3]);
    let (header, data) = to_npy_parts(&r);
    assert_eq!(
        (header.order, header.shape.as_slice()),
        (Order::C, &[2, 3, 2][..])
    );
    assert!(data.iter().all(|chunk| matches!(chunk, Cow::Owned(_))));
    let expected: Vec<i32> = r.iter().copied().collect();
    assert_eq!(data.concat(), expected.as_bytes());

    // A 1-d array and a (1, n) array are C-contiguous first, like numpy.
    let row = Array2::from_shape_vec((1, 3).f(), vec![1u8, 2, 3]).unwrap();
    assert_eq!(to_npy_parts(&row).0.order, Order::C);
    let (header, _) = to_npy_parts(&Array1::from(vec![true, false]));
    assert_eq!(header.dtype, bool::dtype());
}

#[test]
fn round_trip_of_every_layout_through_the_reader() {
    let a = Array::from_shape_fn((3, 4, 5), |(i, j, k)| (i * 100 + j * 10 + k) as u16);
    let cases: Vec<ArrayViewD<'_, u16>> = vec![
        a.view().into_dyn(),
        a.t().into_dyn(),
        a.slice(s![1.., ..;3, ..;-2]).into_dyn(),
        a.view().permuted_axes([1, 0, 2]).into_dyn(),
    ];
    for case in cases {
        let mut file = Vec::new();
        write_npy(&mut file, &case).unwrap();
        let back = read_npy(file.as_slice(), &ReadOptions::default()).unwrap();
        let view = back.view::<u16>().unwrap();
        assert_eq!(view.to_ndarray(), case);
    }
}

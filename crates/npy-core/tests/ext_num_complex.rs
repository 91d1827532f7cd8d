//! Feature `num-complex`: `c8`/`c16` data as `NpyComplex`, zero-copy to
//! `num_complex::Complex`, against numpy's files.
#![cfg(feature = "num-complex")]

mod ext_support;

use ext_support::{LITTLE, fixture, fixture_bytes};
use npy_core::ext::num_complex::{NpyComplex, NpyComplex32, NpyComplex64};
use npy_core::io::write_npy;
use npy_core::{DType, Element, Error, Order};
use num_complex::Complex;
use zerocopy::byteorder::{BigEndian, F32, F64, LittleEndian};

/// numpy's values for the c8/c16 fixtures (manifest.json); c8 holds the
/// same numbers rounded to f32.
fn expected() -> Vec<Complex<f64>> {
    [
        (0.0, 0.0),
        (-0.0, 0.0),
        (1.5, -2.25),
        (f64::NAN, 1.0),
        (f64::NEG_INFINITY, f64::INFINITY),
        (0.1, 0.2),
    ]
    .into_iter()
    .map(|(re, im)| Complex::new(re, im))
    .collect()
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn assert_values(got: &[Complex<f64>], want: &[Complex<f64>]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!(same(g.re, w.re) && same(g.im, w.im), "{g} != {w}");
    }
}

fn rounded_to_f32(values: &[Complex<f64>]) -> Vec<Complex<f64>> {
    values
        .iter()
        .map(|z| Complex::new(f64::from(z.re as f32), f64::from(z.im as f32)))
        .collect()
}

#[test]
fn numpy_complex_files_read_in_both_orders() {
    let c16 = |name: &str, big: bool| -> Vec<Complex<f64>> {
        let array = fixture(name);
        if big {
            let view = array.view::<NpyComplex<F64<BigEndian>>>().unwrap();
            view.iter().map(|&z| z.into()).collect()
        } else {
            let view = array.view::<NpyComplex<F64<LittleEndian>>>().unwrap();
            view.iter().map(|&z| z.into()).collect()
        }
    };
    assert_values(&c16("c16_le.npy", false), &expected());
    assert_values(&c16("c16_be.npy", true), &expected());

    let c8 = fixture("c8_be.npy");
    let got: Vec<Complex<f64>> = c8
        .view::<NpyComplex<F32<BigEndian>>>()
        .unwrap()
        .iter()
        .map(|&z| {
            let z: Complex<f32> = z.into();
            Complex::new(z.re.into(), z.im.into())
        })
        .collect();
    assert_values(&got, &rounded_to_f32(&expected()));

    // Native order: zero-copy as num_complex values.
    let native = fixture(if LITTLE { "c16_le.npy" } else { "c16_be.npy" });
    let view = native.view::<NpyComplex64>().unwrap();
    assert_values(
        NpyComplex::as_complex_slice(view.as_slice().unwrap()),
        &expected(),
    );
    assert_eq!(view.get([2]).unwrap().norm_sqr(), 1.5 * 1.5 + 2.25 * 2.25);
}

#[test]
fn mismatched_complex_types_are_refused() {
    let native = fixture(if LITTLE { "c16_le.npy" } else { "c16_be.npy" });
    let foreign = fixture(if LITTLE { "c16_be.npy" } else { "c16_le.npy" });
    assert!(matches!(
        foreign.view::<NpyComplex64>(),
        Err(Error::TypeMismatch { .. })
    ));
    assert!(matches!(
        native.view::<NpyComplex32>(),
        Err(Error::TypeMismatch { .. })
    ));
    // c8 and f8 have the same size; neither reads as the other.
    let f8 = fixture(if LITTLE { "f8_le.npy" } else { "f8_be.npy" });
    assert!(matches!(
        f8.view::<NpyComplex32>(),
        Err(Error::TypeMismatch { .. })
    ));
    assert!(!f64::matches(&NpyComplex32::dtype()));
    assert_eq!(NpyComplex32::dtype(), DType::parse("=c8").unwrap());
    assert_eq!(
        NpyComplex::<F64<BigEndian>>::dtype(),
        DType::parse(">c16").unwrap()
    );
}

#[test]
fn fortran_big_endian_complex_reads_in_logical_order() {
    let array = fixture("c16_be_f_2d.npy");
    let view = array.view::<NpyComplex<F64<BigEndian>>>().unwrap();
    assert_eq!(view.shape(), [2, 3]);
    let got: Vec<Complex<f64>> = view.iter().map(|&z| z.into()).collect();
    let want: Vec<Complex<f64>> = (0..6)
        .map(|i| Complex::new(f64::from(i), f64::from(5 - i)))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn writing_complex_gives_numpys_bytes() {
    let values: Vec<NpyComplex64> = expected().into_iter().map(Into::into).collect();
    let mut file = Vec::new();
    write_npy(
        &mut file,
        &npy_core::ArrayView::from_slice(&values, &[6], Order::C).unwrap(),
    )
    .unwrap();
    assert_eq!(
        file,
        fixture_bytes(if LITTLE { "c16_le.npy" } else { "c16_be.npy" })
    );

    let big: Vec<NpyComplex<F32<BigEndian>>> = rounded_to_f32(&expected())
        .into_iter()
        .map(|z| Complex::new(z.re as f32, z.im as f32).into())
        .collect();
    let mut file = Vec::new();
    write_npy(
        &mut file,
        &npy_core::ArrayView::from_slice(&big, &[6], Order::C).unwrap(),
    )
    .unwrap();
    assert_eq!(file, fixture_bytes("c8_be.npy"));
}

#[test]
fn writes_through_deref_and_slices_reach_the_bytes() {
    let mut array = fixture(if LITTLE { "c16_le.npy" } else { "c16_be.npy" });
    {
        let mut view = array.view_mut::<NpyComplex64>().unwrap();
        let z = view.get_mut([0]).unwrap();
        *z = (**z + Complex::new(1.0, -1.0)).into();
        z.im *= 4.0;
        let all = NpyComplex::as_complex_slice_mut(view.as_slice_mut().unwrap());
        all[5] = Complex::i();
    }
    let view = array.view::<NpyComplex64>().unwrap();
    assert_eq!(*view.get([0]).unwrap(), NpyComplex::new(1.0, -4.0));
    assert_eq!(*view.get([5]).unwrap(), NpyComplex::new(0.0, 1.0));
    assert_eq!(
        &array.bytes()[80..96],
        zerocopy::IntoBytes::as_bytes(&[0.0f64, 1.0][..])
    );
}

#[cfg(feature = "ndarray")]
#[test]
fn complex_views_become_ndarray_views_of_num_complex() {
    let mut array = fixture(if LITTLE { "c16_le.npy" } else { "c16_be.npy" });
    let view = array.view::<NpyComplex64>().unwrap();
    let nd = view.to_ndarray_complex();
    assert_eq!(nd.shape(), [6]);
    assert_eq!(nd[2], Complex::new(1.5, -2.25));
    assert_eq!(nd.as_ptr().cast::<u8>(), array.bytes().as_ptr());

    let mut nd = array
        .view_mut::<NpyComplex64>()
        .unwrap()
        .into_ndarray_complex();
    nd[1] = Complex::new(7.0, 8.0);
    assert_eq!(
        *array.view::<NpyComplex64>().unwrap().get([1]).unwrap(),
        NpyComplex::new(7.0, 8.0)
    );
}

//! Feature `half`: `f2` data as `half::f16` and `F16<O>`, against numpy's files.
#![cfg(feature = "half")]

mod ext_support;

use ext_support::{LITTLE, fixture, fixture_bytes};
use half::f16;
use npy_core::ext::half::F16;
use npy_core::io::write_npy;
use npy_core::{ArrayView, DType, Element, Error, Order};
use zerocopy::byteorder::{BigEndian, LittleEndian};

/// numpy's values for f2_le.npy / f2_be.npy (manifest.json), as f64.
const F2_VALUES: [f64; 16] = [
    0.0,
    -0.0,
    1.5,
    -2.25,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    5.960464477539063e-08,
    6.097555160522461e-05,
    6.103515625e-05,
    65504.0,
    -65504.0,
    0.0999755859375,
    -0.2203369140625,
    -1.0615234375,
    -0.364501953125,
];

fn assert_same_values(got: impl IntoIterator<Item = f16>) {
    let got: Vec<f64> = got.into_iter().map(f64::from).collect();
    assert_eq!(got.len(), F2_VALUES.len());
    for (g, e) in got.iter().zip(F2_VALUES) {
        assert!(
            g.to_bits() == e.to_bits() || (g.is_nan() && e.is_nan()),
            "{g} != {e}"
        );
    }
}

#[test]
fn numpy_f2_files_read_in_both_orders() {
    let le = fixture("f2_le.npy");
    let be = fixture("f2_be.npy");
    assert_same_values(
        le.view::<F16<LittleEndian>>()
            .unwrap()
            .iter()
            .map(|x| x.get()),
    );
    assert_same_values(be.view::<F16<BigEndian>>().unwrap().iter().map(|x| x.get()));
    let (native, foreign) = if LITTLE { (&le, &be) } else { (&be, &le) };
    assert_same_values(native.view::<f16>().unwrap().iter().copied());
    // The wrong order is refused, not misread.
    assert!(matches!(
        foreign.view::<f16>(),
        Err(Error::TypeMismatch { .. })
    ));
    assert!(matches!(
        le.view::<F16<BigEndian>>(),
        Err(Error::TypeMismatch { .. })
    ));
    // Same size, other kind.
    assert!(matches!(
        native.view::<u16>(),
        Err(Error::TypeMismatch { .. })
    ));
}

#[test]
fn writing_f16_gives_numpys_bytes() {
    let values: Vec<f16> = F2_VALUES.iter().map(|&v| f16::from_f64(v)).collect();
    let mut file = Vec::new();
    write_npy(
        &mut file,
        &npy_core::ArrayView::from_slice(&values, &[16], Order::C).unwrap(),
    )
    .unwrap();
    let expected = if LITTLE { "f2_le.npy" } else { "f2_be.npy" };
    assert_eq!(file, fixture_bytes(expected));

    let big: Vec<F16<BigEndian>> = values.iter().map(|&v| F16::new(v)).collect();
    let mut file = Vec::new();
    write_npy(
        &mut file,
        &npy_core::ArrayView::from_slice(&big, &[16], Order::C).unwrap(),
    )
    .unwrap();
    assert_eq!(file, fixture_bytes("f2_be.npy"));
}

#[test]
fn dtypes_and_unaligned_views() {
    assert_eq!(F16::<BigEndian>::dtype(), DType::parse(">f2").unwrap());
    assert_eq!(F16::<LittleEndian>::dtype(), DType::parse("<f2").unwrap());
    assert_eq!(f16::dtype(), DType::parse("=f2").unwrap());
    // F16<O> has alignment 1: an odd offset works.
    let bytes = [0u8, 0x3c, 0x00, 0xc0, 0x00];
    let view =
        ArrayView::<F16<BigEndian>>::new(&bytes[1..], &F16::<BigEndian>::dtype(), &[2], Order::C)
            .unwrap();
    assert_eq!(
        view.to_vec(),
        [F16::new(f16::ONE), F16::new(f16::from_f32(-2.0))]
    );
    // f16 needs 2-byte alignment: a clear error, not a panic.
    let words = [0u16; 3];
    let odd = &zerocopy::IntoBytes::as_bytes(&words[..])[1..5];
    assert!(matches!(
        ArrayView::<f16>::new(odd, &f16::dtype(), &[2], Order::C),
        Err(Error::Misaligned { align: 2, .. })
    ));
}

#[test]
fn f16_wrapper_set_get_and_format() {
    let mut x = F16::<BigEndian>::new(f16::from_f32(0.5));
    assert_eq!(zerocopy::IntoBytes::as_bytes(&x), [0x38, 0x00]);
    x.set(f16::from_f32(-2.0));
    assert_eq!(zerocopy::IntoBytes::as_bytes(&x), [0xc0, 0x00]);
    assert_eq!(f16::from(x), f16::from_f32(-2.0));
    assert_eq!(format!("{x} {x:?}"), "-2 -2.0");
}

//! Optional integrations with other crates, each behind a cargo feature.
//!
//! | feature | module | adds |
//! | --- | --- | --- |
//! | `half` | [`half`](mod@self::half) | `half::f16` and the byte-order-explicit [`F16`](self::half::F16) as elements of `f2` data |
//! | `num-complex` | [`num_complex`](mod@self::num_complex) | [`NpyComplex`](self::num_complex::NpyComplex) elements for `c8`/`c16`, zero-copy to `num_complex::Complex` |
//! | `ndarray` | [`ndarray`](mod@self::ndarray) | views as `ndarray` views (C and Fortran strides, no copy); writing any `ndarray` array |
//! | `derive` | [`derive`](mod@self::derive) | `#[derive(NpyRecord)]`: your `#[repr(C)]` struct as a structured dtype |
//!
//! All are off by default; none changes what the rest of the crate does.

#[cfg(feature = "derive")]
pub mod derive;
#[cfg(feature = "half")]
pub mod half;
#[cfg(feature = "ndarray")]
pub mod ndarray;
#[cfg(feature = "num-complex")]
pub mod num_complex;

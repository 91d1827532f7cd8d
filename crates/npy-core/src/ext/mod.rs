//! Optional integrations with other crates, each behind a cargo feature.
//!
//! | feature | module | adds |
//! | --- | --- | --- |
//! | `half` | [`half`][half] | `half::f16` and the byte-order-explicit [`F16`][half-f16] as elements of `f2` data |
//! | `num-complex` | [`num_complex`][num-complex] | [`NpyComplex`][npy-complex] elements for `c8`/`c16`, zero-copy to `num_complex::Complex` |
//! | `ndarray` | [`ndarray`][ndarray] | views as `ndarray` views (C and Fortran strides, no copy); writing any `ndarray` array |
//! | `derive` | [`derive`][derive] | `#[derive(NpyRecord)]`: your `#[repr(C)]` struct as a structured dtype |
//!
//! All are off by default; none changes what the rest of the crate does.
//! A build without a feature has no module for it (with none, this module
//! is empty): its links lead to docs.rs, which documents every feature.
//!
#![cfg_attr(feature = "half", doc = "[half]: mod@self::half")]
#![cfg_attr(
    not(feature = "half"),
    doc = "[half]: https://docs.rs/npy-core/latest/npy_core/ext/half/index.html"
)]
#![cfg_attr(feature = "half", doc = "[half-f16]: self::half::F16")]
#![cfg_attr(
    not(feature = "half"),
    doc = "[half-f16]: https://docs.rs/npy-core/latest/npy_core/ext/half/struct.F16.html"
)]
#![cfg_attr(feature = "num-complex", doc = "[num-complex]: mod@self::num_complex")]
#![cfg_attr(
    not(feature = "num-complex"),
    doc = "[num-complex]: https://docs.rs/npy-core/latest/npy_core/ext/num_complex/index.html"
)]
#![cfg_attr(
    feature = "num-complex",
    doc = "[npy-complex]: self::num_complex::NpyComplex"
)]
#![cfg_attr(
    not(feature = "num-complex"),
    doc = "[npy-complex]: https://docs.rs/npy-core/latest/npy_core/ext/num_complex/struct.NpyComplex.html"
)]
#![cfg_attr(feature = "ndarray", doc = "[ndarray]: mod@self::ndarray")]
#![cfg_attr(
    not(feature = "ndarray"),
    doc = "[ndarray]: https://docs.rs/npy-core/latest/npy_core/ext/ndarray/index.html"
)]
#![cfg_attr(feature = "derive", doc = "[derive]: mod@self::derive")]
#![cfg_attr(
    not(feature = "derive"),
    doc = "[derive]: https://docs.rs/npy-core/latest/npy_core/ext/derive/index.html"
)]

#[cfg(feature = "derive")]
pub mod derive;
#[cfg(feature = "half")]
pub mod half;
#[cfg(feature = "ndarray")]
pub mod ndarray;
#[cfg(feature = "num-complex")]
pub mod num_complex;

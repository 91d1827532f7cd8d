//! # npy-core: the NumPy `.npy` format, and nothing else
//!
//! This crate knows what an `.npy` file *means* and never opens one: it parses
//! and encodes headers byte-for-byte like NumPy, models every dtype NumPy
//! writes, gives typed views over any byte slice, and streams arrays through
//! any [`std::io::Read`] / [`std::io::Write`]. Files and memory maps live in the
//! `npy-mmap` crate, which hands its bytes to the views defined here.
//!
//! ```
//! use npy_core::{ArrayView, Order, ReadOptions, read_npy, write_npy};
//!
//! // np.save(f, np.arange(6.0).reshape(2, 3)), into any `Write`:
//! let data = [0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0];
//! let mut file = Vec::new();
//! write_npy(&mut file, &ArrayView::from_slice(&data, &[2, 3], Order::C)?)?;
//! assert!(file.starts_with(b"\x93NUMPY\x01\x00"));
//!
//! // np.load: from any `Read`, then a typed view checked against the dtype.
//! let array = read_npy(file.as_slice(), &ReadOptions::default())?;
//! assert_eq!(array.header().shape, [2, 3]);
//! let view = array.view::<f64>()?;
//! assert_eq!(view.get(&[1, 2]), Some(&5.0));
//! # Ok::<(), npy_core::Error>(())
//! ```
//!
//! Object arrays (`dtype=object`) are decoded, when the caller allows
//! pickles, by a restricted unpickler that never runs code ([`pickle`]).
//!
//! The crate has no `unsafe` code.
//!
//! ## Optional features
//!
//! All off by default; each adds an integration in [`ext`] with a runnable
//! example there.
//!
//! | feature | adds |
//! | --- | --- |
//! | `half` | `half::f16` (and byte-order-explicit [`F16<O>`][ext-half]) as the element of `f2` data |
//! | `num-complex` | `c8`/`c16` elements that are `num_complex::Complex` without copying ([`ext::num_complex`][ext-num-complex]) |
//! | `ndarray` | views as `ndarray` views with the file's strides, no copy; writing any `ndarray` array like `np.save` ([`ext::ndarray`][ext-ndarray]) |
//! | `derive` | `#[derive(NpyRecord)]`: a `#[repr(C)]` struct as a structured dtype, checked then zero-copy ([`ext::derive`][ext-derive]) |
//!
//! A build without a feature has no module for it: its links lead to
//! docs.rs, which documents every feature.
//!
#![cfg_attr(feature = "half", doc = "[ext-half]: mod@ext::half")]
#![cfg_attr(
    not(feature = "half"),
    doc = "[ext-half]: https://docs.rs/npy-core/latest/npy_core/ext/half/index.html"
)]
#![cfg_attr(
    feature = "num-complex",
    doc = "[ext-num-complex]: mod@ext::num_complex"
)]
#![cfg_attr(
    not(feature = "num-complex"),
    doc = "[ext-num-complex]: https://docs.rs/npy-core/latest/npy_core/ext/num_complex/index.html"
)]
#![cfg_attr(feature = "ndarray", doc = "[ext-ndarray]: mod@ext::ndarray")]
#![cfg_attr(
    not(feature = "ndarray"),
    doc = "[ext-ndarray]: https://docs.rs/npy-core/latest/npy_core/ext/ndarray/index.html"
)]
#![cfg_attr(feature = "derive", doc = "[ext-derive]: mod@ext::derive")]
#![cfg_attr(
    not(feature = "derive"),
    doc = "[ext-derive]: https://docs.rs/npy-core/latest/npy_core/ext/derive/index.html"
)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod dtype;
pub mod element;
pub mod error;
pub mod ext;
pub mod header;
pub mod io;
mod literal;
pub mod pickle;
mod pyrepr;
pub mod record;
mod source;
pub mod swap;
pub mod value;
pub mod view;

pub use dtype::{
    ByteOrder, DType, DateTimeUnit, Field, Record, RecordEntry, Scalar, ScalarKind, TimeUnit,
};
pub use element::{Bool, Element};
pub use error::{Error, Result};
pub use header::{Header, Layout, Order, ParseOptions, Preamble, Version};

pub use record::{FieldRef, RecordRef, RecordView};

pub use io::{NpyArray, NpyWriter, ReadOptions, read_npy, write_npy};
pub use pyrepr::shape_repr;
pub use source::{DataChunks, NpyBytes, NpySource};
pub use value::Value;
pub use view::{ArrayView, ArrayViewMut, ElementLocator};

#[cfg(feature = "derive")]
pub use ext::derive::NpyRecord;
/// Derives [`Element`] and [`NpyRecord`] for a `#[repr(C)]` struct: see [`ext::derive`].
#[cfg(feature = "derive")]
pub use npy_mmap_derive::NpyRecord;

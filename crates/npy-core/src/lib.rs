//! # npy-core: the NumPy `.npy` format, and nothing else
//!
//! This crate knows what an `.npy` file *means* and never opens one: it parses
//! and encodes headers byte-for-byte like NumPy, models every dtype NumPy
//! writes, gives typed views over any byte slice, and streams arrays through
//! any [`std::io::Read`] / [`std::io::Write`]. Files and memory maps live in the
//! `npy-mmap` crate, which hands its bytes to the views defined here.
//!
//! ```
//! use npy_core::io::AlignedBytes;
//! use npy_core::{ArrayView, Header, Order, ParseOptions, read_npy, write_npy};
//!
//! // Write a (2, 3) float64 array as np.save would, into any io::Write.
//! let values = [0.5f64, 1.5, 2.5, 3.5, 4.5, 5.5];
//! let mut file = Vec::new();
//! write_npy(&mut file, &ArrayView::from_slice(&values, &[2, 3], Order::C)?)?;
//!
//! // Read it back from any io::Read: the header, then typed access.
//! let array = read_npy(&mut file.as_slice(), &Default::default())?;
//! assert_eq!(array.header().dtype.to_string(), "<f8");
//! let view = array.view::<f64>()?;
//! assert_eq!(view[[1, 2]], 5.5);
//! assert_eq!(view.slice_outer(1..)?.to_vec(), [3.5, 4.5, 5.5]);
//!
//! // Or view bytes you already hold in place: a memory map (npy-mmap), or
//! // here a copy aligned for f64.
//! let parsed = Header::parse(&file, &ParseOptions::default())?;
//! let data = AlignedBytes::copy_from(&file[parsed.layout.data_offset..]);
//! let view = ArrayView::<f64>::from_header(&data, &parsed.header)?;
//! let mut picked = [0.0; 2];
//! view.gather(&[[0, 1], [1, 0]], &mut picked)?;
//! assert_eq!(picked, [1.5, 3.5]);
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

mod access;
mod aligned;
mod array;
pub mod dtype;
pub mod element;
pub mod error;
pub mod ext;
mod geometry;
pub mod header;
pub mod headerless;
pub mod index;
pub mod io;
mod literal;
pub mod npz;
pub mod pickle;
pub mod plan;
mod pyrepr;
pub mod raw;
mod source;
mod stream;
pub mod swap;
pub mod value;
pub mod view;

pub use dtype::{
    ByteOrder, DType, DateTimeUnit, Field, Scalar, ScalarKind, Structured, StructuredEntry,
    TimeUnit,
};
pub use element::{Bool, Element};
pub use error::{Error, Result};
pub use header::{Header, Layout, Order, ParseOptions, ParsedHeader, Preamble, Version};

pub use raw::{RawElement, RawView};

pub use geometry::ElementLocator;
pub use index::NdIndex;
pub use io::{NpyArray, NpyWriter, ReadOptions, read_npy, write_npy};
// A shape as Python prints it: public for npy-mmap, npy-remote and npy-cli,
// whose messages quote shapes as numpy does; not part of the API.
#[doc(hidden)]
pub use pyrepr::shape_repr;
pub use source::{DataChunks, NpyBytes, NpySource};
pub use value::Value;
pub use view::{ArrayView, ArrayViewMut};

#[cfg(feature = "derive")]
pub use ext::derive::NpyRecord;
/// Derives [`Element`] and [`NpyRecord`] for a `#[repr(C)]` struct: see [`ext::derive`].
#[cfg(feature = "derive")]
pub use npy_core_derive::NpyRecord;

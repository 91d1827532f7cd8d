//! # npy-core: the NumPy `.npy` format, and nothing else
//!
//! This crate knows what an `.npy` file *means* and never opens one: it parses
//! and encodes headers byte-for-byte like NumPy, models every dtype NumPy
//! writes, gives typed views over any byte slice, and streams arrays through
//! any [`std::io::Read`] / [`std::io::Write`]. Files and memory maps live in the
//! `npy-mmap` crate, which hands its bytes to the views defined here.
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
//! | `half` | `half::f16` (and byte-order-explicit [`F16<O>`](ext::half)) as the element of `f2` data |
//! | `num-complex` | `c8`/`c16` elements that are `num_complex::Complex` without copying ([`ext::num_complex`]) |
//! | `ndarray` | views as `ndarray` views with the file's strides, no copy; writing any `ndarray` array like `np.save` ([`ext::ndarray`]) |
//! | `derive` | `#[derive(NpyRecord)]`: a `#[repr(C)]` struct as a structured dtype, checked then zero-copy ([`ext::derive`]) |
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod dtype;
pub mod element;
pub mod error;
pub mod ext;
mod geometry;
pub mod header;
pub mod index;
pub mod io;
mod literal;
pub mod pickle;
mod pyrepr;
pub mod raw;
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
pub use io::{NpyArray, NpyWriter, ReadOptions, read_npy, write_array, write_npy, write_slice};
// A shape as Python prints it: public for npy-mmap, npy-remote and npy-cli,
// whose messages quote shapes as numpy does; not part of the API.
pub use index::NdIndex;
#[doc(hidden)]
pub use pyrepr::shape_repr;
pub use value::Value;
pub use view::{ArrayView, ArrayViewMut};

#[cfg(feature = "derive")]
pub use ext::derive::NpyRecord;
/// Derives [`Element`] and [`NpyRecord`] for a `#[repr(C)]` struct: see [`ext::derive`].
#[cfg(feature = "derive")]
pub use npy_derive::NpyRecord;

//! # npy-core: the NumPy `.npy` format, and nothing else
//!
//! This crate knows what an `.npy` file *means* and never opens one: it parses
//! and encodes headers byte-for-byte like NumPy, models every dtype NumPy
//! writes, gives typed views over any byte slice, and streams arrays through
//! any [`std::io::Read`] / [`std::io::Write`]. Files and memory maps live in the
//! `npy-mmap` crate, which hands its bytes to the views defined here.
//!
//! The crate has no `unsafe` code.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod dtype;
pub mod element;
pub mod error;
pub mod header;
pub mod io;
mod literal;
mod pyrepr;
pub mod record;
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

pub use io::{NpyArray, NpyWriter, ReadOptions, read_npy, write_npy, write_slice};
pub use value::Value;
pub use view::{ArrayView, ArrayViewMut};

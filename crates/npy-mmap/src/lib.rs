//! # npy-mmap: memory-mapped NumPy arrays, a preallocating writer, and npz archives
#![deny(missing_docs)]

#[cfg(feature = "npz")]
pub mod npz;

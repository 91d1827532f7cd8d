//! `npy_mmap._native`: the Rust half of the Python package `npy_mmap`.
//!
//! A thin front over npy-core, npy-mmap and npy-remote: every format rule
//! (headers, dtypes, pickles, npz, locks) is theirs. This module turns
//! their results into parts the Python half (`python/npy_mmap`) makes
//! numpy arrays of: a [`Buffer`](buffer::Buffer) (bytes lent through the
//! buffer protocol, zero-copy), the dtype as the header's descr literal,
//! the shape and the order. Long calls release the GIL.
#![deny(missing_docs)]
#![deny(unsafe_code)]

mod arguments;
#[allow(unsafe_code)]
mod buffer;
#[allow(unsafe_code)]
mod door_in;
mod errors;
mod files;
mod io;
mod live;
mod mapping;
mod npz;
mod npz_bytes;
mod npz_lazy;
mod objects;
mod remote;
mod rows;
mod stream_out;
mod window_file;

use pyo3::prelude::*;

use buffer::Buffer;

/// The Rust half of `npy_mmap`: each module registers the natives of the
/// Python module it serves.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Buffer>()?;
    io::register(m)?;
    mapping::register(m)?;
    rows::register(m)?;
    npz::register(m)?;
    npz_lazy::register(m)?;
    npz_bytes::register(m)?;
    live::register(m)?;
    remote::register(m)?;
    files::register(m)?;
    window_file::register(m)?;
    Ok(())
}

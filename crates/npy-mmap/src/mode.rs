//! The access modes, as types: what a mapping may do is known at compile time.
//!
//! | numpy `mmap_mode` | type | file opened | writes |
//! | --- | --- | --- | --- |
//! | `'r'` | [`ReadOnly`] | read-only | impossible: no `bytes_mut`/`view_mut` |
//! | `'r+'`, `'w+'` | [`ReadWrite`] | read-write | reach the file (shared mapping) |
//! | `'c'` | [`CopyOnWrite`] | read-only | stay in this process (private mapping) |
//!
//! A [`MappedArray<ReadOnly>`](crate::MappedArray) simply has no method that
//! writes, so this does not compile:
//!
//! ```compile_fail,E0599
//! # fn demo(array: &mut npy_mmap::MappedArray<npy_mmap::ReadOnly>) {
//! array.bytes_mut()[0] = 1;
//! # }
//! ```
//!
//! nor does this:
//!
//! ```compile_fail,E0599
//! # fn demo(array: &mut npy_mmap::MappedArray<npy_mmap::ReadOnly>) -> npy_mmap::Result<()> {
//! *array.view_mut::<f64>()?.get_mut(&[0]).unwrap() = 1.0;
//! # Ok(()) }
//! ```
//!
//! while the same lines on a writable mode do:
//!
//! ```
//! # fn demo(array: &mut npy_mmap::MappedArray<npy_mmap::ReadWrite>) -> npy_mmap::Result<()> {
//! array.bytes_mut()[0] = 1;
//! *array.view_mut::<f64>()?.get_mut(&[0]).unwrap() = 1.0;
//! # Ok(()) }
//! ```

use crate::lock::Access;
use crate::sys::{PrivateMap, ReadOnlyMap, SharedMap, Storage, StorageMut};

mod sealed {
    pub trait Sealed {}
}

/// An access mode of a [`MappedArray`](crate::MappedArray). Sealed: the
/// three modes below are all there is.
pub trait Mode: sealed::Sealed + Send + Sync + 'static {
    /// The mapping that backs this mode (an implementation detail).
    #[doc(hidden)]
    type Map: Storage;

    /// numpy's name for this mode (`"r"`, `"r+"` or `"c"`).
    const NUMPY_MODE: &'static str;

    /// The data lock this mode's views need.
    #[doc(hidden)]
    const ACCESS: Access;
}

/// A mode whose bytes can be changed in memory: [`ReadWrite`] and
/// [`CopyOnWrite`].
pub trait Writable: Mode<Map: StorageMut> {}

/// numpy's `'r'`: read-only, shared with the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReadOnly {}

/// numpy's `'r+'` (and `'w+'` after creation): writes go to the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReadWrite {}

/// numpy's `'c'`: writable in memory, the file never changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CopyOnWrite {}

impl sealed::Sealed for ReadOnly {}
impl sealed::Sealed for ReadWrite {}
impl sealed::Sealed for CopyOnWrite {}

impl Mode for ReadOnly {
    type Map = ReadOnlyMap;
    const NUMPY_MODE: &'static str = "r";
    const ACCESS: Access = Access::Read;
}

impl Mode for ReadWrite {
    type Map = SharedMap;
    const NUMPY_MODE: &'static str = "r+";
    const ACCESS: Access = Access::Write;
}

impl Mode for CopyOnWrite {
    type Map = PrivateMap;
    const NUMPY_MODE: &'static str = "c";
    // Its unwritten pages show the file: other writers must stay away.
    const ACCESS: Access = Access::Read;
}

impl Writable for ReadWrite {}
impl Writable for CopyOnWrite {}

//! `.npz` archives: a lazy reader with NumPy's `NpzFile` semantics, a writer
//! whose archives `np.load` reads, and zero-copy access to stored members.
//!
//! * [`NpzArchive`] opens any zip, lists NumPy's keys (member names with one
//!   `.npy` removed), and reads a member only when asked for it.
//! * [`MappedNpz`] maps an archive file read-only; its stored members are
//!   typed views straight into the mapping (NumPy ignores `mmap_mode` for npz).
//! * [`NpzWriter`] writes stored (`np.savez`) or deflated
//!   (`np.savez_compressed`) members, zip64 always on, stored array data
//!   64-byte aligned; to a path it writes through an [`AtomicFile`](crate::AtomicFile).
//!
//! ```
//! use std::io::Cursor;
//! use npy_mmap::npz::{NpzArchive, NpzWriter};
//!
//! let mut writer = NpzWriter::new(Cursor::new(Vec::new()))?;
//! writer.add_raw_member("meta.json", br#"{"run": 7}"#)?;
//! let bytes = writer.into_inner()?.into_inner();
//!
//! let mut archive = NpzArchive::new(Cursor::new(bytes))?;
//! assert!(archive.contains("meta.json"));
//! assert_eq!(archive.read_raw("meta.json")?, br#"{"run": 7}"#);
//! # Ok::<(), npy_mmap::Error>(())
//! ```

mod blocks;
mod checkpoint;
mod container;
mod deflate;
mod mapped;
mod read;
mod sidecar;
mod write;

pub use blocks::{BlockIndex, CHECKPOINT_SPAN, EXTRA_FIELD_ID, find_extra_field};
pub use mapped::MappedNpz;
pub use npy_core::npz::{MemberCompression, MemberInfo};
pub use read::{Member, MemberReader, NpzArchive, StoredArray, StoredRange, index_path};
pub use write::{Compression, DATA_ALIGNMENT, MemberWriter, NpzWriter};

//! `.npy` files and stored npz members as *virtual Zarr*: Zarr metadata
//! and a byte range per chunk, so zarr-python, xarray and Dask read the
//! arrays in place, locally or from object storage (docs/VIRTUAL.md).
//!
//! [`gather`] reads each array's header (one ranged GET per `.npy`);
//! [`kerchunk_refs`] and [`zarr3_manifest`] turn what it found into
//! kerchunk's reference JSON (Zarr v2) or Zarr v3 metadata with chunk
//! manifests, with no further I/O.
//!
//! ```
//! use npy_core::{DType, Header, Order};
//! use npy_remote::zarr::{ChunkOptions, Pin, VirtualArray, kerchunk_refs};
//!
//! let array = VirtualArray {
//!     name: "t".into(),
//!     url: "s3://bucket/t.npy".into(),
//!     member: None,
//!     header: Header::new(DType::parse("<f4").unwrap(), Order::C, vec![1000, 16]),
//!     data_start: 128,
//!     pin: Pin::default(),
//! };
//! let options = ChunkOptions { rows_per_chunk: Some(250), ..ChunkOptions::default() };
//! let refs = kerchunk_refs(&[array], &options)?;
//! assert_eq!(refs["refs"]["t/1.0"], serde_json::json!(["s3://bucket/t.npy", 128 + 16000, 16000]));
//! # Ok::<(), npy_remote::VirtualError>(())
//! ```

mod dtype;
mod gather;
mod manifest;

pub use gather::{GatherOptions, gather};
pub use manifest::{ChunkOptions, Chunking, Pin, VirtualArray, kerchunk_refs, zarr3_manifest};

//! NumPy `.npy` arrays (and `.npz` archives) in object storage: S3, GCS,
//! Azure, HTTP, local files and memory, through
//! [`object_store`](https://docs.rs/object_store).
//!
//! ```
//! use std::sync::Arc;
//! use npy_core::{DType, Header, Order};
//! use npy_remote::{RemoteArray, Store, UploadOptions, upload};
//! use object_store::{memory::InMemory, path::Path};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), npy_remote::Error> {
//! let store = Store::with_multipart(Arc::new(InMemory::new()));
//! let path = Path::from("arrays/a.npy");
//! // Upload 1000 rows of 4 little-endian f64, byte-identical to np.save.
//! let header = Header::new(DType::parse("<f8").unwrap(), Order::C, vec![1000, 4]);
//! let data: Vec<u8> = (0..4000u32).flat_map(|i| f64::from(i).to_le_bytes()).collect();
//! upload(&store, &path, &npy_core::NpyBytes::new(&header, &data).unwrap(), UploadOptions::default()).await?;
//!
//! // Open: one ranged GET of at most 4 KiB.
//! let array = RemoteArray::open(store.objects().clone(), path).await?;
//! assert_eq!(array.header().shape, [1000, 4]);
//! // Rows 10..12: one GET of exactly their 64 bytes.
//! let rows = array.read_rows(10..12).await?;
//! assert_eq!(rows.view::<f64>().unwrap().to_vec(), [40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0]);
//! # Ok(())
//! # }
//! ```
//!
//! - [`RemoteArray`]: open with one ranged GET, read row ranges, the whole
//!   array with concurrent parts, scattered rows or elements with coalesced
//!   requests, and [`RowBlocks`] that prefetch the next block.
//! - [`upload`] and [`StreamWriter`]: write what `np.save` writes, in one PUT
//!   or a multipart upload; a streaming writer for arrays of unknown length.
//! - [`WritePlan`]: one array written by workers on many machines, each
//!   uploading whole parts of one multipart upload.
//! - [`npz`]: archives listed from their tail, members read by range.
//! - [`zarr`]: arrays and npz members as virtual Zarr (kerchunk references,
//!   Zarr v3 chunk manifests) that zarr-python and xarray read in place.
//! - [`blocking`]: the same for synchronous callers.
//!
//! Formats are npy-core's (one parser, one encoder); errors carry numpy's
//! wording for format problems and the object path and operation for
//! failed requests. Design and request budget: docs/REMOTE.md.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod blocking;
mod copy;
mod error;
mod guard;
pub mod npz;
mod plan;
mod read;
mod store;
mod write;
pub mod zarr;

pub use copy::{download, upload_reader};
pub use error::{Error, ErrorKind, Operation, PlanError, Result, VirtualError, WriteError};
pub use guard::UNRANGED_READ_LIMIT;
pub use plan::{PlanOptions, PlannedPart, UploadedPart, WritePlan};
pub use read::{OPEN_PREFIX, RemoteArray, RemoteHeader, RowBlocks, Transfer};
pub use store::{Store, StoreOptions, install_tls, is_url};
pub use write::{MAX_PART_SIZE, MAX_PARTS, MIN_PART_SIZE, StreamWriter, UploadOptions, upload};

pub use object_store;

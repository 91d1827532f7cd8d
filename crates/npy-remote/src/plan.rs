//! The parallel-writer plan: one array written by workers on many machines
//! as the parts of one multipart upload.
//!
//! The coordinator [`plan`](WritePlan::create)s the array (dtype, order,
//! shape): it starts a multipart upload and splits the rows into parts that
//! satisfy the store's rules (every part but the last at least
//! [`MIN_PART_SIZE`], at most [`MAX_PARTS`] parts, at most
//! [`MAX_PART_SIZE`] each), the header in the first. The plan is plain data
//! (serde; JSON through [`WritePlan::to_json`]) handed to the workers; each
//! uploads the rows of its parts with [`WritePlan::upload_part`], from any
//! process or machine, in any order, and returns the [`UploadedPart`]
//! receipts. The coordinator then [`complete`](WritePlan::complete)s the
//! upload — or aborts it, leaving no object, when a part is missing.

use std::ops::Range;

use bytes::Bytes;
use npy_core::{DType, Header, Order};
use object_store::ObjectStoreExt;
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Operation, PlanError, Result};
use crate::store::Store;
use crate::write::{MAX_PART_SIZE, MAX_PARTS, MIN_PART_SIZE, concat_span};

/// One part of a plan: the rows it holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedPart {
    /// The part's index (0 holds the header).
    pub index: usize,
    /// The rows it holds (along the row axis).
    pub rows: Range<usize>,
    /// Its bytes in the finished object.
    pub bytes: Range<u64>,
}

/// What a worker returns for a part it uploaded: the coordinator needs it
/// to complete the upload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadedPart {
    /// The part's index.
    pub index: usize,
    /// The store's identifier of the uploaded part (S3's ETag).
    pub content_id: String,
}

/// A planned array: a multipart upload in progress and how its rows are
/// split into parts. Serialisable, to be handed to workers anywhere.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WritePlan {
    /// The object's URL, when the plan was made from one: workers on other
    /// machines open the store with [`Store::from_url`].
    pub url: Option<String>,
    /// The object's path in its store.
    pub path: String,
    /// The store's multipart upload id.
    pub upload_id: String,
    /// The dtype, as numpy's `descr`.
    pub descr: String,
    /// Whether the data is in Fortran order.
    pub fortran_order: bool,
    /// The shape.
    pub shape: Vec<usize>,
    /// Bytes of the header (the first part starts with it).
    pub header_len: usize,
    /// Bytes per row.
    pub row_bytes: usize,
    /// The parts, in order.
    pub parts: Vec<PlannedPart>,
}

/// How a plan is split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanOptions {
    /// The smallest part size wanted (default 64 MiB; never below
    /// [`MIN_PART_SIZE`], raised to keep within [`MAX_PARTS`]). Parts hold
    /// whole rows, so they are a little larger.
    pub part_size: u64,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            part_size: 64 << 20,
        }
    }
}

impl WritePlan {
    /// Starts a multipart upload of an array of `dtype`, `order`, `shape`
    /// at `path` and splits its rows into parts.
    ///
    /// Errors: [`ErrorKind::NotSupported`] for a store without numbered parts;
    /// [`ErrorKind::Plan`] when the array cannot be split within the store's
    /// rules (a row larger than [`MAX_PART_SIZE`], or too many parts).
    pub async fn create(
        store: &Store,
        path: &Path,
        dtype: DType,
        order: Order,
        shape: Vec<usize>,
        options: PlanOptions,
    ) -> Result<WritePlan> {
        let multipart = multipart(store, path)?;
        let header = Header::new(dtype, order, shape);
        let head = header.to_bytes(None).map_err(|e| Error::format(path, e))?;
        let parts = split(path, &header, head.len() as u64, options)?;
        let upload_id = multipart
            .create_multipart(path)
            .await
            .map_err(|e| Error::store(Operation::Multipart, path, e))?;
        Ok(WritePlan {
            url: None,
            path: path.to_string(),
            upload_id,
            descr: header.dtype.descr(),
            fortran_order: header.order == Order::Fortran,
            row_bytes: header.row_bytes().unwrap_or(0),
            shape: header.shape,
            header_len: head.len(),
            parts,
        })
    }

    /// [`create`](Self::create) for the object a URL names; the plan
    /// carries the URL so that workers can open the store.
    pub async fn create_at_url(
        url: &str,
        dtype: DType,
        order: Order,
        shape: Vec<usize>,
        options: PlanOptions,
    ) -> Result<WritePlan> {
        let (store, path) = Store::from_url(url)?;
        let mut plan = WritePlan::create(&store, &path, dtype, order, shape, options).await?;
        plan.url = Some(url.to_string());
        Ok(plan)
    }

    /// The plan as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a plan is plain data")
    }

    /// A plan from JSON.
    pub fn from_json(json: &str) -> Result<WritePlan> {
        serde_json::from_str(json).map_err(|e| {
            Error::from(ErrorKind::Plan(PlanError::NotAPlan {
                detail: e.to_string(),
            }))
        })
    }

    /// The array's header.
    pub fn header(&self) -> Result<Header> {
        let dtype = DType::parse(&self.descr).map_err(|e| Error::format(&self.object_path(), e))?;
        let order = if self.fortran_order {
            Order::Fortran
        } else {
            Order::C
        };
        Ok(Header::new(dtype, order, self.shape.clone()))
    }

    /// The object's path.
    pub fn object_path(&self) -> Path {
        Path::from(self.path.as_str())
    }

    /// The store the plan's URL names (for workers on other machines).
    pub fn store(&self) -> Result<Store> {
        let url = self
            .url
            .as_deref()
            .ok_or_else(|| Error::at(&self.path, ErrorKind::Plan(PlanError::NoUrl)))?;
        Ok(Store::from_url(url)?.0)
    }

    /// The parts split among `workers` workers: contiguous runs of parts
    /// (so each worker writes one contiguous run of rows), as even as whole
    /// parts allow. Some workers get none when there are fewer parts.
    pub fn assign(&self, workers: usize) -> Vec<Vec<usize>> {
        let workers = workers.max(1);
        let n = self.parts.len();
        (0..workers)
            .map(|w| (n * w / workers..n * (w + 1) / workers).collect())
            .collect()
    }

    /// Uploads part `index`: `data` must be exactly its rows' bytes (the
    /// header is prepended to part 0 here). Returns the receipt to send
    /// to the coordinator. Can run in any process, in any order.
    pub async fn upload_part(
        &self,
        store: &Store,
        index: usize,
        data: Bytes,
    ) -> Result<UploadedPart> {
        let path = self.object_path();
        let part = self.parts.get(index).ok_or_else(|| {
            Error::at(
                &self.path,
                ErrorKind::Plan(PlanError::NoSuchPart {
                    index,
                    parts: self.parts.len(),
                }),
            )
        })?;
        let expected = part.rows.len() as u64 * self.row_bytes as u64;
        if data.len() as u64 != expected {
            return Err(Error::at(
                &self.path,
                ErrorKind::Plan(PlanError::PartLength {
                    index,
                    rows: part.rows.clone(),
                    expected,
                    actual: data.len() as u64,
                }),
            ));
        }
        let payload = if index == 0 {
            let head = Bytes::from(
                self.header()?
                    .to_bytes(None)
                    .map_err(|e| Error::format(&path, e))?,
            );
            let total = (head.len() + data.len()) as u64;
            concat_span(&head, &data, 0..total)
        } else {
            data.into()
        };
        let id = multipart(store, &path)?
            .put_part(&path, &self.upload_id, index, payload)
            .await
            .map_err(|e| Error::store(Operation::Multipart, &path, e))?;
        Ok(UploadedPart {
            index,
            content_id: id.content_id,
        })
    }

    /// Completes the upload from the workers' receipts (in any order).
    /// When a part is missing or repeated the upload is aborted, leaving no
    /// object, and [`ErrorKind::Plan`] says which part. After completing, the
    /// object's size is checked against the header.
    pub async fn complete(&self, store: &Store, receipts: &[UploadedPart]) -> Result<()> {
        let path = self.object_path();
        let mut ids: Vec<Option<PartId>> = vec![None; self.parts.len()];
        let mut problem = None;
        for receipt in receipts {
            match ids.get_mut(receipt.index) {
                Some(slot @ None) => {
                    *slot = Some(PartId {
                        content_id: receipt.content_id.clone(),
                    })
                }
                Some(Some(_)) => {
                    problem = Some(PlanError::PartReportedTwice {
                        index: receipt.index,
                    })
                }
                None => {
                    problem = Some(PlanError::NoSuchPart {
                        index: receipt.index,
                        parts: self.parts.len(),
                    })
                }
            }
        }
        if problem.is_none()
            && let Some(missing) = ids.iter().position(Option::is_none)
        {
            problem = Some(PlanError::PartMissing {
                index: missing,
                rows: self.parts[missing].rows.clone(),
            });
        }
        if let Some(problem) = problem {
            self.abort(store).await?;
            return Err(Error::at(&self.path, ErrorKind::Plan(problem)));
        }
        let ids = ids.into_iter().flatten().collect();
        if let Err(e) = multipart(store, &path)?
            .complete_multipart(&path, &self.upload_id, ids)
            .await
        {
            let _ = self.abort(store).await;
            return Err(Error::store(Operation::Multipart, &path, e));
        }
        let expected = self.parts.last().map_or(0, |p| p.bytes.end);
        let meta = store
            .objects()
            .head(&path)
            .await
            .map_err(|e| Error::store(Operation::Head, &path, e))?;
        if meta.size != expected {
            return Err(Error::at(
                &self.path,
                ErrorKind::Plan(PlanError::CompletedSize {
                    actual: meta.size,
                    expected,
                }),
            ));
        }
        Ok(())
    }

    /// Aborts the upload: the parts are discarded and no object appears.
    pub async fn abort(&self, store: &Store) -> Result<()> {
        let path = self.object_path();
        multipart(store, &path)?
            .abort_multipart(&path, &self.upload_id)
            .await
            .map_err(|e| Error::store(Operation::Multipart, &path, e))
    }
}

/// The store's numbered-part API, or why there is none.
fn multipart<'s>(store: &'s Store, path: &Path) -> Result<&'s std::sync::Arc<dyn MultipartStore>> {
    store.multipart().ok_or_else(|| {
        Error::at(
            path,
            ErrorKind::NotSupported {
                what: "a multipart upload with numbered parts",
            },
        )
    })
}

/// Rows per part and the parts, within the store's rules.
fn split(
    path: &Path,
    header: &Header,
    header_len: u64,
    options: PlanOptions,
) -> Result<Vec<PlannedPart>> {
    let refuse = |problem: PlanError| Error::at(path, ErrorKind::Plan(problem));
    let rows = header.row_count() as u64;
    let row_bytes = header.row_bytes().unwrap_or(0) as u64;
    let data_len = header.data_len().map_err(|e| Error::format(path, e))? as u64;
    if rows == 0 || row_bytes == 0 || header.row_axis().is_none() {
        // One part: the header (and a 0-d array's one element).
        return Ok(vec![PlannedPart {
            index: 0,
            rows: 0..rows as usize,
            bytes: 0..header_len + data_len,
        }]);
    }
    if row_bytes > MAX_PART_SIZE {
        return Err(refuse(PlanError::RowTooLarge {
            row_bytes,
            max_part_size: MAX_PART_SIZE,
        }));
    }
    let wanted = options.part_size.max(MIN_PART_SIZE as u64);
    let mut rows_per_part = wanted
        .div_ceil(row_bytes)
        .max(rows.div_ceil(MAX_PARTS as u64));
    rows_per_part = rows_per_part.min(rows);
    if rows_per_part * row_bytes + header_len > MAX_PART_SIZE {
        return Err(refuse(PlanError::TooManyParts {
            rows,
            row_bytes,
            max_part_size: MAX_PART_SIZE,
            max_parts: MAX_PARTS,
        }));
    }
    let parts = rows
        .div_ceil(rows_per_part)
        .try_into()
        .unwrap_or(usize::MAX);
    Ok((0..parts)
        .map(|index| {
            let start = index as u64 * rows_per_part;
            let end = (start + rows_per_part).min(rows);
            let bytes_start = if index == 0 {
                0
            } else {
                header_len + start * row_bytes
            };
            PlannedPart {
                index,
                rows: start as usize..end as usize,
                bytes: bytes_start..header_len + end * row_bytes,
            }
        })
        .collect())
}

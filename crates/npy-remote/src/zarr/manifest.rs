//! The references themselves: an array's header and where its data lies
//! become Zarr metadata and one byte range per chunk. No I/O.

use npy_core::{Header, Order};
use serde_json::{Map, Value, json};

use super::dtype::{v2_dtype, v3_data_type, v3_fill_value};
use crate::error::VirtualError;

/// What a reference was made from: the object's version as read, so a
/// reader can tell that the object changed since (the references would
/// then point at other bytes). Written to each variable's attributes as
/// `_npy_source`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pin {
    /// The object's ETag when the store gave one (local files: object_store's
    /// inode-mtime-size tag).
    pub e_tag: Option<String>,
    /// The object's size in bytes (the archive's, for an npz member).
    pub size: u64,
    /// A local file's modification time, in nanoseconds since the Unix
    /// epoch (`os.stat(path).st_mtime_ns`).
    pub mtime_ns: Option<u64>,
}

/// One array to reference: a `.npy` object or a stored npz member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VirtualArray {
    /// The variable's name (the file's stem, or the member's key).
    pub name: String,
    /// What the chunk references point at: a URL (`s3://bucket/key`) or an
    /// absolute local path.
    pub url: String,
    /// The npz member, for an array inside an archive.
    pub member: Option<String>,
    /// The array's header.
    pub header: Header,
    /// Offset of the first data byte in the object.
    pub data_start: u64,
    /// The object's version as read.
    pub pin: Pin,
}

/// How arrays are cut into chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkOptions {
    /// Rows per chunk; `None` chooses (see [`VirtualArray::chunking`]).
    pub rows_per_chunk: Option<usize>,
    /// The chunk size aimed at when choosing, in bytes (default 64 MiB).
    pub target_bytes: u64,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        ChunkOptions {
            rows_per_chunk: None,
            target_bytes: 64 << 20,
        }
    }
}

/// The chunks of one array: whole rows, every chunk full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunking {
    /// Rows per chunk (1 for an array without rows).
    pub rows_per_chunk: usize,
    /// How many chunks hold data (0 for an empty array).
    pub chunks: usize,
    /// Bytes of one chunk.
    pub chunk_bytes: u64,
}

/// A chosen divisor is refused when its chunks are smaller than the target
/// divided by this (the whole array is one chunk instead).
const SMALLEST_FRACTION: u64 = 16;

/// Divisors tried when choosing, at most (a bound on the work for huge
/// row counts).
const DIVISOR_SEARCH: usize = 1 << 20;

impl VirtualArray {
    fn rows(&self) -> usize {
        self.header.row_count()
    }

    fn row_bytes(&self) -> u64 {
        self.header.row_bytes().unwrap_or(0) as u64
    }

    /// Where every chunk's data lies, as `(key indices' row position, offset,
    /// length)`; see [`chunking`](Self::chunking).
    ///
    /// Chunks are along the row axis (axis 0 in C order, the last axis in
    /// Fortran order), a whole number of rows each. Zarr reads every chunk
    /// as a full chunk, so no chunk may be short: with `rows_per_chunk`
    /// given it must divide the row count ([`VirtualError::PartialChunk`]
    /// otherwise; a count above the rows is the row count); chosen, it is
    /// the whole array when that is at most `target_bytes`, else the
    /// largest divisor of the row count whose chunk fits the target, when
    /// that chunk is at least a sixteenth of the target, else the whole
    /// array as one chunk.
    pub fn chunking(&self, options: &ChunkOptions) -> Result<Chunking, VirtualError> {
        let rows = self.rows();
        let row_bytes = self.row_bytes();
        let data_len = self.header.data_len().unwrap_or(0) as u64;
        let rows_per_chunk = match options.rows_per_chunk {
            Some(0) => return Err(VirtualError::ZeroRows),
            Some(asked) if asked >= rows => rows.max(1),
            Some(asked) if !rows.is_multiple_of(asked) => {
                return Err(VirtualError::PartialChunk {
                    rows_per_chunk: asked,
                    rows,
                    hint: divisor_hint(rows, asked),
                });
            }
            Some(asked) => asked,
            None => choose_rows(rows, row_bytes, options.target_bytes),
        };
        let chunks = if data_len == 0 {
            0
        } else {
            rows / rows_per_chunk
        };
        Ok(Chunking {
            rows_per_chunk,
            chunks,
            chunk_bytes: rows_per_chunk as u64 * row_bytes,
        })
    }

    /// The chunk shape: the shape with `rows_per_chunk` on the row axis (and
    /// 1 for any zero-length axis: Zarr's chunks are never empty).
    fn chunk_shape(&self, chunking: &Chunking) -> Vec<usize> {
        let axis = self.header.row_axis();
        self.header
            .shape
            .iter()
            .enumerate()
            .map(|(i, &dim)| {
                if Some(i) == axis {
                    chunking.rows_per_chunk
                } else {
                    dim.max(1)
                }
            })
            .collect()
    }

    /// Chunk `index`'s key (`"3.0.0"`, `"0.0.3"` in Fortran order, `"0"`
    /// for a 0-d array).
    fn chunk_key(&self, index: usize) -> String {
        let ndim = self.header.shape.len();
        if ndim == 0 {
            return "0".to_owned();
        }
        let axis = self.header.row_axis().unwrap_or(0);
        (0..ndim)
            .map(|i| {
                if i == axis {
                    index.to_string()
                } else {
                    "0".to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join(".")
    }

    /// Every chunk as `(key, offset in the object, length)`.
    pub fn chunk_refs(&self, chunking: &Chunking) -> Vec<(String, u64, u64)> {
        (0..chunking.chunks)
            .map(|i| {
                let offset = self.data_start + i as u64 * chunking.chunk_bytes;
                (self.chunk_key(i), offset, chunking.chunk_bytes)
            })
            .collect()
    }

    /// The `_npy_source` attribute: where the references point and the
    /// version they were made from.
    fn source_attribute(&self) -> Value {
        let mut source = Map::new();
        source.insert("url".into(), json!(self.url));
        if let Some(member) = &self.member {
            source.insert("member".into(), json!(member));
        }
        source.insert("size".into(), json!(self.pin.size));
        if let Some(e_tag) = &self.pin.e_tag {
            source.insert("etag".into(), json!(e_tag));
        }
        if let Some(mtime) = self.pin.mtime_ns {
            source.insert("mtime_ns".into(), json!(mtime));
        }
        source.insert("descr".into(), json!(self.header.dtype.descr()));
        Value::Object(source)
    }
}

fn choose_rows(rows: usize, row_bytes: u64, target: u64) -> usize {
    if rows == 0 || row_bytes == 0 || rows as u64 * row_bytes <= target {
        return rows.max(1);
    }
    let most = (target / row_bytes).max(1) as usize;
    let least = (target / SMALLEST_FRACTION / row_bytes).max(1) as usize;
    (least..=most)
        .rev()
        .take(DIVISOR_SEARCH)
        .find(|d| rows.is_multiple_of(*d))
        .unwrap_or(rows)
}

/// `" such as 100 or 125"`: the divisors of `rows` nearest `asked`.
fn divisor_hint(rows: usize, asked: usize) -> String {
    let below = (1..asked)
        .rev()
        .take(DIVISOR_SEARCH)
        .find(|d| rows.is_multiple_of(*d));
    let above = (asked + 1..=rows)
        .take(DIVISOR_SEARCH)
        .find(|d| rows.is_multiple_of(*d));
    match (below, above) {
        (Some(b), Some(a)) => format!(" such as {b} or {a}"),
        (Some(d), None) | (None, Some(d)) => format!(" such as {d}"),
        (None, None) => String::new(),
    }
}

/// Dimension names: `dim_<i>` when every array has the same shape (one
/// set of shared dimensions), else `<name>_dim_<i>` per variable (xarray
/// needs a dimension's length to agree across variables).
fn dimension_names(arrays: &[VirtualArray]) -> Vec<Vec<String>> {
    let shared = arrays
        .windows(2)
        .all(|pair| pair[0].header.shape == pair[1].header.shape);
    arrays
        .iter()
        .map(|array| {
            (0..array.header.shape.len())
                .map(|i| {
                    if shared {
                        format!("dim_{i}")
                    } else {
                        format!("{}_dim_{i}", array.name)
                    }
                })
                .collect()
        })
        .collect()
}

/// Why Zarr cannot keep `name` as a variable's name, if it cannot: the
/// name becomes the first part of every key (`<name>/.zarray`,
/// `<name>/zarr.json`, `<name>/0.0`), so it must be one plain key part
/// that is not one of Zarr's own.
fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty (a member named `.npy`, or a file named `.npy`)")
    } else if name.contains('/') {
        Some("'/' would make it a path into other groups (`../` out of this one)")
    } else if name.starts_with('.') {
        Some(
            "a name starting with '.' is '.' or '..', one of Zarr v2's own keys \
             (.zarray, .zattrs, .zgroup, .zmetadata), or hidden from listings",
        )
    } else if name.starts_with("__") {
        Some("names starting with '__' are reserved by Zarr v3")
    } else if name == "zarr.json" {
        Some("zarr.json is the name of Zarr v3's metadata documents")
    } else {
        None
    }
}

/// Where `array`'s name came from, for messages.
fn name_source(array: &VirtualArray) -> String {
    match &array.member {
        Some(member) => format!("member {member:?} of {}", array.url),
        None => format!("file {}", array.url),
    }
}

fn check_names(arrays: &[VirtualArray]) -> Result<(), VirtualError> {
    let mut seen = std::collections::HashSet::new();
    for array in arrays {
        if let Some(reason) = name_problem(&array.name) {
            return Err(VirtualError::Name {
                name: array.name.clone(),
                source_name: name_source(array),
                reason,
            });
        }
        if !seen.insert(array.name.as_str()) {
            return Err(VirtualError::DuplicateName {
                name: array.name.clone(),
            });
        }
    }
    Ok(())
}

/// kerchunk's reference JSON (fsspec's `ReferenceFileSystem`, version 1)
/// with Zarr v2 metadata: `.zgroup`, then per variable `<name>/.zarray`,
/// `<name>/.zattrs` (`_ARRAY_DIMENSIONS` for xarray, `_npy_source`) and
/// `<name>/<key>` → `[url, offset, length]`. Metadata values are JSON
/// text, as kerchunk writes them.
pub fn kerchunk_refs(
    arrays: &[VirtualArray],
    options: &ChunkOptions,
) -> Result<Value, VirtualError> {
    check_names(arrays)?;
    let mut refs = Map::new();
    refs.insert(
        ".zgroup".into(),
        json!(json!({"zarr_format": 2}).to_string()),
    );
    for (array, dims) in arrays.iter().zip(dimension_names(arrays)) {
        let chunking = array.chunking(options)?;
        let zarray = json!({
            "zarr_format": 2,
            "shape": array.header.shape,
            "chunks": array.chunk_shape(&chunking),
            "dtype": v2_dtype(&array.header.dtype)?,
            "compressor": null,
            "filters": null,
            "fill_value": null,
            "order": match array.header.order { Order::C => "C", Order::Fortran => "F" },
            "dimension_separator": ".",
        });
        let zattrs = json!({
            "_ARRAY_DIMENSIONS": dims,
            "_npy_source": array.source_attribute(),
        });
        refs.insert(format!("{}/.zarray", array.name), json!(zarray.to_string()));
        refs.insert(format!("{}/.zattrs", array.name), json!(zattrs.to_string()));
        for (key, offset, len) in array.chunk_refs(&chunking) {
            refs.insert(
                format!("{}/{key}", array.name),
                json!([array.url, offset, len]),
            );
        }
    }
    Ok(json!({"version": 1, "refs": refs}))
}

/// A URL for a v3 manifest: local paths become `file://` URLs.
fn manifest_url(url: &str) -> String {
    if url.starts_with('/') {
        format!("file://{url}")
    } else {
        url.to_owned()
    }
}

/// Zarr v3 metadata with chunk manifests, one entry per variable:
///
/// ```json
/// {"zarr_format": 3, "node_type": "group", "attributes": {},
///  "arrays": {"<name>": {"metadata": {<zarr.json of the array>},
///                        "manifest": {"<i>.0": {"path": url, "offset": o, "length": n}}}}}
/// ```
///
/// `metadata` is the array's `zarr.json` (regular chunk grid, `.`
/// separated default chunk keys, a `transpose` codec before `bytes` for
/// Fortran order, the `bytes` codec's endian from the dtype,
/// `dimension_names`); `manifest` is VirtualiZarr's `ChunkManifest` entries.
pub fn zarr3_manifest(
    arrays: &[VirtualArray],
    options: &ChunkOptions,
) -> Result<Value, VirtualError> {
    check_names(arrays)?;
    let mut out = Map::new();
    for (array, dims) in arrays.iter().zip(dimension_names(arrays)) {
        let chunking = array.chunking(options)?;
        let (data_type, endian) = v3_data_type(&array.header.dtype)?;
        let mut codecs = Vec::new();
        let ndim = array.header.shape.len();
        if array.header.order == Order::Fortran && ndim > 1 {
            let order: Vec<usize> = (0..ndim).rev().collect();
            codecs.push(json!({"name": "transpose", "configuration": {"order": order}}));
        }
        codecs.push(match endian {
            Some(endian) => json!({"name": "bytes", "configuration": {"endian": endian}}),
            None => json!({"name": "bytes"}),
        });
        let metadata = json!({
            "zarr_format": 3,
            "node_type": "array",
            "shape": array.header.shape,
            "data_type": data_type,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": array.chunk_shape(&chunking)}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}},
            "fill_value": v3_fill_value(&data_type),
            "codecs": codecs,
            "attributes": {"_npy_source": array.source_attribute()},
            "dimension_names": dims,
        });
        let url = manifest_url(&array.url);
        let manifest: Map<String, Value> = array
            .chunk_refs(&chunking)
            .into_iter()
            .map(|(key, offset, length)| {
                (
                    key,
                    json!({"path": url, "offset": offset, "length": length}),
                )
            })
            .collect();
        out.insert(
            array.name.clone(),
            json!({"metadata": metadata, "manifest": manifest}),
        );
    }
    Ok(json!({"zarr_format": 3, "node_type": "group", "attributes": {}, "arrays": out}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use npy_core::DType;

    fn array(descr: &str, order: Order, shape: &[usize]) -> VirtualArray {
        VirtualArray {
            name: "a".into(),
            url: "s3://b/a.npy".into(),
            member: None,
            header: Header::new(DType::parse(descr).unwrap(), order, shape.to_vec()),
            data_start: 128,
            pin: Pin::default(),
        }
    }

    fn rows(n: Option<usize>, target: u64) -> ChunkOptions {
        ChunkOptions {
            rows_per_chunk: n,
            target_bytes: target,
        }
    }

    #[test]
    fn chosen_chunks_divide_the_rows() {
        // 1000 rows of 80 bytes, a 4000-byte target: 50 rows (a divisor).
        let a = array("<f8", Order::C, &[1000, 10]);
        let c = a.chunking(&rows(None, 4000)).unwrap();
        assert_eq!((c.rows_per_chunk, c.chunks, c.chunk_bytes), (50, 20, 4000));
        // Small enough: one chunk.
        assert_eq!(a.chunking(&rows(None, 1 << 20)).unwrap().chunks, 1);
        // 997 rows (prime): no divisor near the target, one chunk.
        let p = array("<f8", Order::C, &[997, 10]);
        assert_eq!(p.chunking(&rows(None, 4000)).unwrap().rows_per_chunk, 997);
    }

    #[test]
    fn asked_rows_must_divide() {
        let a = array("<f8", Order::C, &[100, 2]);
        let e = a.chunking(&rows(Some(30), 0)).unwrap_err();
        assert_eq!(
            e.to_string().split("; ").last().unwrap(),
            "pick a divisor of 100 such as 25 or 50"
        );
        assert_eq!(
            a.chunking(&rows(Some(0), 0)).unwrap_err(),
            VirtualError::ZeroRows
        );
        assert_eq!(a.chunking(&rows(Some(500), 0)).unwrap().rows_per_chunk, 100);
    }

    #[test]
    fn fortran_chunks_run_along_the_last_axis() {
        let a = array(">i2", Order::Fortran, &[3, 4, 6]);
        let c = a.chunking(&rows(Some(2), 0)).unwrap();
        assert_eq!(a.chunk_shape(&c), [3, 4, 2]);
        let refs = a.chunk_refs(&c);
        assert_eq!(refs[2], ("0.0.2".to_owned(), 128 + 2 * 48, 48));
        let v2 = kerchunk_refs(std::slice::from_ref(&a), &rows(Some(2), 0)).unwrap();
        let zarray: Value =
            serde_json::from_str(v2["refs"]["a/.zarray"].as_str().unwrap()).unwrap();
        assert_eq!(
            (zarray["order"].as_str(), zarray["dtype"].as_str()),
            (Some("F"), Some(">i2"))
        );
        let v3 = zarr3_manifest(&[a], &rows(Some(2), 0)).unwrap();
        let codecs = &v3["arrays"]["a"]["metadata"]["codecs"];
        assert_eq!(codecs[0]["configuration"]["order"], json!([2, 1, 0]));
        assert_eq!(codecs[1]["configuration"]["endian"], json!("big"));
    }

    #[test]
    fn zero_d_and_empty_arrays() {
        let scalar = array("<f8", Order::C, &[]);
        let c = scalar.chunking(&ChunkOptions::default()).unwrap();
        assert_eq!(scalar.chunk_refs(&c), [("0".to_owned(), 128, 8)]);
        let empty = array("<f8", Order::C, &[0, 3]);
        let c = empty.chunking(&ChunkOptions::default()).unwrap();
        assert_eq!((c.chunks, empty.chunk_shape(&c)), (0, vec![1, 3]));
    }

    #[test]
    fn names_are_unique() {
        let a = array("<f8", Order::C, &[2]);
        let e = kerchunk_refs(&[a.clone(), a], &ChunkOptions::default()).unwrap_err();
        assert!(matches!(e, VirtualError::DuplicateName { .. }));
    }
}

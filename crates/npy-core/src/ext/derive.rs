//! Your own structs as structured dtypes: `#[derive(NpyRecord)]` (feature `derive`).
//!
//! The derive maps a `#[repr(C)]` struct to the structured dtype with the
//! same fields at the same byte offsets, and makes the struct an
//! [`Element`]: a view of a structured file as `&[MyRecord]` is then
//! zero-copy, and writing `&[MyRecord]` writes the descr NumPy writes for
//! the equivalent dtype.
//!
//! Creating a view checks the file's dtype against the struct
//! ([`Element::matches`]): the same field names in the same order, at the
//! same offsets, each with a matching type (kind, size and byte order),
//! and the same itemsize, so padding (NumPy's `('', '|V3')` entries, the
//! layouts of `align=True`) has to agree too. Titles are not compared. A
//! mismatch is an [`Error::TypeMismatch`](crate::Error::TypeMismatch);
//! [`explain_mismatch`] says which field differs.
//!
//! # Writing the struct
//!
//! * `#[repr(C)]`, and derive zerocopy's `TryFromBytes` (or `FromBytes`),
//!   `IntoBytes`, `Immutable` and `KnownLayout`, plus `Clone, Copy`: these
//!   are [`Element`]'s supertraits, which let views cast bytes without
//!   `unsafe`. Your crate needs `zerocopy` (0.8, feature `derive`) as a
//!   dependency for those derives.
//! * Field types: any [`Element`] (native numbers, `bool`/[`Bool`](crate::Bool),
//!   zerocopy's byte-order types such as `F64<BigEndian>` for big-endian
//!   fields, `half::f16`, complex types, other derived records), arrays of
//!   them `[T; N]` / `[[T; N]; M]` for subarray fields (`('x', '<f4', (M, N))`),
//!   and `[u8; N]` for `S<N>` byte strings (mark it `#[npy(subarray)]` to mean
//!   `('x', '|u1', (N,))` instead).
//! * **Padding must be explicit.** `IntoBytes` refuses structs with implicit
//!   padding (their bytes would be uninitialised), so write the padding
//!   bytes as fields and mark them `#[npy(padding)]`: they are not dtype
//!   fields, they are the gaps NumPy writes as `('', '|V<n>')`. Rust's
//!   `#[repr(C)]` layout is the C layout NumPy's `align=True` follows, so an
//!   aligned dtype is mirrored field for field. For NumPy's default packed
//!   layout (`align=False`), use alignment-1 field types (zerocopy's
//!   `I32<LittleEndian>` etc.), or `#[repr(C, packed)]`.
//! * `#[npy(rename = "name")]` gives a field another dtype name (NumPy
//!   names need not be Rust identifiers). Tuple structs get NumPy's default
//!   names `f0`, `f1`, ...
//! * `#[npy(crate = "path")]` on the struct, if `npy_core` is not reachable
//!   under that name.
//!
//! # Example: NumPy's `align=True` layout
//!
//! ```
//! use npy_core::io::{ReadOptions, read_npy, write_npy};
//! use npy_core::{DType, Element, NpyRecord, Order};
//! use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
//!
//! /// np.dtype([('id', '<u4'), ('pos', '<f4', (3,)), ('name', 'S5')], align=True)
//! #[derive(Clone, Copy, Debug, PartialEq, NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout)]
//! #[repr(C)]
//! struct Particle {
//!     id: u32,
//!     pos: [f32; 3],
//!     name: [u8; 5],
//!     #[npy(padding)]
//!     _pad: [u8; 3],
//! }
//!
//! assert_eq!(
//!     Particle::dtype().descr(),
//!     "[('id', '<u4'), ('pos', '<f4', (3,)), ('name', '|S5'), ('', '|V3')]"
//! );
//!
//! let particles = [Particle { id: 7, pos: [1.0, 2.0, 3.0], name: *b"alpha", _pad: [0; 3] }];
//! let mut file = Vec::new();
//! write_npy(&mut file, &particles[..])?;
//! let array = read_npy(file.as_slice(), &ReadOptions::default())?;
//! let view = array.view::<Particle>()?; // checked against the file's dtype, then zero-copy
//! assert_eq!(view.get(&[0]).unwrap().pos, [1.0, 2.0, 3.0]);
//!
//! // A file whose layout differs is refused when the view is created.
//! let packed = DType::parse("[('id', '<u4'), ('pos', '<f4', (3,)), ('name', '|S5')]")?;
//! assert!(!Particle::matches(&packed));
//! assert_eq!(
//!     npy_core::ext::derive::explain_mismatch::<Particle>(&packed).unwrap(),
//!     "the file's records are 21 bytes, the struct's 24"
//! );
//! # Ok::<(), npy_core::Error>(())
//! ```
//!
//! Forgetting a padding field is a compile error (zerocopy's `IntoBytes`
//! derive: "types with padding cannot implement `IntoBytes`"):
//!
//! ```compile_fail
//! use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
//! #[derive(Clone, Copy, npy_core::NpyRecord, FromBytes, IntoBytes, Immutable, KnownLayout)]
//! #[repr(C)]
//! struct Padded { a: u8, b: u32 } // needs `#[npy(padding)] _pad: [u8; 3]` after `a`
//! ```

use crate::dtype::{DType, Field, Structured};
use crate::element::Element;
use crate::pyrepr::str_repr;

/// A struct whose layout is one record of a structured dtype: implemented
/// by `#[derive(NpyRecord)]`, which also implements [`Element`] for it.
pub trait NpyRecord: Element {
    /// The dtype fields, in declaration order (padding fields excluded).
    fn fields() -> Vec<FieldLayout>;
}

/// Where one field of an [`NpyRecord`] is, and what it holds.
#[derive(Clone, Debug)]
pub struct FieldLayout {
    name: &'static str,
    offset: usize,
    shape: Vec<usize>,
    base_dtype: fn() -> DType,
    base_matches: fn(&DType) -> bool,
    base_size: usize,
}

impl FieldLayout {
    /// A field named `name` at byte `offset` holding a `T`, or a subarray of
    /// `T` with `shape` (empty for a plain field).
    // Called by the code `#[derive(NpyRecord)]` (npy-derive) generates.
    #[doc(hidden)]
    pub fn new<T: Element>(name: &'static str, offset: usize, shape: &[usize]) -> FieldLayout {
        FieldLayout {
            name,
            offset,
            shape: shape.to_vec(),
            base_dtype: T::dtype,
            base_matches: T::matches,
            base_size: size_of::<T>(),
        }
    }

    /// The field name in the dtype.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Byte offset in the record.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The field's dtype as written: the base type, or `(base, shape)`.
    pub fn dtype(&self) -> DType {
        let base = (self.base_dtype)();
        if self.shape.is_empty() {
            base
        } else {
            DType::SubArray(Box::new(base), self.shape.clone())
        }
    }

    /// Whether a file field of `dtype` is this field's type. A nested
    /// subarray (`(('<f8', (5,)), (2,))`) is the same memory as the flat one
    /// (`('<f8', (2, 5))`) and matches `[[f64; 5]; 2]` either way.
    pub fn matches(&self, dtype: &DType) -> bool {
        let mut base = dtype;
        let mut shape = Vec::new();
        while let DType::SubArray(inner, dims) = base {
            shape.extend_from_slice(dims);
            base = inner;
        }
        shape == self.shape && base.itemsize() == self.base_size && (self.base_matches)(base)
    }
}

/// The structured dtype of `R`: its fields at their offsets, and its size
/// as the itemsize (gaps are written as NumPy's `('', '|V<n>')` padding).
// Called by the `Element::dtype` that `#[derive(NpyRecord)]` (npy-derive)
// generates; users call `R::dtype()`.
#[doc(hidden)]
pub fn record_dtype<R: NpyRecord>() -> DType {
    DType::Structured(Structured {
        fields: R::fields()
            .iter()
            .map(|field| Field {
                name: field.name.to_owned(),
                title: None,
                dtype: field.dtype(),
                offset: field.offset,
            })
            .collect(),
        itemsize: size_of::<R>(),
    })
}

/// Whether data of `dtype` can be viewed as `R` (see the [module docs](self)).
// Called by the `Element::matches` that `#[derive(NpyRecord)]` (npy-derive)
// generates; users call `R::matches(dtype)`.
#[doc(hidden)]
pub fn record_matches<R: NpyRecord>(dtype: &DType) -> bool {
    explain_mismatch::<R>(dtype).is_none()
}

/// Why data of `dtype` cannot be viewed as `R`, or `None` if it can.
pub fn explain_mismatch<R: NpyRecord>(dtype: &DType) -> Option<String> {
    let DType::Structured(record) = dtype else {
        return Some(format!(
            "the file's dtype {} is not a structured dtype",
            dtype.descr()
        ));
    };
    if record.itemsize != size_of::<R>() {
        return Some(format!(
            "the file's records are {} bytes, the struct's {}",
            record.itemsize,
            size_of::<R>()
        ));
    }
    let expected = R::fields();
    for (i, layout) in expected.iter().enumerate() {
        let Some(field) = record.fields.get(i) else {
            return Some(format!(
                "the file has {} fields, the struct {}",
                record.fields.len(),
                expected.len()
            ));
        };
        let name = str_repr(layout.name);
        if field.name != layout.name {
            return Some(format!(
                "field {i} is {} in the file, {name} in the struct",
                str_repr(&field.name)
            ));
        }
        if field.offset != layout.offset {
            return Some(format!(
                "field {name} is at byte {} in the file, {} in the struct",
                field.offset, layout.offset
            ));
        }
        if !layout.matches(&field.dtype) {
            return Some(format!(
                "field {name} is {} in the file, {} in the struct",
                field.dtype.descr(),
                layout.dtype().descr()
            ));
        }
    }
    (record.fields.len() != expected.len()).then(|| {
        format!(
            "the file has {} fields, the struct {}",
            record.fields.len(),
            expected.len()
        )
    })
}

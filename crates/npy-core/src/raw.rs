//! Raw element views for any dtype: records, strings, anything.
//!
//! A [`RawView`] sees each element as its raw bytes plus its dtype, which
//! works for every dtype (structured records with nested and padded layouts,
//! `S`/`U` strings, datetimes, long doubles...) and needs no alignment. A
//! [`RawElement`] is one element; fields are found by name, nest, and read as
//! typed values with [`RawElement::read`] or decoded with [`RawElement::value`].
//!
//! ```
//! use npy_core::raw::RawView;
//! use npy_core::{ByteOrder, DType, Field, Order, Structured, Scalar, ScalarKind};
//! use zerocopy::byteorder::{BigEndian, I16};
//!
//! // [('id', '<u1'), ('', '|V1'), ('temp', '>i2')]: one padding byte before 'temp'.
//! let scalar = |kind, byte_order, itemsize| DType::Scalar(Scalar { kind, byte_order, itemsize });
//! let dtype = DType::Structured(Structured {
//!     fields: vec![
//!         Field { name: "id".into(), title: None, offset: 0,
//!                 dtype: scalar(ScalarKind::UInt, ByteOrder::NotApplicable, 1) },
//!         Field { name: "temp".into(), title: None, offset: 2,
//!                 dtype: scalar(ScalarKind::Int, ByteOrder::Big, 2) },
//!     ],
//!     itemsize: 4,
//! });
//! let data = [7, 0, 0xff, 0xfe, 8, 0, 0x00, 0x10];
//! let records = RawView::new(&data, &dtype, &[2], Order::C)?;
//! let second = records.get(&[1]).unwrap();
//! assert_eq!(second.field("id").unwrap().read::<u8>()?, 8);
//! assert_eq!(records.get(&[0]).unwrap().field("temp").unwrap().read::<I16<BigEndian>>()?.get(), -2);
//! # Ok::<(), npy_core::Error>(())
//! ```

use std::fmt;
use std::ops::RangeBounds;

use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::geometry::{Geometry, Offsets, geometry_accessors};
use crate::header::{Header, Order};
use crate::value::Value;
use crate::view::ArrayView;

/// A read-only view of any array as raw elements (see the [module docs](self)).
#[derive(Clone)]
pub struct RawView<'a> {
    /// Starts at the first element's first byte.
    data: &'a [u8],
    /// The element dtype (a subarray dtype's base).
    dtype: &'a DType,
    geometry: Geometry,
}

impl fmt::Debug for RawView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawView")
            .field("dtype", self.dtype)
            .field("shape", &self.geometry.shape())
            .field("order", &self.geometry.order())
            .finish_non_exhaustive()
    }
}

impl<'a> RawView<'a> {
    /// Views `bytes` as an array of `dtype` with `shape`, stored in `order`.
    ///
    /// Any dtype and any alignment work; a subarray dtype's dimensions are
    /// appended to the shape. Trailing bytes are ignored.
    pub fn new(bytes: &'a [u8], dtype: &'a DType, shape: &[usize], order: Order) -> Result<Self> {
        let (geometry, element) = Geometry::new(dtype, shape, order)?;
        // Cannot overflow: Geometry::new checked len × itemsize.
        let needed = geometry.len() * element.itemsize();
        if bytes.len() < needed {
            return Err(Error::DataLength {
                expected: needed,
                actual: bytes.len(),
            });
        }
        Ok(RawView {
            data: &bytes[..needed],
            dtype: element,
            geometry,
        })
    }

    /// Views `bytes` (the data section) as the array `header` describes.
    pub fn from_header(bytes: &'a [u8], header: &'a Header) -> Result<Self> {
        RawView::new(bytes, &header.dtype, &header.shape, header.order)
    }

    /// The dtype of one element.
    pub fn dtype(&self) -> &'a DType {
        self.dtype
    }

    geometry_accessors!();

    fn element(&self, offset: usize) -> RawElement<'a> {
        let size = self.dtype.itemsize();
        RawElement {
            bytes: &self.data[offset * size..(offset + 1) * size],
            dtype: self.dtype,
        }
    }

    /// The element at a logical index, or `None` when out of bounds.
    pub fn get<I: crate::index::NdIndex>(&self, index: I) -> Option<RawElement<'a>> {
        self.geometry
            .offset_of(&index)
            .map(|offset| self.element(offset))
    }

    /// The indices `range` of the outer axis (axis 0), as a view of the
    /// same data (errors as [`ArrayView::slice_outer`]).
    pub fn slice_outer(&self, range: impl RangeBounds<usize>) -> Result<RawView<'a>> {
        let (geometry, first) = self.geometry.slice_outer(range)?;
        let size = self.dtype.itemsize();
        Ok(RawView {
            data: &self.data[first * size..(first + geometry.span()) * size],
            dtype: self.dtype,
            geometry,
        })
    }

    /// Iterates over the elements in logical (C) order.
    pub fn iter(&self) -> RawIter<'a> {
        RawIter {
            view: self.clone(),
            offsets: self.geometry.offsets(),
        }
    }
}

impl<'a> IntoIterator for &RawView<'a> {
    type Item = RawElement<'a>;
    type IntoIter = RawIter<'a>;

    fn into_iter(self) -> RawIter<'a> {
        self.iter()
    }
}

/// Iterator over a [`RawView`]'s elements in logical (C) order.
#[derive(Clone, Debug)]
pub struct RawIter<'a> {
    view: RawView<'a>,
    offsets: Offsets,
}

impl<'a> Iterator for RawIter<'a> {
    type Item = RawElement<'a>;

    fn next(&mut self) -> Option<RawElement<'a>> {
        self.offsets.next().map(|offset| self.view.element(offset))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.offsets.size_hint()
    }
}

impl ExactSizeIterator for RawIter<'_> {}

/// One element (or one field of a record) as raw bytes and their dtype:
/// read it as a Rust type, decode it, or look into its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawElement<'a> {
    bytes: &'a [u8],
    dtype: &'a DType,
}

impl<'a> RawElement<'a> {
    /// Pairs `bytes` with their dtype; `None` unless `bytes` is exactly one element long.
    pub fn new(bytes: &'a [u8], dtype: &'a DType) -> Option<Self> {
        (bytes.len() == dtype.itemsize()).then_some(RawElement { bytes, dtype })
    }

    /// The element's bytes (`dtype().itemsize()` of them, padding included).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The element's dtype.
    pub fn dtype(&self) -> &'a DType {
        self.dtype
    }

    /// The field called `name` (or titled `name`), if this is a record that has one.
    /// Chain calls for nested records: `r.field("pos")?.field("x")`.
    pub fn field(&self, name: &str) -> Option<RawElement<'a>> {
        let DType::Structured(record) = self.dtype else {
            return None;
        };
        let field = record.fields.iter().find(|f| f.name == name).or_else(|| {
            record
                .fields
                .iter()
                .find(|f| f.title.as_deref() == Some(name))
        })?;
        self.field_at(field)
    }

    fn field_at(&self, field: &'a crate::dtype::Field) -> Option<RawElement<'a>> {
        let end = field.offset.checked_add(field.dtype.itemsize())?;
        Some(RawElement {
            bytes: self.bytes.get(field.offset..end)?,
            dtype: &field.dtype,
        })
    }

    /// The fields of a record in declaration order with their names (empty
    /// for non-record dtypes). Padding bytes belong to no field.
    pub fn fields(&self) -> impl Iterator<Item = (&'a str, RawElement<'a>)> + use<'a> {
        let this = *self;
        let fields = match self.dtype {
            DType::Structured(record) => record.fields.as_slice(),
            _ => &[],
        };
        fields
            .iter()
            .filter_map(move |f| Some((f.name.as_str(), this.field_at(f)?)))
    }

    /// Reads the value as `T` (copied, so no alignment is needed).
    ///
    /// Errors: `T` does not match the dtype, or (for `bool`) the byte is not 0 or 1.
    pub fn read<T: Element>(&self) -> Result<T> {
        if !T::matches(self.dtype) || self.dtype.itemsize() != size_of::<T>() {
            return Err(Error::TypeMismatch {
                found: Box::new(self.dtype.clone()),
                requested: Box::new(T::dtype()),
                rust_type: std::any::type_name::<T>(),
            });
        }
        T::try_read_from_bytes(self.bytes).map_err(|_| Error::InvalidElement {
            rust_type: std::any::type_name::<T>(),
            index: 0,
        })
    }

    /// Views a subarray (or scalar) element as a typed array, e.g. a
    /// `('pos', '<f8', (3,))` field as 3 `f64`s; the subarray dims are the
    /// view's shape. Native types need the field to be aligned, the
    /// `zerocopy::byteorder` types never do.
    pub fn view<T: Element>(&self) -> Result<ArrayView<'a, T>> {
        ArrayView::new(self.bytes, self.dtype, &[], Order::C)
    }

    /// Decodes the element into a [`Value`].
    pub fn value(&self) -> Result<Value> {
        Value::decode(self.dtype, self.bytes)
    }
}

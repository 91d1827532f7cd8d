//! The owned array and the Python values of object arrays: [`NpyArray`]
//! holds [`PyValue`]s (an object array's elements) and
//! [`PyValue::Array`] holds an `NpyArray` (an array nested in one). Two
//! types that contain each other share one room, below everything that
//! makes them: the unpickler (`pickle`), the writers' sources (`source`)
//! and the stream readers (`io`) all import it, and it imports none of them.
//! `PyValue`'s `repr()` and its conversions to and from Rust types live with
//! the unpickler (`pickle/value.rs`).

use crate::aligned::AlignedBytes;
use crate::dtype::{ByteOrder, DType};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::header::{Header, Layout, Order, Version};
use crate::raw::RawView;
use crate::swap::convert_byte_order;
use crate::value::Value;
use crate::view::{ArrayView, ArrayViewMut};

/// An array read from a stream: header, file layout and the data in an
/// aligned, owned buffer; or, for an object array ([`DType::Object`]), its
/// values ([`objects`](Self::objects)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyArray {
    header: Header,
    layout: Layout,
    data: AlignedBytes,
    /// The values of an object array, in the header's memory order.
    objects: Option<Vec<PyValue>>,
}

impl NpyArray {
    /// The header (its dtype is native-order after
    /// [`ReadOptions::to_native`](crate::io::ReadOptions::to_native)).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Where things were in the stream.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The data bytes, in the header's memory order (empty for an object
    /// array: see [`objects`](Self::objects)).
    pub fn bytes(&self) -> &[u8] {
        &self.data
    }

    /// The data bytes, mutably.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.data
    }

    /// A typed view of the data.
    pub fn view<T: Element>(&self) -> Result<ArrayView<'_, T>> {
        ArrayView::from_header(&self.data, &self.header)
    }

    /// A mutable typed view of the data.
    pub fn view_mut<T: Element>(&mut self) -> Result<ArrayViewMut<'_, T>> {
        ArrayViewMut::from_header(&mut self.data, &self.header)
    }

    /// A raw element view, for records, strings and any other dtype
    /// (not objects: [`Error::ObjectData`]).
    pub fn raw_view(&self) -> Result<RawView<'_>> {
        if self.objects.is_some() {
            return Err(Error::ObjectData);
        }
        RawView::from_header(&self.data, &self.header)
    }

    /// The values of an object array, in the header's memory order
    /// (column-major when it is Fortran order); `None` for other arrays.
    pub fn objects(&self) -> Option<&[PyValue]> {
        self.objects.as_deref()
    }

    /// The values of an object array, mutably.
    pub fn objects_mut(&mut self) -> Option<&mut [PyValue]> {
        self.objects.as_deref_mut()
    }

    /// This object array with its values rearranged into C (row-major)
    /// order, the order numpy lists them in; other arrays are returned as
    /// they are.
    pub fn into_c_order(self) -> NpyArray {
        match (&self.objects, self.header.order) {
            (Some(values), Order::Fortran) => NpyArray {
                objects: Some(fortran_to_c(values, &self.header.shape)),
                header: Header {
                    order: Order::C,
                    ..self.header
                },
                ..self
            },
            _ => self,
        }
    }

    /// The values of an object array, taken; `None` for other arrays.
    pub fn into_objects(self) -> Option<Vec<PyValue>> {
        self.objects
    }

    /// An object array: `values` in `header`'s memory order (column-major
    /// for Fortran order), one per element. Its layout is the one of an
    /// array not read from a file (offsets 0).
    ///
    /// Errors: [`Error::ObjectCount`] unless there is one value per element;
    /// [`Error::TypeMismatch`] unless the header's dtype is [`DType::Object`].
    ///
    /// ```
    /// use npy_core::pickle::PyValue;
    /// use npy_core::{DType, Header, NpyArray, Order};
    ///
    /// let header = Header::new(DType::Object, Order::C, vec![2]);
    /// let array = NpyArray::from_objects(header, vec!["a".into(), PyValue::None])?;
    /// assert_eq!(array.objects().unwrap()[0], PyValue::Str("a".into()));
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn from_objects(header: Header, values: Vec<PyValue>) -> Result<NpyArray> {
        if header.dtype != DType::Object {
            return Err(Error::TypeMismatch {
                found: Box::new(header.dtype.clone()),
                requested: Box::new(DType::Object),
                rust_type: "PyValue",
            });
        }
        check_count(&header, values.len())?;
        Ok(NpyArray {
            layout: detached_layout(0),
            header,
            data: AlignedBytes::new(),
            objects: Some(values),
        })
    }

    /// An array of plain data not read from a file (a nested array of an
    /// object array): `data` must hold what `header` describes.
    pub(crate) fn from_data(header: Header, data: Vec<u8>) -> Result<NpyArray> {
        let layout = detached_layout(data.len());
        NpyArray::from_parts(header, layout, AlignedBytes::from_vec(data))
    }

    /// The array a stream reader read: `data` holds what `header`
    /// describes (the reader counted it), so nothing is checked again.
    pub(crate) fn read(header: Header, layout: Layout, data: AlignedBytes) -> NpyArray {
        NpyArray {
            header,
            layout,
            data,
            objects: None,
        }
    }

    /// This array, placed at `layout` in the stream it was read from.
    pub(crate) fn with_layout(self, layout: Layout) -> NpyArray {
        NpyArray { layout, ..self }
    }

    /// Converts the data to byte order `to` in place and updates the dtype
    /// (object arrays have none: nothing changes).
    pub fn convert_byte_order(&mut self, to: ByteOrder) {
        if self.objects.is_some() {
            return;
        }
        self.header.dtype = convert_byte_order(&self.header.dtype, &mut self.data, to);
    }

    /// An array from its parts (the inverse of [`into_parts`](Self::into_parts)).
    ///
    /// Errors: [`Error::DataLength`] unless `data` holds exactly the bytes
    /// `header` describes; [`Error::ObjectData`] for an object dtype (see
    /// [`from_objects`](Self::from_objects)).
    pub fn from_parts(header: Header, layout: Layout, data: AlignedBytes) -> Result<NpyArray> {
        check_bytes(&header, data.len())?;
        Ok(NpyArray {
            header,
            layout,
            data,
            objects: None,
        })
    }

    /// The header, layout and data buffer (empty for an object array).
    pub fn into_parts(self) -> (Header, Layout, AlignedBytes) {
        (self.header, self.layout, self.data)
    }
}

/// Checks that `len` bytes are the data `header` describes: plain data
/// ([`Error::ObjectData`] for objects, whose data is a pickle) of exactly
/// the header's length ([`Error::DataLength`]).
pub(crate) fn check_bytes(header: &Header, len: usize) -> Result<()> {
    if header.dtype.has_object() {
        return Err(Error::ObjectData);
    }
    let expected = header.data_len()?;
    if len != expected {
        return Err(Error::DataLength {
            expected,
            actual: len,
        });
    }
    Ok(())
}

/// The layout of an array that was not read from a file: no header before it.
fn detached_layout(data_len: usize) -> Layout {
    Layout {
        version: Version::V1,
        header_len: 0,
        data_offset: 0,
        data_len,
        python2_header: false,
    }
}

/// Checks a header can describe the given objects.
pub(crate) fn check_count(header: &Header, count: usize) -> Result<()> {
    let expected = header.element_count()?;
    if expected != count {
        return Err(Error::ObjectCount {
            shape: crate::pyrepr::shape_repr(&header.shape),
            expected,
            actual: count,
        });
    }
    Ok(())
}

/// One Python object from an object array: the plain values `np.save`
/// pickles, and nested numpy arrays and scalars.
///
/// Equality is structural, and floats compare by their bits, so a value
/// equals itself (NaN included) and a round trip through a file compares
/// equal; `0.0` and `-0.0` differ. `Display` is Python's `repr()`.
///
/// ```
/// use npy_core::pickle::PyValue;
///
/// let row = PyValue::List(vec!["abc".into(), 1.into(), 2.5.into(), PyValue::None]);
/// assert_eq!(row.to_string(), "['abc', 1, 2.5, None]");
/// let n: i64 = PyValue::Int(7).try_into()?;
/// assert_eq!(n, 7);
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub enum PyValue {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An `int` that fits 64 bits.
    Int(i64),
    /// An `int` that does not fit 64 bits: its two's-complement bytes,
    /// little-endian, as few as represent it (pickle's `LONG1` payload).
    /// Values that fit an `i64` are always [`PyValue::Int`].
    BigInt(Vec<u8>),
    /// A `float`.
    Float(f64),
    /// A `complex`: real and imaginary parts.
    Complex(f64, f64),
    /// A `str`.
    Str(String),
    /// A `bytes`.
    Bytes(Vec<u8>),
    /// A `bytearray`.
    ByteArray(Vec<u8>),
    /// A `tuple`.
    Tuple(Vec<PyValue>),
    /// A `list`.
    List(Vec<PyValue>),
    /// A `dict`: its items in insertion order.
    Dict(Vec<(PyValue, PyValue)>),
    /// A `set`: its items in the pickle's order.
    Set(Vec<PyValue>),
    /// A `frozenset`: its items in the pickle's order.
    FrozenSet(Vec<PyValue>),
    /// A numpy array (any dtype, object arrays included), loaded.
    Array(Box<NpyArray>),
    /// A numpy scalar (`np.float64(1.5)`, `np.int32(3)`).
    Scalar(Box<NumpyScalar>),
    /// A builtin type used as a value, by its name in Python 3's `builtins`
    /// (`"range"` for `range`, and for Python 2's `xrange`). Only the types
    /// [the unpickler](crate::pickle) accepts are ever made: `range`, `str`,
    /// `int`, `bool`, `float`, `complex`, `bytes`, `bytearray`, `list`,
    /// `tuple`, `dict`, `set`, `frozenset`, `slice`, `object`, `type`.
    Type(String),
}

/// A numpy scalar: its dtype and its bytes, in the dtype's byte order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumpyScalar {
    /// The scalar's type (not an object type).
    pub dtype: DType,
    /// Exactly `dtype.itemsize()` bytes.
    pub bytes: Vec<u8>,
}

impl NumpyScalar {
    /// The scalar decoded as an element of its dtype.
    pub fn value(&self) -> Result<Value> {
        Value::decode(&self.dtype, &self.bytes)
    }
}

impl PartialEq for PyValue {
    fn eq(&self, other: &Self) -> bool {
        use PyValue::*;
        match (self, other) {
            (None, None) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (BigInt(a), BigInt(b)) => a == b,
            (Float(a), Float(b)) => a.to_bits() == b.to_bits(),
            (Complex(a, b), Complex(c, d)) => {
                a.to_bits() == c.to_bits() && b.to_bits() == d.to_bits()
            }
            (Str(a), Str(b)) => a == b,
            (Bytes(a), Bytes(b)) | (ByteArray(a), ByteArray(b)) => a == b,
            (Tuple(a), Tuple(b))
            | (List(a), List(b))
            | (Set(a), Set(b))
            | (FrozenSet(a), FrozenSet(b)) => a == b,
            (Dict(a), Dict(b)) => a == b,
            (Array(a), Array(b)) => a == b,
            (Scalar(a), Scalar(b)) => a == b,
            (Type(a), Type(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for PyValue {}

impl PyValue {
    /// The Python type name (`'int'`, `'list'`, `'numpy.ndarray'`, ...), for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            PyValue::None => "NoneType",
            PyValue::Bool(_) => "bool",
            PyValue::Int(_) | PyValue::BigInt(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Complex(..) => "complex",
            PyValue::Str(_) => "str",
            PyValue::Bytes(_) => "bytes",
            PyValue::ByteArray(_) => "bytearray",
            PyValue::Tuple(_) => "tuple",
            PyValue::List(_) => "list",
            PyValue::Dict(_) => "dict",
            PyValue::Set(_) => "set",
            PyValue::FrozenSet(_) => "frozenset",
            PyValue::Array(_) => "numpy.ndarray",
            PyValue::Scalar(_) => "numpy scalar",
            PyValue::Type(_) => "type",
        }
    }
}

/// Items in C order rearranged into Fortran (column-major) memory order.
pub(crate) fn c_to_fortran<T: Clone>(items: &[T], shape: &[usize]) -> Vec<T> {
    reorder(items, shape, true)
}

/// Items in Fortran memory order rearranged into C order.
pub(crate) fn fortran_to_c<T: Clone>(items: &[T], shape: &[usize]) -> Vec<T> {
    reorder(items, shape, false)
}

fn reorder<T: Clone>(items: &[T], shape: &[usize], to_fortran: bool) -> Vec<T> {
    if shape.len() < 2 || items.is_empty() {
        return items.to_vec();
    }
    // Walk the output in its order (an odometer over the axes, fastest
    // first), following the source's strides.
    let source_strides = strides(shape, !to_fortran);
    let axes: Vec<usize> = if to_fortran {
        (0..shape.len()).collect()
    } else {
        (0..shape.len()).rev().collect()
    };
    let mut index = vec![0usize; shape.len()];
    let mut source = 0usize;
    let mut out = Vec::with_capacity(items.len());
    for _ in 0..items.len() {
        out.push(items[source].clone());
        for &axis in &axes {
            index[axis] += 1;
            source += source_strides[axis];
            if index[axis] < shape[axis] {
                break;
            }
            source -= source_strides[axis] * shape[axis];
            index[axis] = 0;
        }
    }
    out
}

fn strides(shape: &[usize], fortran: bool) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    let mut acc = 1usize;
    let axes: Vec<usize> = if fortran {
        (0..shape.len()).collect()
    } else {
        (0..shape.len()).rev().collect()
    };
    for axis in axes {
        strides[axis] = acc;
        acc = acc.saturating_mul(shape[axis].max(1));
    }
    strides
}

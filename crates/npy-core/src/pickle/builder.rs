//! What the unpickler makes its values with: the [`Build`] trait the
//! caller implements (npy-core's own [`Tree`] makes [`PyValue`]s; a Python
//! binding makes Python objects straight from the pickle's bytes).

use std::borrow::Cow;

use crate::array::{NpyArray, NumpyScalar, PyValue};
use crate::error::{Error, Result};
use crate::header::Header;

/// What the unpickler makes its values with: one method per kind of
/// Python value, called children first (a container gets its items made).
///
/// Two ways to use one: [`decode`](super::decode) keeps the pickle's
/// objects (the text of every `str` and the payload of every `bytes` in one
/// buffer each) and [`Decoded::build`](super::Decoded::build) walks them
/// later, calling these methods with borrowed slices, so a builder
/// allocates only what it makes; [`build`](super::build) does both in one
/// pass, each `str` made ([`str_from_utf8`](Self::str_from_utf8)) as the
/// unpickler reads it. An object the pickle uses in several places
/// (through its memo) is made once and its value cloned for each further
/// use: a handle's clone shares the object, as Python's unpickler does (a
/// reference-counted Python object), an owned value's clone copies it
/// ([`PyValue`]). Every use is paid for from
/// [`PickleOptions::max_expansion`](super::PickleOptions::max_expansion)'s
/// budget either way, so the same pickles are refused whatever builds them,
/// in one pass or two. A container that holds itself is refused (values
/// are made children first).
///
/// A builder's own failure is returned as any [`Error`]; a builder that has
/// a richer error of its own (a Python exception) keeps it and returns an
/// [`Error::Unpickling`] naming it, which the unpickler passes on as is.
///
/// ```
/// use npy_core::pickle::{self, Build, PickleOptions, PyValue, Tree};
///
/// let bytes = pickle::dumps(&PyValue::List(vec!["a".into(), "bc".into()]))?;
/// let decoded = pickle::decode(bytes.as_slice(), &PickleOptions::default())?;
/// assert_eq!(decoded.consumed(), bytes.len() as u64);
/// assert_eq!(decoded.build(&mut Tree)?, PyValue::List(vec!["a".into(), "bc".into()]));
/// # Ok::<(), npy_core::Error>(())
/// ```
pub trait Build {
    /// A made value. Cloned for every use after the first of an object the
    /// pickle shares.
    type Value: Clone;

    /// `None`.
    fn none(&mut self) -> Result<Self::Value>;
    /// `True` or `False`.
    fn bool(&mut self, value: bool) -> Result<Self::Value>;
    /// An `int` that fits `i64`.
    fn int(&mut self, value: i64) -> Result<Self::Value>;
    /// An `int` that does not fit `i64`: its little-endian two's-complement
    /// bytes, without redundant sign bytes.
    fn big_int(&mut self, le_bytes: &[u8]) -> Result<Self::Value>;
    /// A `float`.
    fn float(&mut self, value: f64) -> Result<Self::Value>;
    /// A `complex`.
    fn complex(&mut self, re: f64, im: f64) -> Result<Self::Value>;
    /// A `str` (Python 2 strings decoded as [`Encoding`](super::Encoding) says).
    fn str(&mut self, text: &str) -> Result<Self::Value>;
    /// A `str` from the bytes the pickle says are UTF-8, not checked yet
    /// (what the one pass of [`build`](super::build) calls for most
    /// strings). The default checks them and calls [`str`](Self::str); a
    /// builder whose own decoding checks UTF-8 (Python's does) may take
    /// them as they are, and must fail on invalid UTF-8.
    fn str_from_utf8(&mut self, utf8: &[u8]) -> Result<Self::Value> {
        match std::str::from_utf8(utf8) {
            Ok(text) => self.str(text),
            Err(error) => Err(Error::Unpickling {
                position: 0,
                reason: format!("invalid UTF-8 in a str at byte {}", error.valid_up_to()),
            }),
        }
    }
    /// The text of `value` if it is a `str` this builder made. The one
    /// pass of [`build`](super::build) makes each `str` as the pickle gives
    /// it and keeps no text of its own; numpy's patterns read back the few
    /// they need (a dtype's type, a global's module and name), which may
    /// have been made before they were known to be one.
    fn str_text<'v>(&self, value: &'v Self::Value) -> Option<Cow<'v, str>>;
    /// A `bytes`.
    fn bytes(&mut self, bytes: &[u8]) -> Result<Self::Value>;
    /// A `bytearray`.
    fn byte_array(&mut self, bytes: &[u8]) -> Result<Self::Value>;
    /// A `tuple` of `items`.
    fn tuple(&mut self, items: Vec<Self::Value>) -> Result<Self::Value>;
    /// A `list` of `items`.
    fn list(&mut self, items: Vec<Self::Value>) -> Result<Self::Value>;
    /// A `dict` of `(key, value)` pairs, in the pickle's order (a later
    /// equal key replaces an earlier one's value, as in Python).
    fn dict(&mut self, pairs: Vec<(Self::Value, Self::Value)>) -> Result<Self::Value>;
    /// A `set` of `items` (equal items are the builder's to merge).
    fn set(&mut self, items: Vec<Self::Value>) -> Result<Self::Value>;
    /// A `frozenset` of `items`.
    fn frozen_set(&mut self, items: Vec<Self::Value>) -> Result<Self::Value>;
    /// A numpy array of plain data (native byte order for scalar dtypes, as
    /// numpy's `__setstate__` makes it).
    fn array(&mut self, array: NpyArray) -> Result<Self::Value>;
    /// A numpy object array: its header and its items in the header's
    /// memory order (counted: as many as the shape holds).
    fn object_array(&mut self, header: Header, items: Vec<Self::Value>) -> Result<Self::Value>;
    /// A numpy scalar.
    fn scalar(&mut self, scalar: &NumpyScalar) -> Result<Self::Value>;
    /// A builtin type as a value, by its name in Python 3's `builtins`
    /// (`range` for Python 2's `xrange`): named, never called.
    fn builtin_type(&mut self, name: &'static str) -> Result<Self::Value>;
}

/// The [`Build`] that makes [`PyValue`]s (a shared object is copied at
/// each use).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tree;

impl Build for Tree {
    type Value = PyValue;

    fn none(&mut self) -> Result<PyValue> {
        Ok(PyValue::None)
    }
    fn bool(&mut self, value: bool) -> Result<PyValue> {
        Ok(PyValue::Bool(value))
    }
    fn int(&mut self, value: i64) -> Result<PyValue> {
        Ok(PyValue::Int(value))
    }
    fn big_int(&mut self, le_bytes: &[u8]) -> Result<PyValue> {
        Ok(PyValue::BigInt(le_bytes.to_vec()))
    }
    fn float(&mut self, value: f64) -> Result<PyValue> {
        Ok(PyValue::Float(value))
    }
    fn complex(&mut self, re: f64, im: f64) -> Result<PyValue> {
        Ok(PyValue::Complex(re, im))
    }
    fn str(&mut self, text: &str) -> Result<PyValue> {
        Ok(PyValue::Str(text.to_owned()))
    }
    fn str_text<'v>(&self, value: &'v PyValue) -> Option<Cow<'v, str>> {
        match value {
            PyValue::Str(text) => Some(Cow::Borrowed(text)),
            _ => None,
        }
    }
    fn bytes(&mut self, bytes: &[u8]) -> Result<PyValue> {
        Ok(PyValue::Bytes(bytes.to_vec()))
    }
    fn byte_array(&mut self, bytes: &[u8]) -> Result<PyValue> {
        Ok(PyValue::ByteArray(bytes.to_vec()))
    }
    fn tuple(&mut self, items: Vec<PyValue>) -> Result<PyValue> {
        Ok(PyValue::Tuple(items))
    }
    fn list(&mut self, items: Vec<PyValue>) -> Result<PyValue> {
        Ok(PyValue::List(items))
    }
    fn dict(&mut self, pairs: Vec<(PyValue, PyValue)>) -> Result<PyValue> {
        Ok(PyValue::Dict(pairs))
    }
    fn set(&mut self, items: Vec<PyValue>) -> Result<PyValue> {
        Ok(PyValue::Set(items))
    }
    fn frozen_set(&mut self, items: Vec<PyValue>) -> Result<PyValue> {
        Ok(PyValue::FrozenSet(items))
    }
    fn array(&mut self, array: NpyArray) -> Result<PyValue> {
        Ok(PyValue::Array(Box::new(array)))
    }
    fn object_array(&mut self, header: Header, items: Vec<PyValue>) -> Result<PyValue> {
        Ok(PyValue::Array(Box::new(NpyArray::from_objects(
            header, items,
        )?)))
    }
    fn scalar(&mut self, scalar: &NumpyScalar) -> Result<PyValue> {
        Ok(PyValue::Scalar(Box::new(scalar.clone())))
    }
    fn builtin_type(&mut self, name: &'static str) -> Result<PyValue> {
        Ok(PyValue::Type(name.to_owned()))
    }
}

//! Object arrays: npy-core's restricted unpickler decodes what `np.save`
//! writes for `dtype=object` (it names and refuses every other global and
//! never calls anything); here its values become Python objects, made
//! straight from the pickle's text by [`PyBuild`] (or, for the paths that
//! hand over [`PyValue`]s, converted by [`to_py`]), and Python objects
//! become `PyValue`s for npy-core's pickler.

use std::borrow::Cow;

use npy_core::io::NpyArray;
use npy_core::pickle::{Build, NumpyScalar, PyValue};
use npy_core::{DType, Header, Order};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyComplex, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet,
    PyString, PyTuple, PyType,
};

use crate::buffer::Buffer;
use crate::errors::{core_error, mmap_error};

/// Nesting deeper than this is refused when converting Python objects (a
/// self-referencing list would otherwise recurse without end).
const MAX_DEPTH: usize = 200;

/// The Python helpers that turn native parts into numpy objects.
fn convert_module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("npy_mmap._convert")
}

/// A loaded array (bytes or objects) as a numpy array.
pub(crate) fn array_to_py(py: Python<'_>, array: NpyArray) -> PyResult<Py<PyAny>> {
    let parts = array_parts(py, array)?;
    let ndarray = convert_module(py)?.getattr("from_parts")?.call1(parts)?;
    Ok(ndarray.unbind())
}

/// npy-core's unpickler's [`Build`] for Python objects: each value made
/// from the slice of the pickle it lies in (a `str` by `PyUnicode` from
/// the UTF-8 bytes as the unpickler reads them, checked by Python's
/// decoder, no Rust `String` between), an object the pickle shares made
/// once and shared, as Python's unpickler shares it.
pub(crate) struct PyBuild<'py> {
    py: Python<'py>,
    /// The Python exception a value's making raised (npy-core carries only
    /// its message).
    error: Option<PyErr>,
}

impl<'py> PyBuild<'py> {
    pub(crate) fn new(py: Python<'py>) -> Self {
        PyBuild { py, error: None }
    }

    /// `result`, its exception kept for [`take_error`](Self::take_error).
    fn keep<T>(&mut self, result: PyResult<T>) -> npy_core::Result<T> {
        result.map_err(|error| {
            let reason = format!("making a Python object failed: {error}");
            self.error = Some(error);
            npy_core::Error::Unpickling {
                position: 0,
                reason,
            }
        })
    }

    /// The exception a value's making raised, if one did.
    fn take_error(&mut self) -> Option<PyErr> {
        self.error.take()
    }

    fn any<T>(value: Bound<'py, T>) -> npy_core::Result<Bound<'py, PyAny>> {
        Ok(value.into_any())
    }
}

impl<'py> Build for PyBuild<'py> {
    type Value = Bound<'py, PyAny>;

    fn none(&mut self) -> npy_core::Result<Self::Value> {
        Ok(self.py.None().into_bound(self.py))
    }
    fn bool(&mut self, value: bool) -> npy_core::Result<Self::Value> {
        Self::any(PyBool::new(self.py, value).to_owned())
    }
    fn int(&mut self, value: i64) -> npy_core::Result<Self::Value> {
        let made = value.into_pyobject(self.py).map(Bound::into_any);
        self.keep(made.map_err(Into::into))
    }
    fn big_int(&mut self, le_bytes: &[u8]) -> npy_core::Result<Self::Value> {
        let py = self.py;
        let made = (|| {
            let kwargs = PyDict::new(py);
            kwargs.set_item("signed", true)?;
            py.get_type::<PyInt>().call_method(
                "from_bytes",
                (PyBytes::new(py, le_bytes), "little"),
                Some(&kwargs),
            )
        })();
        self.keep(made)
    }
    fn float(&mut self, value: f64) -> npy_core::Result<Self::Value> {
        Self::any(PyFloat::new(self.py, value))
    }
    fn complex(&mut self, re: f64, im: f64) -> npy_core::Result<Self::Value> {
        Self::any(PyComplex::from_doubles(self.py, re, im))
    }
    fn str(&mut self, text: &str) -> npy_core::Result<Self::Value> {
        Self::any(PyString::new(self.py, text))
    }
    fn str_from_utf8(&mut self, utf8: &[u8]) -> npy_core::Result<Self::Value> {
        // Python's decoder checks the UTF-8 (a UnicodeDecodeError, as numpy's).
        let made = PyString::from_bytes(self.py, utf8).map(Bound::into_any);
        self.keep(made)
    }
    fn str_text<'v>(&self, value: &'v Self::Value) -> Option<Cow<'v, str>> {
        value.cast::<PyString>().ok()?.to_cow().ok()
    }
    fn bytes(&mut self, bytes: &[u8]) -> npy_core::Result<Self::Value> {
        Self::any(PyBytes::new(self.py, bytes))
    }
    fn byte_array(&mut self, bytes: &[u8]) -> npy_core::Result<Self::Value> {
        Self::any(PyByteArray::new(self.py, bytes))
    }
    fn tuple(&mut self, items: Vec<Self::Value>) -> npy_core::Result<Self::Value> {
        let made = PyTuple::new(self.py, items).map(Bound::into_any);
        self.keep(made)
    }
    fn list(&mut self, items: Vec<Self::Value>) -> npy_core::Result<Self::Value> {
        let made = PyList::new(self.py, items).map(Bound::into_any);
        self.keep(made)
    }
    fn dict(&mut self, pairs: Vec<(Self::Value, Self::Value)>) -> npy_core::Result<Self::Value> {
        let dict = PyDict::new(self.py);
        let made = pairs
            .into_iter()
            .try_for_each(|(key, value)| dict.set_item(key, value));
        self.keep(made)?;
        Self::any(dict)
    }
    fn set(&mut self, items: Vec<Self::Value>) -> npy_core::Result<Self::Value> {
        let made = PySet::new(self.py, items).map(Bound::into_any);
        self.keep(made)
    }
    fn frozen_set(&mut self, items: Vec<Self::Value>) -> npy_core::Result<Self::Value> {
        let made = PyFrozenSet::new(self.py, items).map(Bound::into_any);
        self.keep(made)
    }
    fn array(&mut self, array: NpyArray) -> npy_core::Result<Self::Value> {
        let made = array_to_py(self.py, array).map(|array| array.into_bound(self.py));
        self.keep(made)
    }
    fn object_array(
        &mut self,
        header: Header,
        items: Vec<Self::Value>,
    ) -> npy_core::Result<Self::Value> {
        let py = self.py;
        let made = (|| {
            let list = PyList::new(py, items)?;
            convert_module(py)?.getattr("objects")?.call1((
                list,
                header.shape,
                header.order == Order::Fortran,
            ))
        })();
        self.keep(made)
    }
    fn scalar(&mut self, scalar: &NumpyScalar) -> npy_core::Result<Self::Value> {
        let py = self.py;
        let made = (|| {
            convert_module(py)?
                .getattr("scalar_from_bytes")?
                .call1((scalar.dtype.header_repr(), PyBytes::new(py, &scalar.bytes)))
        })();
        self.keep(made)
    }
    fn builtin_type(&mut self, name: &'static str) -> npy_core::Result<Self::Value> {
        let made = (|| self.py.import("builtins")?.getattr(name))();
        self.keep(made)
    }
}

/// An object array's [`Parts`]: its pickle decoded and its items made as
/// Python objects in one pass (in the header's memory order), a list.
pub(crate) fn object_parts(py: Python<'_>, objects: npy_mmap::ObjectPickle) -> PyResult<Parts> {
    let header = objects.header().clone();
    let mut build = PyBuild::new(py);
    let items = match objects.build_items(&mut build) {
        Ok((_, items)) => items,
        Err(error) => return Err(build.take_error().unwrap_or_else(|| mmap_error(error))),
    };
    let list = PyList::new(py, items)?;
    Ok((
        list.into_any().unbind(),
        "'|O'".into(),
        header.shape,
        header.order == Order::Fortran,
    ))
}

/// One decoded value as a Python object.
pub(crate) fn to_py(py: Python<'_>, value: PyValue) -> PyResult<Py<PyAny>> {
    Ok(match value {
        PyValue::None => py.None(),
        PyValue::Bool(b) => PyBool::new(py, b).to_owned().into_any().unbind(),
        PyValue::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        PyValue::BigInt(bytes) => {
            let kwargs = PyDict::new(py);
            kwargs.set_item("signed", true)?;
            py.get_type::<PyInt>()
                .call_method(
                    "from_bytes",
                    (PyBytes::new(py, &bytes), "little"),
                    Some(&kwargs),
                )?
                .unbind()
        }
        PyValue::Float(f) => PyFloat::new(py, f).into_any().unbind(),
        PyValue::Complex(re, im) => PyComplex::from_doubles(py, re, im).into_any().unbind(),
        PyValue::Str(s) => PyString::new(py, &s).into_any().unbind(),
        PyValue::Bytes(b) => PyBytes::new(py, &b).into_any().unbind(),
        PyValue::ByteArray(b) => PyByteArray::new(py, &b).into_any().unbind(),
        PyValue::Tuple(items) => {
            let items = items
                .into_iter()
                .map(|v| to_py(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, items)?.into_any().unbind()
        }
        PyValue::List(items) => {
            let items = items
                .into_iter()
                .map(|v| to_py(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any().unbind()
        }
        PyValue::Dict(items) => {
            let dict = PyDict::new(py);
            for (k, v) in items {
                dict.set_item(to_py(py, k)?, to_py(py, v)?)?;
            }
            dict.into_any().unbind()
        }
        PyValue::Set(items) => {
            let items = items
                .into_iter()
                .map(|v| to_py(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            PySet::new(py, items)?.into_any().unbind()
        }
        PyValue::FrozenSet(items) => {
            let items = items
                .into_iter()
                .map(|v| to_py(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            PyFrozenSet::new(py, items)?.into_any().unbind()
        }
        PyValue::Array(array) => array_to_py(py, *array)?,
        // A builtin type (Python 2's `xrange` is `range`): looked up, not called.
        PyValue::Type(name) => py.import("builtins")?.getattr(name.as_str())?.unbind(),
        PyValue::Scalar(scalar) => {
            let NumpyScalar { dtype, bytes } = *scalar;
            convert_module(py)?
                .getattr("scalar_from_bytes")?
                .call1((dtype.header_repr(), PyBytes::new(py, &bytes)))?
                .unbind()
        }
    })
}

/// A Python object as a value npy-core can pickle the way numpy does;
/// anything else is a `TypeError` naming its type.
pub(crate) fn from_py(value: &Bound<'_, PyAny>, depth: usize) -> PyResult<PyValue> {
    if depth > MAX_DEPTH {
        return Err(PyTypeError::new_err(format!(
            "object nesting deeper than {MAX_DEPTH} levels (a container that contains itself?)"
        )));
    }
    let py = value.py();
    let items = |iterable: &Bound<'_, PyAny>| -> PyResult<Vec<PyValue>> {
        iterable
            .try_iter()?
            .map(|item| from_py(&item?, depth + 1))
            .collect()
    };
    // Exact types first: subclasses (a bool is an int, a numpy float64 is a
    // float) keep their own pickling. `str` first: what object arrays hold
    // most.
    if value.is_exact_instance_of::<PyString>() {
        return Ok(PyValue::Str(value.cast::<PyString>()?.to_str()?.to_owned()));
    }
    if value.is_none() {
        return Ok(PyValue::None);
    }
    if value.is_exact_instance_of::<PyBool>() {
        return Ok(PyValue::Bool(value.extract()?));
    }
    if value.is_exact_instance_of::<PyInt>() {
        if let Ok(i) = value.extract::<i64>() {
            return Ok(PyValue::Int(i));
        }
        let nbytes: usize = value
            .call_method0("bit_length")?
            .extract::<usize>()?
            .div_ceil(8)
            + 1;
        let kwargs = PyDict::new(py);
        kwargs.set_item("signed", true)?;
        let bytes = value.call_method("to_bytes", (nbytes, "little"), Some(&kwargs))?;
        let mut bytes: Vec<u8> = bytes.extract()?;
        // As few bytes as represent it (pickle's LONG1 payload).
        while bytes.len() > 1 {
            let last = bytes[bytes.len() - 1];
            let prev_sign = bytes[bytes.len() - 2] & 0x80;
            if (last == 0 && prev_sign == 0) || (last == 0xff && prev_sign != 0) {
                bytes.pop();
            } else {
                break;
            }
        }
        return Ok(PyValue::BigInt(bytes));
    }
    if value.is_exact_instance_of::<PyFloat>() {
        return Ok(PyValue::Float(value.extract()?));
    }
    if value.is_exact_instance_of::<PyComplex>() {
        let c = value.cast::<PyComplex>()?;
        return Ok(PyValue::Complex(c.real(), c.imag()));
    }
    if value.is_exact_instance_of::<PyBytes>() {
        return Ok(PyValue::Bytes(value.extract()?));
    }
    if value.is_exact_instance_of::<PyByteArray>() {
        return Ok(PyValue::ByteArray(value.cast::<PyByteArray>()?.to_vec()));
    }
    if value.is_exact_instance_of::<PyTuple>() {
        return Ok(PyValue::Tuple(items(value)?));
    }
    if value.is_exact_instance_of::<PyList>() {
        return Ok(PyValue::List(items(value)?));
    }
    if value.is_exact_instance_of::<PySet>() {
        return Ok(PyValue::Set(items(value)?));
    }
    if value.is_exact_instance_of::<PyFrozenSet>() {
        return Ok(PyValue::FrozenSet(items(value)?));
    }
    if value.is_exact_instance_of::<PyDict>() {
        let dict = value.cast::<PyDict>()?;
        let mut out = Vec::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            out.push((from_py(&k, depth + 1)?, from_py(&v, depth + 1)?));
        }
        return Ok(PyValue::Dict(out));
    }
    // A builtin type as a value (`range`), as the unpickler reads it back.
    if value.is_instance_of::<PyType>() {
        let name: String = value.getattr("__name__")?.extract()?;
        let builtins = py.import("builtins")?;
        let as_type = PyValue::Type(name.clone());
        // Only the types npy-core's pickler writes (and its unpickler reads).
        if builtins
            .getattr(name.as_str())
            .is_ok_and(|found| found.is(value))
            && npy_core::pickle::dumps(&as_type).is_ok()
        {
            return Ok(as_type);
        }
    }
    // numpy arrays and scalars: their parts, from the Python side.
    let parts = convert_module(py)?.getattr("to_parts")?.call1((value,))?;
    if parts.is_none() {
        return Err(PyTypeError::new_err(format!(
            "cannot save an object of type {} in an object array: npy_mmap writes None, \
             bool, int, float, complex, str, bytes, bytearray, tuple, list, dict, set, \
             frozenset, numpy arrays, numpy scalars and builtin types such as range (its \
             unpickler reads only those back)",
            value.get_type().name()?
        )));
    }
    let (kind, descr, shape, fortran, payload): (
        String,
        String,
        Vec<usize>,
        bool,
        Bound<'_, PyAny>,
    ) = parts.extract()?;
    let order = if fortran { Order::Fortran } else { Order::C };
    // An object array's descr ('|O') is not a plain dtype: parsing it would
    // say "cannot be loaded when allow_pickle=False" (issue 29).
    let plain = || DType::parse(&descr).map_err(core_error);
    match kind.as_str() {
        "scalar" => Ok(PyValue::Scalar(Box::new(NumpyScalar {
            dtype: plain()?,
            bytes: payload.extract()?,
        }))),
        "objects" => {
            let values = items(&payload)?;
            let array = NpyArray::from_objects(Header::new(DType::Object, order, shape), values)
                .map_err(core_error)?;
            Ok(PyValue::Array(Box::new(array)))
        }
        _ => {
            let bytes: Vec<u8> = payload.extract()?;
            let header = Header::new(plain()?, order, shape);
            let layout = header.layout(None).map_err(core_error)?;
            let array = NpyArray::from_parts(
                header,
                layout,
                npy_core::io::AlignedBytes::copy_from(&bytes),
            )
            .map_err(core_error)?;
            Ok(PyValue::Array(Box::new(array)))
        }
    }
}

/// What the Python side makes an array of: the data (a [`Buffer`] of raw
/// bytes, or a list of Python objects for an object array), the dtype's
/// descr literal, the shape and whether the order is Fortran.
pub(crate) type Parts = (Py<PyAny>, String, Vec<usize>, bool);

/// A loaded array as [`Parts`]; its bytes are handed to numpy without a copy.
pub(crate) fn array_parts(py: Python<'_>, array: NpyArray) -> PyResult<Parts> {
    let header = array.header().clone();
    let fortran = header.order == Order::Fortran;
    if header.dtype == DType::Object {
        let values = array.into_objects().unwrap_or_default();
        // Made at its final size (no appends, no regrowth).
        let objects = values
            .into_iter()
            .map(|value| to_py(py, value))
            .collect::<PyResult<Vec<_>>>()?;
        let list = PyList::new(py, objects)?;
        return Ok((
            list.into_any().unbind(),
            "'|O'".into(),
            header.shape,
            fortran,
        ));
    }
    let descr = header.dtype.header_repr();
    let (header, _, data) = array.into_parts();
    Ok((
        Buffer::owned(py, data, "an array in memory")?.into_any(),
        descr,
        header.shape,
        fortran,
    ))
}

/// An object array from Python values, checked by npy-core.
pub(crate) fn object_array(
    shape: Vec<usize>,
    fortran: bool,
    values: &Bound<'_, PyAny>,
) -> PyResult<NpyArray> {
    let values = match values.cast::<PyList>() {
        // The list `save` makes: walked by index, into a vector of its size.
        Ok(list) => {
            let mut out = Vec::with_capacity(list.len());
            for item in list.iter() {
                out.push(from_py(&item, 0)?);
            }
            out
        }
        Err(_) => values
            .try_iter()?
            .map(|item| from_py(&item?, 0))
            .collect::<PyResult<Vec<_>>>()?,
    };
    let order = if fortran { Order::Fortran } else { Order::C };
    NpyArray::from_objects(Header::new(DType::Object, order, shape), values).map_err(core_error)
}

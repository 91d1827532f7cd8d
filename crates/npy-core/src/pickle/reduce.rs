//! numpy's reduce patterns: REDUCE and BUILD on the allowed globals,
//! interpreted by the shape numpy's pickles give them (`_reconstruct` then
//! `ndarray.__setstate__`, `dtype(...)` then `dtype.__setstate__`,
//! `scalar(dtype, bytes)`, `_frombuffer`, and the builtins protocol 2 spells
//! as calls). Nothing is called.

use super::arena::{Arena, ArrayData, ArrayNode, Elem, Id, Leaf, Node, View, latin1_bytes};
use super::globals::Global;
use super::strs::Strs;
use crate::array::NumpyScalar;
use crate::dtype::{ByteOrder, DType};
use crate::error::{Error, Result};
use crate::header::{Header, Order};

/// REDUCE: a call, interpreted for the few callables allowed.
pub(super) fn reduce<S: Strs>(arena: &mut Arena<S>, callable: Id, args: Id) -> Result<Node> {
    let View::Node(&Node::Global(global)) = arena.node(callable) else {
        return Err(arena.error(format!(
            "REDUCE on a {}, which is not callable",
            arena.node(callable).kind()
        )));
    };
    let args = arena.tuple(args, "REDUCE arguments")?.to_vec();
    let bad_args = |arena: &Arena<S>| arena.error(format!("unexpected arguments for {global:?}"));
    Ok(match (global, args.as_slice()) {
        (Global::Reconstruct, [class, _shape, _typecode]) => {
            if !matches!(
                arena.node(*class),
                View::Node(Node::Global(Global::NdArray))
            ) {
                return Err(arena.error(format!(
                    "_reconstruct of a {}: only numpy.ndarray is allowed",
                    arena.node(*class).kind()
                )));
            }
            Node::NewArray
        }
        (Global::DType, [type_str, ..]) if args.len() <= 3 => {
            let text = arena.text_of(*type_str, "a dtype's type")?;
            if text.len() > 64 {
                return Err(arena.error("a dtype's type string is longer than 64 characters"));
            }
            Node::NewDType(text)
        }
        (Global::Scalar, [dtype, data]) => {
            let Elem::Data(dtype) = arena.elem_of(*dtype)? else {
                return Err(arena.error("numpy object scalars are not supported"));
            };
            let bytes = arena.bytes_of(*data, "a numpy scalar's data")?;
            if bytes.len() != dtype.itemsize() {
                return Err(arena.error(format!(
                    "a numpy scalar of {} has {} bytes of data",
                    dtype.descr(),
                    bytes.len()
                )));
            }
            Node::Leaf(Leaf::Scalar(Box::new(NumpyScalar { dtype, bytes })))
        }
        (Global::FromBuffer, [buffer, dtype, shape, order]) => {
            let Elem::Data(dtype) = arena.elem_of(*dtype)? else {
                return Err(arena.error("_frombuffer of an object dtype"));
            };
            let data = arena.bytes_of(*buffer, "an array's buffer")?;
            let shape = arena.shape_of(*shape)?;
            let order = match arena.text_of(*order, "an array's order")?.as_str() {
                "C" => Order::C,
                "F" => Order::Fortran,
                other => return Err(arena.error(format!("unknown array order {other:?}"))),
            };
            Node::Array(Box::new(ArrayNode {
                elem: Elem::Data(dtype),
                order,
                shape,
                data: ArrayData::Bytes(data),
            }))
        }
        (Global::Set | Global::FrozenSet, []) => match global {
            Global::Set => Node::Set(Vec::new()),
            _ => Node::FrozenSet(Vec::new()),
        },
        (Global::Set | Global::FrozenSet, [items]) => {
            let items = match arena.node(*items) {
                View::Node(Node::List(items) | Node::Tuple(items)) => items.clone(),
                _ => return Err(bad_args(arena)),
            };
            match global {
                Global::Set => Node::Set(items),
                _ => Node::FrozenSet(items),
            }
        }
        (Global::ByteArray, []) => Node::Leaf(Leaf::ByteArray(arena.add_bytes(&[]))),
        (Global::ByteArray, [data]) => {
            let bytes = arena.bytes_of(*data, "a bytearray")?;
            Node::Leaf(Leaf::ByteArray(arena.add_bytes(&bytes)))
        }
        (Global::ByteArray | Global::Encode, [text, encoding]) => {
            let encoding = arena.text_of(*encoding, "an encoding")?;
            if !matches!(encoding.as_str(), "latin1" | "latin-1") {
                return Err(arena.error(format!("unsupported encoding {encoding:?}")));
            }
            let Some(text) = arena.str_of(*text)? else {
                return Err(bad_args(arena));
            };
            let bytes = latin1_bytes(&text)
                .ok_or_else(|| arena.error("a latin-1 str holds characters above U+00FF"))?;
            let span = arena.add_bytes(&bytes);
            match global {
                Global::ByteArray => Node::Leaf(Leaf::ByteArray(span)),
                _ => Node::Leaf(Leaf::Bytes(span)),
            }
        }
        (Global::Bytes, []) => Node::Leaf(Leaf::Bytes(arena.add_bytes(&[]))),
        (Global::Complex, [re]) => Node::Leaf(Leaf::Complex(
            arena.float_of(*re, "a complex's real part")?,
            0.0,
        )),
        (Global::Complex, [re, im]) => Node::Leaf(Leaf::Complex(
            arena.float_of(*re, "a complex's real part")?,
            arena.float_of(*im, "a complex's imaginary part")?,
        )),
        _ => return Err(bad_args(arena)),
    })
}

/// BUILD: sets the state of an array or a dtype, as numpy's
/// `__setstate__` would.
pub(super) fn build<S: Strs>(arena: &mut Arena<S>, target: Id, state: Id) -> Result<()> {
    let built = match arena.node(target) {
        View::Node(Node::NewArray) => Node::Array(Box::new(array_state(arena, state)?)),
        View::Node(Node::NewDType(type_str)) => Node::DType(dtype_state(arena, type_str, state)?),
        other => {
            return Err(arena.error(format!(
                "BUILD on a {}: only numpy arrays and dtypes have state",
                other.kind()
            )));
        }
    };
    if let Some(node) = arena.node_mut(target) {
        *node = built;
    }
    Ok(())
}

/// `ndarray.__setstate__((version, shape, dtype, is_fortran, data))`.
fn array_state<S: Strs>(arena: &Arena<S>, state: Id) -> Result<ArrayNode> {
    let items = arena.tuple(state, "an array's state")?;
    let [shape, dtype, fortran, data] = match items {
        [_, shape, dtype, fortran, data] | [shape, dtype, fortran, data] => {
            [*shape, *dtype, *fortran, *data]
        }
        _ => return Err(arena.error(format!("an array's state has {} items", items.len()))),
    };
    let shape = arena.shape_of(shape)?;
    let elem = arena.elem_of(dtype)?;
    let order = match arena.int_of(fortran, "an array's fortran flag")? {
        0 => Order::C,
        _ => Order::Fortran,
    };
    let data = match &elem {
        Elem::Object => match arena.node(data) {
            View::Node(Node::List(_)) => ArrayData::Objects(data),
            other => {
                return Err(arena.error(format!(
                    "an object array's items must be a list, not a {}",
                    other.kind()
                )));
            }
        },
        Elem::Data(dtype) => {
            let bytes = arena.bytes_of(data, "an array's data")?;
            let header = Header::new(dtype.clone(), order, shape.clone());
            let expected = header.data_len().map_err(|e| arena.error(e.to_string()))?;
            if bytes.len() != expected {
                return Err(arena.error(format!(
                    "an array of {} with shape {} needs {expected} bytes of data, the pickle has {}",
                    dtype.descr(),
                    crate::pyrepr::shape_repr(&shape),
                    bytes.len()
                )));
            }
            // numpy's __setstate__ byte-swaps a non-native scalar array to
            // native order on load (records keep their fields' orders).
            if let DType::Scalar(_) = dtype
                && !dtype.is_native_byte_order()
            {
                let mut bytes = bytes;
                let native = crate::swap::convert_byte_order(dtype, &mut bytes, ByteOrder::NATIVE);
                return Ok(ArrayNode {
                    elem: Elem::Data(native),
                    order,
                    shape,
                    data: ArrayData::Bytes(bytes),
                });
            }
            ArrayData::Bytes(bytes)
        }
    };
    Ok(ArrayNode {
        elem,
        order,
        shape,
        data,
    })
}

/// `dtype.__setstate__`: (version, byteorder, subarray, names, fields,
/// itemsize, alignment, flags[, metadata]) on a `dtype(type_str)`.
fn dtype_state<S: Strs>(arena: &Arena<S>, type_str: &str, state: Id) -> Result<Elem> {
    let items = arena.tuple(state, "a dtype's state")?;
    if !(8..=9).contains(&items.len()) {
        return Err(arena.error(format!("a dtype's state has {} items", items.len())));
    }
    let version = arena.int_of(items[0], "a dtype's state version")?;
    if !(3..=4).contains(&version) {
        return Err(arena.error(format!("unsupported dtype state version {version}")));
    }
    if matches!(type_str, "O" | "O4" | "O8") {
        return Ok(Elem::Object);
    }
    let byteorder = arena.text_of(items[1], "a dtype's byte order")?;
    if !matches!(byteorder.as_str(), "<" | ">" | "|" | "=") {
        return Err(arena.error(format!("unknown byte order {byteorder:?}")));
    }
    let itemsize = arena.int_of(items[5], "a dtype's itemsize")?;
    let names = match arena.node(items[3]) {
        View::Leaf(Leaf::None) => None,
        View::Node(Node::Tuple(names)) => Some(names.clone()),
        other => {
            return Err(arena.error(format!(
                "a dtype's names must be a tuple, not a {}",
                other.kind()
            )));
        }
    };
    if let Some(names) = names {
        return record_state(arena, &names, items[4], itemsize);
    }
    if !matches!(arena.node(items[2]), View::Leaf(Leaf::None)) {
        let [base, shape] = arena.tuple(items[2], "a dtype's subarray")? else {
            return Err(arena.error("a dtype's subarray must be (base, shape)"));
        };
        let Elem::Data(base) = arena.elem_of(*base)? else {
            return Err(arena.error("subarrays of objects are not supported"));
        };
        let shape = arena.shape_of(*shape)?;
        return Ok(Elem::Data(DType::SubArray(Box::new(base), shape)));
    }
    // Flexible types carry their size in the state ('V' + itemsize).
    let mut text = format!("{byteorder}{type_str}");
    if let (Some(kind @ ('S' | 'U' | 'V')), Ok(size)) =
        (type_str.chars().next(), usize::try_from(itemsize))
        && type_str.len() == 1
    {
        let size = if kind == 'U' { size / 4 } else { size };
        text = format!("{byteorder}{kind}{size}");
    }
    if let Some(metadata) = items.get(8)
        && matches!(type_str, "M8" | "m8")
    {
        text.push_str(&datetime_unit(arena, *metadata)?);
    }
    match DType::parse(&text) {
        Ok(dtype) => Ok(Elem::Data(dtype)),
        Err(Error::ObjectDType) => Ok(Elem::Object),
        Err(e) => Err(arena.error(format!("dtype {text:?}: {e}"))),
    }
}

/// `[10s]` from a datetime dtype's metadata `(dict, (unit, num, den, events))`.
fn datetime_unit<S: Strs>(arena: &Arena<S>, metadata: Id) -> Result<String> {
    let [_, unit] = arena.tuple(metadata, "a datetime dtype's metadata")? else {
        return Err(arena.error("a datetime dtype's metadata must be a pair"));
    };
    let unit = arena.tuple(*unit, "a datetime unit")?;
    let [symbol, num, ..] = unit else {
        return Err(arena.error("a datetime unit must be (unit, num, den, events)"));
    };
    let symbol = arena.text_of(*symbol, "a datetime unit")?;
    let num = arena.int_of(*num, "a datetime unit's multiple")?;
    Ok(match (symbol.as_str(), num) {
        ("generic", _) => String::new(),
        (symbol, 1) => format!("[{symbol}]"),
        (symbol, num) => format!("[{num}{symbol}]"),
    })
}

fn record_state<S: Strs>(
    arena: &Arena<S>,
    names: &[Id],
    fields: Id,
    itemsize: i64,
) -> Result<Elem> {
    let View::Node(Node::Dict(entries)) = arena.node(fields) else {
        return Err(arena.error("a structured dtype's fields must be a dict"));
    };
    let mut out = Vec::with_capacity(names.len());
    let mut end = 0usize;
    for &name in names {
        let name = arena.text_of(name, "a field name")?;
        let spec = entries
            .iter()
            .find(|(key, _)| arena.text_of(*key, "a field name").is_ok_and(|k| k == name))
            .map(|&(_, spec)| spec)
            .ok_or_else(|| {
                arena.error(format!("field {name:?} has no entry in the dtype's fields"))
            })?;
        let spec = arena.tuple(spec, "a field")?;
        let (dtype, offset, title) = match spec {
            [dtype, offset] => (*dtype, *offset, None),
            [dtype, offset, title] => (
                *dtype,
                *offset,
                Some(arena.text_of(*title, "a field title")?),
            ),
            _ => return Err(arena.error("a field must be (dtype, offset[, title])")),
        };
        let Elem::Data(dtype) = arena.elem_of(dtype)? else {
            return Err(arena.error(
                "structured dtypes with object fields are not supported (only whole object arrays are)",
            ));
        };
        let offset = usize::try_from(arena.int_of(offset, "a field offset")?)
            .map_err(|_| arena.error("negative field offset"))?;
        if offset < end {
            return Err(arena.error("overlapping or out-of-order fields are not supported"));
        }
        end = offset.saturating_add(dtype.itemsize());
        out.push(crate::dtype::Field {
            name,
            title,
            dtype,
            offset,
        });
    }
    let itemsize = usize::try_from(itemsize)
        .ok()
        .filter(|&size| size >= end && size <= crate::dtype::MAX_ITEMSIZE)
        .ok_or_else(|| arena.error("a structured dtype's itemsize does not hold its fields"))?;
    Ok(Elem::Data(DType::Structured(crate::dtype::Structured {
        fields: out,
        itemsize,
    })))
}

//! The unpickler's objects: an arena of [`Node`]s (containers, arrays,
//! globals) and [`Leaf`] values, referred to by [`Id`], so the memo shares
//! objects the way Python's does. The `str`s are kept by a [`Strs`] (as
//! text, or made at once by the caller's builder) and the payload of every
//! `bytes` in one buffer ([`Span`]s into it), so decoding allocates nothing
//! per value. The typed reads here (`tuple`, `int_of`,
//! `shape_of`, ...) are what the opcode machine and numpy's patterns use to
//! look at the objects on the stack.

use std::borrow::Cow;

use super::globals::Global;
use super::strs::Strs;
use crate::array::NumpyScalar;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::header::Order;

/// An object: an index into the unpickler's `nodes`, or, with [`LEAF`] set,
/// into its `leaves` (values without parts).
pub(super) type Id = u32;

/// Where a leaf's payload lies in the arena's `bytes`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Span {
    start: usize,
    end: usize,
}

impl Span {
    pub(super) fn len(self) -> usize {
        self.end - self.start
    }
}

/// A value without parts: None, numbers, bytes, bytearray, a numpy
/// scalar (a `str` is kept by the arena's [`Strs`]). Payloads are
/// [`Span`]s into the arena's `bytes`.
#[derive(Clone, Debug)]
pub(super) enum Leaf {
    None,
    Bool(bool),
    Int(i64),
    /// Little-endian two's complement, without redundant sign bytes, in `bytes`.
    BigInt(Span),
    Float(f64),
    Complex(f64, f64),
    Bytes(Span),
    ByteArray(Span),
    Scalar(Box<NumpyScalar>),
}

impl Leaf {
    /// What it is, for messages (Python's type names, as
    /// [`PyValue::type_name`](crate::pickle::PyValue::type_name)).
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Leaf::None => "NoneType",
            Leaf::Bool(_) => "bool",
            Leaf::Int(_) | Leaf::BigInt(_) => "int",
            Leaf::Float(_) => "float",
            Leaf::Complex(..) => "complex",
            Leaf::Bytes(_) => "bytes",
            Leaf::ByteArray(_) => "bytearray",
            Leaf::Scalar(_) => "numpy scalar",
        }
    }
}

/// Marks an [`Id`] of a leaf.
pub(super) const LEAF: Id = 1 << 31;

/// Marks (with [`LEAF`]) an [`Id`] of a `str`: its index among the
/// arena's [`Strs`] (object arrays are mostly strings).
pub(super) const STR: Id = 1 << 30;

/// An array's element type while decoding: a dtype, or Python objects.
#[derive(Clone, Debug)]
pub(super) enum Elem {
    Data(DType),
    Object,
}

/// An array whose state BUILD has set.
#[derive(Clone, Debug)]
pub(super) struct ArrayNode {
    pub(super) elem: Elem,
    pub(super) order: Order,
    pub(super) shape: Vec<usize>,
    /// Raw bytes in memory order, or the list of objects in C order.
    pub(super) data: ArrayData,
}

/// An array's data: its bytes, or the id of the list of its objects.
#[derive(Clone, Debug)]
pub(super) enum ArrayData {
    Bytes(Vec<u8>),
    Objects(Id),
}

/// An object with parts (or one that is not a value yet), in the arena.
#[derive(Clone, Debug)]
pub(super) enum Node {
    /// A value with no parts to share. Made by opcodes, stored in `leaves`
    /// (never in `nodes`).
    Leaf(Leaf),
    Tuple(Vec<Id>),
    List(Vec<Id>),
    Dict(Vec<(Id, Id)>),
    Set(Vec<Id>),
    FrozenSet(Vec<Id>),
    Global(Global),
    /// `_reconstruct(ndarray, ...)` before its BUILD.
    NewArray,
    Array(Box<ArrayNode>),
    /// `dtype(type, align, copy)` before its BUILD: the type string.
    NewDType(String),
    DType(Elem),
    /// Taken out by the builder's walk (its one use).
    Taken,
}

impl Node {
    /// What it is, for messages.
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Node::Leaf(leaf) => leaf.kind(),
            Node::Tuple(_) => "tuple",
            Node::List(_) => "list",
            Node::Dict(_) => "dict",
            Node::Set(_) => "set",
            Node::FrozenSet(_) => "frozenset",
            Node::Global(_) => "global",
            Node::NewArray => "array under construction",
            Node::Array(_) => "numpy array",
            Node::NewDType(_) | Node::DType(_) => "numpy dtype",
            Node::Taken => "container that holds itself",
        }
    }
}

/// An object seen through its id: a leaf value, a `str` (its index), or a
/// node.
#[derive(Clone, Copy)]
pub(super) enum View<'a> {
    Leaf(&'a Leaf),
    Str(usize),
    Node(&'a Node),
}

impl View<'_> {
    /// What it is, for messages.
    pub(super) fn kind(&self) -> &'static str {
        match self {
            View::Leaf(leaf) => leaf.kind(),
            View::Str(_) => "str",
            View::Node(node) => node.kind(),
        }
    }
}

/// Most dimensions an array may have (numpy's `NPY_MAXDIMS`).
const MAX_DIMS: usize = crate::header::MAX_DIMS;

/// Every object made so far, and where the current opcode starts (for
/// messages). It grows by at most one object per opcode.
#[derive(Debug, Default)]
pub(super) struct Arena<S> {
    pub(super) nodes: Vec<Node>,
    /// Leaves other than `str`s.
    pub(super) leaves: Vec<Leaf>,
    /// The `str`s.
    pub(super) strs: S,
    /// The payloads of `bytes`, `bytearray` and big `int` leaves.
    pub(super) bytes: Vec<u8>,
    /// Where the current opcode starts, for messages.
    pub(super) position: u64,
}

impl<S> Arena<S> {
    /// An empty arena keeping its `str`s in `strs`.
    pub(super) fn new(strs: S) -> Self {
        Arena {
            nodes: Vec::new(),
            leaves: Vec::new(),
            strs,
            bytes: Vec::new(),
            position: 0,
        }
    }

    /// The same objects, the `str`s kept by what `map` makes of `strs`.
    pub(super) fn map_strs<T>(self, map: impl FnOnce(S) -> T) -> Arena<T> {
        Arena {
            nodes: self.nodes,
            leaves: self.leaves,
            strs: map(self.strs),
            bytes: self.bytes,
            position: self.position,
        }
    }

    pub(super) fn error(&self, reason: impl Into<String>) -> Error {
        Error::Unpickling {
            position: self.position,
            reason: reason.into(),
        }
    }

    /// Stores `node` (a leaf among the leaves) and returns its id.
    #[inline]
    pub(super) fn add(&mut self, node: Node) -> Result<Id> {
        let too_many = || self.error("too many objects");
        Ok(match node {
            Node::Leaf(value) => {
                let index = Id::try_from(self.leaves.len()).ok().filter(|&i| i < STR);
                let index = index.ok_or_else(too_many)?;
                self.leaves.push(value);
                LEAF | index
            }
            node => {
                let index = Id::try_from(self.nodes.len()).ok().filter(|&i| i < LEAF);
                let index = index.ok_or_else(too_many)?;
                self.nodes.push(node);
                index
            }
        })
    }

    /// Keeps `bytes` as a payload of bytes.
    #[inline]
    pub(super) fn add_bytes(&mut self, bytes: &[u8]) -> Span {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        Span {
            start,
            end: self.bytes.len(),
        }
    }

    /// The bytes a bytes-like leaf's span points at.
    #[inline]
    pub(super) fn bytes_at(&self, span: Span) -> &[u8] {
        &self.bytes[span.start..span.end]
    }

    /// The leaf for an `int` of little-endian two's-complement bytes.
    pub(super) fn int_leaf(&mut self, bytes: &[u8]) -> Leaf {
        match crate::array::PyValue::int_from_le_parts(bytes) {
            Ok(n) => Leaf::Int(n),
            Err(trimmed) => Leaf::BigInt(self.add_bytes(trimmed)),
        }
    }

    /// The node `id` for changing it; `None` for a leaf.
    #[inline]
    pub(super) fn node_mut(&mut self, id: Id) -> Option<&mut Node> {
        (id & LEAF == 0).then(|| &mut self.nodes[id as usize])
    }

    /// The object `id`, to look at.
    #[inline]
    pub(super) fn node(&self, id: Id) -> View<'_> {
        if id & LEAF == 0 {
            View::Node(&self.nodes[id as usize])
        } else if id & STR == 0 {
            View::Leaf(&self.leaves[(id & !LEAF) as usize])
        } else {
            View::Str((id & !(LEAF | STR)) as usize)
        }
    }
}

impl<S: Strs> Arena<S> {
    /// The id the next `str` kept gets.
    fn next_str(&self) -> Result<Id> {
        let index = Id::try_from(self.strs.count()).ok().filter(|&i| i < STR);
        let index = index.ok_or_else(|| self.error("too many objects"))?;
        Ok(LEAF | STR | index)
    }

    /// Keeps a `str` of `bytes`, which the pickle says are UTF-8 (checked
    /// by the [`Strs`]); returns its id.
    #[inline]
    pub(super) fn add_str(&mut self, bytes: &[u8]) -> Result<Id> {
        let id = self.next_str()?;
        self.strs.push_utf8(bytes, self.position)?;
        Ok(id)
    }

    /// Keeps `bytes`, read as latin-1, as a `str`; returns its id.
    pub(super) fn add_latin1(&mut self, bytes: &[u8]) -> Result<Id> {
        let id = self.next_str()?;
        let text: String = bytes.iter().map(|&b| char::from(b)).collect();
        self.strs.push_str(&text, self.position)?;
        Ok(id)
    }

    /// The text of `str` `index`, for numpy's patterns.
    pub(super) fn str_at(&self, index: usize) -> Result<Cow<'_, str>> {
        self.strs.text(index, self.position)
    }

    /// The `str` leaf `id`'s text, if it is one.
    pub(super) fn str_of(&self, id: Id) -> Result<Option<Cow<'_, str>>> {
        match self.node(id) {
            View::Str(index) => self.str_at(index).map(Some),
            _ => Ok(None),
        }
    }

    pub(super) fn tuple(&self, id: Id, what: &str) -> Result<&[Id]> {
        match self.node(id) {
            View::Node(Node::Tuple(items)) => Ok(items),
            other => Err(self.error(format!("{what} must be a tuple, not a {}", other.kind()))),
        }
    }

    /// Text given as `str` or (Python 2 with `encoding='bytes'`, protocol
    /// 2 `bytes`) as bytes, read as latin-1.
    pub(super) fn text_of(&self, id: Id, what: &str) -> Result<String> {
        match self.node(id) {
            View::Str(index) => Ok(self.str_at(index)?.into_owned()),
            View::Leaf(Leaf::Bytes(span)) => Ok(self
                .bytes_at(*span)
                .iter()
                .map(|&b| char::from(b))
                .collect()),
            other => Err(self.error(format!("{what} must be a str, not a {}", other.kind()))),
        }
    }

    /// Binary data given as `bytes`/`bytearray` or, as numpy accepts it, a
    /// `str` of code points below 256 (Python 2 data read with latin1).
    pub(super) fn bytes_of(&self, id: Id, what: &str) -> Result<Vec<u8>> {
        match self.node(id) {
            View::Leaf(Leaf::Bytes(span) | Leaf::ByteArray(span)) => {
                Ok(self.bytes_at(*span).to_vec())
            }
            View::Str(index) => latin1_bytes(&self.str_at(index)?)
                .ok_or_else(|| self.error(format!("{what} holds characters above U+00FF"))),
            other => Err(self.error(format!("{what} must be bytes, not a {}", other.kind()))),
        }
    }

    pub(super) fn int_of(&self, id: Id, what: &str) -> Result<i64> {
        match self.node(id) {
            View::Leaf(Leaf::Int(n)) => Ok(*n),
            View::Leaf(Leaf::Bool(b)) => Ok(i64::from(*b)),
            other => Err(self.error(format!("{what} must be an int, not a {}", other.kind()))),
        }
    }

    pub(super) fn float_of(&self, id: Id, what: &str) -> Result<f64> {
        match self.node(id) {
            View::Leaf(Leaf::Float(x)) => Ok(*x),
            View::Leaf(Leaf::Int(n)) => Ok(*n as f64),
            View::Leaf(Leaf::Bool(b)) => Ok(f64::from(u8::from(*b))),
            other => Err(self.error(format!("{what} must be a float, not a {}", other.kind()))),
        }
    }

    pub(super) fn shape_of(&self, id: Id) -> Result<Vec<usize>> {
        let dims = self.tuple(id, "an array shape")?;
        if dims.len() > MAX_DIMS {
            return Err(self.error(format!(
                "an array shape has {} dimensions (at most {MAX_DIMS})",
                dims.len()
            )));
        }
        dims.iter()
            .map(|&dim| {
                let n = self.int_of(dim, "an array dimension")?;
                usize::try_from(n).map_err(|_| self.error("negative dimensions are not allowed"))
            })
            .collect()
    }

    pub(super) fn elem_of(&self, id: Id) -> Result<Elem> {
        match self.node(id) {
            View::Node(Node::DType(elem)) => Ok(elem.clone()),
            View::Node(Node::NewDType(_)) => {
                Err(self.error("a dtype is used before its state was set (BUILD)"))
            }
            other => Err(self.error(format!("expected a numpy dtype, not a {}", other.kind()))),
        }
    }
}

/// The bytes of a `str` whose code points are all below 256 (latin-1).
pub(super) fn latin1_bytes(text: &str) -> Option<Vec<u8>> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).ok())
        .collect()
}

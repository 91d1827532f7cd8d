//! The unpickler's objects: an arena of [`Node`]s (containers, arrays,
//! globals) and [`Leaf`] values, referred to by [`Id`], so the memo shares
//! objects the way Python's does. The text of every `str` is kept in one
//! buffer and every `bytes` in another ([`Span`]s into them), so decoding
//! allocates nothing per value: a [`Build`](super::Build) makes the values
//! from the slices at the end. The typed reads here (`tuple`, `int_of`,
//! `shape_of`, ...) are what the opcode machine and numpy's patterns use to
//! look at the objects on the stack.

use super::globals::Global;
use crate::array::NumpyScalar;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::header::Order;

/// An object: an index into the unpickler's `nodes`, or, with [`LEAF`] set,
/// into its `leaves` (values without parts).
pub(super) type Id = u32;

/// Where a leaf's payload lies in the arena's `text` or `bytes`.
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

/// A value without parts: None, numbers, str, bytes, bytearray, a numpy
/// scalar. Payloads are [`Span`]s into the arena's buffers.
#[derive(Clone, Debug)]
pub(super) enum Leaf {
    None,
    Bool(bool),
    Int(i64),
    /// Little-endian two's complement, without redundant sign bytes, in `bytes`.
    BigInt(Span),
    Float(f64),
    Complex(f64, f64),
    /// UTF-8, in `text`; stored by its end in `str_ends` (never among
    /// the leaves).
    Str(Span),
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
            Leaf::Str(_) => "str",
            Leaf::Bytes(_) => "bytes",
            Leaf::ByteArray(_) => "bytearray",
            Leaf::Scalar(_) => "numpy scalar",
        }
    }
}

/// Marks an [`Id`] of a leaf.
pub(super) const LEAF: Id = 1 << 31;

/// Marks (with [`LEAF`]) an [`Id`] of a `str`: an index into the arena's
/// `str_ends` (8 bytes a string, where a [`Leaf`] takes 24: object arrays
/// are mostly strings).
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

/// An object seen through its id: a leaf value, a `str`, or a node.
#[derive(Clone, Copy)]
pub(super) enum View<'a> {
    Leaf(&'a Leaf),
    Str(Span),
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
pub(super) struct Arena {
    pub(super) nodes: Vec<Node>,
    /// Leaves other than `str`s.
    pub(super) leaves: Vec<Leaf>,
    /// Where each `str`'s text ends in `text` (it starts where the one
    /// before ends).
    pub(super) str_ends: Vec<usize>,
    /// The text of every `str`, one after another, as the pickle gives it
    /// while decoding: validated as UTF-8 in one pass at the end
    /// ([`finish_text`](Self::finish_text)), which is many times cheaper
    /// than a validation per string (object arrays hold millions).
    pub(super) text: Vec<u8>,
    /// `text`, validated (after `finish_text`).
    pub(super) checked: String,
    /// The payloads of `bytes`, `bytearray` and big `int` leaves.
    pub(super) bytes: Vec<u8>,
    /// Where the current opcode starts, for messages.
    pub(super) position: u64,
}

impl Arena {
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
            Node::Leaf(Leaf::Str(span)) => {
                // `str`s are added in the order of their text.
                let index = Id::try_from(self.str_ends.len()).ok().filter(|&i| i < STR);
                let index = index.ok_or_else(too_many)?;
                debug_assert_eq!(span.start, self.str_ends.last().copied().unwrap_or(0));
                self.str_ends.push(span.end);
                LEAF | STR | index
            }
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

    /// The span of the `str` with index `index` (its id without the marks).
    #[inline]
    pub(super) fn str_span(&self, index: usize) -> Span {
        Span {
            start: index
                .checked_sub(1)
                .map_or(0, |before| self.str_ends[before]),
            end: self.str_ends[index],
        }
    }

    /// Keeps `bytes` as a `str`'s text (checked to be UTF-8 by
    /// [`finish_text`](Self::finish_text), or when it is read before).
    #[inline]
    pub(super) fn add_str(&mut self, bytes: &[u8]) -> Span {
        let start = self.text.len();
        self.text.extend_from_slice(bytes);
        Span {
            start,
            end: self.text.len(),
        }
    }

    /// Keeps `bytes`, read as latin-1, as a `str`'s text.
    pub(super) fn add_latin1(&mut self, bytes: &[u8]) -> Span {
        let start = self.text.len();
        let mut utf8 = [0u8; 4];
        for &b in bytes {
            self.text
                .extend_from_slice(char::from(b).encode_utf8(&mut utf8).as_bytes());
        }
        Span {
            start,
            end: self.text.len(),
        }
    }

    /// Checks that every `str`'s text is UTF-8: the text as a whole, and
    /// each string's ends on a character's boundary (so each string is
    /// UTF-8 by itself). After it, [`checked_str`](Self::checked_str)
    /// gives the strings.
    pub(super) fn finish_text(&mut self) -> Result<()> {
        let text = std::mem::take(&mut self.text);
        let checked = match String::from_utf8(text) {
            Ok(checked) => checked,
            Err(error) => {
                let at = error.utf8_error().valid_up_to();
                return Err(self.utf8_error(at));
            }
        };
        if let Some(&end) = self
            .str_ends
            .iter()
            .find(|&&end| !checked.is_char_boundary(end))
        {
            // A string that ends inside a character (which the next begins).
            let at = (0..end).rev().find(|&i| checked.is_char_boundary(i));
            return Err(self.utf8_error(at.unwrap_or(0)));
        }
        self.checked = checked;
        Ok(())
    }

    /// The error for invalid UTF-8 at byte `at` of the text.
    fn utf8_error(&self, at: usize) -> Error {
        let index = self.str_ends.partition_point(|&end| end <= at);
        let start = index
            .checked_sub(1)
            .map_or(0, |before| self.str_ends[before]);
        self.error(format!(
            "invalid UTF-8 in a str at byte {} (the pickle's str number {})",
            at - start,
            index + 1
        ))
    }

    /// A string's text after [`finish_text`](Self::finish_text).
    #[inline]
    pub(super) fn checked_str(&self, span: Span) -> &str {
        &self.checked[span.start..span.end]
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

    /// The text a `str` leaf's span points at, while decoding (checked
    /// here: [`finish_text`](Self::finish_text) has not run yet).
    pub(super) fn str_at(&self, span: Span) -> Result<&str> {
        std::str::from_utf8(&self.text[span.start..span.end]).map_err(|e| {
            self.error(format!(
                "invalid UTF-8 in a str at byte {}",
                e.valid_up_to()
            ))
        })
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

    /// The `str` leaf `id`'s text, if it is one.
    pub(super) fn str_of(&self, id: Id) -> Result<Option<&str>> {
        match self.node(id) {
            View::Str(span) => self.str_at(span).map(Some),
            _ => Ok(None),
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
            View::Str(self.str_span((id & !(LEAF | STR)) as usize))
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
            View::Str(span) => Ok(self.str_at(span)?.to_owned()),
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
            View::Str(span) => latin1_bytes(self.str_at(span)?)
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

//! The restricted unpickler: a stack machine over an arena, no recursion.
//!
//! Values live in an arena of [`Node`]s and the stack, the memo and
//! containers hold indices into it, so the memo shares objects the way
//! Python's does (a list memoized empty and filled later is the filled
//! list). Globals are looked up in a fixed table and never called: REDUCE
//! and BUILD on the few numpy and builtin callables are interpreted by
//! pattern. The arena grows by at most one node per opcode, and payloads
//! are copied from the input, so memory during decoding follows the input;
//! turning the arena into a [`PyValue`] tree (which copies shared objects)
//! is budgeted against the input's size and the depth limit.

use std::collections::HashMap;
use std::io::Read;

use super::{Encoding, PickleOptions};
use crate::array::{NpyArray, NumpyScalar, PyValue, c_to_fortran};
use crate::stream::read_full;
use crate::{ByteOrder, DType, Error, Header, Order, Result};

/// An object: an index into the unpickler's `nodes`, or, with [`LEAF`] set,
/// into its `leaves` (values without parts, kept apart so that an object
/// array's items can become its values without a copy).
type Id = u32;

/// Marks an [`Id`] of a leaf.
const LEAF: Id = 1 << 31;

/// The callables and classes a numpy object array's pickle may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Global {
    /// `numpy._core.multiarray._reconstruct` (numpy 1.x: `numpy.core.multiarray`).
    Reconstruct,
    /// `numpy.ndarray`.
    NdArray,
    /// `numpy.dtype`.
    DType,
    /// `numpy._core.multiarray.scalar`: a numpy scalar from dtype and bytes.
    Scalar,
    /// `numpy._core.numeric._frombuffer`: protocol 5's array form.
    FromBuffer,
    /// `builtins.set` / `__builtin__.set` (protocol 2).
    Set,
    /// `builtins.frozenset` (protocol 2).
    FrozenSet,
    /// `builtins.bytearray` (protocols 2-4).
    ByteArray,
    /// `builtins.bytes` (protocol 2, for `b''`).
    Bytes,
    /// `builtins.complex`.
    Complex,
    /// `_codecs.encode`: protocol 2's form of non-empty `bytes`.
    Encode,
}

impl Global {
    fn lookup(module: &str, name: &str) -> Option<Global> {
        let numpy_core = matches!(module, "numpy._core.multiarray" | "numpy.core.multiarray");
        let numpy_numeric = matches!(module, "numpy._core.numeric" | "numpy.core.numeric");
        let builtins = matches!(module, "builtins" | "__builtin__");
        Some(match name {
            "_reconstruct" if numpy_core => Global::Reconstruct,
            "scalar" if numpy_core => Global::Scalar,
            "_frombuffer" if numpy_numeric => Global::FromBuffer,
            "ndarray" if module == "numpy" => Global::NdArray,
            "dtype" if module == "numpy" => Global::DType,
            "set" if builtins => Global::Set,
            "frozenset" if builtins => Global::FrozenSet,
            "bytearray" if builtins => Global::ByteArray,
            "bytes" if builtins => Global::Bytes,
            "complex" if builtins => Global::Complex,
            "encode" if module == "_codecs" => Global::Encode,
            _ => return None,
        })
    }
}

/// An array's element type while decoding: a dtype, or Python objects.
#[derive(Clone, Debug)]
enum Elem {
    Data(DType),
    Object,
}

#[derive(Clone, Debug)]
struct ArrayNode {
    elem: Elem,
    order: Order,
    shape: Vec<usize>,
    /// Raw bytes in memory order, or the list of objects in C order.
    data: ArrayData,
}

#[derive(Clone, Debug)]
enum ArrayData {
    Bytes(Vec<u8>),
    Objects(Id),
}

#[derive(Clone, Debug)]
enum Node {
    /// A value with no parts to share: None, numbers, str, bytes,
    /// bytearray, a numpy scalar. Made by opcodes, stored in `leaves`
    /// (never in `nodes`).
    Leaf(PyValue),
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
    /// Taken by the tree builder (its one use): seen again only through a cycle.
    Moved,
}

impl Node {
    fn kind(&self) -> &'static str {
        match self {
            Node::Leaf(value) => value.type_name(),
            Node::Tuple(_) => "tuple",
            Node::List(_) => "list",
            Node::Dict(_) => "dict",
            Node::Set(_) => "set",
            Node::FrozenSet(_) => "frozenset",
            Node::Global(_) => "global",
            Node::NewArray => "array under construction",
            Node::Array(_) => "numpy array",
            Node::NewDType(_) | Node::DType(_) => "numpy dtype",
            Node::Moved => "container that holds itself",
        }
    }
}

/// An object seen through its id: a leaf value or a node.
#[derive(Clone, Copy)]
enum View<'a> {
    Leaf(&'a PyValue),
    Node(&'a Node),
}

impl View<'_> {
    fn kind(&self) -> &'static str {
        match self {
            View::Leaf(value) => value.type_name(),
            View::Node(node) => node.kind(),
        }
    }
}

/// The pickle's bytes: the current frame (protocol 4+) or the reader.
struct Input<R> {
    reader: R,
    frame: Vec<u8>,
    frame_pos: usize,
    /// Bytes of the pickle consumed so far.
    position: u64,
}

impl<R: Read> Input<R> {
    fn in_frame(&self) -> usize {
        self.frame.len() - self.frame_pos
    }

    fn fill(&mut self, buf: &mut [u8]) -> Result<()> {
        let n = buf.len();
        if self.in_frame() > 0 {
            if n > self.in_frame() {
                return Err(self.error("pickle exhausted before end of frame"));
            }
            buf.copy_from_slice(&self.frame[self.frame_pos..self.frame_pos + n]);
            self.frame_pos += n;
        } else {
            if read_full(&mut self.reader, buf)? < n {
                return Err(self.truncated());
            }
        }
        self.position += n as u64;
        Ok(())
    }

    fn byte(&mut self) -> Result<u8> {
        if self.frame_pos < self.frame.len() {
            let b = self.frame[self.frame_pos];
            self.frame_pos += 1;
            self.position += 1;
            return Ok(b);
        }
        let mut b = [0u8; 1];
        self.fill(&mut b)?;
        Ok(b[0])
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut bytes = [0u8; N];
        self.fill(&mut bytes)?;
        Ok(bytes)
    }

    /// `n` bytes; memory follows the bytes that arrive, never `n` alone.
    fn vec(&mut self, n: u64) -> Result<Vec<u8>> {
        if self.in_frame() > 0 {
            let n = usize::try_from(n)
                .ok()
                .filter(|&n| n <= self.in_frame())
                .ok_or_else(|| self.error("pickle exhausted before end of frame"))?;
            let bytes = self.frame[self.frame_pos..self.frame_pos + n].to_vec();
            self.frame_pos += n;
            self.position += n as u64;
            return Ok(bytes);
        }
        let mut bytes = Vec::with_capacity(n.min(1 << 16) as usize);
        (&mut self.reader).take(n).read_to_end(&mut bytes)?;
        self.position += bytes.len() as u64;
        if (bytes.len() as u64) < n {
            return Err(self.truncated());
        }
        Ok(bytes)
    }

    /// A newline-terminated line (protocol 2's GLOBAL), at most 256 bytes.
    fn line(&mut self) -> Result<String> {
        let mut line = Vec::new();
        loop {
            match self.byte()? {
                b'\n' => break,
                b if line.len() < 256 => line.push(b),
                _ => return Err(self.error("GLOBAL name longer than 256 bytes")),
            }
        }
        String::from_utf8(line).map_err(|_| self.error("GLOBAL name is not UTF-8"))
    }

    fn start_frame(&mut self, len: u64) -> Result<()> {
        if self.in_frame() > 0 {
            return Err(self.error("beginning of a new frame before end of current frame"));
        }
        self.frame.clear();
        self.frame_pos = 0;
        let mut frame = std::mem::take(&mut self.frame);
        (&mut self.reader).take(len).read_to_end(&mut frame)?;
        let got = frame.len() as u64;
        self.frame = frame;
        if got < len {
            self.position += got;
            return Err(self.truncated());
        }
        Ok(())
    }

    fn truncated(&self) -> Error {
        self.error("pickle data was truncated")
    }

    fn error(&self, reason: impl Into<String>) -> Error {
        Error::Unpickling {
            position: self.position,
            reason: reason.into(),
        }
    }
}

/// Most dimensions an array may have (numpy's `NPY_MAXDIMS`).
const MAX_DIMS: usize = crate::header::MAX_DIMS;

pub(super) struct Unpickler<'o, R> {
    input: Input<R>,
    options: &'o PickleOptions,
    nodes: Vec<Node>,
    leaves: Vec<PyValue>,
    stack: Vec<Id>,
    marks: Vec<usize>,
    /// Memo entries 0, 1, 2, ... as `MEMOIZE` and sequential puts fill them.
    memo: Vec<Id>,
    /// Memo entries at indices far beyond the dense part (hand-made pickles).
    sparse_memo: HashMap<u32, Id>,
    /// Where the current opcode starts, for messages.
    op_position: u64,
}

impl<'o, R: Read> Unpickler<'o, R> {
    pub(super) fn new(reader: R, options: &'o PickleOptions) -> Self {
        Unpickler {
            input: Input {
                reader,
                frame: Vec::new(),
                frame_pos: 0,
                position: 0,
            },
            options,
            nodes: Vec::new(),
            leaves: Vec::new(),
            stack: Vec::new(),
            marks: Vec::new(),
            memo: Vec::new(),
            sparse_memo: HashMap::new(),
            op_position: 0,
        }
    }

    fn error(&self, reason: impl Into<String>) -> Error {
        Error::Unpickling {
            position: self.op_position,
            reason: reason.into(),
        }
    }

    fn push(&mut self, node: Node) -> Result<()> {
        let too_many = || self.error("too many objects");
        let id = match node {
            Node::Leaf(value) => {
                let index = Id::try_from(self.leaves.len()).ok().filter(|&i| i < LEAF);
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
        };
        self.stack.push(id);
        Ok(())
    }

    /// The node `id` for changing it; `None` for a leaf.
    fn node_mut(&mut self, id: Id) -> Option<&mut Node> {
        (id & LEAF == 0).then(|| &mut self.nodes[id as usize])
    }

    fn pop(&mut self) -> Result<Id> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.error("unpickling stack underflow"));
        }
        Ok(self.stack.pop().unwrap_or_default())
    }

    fn top(&self) -> Result<Id> {
        let floor = self.marks.last().copied().unwrap_or(0);
        match self.stack.last() {
            Some(&id) if self.stack.len() > floor => Ok(id),
            _ => Err(self.error("unpickling stack underflow")),
        }
    }

    /// The items pushed since the last MARK, which is removed.
    fn pop_mark(&mut self) -> Result<Vec<Id>> {
        let mark = self
            .marks
            .pop()
            .ok_or_else(|| self.error("could not find MARK"))?;
        Ok(self.stack.split_off(mark))
    }

    fn memo_put(&mut self, index: u64) -> Result<()> {
        let id = self.top()?;
        let index = u32::try_from(index).map_err(|_| self.error("memo index too large"))?;
        let dense = index as usize;
        if dense < self.memo.len() {
            self.memo[dense] = id;
        } else if dense == self.memo.len() {
            self.memo.push(id);
        } else {
            self.sparse_memo.insert(index, id);
        }
        Ok(())
    }

    fn memo_get(&mut self, index: u64) -> Result<()> {
        let found = u32::try_from(index).ok().and_then(|i| {
            self.memo
                .get(i as usize)
                .copied()
                .or_else(|| self.sparse_memo.get(&i).copied())
        });
        let id =
            found.ok_or_else(|| self.error(format!("memo value not found at index {index}")))?;
        self.stack.push(id);
        Ok(())
    }

    fn text(&mut self, bytes: Vec<u8>) -> Result<Node> {
        String::from_utf8(bytes)
            .map(|s| Node::Leaf(PyValue::Str(s)))
            .map_err(|e| {
                self.error(format!(
                    "invalid UTF-8 in a str at byte {}",
                    e.utf8_error().valid_up_to()
                ))
            })
    }

    /// A Python 2 `str` (BINSTRING), decoded as `encoding` says (np.load's `encoding`).
    fn py2_str(&mut self, bytes: Vec<u8>) -> Result<Node> {
        match self.options.encoding {
            Encoding::Bytes => Ok(Node::Leaf(PyValue::Bytes(bytes))),
            Encoding::Latin1 => Ok(Node::Leaf(PyValue::Str(
                bytes.iter().map(|&b| char::from(b)).collect(),
            ))),
            Encoding::Ascii => match bytes.iter().position(|b| !b.is_ascii()) {
                Some(at) => Err(self.error(format!(
                    "'ascii' codec can't decode byte {:#04x} in position {at} of a Python 2 str: \
                     ordinal not in range(128) (Python 2 data: load with encoding latin1 or bytes)",
                    bytes[at]
                ))),
                None => self.text(bytes),
            },
        }
    }

    /// Runs the pickle to its STOP; returns the result and the bytes read.
    pub(super) fn run(mut self) -> Result<(PyValue, u64)> {
        loop {
            self.op_position = self.input.position;
            let op = self.input.byte()?;
            match op {
                0x80 => {
                    let protocol = self.input.byte()?;
                    if protocol > 5 {
                        return Err(self.error(format!("unsupported pickle protocol: {protocol}")));
                    }
                }
                0x95 => {
                    let len = u64::from_le_bytes(self.input.array()?);
                    self.input.start_frame(len)?;
                }
                b'.' => {
                    let top = self.pop()?;
                    let consumed = self.input.position;
                    let value = self.into_value(top, consumed)?;
                    return Ok((value, consumed));
                }
                b'(' => self.marks.push(self.stack.len()),
                b'0' => {
                    if self.marks.last() == Some(&self.stack.len()) {
                        self.marks.pop();
                    } else {
                        self.pop()?;
                    }
                }
                b'1' => {
                    self.pop_mark()?;
                }
                b'2' => {
                    let id = self.top()?;
                    self.stack.push(id);
                }
                b'N' => self.push(Node::Leaf(PyValue::None))?,
                0x88 => self.push(Node::Leaf(PyValue::Bool(true)))?,
                0x89 => self.push(Node::Leaf(PyValue::Bool(false)))?,
                b'J' => {
                    let n = i32::from_le_bytes(self.input.array()?);
                    self.push(Node::Leaf(PyValue::Int(i64::from(n))))?;
                }
                b'K' => {
                    let n = self.input.byte()?;
                    self.push(Node::Leaf(PyValue::Int(i64::from(n))))?;
                }
                b'M' => {
                    let n = u16::from_le_bytes(self.input.array()?);
                    self.push(Node::Leaf(PyValue::Int(i64::from(n))))?;
                }
                0x8a | 0x8b => {
                    let len = if op == 0x8a {
                        u64::from(self.input.byte()?)
                    } else {
                        let len = i32::from_le_bytes(self.input.array()?);
                        u64::try_from(len)
                            .map_err(|_| self.error("LONG pickle has negative byte count"))?
                    };
                    let bytes = self.input.vec(len)?;
                    self.push(Node::Leaf(PyValue::int_from_le_bytes(&bytes)))?;
                }
                b'G' => {
                    let x = f64::from_be_bytes(self.input.array()?);
                    self.push(Node::Leaf(PyValue::Float(x)))?;
                }
                0x8c => {
                    let len = self.input.byte()?;
                    let bytes = self.input.vec(u64::from(len))?;
                    let node = self.text(bytes)?;
                    self.push(node)?;
                }
                b'X' => {
                    let len = u32::from_le_bytes(self.input.array()?);
                    let bytes = self.input.vec(u64::from(len))?;
                    let node = self.text(bytes)?;
                    self.push(node)?;
                }
                0x8d => {
                    let len = u64::from_le_bytes(self.input.array()?);
                    let bytes = self.input.vec(len)?;
                    let node = self.text(bytes)?;
                    self.push(node)?;
                }
                b'C' => {
                    let len = self.input.byte()?;
                    let bytes = self.input.vec(u64::from(len))?;
                    self.push(Node::Leaf(PyValue::Bytes(bytes)))?;
                }
                b'B' => {
                    let len = u32::from_le_bytes(self.input.array()?);
                    let bytes = self.input.vec(u64::from(len))?;
                    self.push(Node::Leaf(PyValue::Bytes(bytes)))?;
                }
                0x8e => {
                    let len = u64::from_le_bytes(self.input.array()?);
                    let bytes = self.input.vec(len)?;
                    self.push(Node::Leaf(PyValue::Bytes(bytes)))?;
                }
                0x96 => {
                    let len = u64::from_le_bytes(self.input.array()?);
                    let bytes = self.input.vec(len)?;
                    self.push(Node::Leaf(PyValue::ByteArray(bytes)))?;
                }
                b'U' => {
                    let len = self.input.byte()?;
                    let bytes = self.input.vec(u64::from(len))?;
                    let node = self.py2_str(bytes)?;
                    self.push(node)?;
                }
                b'T' => {
                    let len = i32::from_le_bytes(self.input.array()?);
                    let len = u64::try_from(len)
                        .map_err(|_| self.error("BINSTRING pickle has negative byte count"))?;
                    let bytes = self.input.vec(len)?;
                    let node = self.py2_str(bytes)?;
                    self.push(node)?;
                }
                b')' => self.push(Node::Tuple(Vec::new()))?,
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    let floor = self.marks.last().copied().unwrap_or(0);
                    if self.stack.len() < floor + n {
                        return Err(self.error("unpickling stack underflow"));
                    }
                    let items = self.stack.split_off(self.stack.len() - n);
                    self.push(Node::Tuple(items))?;
                }
                b't' => {
                    let items = self.pop_mark()?;
                    self.push(Node::Tuple(items))?;
                }
                b']' => self.push(Node::List(Vec::new()))?,
                b'l' => {
                    let items = self.pop_mark()?;
                    self.push(Node::List(items))?;
                }
                b'a' => {
                    let item = self.pop()?;
                    let list = self.top()?;
                    self.extend_list(list, vec![item])?;
                }
                b'e' => {
                    let items = self.pop_mark()?;
                    let list = self.top()?;
                    self.extend_list(list, items)?;
                }
                b'}' => self.push(Node::Dict(Vec::new()))?,
                b'd' => {
                    let items = self.pop_mark()?;
                    let pairs =
                        pairs(items).ok_or_else(|| self.error("odd number of items for DICT"))?;
                    self.push(Node::Dict(pairs))?;
                }
                b's' => {
                    let value = self.pop()?;
                    let key = self.pop()?;
                    let dict = self.top()?;
                    self.set_items(dict, vec![(key, value)])?;
                }
                b'u' => {
                    let items = self.pop_mark()?;
                    let pairs = pairs(items)
                        .ok_or_else(|| self.error("odd number of items for SETITEMS"))?;
                    let dict = self.top()?;
                    self.set_items(dict, pairs)?;
                }
                0x8f => self.push(Node::Set(Vec::new()))?,
                0x90 => {
                    let items = self.pop_mark()?;
                    let set = self.top()?;
                    match self.node_mut(set) {
                        Some(Node::Set(existing)) => existing.extend(items),
                        _ => {
                            let kind = self.node(set).kind();
                            return Err(self.error(format!("ADDITEMS on a {kind}, not a set")));
                        }
                    }
                }
                0x91 => {
                    let items = self.pop_mark()?;
                    self.push(Node::FrozenSet(items))?;
                }
                b'h' => {
                    let index = self.input.byte()?;
                    self.memo_get(u64::from(index))?;
                }
                b'j' => {
                    let index = u32::from_le_bytes(self.input.array()?);
                    self.memo_get(u64::from(index))?;
                }
                b'q' => {
                    let index = self.input.byte()?;
                    self.memo_put(u64::from(index))?;
                }
                b'r' => {
                    let index = u32::from_le_bytes(self.input.array()?);
                    self.memo_put(u64::from(index))?;
                }
                0x94 => {
                    let index = (self.memo.len() + self.sparse_memo.len()) as u64;
                    self.memo_put(index)?;
                }
                b'c' => {
                    let module = self.input.line()?;
                    let name = self.input.line()?;
                    self.global(&module, &name)?;
                }
                0x93 => {
                    let name = self.pop()?;
                    let module = self.pop()?;
                    let (View::Leaf(PyValue::Str(module)), View::Leaf(PyValue::Str(name))) =
                        (self.node(module), self.node(name))
                    else {
                        return Err(self.error("STACK_GLOBAL requires str"));
                    };
                    let (module, name) = (module.clone(), name.clone());
                    self.global(&module, &name)?;
                }
                b'R' => {
                    let args = self.pop()?;
                    let callable = self.pop()?;
                    let node = self.reduce(callable, args)?;
                    self.push(node)?;
                }
                b'b' => {
                    let state = self.pop()?;
                    let target = self.top()?;
                    self.build(target, state)?;
                }
                other => return Err(self.error(refused_opcode(other))),
            }
        }
    }

    fn global(&mut self, module: &str, name: &str) -> Result<()> {
        match Global::lookup(module, name) {
            Some(global) => self.push(Node::Global(global)),
            None => Err(self.error(format!(
                "global '{module}.{name}' is not allowed: an object array holds plain Python values \
                 and numpy arrays, and nothing from a pickle is ever called"
            ))),
        }
    }

    fn extend_list(&mut self, list: Id, items: Vec<Id>) -> Result<()> {
        match self.node_mut(list) {
            Some(Node::List(existing)) => {
                existing.extend(items);
                Ok(())
            }
            _ => {
                let kind = self.node(list).kind();
                Err(self.error(format!("APPEND to a {kind}, not a list")))
            }
        }
    }

    fn set_items(&mut self, dict: Id, items: Vec<(Id, Id)>) -> Result<()> {
        match self.node_mut(dict) {
            Some(Node::Dict(existing)) => {
                existing.extend(items);
                Ok(())
            }
            _ => {
                let kind = self.node(dict).kind();
                Err(self.error(format!("SETITEM on a {kind}, not a dict")))
            }
        }
    }

    fn node(&self, id: Id) -> View<'_> {
        match id & LEAF {
            0 => View::Node(&self.nodes[id as usize]),
            _ => View::Leaf(&self.leaves[(id & !LEAF) as usize]),
        }
    }

    fn tuple(&self, id: Id, what: &str) -> Result<&[Id]> {
        match self.node(id) {
            View::Node(Node::Tuple(items)) => Ok(items),
            other => Err(self.error(format!("{what} must be a tuple, not a {}", other.kind()))),
        }
    }

    /// Text given as `str` or (Python 2 with `encoding='bytes'`, protocol
    /// 2 `bytes`) as bytes, read as latin-1.
    fn text_of(&self, id: Id, what: &str) -> Result<String> {
        match self.node(id) {
            View::Leaf(PyValue::Str(s)) => Ok(s.clone()),
            View::Leaf(PyValue::Bytes(b)) => Ok(b.iter().map(|&b| char::from(b)).collect()),
            other => Err(self.error(format!("{what} must be a str, not a {}", other.kind()))),
        }
    }

    /// Binary data given as `bytes`/`bytearray` or, as numpy accepts it, a
    /// `str` of code points below 256 (Python 2 data read with latin1).
    fn bytes_of(&self, id: Id, what: &str) -> Result<Vec<u8>> {
        match self.node(id) {
            View::Leaf(PyValue::Bytes(b) | PyValue::ByteArray(b)) => Ok(b.clone()),
            View::Leaf(PyValue::Str(s)) => latin1_bytes(s)
                .ok_or_else(|| self.error(format!("{what} holds characters above U+00FF"))),
            other => Err(self.error(format!("{what} must be bytes, not a {}", other.kind()))),
        }
    }

    fn int_of(&self, id: Id, what: &str) -> Result<i64> {
        match self.node(id) {
            View::Leaf(PyValue::Int(n)) => Ok(*n),
            View::Leaf(PyValue::Bool(b)) => Ok(i64::from(*b)),
            other => Err(self.error(format!("{what} must be an int, not a {}", other.kind()))),
        }
    }

    fn float_of(&self, id: Id, what: &str) -> Result<f64> {
        match self.node(id) {
            View::Leaf(PyValue::Float(x)) => Ok(*x),
            View::Leaf(PyValue::Int(n)) => Ok(*n as f64),
            View::Leaf(PyValue::Bool(b)) => Ok(f64::from(u8::from(*b))),
            other => Err(self.error(format!("{what} must be a float, not a {}", other.kind()))),
        }
    }

    fn shape_of(&self, id: Id) -> Result<Vec<usize>> {
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

    fn elem_of(&self, id: Id) -> Result<Elem> {
        match self.node(id) {
            View::Node(Node::DType(elem)) => Ok(elem.clone()),
            View::Node(Node::NewDType(_)) => {
                Err(self.error("a dtype is used before its state was set (BUILD)"))
            }
            other => Err(self.error(format!("expected a numpy dtype, not a {}", other.kind()))),
        }
    }

    /// REDUCE: a call, interpreted for the few callables allowed.
    fn reduce(&mut self, callable: Id, args: Id) -> Result<Node> {
        let View::Node(&Node::Global(global)) = self.node(callable) else {
            return Err(self.error(format!(
                "REDUCE on a {}, which is not callable",
                self.node(callable).kind()
            )));
        };
        let args = self.tuple(args, "REDUCE arguments")?.to_vec();
        let bad_args = || self.error(format!("unexpected arguments for {global:?}"));
        Ok(match (global, args.as_slice()) {
            (Global::Reconstruct, [class, _shape, _typecode]) => {
                if !matches!(self.node(*class), View::Node(Node::Global(Global::NdArray))) {
                    return Err(self.error(format!(
                        "_reconstruct of a {}: only numpy.ndarray is allowed",
                        self.node(*class).kind()
                    )));
                }
                Node::NewArray
            }
            (Global::DType, [type_str, ..]) if args.len() <= 3 => {
                let text = self.text_of(*type_str, "a dtype's type")?;
                if text.len() > 64 {
                    return Err(self.error("a dtype's type string is longer than 64 characters"));
                }
                Node::NewDType(text)
            }
            (Global::Scalar, [dtype, data]) => {
                let Elem::Data(dtype) = self.elem_of(*dtype)? else {
                    return Err(self.error("numpy object scalars are not supported"));
                };
                let bytes = self.bytes_of(*data, "a numpy scalar's data")?;
                if bytes.len() != dtype.itemsize() {
                    return Err(self.error(format!(
                        "a numpy scalar of {} has {} bytes of data",
                        dtype.descr(),
                        bytes.len()
                    )));
                }
                Node::Leaf(PyValue::Scalar(Box::new(NumpyScalar { dtype, bytes })))
            }
            (Global::FromBuffer, [buffer, dtype, shape, order]) => {
                let Elem::Data(dtype) = self.elem_of(*dtype)? else {
                    return Err(self.error("_frombuffer of an object dtype"));
                };
                let data = self.bytes_of(*buffer, "an array's buffer")?;
                let shape = self.shape_of(*shape)?;
                let order = match self.text_of(*order, "an array's order")?.as_str() {
                    "C" => Order::C,
                    "F" => Order::Fortran,
                    other => return Err(self.error(format!("unknown array order {other:?}"))),
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
                let items = match self.node(*items) {
                    View::Node(Node::List(items) | Node::Tuple(items)) => items.clone(),
                    _ => return Err(bad_args()),
                };
                match global {
                    Global::Set => Node::Set(items),
                    _ => Node::FrozenSet(items),
                }
            }
            (Global::ByteArray, []) => Node::Leaf(PyValue::ByteArray(Vec::new())),
            (Global::ByteArray, [data]) => {
                Node::Leaf(PyValue::ByteArray(self.bytes_of(*data, "a bytearray")?))
            }
            (Global::ByteArray | Global::Encode, [text, encoding]) => {
                let encoding = self.text_of(*encoding, "an encoding")?;
                if !matches!(encoding.as_str(), "latin1" | "latin-1") {
                    return Err(self.error(format!("unsupported encoding {encoding:?}")));
                }
                let View::Leaf(PyValue::Str(text)) = self.node(*text) else {
                    return Err(bad_args());
                };
                let bytes = latin1_bytes(text)
                    .ok_or_else(|| self.error("a latin-1 str holds characters above U+00FF"))?;
                match global {
                    Global::ByteArray => Node::Leaf(PyValue::ByteArray(bytes)),
                    _ => Node::Leaf(PyValue::Bytes(bytes)),
                }
            }
            (Global::Bytes, []) => Node::Leaf(PyValue::Bytes(Vec::new())),
            (Global::Complex, [re]) => Node::Leaf(PyValue::Complex(
                self.float_of(*re, "a complex's real part")?,
                0.0,
            )),
            (Global::Complex, [re, im]) => Node::Leaf(PyValue::Complex(
                self.float_of(*re, "a complex's real part")?,
                self.float_of(*im, "a complex's imaginary part")?,
            )),
            _ => return Err(bad_args()),
        })
    }

    /// BUILD: sets the state of an array or a dtype, as numpy's
    /// `__setstate__` would.
    fn build(&mut self, target: Id, state: Id) -> Result<()> {
        let built = match self.node(target) {
            View::Node(Node::NewArray) => Node::Array(Box::new(self.array_state(state)?)),
            View::Node(Node::NewDType(type_str)) => Node::DType(self.dtype_state(type_str, state)?),
            other => {
                return Err(self.error(format!(
                    "BUILD on a {}: only numpy arrays and dtypes have state",
                    other.kind()
                )));
            }
        };
        if let Some(node) = self.node_mut(target) {
            *node = built;
        }
        Ok(())
    }

    /// `ndarray.__setstate__((version, shape, dtype, is_fortran, data))`.
    fn array_state(&self, state: Id) -> Result<ArrayNode> {
        let items = self.tuple(state, "an array's state")?;
        let [shape, dtype, fortran, data] = match items {
            [_, shape, dtype, fortran, data] | [shape, dtype, fortran, data] => {
                [*shape, *dtype, *fortran, *data]
            }
            _ => return Err(self.error(format!("an array's state has {} items", items.len()))),
        };
        let shape = self.shape_of(shape)?;
        let elem = self.elem_of(dtype)?;
        let order = match self.int_of(fortran, "an array's fortran flag")? {
            0 => Order::C,
            _ => Order::Fortran,
        };
        let data = match &elem {
            Elem::Object => match self.node(data) {
                View::Node(Node::List(_)) => ArrayData::Objects(data),
                other => {
                    return Err(self.error(format!(
                        "an object array's items must be a list, not a {}",
                        other.kind()
                    )));
                }
            },
            Elem::Data(dtype) => {
                let bytes = self.bytes_of(data, "an array's data")?;
                let header = Header::new(dtype.clone(), order, shape.clone());
                let expected = header.data_len().map_err(|e| self.error(e.to_string()))?;
                if bytes.len() != expected {
                    return Err(self.error(format!(
                        "an array of {} with shape {} needs {expected} bytes of data, the pickle has {}",
                        dtype.descr(),
                        crate::shape_repr(&shape),
                        bytes.len()
                    )));
                }
                // numpy's __setstate__ byte-swaps a non-native scalar array to
                // native order on load (records keep their fields' orders).
                if let DType::Scalar(_) = dtype
                    && !dtype.is_native_byte_order()
                {
                    let mut bytes = bytes;
                    let native =
                        crate::swap::convert_byte_order(dtype, &mut bytes, ByteOrder::NATIVE);
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
    fn dtype_state(&self, type_str: &str, state: Id) -> Result<Elem> {
        let items = self.tuple(state, "a dtype's state")?;
        if !(8..=9).contains(&items.len()) {
            return Err(self.error(format!("a dtype's state has {} items", items.len())));
        }
        let version = self.int_of(items[0], "a dtype's state version")?;
        if !(3..=4).contains(&version) {
            return Err(self.error(format!("unsupported dtype state version {version}")));
        }
        if matches!(type_str, "O" | "O4" | "O8") {
            return Ok(Elem::Object);
        }
        let byteorder = self.text_of(items[1], "a dtype's byte order")?;
        if !matches!(byteorder.as_str(), "<" | ">" | "|" | "=") {
            return Err(self.error(format!("unknown byte order {byteorder:?}")));
        }
        let itemsize = self.int_of(items[5], "a dtype's itemsize")?;
        let names = match self.node(items[3]) {
            View::Leaf(PyValue::None) => None,
            View::Node(Node::Tuple(names)) => Some(names.clone()),
            other => {
                return Err(self.error(format!(
                    "a dtype's names must be a tuple, not a {}",
                    other.kind()
                )));
            }
        };
        if let Some(names) = names {
            return self.record_state(&names, items[4], itemsize);
        }
        if !matches!(self.node(items[2]), View::Leaf(PyValue::None)) {
            let [base, shape] = self.tuple(items[2], "a dtype's subarray")? else {
                return Err(self.error("a dtype's subarray must be (base, shape)"));
            };
            let Elem::Data(base) = self.elem_of(*base)? else {
                return Err(self.error("subarrays of objects are not supported"));
            };
            let shape = self.shape_of(*shape)?;
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
            text.push_str(&self.datetime_unit(*metadata)?);
        }
        match DType::parse(&text) {
            Ok(dtype) => Ok(Elem::Data(dtype)),
            Err(Error::ObjectDType) => Ok(Elem::Object),
            Err(e) => Err(self.error(format!("dtype {text:?}: {e}"))),
        }
    }

    /// `[10s]` from a datetime dtype's metadata `(dict, (unit, num, den, events))`.
    fn datetime_unit(&self, metadata: Id) -> Result<String> {
        let [_, unit] = self.tuple(metadata, "a datetime dtype's metadata")? else {
            return Err(self.error("a datetime dtype's metadata must be a pair"));
        };
        let unit = self.tuple(*unit, "a datetime unit")?;
        let [symbol, num, ..] = unit else {
            return Err(self.error("a datetime unit must be (unit, num, den, events)"));
        };
        let symbol = self.text_of(*symbol, "a datetime unit")?;
        let num = self.int_of(*num, "a datetime unit's multiple")?;
        Ok(match (symbol.as_str(), num) {
            ("generic", _) => String::new(),
            (symbol, 1) => format!("[{symbol}]"),
            (symbol, num) => format!("[{num}{symbol}]"),
        })
    }

    fn record_state(&self, names: &[Id], fields: Id, itemsize: i64) -> Result<Elem> {
        let View::Node(Node::Dict(entries)) = self.node(fields) else {
            return Err(self.error("a structured dtype's fields must be a dict"));
        };
        let mut out = Vec::with_capacity(names.len());
        let mut end = 0usize;
        for &name in names {
            let name = self.text_of(name, "a field name")?;
            let spec = entries
                .iter()
                .find(|(key, _)| self.text_of(*key, "a field name").is_ok_and(|k| k == name))
                .map(|&(_, spec)| spec)
                .ok_or_else(|| {
                    self.error(format!("field {name:?} has no entry in the dtype's fields"))
                })?;
            let spec = self.tuple(spec, "a field")?;
            let (dtype, offset, title) = match spec {
                [dtype, offset] => (*dtype, *offset, None),
                [dtype, offset, title] => (
                    *dtype,
                    *offset,
                    Some(self.text_of(*title, "a field title")?),
                ),
                _ => return Err(self.error("a field must be (dtype, offset[, title])")),
            };
            let Elem::Data(dtype) = self.elem_of(dtype)? else {
                return Err(self.error(
                    "structured dtypes with object fields are not supported (only whole object arrays are)",
                ));
            };
            let offset = usize::try_from(self.int_of(offset, "a field offset")?)
                .map_err(|_| self.error("negative field offset"))?;
            if offset < end {
                return Err(self.error("overlapping or out-of-order fields are not supported"));
            }
            end = offset.saturating_add(dtype.itemsize());
            out.push(crate::Field {
                name,
                title,
                dtype,
                offset,
            });
        }
        let itemsize = usize::try_from(itemsize)
            .ok()
            .filter(|&size| size >= end && size <= crate::dtype::MAX_ITEMSIZE)
            .ok_or_else(|| self.error("a structured dtype's itemsize does not hold its fields"))?;
        Ok(Elem::Data(DType::Structured(crate::Structured {
            fields: out,
            itemsize,
        })))
    }

    /// The result tree, copying shared objects within the budget.
    fn into_value(self, top: Id, consumed: u64) -> Result<PyValue> {
        let limit = self
            .options
            .max_expansion
            .saturating_mul(usize::try_from(consumed).unwrap_or(usize::MAX))
            .saturating_add(1 << 20);
        Builder::new(self.nodes, self.leaves, top, self.options, limit, consumed).build(top)
    }
}

/// Builds the owned tree from the arena, without recursion: an explicit
/// stack of the containers being filled, as deep as the depth limit.
/// Objects used once are moved out of the arena, not copied; only shared
/// ones are copied (and paid for from the budget).
struct Builder<'o> {
    nodes: Vec<Node>,
    leaves: Vec<PyValue>,
    /// How many places each node, and each leaf, is still used in
    /// (children of containers, the array items, the root).
    uses: Vec<u32>,
    /// Saturating at 255: a leaf used that often is copied at every use.
    leaf_uses: Vec<u8>,
    options: &'o PickleOptions,
    /// Bytes of output still allowed.
    budget: usize,
    position: u64,
}

/// A container being filled: its children's ids and the values built so far.
struct Frame {
    kind: FrameKind,
    children: Vec<Id>,
    next: usize,
    values: Vec<PyValue>,
}

enum FrameKind {
    Tuple,
    List,
    Set,
    FrozenSet,
    /// Children alternate key, value.
    Dict,
    /// The items of an object array, in its memory order.
    ObjectArray(Header),
}

/// What opening a node gives: a finished value, or a container to fill.
enum Opened {
    Value(PyValue),
    Frame(Frame),
}

impl<'o> Builder<'o> {
    fn new(
        nodes: Vec<Node>,
        leaves: Vec<PyValue>,
        root: Id,
        options: &'o PickleOptions,
        budget: usize,
        position: u64,
    ) -> Self {
        let mut builder = Builder {
            uses: vec![0u32; nodes.len()],
            leaf_uses: vec![0u8; leaves.len()],
            nodes,
            leaves,
            options,
            budget,
            position,
        };
        builder.count_use(root);
        for index in 0..builder.nodes.len() {
            // Out and back in, so the counts can change while it is read.
            let node = std::mem::replace(&mut builder.nodes[index], Node::Moved);
            children(&node).for_each(|child| builder.count_use(child));
            builder.nodes[index] = node;
        }
        builder
    }

    fn count_use(&mut self, id: Id) {
        match id & LEAF {
            0 => self.uses[id as usize] = self.uses[id as usize].saturating_add(1),
            _ => {
                let count = &mut self.leaf_uses[(id & !LEAF) as usize];
                *count = count.saturating_add(1);
            }
        }
    }

    fn error(&self, reason: impl Into<String>) -> Error {
        Error::Unpickling {
            position: self.position,
            reason: reason.into(),
        }
    }

    fn spend(&mut self, bytes: usize) -> Result<()> {
        self.spend_many(1, bytes)
    }

    /// Pays for `count` values holding `bytes` bytes in all.
    fn spend_many(&mut self, count: usize, bytes: usize) -> Result<()> {
        let cost = count
            .saturating_mul(size_of::<PyValue>())
            .saturating_add(bytes);
        self.budget = self.budget.checked_sub(cost).ok_or_else(|| {
            self.error(format!(
                "the decoded values would take more than {} times the pickle's size \
                 (shared objects copied too often?); raise PickleOptions::max_expansion \
                 if the file is trusted",
                self.options.max_expansion
            ))
        })?;
        Ok(())
    }

    fn depth_error(&self) -> Error {
        self.error(format!(
            "objects nested deeper than {} levels (or a container that holds itself)",
            self.options.max_depth
        ))
    }

    fn build(&mut self, root: Id) -> Result<PyValue> {
        let mut frames: Vec<Frame> = Vec::new();
        let mut next = root;
        loop {
            // Descend into `next`.
            let mut value = match self.open(next)? {
                Opened::Value(value) => value,
                Opened::Frame(frame) => {
                    if frames.len() >= self.options.max_depth {
                        return Err(self.depth_error());
                    }
                    frames.push(frame);
                    match self.advance(&mut frames)? {
                        Some(Ok(child)) => {
                            next = child;
                            continue;
                        }
                        Some(Err(value)) => value,
                        None => return unreachable_frame(),
                    }
                }
            };
            // Ascend: hand `value` to its container until one has another child.
            loop {
                let Some(top) = frames.last_mut() else {
                    return Ok(value);
                };
                top.values.push(value);
                match self.advance(&mut frames)? {
                    Some(Ok(child)) => {
                        next = child;
                        break;
                    }
                    Some(Err(finished)) => value = finished,
                    None => return unreachable_frame(),
                }
            }
        }
    }

    /// The top frame's next child (`Ok`), or the frame finished into a
    /// value (`Err`) and popped; `None` without frames.
    #[allow(clippy::type_complexity)]
    fn advance(&mut self, frames: &mut Vec<Frame>) -> Result<Option<Result<Id, PyValue>>> {
        let Some(top) = frames.last_mut() else {
            return Ok(None);
        };
        if let Some(&child) = top.children.get(top.next) {
            top.next += 1;
            return Ok(Some(Ok(child)));
        }
        let Some(frame) = frames.pop() else {
            return Ok(None);
        };
        Ok(Some(Err(finish(frame)?)))
    }

    /// The object `id` (a leaf as `Node::Leaf`), moved out of the arena at
    /// its last use, else copied. A copy of a container uses its children
    /// once more.
    fn take(&mut self, id: Id) -> Node {
        if id & LEAF != 0 {
            let index = (id & !LEAF) as usize;
            let uses = &mut self.leaf_uses[index];
            if *uses <= 1 {
                return Node::Leaf(std::mem::replace(&mut self.leaves[index], PyValue::None));
            }
            if *uses < u8::MAX {
                *uses -= 1;
            }
            return Node::Leaf(self.leaves[index].clone());
        }
        let uses = &mut self.uses[id as usize];
        if *uses <= 1 {
            return std::mem::replace(&mut self.nodes[id as usize], Node::Moved);
        }
        *uses -= 1;
        let node = self.nodes[id as usize].clone();
        children(&node).for_each(|child| self.count_use(child));
        node
    }

    /// The values of `ids` when they are the leaves from some index to the
    /// last, in order and each used only here (an object array of plain
    /// values, as np.save writes it): the leaves' own vector, without a copy.
    fn leaf_run(&mut self, ids: &[Id]) -> Option<Vec<PyValue>> {
        let first = *ids.first()?;
        let start = (first & !LEAF) as usize;
        let contiguous = first & LEAF != 0
            && start + ids.len() == self.leaves.len()
            && ids
                .iter()
                .enumerate()
                .all(|(i, &id)| id == first + i as Id && self.leaf_uses[start + i] == 1);
        if !contiguous {
            return None;
        }
        let mut values = std::mem::take(&mut self.leaves);
        // The leaves before the run stay at their indices.
        self.leaves = values.drain(..start).collect();
        Some(values)
    }

    fn open(&mut self, id: Id) -> Result<Opened> {
        let node = self.take(id);
        let payload = match &node {
            Node::Leaf(value) => payload_len(value),
            _ => 0,
        };
        self.spend(payload)?;
        let frame = |kind, children: Vec<Id>| {
            Opened::Frame(Frame {
                kind,
                values: Vec::with_capacity(children.len()),
                children,
                next: 0,
            })
        };
        Ok(match node {
            Node::Leaf(value) => Opened::Value(value),
            Node::Tuple(items) => frame(FrameKind::Tuple, items),
            Node::List(items) => frame(FrameKind::List, items),
            Node::Set(items) => frame(FrameKind::Set, items),
            Node::FrozenSet(items) => frame(FrameKind::FrozenSet, items),
            Node::Dict(pairs) => frame(
                FrameKind::Dict,
                pairs.iter().flat_map(|&(k, v)| [k, v]).collect(),
            ),
            Node::Array(array) => self.open_array(*array)?,
            Node::Moved => return Err(self.depth_error()),
            other => {
                return Err(self.error(format!(
                    "the pickle leaves a {} where a value belongs",
                    other.kind()
                )));
            }
        })
    }

    fn open_array(&mut self, array: ArrayNode) -> Result<Opened> {
        match (array.elem, array.data) {
            (Elem::Data(dtype), ArrayData::Bytes(bytes)) => {
                self.spend(bytes.len())?;
                let header = Header::new(dtype, array.order, array.shape);
                Ok(Opened::Value(PyValue::Array(Box::new(
                    NpyArray::from_data(header, bytes)?,
                ))))
            }
            (Elem::Object, ArrayData::Objects(list)) => {
                let Node::List(ids) = self.take(list) else {
                    return Err(self.error("an object array's items must be a list"));
                };
                let header = Header::new(DType::Object, array.order, array.shape);
                let count = header
                    .element_count()
                    .map_err(|e| self.error(e.to_string()))?;
                if ids.len() != count {
                    return Err(self.error(format!(
                        "an object array of shape {} holds {} items",
                        crate::shape_repr(&header.shape),
                        ids.len()
                    )));
                }
                if header.order == Order::C
                    && let Some(values) = self.leaf_run(&ids)
                {
                    let payload: usize = values.iter().map(payload_len).sum();
                    self.spend_many(values.len(), payload)?;
                    return Ok(Opened::Value(PyValue::Array(Box::new(
                        NpyArray::from_objects(header, values)?,
                    ))));
                }
                // The list is in C order; the array keeps its memory order.
                let children = match header.order {
                    Order::C => ids,
                    Order::Fortran => c_to_fortran(&ids, &header.shape),
                };
                Ok(Opened::Frame(Frame {
                    kind: FrameKind::ObjectArray(header),
                    values: Vec::with_capacity(children.len()),
                    children,
                    next: 0,
                }))
            }
            _ => Err(self.error("an array's data does not match its dtype")),
        }
    }
}

/// The bytes a leaf holds besides its value (strings, bytes, big ints).
fn payload_len(value: &PyValue) -> usize {
    match value {
        PyValue::BigInt(b) | PyValue::Bytes(b) | PyValue::ByteArray(b) => b.len(),
        PyValue::Scalar(scalar) => scalar.bytes.len(),
        PyValue::Str(s) => s.len(),
        _ => 0,
    }
}

/// The nodes `node` refers to (its items, a dict's keys and values, an
/// object array's list).
fn children(node: &Node) -> impl Iterator<Item = Id> + '_ {
    let (items, pairs, list): (&[Id], &[(Id, Id)], Option<Id>) = match node {
        Node::Tuple(items) | Node::List(items) | Node::Set(items) | Node::FrozenSet(items) => {
            (items, &[], None)
        }
        Node::Dict(pairs) => (&[], pairs, None),
        Node::Array(array) => match array.data {
            ArrayData::Objects(list) => (&[], &[], Some(list)),
            ArrayData::Bytes(_) => (&[], &[], None),
        },
        _ => (&[], &[], None),
    };
    items
        .iter()
        .copied()
        .chain(pairs.iter().flat_map(|&(k, v)| [k, v]))
        .chain(list)
}

fn finish(frame: Frame) -> Result<PyValue> {
    let values = frame.values;
    Ok(match frame.kind {
        FrameKind::Tuple => PyValue::Tuple(values),
        FrameKind::List => PyValue::List(values),
        FrameKind::Set => PyValue::Set(values),
        FrameKind::FrozenSet => PyValue::FrozenSet(values),
        FrameKind::Dict => {
            let mut pairs = Vec::with_capacity(values.len() / 2);
            let mut items = values.into_iter();
            while let (Some(key), Some(value)) = (items.next(), items.next()) {
                pairs.push((key, value));
            }
            PyValue::Dict(pairs)
        }
        FrameKind::ObjectArray(header) => {
            PyValue::Array(Box::new(NpyArray::from_objects(header, values)?))
        }
    })
}

/// `advance` always finds the frame just pushed.
fn unreachable_frame<T>() -> Result<T> {
    Err(Error::Unpickling {
        position: 0,
        reason: "internal error: no open container".to_owned(),
    })
}

fn pairs(items: Vec<Id>) -> Option<Vec<(Id, Id)>> {
    if !items.len().is_multiple_of(2) {
        return None;
    }
    Some(items.chunks_exact(2).map(|p| (p[0], p[1])).collect())
}

pub(super) fn latin1_bytes(text: &str) -> Option<Vec<u8>> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).ok())
        .collect()
}

/// The error for an opcode outside the allowed set, naming it.
fn refused_opcode(op: u8) -> String {
    let name = match op {
        b'I' => "INT",
        b'L' => "LONG",
        b'F' => "FLOAT",
        b'S' => "STRING",
        b'V' => "UNICODE",
        b'g' => "GET",
        b'p' => "PUT",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        b'i' => "INST",
        b'o' => "OBJ",
        0x81 => "NEWOBJ",
        0x92 => "NEWOBJ_EX",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => return format!("invalid load key, '\\x{op:02x}' (not a pickle opcode)"),
    };
    format!(
        "opcode {name} ('\\x{op:02x}') is not allowed: numpy's object array pickles \
         (protocols 2-5) never need it"
    )
}

//! The restricted unpickler's opcode machine: a stack of object ids over
//! an arena (`arena`), the memo and the MARKs, no recursion.
//!
//! Values live in an arena of nodes and the stack, the memo and containers
//! hold ids into it, so the memo shares objects the way Python's does (a
//! list memoized empty and filled later is the filled list). Globals are
//! looked up in a fixed table (`globals`) and never called: REDUCE and BUILD
//! on them are interpreted by pattern (`reduce`). The arena grows by at most
//! one node per opcode, and payloads are copied from the input (`input`), so
//! memory during decoding follows the input; turning the arena into a
//! [`PyValue`] tree (`tree`) is budgeted against the input's size and the
//! depth limit.

use std::collections::HashMap;
use std::io::Read;

use super::arena::{Arena, Id, Leaf, Node};
use super::build::Decoding;
use super::globals::Global;
use super::input::Input;
use super::opcodes::*;
use super::options::{Encoding, PickleOptions};
use super::reduce::{build, reduce};
use super::strs::Strs;
use crate::error::{Error, Result};

pub(super) struct Unpickler<'o, R, S> {
    input: Input<R>,
    options: &'o PickleOptions,
    arena: Arena<S>,
    stack: Vec<Id>,
    marks: Vec<usize>,
    /// Memo entries 0, 1, 2, ... as `MEMOIZE` and sequential puts fill them.
    memo: Vec<Id>,
    /// Memo entries at indices far beyond the dense part (hand-made pickles).
    sparse_memo: HashMap<u32, Id>,
    /// Room for the items of the first list the pickle makes (an object
    /// array's, in the order `np.save` writes).
    list_room: usize,
}

impl<'o, R: Read, S: Strs> Unpickler<'o, R, S> {
    /// An unpickler keeping its `str`s in `strs`.
    pub(super) fn new(reader: R, options: &'o PickleOptions, strs: S) -> Self {
        Unpickler {
            input: Input::new(reader),
            options,
            arena: Arena::new(strs),
            stack: Vec::new(),
            marks: Vec::new(),
            memo: Vec::new(),
            sparse_memo: HashMap::new(),
            list_room: 0,
        }
    }

    /// Room for `items` memo entries and items of the first list at once
    /// (an object array's, which `np.save` pickles before its items).
    pub(super) fn reserve(&mut self, items: usize) {
        self.memo.reserve_exact(items);
        self.list_room = items;
    }

    #[inline]
    fn push(&mut self, node: Node) -> Result<()> {
        let id = self.arena.add(node)?;
        self.stack.push(id);
        Ok(())
    }

    #[inline]
    fn push_leaf(&mut self, leaf: Leaf) -> Result<()> {
        self.push(Node::Leaf(leaf))
    }

    fn pop(&mut self) -> Result<Id> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.arena.error("unpickling stack underflow"));
        }
        Ok(self.stack.pop().unwrap_or_default())
    }

    #[inline]
    fn top(&self) -> Result<Id> {
        let floor = self.marks.last().copied().unwrap_or(0);
        match self.stack.last() {
            Some(&id) if self.stack.len() > floor => Ok(id),
            _ => Err(self.arena.error("unpickling stack underflow")),
        }
    }

    /// The items pushed since the last MARK, which is removed.
    fn pop_mark(&mut self) -> Result<Vec<Id>> {
        let mark = self
            .marks
            .pop()
            .ok_or_else(|| self.arena.error("could not find MARK"))?;
        Ok(self.stack.split_off(mark))
    }

    #[inline]
    fn memo_put(&mut self, index: u64) -> Result<()> {
        let id = self.top()?;
        let index = u32::try_from(index).map_err(|_| self.arena.error("memo index too large"))?;
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
        let id = found.ok_or_else(|| {
            self.arena
                .error(format!("memo value not found at index {index}"))
        })?;
        self.stack.push(id);
        Ok(())
    }

    /// A Python 2 `str` (BINSTRING), decoded as `encoding` says (np.load's
    /// `encoding`): its id.
    fn py2_str(encoding: Encoding, arena: &mut Arena<S>, bytes: &[u8]) -> Result<Id> {
        match encoding {
            Encoding::Bytes => {
                let leaf = Leaf::Bytes(arena.add_bytes(bytes));
                arena.add(Node::Leaf(leaf))
            }
            Encoding::Latin1 => arena.add_latin1(bytes),
            Encoding::Ascii => match bytes.iter().position(|b| !b.is_ascii()) {
                Some(index) => Err(Error::Python2Str {
                    position: arena.position,
                    byte: bytes[index],
                    index,
                }),
                None => arena.add_str(bytes),
            },
        }
    }

    /// Runs the pickle to its STOP; returns the objects it made, whose
    /// result a [`Build`](super::Build) turns into values.
    pub(super) fn run(mut self) -> Result<Decoding<S>> {
        loop {
            self.arena.position = self.input.position;
            let op = self.input.byte()?;
            match op {
                PROTO => {
                    let protocol = self.input.byte()?;
                    if protocol > 5 {
                        let reason = format!("unsupported pickle protocol: {protocol}");
                        return Err(self.arena.error(reason));
                    }
                }
                FRAME => {
                    let len = self.argument(op)?;
                    self.input.start_frame(len)?;
                }
                STOP => {
                    let root = self.pop()?;
                    self.arena.strs.finish(self.arena.position)?;
                    let consumed = self.input.position;
                    return Ok(Decoding::new(self.arena, root, self.options, consumed));
                }
                NONE => self.push_leaf(Leaf::None)?,
                NEWTRUE | NEWFALSE => self.push_leaf(Leaf::Bool(op == NEWTRUE))?,
                BININT1 | BININT2 => {
                    let n = self.argument(op)?;
                    self.push_leaf(Leaf::Int(n as i64))?;
                }
                BININT => {
                    let n = self.argument(op)? as u32 as i32;
                    self.push_leaf(Leaf::Int(i64::from(n)))?;
                }
                BINFLOAT => {
                    let x = f64::from_be_bytes(self.input.array()?);
                    self.push_leaf(Leaf::Float(x))?;
                }
                LONG1 | LONG4 => {
                    let leaf = self.payload(op, |arena, bytes| Ok(arena.int_leaf(bytes)))?;
                    self.push_leaf(leaf)?;
                }
                SHORT_BINUNICODE if !self.input.frame_rest().is_empty() => self.short_strs()?,
                SHORT_BINUNICODE | BINUNICODE | BINUNICODE8 => {
                    let id = self.payload(op, |arena, bytes| arena.add_str(bytes))?;
                    self.stack.push(id);
                }
                SHORT_BINSTRING | BINSTRING => {
                    let encoding = self.options.encoding;
                    let id =
                        self.payload(op, |arena, bytes| Self::py2_str(encoding, arena, bytes))?;
                    self.stack.push(id);
                }
                SHORT_BINBYTES | BINBYTES | BINBYTES8 => {
                    let leaf =
                        self.payload(op, |arena, bytes| Ok(Leaf::Bytes(arena.add_bytes(bytes))))?;
                    self.push_leaf(leaf)?;
                }
                BYTEARRAY8 => {
                    let leaf = self.payload(op, |arena, bytes| {
                        Ok(Leaf::ByteArray(arena.add_bytes(bytes)))
                    })?;
                    self.push_leaf(leaf)?;
                }
                MARK | POP | POP_MARK | DUP => self.stack_op(op)?,
                EMPTY_TUPLE | TUPLE1 | TUPLE2 | TUPLE3 | TUPLE | EMPTY_LIST | LIST | APPEND
                | APPENDS | EMPTY_DICT | DICT | SETITEM | SETITEMS | EMPTY_SET | ADDITEMS
                | FROZENSET => self.container_op(op)?,
                BINGET | LONG_BINGET => {
                    let index = self.argument(op)?;
                    self.memo_get(index)?;
                }
                BINPUT | LONG_BINPUT => {
                    let index = self.argument(op)?;
                    self.memo_put(index)?;
                }
                MEMOIZE => {
                    let index = (self.memo.len() + self.sparse_memo.len()) as u64;
                    self.memo_put(index)?;
                }
                GLOBAL | STACK_GLOBAL => self.global(op)?,
                REDUCE => {
                    let args = self.pop()?;
                    let callable = self.pop()?;
                    let node = reduce(&mut self.arena, callable, args)?;
                    self.push(node)?;
                }
                BUILD => {
                    let state = self.pop()?;
                    let target = self.top()?;
                    build(&mut self.arena, target, state)?;
                }
                other => return Err(self.arena.error(refused_opcode(other))),
            }
        }
    }

    /// A run of `SHORT_BINUNICODE` strings inside a frame, each memoized
    /// (`MEMOIZE`) or not: what `np.save` writes for an object array of
    /// strings, decoded in one loop (its `SHORT_BINUNICODE` opcode read).
    /// Does what the opcodes one by one would do.
    fn short_strs(&mut self) -> Result<()> {
        loop {
            let rest = self.input.frame_rest();
            let Some((&len, rest)) = rest.split_first() else {
                return Err(self.input.error("pickle exhausted before end of frame"));
            };
            let len = usize::from(len);
            let Some(text) = rest.get(..len) else {
                return Err(self.input.error("pickle exhausted before end of frame"));
            };
            // MEMOIZE of the dense memo's next entry, and the opcode after it.
            let dense = self.sparse_memo.is_empty() && self.memo.len() < u32::MAX as usize;
            // The next string's opcode and length byte must be in the frame
            // too (else the main loop reads on, from the stream).
            let (memoize, next) = match rest.get(len..).unwrap_or_default() {
                [MEMOIZE, next, _, ..] if dense => (true, Some(*next)),
                [MEMOIZE, ..] if dense => (true, None),
                [next, _, ..] => (false, Some(*next)),
                _ => (false, None),
            };
            let id = self.arena.add_str(text)?;
            self.stack.push(id);
            if memoize {
                self.memo.push(id);
            }
            self.input.advance(1 + len + usize::from(memoize));
            if next != Some(SHORT_BINUNICODE) {
                return Ok(());
            }
            self.arena.position = self.input.position;
            self.input.advance(1);
        }
    }

    /// The number that follows `op`, in the width `op` writes it in.
    #[inline]
    fn argument(&mut self, op: u8) -> Result<u64> {
        self.input.number(argument_width(op))
    }

    /// The payload that follows `op` (its length, in the width `op` writes
    /// it in, then that many bytes), handed to `keep` with the arena:
    /// borrowed from the frame, or read (outside frames).
    #[inline]
    fn payload<T>(
        &mut self,
        op: u8,
        keep: impl FnOnce(&mut Arena<S>, &[u8]) -> Result<T>,
    ) -> Result<T> {
        let len = self.payload_len(op)?;
        match self.input.frame_slice(len)? {
            Some(bytes) => keep(&mut self.arena, bytes),
            None => {
                let bytes = self.input.vec(len)?;
                keep(&mut self.arena, &bytes)
            }
        }
    }

    /// The length of the payload that follows `op`, in the width `op`
    /// writes it in.
    #[inline]
    fn payload_len(&mut self, op: u8) -> Result<u64> {
        let len = self.argument(op)?;
        // LONG4 and BINSTRING write their length as a signed 4-byte number.
        if matches!(op, LONG4 | BINSTRING) && len > i32::MAX as u64 {
            let name = if op == LONG4 { "LONG" } else { "BINSTRING" };
            return Err(self
                .arena
                .error(format!("{name} pickle has negative byte count")));
        }
        Ok(len)
    }

    /// MARK, POP, POP_MARK, DUP: the stack itself.
    fn stack_op(&mut self, op: u8) -> Result<()> {
        match op {
            MARK => self.marks.push(self.stack.len()),
            POP if self.marks.last() == Some(&self.stack.len()) => {
                self.marks.pop();
            }
            POP => {
                self.pop()?;
            }
            POP_MARK => {
                self.pop_mark()?;
            }
            _ => {
                let id = self.top()?;
                self.stack.push(id);
            }
        }
        Ok(())
    }

    /// The opcodes that make and fill tuples, lists, dicts and sets.
    fn container_op(&mut self, op: u8) -> Result<()> {
        match op {
            EMPTY_TUPLE => self.push(Node::Tuple(Vec::new())),
            TUPLE1 | TUPLE2 | TUPLE3 => {
                let n = usize::from(op - TUPLE1) + 1;
                let floor = self.marks.last().copied().unwrap_or(0);
                if self.stack.len() < floor + n {
                    return Err(self.arena.error("unpickling stack underflow"));
                }
                let items = self.stack.split_off(self.stack.len() - n);
                self.push(Node::Tuple(items))
            }
            TUPLE => {
                let items = self.pop_mark()?;
                self.push(Node::Tuple(items))
            }
            EMPTY_LIST => {
                let room = std::mem::take(&mut self.list_room);
                self.push(Node::List(Vec::with_capacity(room)))
            }
            LIST => {
                let items = self.pop_mark()?;
                self.push(Node::List(items))
            }
            APPEND => {
                let item = self.pop()?;
                let list = self.top()?;
                self.extend_list(list, vec![item])
            }
            APPENDS => {
                let items = self.pop_mark()?;
                let list = self.top()?;
                self.extend_list(list, items)
            }
            EMPTY_DICT => self.push(Node::Dict(Vec::new())),
            DICT => {
                let items = self.pop_mark()?;
                let pairs =
                    pairs(items).ok_or_else(|| self.arena.error("odd number of items for DICT"))?;
                self.push(Node::Dict(pairs))
            }
            SETITEM => {
                let value = self.pop()?;
                let key = self.pop()?;
                let dict = self.top()?;
                self.set_items(dict, vec![(key, value)])
            }
            SETITEMS => {
                let items = self.pop_mark()?;
                let pairs = pairs(items)
                    .ok_or_else(|| self.arena.error("odd number of items for SETITEMS"))?;
                let dict = self.top()?;
                self.set_items(dict, pairs)
            }
            EMPTY_SET => self.push(Node::Set(Vec::new())),
            ADDITEMS => {
                let items = self.pop_mark()?;
                let set = self.top()?;
                self.add_to(set, "ADDITEMS on", "set", |node| match node {
                    Node::Set(existing) => {
                        existing.extend(items);
                        true
                    }
                    _ => false,
                })
            }
            _ => {
                let items = self.pop_mark()?;
                self.push(Node::FrozenSet(items))
            }
        }
    }

    /// GLOBAL (module and name on lines) or STACK_GLOBAL (two `str`s on the
    /// stack): pushes the global, if the table allows it.
    fn global(&mut self, op: u8) -> Result<()> {
        let (module, name) = if op == GLOBAL {
            (self.input.line()?, self.input.line()?)
        } else {
            let name = self.pop()?;
            let module = self.pop()?;
            let (Some(module), Some(name)) = (self.arena.str_of(module)?, self.arena.str_of(name)?)
            else {
                return Err(self.arena.error("STACK_GLOBAL requires str"));
            };
            (module.into_owned(), name.into_owned())
        };
        match Global::lookup(&module, &name) {
            Some(global) => self.push(Node::Global(global)),
            None => Err(self.arena.error(format!(
                "global '{module}.{name}' is not allowed: an object array holds plain Python values \
                 and numpy arrays, and nothing from a pickle is ever called"
            ))),
        }
    }

    fn extend_list(&mut self, list: Id, items: Vec<Id>) -> Result<()> {
        self.add_to(list, "APPEND to", "list", |node| match node {
            Node::List(existing) => {
                existing.extend(items);
                true
            }
            _ => false,
        })
    }

    fn set_items(&mut self, dict: Id, items: Vec<(Id, Id)>) -> Result<()> {
        self.add_to(dict, "SETITEM on", "dict", |node| match node {
            Node::Dict(existing) => {
                existing.extend(items);
                true
            }
            _ => false,
        })
    }

    /// Adds to the container at `id` with `add`, which says whether the
    /// node was the container `op` works on ("APPEND to a tuple, not a list").
    fn add_to(
        &mut self,
        id: Id,
        op: &str,
        container: &str,
        add: impl FnOnce(&mut Node) -> bool,
    ) -> Result<()> {
        if self.arena.node_mut(id).is_some_and(add) {
            return Ok(());
        }
        let kind = self.arena.node(id).kind();
        Err(self
            .arena
            .error(format!("{op} a {kind}, not a {container}")))
    }
}

fn pairs(items: Vec<Id>) -> Option<Vec<(Id, Id)>> {
    if !items.len().is_multiple_of(2) {
        return None;
    }
    Some(items.chunks_exact(2).map(|p| (p[0], p[1])).collect())
}

/// The error for an opcode outside the allowed set, naming it.
fn refused_opcode(op: u8) -> String {
    match refused_name(op) {
        Some(name) => format!(
            "opcode {name} ('\\x{op:02x}') is not allowed: numpy's object array pickles \
             (protocols 2-5) never need it"
        ),
        None => format!("invalid load key, '\\x{op:02x}' (not a pickle opcode)"),
    }
}

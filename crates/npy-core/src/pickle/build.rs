//! The walk over the unpickler's objects that makes their values with a
//! [`Build`], without recursion, each object once: a value the memo shares
//! is made once and cloned for its other uses, each use paid for from a
//! budget, so a pickle cannot make its output explode through the memo.

use std::collections::HashMap;

use super::arena::{Arena, ArrayData, ArrayNode, Elem, Id, LEAF, Leaf, Node, STR};
use super::builder::Build;
use super::strs::StrValues;
use crate::array::{NpyArray, PyValue, c_to_fortran};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::header::{Header, Order};

/// A pickle decoded up to its `STOP`, its `str`s kept by `S`: as text
/// ([`Decoded`]), or made at once by a builder ([`Made`], the one pass).
#[derive(Debug)]
pub(crate) struct Decoding<S> {
    pub(super) arena: Arena<S>,
    pub(super) root: Id,
    pub(super) max_depth: usize,
    /// Bytes of output allowed for the values.
    pub(super) budget: usize,
    pub(super) max_expansion: usize,
    pub(super) consumed: u64,
}

/// What a walk ends with: the root's value, or the root object array's items.
pub(super) enum Built<V> {
    Value(V),
    Items(Header, Vec<V>),
}

/// A value made for an object used in several places, kept for its other
/// uses.
struct Shared<V> {
    value: V,
    /// What making it cost from the budget: each use pays it again.
    cost: usize,
    /// Uses still to come.
    uses_left: u32,
}

/// A container being filled: its children's ids and the values made so far.
struct Frame<V> {
    id: Id,
    kind: FrameKind,
    children: Vec<Id>,
    next: usize,
    values: Vec<V>,
    /// The budget when it was opened (what it cost is the difference).
    budget: usize,
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

/// What opening an object gives: a value, or a container to fill.
enum Opened<V> {
    Value(V),
    Frame(Frame<V>),
}

/// The walk over the arena: each object made once, children first, with an
/// explicit stack as deep as the depth limit.
pub(super) struct Walk<'b, B: Build, S> {
    arena: Arena<S>,
    builder: &'b mut B,
    /// How many places each node is used in (children of containers, the
    /// array items, the root).
    uses: Vec<u32>,
    /// The same for leaves (the `str`s after the others), saturating at
    /// 255 (a value used that often is cloned at every use).
    leaf_uses: Vec<u8>,
    /// Values of objects used more than once, made at their first use.
    shared: HashMap<Id, Shared<B::Value>>,
    /// The containers being filled (one found again holds itself).
    building: Vec<bool>,
    max_depth: usize,
    max_expansion: usize,
    budget: usize,
    position: u64,
}

impl<'b, B: Build, S: StrValues<B>> Walk<'b, B, S> {
    pub(super) fn new(decoded: Decoding<S>, builder: &'b mut B) -> Self {
        let Decoding {
            arena,
            root,
            max_depth,
            budget,
            max_expansion,
            consumed,
        } = decoded;
        let mut walk = Walk {
            uses: vec![0u32; arena.nodes.len()],
            leaf_uses: vec![0u8; arena.leaves.len() + arena.strs.count()],
            building: vec![false; arena.nodes.len()],
            arena,
            builder,
            shared: HashMap::new(),
            max_depth,
            max_expansion,
            budget,
            position: consumed,
        };
        // Uses counted from the root: objects the pickle made on the way
        // (a BUILD's state, a REDUCE's arguments) are not values.
        walk.count_use(root);
        let mut seen = vec![false; walk.arena.nodes.len()];
        let mut todo = vec![root];
        while let Some(id) = todo.pop() {
            if id & LEAF != 0 || std::mem::replace(&mut seen[id as usize], true) {
                continue;
            }
            // Out and back in, so the counts can change while it is read.
            let node = std::mem::replace(&mut walk.arena.nodes[id as usize], Node::Taken);
            for child in children(&node) {
                walk.count_use(child);
                if child & LEAF == 0 {
                    todo.push(child);
                }
            }
            walk.arena.nodes[id as usize] = node;
        }
        // An object array's items are its list's: a list used elsewhere
        // too (a hand-made pickle) gives its items one more use each (once
        // per list), so they are made once for all.
        let mut bumped = std::collections::HashSet::new();
        for index in (0..walk.arena.nodes.len()).filter(|&index| seen[index]) {
            let Node::Array(array) = &walk.arena.nodes[index] else {
                continue;
            };
            let ArrayData::Objects(list) = array.data else {
                continue;
            };
            if list & LEAF != 0 || walk.uses(list) <= 1 || !bumped.insert(list) {
                continue;
            }
            let node = std::mem::replace(&mut walk.arena.nodes[list as usize], Node::Taken);
            if let Node::List(items) = &node {
                items.iter().for_each(|&item| walk.count_use(item));
            }
            walk.arena.nodes[list as usize] = node;
        }
        walk
    }

    /// Where a leaf's count is in `leaf_uses`.
    #[inline]
    fn leaf_slot(&self, id: Id) -> usize {
        match id & STR {
            0 => (id & !LEAF) as usize,
            _ => self.arena.leaves.len() + (id & !(LEAF | STR)) as usize,
        }
    }

    fn count_use(&mut self, id: Id) {
        match id & LEAF {
            0 => self.uses[id as usize] = self.uses[id as usize].saturating_add(1),
            _ => {
                let slot = self.leaf_slot(id);
                let count = &mut self.leaf_uses[slot];
                *count = count.saturating_add(1);
            }
        }
    }

    #[inline]
    fn uses(&self, id: Id) -> u32 {
        match id & LEAF {
            0 => self.uses[id as usize],
            _ => u32::from(self.leaf_uses[self.leaf_slot(id)]),
        }
    }

    fn error(&self, reason: impl Into<String>) -> Error {
        Error::Unpickling {
            position: self.position,
            reason: reason.into(),
        }
    }

    /// Pays for `count` values holding `bytes` bytes in all.
    #[inline]
    fn spend(&mut self, count: usize, bytes: usize) -> Result<()> {
        let cost = count
            .saturating_mul(size_of::<PyValue>())
            .saturating_add(bytes);
        match self.budget.checked_sub(cost) {
            Some(left) => {
                self.budget = left;
                Ok(())
            }
            None => Err(self.error(format!(
                "the decoded values would take more than {} times the pickle's size \
                 (shared objects copied too often?); raise PickleOptions::max_expansion \
                 if the file is trusted",
                self.max_expansion
            ))),
        }
    }

    fn depth_error(&self) -> Error {
        self.error(format!(
            "objects nested deeper than {} levels (or a container that holds itself)",
            self.max_depth
        ))
    }

    pub(super) fn run(&mut self, root: Id, root_items: bool) -> Result<Built<B::Value>> {
        // The text of every `str`, paid for once (each is the pickle's own
        // bytes; a `str` used again pays its text at each other use).
        self.spend(0, self.arena.strs.text_bytes())?;
        let mut frames: Vec<Frame<B::Value>> = Vec::new();
        let mut pending = Some(root);
        loop {
            // Descend into the pending object.
            let mut value = match pending.take() {
                Some(id) => match self.open(id)? {
                    Opened::Value(value) => Some(value),
                    Opened::Frame(frame) => {
                        if frames.len() >= self.max_depth {
                            return Err(self.depth_error());
                        }
                        self.building[frame.id as usize] = true;
                        frames.push(frame);
                        None
                    }
                },
                None => None,
            };
            // Ascend: hand the value to its container until one has another child.
            loop {
                let Some(top) = frames.last_mut() else {
                    return value.map(Built::Value).ok_or_else(internal);
                };
                if let Some(value) = value.take() {
                    top.values.push(value);
                }
                // Leaves (most items) are made here, without descending.
                while let Some(&child) = top.children.get(top.next) {
                    if child & LEAF == 0 {
                        break;
                    }
                    top.next += 1;
                    let value = self.leaf_use(child)?;
                    top.values.push(value);
                }
                if let Some(&child) = top.children.get(top.next) {
                    top.next += 1;
                    pending = Some(child);
                    break;
                }
                let frame = frames.pop().ok_or_else(internal)?;
                self.building[frame.id as usize] = false;
                if root_items && frames.is_empty() {
                    let FrameKind::ObjectArray(header) = frame.kind else {
                        return Err(internal());
                    };
                    return Ok(Built::Items(header, frame.values));
                }
                value = Some(self.finish(frame)?);
            }
        }
    }

    /// A use of the object `id`: its shared value, or a new one (a leaf's)
    /// or a container to fill.
    fn open(&mut self, id: Id) -> Result<Opened<B::Value>> {
        if let Some(value) = self.reuse(id)? {
            return Ok(Opened::Value(value));
        }
        if id & LEAF != 0 {
            return self.new_leaf(id).map(Opened::Value);
        }
        if self.building[id as usize] {
            // Found again while its items are made: it holds itself.
            return Err(self.depth_error());
        }
        let budget = self.budget;
        self.spend(1, 0)?;
        // Made once (its value is kept for its other uses): taken out of
        // the arena, unless an object array may still need it as its list.
        let node = match self.uses[id as usize] {
            0 | 1 => std::mem::replace(&mut self.arena.nodes[id as usize], Node::Taken),
            _ => self.arena.nodes[id as usize].clone(),
        };
        let frame = |kind, children: Vec<Id>| {
            Opened::Frame(Frame {
                id,
                kind,
                values: Vec::with_capacity(children.len()),
                children,
                next: 0,
                budget,
            })
        };
        Ok(match node {
            Node::Tuple(items) => frame(FrameKind::Tuple, items),
            Node::List(items) => frame(FrameKind::List, items),
            Node::Set(items) => frame(FrameKind::Set, items),
            Node::FrozenSet(items) => frame(FrameKind::FrozenSet, items),
            Node::Dict(pairs) => frame(
                FrameKind::Dict,
                pairs.iter().flat_map(|&(k, v)| [k, v]).collect(),
            ),
            Node::Array(array) => match self.open_array(id, *array, budget)? {
                Opened::Frame(frame) => Opened::Frame(frame),
                Opened::Value(value) => {
                    self.keep_shared(id, &value, budget);
                    Opened::Value(value)
                }
            },
            // A builtin type as a value (Python 2's `xrange` in a list):
            // named, never called.
            Node::Global(global) if global.as_type().is_some() => {
                let value = self
                    .builder
                    .builtin_type(global.as_type().unwrap_or_default())?;
                self.keep_shared(id, &value, budget);
                Opened::Value(value)
            }
            Node::Taken => return Err(self.depth_error()),
            other => {
                return Err(self.error(format!(
                    "the pickle leaves a {} where a value belongs",
                    other.kind()
                )));
            }
        })
    }

    /// The value of a use of the leaf `id` (the walk makes most values here,
    /// without descending).
    #[inline]
    fn leaf_use(&mut self, id: Id) -> Result<B::Value> {
        match self.reuse(id)? {
            Some(value) => Ok(value),
            None => self.new_leaf(id),
        }
    }

    /// A leaf's value made now (its first use), kept if it has others.
    #[inline]
    fn new_leaf(&mut self, id: Id) -> Result<B::Value> {
        let budget = self.budget;
        let value = self.leaf(id)?;
        self.keep_shared(id, &value, budget);
        Ok(value)
    }

    /// The kept value of an object used more than once, if it was made.
    #[inline]
    fn reuse(&mut self, id: Id) -> Result<Option<B::Value>> {
        // Only objects used more than once are looked up (most are used once).
        if self.uses(id) <= 1 {
            return Ok(None);
        }
        self.reuse_shared(id)
    }

    #[cold]
    fn reuse_shared(&mut self, id: Id) -> Result<Option<B::Value>> {
        let Some(shared) = self.shared.get_mut(&id) else {
            return Ok(None);
        };
        let cost = shared.cost;
        shared.uses_left = shared.uses_left.saturating_sub(1);
        let value = match shared.uses_left {
            // A saturated count never frees its value: cloned every time.
            0 => self
                .shared
                .remove(&id)
                .map(|shared| shared.value)
                .ok_or_else(internal)?,
            _ => shared.value.clone(),
        };
        self.spend(0, cost)?;
        Ok(Some(value))
    }

    /// Keeps the value of `id` for its other uses, if it has any; `budget`
    /// is what was left before it was made.
    #[inline]
    fn keep_shared(&mut self, id: Id, value: &B::Value, budget: usize) {
        let uses = self.uses(id);
        if uses > 1 {
            self.keep(id, uses, value, budget);
        }
    }

    /// [`keep_shared`](Self::keep_shared) of an object used `uses` times.
    #[cold]
    fn keep(&mut self, id: Id, uses: u32, value: &B::Value, budget: usize) {
        // A `str`'s text was paid for once at the start: each other use
        // pays it again.
        let text = match id & (LEAF | STR) {
            both if both == LEAF | STR => {
                let index = (id & !(LEAF | STR)) as usize;
                self.arena.strs.len(index, value, self.builder)
            }
            _ => 0,
        };
        let shared = Shared {
            value: value.clone(),
            cost: budget - self.budget + text,
            uses_left: if uses >= u32::from(u8::MAX) && id & LEAF != 0 {
                u32::MAX
            } else {
                uses - 1
            },
        };
        self.shared.insert(id, shared);
    }

    /// The value of the leaf `id`.
    #[inline]
    fn leaf(&mut self, id: Id) -> Result<B::Value> {
        if id & STR != 0 {
            // Its text was paid for at the start.
            self.spend(1, 0)?;
            let index = (id & !(LEAF | STR)) as usize;
            return self.arena.strs.value(index, self.builder);
        }
        let leaf = &self.arena.leaves[(id & !LEAF) as usize];
        let payload = match leaf {
            Leaf::BigInt(span) | Leaf::Bytes(span) | Leaf::ByteArray(span) => span.len(),
            Leaf::Scalar(scalar) => scalar.bytes.len(),
            _ => 0,
        };
        self.spend(1, payload)?;
        let arena = &self.arena;
        let builder = &mut *self.builder;
        match &arena.leaves[(id & !LEAF) as usize] {
            Leaf::None => builder.none(),
            Leaf::Bool(b) => builder.bool(*b),
            Leaf::Int(n) => builder.int(*n),
            Leaf::BigInt(span) => builder.big_int(arena.bytes_at(*span)),
            Leaf::Float(x) => builder.float(*x),
            Leaf::Complex(re, im) => builder.complex(*re, *im),
            Leaf::Bytes(span) => builder.bytes(arena.bytes_at(*span)),
            Leaf::ByteArray(span) => builder.byte_array(arena.bytes_at(*span)),
            Leaf::Scalar(scalar) => builder.scalar(scalar),
        }
    }

    fn open_array(&mut self, id: Id, array: ArrayNode, budget: usize) -> Result<Opened<B::Value>> {
        match (array.elem, array.data) {
            (Elem::Data(dtype), ArrayData::Bytes(bytes)) => {
                self.spend(0, bytes.len())?;
                let header = Header::new(dtype, array.order, array.shape);
                let array = NpyArray::from_data(header, bytes)?;
                Ok(Opened::Value(self.builder.array(array)?))
            }
            (Elem::Object, ArrayData::Objects(list)) => {
                // The list is not a value here: its items are the array's.
                // Taken, unless something else uses it as a list.
                let ids = match &mut self.arena.nodes[list as usize] {
                    Node::List(ids) if self.uses[list as usize] <= 1 => std::mem::take(ids),
                    Node::List(ids) => {
                        self.uses[list as usize] -= 1;
                        ids.clone()
                    }
                    _ => return Err(self.error("an object array's items must be a list")),
                };
                let header = Header::new(DType::Object, array.order, array.shape);
                let count = header
                    .element_count()
                    .map_err(|e| self.error(e.to_string()))?;
                if ids.len() != count {
                    return Err(self.error(format!(
                        "an object array of shape {} holds {} items",
                        crate::pyrepr::shape_repr(&header.shape),
                        ids.len()
                    )));
                }
                // The list is in C order; the array keeps its memory order.
                let children = match header.order {
                    Order::C => ids,
                    Order::Fortran => c_to_fortran(&ids, &header.shape),
                };
                // Strings made in a run, each used once: taken in one move.
                let (values, children) = match self.take_run(&children)? {
                    Some(values) => (values, Vec::new()),
                    None => (Vec::with_capacity(children.len()), children),
                };
                Ok(Opened::Frame(Frame {
                    id,
                    kind: FrameKind::ObjectArray(header),
                    values,
                    children,
                    next: 0,
                    budget,
                }))
            }
            _ => Err(self.error("an array's data does not match its dtype")),
        }
    }

    /// The values of `children` in one move, if they are `str`s made one
    /// after another, each used only here, and the `str`s are kept so
    /// ([`StrValues::take_run`]).
    fn take_run(&mut self, children: &[Id]) -> Result<Option<Vec<B::Value>>> {
        let Some(&first) = children.first() else {
            return Ok(None);
        };
        if first & (LEAF | STR) != LEAF | STR {
            return Ok(None);
        }
        let run = children
            .iter()
            .zip(u64::from(first)..)
            .all(|(&child, expected)| u64::from(child) == expected && self.uses(child) == 1);
        if !run {
            return Ok(None);
        }
        let start = (first & !(LEAF | STR)) as usize;
        let Some(values) = self.arena.strs.take_run(start, children.len()) else {
            return Ok(None);
        };
        // What making them one by one would have spent (their text was
        // paid for at the start).
        self.spend(values.len(), 0)?;
        Ok(Some(values))
    }

    /// The value of a filled container, kept if it has other uses.
    fn finish(&mut self, frame: Frame<B::Value>) -> Result<B::Value> {
        let values = frame.values;
        let builder = &mut *self.builder;
        let value = match frame.kind {
            FrameKind::Tuple => builder.tuple(values)?,
            FrameKind::List => builder.list(values)?,
            FrameKind::Set => builder.set(values)?,
            FrameKind::FrozenSet => builder.frozen_set(values)?,
            FrameKind::Dict => {
                let mut pairs = Vec::with_capacity(values.len() / 2);
                let mut items = values.into_iter();
                while let (Some(key), Some(value)) = (items.next(), items.next()) {
                    pairs.push((key, value));
                }
                builder.dict(pairs)?
            }
            FrameKind::ObjectArray(header) => builder.object_array(header, values)?,
        };
        self.keep_shared(frame.id, &value, frame.budget);
        Ok(value)
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

/// The walk always finds the frame it pushed.
pub(super) fn internal() -> Error {
    Error::Unpickling {
        position: 0,
        reason: "internal error: no open container".to_owned(),
    }
}

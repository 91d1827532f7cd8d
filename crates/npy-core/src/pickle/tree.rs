//! Turning the unpickler's arena into [`PyValue`]s: without recursion,
//! moving each object out at its last use and copying shared ones within a
//! budget, so a pickle cannot make its output explode through the memo.

use super::arena::{Arena, ArrayData, ArrayNode, Elem, Id, LEAF, Node};
use super::options::PickleOptions;
use crate::array::{NpyArray, PyValue, c_to_fortran};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::header::{Header, Order};

/// The value of the object `top` (the pickle's result), copying shared
/// objects within the budget: `max_expansion` times the `consumed` bytes of
/// pickle, plus 1 MiB.
pub(super) fn into_value(
    arena: Arena,
    top: Id,
    options: &PickleOptions,
    consumed: u64,
) -> Result<PyValue> {
    let limit = options
        .max_expansion
        .saturating_mul(usize::try_from(consumed).unwrap_or(usize::MAX))
        .saturating_add(1 << 20);
    Builder::new(arena.nodes, arena.leaves, top, options, limit, consumed).build(top)
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
            // A builtin type as a value (Python 2's `xrange` in a list):
            // named, never called.
            Node::Global(global) if global.as_type().is_some() => Opened::Value(PyValue::Type(
                global.as_type().unwrap_or_default().to_owned(),
            )),
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
                        crate::pyrepr::shape_repr(&header.shape),
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

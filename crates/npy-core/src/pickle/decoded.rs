//! A decoded pickle before its values are made: [`Decoded`] (its `str`s
//! kept as text, for any [`Build`] later) and, inside the crate, the one
//! pass's [`Decoding`] of [`Made`] `str`s (made at once by the builder that
//! makes the rest).

use super::arena::{Arena, Elem, Id, Node};
use super::build::{Build, Built, Walk, internal};
use super::options::PickleOptions;
use super::strs::{Made, Texts};
use crate::error::Result;
use crate::header::Header;

/// A pickle decoded up to its `STOP`, before its values are made: the
/// objects the unpickler found (checked as far as decoding can check them:
/// opcodes, globals, numpy's patterns), which [`build`](Self::build) turns
/// into values with any [`Build`]. It holds no borrowed data and nothing
/// of Python's: decode without the GIL, build with it.
#[derive(Debug)]
pub struct Decoded(Decoding<Texts>);

impl Decoded {
    pub(crate) fn new(decoding: Decoding<Texts>) -> Self {
        Decoded(decoding)
    }

    /// The bytes of pickle decoded, up to and including its `STOP`.
    pub fn consumed(&self) -> u64 {
        self.0.consumed
    }

    /// The pickle's value, made by `builder`.
    ///
    /// Errors: [`Error::Unpickling`] for objects that are not values (a
    /// global that is not a type, an array under construction), containers
    /// that hold themselves or nest deeper than
    /// [`PickleOptions::max_depth`], values beyond the
    /// [`max_expansion`](PickleOptions::max_expansion) budget, and the
    /// builder's own errors.
    pub fn build<B: Build>(self, builder: &mut B) -> Result<B::Value> {
        self.0.build(builder)
    }

    /// See [`Decoding::build_object_items`].
    pub(crate) fn build_object_items<B: Build>(
        self,
        builder: &mut B,
    ) -> Result<(Header, Vec<B::Value>)> {
        self.0.build_object_items(builder)
    }
}

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

impl<S> Decoding<S> {
    pub(super) fn new(arena: Arena<S>, root: Id, options: &PickleOptions, consumed: u64) -> Self {
        let budget = options
            .max_expansion
            .saturating_mul(usize::try_from(consumed).unwrap_or(usize::MAX))
            .saturating_add(1 << 20);
        Decoding {
            arena,
            root,
            max_depth: options.max_depth,
            budget,
            max_expansion: options.max_expansion,
            consumed,
        }
    }

    /// The bytes of pickle decoded, up to and including its `STOP`.
    pub(crate) fn consumed(&self) -> u64 {
        self.consumed
    }

    /// What the pickle holds when it is not an object array, for messages:
    /// `None` for an object array, else its header if it is a numpy array
    /// (of data) or its Python type's name.
    pub(crate) fn not_object_array(&self) -> Option<std::result::Result<Header, &'static str>> {
        match self.arena.node(self.root) {
            super::arena::View::Node(Node::Array(array)) => match (&array.elem, &array.data) {
                (Elem::Object, _) => None,
                (Elem::Data(dtype), _) => Some(Ok(Header::new(
                    dtype.clone(),
                    array.order,
                    array.shape.clone(),
                ))),
            },
            super::arena::View::Node(Node::NewArray) => Some(Err("numpy.ndarray")),
            super::arena::View::Node(Node::Global(_)) => Some(Err("type")),
            other => Some(Err(match other.kind() {
                "numpy dtype" => "numpy.dtype",
                kind => kind,
            })),
        }
    }

    /// The shape of the object array the pickle holds (after
    /// [`not_object_array`](Self::not_object_array) said it is one).
    pub(crate) fn object_array_shape(&self) -> Option<&[usize]> {
        match self.arena.node(self.root) {
            super::arena::View::Node(Node::Array(array)) => Some(&array.shape),
            _ => None,
        }
    }

    /// The pickle's value, made by `builder` (its `str`s taken from `S`).
    fn build<B: Build>(self, builder: &mut B) -> Result<B::Value>
    where
        S: StrValues<B>,
    {
        let root = self.root;
        match Walk::new(self, builder).run(root, false)? {
            Built::Value(value) => Ok(value),
            Built::Items(..) => Err(internal()),
        }
    }

    /// The items of the object array the pickle holds, in its memory
    /// order, made by `builder` (the array itself is the caller's to make).
    fn build_object_items<B: Build>(self, builder: &mut B) -> Result<(Header, Vec<B::Value>)>
    where
        S: StrValues<B>,
    {
        let root = self.root;
        match Walk::new(self, builder).run(root, true)? {
            Built::Items(header, items) => Ok((header, items)),
            Built::Value(_) => Err(internal()),
        }
    }
}

impl<'b, B: Build> Decoding<Made<'b, B>> {
    /// The values made so far and the builder, to make the rest.
    fn made(self) -> (Decoding<MadeValues<B::Value>>, &'b mut B) {
        let mut builder = None;
        let arena = self.arena.map_strs(|made| {
            builder = Some(made.builder);
            MadeValues::new(made.values, made.text_bytes)
        });
        let decoding = Decoding {
            arena,
            root: self.root,
            max_depth: self.max_depth,
            budget: self.budget,
            max_expansion: self.max_expansion,
            consumed: self.consumed,
        };
        match builder {
            Some(builder) => (decoding, builder),
            None => unreachable!("map_strs calls its closure"),
        }
    }

    /// The pickle's value: its containers made by the builder that made
    /// its `str`s.
    pub(crate) fn build_made(self) -> Result<B::Value> {
        let (decoding, builder) = self.made();
        decoding.build(builder)
    }

    /// The items of the object array the pickle holds, in its memory
    /// order, made by the builder that made its `str`s.
    pub(crate) fn build_made_items(self) -> Result<(Header, Vec<B::Value>)> {
        let (decoding, builder) = self.made();
        decoding.build_object_items(builder)
    }
}

/// How the walk gets a `str`'s value at its first use.
pub(super) trait StrValues<B: Build> {
    /// How many `str`s there are.
    fn count(&self) -> usize;
    /// The bytes of text of all the `str`s.
    fn text_bytes(&self) -> usize;
    /// The bytes of text of `str` `index`, whose value is `value`.
    fn len(&self, index: usize, value: &B::Value, builder: &B) -> usize;
    /// The value of `str` `index`, at its first use.
    fn value(&mut self, index: usize, builder: &mut B) -> Result<B::Value>;
    /// The values of the `count` `str`s from `first` on, each at its
    /// first use, in one move if they are at hand (the items of an object
    /// array of strings, as `np.save` writes it); `None` leaves them to
    /// [`value`](Self::value).
    fn take_run(&mut self, _first: usize, _count: usize) -> Option<Vec<B::Value>> {
        None
    }
}

impl<B: Build> StrValues<B> for Texts {
    fn count(&self) -> usize {
        super::strs::Strs::count(self)
    }
    fn text_bytes(&self) -> usize {
        self.total_len()
    }
    fn len(&self, index: usize, _value: &B::Value, _builder: &B) -> usize {
        self.checked(index).len()
    }
    #[inline]
    fn value(&mut self, index: usize, builder: &mut B) -> Result<B::Value> {
        builder.str(self.checked(index))
    }
}

/// The values of the `str`s the one pass made, until the walk takes them:
/// in `head`, but for one run of them an object array took at once
/// (`hole`), the ones after it in `tail`.
pub(super) struct MadeValues<V> {
    /// The bytes of text the pickle gave them.
    text_bytes: usize,
    head: Vec<Option<V>>,
    hole: Option<std::ops::Range<usize>>,
    tail: Vec<Option<V>>,
}

impl<V> MadeValues<V> {
    fn new(values: Vec<Option<V>>, text_bytes: usize) -> Self {
        MadeValues {
            text_bytes,
            head: values,
            hole: None,
            tail: Vec::new(),
        }
    }

    /// Where the value of `str` `index` is (`None`: taken in the run).
    fn slot(&mut self, index: usize) -> Option<&mut Option<V>> {
        match &self.hole {
            Some(hole) if hole.contains(&index) => None,
            Some(hole) if index >= hole.end => self.tail.get_mut(index - hole.end),
            _ => self.head.get_mut(index),
        }
    }
}

impl<B: Build> StrValues<B> for MadeValues<B::Value> {
    fn count(&self) -> usize {
        let run = self.hole.as_ref().map_or(0, |hole| hole.len());
        self.head.len() + run + self.tail.len()
    }
    fn text_bytes(&self) -> usize {
        self.text_bytes
    }
    fn len(&self, _index: usize, value: &B::Value, builder: &B) -> usize {
        builder.str_text(value).map_or(0, |text| text.len())
    }
    #[inline]
    fn value(&mut self, index: usize, _builder: &mut B) -> Result<B::Value> {
        self.slot(index).and_then(Option::take).ok_or_else(internal)
    }
    fn take_run(&mut self, first: usize, count: usize) -> Option<Vec<B::Value>> {
        let end = first.checked_add(count)?;
        let run = self.head.get(first..end)?;
        if self.hole.is_some() || run.iter().any(Option::is_none) {
            return None;
        }
        // The strs after the run and before it (a few: a global's names)
        // moved out, the run's values kept where they were made.
        self.tail = self.head.split_off(end);
        let mut run = std::mem::take(&mut self.head);
        self.head = run.drain(..first).collect();
        self.hole = Some(first..end);
        // In place (the same allocation: an `Option` of a value the size
        // of the value); every one is there (checked above).
        let values: Vec<B::Value> = run.into_iter().map_while(|value| value).collect();
        (values.len() == count).then_some(values)
    }
}

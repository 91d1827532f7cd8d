//! A decoded pickle before its values are made: [`Decoded`] (its `str`s
//! kept as text, for any [`Build`] later) and, inside the crate, the one
//! pass's [`Decoding`] of [`Made`] `str`s (made at once by the builder that
//! makes the rest).

use super::arena::{Arena, Elem, Id, Node};
use super::build::{Built, Decoding, Walk, internal};
use super::builder::Build;
use super::options::PickleOptions;
use super::strs::{Made, MadeValues, StrValues, Texts};
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
    /// Errors: [`Error::Unpickling`](crate::Error::Unpickling) for objects that are not values (a
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

//! A bounded parser for the Python literals found in `.npy` headers.
//!
//! NumPy reads the header dict with `ast.literal_eval`, so any Python literal
//! syntax is valid there: either quote style, string prefixes (`u`, `r`, `b`),
//! escapes, implicit string concatenation, hex/octal/binary integers with `_`
//! separators, signs, `True`/`False`/`None`, tuples, lists and dicts with or
//! without trailing commas, comments and line continuations. This module reads
//! that subset in one left-to-right pass:
//!
//! * linear time: every input byte is looked at a bounded number of times;
//! * no recursion: containers live on an explicit stack, at most
//!   `parser::MAX_NESTING` deep;
//! * allocation proportional to the input only: strings and floats without
//!   escapes or separators borrow from the text, and the items of all the
//!   containers share one list (a container is a range of it), so a header
//!   costs a couple of allocations however many fields its dtype has.
//!
//! Not supported (all refused as syntax errors): sets, complex numbers,
//! `\N{name}` escapes, lone surrogates (`'\ud800'`), and operators other than a
//! sign directly before a number. None of these can describe an array.
//!
//! Rooms, bottom first: `value` (what a literal is, and its `repr()`),
//! `lexer` (tokens), `parser` (the pass that builds the literal).

mod lexer;
mod parser;
mod value;

pub(crate) use parser::{Options, parse};
pub(crate) use value::{Literal, Value};

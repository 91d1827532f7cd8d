//! Object arrays without running code: a restricted unpickler and a pickler
//! for numpy's `dtype=object` data.
//!
//! `np.save` writes an object array as its header (descr `'|O'`) followed by
//! `pickle.dump(array, protocol=4)`. numpy reads that back only with
//! `allow_pickle=True`, because Python's unpickler calls whatever the pickle
//! names. This module decodes the same data without calling anything:
//!
//! * The unpickler is a bounded stack machine for the binary opcodes of
//!   protocols 2 to 5 (frames, memo, `MARK`-based containers, `LONG1`,
//!   Python 2 strings). Text opcodes (protocol 0/1), persistent ids,
//!   extension codes, `NEWOBJ`/`INST`/`OBJ` and out-of-band buffers are
//!   refused, naming the opcode.
//! * `GLOBAL`/`STACK_GLOBAL` resolve against a fixed table of what numpy's
//!   pickles name: `numpy._core.multiarray._reconstruct` (and numpy 1.x's
//!   `numpy.core.multiarray`, numpy 0.x's `numpy.core._internal`),
//!   `numpy.ndarray`, `numpy.dtype`,
//!   `numpy._core.multiarray.scalar`, `numpy._core.numeric._frombuffer`
//!   (protocol 5), and the builtins that protocol 2 spells as calls
//!   (`set`, `frozenset`, `bytearray`, `bytes`, `complex`,
//!   `_codecs.encode`). A builtin type that is a *value* rather than
//!   called (Python 2's `__builtin__.xrange` in a list, numpy's own test
//!   file `py2-objarr.npy`) becomes [`PyValue::Type`] under Python 3's name
//!   (`range`), as Python's `fix_imports` maps it: a name, nothing runs.
//!   Any other global (`os.system`, `pandas…`,
//!   `datetime.date`) is an error that names it. `REDUCE` and `BUILD` on
//!   the allowed globals are *interpreted* by their known pattern
//!   (`_reconstruct(ndarray, (0,), b'b')` then `BUILD` with `(version,
//!   shape, dtype, is_fortran, data)`); nothing is ever called.
//! * Bounded: memory while decoding follows the input (one arena node per
//!   opcode, payloads copied from the input as it arrives, never allocated
//!   from a declared length); the decoded values may take at most
//!   [`PickleOptions::max_expansion`] times the pickle's size (shared objects
//!   are copied, so a memo reference costs what it copies), and nest at most
//!   [`PickleOptions::max_depth`] deep. Time is linear in the input plus the
//!   output.
//!
//! Decoded values are [`PyValue`]s; the array itself is an
//! [`NpyArray`] whose [`objects`](crate::NpyArray::objects)
//! are its values. Readers ([`read_npy`](crate::read_npy), and npy-mmap's
//! `load` and npz reader) decode object arrays when
//! [`ParseOptions::allow_pickle`](crate::ParseOptions) is set, and
//! [`write_npy`](crate::io::write_npy) writes them as numpy does.
//!
//! ```
//! use npy_core::pickle::{self, PickleOptions, PyValue};
//!
//! let value = PyValue::List(vec!["abc".into(), 1.into(), PyValue::None]);
//! let bytes = pickle::dumps(&value)?;
//! assert_eq!(pickle::loads(&bytes, &PickleOptions::default())?, value);
//!
//! // A pickle that names os.system is refused, naming it.
//! let evil = b"\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x02id\x85R.";
//! let error = pickle::loads(evil, &PickleOptions::default()).unwrap_err();
//! assert!(error.to_string().contains("'os.system' is not allowed"));
//! # Ok::<(), npy_core::Error>(())
//! ```

mod arena;
mod build;
mod builder;
mod decoded;
mod globals;
mod input;
mod opcodes;
mod options;
mod reduce;
mod strs;
mod value;
mod vm;
mod write;

use std::io::Read;

pub use crate::array::{NumpyScalar, PyValue};
pub(crate) use build::Decoding;
pub use builder::{Build, Tree};
pub use decoded::Decoded;
pub use options::{Encoding, PickleOptions};

use crate::array::NpyArray;
use crate::error::Result;

/// Decodes one pickle from `reader`, reading exactly up to its `STOP`
/// opcode (so several can follow each other); returns the value and the
/// number of bytes read.
///
/// Errors: [`Error::Unpickling`](crate::Error::Unpickling) for anything the
/// restricted unpickler refuses or finds malformed, read errors.
pub fn unpickle<R: Read>(reader: R, options: &PickleOptions) -> Result<(PyValue, u64)> {
    let decoded = decode(reader, options)?;
    let consumed = decoded.consumed();
    Ok((decoded.build(&mut Tree)?, consumed))
}

/// Decodes one pickle from `reader` up to its `STOP` opcode (so several can
/// follow each other), without making its values: [`Decoded::build`] makes
/// them with any [`Build`] (Python objects straight from the pickle's text,
/// say). [`unpickle`] is this with [`Tree`].
///
/// Errors: as [`unpickle`]'s, less those of making the values.
pub fn decode<R: Read>(reader: R, options: &PickleOptions) -> Result<Decoded> {
    decode_texts(reader, options).map(Decoded::new)
}

/// [`decode`], its `str`s kept as text.
pub(crate) fn decode_texts<R: Read>(
    reader: R,
    options: &PickleOptions,
) -> Result<Decoding<strs::Texts>> {
    vm::Unpickler::new(reader, options, strs::Texts::default()).run()
}

/// Decodes one pickle from `reader` up to its `STOP` and makes its value
/// with `builder` in one pass: each `str` made as the unpickler reads it
/// (no copy of its text, no second walk over the strings: what object
/// arrays hold most), the containers at the end, as [`Decoded::build`]
/// makes them. Returns the value and the number of bytes read. What
/// `builder` needs (Python's GIL) is needed for the whole decode; the
/// same pickles are refused as by [`decode`] then [`Decoded::build`].
///
/// ```
/// use npy_core::pickle::{self, PickleOptions, PyValue, Tree};
///
/// let value = PyValue::List(vec!["a".into(), "bc".into(), 1.into()]);
/// let bytes = pickle::dumps(&value)?;
/// let (made, used) = pickle::build(bytes.as_slice(), &PickleOptions::default(), &mut Tree)?;
/// assert_eq!((made, used), (value, bytes.len() as u64));
/// # Ok::<(), npy_core::Error>(())
/// ```
///
/// Errors: as [`decode`]'s and [`Decoded::build`]'s.
pub fn build<R: Read, B: Build>(
    reader: R,
    options: &PickleOptions,
    builder: &mut B,
) -> Result<(B::Value, u64)> {
    let decoding = decode_made(reader, options, builder, 0)?;
    let consumed = decoding.consumed();
    Ok((decoding.build_made()?, consumed))
}

/// The one pass's decode: the `str`s made by `builder` as they are read,
/// room made at once for `expected` of them (their memo entries, the items
/// of the first list) rather than grown (and copied) as they come.
pub(crate) fn decode_made<'b, R: Read, B: Build>(
    reader: R,
    options: &PickleOptions,
    builder: &'b mut B,
    expected: usize,
) -> Result<Decoding<strs::Made<'b, B>>> {
    let made = strs::Made {
        builder,
        text_bytes: 0,
        values: Vec::with_capacity(expected),
    };
    let mut unpickler = vm::Unpickler::new(reader, options, made);
    unpickler.reserve(expected);
    unpickler.run()
}

/// Decodes a pickle that must fill `bytes` exactly.
pub fn loads(bytes: &[u8], options: &PickleOptions) -> Result<PyValue> {
    let (value, used) = unpickle(bytes, options)?;
    if used != bytes.len() as u64 {
        return Err(crate::error::Error::Unpickling {
            position: used,
            reason: format!(
                "{} bytes follow the pickle's STOP opcode",
                bytes.len() as u64 - used
            ),
        });
    }
    Ok(value)
}

/// The protocol-4 pickle of `value`, as Python's `pickle.dumps` would load it
/// (numpy arrays as numpy pickles them).
pub fn dumps(value: &PyValue) -> Result<Vec<u8>> {
    let mut pickler = write::Pickler::new();
    pickler.value(value)?;
    Ok(pickler.finish())
}

/// The pickle `np.save` writes after the header of `array`.
pub(crate) fn pickle_array(array: &NpyArray) -> Result<Vec<u8>> {
    write::pickle_array(array)
}

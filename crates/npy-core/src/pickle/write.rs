//! The pickler: protocol 4, the opcodes and globals numpy's own pickles use.

use std::collections::HashMap;

use super::globals::Global;
use super::opcodes::*;
use crate::array::{NpyArray, PyValue, fortran_to_c};
use crate::dtype::{ByteOrder, DType, Scalar, ScalarKind};
use crate::error::{Error, Result};
use crate::header::Order;

/// Deepest nesting the writer follows (the reader's default limit).
const MAX_DEPTH: usize = super::options::DEFAULT_MAX_DEPTH;

/// Python's pickler batches APPENDS/SETITEMS by 1000 items.
const BATCH: usize = 1000;

pub(super) struct Pickler {
    out: Vec<u8>,
    /// Memo index of each global already written.
    globals: HashMap<Global, u32>,
    next_memo: u32,
}

impl Pickler {
    pub(super) fn new() -> Self {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(&[PROTO, 4]);
        Pickler {
            out,
            globals: HashMap::new(),
            next_memo: 0,
        }
    }

    pub(super) fn finish(mut self) -> Vec<u8> {
        self.out.push(STOP);
        self.out
    }

    fn global(&mut self, global: Global) {
        if let Some(&index) = self.globals.get(&global) {
            self.get(index);
            return;
        }
        let (module, name) = global.path();
        self.str(module);
        self.str(name);
        self.out.push(STACK_GLOBAL);
        self.out.push(MEMOIZE);
        self.globals.insert(global, self.next_memo);
        self.next_memo += 1;
    }

    fn get(&mut self, index: u32) {
        match u8::try_from(index) {
            Ok(i) => self.out.extend_from_slice(&[BINGET, i]),
            Err(_) => {
                self.out.push(LONG_BINGET);
                self.out.extend_from_slice(&index.to_le_bytes());
            }
        }
    }

    fn int(&mut self, n: i64) {
        match n {
            0..=0xff => self.out.extend_from_slice(&[BININT1, n as u8]),
            0x100..=0xffff => {
                self.out.push(BININT2);
                self.out.extend_from_slice(&(n as u16).to_le_bytes());
            }
            _ if i32::try_from(n).is_ok() => {
                self.out.push(BININT);
                self.out.extend_from_slice(&(n as i32).to_le_bytes());
            }
            _ => self.long(&PyValue::Int(n).int_le_bytes().unwrap_or_default()),
        }
    }

    fn long(&mut self, bytes: &[u8]) {
        match u8::try_from(bytes.len()) {
            Ok(len) => self.out.extend_from_slice(&[LONG1, len]),
            Err(_) => {
                self.out.push(LONG4);
                self.out
                    .extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            }
        }
        self.out.extend_from_slice(bytes);
    }

    fn str(&mut self, s: &str) {
        self.sized(s.as_bytes(), SHORT_BINUNICODE, BINUNICODE, BINUNICODE8);
    }

    fn bytes(&mut self, b: &[u8]) {
        self.sized(b, SHORT_BINBYTES, BINBYTES, BINBYTES8);
    }

    /// A payload with a 1-, 4- or 8-byte length, whichever is shortest.
    fn sized(&mut self, payload: &[u8], short: u8, long: u8, huge: u8) {
        if let Ok(len) = u8::try_from(payload.len()) {
            self.out.extend_from_slice(&[short, len]);
        } else if let Ok(len) = u32::try_from(payload.len()) {
            self.out.push(long);
            self.out.extend_from_slice(&len.to_le_bytes());
        } else {
            self.out.push(huge);
            self.out
                .extend_from_slice(&(payload.len() as u64).to_le_bytes());
        }
        self.out.extend_from_slice(payload);
    }

    fn float(&mut self, x: f64) {
        self.out.push(BINFLOAT);
        self.out.extend_from_slice(&x.to_be_bytes());
    }

    /// Closes a tuple of the `count` items just written (after a MARK
    /// when `count` is above 3).
    fn tuple_of(&mut self, count: usize) {
        self.out.push(tuple_op(count));
    }

    /// Writes `root`, without recursion: containers push their parts as
    /// tasks, so nesting costs heap, not stack.
    pub(super) fn value(&mut self, root: &PyValue) -> Result<()> {
        self.run(vec![Task::Value(root, 0)])
    }

    fn run<'v>(&mut self, mut tasks: Vec<Task<'v>>) -> Result<()> {
        while let Some(task) = tasks.pop() {
            let (value, depth) = match task {
                Task::Op(op) => {
                    self.out.push(op);
                    continue;
                }
                Task::Value(value, depth) => (value, depth),
            };
            if depth > MAX_DEPTH {
                return Err(Error::PyValueType {
                    found: value.type_name(),
                    wanted: format!("a value nested at most {MAX_DEPTH} levels deep"),
                });
            }
            match value {
                PyValue::None => self.out.push(NONE),
                PyValue::Bool(true) => self.out.push(NEWTRUE),
                PyValue::Bool(false) => self.out.push(NEWFALSE),
                PyValue::Int(n) => self.int(*n),
                PyValue::BigInt(bytes) => self.long(bytes),
                PyValue::Float(x) => self.float(*x),
                PyValue::Complex(re, im) => {
                    self.global(Global::Complex);
                    self.float(*re);
                    self.float(*im);
                    self.out.extend_from_slice(&[TUPLE2, REDUCE]);
                }
                PyValue::Str(s) => self.str(s),
                PyValue::Bytes(b) => self.bytes(b),
                PyValue::ByteArray(b) => {
                    self.global(Global::ByteArray);
                    self.bytes(b);
                    self.out.extend_from_slice(&[TUPLE1, REDUCE]);
                }
                PyValue::Tuple(items) => {
                    if items.len() > 3 {
                        self.out.push(MARK);
                    }
                    tasks.push(Task::Op(tuple_op(items.len())));
                    push_values(&mut tasks, items.iter(), depth);
                }
                PyValue::List(items) => {
                    self.out.push(EMPTY_LIST);
                    push_batches(&mut tasks, items.iter().collect(), depth, APPENDS);
                }
                PyValue::Set(items) => {
                    self.out.push(EMPTY_SET);
                    push_batches(&mut tasks, items.iter().collect(), depth, ADDITEMS);
                }
                PyValue::FrozenSet(items) => {
                    self.out.push(MARK);
                    tasks.push(Task::Op(FROZENSET));
                    push_values(&mut tasks, items.iter(), depth);
                }
                PyValue::Dict(items) => {
                    self.out.push(EMPTY_DICT);
                    let flat: Vec<&PyValue> = items.iter().flat_map(|(k, v)| [k, v]).collect();
                    for batch in flat.chunks(2 * BATCH).rev() {
                        tasks.push(Task::Op(SETITEMS));
                        push_values(&mut tasks, batch.iter().copied(), depth);
                        tasks.push(Task::Op(MARK));
                    }
                }
                PyValue::Array(array) => self.array(array, depth, &mut tasks)?,
                PyValue::Type(name) => match Global::lookup("builtins", name) {
                    Some(global) if global.as_type() == Some(name.as_str()) => self.global(global),
                    _ => {
                        return Err(Error::PyValueType {
                            found: "type",
                            wanted: format!(
                                "a builtin type the unpickler reads back (not {name:?})"
                            ),
                        });
                    }
                },
                PyValue::Scalar(scalar) => {
                    self.global(Global::Scalar);
                    self.dtype(&scalar.dtype)?;
                    self.bytes(&scalar.bytes);
                    self.out.extend_from_slice(&[TUPLE2, REDUCE]);
                }
            }
        }
        Ok(())
    }

    /// `_reconstruct(ndarray, (0,), b'b')` then BUILD with
    /// `(1, shape, dtype, is_fortran, data)`, as `ndarray.__reduce__` gives;
    /// an object array's items become tasks.
    fn array<'v>(
        &mut self,
        array: &'v NpyArray,
        depth: usize,
        tasks: &mut Vec<Task<'v>>,
    ) -> Result<()> {
        let header = array.header();
        self.global(Global::Reconstruct);
        self.global(Global::NdArray);
        self.int(0);
        self.out.push(TUPLE1);
        self.bytes(b"b");
        self.out.extend_from_slice(&[TUPLE3, REDUCE]);
        self.out.push(MARK);
        self.int(1);
        for &dim in &header.shape {
            self.int(dim as i64);
        }
        self.tuple_of(header.shape.len());
        self.dtype(&header.dtype)?;
        self.out.push(if header.order == Order::Fortran {
            NEWTRUE
        } else {
            NEWFALSE
        });
        tasks.push(Task::Op(BUILD));
        tasks.push(Task::Op(TUPLE));
        match array.objects() {
            // numpy lists an object array's items in C order whatever its layout.
            Some(values) => {
                self.out.push(EMPTY_LIST);
                let refs: Vec<&'v PyValue> = values.iter().collect();
                let c_order = match header.order {
                    Order::C => refs,
                    Order::Fortran => fortran_to_c(&refs, &header.shape),
                };
                push_batches(tasks, c_order, depth, APPENDS);
            }
            None => self.bytes(array.bytes()),
        }
        Ok(())
    }

    /// `dtype(type, False, True)` with BUILD of numpy's state tuple.
    fn dtype(&mut self, dtype: &DType) -> Result<()> {
        self.global(Global::DType);
        let (type_str, order, elsize, alignment, flags) = match dtype {
            DType::Object => ("O8".to_owned(), '|', -1, -1, 63),
            DType::Scalar(s) => scalar_state(s),
            DType::Structured(r) => (format!("V{}", r.itemsize), '|', r.itemsize as i64, 1, 16),
            DType::SubArray(base, _) => (
                format!("V{}", dtype.itemsize()),
                '|',
                dtype.itemsize() as i64,
                base_alignment(base),
                0,
            ),
        };
        self.str(&type_str);
        // dtype(type_str, False, True): align=False, copy=True.
        self.out
            .extend_from_slice(&[NEWFALSE, NEWTRUE, TUPLE3, REDUCE]);
        self.out.push(MARK);
        let datetime_unit = match dtype {
            DType::Scalar(Scalar {
                kind: ScalarKind::DateTime(unit) | ScalarKind::TimeDelta(unit),
                ..
            }) => Some(*unit),
            _ => None,
        };
        self.int(if datetime_unit.is_some() { 4 } else { 3 });
        self.str(&order.to_string());
        match dtype {
            DType::SubArray(base, shape) => {
                self.dtype(base)?;
                for &dim in shape {
                    self.int(dim as i64);
                }
                self.tuple_of(shape.len());
                self.out.push(TUPLE2);
            }
            _ => self.out.push(NONE),
        }
        match dtype {
            DType::Structured(record) => {
                self.out.push(MARK);
                for field in &record.fields {
                    self.str(&field.name);
                }
                self.out.push(TUPLE);
                self.out.push(EMPTY_DICT);
                self.out.push(MARK);
                for field in &record.fields {
                    let entry = |p: &mut Pickler| -> Result<()> {
                        p.dtype(&field.dtype)?;
                        p.int(field.offset as i64);
                        match &field.title {
                            Some(title) => {
                                p.str(title);
                                p.out.push(TUPLE3);
                            }
                            None => p.out.push(TUPLE2),
                        }
                        Ok(())
                    };
                    self.str(&field.name);
                    entry(self)?;
                    if let Some(title) = &field.title {
                        self.str(title);
                        entry(self)?;
                    }
                }
                self.out.push(SETITEMS);
            }
            _ => self.out.extend_from_slice(&[NONE, NONE]),
        }
        self.int(elsize);
        self.int(alignment);
        self.int(flags);
        if let Some(unit) = datetime_unit {
            self.out.push(NONE);
            let (symbol, multiple) = match unit {
                Some(unit) => (unit.unit.symbol(), i64::from(unit.multiple)),
                None => ("generic", 1),
            };
            self.out.push(MARK);
            self.bytes(symbol.as_bytes());
            self.int(multiple);
            self.int(1);
            self.int(1);
            self.out.extend_from_slice(&[TUPLE, TUPLE2]);
        }
        self.out.extend_from_slice(&[TUPLE, BUILD]);
        Ok(())
    }
}

/// `(type, byteorder, elsize, alignment, flags)` of a scalar's state.
fn scalar_state(s: &Scalar) -> (String, char, i64, i64, i64) {
    let type_str = s.type_str();
    let order = match s.byte_order {
        ByteOrder::Little => '<',
        ByteOrder::Big => '>',
        ByteOrder::NotApplicable => '|',
    };
    // `type_str` is `<f8`, `|S5`, `<M8[ns]`: numpy's type omits order and unit.
    let bare: String = type_str[1..].split('[').next().unwrap_or("").to_owned();
    let size = s.itemsize as i64;
    match s.kind {
        ScalarKind::Unicode => (bare, order, size, 4, 8),
        ScalarKind::Bytes | ScalarKind::Void => (bare, order, size, 1, 0),
        _ => (bare, order, -1, -1, 0),
    }
}

fn base_alignment(dtype: &DType) -> i64 {
    match dtype {
        DType::Scalar(s) => match s.kind {
            ScalarKind::Unicode => 4,
            ScalarKind::Bytes | ScalarKind::Void | ScalarKind::Bool => 1,
            ScalarKind::Complex => (s.itemsize / 2).min(16) as i64,
            _ => s.itemsize.min(16) as i64,
        },
        _ => 1,
    }
}

/// Work left for [`Pickler::value`]: a value (and its depth) or one opcode.
pub(super) enum Task<'v> {
    Value(&'v PyValue, usize),
    Op(u8),
}

/// Pushes `values` so that they pop in order.
fn push_values<'v>(
    tasks: &mut Vec<Task<'v>>,
    values: impl DoubleEndedIterator<Item = &'v PyValue>,
    depth: usize,
) {
    tasks.extend(values.rev().map(|value| Task::Value(value, depth + 1)));
}

/// Pushes MARK items `op` batches (APPENDS, ADDITEMS) so they pop in order.
fn push_batches<'v>(tasks: &mut Vec<Task<'v>>, items: Vec<&'v PyValue>, depth: usize, op: u8) {
    for batch in items.chunks(BATCH).rev() {
        tasks.push(Task::Op(op));
        push_values(tasks, batch.iter().copied(), depth);
        tasks.push(Task::Op(MARK));
    }
}

/// The pickle of a whole array, as `np.save` writes after the header.
pub(super) fn pickle_array(array: &NpyArray) -> Result<Vec<u8>> {
    let mut pickler = Pickler::new();
    let mut tasks = Vec::new();
    pickler.array(array, 0, &mut tasks)?;
    pickler.run(tasks)?;
    Ok(pickler.finish())
}

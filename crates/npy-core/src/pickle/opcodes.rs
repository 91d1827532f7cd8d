//! Pickle's opcodes, named as CPython's `pickletools` names them: the one
//! table the unpickler (`vm`) and the pickler (`write`) both read.
//!
//! Listed are the opcodes numpy's pickles use (protocols 2 to 5) and the
//! ones the unpickler refuses by name; the rest of the byte values are not
//! opcodes.

// Protocol 0 and 1.
pub(crate) const MARK: u8 = b'(';
pub(crate) const STOP: u8 = b'.';
pub(crate) const POP: u8 = b'0';
pub(crate) const POP_MARK: u8 = b'1';
pub(crate) const DUP: u8 = b'2';
pub(crate) const FLOAT: u8 = b'F';
pub(crate) const INT: u8 = b'I';
pub(crate) const BININT: u8 = b'J';
pub(crate) const BININT1: u8 = b'K';
pub(crate) const LONG: u8 = b'L';
pub(crate) const BININT2: u8 = b'M';
pub(crate) const NONE: u8 = b'N';
pub(crate) const PERSID: u8 = b'P';
pub(crate) const BINPERSID: u8 = b'Q';
pub(crate) const REDUCE: u8 = b'R';
pub(crate) const STRING: u8 = b'S';
pub(crate) const BINSTRING: u8 = b'T';
pub(crate) const SHORT_BINSTRING: u8 = b'U';
pub(crate) const UNICODE: u8 = b'V';
pub(crate) const BINUNICODE: u8 = b'X';
pub(crate) const APPEND: u8 = b'a';
pub(crate) const BUILD: u8 = b'b';
pub(crate) const GLOBAL: u8 = b'c';
pub(crate) const DICT: u8 = b'd';
pub(crate) const EMPTY_DICT: u8 = b'}';
pub(crate) const APPENDS: u8 = b'e';
pub(crate) const GET: u8 = b'g';
pub(crate) const BINGET: u8 = b'h';
pub(crate) const INST: u8 = b'i';
pub(crate) const LONG_BINGET: u8 = b'j';
pub(crate) const LIST: u8 = b'l';
pub(crate) const EMPTY_LIST: u8 = b']';
pub(crate) const OBJ: u8 = b'o';
pub(crate) const PUT: u8 = b'p';
pub(crate) const BINPUT: u8 = b'q';
pub(crate) const LONG_BINPUT: u8 = b'r';
pub(crate) const SETITEM: u8 = b's';
pub(crate) const TUPLE: u8 = b't';
pub(crate) const EMPTY_TUPLE: u8 = b')';
pub(crate) const SETITEMS: u8 = b'u';
pub(crate) const BINFLOAT: u8 = b'G';

// Protocol 2.
pub(crate) const PROTO: u8 = 0x80;
pub(crate) const NEWOBJ: u8 = 0x81;
pub(crate) const EXT1: u8 = 0x82;
pub(crate) const EXT2: u8 = 0x83;
pub(crate) const EXT4: u8 = 0x84;
pub(crate) const TUPLE1: u8 = 0x85;
pub(crate) const TUPLE2: u8 = 0x86;
pub(crate) const TUPLE3: u8 = 0x87;
pub(crate) const NEWTRUE: u8 = 0x88;
pub(crate) const NEWFALSE: u8 = 0x89;
pub(crate) const LONG1: u8 = 0x8a;
pub(crate) const LONG4: u8 = 0x8b;

// Protocol 3.
pub(crate) const BINBYTES: u8 = b'B';
pub(crate) const SHORT_BINBYTES: u8 = b'C';

// Protocol 4.
pub(crate) const SHORT_BINUNICODE: u8 = 0x8c;
pub(crate) const BINUNICODE8: u8 = 0x8d;
pub(crate) const BINBYTES8: u8 = 0x8e;
pub(crate) const EMPTY_SET: u8 = 0x8f;
pub(crate) const ADDITEMS: u8 = 0x90;
pub(crate) const FROZENSET: u8 = 0x91;
pub(crate) const NEWOBJ_EX: u8 = 0x92;
pub(crate) const STACK_GLOBAL: u8 = 0x93;
pub(crate) const MEMOIZE: u8 = 0x94;
pub(crate) const FRAME: u8 = 0x95;

// Protocol 5.
pub(crate) const BYTEARRAY8: u8 = 0x96;
pub(crate) const NEXT_BUFFER: u8 = 0x97;
pub(crate) const READONLY_BUFFER: u8 = 0x98;

/// The opcode that closes a tuple of `count` items: `EMPTY_TUPLE`,
/// `TUPLE1` to `TUPLE3` (no MARK before them), or `TUPLE` (after a MARK).
pub(crate) fn tuple_op(count: usize) -> u8 {
    match count {
        0 => EMPTY_TUPLE,
        1 => TUPLE1,
        2 => TUPLE2,
        3 => TUPLE3,
        _ => TUPLE,
    }
}

/// The width in bytes of the little-endian number that follows `op` (a
/// payload's length, an int, a memo index); 0 for opcodes without one.
/// `BININT`, `LONG4` and `BINSTRING` read theirs as signed.
#[inline]
pub(crate) fn argument_width(op: u8) -> usize {
    match op {
        BININT1 | LONG1 | SHORT_BINSTRING | SHORT_BINBYTES | SHORT_BINUNICODE | BINGET | BINPUT => {
            1
        }
        BININT2 => 2,
        BININT | LONG4 | BINSTRING | BINBYTES | BINUNICODE | LONG_BINGET | LONG_BINPUT => 4,
        BINUNICODE8 | BINBYTES8 | BYTEARRAY8 | FRAME => 8,
        _ => 0,
    }
}

/// The name of an opcode the unpickler refuses (text opcodes, persistent
/// ids, extensions, object construction, out-of-band buffers); `None` for a
/// byte that is no opcode or an allowed one.
pub(crate) fn refused_name(op: u8) -> Option<&'static str> {
    Some(match op {
        INT => "INT",
        LONG => "LONG",
        FLOAT => "FLOAT",
        STRING => "STRING",
        UNICODE => "UNICODE",
        GET => "GET",
        PUT => "PUT",
        PERSID => "PERSID",
        BINPERSID => "BINPERSID",
        INST => "INST",
        OBJ => "OBJ",
        NEWOBJ => "NEWOBJ",
        NEWOBJ_EX => "NEWOBJ_EX",
        EXT1 => "EXT1",
        EXT2 => "EXT2",
        EXT4 => "EXT4",
        NEXT_BUFFER => "NEXT_BUFFER",
        READONLY_BUFFER => "READONLY_BUFFER",
        _ => return None,
    })
}

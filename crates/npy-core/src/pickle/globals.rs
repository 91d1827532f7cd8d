//! The globals a numpy object array's pickle may name: a fixed table,
//! looked up by the unpickler and written by the pickler. Nothing named here
//! is ever called; `reduce` interprets calls to them by pattern.

/// The callables and classes a numpy object array's pickle may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Global {
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
    /// A builtin type named as a value, never called (`range`, `int`):
    /// its name in Python 3's `builtins`. Python 2 pickles spell some
    /// differently (`__builtin__.xrange` is `range`, `unicode` is `str`,
    /// `long` is `int`), as Python's `fix_imports` maps them.
    Type(&'static str),
}

/// The builtin types a pickle may name as values: Python 3's name of each
/// of Python 2's and 3's spellings (`_compat_pickle.NAME_MAPPING`).
fn builtin_type(name: &str) -> Option<&'static str> {
    Some(match name {
        "range" | "xrange" => "range",
        "str" | "unicode" | "basestring" => "str",
        "int" | "long" => "int",
        "bool" => "bool",
        "float" => "float",
        "complex" => "complex",
        "bytes" => "bytes",
        "bytearray" => "bytearray",
        "list" => "list",
        "tuple" => "tuple",
        "dict" => "dict",
        "set" => "set",
        "frozenset" => "frozenset",
        "slice" => "slice",
        "object" => "object",
        "type" => "type",
        _ => return None,
    })
}

impl Global {
    /// The global a pickle names by `module` and `name`, under any of the
    /// spellings numpy 1.x, numpy 2 and Python 2 write; `None` when not allowed.
    pub(super) fn lookup(module: &str, name: &str) -> Option<Global> {
        let numpy_core = matches!(module, "numpy._core.multiarray" | "numpy.core.multiarray");
        // numpy before 1.0 pickled arrays with `numpy.core._internal._reconstruct`.
        let old_numpy = module == "numpy.core._internal";
        let numpy_numeric = matches!(module, "numpy._core.numeric" | "numpy.core.numeric");
        let builtins = matches!(module, "builtins" | "__builtin__");
        Some(match name {
            "_reconstruct" if numpy_core || old_numpy => Global::Reconstruct,
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
            _ if builtins => Global::Type(builtin_type(name)?),
            _ => return None,
        })
    }

    /// The builtin type this global is when used as a value rather than
    /// called (`set`, `range`); `None` for numpy's callables.
    pub(super) fn as_type(self) -> Option<&'static str> {
        match self {
            Global::Type(name) => Some(name),
            Global::Set => Some("set"),
            Global::FrozenSet => Some("frozenset"),
            Global::ByteArray => Some("bytearray"),
            Global::Bytes => Some("bytes"),
            Global::Complex => Some("complex"),
            _ => None,
        }
    }

    /// The module and name the pickler writes for it (numpy 2's and
    /// Python 3's spelling, which every reader of protocol 4 accepts).
    pub(super) fn path(self) -> (&'static str, &'static str) {
        match self {
            Global::Reconstruct => ("numpy._core.multiarray", "_reconstruct"),
            Global::NdArray => ("numpy", "ndarray"),
            Global::DType => ("numpy", "dtype"),
            Global::Scalar => ("numpy._core.multiarray", "scalar"),
            Global::FromBuffer => ("numpy._core.numeric", "_frombuffer"),
            Global::Set => ("builtins", "set"),
            Global::FrozenSet => ("builtins", "frozenset"),
            Global::ByteArray => ("builtins", "bytearray"),
            Global::Bytes => ("builtins", "bytes"),
            Global::Complex => ("builtins", "complex"),
            Global::Encode => ("_codecs", "encode"),
            Global::Type(name) => ("builtins", name),
        }
    }
}

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
}

impl Global {
    /// The global a pickle names by `module` and `name`, under any of the
    /// spellings numpy 1.x, numpy 2 and Python 2 write; `None` when not allowed.
    pub(super) fn lookup(module: &str, name: &str) -> Option<Global> {
        let numpy_core = matches!(module, "numpy._core.multiarray" | "numpy.core.multiarray");
        let numpy_numeric = matches!(module, "numpy._core.numeric" | "numpy.core.numeric");
        let builtins = matches!(module, "builtins" | "__builtin__");
        Some(match name {
            "_reconstruct" if numpy_core => Global::Reconstruct,
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
            _ => return None,
        })
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
        }
    }
}

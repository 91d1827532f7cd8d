//! How pickles are decoded: [`PickleOptions`] and [`Encoding`], below
//! everything in `pickle` that reads or writes them.

/// [`PickleOptions::max_depth`]'s default.
pub(crate) const DEFAULT_MAX_DEPTH: usize = 1000;

/// How Python 2 `str` objects in a pickle are decoded: numpy's `encoding`
/// argument of `np.load`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `'ASCII'` (numpy's default): as `str`; a byte above 127 is an error.
    #[default]
    Ascii,
    /// `'latin1'`: as `str`, each byte one character (what numpy advises for
    /// Python 2 files holding numeric arrays).
    Latin1,
    /// `'bytes'`: as `bytes`.
    Bytes,
}

/// How object array pickles are decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PickleOptions {
    /// Python 2 strings (`BINSTRING`/`SHORT_BINSTRING`), as `np.load`'s `encoding`.
    pub encoding: Encoding,
    /// Deepest nesting of containers and arrays accepted. Default 1000
    /// (Python's own recursion limit for pickling).
    pub max_depth: usize,
    /// The decoded values (counted as `size_of::<PyValue>()` per value plus
    /// their bytes) may take at most this many times the pickle's size,
    /// plus 1 MiB. Default 64: plain data stays well below (a `None` is 1
    /// byte of pickle and 32 of value); what exceeds it is one object
    /// copied over and over through the memo.
    pub max_expansion: usize,
}

impl Default for PickleOptions {
    fn default() -> Self {
        PickleOptions {
            encoding: Encoding::Ascii,
            max_depth: DEFAULT_MAX_DEPTH,
            max_expansion: 64,
        }
    }
}

//! The `.npy` header: preamble (magic, version, length) and the dict text.

use std::borrow::Cow;
use std::io::Read;
use std::ops::Range;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::literal::{self, Literal, Value};
use crate::pyrepr::{push_shape_repr, str_repr};
use crate::stream::read_full;

/// The six bytes every `.npy` file starts with.
pub const MAGIC: [u8; 6] = *b"\x93NUMPY";

/// NumPy aligns the start of the data to this many bytes.
pub const ARRAY_ALIGN: usize = 64;

/// The most dimensions NumPy supports (`NPY_MAXDIMS`).
pub const MAX_DIMS: usize = 64;

/// Growth padding makes room for a growth axis of up to this many digits.
const GROWTH_AXIS_MAX_DIGITS: usize = 21;

/// Memory order of the array data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Order {
    /// Row-major (`fortran_order: False`).
    #[default]
    C,
    /// Column-major (`fortran_order: True`).
    Fortran,
}

/// A format version NumPy reads: 1.0, 2.0 or 3.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// 1.0: u16 header length, latin-1 text.
    V1,
    /// 2.0: u32 header length, latin-1 text.
    V2,
    /// 3.0: u32 header length, UTF-8 text.
    V3,
}

/// numpy's default `max_header_size`: the longest header, in characters,
/// read unless the caller raises the limit (every reader's default).
pub const DEFAULT_MAX_HEADER_SIZE: usize = 10_000;

/// Limits applied while parsing a header (numpy's `max_header_size` and
/// `allow_pickle`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// Largest header (in characters, like NumPy) accepted. Default
    /// [`DEFAULT_MAX_HEADER_SIZE`].
    /// Unlike numpy, `allow_pickle` does not lift it: our unpickler does not
    /// trust the file either.
    pub max_header_size: usize,
    /// Accept object arrays (descr `'|O'`): their header parses to
    /// [`DType::Object`] and readers decode the pickle with the restricted
    /// unpickler of [`pickle`](crate::pickle), which never runs code.
    /// Default `false`, as in numpy: object dtypes are then
    /// [`Error::ObjectDType`] with numpy's wording. Records with object
    /// fields are [`Error::ObjectField`] either way.
    pub allow_pickle: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            max_header_size: DEFAULT_MAX_HEADER_SIZE,
            allow_pickle: false,
        }
    }
}

/// The fixed-size start of a file: magic, version and header length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preamble {
    /// The format version.
    pub version: Version,
    /// Length of the header text in bytes, as the length field says.
    pub header_len: usize,
}

/// The parsed header dict: what the array is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Header {
    /// The element type.
    pub dtype: DType,
    /// Memory order of the data.
    pub order: Order,
    /// The shape; empty for a 0-d array.
    pub shape: Vec<usize>,
}

/// What [`Header::parse`] and [`Header::read_from`] find: the header, and
/// where the parts of the file are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedHeader {
    /// The array the file holds.
    pub header: Header,
    /// Where its header and data lie in the file.
    pub layout: Layout,
}

/// Where things are in a parsed file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The version the file was written with.
    pub version: Version,
    /// Length of the header text (after the length field), in bytes.
    pub header_len: usize,
    /// Byte offset of the first data byte.
    pub data_offset: usize,
    /// Number of data bytes the header promises (checked arithmetic).
    pub data_len: usize,
    /// Whether the header text was written by Python 2: it holds a long
    /// (`(3L, 4L)`), which reads only with the `L` stripped, as numpy reads
    /// it (numpy then warns "... as it was created on Python 2"). Told
    /// by the parse itself, so a reader that warns needs no second look at
    /// the text. `false` for a header that was not parsed.
    pub python2_header: bool,
}

impl Version {
    /// The major version byte (1, 2 or 3; the minor byte is always 0).
    pub fn major(self) -> u8 {
        match self {
            Version::V1 => 1,
            Version::V2 => 2,
            Version::V3 => 3,
        }
    }

    /// Bytes before the header text: magic, version and length field
    /// (10 for 1.0, 12 for 2.0 and 3.0).
    pub fn prefix_len(self) -> usize {
        8 + self.length_field_len()
    }

    fn length_field_len(self) -> usize {
        match self {
            Version::V1 => 2,
            Version::V2 | Version::V3 => 4,
        }
    }

    /// The version as NumPy prints it in messages: `(1, 0)`.
    fn python_tuple(self) -> &'static str {
        match self {
            Version::V1 => "(1, 0)",
            Version::V2 => "(2, 0)",
            Version::V3 => "(3, 0)",
        }
    }

    /// Reads the magic string and version from the first 8 bytes.
    fn from_magic(bytes: &[u8]) -> Result<Version> {
        let Some(magic) = bytes.get(..8) else {
            return Err(Error::Eof {
                what: "magic string",
                expected: 8,
                got: bytes.len(),
            });
        };
        if magic[..6] != MAGIC {
            return Err(Error::BadMagic {
                found: crate::pyrepr::bytes_repr(&magic[..6]),
            });
        }
        match (magic[6], magic[7]) {
            (1, 0) => Ok(Version::V1),
            (2, 0) => Ok(Version::V2),
            (3, 0) => Ok(Version::V3),
            (major, minor) => Err(Error::UnsupportedVersion { major, minor }),
        }
    }
}

impl Preamble {
    /// Bytes to read to be sure to hold the preamble of any version: 12.
    ///
    /// A 1.0 preamble is only 10 bytes; the 2 extra bytes are the start of the
    /// header text, so a reader that fetched 12 bytes passes them on (see
    /// [`Preamble::prefix_len`]).
    pub const MAX_LEN: usize = 12;

    /// Parses the preamble from the start of `bytes`, which must hold at least
    /// [`Version::prefix_len`] bytes (10 or 12; [`Preamble::MAX_LEN`] always
    /// suffices). Checks the magic string and the version.
    ///
    /// ```
    /// use npy_core::{Preamble, Version};
    /// let p = Preamble::parse(b"\x93NUMPY\x01\x00\x76\x00{'")?;
    /// assert_eq!((p.version, p.header_len, p.prefix_len(), p.data_offset()), (Version::V1, 118, 10, 128));
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Preamble> {
        let version = Version::from_magic(bytes)?;
        let field_len = version.length_field_len();
        let field = bytes.get(8..8 + field_len).ok_or_else(|| Error::Eof {
            what: "array header length",
            expected: field_len,
            got: bytes.len() - 8,
        })?;
        // Little-endian u16 (1.0) or u32 (2.0, 3.0).
        let header_len = field
            .iter()
            .rev()
            .fold(0u64, |len, &byte| len << 8 | u64::from(byte));
        let header_len = usize::try_from(header_len).map_err(|_| Error::HeaderTooLarge {
            length: usize::MAX,
            max: usize::MAX,
        })?;
        // The data offset must be representable (only a concern below 64 bits).
        header_len
            .checked_add(version.prefix_len())
            .ok_or(Error::HeaderTooLarge {
                length: header_len,
                max: usize::MAX,
            })?;
        Ok(Preamble {
            version,
            header_len,
        })
    }

    /// Bytes before the header text (10 for 1.0, 12 for 2.0 and 3.0).
    pub fn prefix_len(&self) -> usize {
        self.version.prefix_len()
    }

    /// Offset of the first data byte: prefix plus header length.
    pub fn data_offset(&self) -> usize {
        self.prefix_len().saturating_add(self.header_len)
    }

    /// Refuses a header longer than `options.max_header_size` *before* it is
    /// read. NumPy counts decoded characters: for 1.0/2.0 (latin-1) that is the
    /// byte count; for 3.0 (UTF-8) a character takes up to 4 bytes, so only
    /// more than 4 × the limit is refused here and the exact count is checked
    /// after decoding.
    pub fn check_size(&self, options: &ParseOptions) -> Result<()> {
        let max_bytes = match self.version {
            Version::V1 | Version::V2 => options.max_header_size,
            Version::V3 => options.max_header_size.saturating_mul(4),
        };
        if self.header_len > max_bytes {
            return Err(Error::HeaderTooLarge {
                length: self.header_len,
                max: options.max_header_size,
            });
        }
        Ok(())
    }
}

impl Layout {
    /// Offset one past the last data byte (`data_offset + data_len`): the
    /// smallest file length that holds the whole array.
    pub fn data_end(&self) -> usize {
        self.data_offset.saturating_add(self.data_len)
    }
}

impl ParsedHeader {
    /// Rows `rows` of this file's array (along its
    /// [`row_axis`](Header::row_axis)) as an array of their own: its header
    /// and layout (the rows' shape and data length; the file's version and
    /// data offset), and the bytes of the file its data occupies. The rows
    /// are checked first ([`Header::check_rows`]). What a ranged read of a
    /// file or an archive member turns into an array.
    ///
    /// ```
    /// use npy_core::{DType, Header, Order};
    ///
    /// let header = Header::new(DType::parse("<f8").unwrap(), Order::C, vec![100, 3]);
    /// let parsed = Header::parse(&header.to_bytes(None).unwrap(), &Default::default()).unwrap();
    /// let (part, bytes) = parsed.rows_part(10..12).unwrap();
    /// assert_eq!(part.header.shape, [2, 3]);
    /// assert_eq!(bytes, 128 + 10 * 24..128 + 12 * 24);
    /// assert!(parsed.rows_part(99..101).is_err());
    /// ```
    pub fn rows_part(&self, rows: std::ops::Range<usize>) -> Result<(ParsedHeader, Range<u64>)> {
        let ParsedHeader { header, layout } = self;
        header.check_rows(rows.clone())?;
        let row_bytes = header.row_bytes().unwrap_or(0);
        let mut shape = header.shape.clone();
        if let Some(axis) = header.row_axis() {
            shape[axis] = rows.end - rows.start;
        }
        let header = Header {
            shape,
            ..header.clone()
        };
        let data_len = header.data_len()?;
        let from = (layout.data_offset + rows.start * row_bytes) as u64;
        let layout = Layout {
            data_len,
            ..*layout
        };
        Ok((
            ParsedHeader { header, layout },
            from..from + data_len as u64,
        ))
    }
}

impl Header {
    /// A header for an array of `dtype` with `shape`, stored in `order`.
    pub fn new(dtype: DType, order: Order, shape: Vec<usize>) -> Header {
        Header {
            dtype,
            order,
            shape,
        }
    }

    /// Parses the whole header from the start of `bytes` (a file prefix that
    /// holds at least the preamble and header text; data may follow and is
    /// not looked at: the caller compares [`Layout::data_end`] with what it
    /// has, and decides about missing or trailing bytes).
    ///
    /// ```
    /// use npy_core::{Header, Order, ParseOptions, ParsedHeader};
    /// let mut file = b"\x93NUMPY\x01\x00\x76\x00".to_vec();
    /// file.extend_from_slice(b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }");
    /// file.extend_from_slice(&[b' '; 58]);
    /// file.push(b'\n');
    /// let ParsedHeader { header, layout } = Header::parse(&file, &ParseOptions::default())?;
    /// assert_eq!(header.shape, [3, 4]);
    /// assert_eq!(header.order, Order::C);
    /// assert_eq!((layout.data_offset, layout.data_len), (128, 96));
    /// assert_eq!(header.to_bytes(None)?, file);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn parse(bytes: &[u8], options: &ParseOptions) -> Result<ParsedHeader> {
        let preamble = Preamble::parse(bytes)?;
        preamble.check_size(options)?;
        let start = preamble.prefix_len();
        let text = bytes
            .get(start..preamble.data_offset())
            .ok_or_else(|| Error::Eof {
                what: "array header",
                expected: preamble.header_len,
                got: bytes.len() - start,
            })?;
        Header::from_text(text, preamble, options)
    }

    /// Reads the preamble and header from a stream, leaving it at the first
    /// data byte. Works on non-seekable streams, and never allocates more
    /// than the header actually present (itself bounded by
    /// `options.max_header_size`).
    pub fn read_from<R: Read>(reader: &mut R, options: &ParseOptions) -> Result<ParsedHeader> {
        let mut prefix = [0u8; Preamble::MAX_LEN];
        let got = read_full(reader, &mut prefix[..8])?;
        let version = Version::from_magic(&prefix[..got])?;
        let got = read_full(reader, &mut prefix[8..version.prefix_len()])?;
        let preamble = Preamble::parse(&prefix[..8 + got])?;
        preamble.check_size(options)?;
        // Grow with what arrives rather than trusting the length field.
        let mut text = Vec::with_capacity(preamble.header_len.min(1 << 16));
        reader
            .take(preamble.header_len as u64)
            .read_to_end(&mut text)?;
        if text.len() < preamble.header_len {
            return Err(Error::Eof {
                what: "array header",
                expected: preamble.header_len,
                got: text.len(),
            });
        }
        Header::from_text(&text, preamble, options)
    }

    /// Decodes and checks the header text that follows `preamble`.
    fn from_text(bytes: &[u8], preamble: Preamble, options: &ParseOptions) -> Result<ParsedHeader> {
        let text: Cow<'_, str> = match preamble.version {
            // Latin-1: every byte is the code point of the same value, so
            // ASCII text (what NumPy writes) is already valid UTF-8.
            Version::V1 | Version::V2 => match std::str::from_utf8(bytes) {
                Ok(ascii) if ascii.is_ascii() => Cow::Borrowed(ascii),
                _ => bytes.iter().map(|&b| char::from(b)).collect(),
            },
            Version::V3 => {
                let text = std::str::from_utf8(bytes).map_err(|e| Error::HeaderNotUtf8 {
                    valid_up_to: e.valid_up_to(),
                })?;
                // A character takes at least one byte: count only when it matters.
                if text.len() > options.max_header_size {
                    let chars = text.chars().count();
                    if chars > options.max_header_size {
                        return Err(Error::HeaderTooLarge {
                            length: chars,
                            max: options.max_header_size,
                        });
                    }
                }
                text.into()
            }
        };
        let literal_options = literal::Options {
            allow_long_suffix: preamble.version != Version::V3,
        };
        let literal =
            literal::parse(&text, literal_options).map_err(|e| Error::CannotParseHeader {
                header: str_repr(&text),
                reason: e.reason,
                position: text.get(..e.offset).map_or(e.offset, |t| t.chars().count()),
            })?;
        // numpy strips the `L`s only when the text does not read as it is.
        let python2_header = literal_options.allow_long_suffix
            && text.contains('L')
            && literal::parse(
                &text,
                literal::Options {
                    allow_long_suffix: false,
                },
            )
            .is_err();
        let header = Header::from_dict(&literal, options)?;
        let data_len = header.data_len()?;
        let data_offset = preamble.data_offset();
        data_offset
            .checked_add(data_len)
            .ok_or_else(|| header.too_big())?;
        Ok(ParsedHeader {
            header,
            layout: Layout {
                version: preamble.version,
                header_len: preamble.header_len,
                data_offset,
                data_len,
                python2_header,
            },
        })
    }

    /// Checks the header dict like NumPy, in NumPy's order: keys, shape,
    /// fortran_order, descr.
    fn from_dict(literal: &Literal<'_>, options: &ParseOptions) -> Result<Header> {
        let root = literal.root();
        let Value::Dict(items) = root else {
            return Err(Error::HeaderNotDict {
                found: literal.repr(root),
            });
        };
        let items = literal.items(*items);
        // One pass, so that a huge dict (allowed by a raised size limit)
        // costs linear time.
        const KEYS: [&str; 3] = ["descr", "fortran_order", "shape"];
        let mut found: [Option<&Value<'_>>; 3] = [None; 3];
        let mut twice: Option<&str> = None;
        for entry in items.chunks_exact(2) {
            let (key, value) = (&entry[0], &entry[1]);
            let slot = match key {
                Value::Str(s) => KEYS.iter().position(|k| *k == literal.text(*s)),
                _ => None,
            };
            let Some(slot) = slot else {
                return Err(wrong_keys(literal, items));
            };
            if found[slot].replace(value).is_some() {
                twice = twice.or(Some(KEYS[slot]));
            }
        }
        let [Some(descr), Some(fortran), Some(shape)] = found else {
            return Err(wrong_keys(literal, items));
        };
        if let Some(key) = twice {
            return Err(Error::DuplicateKey { key: str_repr(key) });
        }

        let invalid_shape = || Error::InvalidShape {
            found: literal.repr(shape),
        };
        let Value::Tuple(dims) = shape else {
            return Err(invalid_shape());
        };
        let dims = literal.items(*dims);
        if dims.len() > MAX_DIMS {
            return Err(Error::TooManyDimensions {
                found: dims.len(),
                max: MAX_DIMS,
            });
        }
        let mut shape_out = Vec::with_capacity(dims.len());
        for dim in dims {
            // Python's bool is an int, so NumPy lets `True` through here; a
            // dimension written as a bool is never intended, so we refuse it.
            let Value::Int(n) = dim else {
                return Err(invalid_shape());
            };
            let n = usize::try_from(*n).map_err(|_| invalid_shape())?;
            shape_out.push(n);
        }

        let order = match fortran {
            Value::False => Order::C,
            Value::True => Order::Fortran,
            other => {
                return Err(Error::InvalidFortranOrder {
                    found: literal.repr(other),
                });
            }
        };

        let dtype = match DType::from_literal(literal, descr) {
            Ok(dtype) => dtype,
            // A type string that names objects: the whole array is objects.
            Err(Error::ObjectDType) if options.allow_pickle && matches!(descr, Value::Str(_)) => {
                DType::Object
            }
            Err(Error::ObjectDType) if options.allow_pickle => return Err(Error::ObjectField),
            Err(Error::ObjectDType) => return Err(Error::ObjectDType),
            Err(e) => {
                return Err(Error::InvalidDescr {
                    descr: literal.repr(descr),
                    source: Box::new(e),
                });
            }
        };
        Ok(Header {
            dtype,
            order,
            shape: shape_out,
        })
    }

    /// Encodes the header exactly as `np.save` would write it: preamble, dict
    /// text, growth padding, 64-byte alignment. `None` picks the version like
    /// NumPy does (1.0, else 2.0 when too long, 3.0 when the text needs UTF-8).
    ///
    /// ```
    /// use npy_core::{DType, Header, Order, Version};
    /// let header = Header::new(DType::parse("<f8")?, Order::C, vec![5]);
    /// let bytes = header.to_bytes(None)?;
    /// assert_eq!(bytes.len(), 128);
    /// assert_eq!(&bytes[..10], b"\x93NUMPY\x01\x00\x76\x00");
    /// assert!(bytes[10..].starts_with(b"{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }"));
    /// assert_eq!(header.to_bytes(Some(Version::V2))?.len(), 128);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn to_bytes(&self, version: Option<Version>) -> Result<Vec<u8>> {
        self.dtype.check_writable()?;
        if self.shape.len() > MAX_DIMS {
            return Err(Error::TooManyDimensions {
                found: self.shape.len(),
                max: MAX_DIMS,
            });
        }
        self.data_len()?;
        let text = self.dict_text();
        let needs_utf8 = !text.is_ascii() && text.chars().any(|c| u32::from(c) > 0xff);
        match version {
            Some(Version::V3) => wrap(text.as_bytes(), Version::V3),
            Some(v) if needs_utf8 => Err(Error::HeaderNotLatin1 {
                version: v.python_tuple(),
            }),
            Some(v) => wrap(&latin1(&text), v),
            None if needs_utf8 => wrap(text.as_bytes(), Version::V3),
            None => {
                let encoded = latin1(&text);
                wrap(&encoded, Version::V1).or_else(|_| wrap(&encoded, Version::V2))
            }
        }
    }

    /// Where the header and the data lie in a file written with
    /// [`to_bytes`](Self::to_bytes)`(version)`: measured on the encoding,
    /// never parsed back.
    ///
    /// ```
    /// use npy_core::{DType, Header, Order, Version};
    /// let layout = Header::new(DType::parse("<f8")?, Order::C, vec![5]).layout(None)?;
    /// assert_eq!((layout.version, layout.data_offset, layout.data_len), (Version::V1, 128, 40));
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn layout(&self, version: Option<Version>) -> Result<Layout> {
        let bytes = self.to_bytes(version)?;
        // `to_bytes` wrote the version it picked at byte 6.
        let version = match bytes.get(6) {
            Some(1) => Version::V1,
            Some(2) => Version::V2,
            _ => Version::V3,
        };
        Ok(Layout {
            version,
            header_len: bytes.len() - version.prefix_len(),
            data_offset: bytes.len(),
            data_len: self.data_len()?,
            python2_header: false,
        })
    }

    /// The dict text with growth padding, before encoding.
    fn dict_text(&self) -> String {
        let mut text = String::with_capacity(96);
        text.push_str("{'descr': ");
        text.push_str(&self.dtype.header_repr());
        text.push_str(", 'fortran_order': ");
        text.push_str(match self.order {
            Order::C => "False",
            Order::Fortran => "True",
        });
        text.push_str(", 'shape': ");
        push_shape_repr(&mut text, &self.shape);
        text.push_str(", }");
        // Room to rewrite the growth axis (the one appended along) in place.
        let growth_axis = match self.order {
            Order::C => self.shape.first(),
            Order::Fortran => self.shape.last(),
        };
        if let Some(dim) = growth_axis {
            let digits = dim.checked_ilog10().map_or(1, |d| d as usize + 1);
            let spaces = GROWTH_AXIS_MAX_DIGITS.saturating_sub(digits);
            text.extend(std::iter::repeat_n(' ', spaces));
        }
        text
    }

    /// Number of elements (product of the shape; 1 for 0-d), checked: the
    /// product of the non-zero dimensions must fit `isize`.
    pub fn element_count(&self) -> Result<usize> {
        let (nonzero_product, any_zero) = self.extent(1)?;
        Ok(if any_zero { 0 } else { nonzero_product })
    }

    /// The axis rows are counted along, the one whose slices are contiguous
    /// in the data: axis 0 in C order, the last axis in Fortran order (the
    /// growth axis `np.save` pads for). `None` for a 0-d array.
    pub fn row_axis(&self) -> Option<usize> {
        let last = self.shape.len().checked_sub(1)?;
        Some(match self.order {
            Order::C => 0,
            Order::Fortran => last,
        })
    }

    /// Number of rows along [`row_axis`](Self::row_axis) (1 for a 0-d array).
    pub fn row_count(&self) -> usize {
        self.row_axis().map_or(1, |axis| self.shape[axis])
    }

    /// Checks a range of rows (a window of a mapping, a ranged read):
    /// [`Error::ReversedRange`] when it is reversed,
    /// [`Error::RangeOutOfBounds`] (naming the row axis) when it ends past
    /// the rows (a 0-d array counts as one row, as in
    /// [`row_count`](Self::row_count)).
    pub fn check_rows(&self, rows: std::ops::Range<usize>) -> Result<()> {
        let axis = self.row_axis().unwrap_or(0);
        crate::index::check_range(rows, axis, self.row_count())
    }

    /// Bytes of one row: the itemsize times every other dimension (the
    /// whole element for a 0-d array). Checked: `None` when the product
    /// overflows, which only an array with no rows can describe.
    pub fn row_bytes(&self) -> Option<usize> {
        let axis = self.row_axis();
        self.shape
            .iter()
            .enumerate()
            .filter(|&(i, _)| Some(i) != axis)
            .try_fold(self.dtype.itemsize(), |acc, (_, &d)| acc.checked_mul(d))
    }

    /// Number of data bytes (element count × itemsize), checked to fit
    /// `isize`. The product of the non-zero dimensions times the itemsize must
    /// fit even when a zero dimension makes the array empty, so that every
    /// stride of the array is representable.
    ///
    /// 0 for an object array, whose data is a pickle of unknown length (the
    /// element count is still checked).
    pub fn data_len(&self) -> Result<usize> {
        if self.dtype == DType::Object {
            self.element_count()?;
            return Ok(0);
        }
        let (len, any_zero) = self.extent(self.dtype.itemsize())?;
        Ok(if any_zero { 0 } else { len })
    }

    /// `unit` × the product of the non-zero dimensions, checked against
    /// `isize::MAX`, and whether a dimension is zero.
    fn extent(&self, unit: usize) -> Result<(usize, bool)> {
        let mut product = unit;
        let mut any_zero = false;
        for &dim in &self.shape {
            if dim == 0 {
                any_zero = true;
            } else {
                product = product
                    .checked_mul(dim)
                    .filter(|&p| p <= isize::MAX as usize)
                    .ok_or_else(|| self.too_big())?;
            }
        }
        if product > isize::MAX as usize {
            return Err(self.too_big());
        }
        Ok((product, any_zero))
    }

    fn too_big(&self) -> Error {
        let mut shape = String::new();
        push_shape_repr(&mut shape, &self.shape);
        Error::ArrayTooBig {
            shape,
            itemsize: self.dtype.itemsize(),
        }
    }
}

/// NumPy's message for a wrong key set: the sorted keys. `items` are the
/// dict's keys and values, alternating.
fn wrong_keys(literal: &Literal<'_>, items: &[Value<'_>]) -> Error {
    // Python sorts str keys by code point (= UTF-8 byte order); other key
    // types (which make Python's sort fail) go last, by their repr.
    let mut keys: Vec<(u8, Cow<'_, str>, &Value<'_>)> = items
        .iter()
        .step_by(2)
        .map(|k| match k {
            Value::Str(s) => (0, Cow::Borrowed(literal.text(*s)), k),
            other => (1, Cow::Owned(literal.repr(other)), k),
        })
        .collect();
    keys.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    keys.dedup_by(|a, b| (a.0, &a.1) == (b.0, &b.1));
    Error::WrongKeys {
        keys: literal.list_repr(keys.into_iter().map(|(_, _, k)| k)),
    }
}

/// Latin-1 bytes of a text whose characters are all at most U+00FF (the
/// text itself when it is ASCII).
fn latin1(text: &str) -> Cow<'_, [u8]> {
    if text.is_ascii() {
        return Cow::Borrowed(text.as_bytes());
    }
    text.chars().map(|c| c as u8).collect()
}

/// Preamble + text + alignment spaces + newline (NumPy's `_wrap_header`).
fn wrap(text: &[u8], version: Version) -> Result<Vec<u8>> {
    let prefix = version.prefix_len();
    let with_newline = text.len() + 1;
    // 1..=64, never 0: NumPy adds a full 64 when already aligned.
    let pad = ARRAY_ALIGN - (prefix + with_newline) % ARRAY_ALIGN;
    let header_len = with_newline + pad;
    let too_long = Error::HeaderTooLongForVersion {
        length: with_newline,
        version: version.python_tuple(),
    };
    let mut out = Vec::with_capacity(prefix + header_len);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&[version.major(), 0]);
    match version {
        Version::V1 => {
            let len = u16::try_from(header_len).map_err(|_| too_long)?;
            out.extend_from_slice(&len.to_le_bytes());
        }
        Version::V2 | Version::V3 => {
            let len = u32::try_from(header_len).map_err(|_| too_long)?;
            out.extend_from_slice(&len.to_le_bytes());
        }
    }
    out.extend_from_slice(text);
    out.resize(out.len() + pad, b' ');
    out.push(b'\n');
    Ok(out)
}

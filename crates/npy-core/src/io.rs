//! Streaming `.npy` arrays through any [`Read`] or [`Write`].
//!
//! [`read_npy`] reads a whole array from a stream (non-seekable ones
//! included: pipes, sockets, zip members) into an [`NpyArray`] whose buffer
//! is 16-byte aligned, so native typed views work on it. The header's size is
//! never trusted for allocation: the buffer grows as data actually arrives,
//! so a short file that claims a terabyte fails with NumPy's "Failed to read
//! all data" error after allocating about what it holds. Data is read in bulk
//! straight into the final buffer, which is never zero-filled first.
//!
//! [`write_npy`] (any [`NpySource`]) and the streaming [`NpyWriter`] write
//! the header exactly as NumPy does ([`Header::to_bytes`]) followed by the
//! data, and check that the byte count matches the header.
//!
//! ```
//! use npy_core::io::{read_npy, write_npy, ReadOptions};
//! use npy_core::{ArrayView, Order};
//!
//! let mut file = Vec::new();
//! let data = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
//! write_npy(&mut file, &ArrayView::from_slice(&data, &[2, 3], Order::C)?)?;
//! let array = read_npy(file.as_slice(), &ReadOptions::default())?;
//! assert_eq!(array.header().shape, [2, 3]);
//! assert_eq!(array.view::<f64>()?.get(&[1, 0]), Some(&4.0));
//! # Ok::<(), npy_core::Error>(())
//! ```

use std::io::{ErrorKind, Read, Write};

use zerocopy::IntoBytes;

pub use crate::aligned::{AlignedBytes, ByteOwner};
pub use crate::array::NpyArray;
use crate::dtype::{ByteOrder, DType};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::header::{Header, Layout, ParseOptions, Version};
use crate::pickle::PickleOptions;
use crate::source::NpySource;
pub use crate::stream::read_full;
use crate::swap::ByteOrderConverter;

/// How [`read_npy`] reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Header parsing limits, and whether object arrays are decoded
    /// ([`ParseOptions::allow_pickle`]).
    pub parse: ParseOptions,
    /// Convert the data to native byte order after reading (the header's
    /// dtype is updated to match), so native element types can view it.
    pub to_native: bool,
    /// How the pickle of an object array is decoded (numpy's `encoding`,
    /// and limits); used only with [`ParseOptions::allow_pickle`].
    pub pickle: PickleOptions,
    /// Refuse arrays whose data is longer than this many bytes, before
    /// anything is allocated or read ([`Error::DataTooLarge`]). `None` (the
    /// default) takes any size the header describes; set it where the
    /// input is untrusted and small enough to hold, e.g. a deflated npz
    /// member that may inflate 1000:1.
    pub max_data_len: Option<usize>,
}

impl ReadOptions {
    /// Checks the data length a header describes against
    /// [`max_data_len`](Self::max_data_len).
    pub fn check_data_len(&self, layout: &Layout) -> Result<()> {
        match self.max_data_len {
            Some(max) if layout.data_len > max => Err(Error::DataTooLarge {
                len: layout.data_len,
                max,
            }),
            _ => Ok(()),
        }
    }
}

/// Bytes allocated before any data has arrived; the buffer then doubles as
/// data keeps coming, so allocation follows the stream, not the header.
const FIRST_CHUNK: usize = 64 << 20;

/// Bytes read at a time when converting byte order on the way: small enough
/// that each piece is converted while it is still in the cache, instead of
/// in a second pass over the whole array from memory. ([`read_data`]'s
/// step; npy-mmap's parallel load converts its pieces by the same.)
pub const CONVERT_STEP: usize = 256 << 10;

/// The byte-order conversion `to` asks for, and whether it changes bytes.
/// (One that does not still relabels the dtype.)
fn converter(dtype: &DType, to: Option<ByteOrder>) -> (Option<ByteOrderConverter>, bool) {
    let converter = to.map(|to| ByteOrderConverter::new(dtype, to));
    let swaps = converter.as_ref().is_some_and(|c| !c.is_noop());
    (converter, swaps)
}

/// Reads an `.npy` array from `reader`, which is left just after the data
/// (several arrays can be read from one stream, like NumPy allows).
///
/// With [`ReadOptions::to_native`] the data is converted piece by piece as
/// it arrives, not in a second pass.
///
/// Errors: header errors from [`Header::read_from`], read errors, and
/// [`Error::TruncatedData`] when the stream ends early.
pub fn read_npy<R: Read>(mut reader: R, options: &ReadOptions) -> Result<NpyArray> {
    let crate::header::ParsedHeader { mut header, layout } =
        Header::read_from(&mut reader, &options.parse)?;
    options.check_data_len(&layout)?;
    if header.dtype == DType::Object {
        return read_objects(reader, &header, layout, options);
    }
    let expected = layout.data_len;
    let (converter, swaps) = converter(
        &header.dtype,
        options.to_native.then_some(ByteOrder::NATIVE),
    );
    let mut bytes: Vec<u8> = Vec::new();
    let mut converted = 0;
    while bytes.len() < expected {
        let filled = bytes.len();
        let target = filled.saturating_mul(2).max(FIRST_CHUNK).min(expected);
        bytes.try_reserve_exact(target - filled).map_err(|e| {
            std::io::Error::new(
                ErrorKind::OutOfMemory,
                format!("cannot allocate {target} bytes for array data: {e}"),
            )
        })?;
        while bytes.len() < target {
            let want = match swaps {
                true => CONVERT_STEP.min(target - bytes.len()),
                false => target - bytes.len(),
            };
            // `read_to_end` reads straight into the reserved capacity without
            // zero-filling it first; `take` keeps it from growing the vector.
            let got = (&mut reader).take(want as u64).read_to_end(&mut bytes)?;
            if let Some(converter) = converter.as_ref().filter(|_| swaps) {
                converted += converter.convert(&mut bytes[converted..]);
            }
            if got < want {
                return Err(Error::truncated_data(&header, bytes.len()));
            }
        }
    }
    if let Some(converter) = converter {
        header.dtype = converter.converted_dtype().clone();
    }
    Ok(NpyArray::read(
        header,
        layout,
        AlignedBytes::from_vec(bytes),
    ))
}

/// Reads the pickle that follows an object array's `header` (which
/// [`ParseOptions::allow_pickle`] let through), up to its end and no
/// further. The layout's `data_len` becomes the pickle's length.
///
/// This is [`decode_objects`] with the values made as [`PyValue`](crate::pickle::PyValue)s.
///
/// Errors: [`Error::Unpickling`] for what the restricted unpickler refuses,
/// or when the pickle does not hold an object array of the header's shape.
pub fn read_objects<R: Read>(
    reader: R,
    header: &Header,
    layout: Layout,
    options: &ReadOptions,
) -> Result<NpyArray> {
    decode_objects(reader, header, layout, options)?.into_array()
}

/// An object array's pickle, decoded and checked against its header (an
/// object array of the header's shape), before its items are made:
/// [`build_items`](Self::build_items) makes them with any
/// [`Build`](crate::pickle::Build), [`into_array`](Self::into_array) as
/// [`PyValue`](crate::pickle::PyValue)s.
#[derive(Debug)]
pub struct ObjectData {
    decoded: crate::pickle::Decoded,
    header: Header,
    layout: Layout,
}

impl ObjectData {
    /// The array's header (dtype object).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Where the array lies in its file; `data_len` is the pickle's length.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The array's items in its memory order (`header().order`), made by
    /// `builder`: as many as the shape holds.
    ///
    /// Errors: as [`Decoded::build`](crate::pickle::Decoded::build)'s.
    pub fn build_items<B: crate::pickle::Build>(self, builder: &mut B) -> Result<Vec<B::Value>> {
        Ok(self.decoded.build_object_items(builder)?.1)
    }

    /// The array, its items as [`PyValue`](crate::pickle::PyValue)s.
    pub fn into_array(self) -> Result<NpyArray> {
        let header = self.header.clone();
        let layout = self.layout;
        let items = self.build_items(&mut crate::pickle::Tree)?;
        Ok(NpyArray::from_objects(header, items)?.with_layout(layout))
    }
}

/// Decodes the pickle that follows an object array's `header` (which
/// [`ParseOptions::allow_pickle`] let through), up to its end and no
/// further, and checks it holds an object array of the header's shape; its
/// items are made by [`ObjectData::build_items`]. The layout's `data_len`
/// becomes the pickle's length.
///
/// Errors: [`Error::Unpickling`] for what the restricted unpickler refuses,
/// or when the pickle does not hold an object array of the header's shape.
pub fn decode_objects<R: Read>(
    reader: R,
    header: &Header,
    layout: Layout,
    options: &ReadOptions,
) -> Result<ObjectData> {
    let (decoding, layout) = objects_pickle(reader, header, layout, options, |reader| {
        crate::pickle::decode_texts(reader, &options.pickle)
    })?;
    Ok(ObjectData {
        decoded: crate::pickle::Decoded::new(decoding),
        header: header.clone(),
        layout,
    })
}

/// [`decode_objects`] and [`ObjectData::build_items`] in one pass: the
/// pickle that follows an object array's `header` decoded up to its end
/// and no further, its items made by `builder` (each `str` as it is read,
/// see [`pickle::build`](crate::pickle::build)), in the header's memory
/// order. Returns the layout (its `data_len` the pickle's length) and the
/// items; what `builder` needs is needed for the whole decode.
///
/// `available`, when known (a file's bytes after the header), bounds the
/// pickle's length: room for the items the header declares, as many as
/// those bytes can hold, is made at once instead of grown as they come
/// (memory still follows the bytes that are there, never the header
/// alone).
///
/// Errors: as [`decode_objects`]'s and [`ObjectData::build_items`]'s.
pub fn build_objects<R: Read, B: crate::pickle::Build>(
    reader: R,
    header: &Header,
    layout: Layout,
    options: &ReadOptions,
    available: Option<u64>,
    builder: &mut B,
) -> Result<(Layout, Vec<B::Value>)> {
    // An item takes at least two bytes of pickle when it is a `str`; a few
    // more `str`s than items (the globals' names, a dtype's) are usual.
    let items = header.element_count().unwrap_or(0);
    let items = items.saturating_add(items / 64).saturating_add(64);
    let fit = available.map_or(0, |bytes| usize::try_from(bytes / 2).unwrap_or(usize::MAX));
    let expected = items.min(fit);
    let (decoding, layout) = objects_pickle(reader, header, layout, options, |reader| {
        crate::pickle::decode_made(reader, &options.pickle, builder, expected)
    })?;
    Ok((layout, decoding.build_made_items()?.1))
}

/// The pickle after an object array's `header`, decoded by `decode` (its
/// `str`s kept as `S` keeps them) and checked to hold an object array of
/// the header's shape, and the layout with the pickle's length.
fn objects_pickle<R: Read, S>(
    reader: R,
    header: &Header,
    layout: Layout,
    options: &ReadOptions,
    decode: impl FnOnce(&mut std::io::Take<R>) -> Result<crate::pickle::Decoding<S>>,
) -> Result<(crate::pickle::Decoding<S>, Layout)> {
    // ReadOptions::max_data_len bounds the pickle's bytes: one more than
    // allowed is read at most.
    let mut limited = reader.take(options.max_data_len.map_or(u64::MAX, |max| max as u64 + 1));
    let decoded = decode(&mut limited);
    let too_large = |len: usize| match options.max_data_len {
        Some(max) if len > max => Some(Error::DataTooLarge { len, max }),
        _ => None,
    };
    let decoded = match decoded {
        Ok(decoded) => decoded,
        Err(error) if limited.limit() == 0 => {
            let max = options.max_data_len.unwrap_or(usize::MAX);
            return Err(too_large(max.saturating_add(1)).unwrap_or(error));
        }
        Err(error) => return Err(error),
    };
    let len = usize::try_from(decoded.consumed()).unwrap_or(usize::MAX);
    if let Some(error) = too_large(len) {
        return Err(error);
    }
    let mismatch = |found: String| Error::Unpickling {
        position: 0,
        reason: format!(
            "the pickle holds {found}, but the header describes an object array of shape {}",
            crate::pyrepr::shape_repr(&header.shape)
        ),
    };
    match decoded.not_object_array() {
        Some(Err(kind)) => return Err(mismatch(format!("a Python {kind}"))),
        Some(Ok(found)) => {
            return Err(mismatch(format!(
                "an array of {} with shape {}",
                found.dtype.descr(),
                crate::pyrepr::shape_repr(&found.shape)
            )));
        }
        None => {}
    }
    let shape = decoded.object_array_shape().unwrap_or_default();
    if shape != header.shape.as_slice() {
        return Err(mismatch(format!(
            "an array of {} with shape {}",
            DType::Object.descr(),
            crate::pyrepr::shape_repr(shape)
        )));
    }
    let layout = Layout {
        data_len: len,
        ..layout
    };
    Ok((decoded, layout))
}

/// Reads the data of an array with `header` from `reader` into `dest`,
/// which the caller allocated (it must hold exactly
/// [`Header::data_len`] bytes), converting it to byte order `to` on the way
/// when given. Returns the dtype that describes `dest` afterwards.
///
/// This is [`read_npy`] for callers that know the data's size can be
/// trusted (a file whose length was checked) and want to choose the memory:
/// npy-mmap's `load` reads into memory backed by huge pages.
///
/// Errors: [`Error::DataLength`] if `dest` has the wrong size, read errors,
/// [`Error::TruncatedData`] when the stream ends early.
///
/// ```
/// use npy_core::io::{read_data, write_npy};
/// use npy_core::{ByteOrder, Header, ParseOptions};
///
/// let mut file = Vec::new();
/// write_npy(&mut file, &[1u16, 2, 3][..])?;
/// let mut stream = file.as_slice();
/// let npy_core::ParsedHeader { header, layout } = Header::read_from(&mut stream, &ParseOptions::default())?;
/// let mut data = vec![0u8; layout.data_len];
/// let dtype = read_data(&mut stream, &header, &mut data, Some(ByteOrder::Big))?;
/// assert_eq!(data, [0, 1, 0, 2, 0, 3]);
/// assert_eq!(dtype.descr(), ">u2");
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn read_data<R: Read>(
    mut reader: R,
    header: &Header,
    dest: &mut [u8],
    to: Option<ByteOrder>,
) -> Result<DType> {
    let expected = header.data_len()?;
    if dest.len() != expected {
        return Err(Error::DataLength {
            expected,
            actual: dest.len(),
        });
    }
    let (converter, swaps) = converter(&header.dtype, to);
    let step = match swaps {
        // Whole elements per piece, so each piece converts on its own.
        true => {
            let itemsize = header.dtype.itemsize().max(1);
            (CONVERT_STEP / itemsize).max(1) * itemsize
        }
        false => dest.len().max(1),
    };
    let mut filled = 0;
    for piece in dest.chunks_mut(step) {
        let got = read_full(&mut reader, piece)?;
        filled += got;
        if got < piece.len() {
            return Err(Error::truncated_data(header, filled));
        }
        if let Some(converter) = converter.as_ref().filter(|_| swaps) {
            converter.convert(piece);
        }
    }
    Ok(match converter {
        Some(converter) => converter.converted_dtype().clone(),
        None => header.dtype.clone(),
    })
}

/// Writes `source` as an `.npy` file to `writer`: the header encoded like
/// `np.save` ([`Header::to_bytes`]), then the data; an object array's
/// values as the pickle `np.save` writes.
///
/// The one writer for streams; `npy_mmap::save` (paths),
/// `NpzWriter::add` (archive members) and `npy_remote::upload` (object
/// stores) take the same sources.
///
/// Errors: header encoding errors, [`Error::DataLength`] when the source's
/// data does not add up to what its header describes, write errors.
///
/// ```
/// use npy_core::{NpyArray, ReadOptions, read_npy, write_npy};
///
/// let mut file = Vec::new();
/// write_npy(&mut file, &[1u8, 2, 3][..])?;
/// let array: NpyArray = read_npy(file.as_slice(), &ReadOptions::default())?;
/// assert_eq!(array.bytes(), [1, 2, 3]);
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn write_npy<W: Write, S: NpySource + ?Sized>(mut writer: W, source: &S) -> Result<()> {
    let header = source.npy_header();
    if header.dtype.has_object() {
        let data = source.npy_data()?;
        writer.write_all(&header.to_bytes(None)?)?;
        for chunk in data {
            writer.write_all(&chunk)?;
        }
        writer.flush()?;
        return Ok(());
    }
    let mut npy = NpyWriter::new(writer, &header, None)?;
    for chunk in source.npy_data()? {
        npy.write_bytes(&chunk)?;
    }
    npy.finish()?;
    Ok(())
}

/// Writes an array piece by piece in bounded memory: the header first, then
/// data chunks in memory order, then [`NpyWriter::finish`] checks the total.
///
/// ```
/// use npy_core::io::NpyWriter;
/// use npy_core::{Element, Header, Order};
///
/// let header = Header { dtype: u16::dtype(), order: Order::C, shape: vec![1000] };
/// let mut writer = NpyWriter::new(Vec::new(), &header, None)?;
/// for chunk in (0..1000u16).collect::<Vec<_>>().chunks(64) {
///     writer.write_elements(chunk)?;
/// }
/// let file = writer.finish()?;
/// assert_eq!(file.len(), 128 + 2000);
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug)]
#[must_use = "finish() checks that all the data the header promises was written"]
pub struct NpyWriter<W: Write> {
    writer: W,
    element: DType,
    expected: usize,
    written: usize,
}

impl<W: Write> NpyWriter<W> {
    /// Writes the header (`version` `None` picks it like NumPy) and returns a
    /// writer for the data.
    ///
    /// Errors: [`Error::ObjectData`] for an object dtype, whose data is not
    /// bytes ([`write_npy`] writes object arrays); header encoding errors.
    pub fn new(mut writer: W, header: &Header, version: Option<Version>) -> Result<Self> {
        if header.dtype.has_object() {
            return Err(Error::ObjectData);
        }
        let expected = header.data_len()?;
        writer.write_all(&header.to_bytes(version)?)?;
        let mut element = &header.dtype;
        while let DType::SubArray(base, _) = element {
            element = base;
        }
        Ok(NpyWriter {
            writer,
            element: element.clone(),
            expected,
            written: 0,
        })
    }

    /// Data bytes written so far.
    pub fn written(&self) -> usize {
        self.written
    }

    /// Data bytes the header still expects.
    pub fn remaining(&self) -> usize {
        self.expected - self.written
    }

    /// Writes raw data bytes. Writing more than the header describes is an
    /// [`Error::DataLength`] and writes nothing.
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.len() > self.remaining() {
            return Err(Error::DataLength {
                expected: self.expected,
                actual: self.written.saturating_add(bytes.len()),
            });
        }
        self.writer.write_all(bytes)?;
        self.written += bytes.len();
        Ok(())
    }

    /// Writes elements, which must match the header's (element) dtype.
    pub fn write_elements<T: Element>(&mut self, elements: &[T]) -> Result<()> {
        if !T::matches(&self.element) || self.element.itemsize() != size_of::<T>() {
            return Err(Error::TypeMismatch {
                found: Box::new(self.element.clone()),
                requested: Box::new(T::dtype()),
                rust_type: std::any::type_name::<T>(),
            });
        }
        self.write_bytes(elements.as_bytes())
    }

    /// Checks that all the data was written, flushes, and returns the writer.
    pub fn finish(mut self) -> Result<W> {
        if self.written != self.expected {
            return Err(Error::DataLength {
                expected: self.expected,
                actual: self.written,
            });
        }
        self.writer.flush()?;
        Ok(self.writer)
    }
}

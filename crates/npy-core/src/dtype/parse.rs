//! Reading a dtype: [`DType::parse`] (a descr, quoted or not, or a type
//! string) and the check that a dtype reads back as itself, above the model
//! and the two readers (`type_str`, `structured`) it dispatches to.

use super::type_str::parse_type_str;
use super::{DType, MAX_ITEMSIZE, too_big_itemsize};
use crate::error::{Error, Result};
use crate::literal;
use crate::pyrepr::str_repr;

impl DType {
    /// Parses a descr.
    ///
    /// Accepts the header syntax (a Python literal: `'<f8'`,
    /// `[('x', '<i4'), ('y', '>f8', (2, 3))]`, `('<i4', (2,))`) and, for
    /// convenience, a bare type string (`<f8`, `int32`, `M8[ms]`) when the text
    /// does not start like a literal. Type strings follow `numpy.dtype(str)`:
    /// byte-order prefixes `<`, `>`, `=`, `|`; kind plus size (`i4`, `S10`,
    /// `U3`, `V0`); one-character codes (`?`, `b`, `i`, `d`, `g`, ...; C sizes
    /// of LP64 platforms: `l` is 8 bytes); names (`float64`, `bool`, `int`,
    /// `datetime64[ns]`, ...). Object types (`O`, `|O8`, `object`) are refused
    /// with [`Error::ObjectDType`], anywhere in the descr.
    ///
    /// ```
    /// use npy_core::{ByteOrder, DType, Scalar, ScalarKind};
    /// let d = DType::parse("[('x', '<i4'), ('y', '>f8', (2, 3))]")?;
    /// assert_eq!(d.itemsize(), 4 + 8 * 6);
    /// assert_eq!(d.descr(), "[('x', '<i4'), ('y', '>f8', (2, 3))]");
    /// assert_eq!(
    ///     DType::parse("'>u2'")?,
    ///     DType::Scalar(Scalar::new(ScalarKind::UInt, ByteOrder::Big, 2))
    /// );
    /// assert_eq!(DType::parse("float64")?.descr(), "<f8");
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn parse(descr: &str) -> Result<DType> {
        let text = descr.trim_matches(|c: char| c.is_ascii_whitespace());
        let prefix_len = text.bytes().take_while(u8::is_ascii_alphabetic).count();
        let looks_literal = matches!(text.as_bytes().first(), Some(b'(' | b'[' | b'{' | b'#'))
            || matches!(text.as_bytes().get(prefix_len), Some(b'\'' | b'"'));
        if !looks_literal {
            return parse_type_str(text);
        }
        let literal =
            literal::parse(text, literal::Options::default()).map_err(|e| Error::InvalidDType {
                reason: format!("{} at byte {} of {}", e.reason, e.offset, str_repr(text)),
            })?;
        DType::from_literal(&literal, literal.root())
    }

    /// Checks that NumPy could write this dtype: record fields in order and
    /// not overlapping, every itemsize at most [`MAX_ITEMSIZE`].
    pub(crate) fn check_writable(&self) -> Result<()> {
        self.check_writable_with(&mut String::new())
    }

    /// [`DType::check_writable`] with scratch space for the type strings,
    /// shared by all the fields of a record.
    fn check_writable_with(&self, type_text: &mut String) -> Result<()> {
        if self.itemsize() > MAX_ITEMSIZE {
            return Err(too_big_itemsize());
        }
        match self {
            // A hand-built scalar must be one the reader understands back
            // (no `<i3`, no `U` of 5 bytes, no 4-byte datetime).
            DType::Scalar(s) => {
                type_text.clear();
                s.push_type_str(type_text);
                match parse_type_str(type_text) {
                    Ok(DType::Scalar(back)) if back == s.normalized() => Ok(()),
                    _ => Err(Error::InvalidDType {
                        reason: format!("no descr describes {s:?}"),
                    }),
                }
            }
            DType::SubArray(base, _) if base.has_object() => Err(Error::ObjectField),
            DType::SubArray(base, _) => base.check_writable_with(type_text),
            DType::Object => Ok(()),
            DType::Structured(record) => {
                if self.has_object() {
                    return Err(Error::ObjectField);
                }
                let mut end = 0usize;
                for field in &record.fields {
                    field.dtype.check_writable_with(type_text)?;
                    if field.offset < end {
                        return Err(Error::UnwritableRecord);
                    }
                    end = field
                        .offset
                        .checked_add(field.dtype.itemsize())
                        .ok_or_else(too_big_itemsize)?;
                }
                if end > record.itemsize {
                    return Err(Error::UnwritableRecord);
                }
                Ok(())
            }
        }
    }
}

impl std::str::FromStr for DType {
    type Err = Error;

    /// [`DType::parse`]: a descr, quoted or not, or any type string numpy accepts.
    fn from_str(text: &str) -> Result<DType> {
        DType::parse(text)
    }
}

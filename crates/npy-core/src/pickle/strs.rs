//! Where the unpickler keeps the `str`s it reads (object arrays are mostly
//! strings): as text, for values made later by any [`Build`] ([`Texts`],
//! what [`decode`](super::decode) keeps, nothing of the caller's needed),
//! or made at once by the caller's builder ([`Made`], the one pass of
//! [`build`](super::build): no copy of the text, no second walk over the
//! strings). Either way a `str` is an index, in the order of the pickle;
//! numpy's patterns read a few back as text ([`Strs::text`]).

use std::borrow::Cow;

use super::builder::Build;
use crate::error::{Error, Result};

/// The `str`s the unpickler has read.
pub(super) trait Strs {
    /// Keeps a `str` of the bytes the pickle says are UTF-8 (an invalid
    /// one is an error now or at [`finish`](Self::finish)).
    fn push_utf8(&mut self, utf8: &[u8], position: u64) -> Result<()>;
    /// Keeps a `str` already checked.
    fn push_str(&mut self, text: &str, position: u64) -> Result<()>;
    /// How many `str`s are kept.
    fn count(&self) -> usize;
    /// The text of `str` `index`, for numpy's patterns (`None`: not a
    /// `str`'s, which a builder may say of what it made).
    fn text(&self, index: usize, position: u64) -> Result<Cow<'_, str>>;
    /// At the pickle's `STOP`: every `str` checked.
    fn finish(&mut self, position: u64) -> Result<()>;
}

/// The `str`s as text, one after another in one buffer: no allocation per
/// string, validated as UTF-8 in one pass at the end (many times cheaper
/// than a validation per string).
#[derive(Debug, Default)]
pub(crate) struct Texts {
    /// Where each `str`'s text ends in `text` (it starts where the one
    /// before ends).
    ends: Vec<usize>,
    /// The text of every `str`, as the pickle gives it.
    text: Vec<u8>,
    /// `text`, validated (after `finish`).
    checked: String,
}

impl Texts {
    fn span(&self, index: usize) -> (usize, usize) {
        let start = index.checked_sub(1).map_or(0, |before| self.ends[before]);
        (start, self.ends[index])
    }

    /// The bytes of text of all the strings.
    pub(super) fn total_len(&self) -> usize {
        self.ends.last().copied().unwrap_or(0)
    }

    /// A string's text after [`finish`](Strs::finish).
    #[inline]
    pub(super) fn checked(&self, index: usize) -> &str {
        let (start, end) = self.span(index);
        &self.checked[start..end]
    }

    /// The error for invalid UTF-8 at byte `at` of the text.
    fn utf8_error(&self, at: usize, position: u64) -> Error {
        let index = self.ends.partition_point(|&end| end <= at);
        let start = index.checked_sub(1).map_or(0, |before| self.ends[before]);
        Error::Unpickling {
            position,
            reason: format!(
                "invalid UTF-8 in a str at byte {} (the pickle's str number {})",
                at - start,
                index + 1
            ),
        }
    }
}

impl Strs for Texts {
    #[inline]
    fn push_utf8(&mut self, utf8: &[u8], _position: u64) -> Result<()> {
        self.text.extend_from_slice(utf8);
        self.ends.push(self.text.len());
        Ok(())
    }

    fn push_str(&mut self, text: &str, position: u64) -> Result<()> {
        self.push_utf8(text.as_bytes(), position)
    }

    fn count(&self) -> usize {
        self.ends.len()
    }

    fn text(&self, index: usize, position: u64) -> Result<Cow<'_, str>> {
        let (start, end) = self.span(index);
        if self.text.is_empty() {
            // Finished (or no text at all).
            return Ok(Cow::Borrowed(&self.checked[start..end]));
        }
        std::str::from_utf8(&self.text[start..end])
            .map(Cow::Borrowed)
            .map_err(|e| Error::Unpickling {
                position,
                reason: format!("invalid UTF-8 in a str at byte {}", e.valid_up_to()),
            })
    }

    /// Checks that every `str`'s text is UTF-8: the text as a whole, and
    /// each string's ends on a character's boundary (so each string is
    /// UTF-8 by itself).
    fn finish(&mut self, position: u64) -> Result<()> {
        let text = std::mem::take(&mut self.text);
        let checked = match String::from_utf8(text) {
            Ok(checked) => checked,
            Err(error) => {
                let at = error.utf8_error().valid_up_to();
                return Err(self.utf8_error(at, position));
            }
        };
        if let Some(&end) = self
            .ends
            .iter()
            .find(|&&end| !checked.is_char_boundary(end))
        {
            // A string that ends inside a character (which the next begins).
            let at = (0..end).rev().find(|&i| checked.is_char_boundary(i));
            return Err(self.utf8_error(at.unwrap_or(0), position));
        }
        self.checked = checked;
        Ok(())
    }
}

/// The `str`s made at once by the caller's builder, in one pass with the
/// decode: nothing of their text is kept (numpy's patterns read the few
/// they need back from the builder, [`Build::str_text`]).
pub(crate) struct Made<'b, B: Build> {
    pub(super) builder: &'b mut B,
    /// The bytes of text the pickle gave them.
    pub(super) text_bytes: usize,
    /// Each `str`'s value until the walk takes it.
    pub(super) values: Vec<Option<B::Value>>,
}

impl<B: Build> std::fmt::Debug for Made<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Made({} strs)", self.values.len())
    }
}

impl<B: Build> Strs for Made<'_, B> {
    #[inline]
    fn push_utf8(&mut self, utf8: &[u8], position: u64) -> Result<()> {
        let value = self
            .builder
            .str_from_utf8(utf8)
            .map_err(|e| at(e, position))?;
        self.values.push(Some(value));
        self.text_bytes += utf8.len();
        Ok(())
    }

    fn push_str(&mut self, text: &str, position: u64) -> Result<()> {
        let value = self.builder.str(text).map_err(|e| at(e, position))?;
        self.values.push(Some(value));
        self.text_bytes += text.len();
        Ok(())
    }

    fn count(&self) -> usize {
        self.values.len()
    }

    fn text(&self, index: usize, position: u64) -> Result<Cow<'_, str>> {
        self.values[index]
            .as_ref()
            .and_then(|value| self.builder.str_text(value))
            .ok_or_else(|| Error::Unpickling {
                position,
                reason: "a str made by the builder cannot be read back as text".to_owned(),
            })
    }

    fn finish(&mut self, _position: u64) -> Result<()> {
        Ok(())
    }
}

/// A builder's error placed at `position` of the pickle (its own say 0).
fn at(error: Error, position: u64) -> Error {
    match error {
        Error::Unpickling {
            position: 0,
            reason,
        } => Error::Unpickling { position, reason },
        other => other,
    }
}

/// How the walk gets a `str`'s value at its first use.
pub(super) trait StrValues<B: Build> {
    /// How many `str`s there are.
    fn count(&self) -> usize;
    /// The bytes of text of all the `str`s.
    fn text_bytes(&self) -> usize;
    /// The bytes of text of `str` `index`, whose value is `value`.
    fn len(&self, index: usize, value: &B::Value, builder: &B) -> usize;
    /// The value of `str` `index`, at its first use.
    fn value(&mut self, index: usize, builder: &mut B) -> Result<B::Value>;
    /// The values of the `count` `str`s from `first` on, each at its
    /// first use, in one move if they are at hand (the items of an object
    /// array of strings, as `np.save` writes it); `None` leaves them to
    /// [`value`](Self::value).
    fn take_run(&mut self, _first: usize, _count: usize) -> Option<Vec<B::Value>> {
        None
    }
}

impl<B: Build> StrValues<B> for Texts {
    fn count(&self) -> usize {
        super::strs::Strs::count(self)
    }
    fn text_bytes(&self) -> usize {
        self.total_len()
    }
    fn len(&self, index: usize, _value: &B::Value, _builder: &B) -> usize {
        self.checked(index).len()
    }
    #[inline]
    fn value(&mut self, index: usize, builder: &mut B) -> Result<B::Value> {
        builder.str(self.checked(index))
    }
}

/// The values of the `str`s the one pass made, until the walk takes them:
/// in `head`, but for one run of them an object array took at once
/// (`hole`), the ones after it in `tail`.
pub(super) struct MadeValues<V> {
    /// The bytes of text the pickle gave them.
    text_bytes: usize,
    head: Vec<Option<V>>,
    hole: Option<std::ops::Range<usize>>,
    tail: Vec<Option<V>>,
}

impl<V> MadeValues<V> {
    pub(super) fn new(values: Vec<Option<V>>, text_bytes: usize) -> Self {
        MadeValues {
            text_bytes,
            head: values,
            hole: None,
            tail: Vec::new(),
        }
    }

    /// Where the value of `str` `index` is (`None`: taken in the run).
    fn slot(&mut self, index: usize) -> Option<&mut Option<V>> {
        match &self.hole {
            Some(hole) if hole.contains(&index) => None,
            Some(hole) if index >= hole.end => self.tail.get_mut(index - hole.end),
            _ => self.head.get_mut(index),
        }
    }
}

impl<B: Build> StrValues<B> for MadeValues<B::Value> {
    fn count(&self) -> usize {
        let run = self.hole.as_ref().map_or(0, |hole| hole.len());
        self.head.len() + run + self.tail.len()
    }
    fn text_bytes(&self) -> usize {
        self.text_bytes
    }
    fn len(&self, _index: usize, value: &B::Value, builder: &B) -> usize {
        builder.str_text(value).map_or(0, |text| text.len())
    }
    #[inline]
    fn value(&mut self, index: usize, _builder: &mut B) -> Result<B::Value> {
        self.slot(index)
            .and_then(Option::take)
            .ok_or_else(|| Error::Unpickling {
                position: 0,
                reason: "internal error: a str made once is used twice".to_owned(),
            })
    }
    fn take_run(&mut self, first: usize, count: usize) -> Option<Vec<B::Value>> {
        let end = first.checked_add(count)?;
        let run = self.head.get(first..end)?;
        if self.hole.is_some() || run.iter().any(Option::is_none) {
            return None;
        }
        // The strs after the run and before it (a few: a global's names)
        // moved out, the run's values kept where they were made.
        self.tail = self.head.split_off(end);
        let mut run = std::mem::take(&mut self.head);
        self.head = run.drain(..first).collect();
        self.hole = Some(first..end);
        // In place (the same allocation: an `Option` of a value the size
        // of the value); every one is there (checked above).
        let values: Vec<B::Value> = run.into_iter().map_while(|value| value).collect();
        (values.len() == count).then_some(values)
    }
}

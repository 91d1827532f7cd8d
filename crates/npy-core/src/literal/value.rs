//! What a parsed literal is: [`Value`]s that borrow from the text where
//! they can, the strings the parser had to build, the items of every
//! container in one list ([`Literal`]), and Python's `repr()` of a value.

/// A parsed Python literal, borrowing from the parsed text where it can.
///
/// Containers hold a range of their [`Literal`]'s item list, not their
/// items: read them with [`Literal::items`]; strings the parser had to build
/// are kept by the literal too ([`Literal::text`], [`Literal::bytes`]). So a
/// value is plain data, cheap to move and with nothing to drop.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Value<'a> {
    /// `'text'`
    Str(TextRef<'a>),
    /// `b'bytes'`
    Bytes(BytesRef<'a>),
    /// An integer (literals outside `i128` are refused).
    Int(i128),
    /// A float, kept as written (without `_` separators) for messages.
    Float(TextRef<'a>),
    /// `True` (no `Bool(bool)`: a field right after the tag makes every
    /// copy of a value a slow byte-wise one)
    True,
    /// `False`
    False,
    /// `None`
    None,
    /// `(a, b)`
    Tuple(Items),
    /// `[a, b]`
    List(Items),
    /// `{k: v}` in source order, duplicates kept: keys and values alternate.
    Dict(Items),
}

/// A string value: a slice of the parsed text, or the index of a string the
/// parser built (escapes, concatenation) among the literal's.
#[derive(Clone, Copy, Debug)]
pub(crate) enum TextRef<'a> {
    Slice(&'a str),
    Built(usize),
}

/// A bytes value: a slice of the parsed text, or the index of one the parser
/// built among the literal's.
#[derive(Clone, Copy, Debug)]
pub(crate) enum BytesRef<'a> {
    Slice(&'a [u8]),
    Built(usize),
}

/// The strings and bytes the parser built, which values refer to by index.
#[derive(Debug, Default)]
pub(super) struct Built {
    texts: Vec<String>,
    bytes: Vec<Vec<u8>>,
}

impl Built {
    pub(super) fn add_text(&mut self, text: String) -> TextRef<'static> {
        self.texts.push(text);
        TextRef::Built(self.texts.len() - 1)
    }

    pub(super) fn add_bytes(&mut self, bytes: Vec<u8>) -> BytesRef<'static> {
        self.bytes.push(bytes);
        BytesRef::Built(self.bytes.len() - 1)
    }

    pub(super) fn text<'s>(&'s self, text: TextRef<'s>) -> &'s str {
        match text {
            TextRef::Slice(s) => s,
            TextRef::Built(i) => &self.texts[i],
        }
    }

    pub(super) fn bytes<'s>(&'s self, bytes: BytesRef<'s>) -> &'s [u8] {
        match bytes {
            BytesRef::Slice(b) => b,
            BytesRef::Built(i) => &self.bytes[i],
        }
    }
}

/// Where a container's items are in [`Literal::items`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Items {
    pub(super) start: usize,
    pub(super) len: usize,
}

/// A parsed literal: the root value and the items of all its containers.
#[derive(Debug)]
pub(crate) struct Literal<'a> {
    pub(super) root: Value<'a>,
    /// Each container's items, contiguous, inner containers first.
    pub(super) items: Vec<Value<'a>>,
    pub(super) built: Built,
}

impl<'a> Literal<'a> {
    /// The whole literal.
    pub(crate) fn root(&self) -> &Value<'a> {
        &self.root
    }

    /// The items of a container of this literal (keys and values alternate
    /// for a dict).
    pub(crate) fn items(&self, items: Items) -> &[Value<'a>] {
        &self.items[items.start..items.start + items.len]
    }

    /// The text of a string (or float) value of this literal.
    pub(crate) fn text<'s>(&'s self, text: TextRef<'s>) -> &'s str {
        self.built.text(text)
    }

    /// `value` (a part of this literal) as Python's `repr()` prints it (used
    /// in error messages).
    pub(crate) fn repr(&self, value: &Value<'_>) -> String {
        let mut out = String::new();
        self.push_repr(&mut out, value);
        out
    }

    /// [`Literal::repr`] of a list of values of this literal.
    pub(crate) fn list_repr<'v, 'b: 'v>(
        &self,
        values: impl IntoIterator<Item = &'v Value<'b>>,
    ) -> String {
        let mut out = String::from("[");
        for (i, value) in values.into_iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            self.push_repr(&mut out, value);
        }
        out.push(']');
        out
    }

    fn push_repr(&self, out: &mut String, value: &Value<'_>) {
        use std::fmt::Write;
        match value {
            Value::Str(s) => crate::pyrepr::push_str_repr(out, self.built.text(*s)),
            Value::Bytes(b) => crate::pyrepr::push_bytes_repr(out, self.built.bytes(*b)),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Float(f) => out.push_str(self.built.text(*f)),
            Value::True => out.push_str("True"),
            Value::False => out.push_str("False"),
            Value::None => out.push_str("None"),
            Value::Tuple(items) => {
                out.push('(');
                self.push_items(out, self.items(*items));
                if items.len == 1 {
                    out.push(',');
                }
                out.push(')');
            }
            Value::List(items) => {
                out.push('[');
                self.push_items(out, self.items(*items));
                out.push(']');
            }
            Value::Dict(items) => {
                out.push('{');
                for (i, entry) in self.items(*items).chunks_exact(2).enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.push_repr(out, &entry[0]);
                    out.push_str(": ");
                    self.push_repr(out, &entry[1]);
                }
                out.push('}');
            }
        }
    }

    fn push_items(&self, out: &mut String, items: &[Value<'_>]) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            self.push_repr(out, item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::parser::{Options, parse};

    #[test]
    fn repr_matches_python() {
        let text = "{'a': (1,), 'b': [True, None, ()], b'c': (1, 2), 'd': -1.5}";
        let literal = parse(text, Options::default()).expect("parses");
        assert_eq!(
            literal.repr(literal.root()),
            "{'a': (1,), 'b': [True, None, ()], b'c': (1, 2), 'd': -1.5}"
        );
    }
}

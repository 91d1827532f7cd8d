//! The parser: one left-to-right pass over the lexer's tokens into a
//! [`Literal`], containers on a fixed stack at most [`MAX_NESTING`] deep.

use super::lexer::{Bracket, Lexer, StrBuf, SyntaxError, Token, err};
use super::value::{Built, Items, Literal, Value};

/// Deepest nesting of brackets accepted.
///
/// A structured dtype costs two levels per nesting level (the field list and
/// the field tuple), plus one for the header dict, so this admits records
/// nested about 30 deep.
const MAX_NESTING: usize = 64;

/// Parser settings.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Options {
    /// Accept a Python-2 `L` right after a number (`(2L,)`), as NumPy does for
    /// version 1.0 and 2.0 headers.
    pub(crate) allow_long_suffix: bool,
}

/// Parses `text` as exactly one Python literal, surrounded by any whitespace
/// and comments.
pub(crate) fn parse(text: &str, options: Options) -> Result<Literal<'_>, SyntaxError> {
    Parser {
        lexer: Lexer {
            src: text,
            pos: 0,
            allow_long_suffix: options.allow_long_suffix,
            built: Built::default(),
            start: 0,
            atom: Value::None,
        },
        stack: FrameStack {
            frames: [Frame::List { start: 0 }; MAX_NESTING],
            len: 0,
        },
        // A value takes a few characters of text, often more, and a
        // container's items are open at once: these rarely regrow for a
        // header, and the cap keeps a text that holds few values (a huge
        // string) from reserving many times its size.
        open_items: Vec::with_capacity((text.len() / 16).clamp(16, 1024)),
        closed_items: Vec::with_capacity((text.len() / 6).min(1024)),
    }
    .run()
}

/// An open container. Its items so far sit on the parser's stack of open
/// items from `start` on; closing it moves them to the finished items.
#[derive(Clone, Copy)]
enum Frame {
    /// Whether a comma was seen (`(1)` is an int, `(1,)` a tuple).
    Tuple {
        start: usize,
        comma: bool,
    },
    List {
        start: usize,
    },
    /// Keys and values alternate on the item stack; `has_key` when a key
    /// waits for its value.
    Dict {
        start: usize,
        has_key: bool,
    },
}

/// The open containers, innermost last. A fixed array: the depth is bounded
/// anyway, and this saves an allocation per parse.
struct FrameStack {
    frames: [Frame; MAX_NESTING],
    len: usize,
}

impl FrameStack {
    fn len(&self) -> usize {
        self.len
    }

    /// The caller checks the depth against [`MAX_NESTING`] first.
    fn push(&mut self, frame: Frame) {
        self.frames[self.len] = frame;
        self.len += 1;
    }

    fn pop(&mut self) -> Option<Frame> {
        self.len = self.len.checked_sub(1)?;
        Some(self.frames[self.len])
    }

    fn last_mut(&mut self) -> Option<&mut Frame> {
        self.len.checked_sub(1).map(|top| &mut self.frames[top])
    }
}

/// Builds the literal from the lexer's tokens, with an explicit stack of
/// open containers instead of recursion.
struct Parser<'a> {
    lexer: Lexer<'a>,
    stack: FrameStack,
    /// The items of every open container so far, innermost last.
    open_items: Vec<Value<'a>>,
    /// The items of the closed containers, each container's contiguous: the
    /// literal's [`Literal::items`].
    closed_items: Vec<Value<'a>>,
}

impl<'a> Parser<'a> {
    fn run(mut self) -> Result<Literal<'a>, SyntaxError> {
        // True where a closing bracket may come instead of a value: right after
        // an opening bracket or a comma.
        let mut may_close = false;
        self.reject_leading_indent()?;
        'value: loop {
            let token = self.lexer.next()?;
            let at = self.lexer.start;
            let mut value = match token {
                Token::Open(bracket) => {
                    if self.stack.len() >= MAX_NESTING {
                        return err("too many nested brackets", at);
                    }
                    let start = self.open_items.len();
                    self.stack.push(match bracket {
                        Bracket::Paren => Frame::Tuple {
                            start,
                            comma: false,
                        },
                        Bracket::Square => Frame::List { start },
                        Bracket::Curly => Frame::Dict {
                            start,
                            has_key: false,
                        },
                    });
                    may_close = true;
                    continue 'value;
                }
                Token::Close(bracket) if may_close => self.close(bracket, at)?,
                Token::Atom => {
                    let atom = self.lexer.atom;
                    if matches!(atom, Value::Str(_) | Value::Bytes(_))
                        && self.lexer.string_follows()
                    {
                        self.concatenate(atom)?
                    } else {
                        atom
                    }
                }
                Token::Plus | Token::Minus => {
                    let negative = token == Token::Minus;
                    let operand = self.lexer.next()?;
                    match (operand, self.lexer.atom) {
                        (Token::Atom, Value::Int(i)) => Value::Int(if negative { -i } else { i }),
                        (Token::Atom, Value::Float(f)) if negative => {
                            let text = format!("-{}", self.lexer.built.text(f));
                            Value::Float(self.lexer.built.add_text(text))
                        }
                        (Token::Atom, Value::Float(f)) => Value::Float(f),
                        _ => return err("a sign must be followed by a number", self.lexer.start),
                    }
                }
                Token::End => return err("unexpected end of text", at),
                _ => return err("expected a value", at),
            };
            // Fold the finished value into the enclosing containers.
            loop {
                if self.stack.len() == 0 {
                    self.lexer.skip_padding();
                }
                let token = self.lexer.next()?;
                let at = self.lexer.start;
                let Some(top) = self.stack.last_mut() else {
                    return match token {
                        Token::End => Ok(Literal {
                            root: value,
                            items: self.closed_items,
                            built: self.lexer.built,
                        }),
                        _ => err("unexpected text after the literal", at),
                    };
                };
                let expected_close = match top {
                    Frame::Dict {
                        has_key: has_key @ false,
                        ..
                    } => {
                        if !matches!(token, Token::Colon) {
                            return err("expected ':' after a dict key", at);
                        }
                        *has_key = true;
                        self.open_items.push(value);
                        may_close = false;
                        continue 'value;
                    }
                    Frame::Dict { has_key, .. } => {
                        *has_key = false;
                        Bracket::Curly
                    }
                    Frame::List { .. } => Bracket::Square,
                    Frame::Tuple { comma, .. } => {
                        if matches!(token, Token::Comma) {
                            *comma = true;
                        }
                        Bracket::Paren
                    }
                };
                self.open_items.push(value);
                match token {
                    Token::Comma => {
                        may_close = true;
                        continue 'value;
                    }
                    Token::Close(bracket) if bracket == expected_close => {
                        value = self.close(bracket, at)?;
                    }
                    _ => return err("expected ',' or a closing bracket", at),
                }
            }
        }
    }

    /// Implicit concatenation: `'a' "b"` is `'ab'`. `first` is a string or
    /// bytes value and another string follows.
    fn concatenate(&mut self, first: Value<'a>) -> Result<Value<'a>, SyntaxError> {
        let Some(mut joined) = StrBuf::holding(first, &self.lexer.built) else {
            return err("expected a value", self.lexer.pos);
        };
        while self.lexer.string_follows() {
            let at = self.lexer.pos;
            let more = self.lexer.next()?;
            let built = &self.lexer.built;
            match (&mut joined, more, self.lexer.atom) {
                (StrBuf::Text(s), Token::Atom, Value::Str(more)) => s.push_str(built.text(more)),
                (StrBuf::Bytes(b), Token::Atom, Value::Bytes(more)) => {
                    b.extend_from_slice(built.bytes(more))
                }
                _ => return err("cannot mix bytes and nonbytes literals", at),
            }
        }
        Ok(joined.into_value(&mut self.lexer.built))
    }

    /// Python strips spaces and tabs before the first line only: a literal
    /// that starts on a later line must not be indented.
    fn reject_leading_indent(&mut self) -> Result<(), SyntaxError> {
        self.lexer.skip_trivia();
        let before = &self.lexer.src[..self.lexer.pos];
        if let Some(newline) = before.rfind(['\n', '\r'])
            && newline + 1 < before.len()
        {
            return err("unexpected indent", self.lexer.pos);
        }
        Ok(())
    }

    /// Pops the innermost container, which `bracket` closes.
    #[inline(always)]
    fn close(&mut self, bracket: Bracket, at: usize) -> Result<Value<'a>, SyntaxError> {
        match (self.stack.pop(), bracket) {
            (Some(Frame::Tuple { start, comma }), Bracket::Paren) => {
                Ok(if self.open_items.len() == start + 1 && !comma {
                    self.open_items.pop().unwrap_or(Value::None)
                } else {
                    Value::Tuple(self.finish_items(start))
                })
            }
            (Some(Frame::List { start }), Bracket::Square) => {
                Ok(Value::List(self.finish_items(start)))
            }
            (
                Some(Frame::Dict {
                    start,
                    has_key: false,
                }),
                Bracket::Curly,
            ) => Ok(Value::Dict(self.finish_items(start))),
            _ => err("mismatched closing bracket", at),
        }
    }

    /// Moves the open items from `start` on to the finished ones.
    fn finish_items(&mut self, start: usize) -> Items {
        let items = Items {
            start: self.closed_items.len(),
            len: self.open_items.len() - start,
        };
        // Not `extend_from_slice`: a memcpy call is slow for the usual
        // two or three items.
        self.closed_items
            .extend(self.open_items[start..].iter().copied());
        self.open_items.truncate(start);
        items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parsed literal as a self-contained tree, to compare with.
    #[derive(Debug, PartialEq)]
    enum T {
        Str(String),
        Bytes(Vec<u8>),
        Int(i128),
        Float(String),
        Bool(bool),
        None,
        Tuple(Vec<T>),
        List(Vec<T>),
        Dict(Vec<(T, T)>),
    }

    fn tree(literal: &Literal<'_>, value: &Value<'_>) -> T {
        let all = |items| {
            literal
                .items(items)
                .iter()
                .map(|v| tree(literal, v))
                .collect::<Vec<_>>()
        };
        match value {
            Value::Str(s) => T::Str(literal.text(*s).to_owned()),
            Value::Bytes(b) => T::Bytes(literal.built.bytes(*b).to_vec()),
            Value::Int(i) => T::Int(*i),
            Value::Float(f) => T::Float(literal.text(*f).to_owned()),
            Value::True => T::Bool(true),
            Value::False => T::Bool(false),
            Value::None => T::None,
            Value::Tuple(items) => T::Tuple(all(*items)),
            Value::List(items) => T::List(all(*items)),
            Value::Dict(items) => {
                let mut flat = all(*items).into_iter();
                let mut pairs = Vec::new();
                while let (Some(k), Some(v)) = (flat.next(), flat.next()) {
                    pairs.push((k, v));
                }
                T::Dict(pairs)
            }
        }
    }

    fn parse_tree(text: &str, options: Options) -> Result<T, SyntaxError> {
        parse(text, options).map(|literal| tree(&literal, literal.root()))
    }

    fn p(text: &str) -> T {
        parse_tree(text, Options::default()).unwrap_or_else(|e| panic!("{text:?}: {e:?}"))
    }

    fn fails(text: &str) -> SyntaxError {
        parse(text, Options::default()).expect_err(text)
    }

    fn s(text: &str) -> T {
        T::Str(text.to_owned())
    }

    // Expected values checked with CPython 3.11's ast.literal_eval.
    #[test]
    fn parentheses_follow_python() {
        assert_eq!(p("(1)"), T::Int(1));
        assert_eq!(p("()"), T::Tuple(vec![]));
        assert_eq!(p("(1,)"), T::Tuple(vec![T::Int(1)]));
        assert_eq!(p("((1))"), T::Int(1));
        assert_eq!(p("(1, 2,)"), T::Tuple(vec![T::Int(1), T::Int(2)]));
        assert_eq!(p("[]"), T::List(vec![]));
        assert_eq!(p("[1,]"), T::List(vec![T::Int(1)]));
        assert_eq!(p("{1:2,}"), T::Dict(vec![(T::Int(1), T::Int(2))]));
        for bad in [
            "(,)",
            "[,]",
            "{,}",
            "(1 2)",
            "{1:2 3:4}",
            "(]",
            "{1}",
            "(1,,)",
            "",
            "  # c",
        ] {
            fails(bad);
        }
    }

    #[test]
    fn integers() {
        assert_eq!(p("0x1F"), T::Int(31));
        assert_eq!(p("0o17"), T::Int(15));
        assert_eq!(p("0b101"), T::Int(5));
        assert_eq!(p("0x_ff"), T::Int(255));
        assert_eq!(p("1_000"), T::Int(1000));
        assert_eq!(p("000"), T::Int(0));
        assert_eq!(p("-0"), T::Int(0));
        assert_eq!(p("+2"), T::Int(2));
        assert_eq!(p("- 3"), T::Int(-3));
        assert_eq!(p("-0x10"), T::Int(-16));
        // Either side of the short-run fast path.
        assert_eq!(p("999999999999999999"), T::Int(999_999_999_999_999_999));
        assert_eq!(p("9999999999999999999"), T::Int(9_999_999_999_999_999_999));
        assert_eq!(p("1_0000000000000000000"), T::Int(10i128.pow(19)));
        assert_eq!(p("(12, 3)"), T::Tuple(vec![T::Int(12), T::Int(3)]));
        assert_eq!(p("12.5"), T::Float("12.5".into()));
        for bad in [
            "007", "1__0", "1_", "0x", "0xg", "1L", "1j", "12abc", "--1", "+-1", "-True",
        ] {
            fails(bad);
        }
        assert_eq!(
            fails("1000000000000000000000000000000000000000000").reason,
            "integer literal too large"
        );
        let long = Options {
            allow_long_suffix: true,
        };
        assert_eq!(
            parse_tree("(2L, 0xffL)", long),
            Ok(T::Tuple(vec![T::Int(2), T::Int(255)]))
        );
        assert!(parse("2LL", long).is_err());
        assert!(parse("2l", long).is_err());
    }

    #[test]
    fn floats_and_names() {
        assert_eq!(p("1.5"), T::Float("1.5".into()));
        assert_eq!(p("-1e3"), T::Float("-1e3".into()));
        assert_eq!(p(".5"), T::Float(".5".into()));
        assert_eq!(p("None"), T::None);
        assert_eq!(p("True"), T::Bool(true));
        assert_eq!(p("False"), T::Bool(false));
        assert_eq!(fails("true").reason, "a name is not a literal");
        fails("1e");
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(p(r#""a'b""#), s("a'b"));
        assert_eq!(p(r"'a\'b'"), s("a'b"));
        assert_eq!(p(r"'\\'"), s("\\"));
        assert_eq!(p(r"'\n\t\r\a\b\f\v\0'"), s("\n\t\r\u{7}\u{8}\u{c}\u{b}\0"));
        assert_eq!(p(r"'\x41\101\u00e9\U0001F600'"), s("AAé😀"));
        assert_eq!(p(r"'\q'"), s("\\q"));
        assert_eq!(p("'a\\\nb'"), s("ab"));
        assert_eq!(p("u'x' 'y'  \"z\""), s("xyz"));
        assert_eq!(p(r"r'\n'"), s("\\n"));
        assert_eq!(p(r"r'\''"), s("\\'"));
        assert_eq!(p("'''a'b\"\"'''"), s("a'b\"\""));
        assert_eq!(p("'''a\r\nb'''"), s("a\nb"));
        assert_eq!(p("'café'"), s("café"));
        assert_eq!(p(r"b'\xff\u00e9'"), T::Bytes(b"\xff\\u00e9".to_vec()));
        assert_eq!(p(r"Rb'\n' b'x'"), T::Bytes(b"\\nx".to_vec()));
        for bad in [
            "'abc",
            "'a\nb'",
            r"'\x4'",
            r"'\N{DASH}'",
            r"'\ud800'",
            "b'é'",
            "u'a' b'b'",
            "f'x'",
            "'''ab''",
            r"'\'",
        ] {
            fails(bad);
        }
    }

    #[test]
    fn whitespace_comments_and_continuations() {
        let dict = T::Dict(vec![(s("a"), T::Int(1))]);
        for text in [
            "{'a': 1}",
            " \t{'a':1}",
            "\n{'a': 1}\n",
            "\r\n{'a' :\r\n 1}\r\n",
            "# c\n{'a': 1 # x\n}  # y",
            "\\\n{'a': 1}",
            "\x0c{'a': 1}\x0c",
            "# c\n  # indented comment\n{'a': 1}",
            "{'a': 1}                                                     \n",
        ] {
            assert_eq!(p(text), dict, "{text:?}");
        }
        assert_eq!(
            fails("{'a': 1}\0").reason,
            "source code string cannot contain null bytes"
        );
        assert_eq!(fails("\n\t {'a': 1}").reason, "unexpected indent");
        fails("{'a': 1} 2");
        // Trailing padding is skipped in chunks; what follows it still counts.
        let padded = format!("{{'a': 1}}{}2", " ".repeat(17));
        assert_eq!(fails(&padded).offset, 25);
        assert_eq!(p(&format!("{{'a': 1}}{}# c", " ".repeat(13))), dict);
        fails("{'a': 1}}");
    }

    #[test]
    fn nesting_is_bounded_without_recursion() {
        let ok = "[".repeat(MAX_NESTING) + &"]".repeat(MAX_NESTING);
        p(&ok);
        let deep = "[".repeat(MAX_NESTING + 1) + &"]".repeat(MAX_NESTING + 1);
        assert_eq!(fails(&deep).reason, "too many nested brackets");
        let huge = "(".repeat(1_000_000);
        assert_eq!(fails(&huge).reason, "too many nested brackets");
    }

    #[test]
    fn many_quotes_are_linear() {
        // Runs of quotes are empty strings concatenated, or one left
        // unterminated. Either way one pass.
        // Six quotes are an empty triple-quoted string.
        assert_eq!(p(&"'".repeat(999_996)), s(""));
        fails(&"'".repeat(1_000_000));
        fails(&"\"".repeat(999_999));
        assert_eq!(
            p(&format!("'{}'", "\\\\".repeat(500_000))),
            s(&"\\".repeat(500_000))
        );
    }
}

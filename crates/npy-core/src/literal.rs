//! A bounded parser for the Python literals found in `.npy` headers.
//!
//! NumPy reads the header dict with `ast.literal_eval`, so any Python literal
//! syntax is valid there: either quote style, string prefixes (`u`, `r`, `b`),
//! escapes, implicit string concatenation, hex/octal/binary integers with `_`
//! separators, signs, `True`/`False`/`None`, tuples, lists and dicts with or
//! without trailing commas, comments and line continuations. This module reads
//! that subset in one left-to-right pass:
//!
//! * linear time: every input byte is looked at a bounded number of times;
//! * no recursion: containers live on an explicit stack, at most
//!   [`MAX_NESTING`] deep;
//! * allocation proportional to the input only: strings and floats without
//!   escapes or separators borrow from the text, and the items of all the
//!   containers share one list (a container is a range of it), so a header
//!   costs a couple of allocations however many fields its dtype has.
//!
//! Not supported (all refused as syntax errors): sets, complex numbers,
//! `\N{name}` escapes, lone surrogates (`'\ud800'`), and operators other than a
//! sign directly before a number. None of these can describe an array.

/// Deepest nesting of brackets accepted.
///
/// A structured dtype costs two levels per nesting level (the field list and
/// the field tuple), plus one for the header dict, so this admits records
/// nested about 30 deep.
pub(crate) const MAX_NESTING: usize = 64;

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
struct Built {
    texts: Vec<String>,
    bytes: Vec<Vec<u8>>,
}

impl Built {
    /// The value of a collected string, kept here.
    fn add(&mut self, buf: StrBuf) -> Value<'static> {
        match buf {
            StrBuf::Text(s) => Value::Str(self.add_text(s)),
            StrBuf::Bytes(b) => Value::Bytes(self.add_bytes(b)),
        }
    }

    fn add_text(&mut self, text: String) -> TextRef<'static> {
        self.texts.push(text);
        TextRef::Built(self.texts.len() - 1)
    }

    fn add_bytes(&mut self, bytes: Vec<u8>) -> BytesRef<'static> {
        self.bytes.push(bytes);
        BytesRef::Built(self.bytes.len() - 1)
    }

    fn text<'s>(&'s self, text: TextRef<'s>) -> &'s str {
        match text {
            TextRef::Slice(s) => s,
            TextRef::Built(i) => &self.texts[i],
        }
    }

    fn bytes<'s>(&'s self, bytes: BytesRef<'s>) -> &'s [u8] {
        match bytes {
            BytesRef::Slice(b) => b,
            BytesRef::Built(i) => &self.bytes[i],
        }
    }
}

/// Where a container's items are in [`Literal::items`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Items {
    start: usize,
    len: usize,
}

/// A parsed literal: the root value and the items of all its containers.
#[derive(Debug)]
pub(crate) struct Literal<'a> {
    root: Value<'a>,
    /// Each container's items, contiguous, inner containers first.
    items: Vec<Value<'a>>,
    built: Built,
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

/// Why and where a text is not a literal we read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    /// What is wrong.
    pub(crate) reason: &'static str,
    /// Byte offset in the text.
    pub(crate) offset: usize,
}

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bracket {
    Paren,
    Square,
    Curly,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Open(Bracket),
    Close(Bracket),
    Comma,
    Colon,
    Plus,
    Minus,
    /// A string, number or name: [`Lexer::atom`].
    Atom,
    End,
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    allow_long_suffix: bool,
    built: Built,
    /// Where the last token starts.
    start: usize,
    /// The value of the last [`Token::Atom`]. Kept here rather than in the
    /// token so that tokens stay small and values are not copied around.
    atom: Value<'a>,
}

fn err<T>(reason: &'static str, offset: usize) -> Result<T, SyntaxError> {
    Err(SyntaxError { reason, offset })
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Where a string is being collected: text for `'...'`, bytes for `b'...'`.
enum StrBuf {
    Text(String),
    Bytes(Vec<u8>),
}

impl StrBuf {
    fn push_run(&mut self, run: &str) -> Result<(), &'static str> {
        match self {
            StrBuf::Text(s) => s.push_str(run),
            StrBuf::Bytes(b) if run.is_ascii() => b.extend_from_slice(run.as_bytes()),
            StrBuf::Bytes(_) => return Err("bytes can only contain ASCII literal characters"),
        }
        Ok(())
    }

    fn push_code(&mut self, code: u32) -> Result<(), &'static str> {
        match self {
            StrBuf::Text(s) => s.push(
                char::from_u32(code).ok_or("escape is not a Unicode scalar value (surrogate?)")?,
            ),
            StrBuf::Bytes(b) => b.push(u8::try_from(code).map_err(|_| "bytes escape above 0xff")?),
        }
        Ok(())
    }

    fn is_bytes(&self) -> bool {
        matches!(self, StrBuf::Bytes(_))
    }

    /// A buffer holding `value`, a string or bytes value, to append to.
    fn holding(value: Value<'_>, built: &Built) -> Option<StrBuf> {
        match value {
            Value::Str(s) => Some(StrBuf::Text(built.text(s).to_owned())),
            Value::Bytes(b) => Some(StrBuf::Bytes(built.bytes(b).to_owned())),
            _ => None,
        }
    }
}

impl<'a> Lexer<'a> {
    fn byte(&self, at: usize) -> Option<u8> {
        self.src.as_bytes().get(at).copied()
    }

    /// Skips whitespace, newlines, comments and backslash line continuations.
    fn skip_trivia(&mut self) {
        let bytes = self.src.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            match b {
                b' ' | b'\t' | b'\x0c' | b'\r' | b'\n' => self.pos += 1,
                b'#' => {
                    while let Some(&c) = bytes.get(self.pos) {
                        if c == b'\n' || c == b'\r' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                b'\\' if matches!(bytes.get(self.pos + 1), Some(b'\n' | b'\r')) => {
                    self.pos += 2;
                }
                _ => break,
            }
        }
    }

    /// Skips a run of spaces eight at a time: `.npy` headers end in up to
    /// 64 bytes of padding after the dict.
    fn skip_padding(&mut self) {
        let bytes = self.src.as_bytes();
        while bytes
            .get(self.pos..self.pos + 8)
            .is_some_and(|chunk| chunk == [b' '; 8])
        {
            self.pos += 8;
        }
    }

    /// Whether the next token is a string literal (for implicit concatenation).
    // Inlined: asked after every string, and usually a `,` or `:` says no.
    #[inline(always)]
    fn string_follows(&mut self) -> bool {
        if matches!(self.byte(self.pos), Some(b',' | b':' | b')' | b']' | b'}')) {
            return false;
        }
        self.skip_trivia();
        let bytes = &self.src.as_bytes()[self.pos..];
        match bytes.first() {
            Some(b'\'' | b'"') => true,
            Some(b) if b.is_ascii_alphabetic() => {
                let prefix = bytes.iter().take_while(|b| b.is_ascii_alphabetic()).count();
                matches!(bytes.get(prefix), Some(b'\'' | b'"'))
                    && string_prefix(&bytes[..prefix]).is_some()
            }
            _ => false,
        }
    }

    /// Reads the next token; it starts at [`Lexer::start`].
    #[inline(always)]
    fn next(&mut self) -> Result<Token, SyntaxError> {
        self.skip_trivia();
        let start = self.pos;
        self.start = start;
        let Some(b) = self.byte(start) else {
            return Ok(Token::End);
        };
        let token = match b {
            b'(' | b'[' | b'{' | b')' | b']' | b'}' | b',' | b':' | b'+' | b'-' => {
                self.pos += 1;
                match b {
                    b'(' => Token::Open(Bracket::Paren),
                    b'[' => Token::Open(Bracket::Square),
                    b'{' => Token::Open(Bracket::Curly),
                    b')' => Token::Close(Bracket::Paren),
                    b']' => Token::Close(Bracket::Square),
                    b'}' => Token::Close(Bracket::Curly),
                    b',' => Token::Comma,
                    b':' => Token::Colon,
                    b'+' => Token::Plus,
                    _ => Token::Minus,
                }
            }
            b'\'' | b'"' => {
                self.atom = self.string(false, false)?;
                Token::Atom
            }
            b'0'..=b'9' => {
                self.atom = self.number()?;
                Token::Atom
            }
            b'.' if matches!(self.byte(start + 1), Some(b'0'..=b'9')) => {
                self.atom = self.number()?;
                Token::Atom
            }
            b if is_ident_start(b) => {
                let bytes = self.src.as_bytes();
                let mut end = start;
                while end < bytes.len() && is_ident_continue(bytes[end]) {
                    end += 1;
                }
                let word = &self.src[start..end];
                if matches!(bytes.get(end), Some(b'\'' | b'"')) {
                    let Some((raw, is_bytes)) = string_prefix(word.as_bytes()) else {
                        return err("unknown string prefix", start);
                    };
                    self.pos = end;
                    {
                        self.atom = self.string(raw, is_bytes)?;
                        Token::Atom
                    }
                } else {
                    self.pos = end;
                    match word {
                        "True" => {
                            self.atom = Value::True;
                            Token::Atom
                        }
                        "False" => {
                            self.atom = Value::False;
                            Token::Atom
                        }
                        "None" => {
                            self.atom = Value::None;
                            Token::Atom
                        }
                        _ => return err("a name is not a literal", start),
                    }
                }
            }
            0 => return err("source code string cannot contain null bytes", start),
            _ => return err("unexpected character", start),
        };
        Ok(token)
    }

    /// Reads a quoted string starting at the opening quote.
    // Inlined for the usual string, one line without escapes, which is a
    // slice of the text; anything else is collected by `collect_string`.
    #[inline(always)]
    fn string(&mut self, raw: bool, is_bytes: bool) -> Result<Value<'a>, SyntaxError> {
        let src = self.src;
        let bytes = src.as_bytes();
        let quote = bytes[self.pos];
        let body = self.pos + 1;
        let triple = bytes.get(body) == Some(&quote) && bytes.get(body + 1) == Some(&quote);
        if !triple
            && let Some(len) = plain_run(&bytes[body..], quote)
            && bytes[body + len] == quote
        {
            let text = &src[body..body + len];
            if !is_bytes {
                self.pos = body + len + 1;
                return Ok(Value::Str(TextRef::Slice(text)));
            }
            if text.is_ascii() {
                self.pos = body + len + 1;
                return Ok(Value::Bytes(BytesRef::Slice(text.as_bytes())));
            }
        }
        self.collect_string(raw, is_bytes)
    }

    /// [`Lexer::string`] for strings that are not a plain slice of the text:
    /// escapes, line continuations, triple quotes, non-ASCII bytes literals.
    fn collect_string(&mut self, raw: bool, is_bytes: bool) -> Result<Value<'a>, SyntaxError> {
        let bytes = self.src.as_bytes();
        let start = self.pos;
        let quote = bytes[start];
        let triple = bytes.get(start + 1) == Some(&quote) && bytes.get(start + 2) == Some(&quote);
        self.pos += if triple { 3 } else { 1 };
        let mut buf = if is_bytes {
            StrBuf::Bytes(Vec::new())
        } else {
            StrBuf::Text(String::new())
        };
        let fail = |reason, offset| SyntaxError { reason, offset };
        loop {
            // Copy the run of ordinary characters in one go.
            let run_start = self.pos;
            while let Some(&b) = bytes.get(self.pos) {
                if b == quote || b == b'\\' || b == b'\n' || b == b'\r' {
                    break;
                }
                self.pos += 1;
            }
            buf.push_run(&self.src[run_start..self.pos])
                .map_err(|r| fail(r, run_start))?;
            let Some(&b) = bytes.get(self.pos) else {
                return err("unterminated string literal", start);
            };
            match b {
                b'\n' | b'\r' => {
                    if !triple {
                        return err("unterminated string literal", start);
                    }
                    // Python reads source with universal newlines.
                    self.pos += if b == b'\r' && self.byte(self.pos + 1) == Some(b'\n') {
                        2
                    } else {
                        1
                    };
                    buf.push_run("\n").map_err(|r| fail(r, self.pos))?;
                }
                _ if b == quote => {
                    if !triple {
                        self.pos += 1;
                        break;
                    }
                    if self.byte(self.pos + 1) == Some(quote)
                        && self.byte(self.pos + 2) == Some(quote)
                    {
                        self.pos += 3;
                        break;
                    }
                    self.pos += 1;
                    buf.push_run(&self.src[self.pos - 1..self.pos])
                        .map_err(|r| fail(r, self.pos))?;
                }
                _ => self.escape(&mut buf, raw)?,
            }
        }
        Ok(self.built.add(buf))
    }

    /// Handles a backslash inside a string (the lexer is on the backslash).
    fn escape(&mut self, buf: &mut StrBuf, raw: bool) -> Result<(), SyntaxError> {
        let at = self.pos;
        let fail = |reason| SyntaxError { reason, offset: at };
        let Some(next) = self.byte(at + 1) else {
            return err("unterminated string literal", at);
        };
        if raw {
            // A raw string keeps the backslash and the character after it; the
            // backslash only stops that character from ending the string.
            let len = self.src[at + 1..].chars().next().map_or(1, char::len_utf8);
            buf.push_run(&self.src[at..at + 1 + len]).map_err(fail)?;
            self.pos = at + 1 + len;
            return Ok(());
        }
        self.pos = at + 2;
        let simple = match next {
            b'\n' => return Ok(()),
            b'\r' => {
                if self.byte(self.pos) == Some(b'\n') {
                    self.pos += 1;
                }
                return Ok(());
            }
            b'\\' => Some(b'\\'),
            b'\'' => Some(b'\''),
            b'"' => Some(b'"'),
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(0x0b),
            _ => None,
        };
        if let Some(code) = simple {
            return buf.push_code(u32::from(code)).map_err(fail);
        }
        match next {
            b'0'..=b'7' => {
                let mut code = u32::from(next - b'0');
                for _ in 0..2 {
                    match self.byte(self.pos) {
                        Some(d @ b'0'..=b'7') => {
                            code = code * 8 + u32::from(d - b'0');
                            self.pos += 1;
                        }
                        _ => break,
                    }
                }
                buf.push_code(code).map_err(fail)
            }
            b'x' => self.hex_escape(buf, 2, at),
            b'u' if !buf.is_bytes() => self.hex_escape(buf, 4, at),
            b'U' if !buf.is_bytes() => self.hex_escape(buf, 8, at),
            b'N' if !buf.is_bytes() => err("\\N{...} escapes are not supported", at),
            _ => {
                // Unknown escapes keep their backslash; the character after it
                // is read normally on the next round.
                self.pos = at + 1;
                buf.push_run("\\").map_err(fail)
            }
        }
    }

    fn hex_escape(
        &mut self,
        buf: &mut StrBuf,
        digits: usize,
        at: usize,
    ) -> Result<(), SyntaxError> {
        let mut code: u32 = 0;
        for _ in 0..digits {
            let digit = self
                .byte(self.pos)
                .and_then(|d| (d as char).to_digit(16))
                .ok_or(SyntaxError {
                    reason: "truncated \\x, \\u or \\U escape",
                    offset: at,
                })?;
            // At most 8 hex digits: cannot overflow u32.
            code = code * 16 + digit;
            self.pos += 1;
        }
        buf.push_code(code)
            .map_err(|reason| SyntaxError { reason, offset: at })
    }

    /// Reads an int or float literal.
    fn number(&mut self) -> Result<Value<'a>, SyntaxError> {
        let bytes = self.src.as_bytes();
        let start = self.pos;
        let radix = match (bytes[start], self.byte(start + 1)) {
            (b'0', Some(b'x' | b'X')) => 16,
            (b'0', Some(b'o' | b'O')) => 8,
            (b'0', Some(b'b' | b'B')) => 2,
            _ => 10,
        };
        let value = if radix != 10 {
            self.pos += 2;
            // Python allows one `_` right after the base prefix.
            if self.byte(self.pos) == Some(b'_') {
                self.pos += 1;
            }
            let value = self.digits(radix, start)?;
            Value::Int(value.ok_or(SyntaxError {
                reason: "invalid integer literal",
                offset: start,
            })?)
        } else {
            let int_part = self.decimal_digits(start)?;
            let is_float = matches!(self.byte(self.pos), Some(b'.' | b'e' | b'E'));
            if is_float {
                self.float_tail(start)?
            } else {
                let value = int_part.ok_or(SyntaxError {
                    reason: "invalid integer literal",
                    offset: start,
                })?;
                let text = &bytes[start..self.pos];
                if value != 0 && text[0] == b'0' {
                    return err(
                        "leading zeros in decimal integer literals are not permitted",
                        start,
                    );
                }
                Value::Int(value)
            }
        };
        match self.byte(self.pos) {
            Some(b'j' | b'J') => err("complex literals are not supported", start),
            Some(b'L')
                if self.allow_long_suffix
                    && !self.byte(self.pos + 1).is_some_and(is_ident_continue) =>
            {
                // Python 2 long: NumPy strips it from version 1.0/2.0 headers.
                self.pos += 1;
                Ok(value)
            }
            Some(b) if is_ident_continue(b) || b == b'.' => err("invalid number literal", start),
            _ => Ok(value),
        }
    }

    /// [`Lexer::digits`] in base 10, with a fast path for the usual short run
    /// of plain digits (shapes, sizes), which cannot overflow a `u64`.
    fn decimal_digits(&mut self, start: usize) -> Result<Option<i128>, SyntaxError> {
        const FAST_MAX_DIGITS: usize = 18;
        let bytes = self.src.as_bytes();
        let run = bytes[start..]
            .iter()
            .take(FAST_MAX_DIGITS + 1)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if run == 0 || run > FAST_MAX_DIGITS || bytes.get(start + run) == Some(&b'_') {
            return self.digits(10, start);
        }
        self.pos = start + run;
        let value = bytes[start..start + run]
            .iter()
            .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0'));
        Ok(Some(i128::from(value)))
    }

    /// Reads digits with single `_` separators; `None` when there are no digits.
    /// An integer outside `i128` is an error.
    fn digits(&mut self, radix: u32, start: usize) -> Result<Option<i128>, SyntaxError> {
        let mut value: Option<i128> = None;
        while let Some(d) = self
            .byte(self.pos)
            .and_then(|b| (b as char).to_digit(radix))
        {
            let acc = value.unwrap_or(0);
            value = Some(
                acc.checked_mul(i128::from(radix))
                    .and_then(|v| v.checked_add(i128::from(d)))
                    .ok_or(SyntaxError {
                        reason: "integer literal too large",
                        offset: start,
                    })?,
            );
            self.pos += 1;
            if self.byte(self.pos) == Some(b'_') {
                match self
                    .byte(self.pos + 1)
                    .and_then(|b| (b as char).to_digit(radix))
                {
                    Some(_) => self.pos += 1,
                    None => return err("invalid number literal", start),
                }
            }
        }
        Ok(value)
    }

    /// Reads the rest of a float after its integer digits.
    fn float_tail(&mut self, start: usize) -> Result<Value<'a>, SyntaxError> {
        if self.byte(self.pos) == Some(b'.') {
            self.pos += 1;
            // Floats keep their text, so the digits need no value.
            while self
                .byte(self.pos)
                .is_some_and(|b| b.is_ascii_digit() || b == b'_')
            {
                self.pos += 1;
            }
        }
        if matches!(self.byte(self.pos), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.byte(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !self.byte(self.pos).is_some_and(|b| b.is_ascii_digit()) {
                return err("invalid float literal", start);
            }
            while self
                .byte(self.pos)
                .is_some_and(|b| b.is_ascii_digit() || b == b'_')
            {
                self.pos += 1;
            }
        }
        let text = &self.src[start..self.pos];
        Ok(Value::Float(if text.contains('_') {
            self.built.add_text(text.replace('_', ""))
        } else {
            TextRef::Slice(text)
        }))
    }
}

/// Where the first `quote`, backslash or line break in `bytes` is: the end of
/// a one-line string without escapes, if that is what comes next.
fn plain_run(bytes: &[u8], quote: u8) -> Option<usize> {
    // Eight bytes at a time: `x - 1 & !x` sets the high bit of a zero byte
    // of `x` (and maybe of bytes after it), so the lowest set bit of the
    // combined tests marks the first stop byte exactly.
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    let zero_bytes = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let is_stop = |b: u8| b == quote || b == b'\\' || b == b'\n' || b == b'\r';
    let mut chunks = bytes.chunks_exact(8);
    let mut before = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let matches = |byte: u8| zero_bytes(word ^ (ONES * u64::from(byte)));
        let stops = matches(quote) | matches(b'\\') | matches(b'\n') | matches(b'\r');
        if stops != 0 {
            return Some(before + stops.trailing_zeros() as usize / 8);
        }
        before += 8;
    }
    let rest = chunks.remainder();
    rest.iter().position(|&b| is_stop(b)).map(|i| before + i)
}

/// `(raw, bytes)` for a valid string prefix (`u`, `r`, `b`, `br`, `rb`, any case).
fn string_prefix(prefix: &[u8]) -> Option<(bool, bool)> {
    match *prefix {
        [] => Some((false, false)),
        [a] => match a.to_ascii_lowercase() {
            b'u' => Some((false, false)),
            b'r' => Some((true, false)),
            b'b' => Some((false, true)),
            _ => None,
        },
        [a, b] => match [a.to_ascii_lowercase(), b.to_ascii_lowercase()] {
            [b'b', b'r'] | [b'r', b'b'] => Some((true, true)),
            _ => None,
        },
        _ => None,
    }
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
        Ok(self.lexer.built.add(joined))
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
    fn plain_run_finds_the_first_stop_byte() {
        // Every stop byte at every place of the first two words, among
        // bytes that trouble bit tricks (0x80, 0xff, 0x01, the other quote).
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..20_000 {
            let len = (state % 20) as usize;
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    b"a'\"\\\n\r\x80\xff\x01\x00b"[(state % 11) as usize]
                })
                .collect();
            for quote in [b'\'', b'"'] {
                let naive = text
                    .iter()
                    .position(|&b| b == quote || b == b'\\' || b == b'\n' || b == b'\r');
                assert_eq!(plain_run(&text, quote), naive, "{text:?}");
            }
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

//! The lexer: tokens, strings (prefixes, escapes, implicit
//! concatenation's parts), numbers and names, with the trivia between them
//! (whitespace, comments, line continuations) skipped.

use super::value::{Built, BytesRef, TextRef, Value};

/// Why and where a text is not a literal we read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    /// What is wrong.
    pub(crate) reason: &'static str,
    /// Byte offset in the text.
    pub(crate) offset: usize,
}

/// The three kinds of brackets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Bracket {
    Paren,
    Square,
    Curly,
}

/// What the lexer found next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Token {
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

/// Splits the text into tokens, left to right, each byte looked at a
/// bounded number of times.
pub(super) struct Lexer<'a> {
    pub(super) src: &'a str,
    pub(super) pos: usize,
    pub(super) allow_long_suffix: bool,
    pub(super) built: Built,
    /// Where the last token starts.
    pub(super) start: usize,
    /// The value of the last [`Token::Atom`]. Kept here rather than in the
    /// token so that tokens stay small and values are not copied around.
    pub(super) atom: Value<'a>,
}

/// A syntax error at `offset`.
pub(super) fn err<T>(reason: &'static str, offset: usize) -> Result<T, SyntaxError> {
    Err(SyntaxError { reason, offset })
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Where a string is being collected: text for `'...'`, bytes for `b'...'`.
pub(super) enum StrBuf {
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

    /// The value of the collected string, kept in `built`.
    pub(super) fn into_value(self, built: &mut Built) -> Value<'static> {
        match self {
            StrBuf::Text(s) => Value::Str(built.add_text(s)),
            StrBuf::Bytes(b) => Value::Bytes(built.add_bytes(b)),
        }
    }

    /// A buffer holding `value`, a string or bytes value, to append to.
    pub(super) fn holding(value: Value<'_>, built: &Built) -> Option<StrBuf> {
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
    pub(super) fn skip_trivia(&mut self) {
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
    pub(super) fn skip_padding(&mut self) {
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
    pub(super) fn string_follows(&mut self) -> bool {
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
    pub(super) fn next(&mut self) -> Result<Token, SyntaxError> {
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
        Ok(buf.into_value(&mut self.built))
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

#[cfg(test)]
mod tests {
    use super::*;

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
}

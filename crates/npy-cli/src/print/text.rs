//! Python's `repr()` of `bytes` and `str`, which numpy uses for string elements.

/// Python picks `"` only when the text has a `'` and no `"`.
fn quote_for(has_single: bool, has_double: bool) -> char {
    if has_single && !has_double { '"' } else { '\'' }
}

/// `repr(bytes)`: `b'ab\x00'`.
pub fn bytes_repr(bytes: &[u8]) -> String {
    let quote = quote_for(bytes.contains(&b'\''), bytes.contains(&b'"'));
    let mut out = String::with_capacity(bytes.len() + 3);
    out.push('b');
    out.push(quote);
    for &byte in bytes {
        match byte {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            _ if byte == quote as u8 => {
                out.push('\\');
                out.push(quote);
            }
            0x20..0x7f => out.push(byte as char),
            _ => out.push_str(&format!("\\x{byte:02x}")),
        }
    }
    out.push(quote);
    out
}

/// numpy's `str()` of an unstructured void: every byte as `\xNN`.
pub fn void_repr(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(4 * bytes.len() + 3);
    out.push_str("b'");
    for byte in bytes {
        out.push_str(&format!("\\x{byte:02x}"));
    }
    out.push('\'');
    out
}

/// `repr(str)`: `'abc'`, with non-printable characters escaped.
pub fn str_repr(text: &str) -> String {
    let quote = quote_for(text.contains('\''), text.contains('"'));
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            _ if c == quote => {
                out.push('\\');
                out.push(quote);
            }
            _ if is_printable(c) => out.push(c),
            _ => {
                let code = u32::from(c);
                if code < 0x100 {
                    out.push_str(&format!("\\x{code:02x}"));
                } else if code < 0x10000 {
                    out.push_str(&format!("\\u{code:04x}"));
                } else {
                    out.push_str(&format!("\\U{code:08x}"));
                }
            }
        }
    }
    out.push(quote);
    out
}

/// An approximation of Python's `str.isprintable` (which needs the Unicode
/// category tables): controls, separators other than the space, format
/// characters in common use and private-use code points are not printable.
fn is_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(
        u32::from(c),
        0xAD | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xD800..=0xDFFF
            | 0xE000..=0xF8FF
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0xFFFE..=0xFFFF
            | 0xE0001
            | 0xE0020..=0xE007F
            | 0xF0000..
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected strings are Python 3.11's repr of the same values.
    #[test]
    fn bytes_like_python() {
        assert_eq!(bytes_repr(b"ab"), "b'ab'");
        assert_eq!(bytes_repr(b"a\n'b\"\xff\x7f\\"), r#"b'a\n\'b"\xff\x7f\\'"#);
        assert_eq!(bytes_repr(b"it's"), r#"b"it's""#);
        assert_eq!(bytes_repr(b"a\x00b"), r"b'a\x00b'");
    }

    #[test]
    fn strings_like_python() {
        assert_eq!(str_repr("ab"), "'ab'");
        assert_eq!(str_repr("a\n'b\""), r#"'a\n\'b"'"#);
        assert_eq!(str_repr("é\u{0}\u{1}\u{200b}中"), r"'é\x00\x01\u200b中'");
        assert_eq!(str_repr("it's"), r#""it's""#);
        assert_eq!(str_repr("\u{a0}\u{85}"), r"'\xa0\x85'");
        assert_eq!(str_repr("\u{10ffff}"), r"'\U0010ffff'");
    }

    #[test]
    fn void_shows_every_byte() {
        assert_eq!(void_repr(b"ab\x00"), r"b'\x61\x62\x00'");
    }
}

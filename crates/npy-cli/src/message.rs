//! How errors are worded for the terminal: one line each.

use crate::remote;

/// The error and its causes on one line, `outer: inner`, skipping a cause
/// whose text the message before it already includes.
pub fn error_text(err: &anyhow::Error) -> String {
    if let Some(text) = remote::not_found_text(err) {
        return text;
    }
    let mut text = String::new();
    for cause in err.chain() {
        let part = one_line(&cause.to_string());
        if part.is_empty() || text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// Error messages are one line each (some of numpy's wordings span several).
pub fn one_line(text: &str) -> String {
    text.split('\n')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

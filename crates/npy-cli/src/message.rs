//! How errors are worded for the terminal: one line each.

use crate::remote;

/// The error and its causes on one line, `outer: inner: ...`. Nothing is
/// skipped: the libraries' errors print a cause or return it from
/// `source()`, never both (docs/ARCHITECTURE.md, "Errors").
pub fn error_text(err: &anyhow::Error) -> String {
    if let Some(text) = remote::not_found_text(err) {
        return text;
    }
    chain_text(err.chain())
}

/// A library error and its causes on one line, `outer: inner: ...`: a
/// message alone may leave its cause to `source()` (numpy's invalid descr
/// does: `descr is not a valid dtype descriptor: '<x4': data type '<x4' not
/// understood`).
pub fn cause_text(err: &(dyn std::error::Error + 'static)) -> String {
    chain_text(std::iter::successors(Some(err), |cause| cause.source()))
}

fn chain_text<'a>(chain: impl Iterator<Item = &'a (dyn std::error::Error + 'static)>) -> String {
    chain
        .map(|cause| one_line(&cause.to_string()))
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
}

/// Error messages are one line each (some of numpy's wordings span several).
pub fn one_line(text: &str) -> String {
    text.split('\n')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

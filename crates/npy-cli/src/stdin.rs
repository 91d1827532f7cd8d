//! Standard input, which can be read once and has no end to read an
//! archive from: it is copied ("spooled") to an unnamed temporary file (in
//! `$TMPDIR`, gone once closed), never held in memory, and the copy is
//! capped ([`limit`]) so that an endless pipe ends in an error, not a full
//! disk.

use std::fs::File;
use std::io::{Read, Seek};
use std::sync::OnceLock;

use anyhow::Context;
use npy_core::{Header, ParseOptions};

/// The default cap on what is copied from standard input: 4 GiB. Beyond
/// most arrays anyone pipes, and bounded: `$TMPDIR` is often a tmpfs
/// (memory by another name), so a spool without a cap fills memory anyway
/// (an endless pipe copied 1.9 GB in 4 s). `--stdin-limit` or
/// `NPY_STDIN_LIMIT` changes it.
pub const DEFAULT_LIMIT: u64 = 4 << 30;

/// The environment variable that sets the cap when `--stdin-limit` is not given.
pub const LIMIT_VAR: &str = "NPY_STDIN_LIMIT";

static LIMIT: OnceLock<u64> = OnceLock::new();

/// Sets the cap (`--stdin-limit`), once, from `main`; `None` reads
/// [`LIMIT_VAR`], then takes [`DEFAULT_LIMIT`].
pub fn set_limit(option: Option<u64>) -> anyhow::Result<()> {
    let limit = match option {
        Some(limit) => limit,
        None => match std::env::var(LIMIT_VAR) {
            Ok(text) => parse_size(&text).map_err(|err| anyhow::anyhow!("{LIMIT_VAR}: {err}"))?,
            Err(_) => DEFAULT_LIMIT,
        },
    };
    let _ = LIMIT.set(limit);
    Ok(())
}

/// The cap in bytes on what is copied from standard input.
pub fn limit() -> u64 {
    *LIMIT.get().unwrap_or(&DEFAULT_LIMIT)
}

/// A size in bytes: a whole number, optionally followed by `K`, `M`, `G`
/// or `T` (binary: KiB, MiB, ...; a trailing `iB` or `B` is allowed).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    let number = lower.trim_end_matches("ib").trim_end_matches('b');
    let (digits, shift) = match number.char_indices().last() {
        Some((at, 'k')) => (&number[..at], 10),
        Some((at, 'm')) => (&number[..at], 20),
        Some((at, 'g')) => (&number[..at], 30),
        Some((at, 't')) => (&number[..at], 40),
        _ => (number, 0),
    };
    let value: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a size (bytes, or a number with K, M, G or T)"))?;
    value
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))
}

/// `bytes` for people: "4 GiB", "1000 bytes".
fn size_text(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

/// What to say when standard input holds more than the cap.
fn over_limit(what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{what} is larger than the {} limit for standard input \
         (it is copied to a temporary file); raise it with --stdin-limit SIZE or \
         {LIMIT_VAR}=SIZE, or give a file",
        size_text(limit())
    )
}

/// Copies at most `max` bytes of standard input to a new unnamed temporary
/// file, rewound; fails (naming the cap) if there is more.
fn spool(max: u64, what: &str) -> anyhow::Result<(File, u64)> {
    let mut file = tempfile::tempfile()
        .with_context(|| format!("cannot create a temporary file to hold {what}"))?;
    let copied = std::io::copy(
        &mut std::io::stdin().lock().take(max.saturating_add(1)),
        &mut file,
    )
    .with_context(|| format!("cannot copy {what} to a temporary file"))?;
    if copied > max {
        return Err(over_limit(what));
    }
    file.rewind()
        .with_context(|| format!("cannot read back {what} copied to a temporary file"))?;
    Ok((file, copied))
}

/// The archive on standard input, copied to a temporary file (a zip is
/// read from its end), at most [`limit`] bytes.
pub fn spool_archive() -> anyhow::Result<File> {
    Ok(spool(limit(), "the archive on standard input")?.0)
}

/// The `.npy` stream on standard input: its header, parsed from the
/// stream, and its data copied to a temporary file (only the data: bytes
/// after it are left unread, as numpy leaves them). Data longer than
/// [`limit`] is refused from the header, before anything is copied.
pub fn spool_npy(options: &ParseOptions) -> anyhow::Result<(Header, File)> {
    let mut stdin = std::io::stdin().lock();
    let npy_core::ParsedHeader { header, layout } = Header::read_from(&mut stdin, options)
        .context("standard input is not a valid .npy stream")?;
    drop(stdin);
    let len = layout.data_len as u64;
    if len > limit() {
        return Err(over_limit(&format!(
            "the array on standard input ({len} bytes of data, its header says)"
        )));
    }
    let (file, copied) = spool(len, "the array on standard input")?;
    if copied < len {
        let present = usize::try_from(copied).unwrap_or(usize::MAX);
        return Err(npy_core::Error::truncated_data(&header, present))
            .context("standard input is not a valid .npy stream");
    }
    Ok((header, file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("16 MiB"), Ok(16 << 20));
        assert_eq!(parse_size("2k"), Ok(2048));
        assert_eq!(parse_size("1T"), Ok(1 << 40));
        assert!(parse_size("lots").unwrap_err().contains("is not a size"));
        assert!(
            parse_size("99999999999T")
                .unwrap_err()
                .contains("too large")
        );
        assert_eq!(size_text(4 << 30), "4 GiB");
        assert_eq!(size_text(1000), "1000 bytes");
    }
}

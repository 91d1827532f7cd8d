//! The one "read until full or the end" loop, under everything that reads a
//! stream (the header reader, `io`, the unpickler, npy-mmap and the CLI).

use std::io::{ErrorKind, Read};

/// Reads from `reader` until `buf` is full or the stream ends, and returns
/// the number of bytes read: `buf.len()` unless the stream ended first.
///
/// Unlike [`Read::read_exact`], the end of the stream is not an error: the
/// caller learns how much arrived (a magic string shorter than expected, a
/// truncated array) and words the error itself. Interrupted reads
/// ([`ErrorKind::Interrupted`]) are retried; any other error is returned.
///
/// ```
/// use npy_core::io::read_full;
///
/// let mut start = [0u8; 6];
/// assert_eq!(read_full(&mut &b"\x93NUMPY\x01\x00"[..], &mut start)?, 6);
/// assert_eq!(&start, b"\x93NUMPY");
/// // A stream shorter than the buffer: what arrived, no error.
/// assert_eq!(read_full(&mut &b"PK"[..], &mut start)?, 2);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn read_full<R: Read + ?Sized>(reader: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

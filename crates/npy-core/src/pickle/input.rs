//! The pickle's bytes as the unpickler reads them: from the current frame
//! (protocol 4+) or from the reader, counting the position for messages.
//! Memory follows the bytes that arrive, never a declared length.

use std::io::Read;

use crate::error::{Error, Result};
use crate::stream::read_full;

/// The pickle's bytes: the current frame (protocol 4+) or the reader.
pub(super) struct Input<R> {
    reader: R,
    frame: Vec<u8>,
    frame_pos: usize,
    /// Bytes of the pickle consumed so far.
    pub(super) position: u64,
}

impl<R: Read> Input<R> {
    pub(super) fn new(reader: R) -> Self {
        Input {
            reader,
            frame: Vec::new(),
            frame_pos: 0,
            position: 0,
        }
    }

    fn in_frame(&self) -> usize {
        self.frame.len() - self.frame_pos
    }

    fn fill(&mut self, buf: &mut [u8]) -> Result<()> {
        let n = buf.len();
        if self.in_frame() > 0 {
            if n > self.in_frame() {
                return Err(self.error("pickle exhausted before end of frame"));
            }
            buf.copy_from_slice(&self.frame[self.frame_pos..self.frame_pos + n]);
            self.frame_pos += n;
        } else {
            if read_full(&mut self.reader, buf)? < n {
                return Err(self.truncated());
            }
        }
        self.position += n as u64;
        Ok(())
    }

    pub(super) fn byte(&mut self) -> Result<u8> {
        if self.frame_pos < self.frame.len() {
            let b = self.frame[self.frame_pos];
            self.frame_pos += 1;
            self.position += 1;
            return Ok(b);
        }
        let mut b = [0u8; 1];
        self.fill(&mut b)?;
        Ok(b[0])
    }

    pub(super) fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut bytes = [0u8; N];
        self.fill(&mut bytes)?;
        Ok(bytes)
    }

    /// The little-endian unsigned number of `width` bytes (at most 8) that
    /// follows an opcode (`opcodes::argument_width`).
    #[inline]
    pub(super) fn number(&mut self, width: usize) -> Result<u64> {
        // One fixed-size read per width: each compiles to a load, where a
        // read of `width` bytes is a call to memcpy (measured: 5% of a decode).
        Ok(match width {
            1 => self.byte()?.into(),
            2 => u16::from_le_bytes(self.array()?).into(),
            4 => u32::from_le_bytes(self.array()?).into(),
            8 => u64::from_le_bytes(self.array()?),
            _ => 0,
        })
    }

    /// What is left of the current frame (empty outside frames).
    #[inline]
    pub(super) fn frame_rest(&self) -> &[u8] {
        &self.frame[self.frame_pos..]
    }

    /// Consumes `n` bytes of the current frame (at most
    /// [`frame_rest`](Self::frame_rest)'s length).
    #[inline]
    pub(super) fn advance(&mut self, n: usize) {
        self.frame_pos += n;
        self.position += n as u64;
    }

    /// The next `n` bytes, borrowed from the current frame, when inside one
    /// (`None` outside frames: [`vec`](Self::vec) reads them).
    #[inline]
    pub(super) fn frame_slice(&mut self, n: u64) -> Result<Option<&[u8]>> {
        if self.in_frame() == 0 {
            return Ok(None);
        }
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.in_frame())
            .ok_or_else(|| self.error("pickle exhausted before end of frame"))?;
        let start = self.frame_pos;
        self.frame_pos += n;
        self.position += n as u64;
        Ok(Some(&self.frame[start..start + n]))
    }

    /// `n` bytes; memory follows the bytes that arrive, never `n` alone.
    pub(super) fn vec(&mut self, n: u64) -> Result<Vec<u8>> {
        if self.in_frame() > 0 {
            let n = usize::try_from(n)
                .ok()
                .filter(|&n| n <= self.in_frame())
                .ok_or_else(|| self.error("pickle exhausted before end of frame"))?;
            let bytes = self.frame[self.frame_pos..self.frame_pos + n].to_vec();
            self.frame_pos += n;
            self.position += n as u64;
            return Ok(bytes);
        }
        let mut bytes = Vec::with_capacity(n.min(1 << 16) as usize);
        (&mut self.reader).take(n).read_to_end(&mut bytes)?;
        self.position += bytes.len() as u64;
        if (bytes.len() as u64) < n {
            return Err(self.truncated());
        }
        Ok(bytes)
    }

    /// A newline-terminated line (protocol 2's GLOBAL), at most 256 bytes.
    pub(super) fn line(&mut self) -> Result<String> {
        let mut line = Vec::new();
        loop {
            match self.byte()? {
                b'\n' => break,
                b if line.len() < 256 => line.push(b),
                _ => return Err(self.error("GLOBAL name longer than 256 bytes")),
            }
        }
        String::from_utf8(line).map_err(|_| self.error("GLOBAL name is not UTF-8"))
    }

    pub(super) fn start_frame(&mut self, len: u64) -> Result<()> {
        if self.in_frame() > 0 {
            return Err(self.error("beginning of a new frame before end of current frame"));
        }
        self.frame.clear();
        self.frame_pos = 0;
        let mut frame = std::mem::take(&mut self.frame);
        (&mut self.reader).take(len).read_to_end(&mut frame)?;
        let got = frame.len() as u64;
        self.frame = frame;
        if got < len {
            self.position += got;
            return Err(self.truncated());
        }
        Ok(())
    }

    fn truncated(&self) -> Error {
        self.error("pickle data was truncated")
    }

    pub(super) fn error(&self, reason: impl Into<String>) -> Error {
        Error::Unpickling {
            position: self.position,
            reason: reason.into(),
        }
    }
}

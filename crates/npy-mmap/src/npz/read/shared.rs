//! One archive reader shared by the zip parser and the block reads: the zip
//! crate owns its reader, and reading a deflated member's blocks needs to
//! seek to them.

use std::io::{self, Read, Seek, SeekFrom};
use std::sync::{Arc, Mutex, MutexGuard};

/// A handle on a reader shared with other handles, each with its own
/// position (the reader is seeked only when the last read left it elsewhere).
#[derive(Debug)]
pub(crate) struct Shared<R> {
    inner: Arc<Mutex<State<R>>>,
    pos: u64,
}

#[derive(Debug)]
struct State<R> {
    reader: R,
    /// Where `reader` is now (`None`: unknown, after a failed call).
    pos: Option<u64>,
}

impl<R> Clone for Shared<R> {
    fn clone(&self) -> Self {
        Shared {
            inner: self.inner.clone(),
            pos: self.pos,
        }
    }
}

impl<R: Seek> Shared<R> {
    /// Shares `reader`, the first handle at its current position.
    pub(crate) fn new(mut reader: R) -> io::Result<Self> {
        let pos = reader.stream_position()?;
        Ok(Shared {
            inner: Arc::new(Mutex::new(State {
                reader,
                pos: Some(pos),
            })),
            pos,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State<R>> {
        lock(&self.inner)
    }
    /// Calls `f` with the reader (e.g. to borrow an in-memory archive's bytes).
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut R) -> T) -> T {
        let mut state = self.lock();
        state.pos = None;
        f(&mut state.reader)
    }
}

impl<R: Read + Seek> Shared<R> {
    /// Reads exactly `buf.len()` bytes at `offset`.
    pub(crate) fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let mut handle = self.clone();
        handle.pos = offset;
        handle.read_exact(buf)
    }
}

/// Locks the shared state. A panic while reading leaves a reader whose
/// position is unknown: its `pos` is cleared, nothing else can be broken.
fn lock<R>(inner: &Mutex<State<R>>) -> MutexGuard<'_, State<R>> {
    let mut state = inner.lock().unwrap_or_else(|e| {
        let mut state = e.into_inner();
        state.pos = None;
        state
    });
    if std::thread::panicking() {
        state.pos = None;
    }
    state
}

impl<R: Read + Seek> Read for Shared<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut state = lock(&self.inner);
        if state.pos != Some(self.pos) {
            state.pos = None;
            state.reader.seek(SeekFrom::Start(self.pos))?;
            state.pos = Some(self.pos);
        }
        let read = state.reader.read(buf);
        match read {
            Ok(n) => {
                self.pos += n as u64;
                state.pos = Some(self.pos);
            }
            Err(_) => state.pos = None,
        }
        read
    }
}

impl<R: Read + Seek> Seek for Shared<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(offset) => Some(offset),
            SeekFrom::Current(delta) => self.pos.checked_add_signed(delta),
            SeekFrom::End(_) => {
                let mut state = lock(&self.inner);
                state.pos = None;
                let end = state.reader.seek(to)?;
                state.pos = Some(end);
                Some(end)
            }
        };
        self.pos = target
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.pos)
    }
}

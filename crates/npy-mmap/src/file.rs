//! Opening a file and reading its header: the first step of every opener,
//! below the ways to open (`open`, `load`, `create`, `grow`, npz), which
//! all import it and none of which it knows.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use npy_core::{Header, Layout, ParseOptions};

use crate::error::{Error, ErrorKind, Result, format_error, io_error};

/// Opens an existing regular file for reading (and writing, if `write`),
/// refusing anything else with [`ErrorKind::NotARegularFile`](crate::ErrorKind::NotARegularFile): what every opener
/// of this crate does first, for callers that read files themselves.
///
/// The open itself does not block: opening a FIFO for reading would wait for
/// a writer forever, so the file is opened with `O_NONBLOCK` and its type is
/// checked before anything else. (For a regular file the flag changes
/// nothing: reads and writes of regular files never return `EAGAIN`.)
pub fn open_regular(path: &Path, write: bool) -> Result<File> {
    open_regular_meta(path, write).map(|(file, _)| file)
}

/// [`open_regular`], with the metadata its check read (one `stat`, which
/// the caller may use for what does not change while the file is open:
/// its device and inode).
pub(crate) fn open_regular_meta(path: &Path, write: bool) -> Result<(File, std::fs::Metadata)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(write);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(io_error("open", path))?;
    let meta = file.metadata().map_err(io_error("stat", path))?;
    let file_type = meta.file_type();
    if file_type.is_file() {
        return Ok((file, meta));
    }
    let kind = if file_type.is_dir() {
        "a directory"
    } else {
        unix_kind(&file_type).unwrap_or("not a regular file")
    };
    Err(Error::at(path, ErrorKind::NotARegularFile { what: kind }))
}

#[cfg(unix)]
fn unix_kind(file_type: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    Some(if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else {
        return None;
    })
}

#[cfg(not(unix))]
fn unix_kind(_: &std::fs::FileType) -> Option<&'static str> {
    None
}

/// Whether `path` still names the open `file` (not a file renamed over it,
/// nor nothing at all).
pub(crate) fn still_at_path(file: &File, path: &Path) -> Result<bool> {
    let now = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(io_error("stat", path)(error)),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let open = file.metadata().map_err(io_error("stat", path))?;
        Ok(open.dev() == now.dev() && open.ino() == now.ino())
    }
    #[cfg(not(unix))]
    {
        // Windows refuses to rename over or delete a file that is open
        // without FILE_SHARE_DELETE, which std does not ask for.
        let _ = (file, now);
        Ok(true)
    }
}

/// Reads and parses the header with two reads: the fixed-size preamble,
/// then the rest of the header, whose length the preamble gives (bounded by
/// `options.max_header_size` before anything is allocated).
pub(crate) fn read_header(
    file: &File,
    path: &Path,
    options: &ParseOptions,
) -> Result<(Header, Layout)> {
    // One read of the first page holds almost every header (npy-core's
    // stream reader would make three: preamble, length, header); a longer
    // one continues from the file, and the buffer grows with the bytes that
    // arrive, never with what the length field claims. The file's position
    // is left past what was read: every caller seeks before its next use.
    let mut head = [0u8; HEAD_READ];
    let got = loop {
        match (&mut &*file).read(&mut head) {
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            got => break got,
        }
    }
    .map_err(io_error("read the header of", path))?;
    Header::read_from(&mut (&head[..got]).chain(file), options)
        .map(|parsed| (parsed.header, parsed.layout))
        .map_err(format_error("read the header of", path))
}

/// How much of a file [`read_header`] reads at once: one page.
const HEAD_READ: usize = 4096;

//! Helpers shared by the npy-mmap integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use npy_core::{DType, Header, Order};

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("npy-mmap-test-{tag}-{}-{n}", std::process::id()));
        drop(std::fs::remove_dir_all(&dir));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The names in the directory, sorted (to see that nothing was left behind).
    pub fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        drop(std::fs::remove_dir_all(&self.0));
    }
}

/// The bytes `np.save` writes for an array with this header and raw data.
pub fn npy_bytes(descr: &str, order: Order, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let header = Header::new(DType::parse(descr).unwrap(), order, shape.to_vec());
    assert_eq!(header.data_len().unwrap(), data.len(), "test data length");
    let mut bytes = header.to_bytes(None).unwrap();
    bytes.extend_from_slice(data);
    bytes
}

/// A hand-made version 1.0 file whose header dict is `dict`, padded with
/// spaces so that the data starts at a multiple of `align` plus `extra`
/// bytes (numpy before 1.14 aligned to 16; `extra` makes odd offsets).
pub fn raw_v1(dict: &str, align: usize, extra: usize, data: &[u8]) -> Vec<u8> {
    let unpadded = 10 + dict.len() + 1;
    let pad = (align - unpadded % align) % align + extra;
    let text = format!("{dict}{}\n", " ".repeat(pad));
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&u16::try_from(text.len()).unwrap().to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}

/// `count` little-endian f64 values `start, start+1, ...` as bytes.
pub fn f64_bytes(start: f64, count: usize) -> Vec<u8> {
    (0..count)
        .flat_map(|i| (start + i as f64).to_le_bytes())
        .collect()
}

/// Writes `bytes` to `dir/name` and returns the path.
pub fn write_file(dir: &TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A source whose data is not what its header says (the writers' own
/// length checks are what a test of them needs to reach).
pub struct Lying {
    pub header: Header,
    pub data: Vec<u8>,
}

impl npy_core::NpySource for Lying {
    fn npy_header(&self) -> Header {
        self.header.clone()
    }

    fn npy_data(&self) -> npy_core::Result<npy_core::DataChunks<'_>> {
        Ok(Box::new(std::iter::once(std::borrow::Cow::Borrowed(
            &self.data[..],
        ))))
    }
}

/// Which pages of `file` are in the page cache (`mincore` over a mapping
/// of it that nothing touches: asking reads nothing).
#[cfg(target_os = "linux")]
pub fn cached_pages(file: &std::fs::File) -> Vec<bool> {
    use std::os::fd::AsRawFd;
    let len = file.metadata().unwrap().len() as usize;
    let page = 4096;
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: a fresh read-only shared mapping of the whole file, never
    // dereferenced, only passed to mincore (which writes one byte per page
    // into `vec`, sized for it) and unmapped.
    unsafe {
        let base = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        assert_ne!(base, libc::MAP_FAILED);
        assert_eq!(libc::mincore(base, len, vec.as_mut_ptr()), 0);
        libc::munmap(base, len);
    }
    vec.iter().map(|v| v & 1 == 1).collect()
}

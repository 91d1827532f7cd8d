//! Hostile files must not crash the process through allocation: what the
//! file-level readers allocate follows the bytes in the file, never a length
//! its header claims (an allocation failure aborts the process).
//!
//! Uses npy-core's counting allocator (per-thread peak of live heap bytes).

#[path = "../crates/npy-core/tests/bounds_alloc/mod.rs"]
mod bounds_alloc;

use bounds_alloc::measure;
use npy_mmap::OpenOptions;

struct TempFile(std::path::PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        drop(std::fs::remove_file(&self.0));
    }
}

#[test]
fn opening_a_100_byte_file_that_claims_a_4_gib_header_allocates_little() {
    let path = std::env::temp_dir().join(format!("npy-crash-alloc-{}.npy", std::process::id()));
    let _cleanup = TempFile(path.clone());
    let mut file = b"\x93NUMPY\x02\x00\xff\xff\xff\xff".to_vec();
    file.extend_from_slice(b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }");
    file.resize(100, b' ');
    std::fs::write(&path, &file).unwrap();

    // With the default limit the length field alone is refused.
    let error = npy_mmap::open(&path).unwrap_err();
    assert!(
        matches!(
            error.kind(),
            npy_mmap::ErrorKind::Format(npy_core::Error::HeaderTooLarge { .. })
        ),
        "{error:?}"
    );
    // A caller who trusts big headers raises the limit; the file still
    // holds only 100 bytes, and the open must fail without a 4 GiB buffer.
    let (result, cost) = measure(|| OpenOptions::new().max_header_size(usize::MAX).open(&path));
    let err = result.expect_err("a 100-byte file cannot hold a 4 GiB header");
    assert!(err.to_string().contains("EOF"), "{err}");
    assert!(cost.peak_bytes < 1 << 20, "{cost:?}");
    assert!(cost.allocations < 64, "{cost:?}");
}

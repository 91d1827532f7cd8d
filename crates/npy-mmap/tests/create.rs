//! Creating files (numpy's w+) and the locking rule.

mod common;

use std::os::unix::fs::MetadataExt;

use common::TempDir;
use npy_core::{DType, Header, Order, Version};
use npy_mmap::{CreateOptions, ErrorKind, Locking, OpenOptions};

fn f8() -> DType {
    DType::parse("<f8").unwrap()
}

#[test]
fn create_writes_numpys_header_and_sizes_the_file_sparse() {
    let dir = TempDir::new("create-sparse");
    let path = dir.join("a.npy");
    let shape = [1 << 14, 1 << 10]; // 128 MiB of f8
    let array = CreateOptions::new(f8(), shape).create(&path).unwrap();
    assert_eq!(array.shape(), shape);
    assert_eq!(array.bytes().len(), 1 << 27);
    let expected_header = Header::new(f8(), Order::C, shape.to_vec())
        .to_bytes(None)
        .unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.len(), expected_header.len() as u64 + (1 << 27));
    assert!(
        meta.blocks() * 512 < 1 << 20,
        "sparse: {} blocks",
        meta.blocks()
    );
    drop(array);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes[..expected_header.len()], expected_header);
    assert!(bytes[expected_header.len()..].iter().all(|&b| b == 0));
}

#[test]
fn reserve_allocates_the_blocks() {
    let dir = TempDir::new("create-reserve");
    let path = dir.join("a.npy");
    let layout = CreateOptions::new(f8(), [1 << 20])
        .reserve(true)
        .preallocate(&path)
        .unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.len(), layout.data_end() as u64);
    assert!(
        meta.blocks() * 512 >= meta.len(),
        "{} blocks",
        meta.blocks()
    );
}

#[test]
fn reserving_more_than_the_disk_holds_fails_at_create_and_leaves_nothing() {
    let dir = TempDir::new("create-full");
    let path = dir.join("a.npy");
    // 2**60 bytes: no disk has them.
    let error = CreateOptions::new(DType::parse("|u1").unwrap(), [1usize << 60])
        .reserve(true)
        .create(&path)
        .unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Io {
                operation: "reserve disk space for",
                ..
            }
        ),
        "{error:?}"
    );
    assert!(!path.exists(), "the failed file was removed");
}

#[test]
fn create_refuses_an_existing_file_unless_overwrite() {
    let dir = TempDir::new("create-exists");
    let path = dir.join("a.npy");
    std::fs::write(&path, b"precious").unwrap();
    let error = CreateOptions::new(f8(), [3]).create(&path).unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::AlreadyExists));
    assert!(error.to_string().contains("overwrite(true)"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");

    let mut array = CreateOptions::new(f8(), [3])
        .overwrite(true)
        .create(&path)
        .unwrap();
    array.bytes_mut()[..8].copy_from_slice(&1.0f64.to_le_bytes());
    array.flush().unwrap();
    drop(array);
    let reopened = npy_mmap::open(&path).unwrap();
    assert_eq!(reopened.shape(), [3]);
    assert_eq!(reopened.bytes()[..8], 1.0f64.to_le_bytes());
    assert_eq!(reopened.trailing_bytes(), 0);
}

#[test]
fn overwrite_shrinks_a_longer_file() {
    let dir = TempDir::new("create-shrink");
    let path = dir.join("a.npy");
    std::fs::write(&path, vec![1u8; 10_000]).unwrap();
    let array = CreateOptions::new(f8(), [2])
        .overwrite(true)
        .create(&path)
        .unwrap();
    assert_eq!(array.file_len(), 128 + 16);
    assert_eq!(
        array.bytes(),
        [0; 16],
        "old bytes do not leak into the data"
    );
}

#[test]
fn fortran_order_and_version_are_written() {
    let dir = TempDir::new("create-f");
    let path = dir.join("a.npy");
    let array = CreateOptions::new(DType::parse(">i4").unwrap(), [2, 3])
        .order(Order::Fortran)
        .version(Version::V2)
        .create(&path)
        .unwrap();
    assert_eq!(array.layout().version, Version::V2);
    assert_eq!(array.order(), Order::Fortran);
    assert_eq!(array.row_axis(), Some(1));
    drop(array);
    let reopened = npy_mmap::open(&path).unwrap();
    assert_eq!(
        reopened.header(),
        &Header::new(DType::parse(">i4").unwrap(), Order::Fortran, vec![2, 3])
    );
    assert_eq!(reopened.layout().version, Version::V2);
}

#[test]
fn zero_d_and_zero_size_creates() {
    let dir = TempDir::new("create-small");
    let scalar = CreateOptions::new(f8(), [])
        .create(dir.join("s.npy"))
        .unwrap();
    assert_eq!(scalar.bytes().len(), 8);
    assert_eq!(scalar.file_len(), 136, "numpy's size for a 0-d f8");
    let empty = CreateOptions::new(f8(), [0, 4])
        .create(dir.join("e.npy"))
        .unwrap();
    assert_eq!(empty.bytes().len(), 0);
    assert_eq!(empty.file_len(), 128, "header only, like numpy");
}

#[test]
fn too_big_arrays_fail_before_touching_the_disk() {
    let dir = TempDir::new("create-huge");
    let path = dir.join("a.npy");
    let error = CreateOptions::new(f8(), [usize::MAX / 4, 4])
        .create(&path)
        .unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Format(_)), "{error:?}");
    assert!(error.to_string().contains("array is too big"), "{error}");
    assert!(!path.exists());
}

#[test]
fn overwriting_a_mapped_file_leaves_the_reader_its_copy() {
    let dir = TempDir::new("lock-overwrite");
    let path = dir.join("a.npy");
    let mut old = CreateOptions::new(f8(), [4]).create(&path).unwrap();
    old.bytes_mut().fill(7);
    old.flush().unwrap();
    drop(old);
    let reader = npy_mmap::open(&path).unwrap();
    // The reader's shared lock is on the old file: replacing it by rename
    // neither waits for the reader nor changes what it sees.
    let new = CreateOptions::new(f8(), [400])
        .overwrite(true)
        .locking(Locking::NonBlocking)
        .create(&path)
        .unwrap();
    assert_eq!(new.shape(), [400]);
    assert_eq!(reader.shape(), [4]);
    assert_eq!(reader.bytes(), [7; 32]);
    drop(new);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 128 + 3200);
    assert_eq!(dir.entries(), ["a.npy"], "no temporary left behind");
}

#[test]
fn readers_share_and_wait_for_the_exclusive_lock() {
    let dir = TempDir::new("lock-shared");
    let path = dir.join("a.npy");
    CreateOptions::new(f8(), [4]).preallocate(&path).unwrap();
    let nonblocking = || OpenOptions::new().locking(Locking::NonBlocking).open(&path);
    let first = nonblocking().unwrap();
    let second = nonblocking().unwrap();
    drop((first, second));
    // Someone restructuring the file holds the exclusive lock.
    let holder = std::fs::File::open(&path).unwrap();
    holder.lock().unwrap();
    assert!(matches!(
        (nonblocking()).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Locked { .. })
    ));
    // SAFETY: nothing writes or shrinks the file while `unlocked` lives
    // (the holder above only holds the lock).
    let mut options = OpenOptions::new();
    unsafe { options.ignore_locks() };
    let unlocked = options.open(&path);
    assert!(unlocked.is_ok(), "ignore_locks takes no lock");
    drop(holder);
    nonblocking().unwrap();
}

#[test]
fn a_created_array_holds_the_shared_lock() {
    let dir = TempDir::new("lock-create");
    let path = dir.join("a.npy");
    let array = CreateOptions::new(f8(), [4]).create(&path).unwrap();
    let other = std::fs::File::open(&path).unwrap();
    assert!(
        other.try_lock().is_err(),
        "exclusive is refused while mapped"
    );
    other.try_lock_shared().unwrap();
    drop(other);
    drop(array);
    let other = std::fs::File::open(&path).unwrap();
    other.try_lock().unwrap();
}

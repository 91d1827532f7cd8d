//! What a fault-injection trial found, each as a test that failed before the
//! fix: replacing is transactional and keeps the old file's mode, failed
//! commits leave no temporary, openers never hang on a FIFO, appenders notice
//! a replaced file, hostile archives are refused before anything is inflated,
//! readers can cap what they allocate, sparse files can be read without the
//! mapping. (Full-disk cases on a real small filesystem are in the ignored
//! suite, `tests/full_disk.rs` at the workspace root.)

mod common;

use std::io::{Cursor, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use common::TempDir;
use npy_core::{DType, Order, ReadOptions};
use npy_mmap::npz::{Compression, NpzArchive, NpzWriter};
use npy_mmap::{AtomicFile, CreateOptions, Error, ErrorKind};

fn f8() -> DType {
    DType::parse("<f8").unwrap()
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_failed_rename_removes_the_temporary() {
    let dir = TempDir::new("faults-rename");
    let dest = dir.join("out.npz");
    let mut file = AtomicFile::create(&dest).unwrap();
    file.write_all(b"data").unwrap();
    // Something else takes the name meanwhile: a non-empty directory, which
    // no rename can replace.
    std::fs::create_dir_all(dest.join("x")).unwrap();
    let error = file.commit().unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Io { .. }), "{error:?}");
    assert!(error.to_string().contains("rename"), "{error}");
    assert_eq!(
        dir.entries(),
        ["out.npz"],
        "only the directory, no temporary"
    );
    assert!(dest.is_dir());
}

/// Issue 29: a commit told not to replace refuses a destination that
/// appeared after the temporary was made (a file, or a dangling symbolic
/// link), leaving it and no temporary; an archive writer made over such a
/// file does the same at `finish`.
#[test]
fn a_no_replace_commit_refuses_a_destination_that_appeared_meanwhile() {
    let dir = TempDir::new("faults-noreplace");
    let dest = dir.join("out.npy");
    let mut file = AtomicFile::create(&dest).unwrap().replace_existing(false);
    file.write_all(b"new").unwrap();
    std::fs::write(&dest, b"theirs").unwrap();
    let error = file.commit().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::AlreadyExists),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "{}: file exists; it is replaced only when asked (`CreateOptions::overwrite(true)`, \
             `AtomicFile::replace_existing(true)`)",
            dest.display()
        )
    );
    assert_eq!(std::fs::read(&dest).unwrap(), b"theirs");
    assert_eq!(dir.entries(), ["out.npy"]);
    #[cfg(unix)]
    {
        let link = dir.join("link.npy");
        let file = AtomicFile::create(&link).unwrap().replace_existing(false);
        std::os::unix::fs::symlink("nowhere", &link).unwrap();
        let error = file.commit().unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::AlreadyExists),
            "{error:?}"
        );
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        std::fs::remove_file(&link).unwrap();
    }
    let archive = dir.join("out.npz");
    let file = AtomicFile::create(&archive)
        .unwrap()
        .replace_existing(false);
    let mut writer = NpzWriter::create_with(file).unwrap();
    writer.add("a", &[1.0f64, 2.0][..]).unwrap();
    std::fs::write(&archive, b"theirs").unwrap();
    let error = writer.finish().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::AlreadyExists),
        "{error:?}"
    );
    assert_eq!(error.path(), Some(archive.as_path()));
    assert_eq!(std::fs::read(&archive).unwrap(), b"theirs");
    assert_eq!(dir.entries(), ["out.npy", "out.npz"]);
}

#[test]
fn saving_over_a_directory_fails_and_leaves_nothing() {
    let dir = TempDir::new("faults-dir");
    let dest = dir.join("out.npz");
    std::fs::create_dir_all(dest.join("x")).unwrap();
    let error = npy_mmap::save(&dest, &[1.0f64][..]).unwrap_err();
    assert!(error.to_string().contains("is a directory"), "{error}");
    let error = NpzWriter::create(&dest).unwrap_err();
    assert!(error.to_string().contains("is a directory"), "{error}");
    assert_eq!(dir.entries(), ["out.npz"]);
}

#[cfg(unix)]
#[test]
fn replacing_keeps_the_permission_bits() {
    let dir = TempDir::new("faults-mode");
    let npy = dir.join("a.npy");
    npy_mmap::save(&npy, &[1.0f64][..]).unwrap();
    set_mode(&npy, 0o600);
    npy_mmap::save(&npy, &[2.0f64, 3.0][..]).unwrap();
    assert_eq!(mode(&npy), 0o600, "np.save keeps the mode; so do we");
    assert_eq!(npy_mmap::open(&npy).unwrap().shape(), [2]);

    set_mode(&npy, 0o640);
    drop(
        CreateOptions::new(f8(), [5])
            .overwrite(true)
            .create(&npy)
            .unwrap(),
    );
    assert_eq!(mode(&npy), 0o640);

    let npz = dir.join("a.npz");
    std::fs::write(&npz, b"old").unwrap();
    set_mode(&npz, 0o604);
    let mut writer = NpzWriter::create(&npz).unwrap();
    writer.add_raw_member("x", b"1").unwrap();
    writer.finish().unwrap();
    assert_eq!(mode(&npz), 0o604);
    assert_eq!(dir.entries(), ["a.npy", "a.npz"]);
}

/// Set in the child that runs [`saving_over_a_file_we_may_not_write_is_refused`]
/// as an unprivileged user (root may write any file).
const UNPRIVILEGED_CHILD: &str = "NPY_FAULTS_UNPRIVILEGED_DIR";

#[cfg(unix)]
#[test]
fn saving_over_a_file_we_may_not_write_is_refused() {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    if let Some(dir) = std::env::var_os(UNPRIVILEGED_CHILD) {
        return refuse_read_only(Path::new(&dir));
    }
    let dir = TempDir::new("faults-eacces");
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        return refuse_read_only(dir.path());
    }
    // As root every file is writable: run this test again as `nobody`, from a
    // copy of the test binary that user can execute, in a folder it can write.
    set_mode(dir.path(), 0o777);
    let binary = dir.join("faults-child");
    std::fs::copy(std::env::current_exe().unwrap(), &binary).unwrap();
    set_mode(&binary, 0o755);
    let status = std::process::Command::new(&binary)
        .args([
            "saving_over_a_file_we_may_not_write_is_refused",
            "--exact",
            "--test-threads=1",
        ])
        .env(UNPRIVILEGED_CHILD, dir.path())
        .uid(65534)
        .gid(65534)
        .status()
        .unwrap();
    assert!(status.success(), "the unprivileged run failed: {status}");
}

#[cfg(unix)]
fn refuse_read_only(dir: &Path) {
    let path = dir.join("read-only.npy");
    npy_mmap::save(&path, &[1.0f64][..]).unwrap();
    set_mode(&path, 0o444);
    let before = std::fs::read(&path).unwrap();
    let error = npy_mmap::save(&path, &[2.0f64][..]).unwrap_err();
    assert!(
        error.to_string().contains("Permission denied"),
        "np.save fails with EACCES here, and so do we: {error}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let error = CreateOptions::new(f8(), [3])
        .overwrite(true)
        .create(&path)
        .unwrap_err();
    assert!(error.to_string().contains("Permission denied"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|name| name.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_failed_overwrite_leaves_the_old_file() {
    let dir = TempDir::new("faults-overwrite");
    let path = dir.join("a.npy");
    npy_mmap::save(&path, &[1.0f64, 2.0][..]).unwrap();
    let before = std::fs::read(&path).unwrap();
    // No filesystem can reserve 2^60 bytes: the reservation fails after the
    // new file was started, which used to truncate (and then delete) the
    // old one. (A stream reserves only its header; its failures on a full
    // disk are in the ignored full-disk suite.)
    let error = CreateOptions::new(f8(), [1 << 57])
        .overwrite(true)
        .reserve(true)
        .create(&path)
        .map(drop)
        .unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Io { .. }), "{error:?}");
    assert!(error.to_string().contains("reserve disk space"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(dir.entries(), ["a.npy"]);
}

#[test]
fn an_appender_refuses_a_replaced_file() {
    let dir = TempDir::new("faults-appender");
    let path = dir.join("log.npy");
    let mut writer = CreateOptions::new(f8(), [0]).stream(&path).unwrap();
    writer.write_rows(&[1.0f64]).unwrap();
    writer.finish().unwrap();
    let mut appender = npy_mmap::OpenOptions::new().append(&path).unwrap();
    assert_eq!(appender.append(&[2.0f64]).unwrap(), 2);
    // A save renames a new file over the path: appending on would reach an
    // inode nobody can open any more.
    npy_mmap::save(&path, &[9.0f64; 3][..]).unwrap();
    let error = appender.append(&[3.0f64]).unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Replaced), "{error:?}");
    assert!(error.to_string().contains("replaced"), "{error}");
    assert_eq!(npy_mmap::open(&path).unwrap().shape(), [3]);
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(
        (appender.append(&[3.0f64]).unwrap_err()).kind(),
        ErrorKind::Replaced
    ));
}

#[cfg(unix)]
#[test]
fn fifos_are_refused_without_blocking() {
    let dir = TempDir::new("faults-fifo");
    let fifo = dir.join("pipe.npy");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let started = Instant::now();
    let is_fifo_error = |error: &Error| {
        matches!(
            error.kind(),
            ErrorKind::NotARegularFile { what: "a FIFO", .. }
        ) && error.to_string().contains("not a regular file")
    };
    assert!(is_fifo_error(&npy_mmap::open(&fifo).unwrap_err()));
    assert!(is_fifo_error(&npy_mmap::open_rw(&fifo).unwrap_err()));
    assert!(is_fifo_error(&npy_mmap::load(&fifo).unwrap_err()));
    assert!(is_fifo_error(
        &npy_mmap::OpenOptions::new().append(&fifo).unwrap_err()
    ));
    let error = npy_mmap::OpenOptions::new().open_npz(&fifo).unwrap_err();
    assert!(error.to_string().contains("a FIFO"), "{error}");
    let error = npy_mmap::OpenOptions::new().map_npz(&fifo).unwrap_err();
    assert!(error.to_string().contains("a FIFO"), "{error}");
    let error = npy_mmap::open(dir.path()).unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::NotARegularFile {
                what: "a directory",
                ..
            }
        ),
        "{error:?}"
    );
    // Each of these used to wait forever for a writer.
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// An archive whose central directory lists `names`, every entry pointing at
/// the one deflated member of a real archive (the overlapping zip bomb).
fn shared_stream_archive(names: &[&str]) -> Vec<u8> {
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    writer.set_compression(Compression::DEFLATED).unwrap();
    writer.add_raw_member("a.npy", &vec![0u8; 1 << 20]).unwrap();
    let bytes = writer.into_inner().unwrap().into_inner();
    let end = bytes.len() - 22;
    assert_eq!(&bytes[end..end + 4], b"PK\x05\x06");
    let le32 = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let (directory_len, directory_start) = (le32(end + 12), le32(end + 16));
    let record = &bytes[directory_start..directory_start + directory_len];
    let mut out = bytes[..directory_start].to_vec();
    for name in names {
        assert_eq!(name.len(), "a.npy".len());
        let mut entry = record.to_vec();
        entry[46..51].copy_from_slice(name.as_bytes());
        out.extend_from_slice(&entry);
    }
    let mut eocd = bytes[end..].to_vec();
    let count = (names.len() as u16).to_le_bytes();
    eocd[8..10].copy_from_slice(&count);
    eocd[10..12].copy_from_slice(&count);
    eocd[12..16].copy_from_slice(&((directory_len * names.len()) as u32).to_le_bytes());
    out.extend_from_slice(&eocd);
    out
}

#[test]
fn entries_that_disagree_with_their_local_header_are_refused() {
    let bytes = shared_stream_archive(&["a.npy", "b.npy", "c.npy"]);
    let error = NpzArchive::new(Cursor::new(bytes)).unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Archive(npy_core::npz::ArchiveError::Corrupt { .. })
        ),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("File name in directory 'b.npy' and header 'a.npy' differ."),
        "Python's zipfile wording: {error}"
    );
}

#[test]
fn a_shared_stream_is_refused_before_anything_is_inflated() {
    // 10,000 entries sharing one 1 MiB stream: inflating each would take
    // minutes; the layout check refuses the archive at once.
    let names: Vec<String> = std::iter::once("a.npy".to_string())
        .chain((1..10_000).map(|i| format!("{i:05}")))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let bytes = shared_stream_archive(&names);
    let started = Instant::now();
    let error = NpzArchive::new(Cursor::new(bytes.clone())).unwrap_err();
    assert!(error.to_string().contains("differ"), "{error}");
    let error = NpzArchive::from_bytes(&bytes).unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Archive(npy_core::npz::ArchiveError::Corrupt { .. })
        ),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    // One entry alone is a fine archive.
    let mut single = NpzArchive::new(Cursor::new(shared_stream_archive(&["a.npy"]))).unwrap();
    assert_eq!(single.read_raw("a").unwrap().len(), 1 << 20);
}

#[test]
fn overlapping_entries_are_refused() {
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    writer.add_raw_member("a.npy", &[1u8; 1000]).unwrap();
    writer.add_raw_member("b.npy", &[2u8; 1000]).unwrap();
    let mut bytes = writer.into_inner().unwrap().into_inner();
    let directory = bytes
        .windows(4)
        .position(|w| w == b"PK\x01\x02")
        .expect("central directory");
    // a's compressed size now reaches into b's local header.
    bytes[directory + 20..directory + 24].copy_from_slice(&1100u32.to_le_bytes());
    let error = NpzArchive::new(Cursor::new(bytes)).unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Archive(npy_core::npz::ArchiveError::Corrupt { .. })
        ),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("member 'b.npy': it overlaps member 'a.npy'"),
        "{error}"
    );
}

#[test]
fn npz_loads_can_cap_the_inflated_size() {
    let data = vec![0.0f64; 1 << 17]; // 1 MiB of zeros: deflates ~1000:1
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    writer.set_compression(Compression::DEFLATED).unwrap();
    writer.add("big", &data[..]).unwrap();
    writer.add("small", &[1.0f64; 4][..]).unwrap();
    let bytes = writer.into_inner().unwrap().into_inner();
    assert!(bytes.len() < 16 << 10, "{}", bytes.len());
    let options = ReadOptions {
        max_data_len: Some(64 << 10),
        ..Default::default()
    };
    let mut archive = npy_mmap::OpenOptions::from(options)
        .read_npz(Cursor::new(bytes))
        .unwrap();
    let error = archive.load("big").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("1048576 bytes, more than the 65536 bytes allowed"),
        "{error}"
    );
    assert_eq!(archive.load("small").unwrap().header().shape, [4]);
}

#[test]
fn sparse_data_reads_through_the_file() {
    let dir = TempDir::new("faults-holes");
    let path = dir.join("sparse.npy");
    let mut array = CreateOptions::new(f8(), [1 << 20]).create(&path).unwrap();
    array.view_mut::<f64>().unwrap().as_slice_mut().unwrap()[3] = 2.5;
    array.flush().unwrap();
    drop(array);
    let array = npy_mmap::open(&path).unwrap();
    assert!(array.has_holes().unwrap(), "8 MiB with one page written");
    let mut value = [0u8; 8];
    array.read_bytes_at(24, &mut value).unwrap();
    assert_eq!(f64::from_le_bytes(value), 2.5);
    array.read_bytes_at(8 << 19, &mut value).unwrap();
    assert_eq!(value, [0; 8], "a hole reads as zeros");
    let error = array.read_bytes_at((8 << 20) - 4, &mut value).unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::BytesOutOfBounds { .. }),
        "{error:?}"
    );

    let full = dir.join("full.npy");
    npy_mmap::save(
        &full,
        &npy_core::ArrayView::from_slice(&vec![1.0f64; 1 << 16], &[1 << 16], Order::C).unwrap(),
    )
    .unwrap();
    assert!(!npy_mmap::open(&full).unwrap().has_holes().unwrap());
}

/// Round 3: an `AtomicFile`'s temporary could be mapped by safe code while
/// it was still being written, and the mapped `&[u8]` changed under its
/// reader. The temporary is locked exclusive until the commit: this process
/// is refused at once (it could never see the lock released while it
/// waits), whatever the locking.
#[test]
fn an_atomic_files_temporary_cannot_be_mapped_while_it_is_written() {
    use npy_mmap::{Locking, OpenOptions};

    let dir = TempDir::new("faults-atomic-temp");
    let dest = dir.join("out.npy");
    let mut file = AtomicFile::create(&dest).unwrap();
    npy_core::write_npy(&mut file, &[1.0f64, 2.0, 3.0][..]).unwrap();
    file.flush().unwrap();
    let temp = file.temp_path().to_path_buf();
    for locking in [Locking::NonBlocking, Locking::Blocking] {
        let started = Instant::now();
        let error = OpenOptions::new()
            .locking(locking)
            .open(&temp)
            .expect_err("the temporary was mapped while being written");
        assert!(
            matches!(error.kind(), ErrorKind::Conflict { .. }),
            "{error:?}"
        );
        assert!(
            error.to_string().contains(
                "opening the file conflicts with an AtomicFile writing the file (its temporary) \
                 that this process holds"
            ),
            "{error}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{locking:?} waited"
        );
    }
    // Loading it into memory is refused the same way (it would read a half-written file).
    let error = OpenOptions::new().load(&temp).unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Conflict { .. }),
        "{error:?}"
    );

    // Once committed, the file is everybody's.
    file.commit().unwrap();
    let array = npy_mmap::open(&dest).unwrap();
    assert_eq!(array.view::<f64>().unwrap().to_vec(), [1.0, 2.0, 3.0]);
}

/// Round 5, item 9: a read-write mapping without a header (numpy's
/// `np.memmap(p.npy, mode="r+", offset=0)`) of an `.npy` file would let
/// its writes change the header under strict readers of the data (their
/// locks cover the data, not the header), and new openers would read
/// another array. It is refused in every writing mode, with where the
/// header ends; reading it, a copy-on-write mapping, and a read-write one
/// from the data offset on stay allowed. Before, all were admitted.
#[test]
fn a_headerless_read_write_mapping_never_covers_an_npy_header() {
    use npy_core::headerless::Headerless;
    use npy_mmap::{ForeignMode, OpenOptions};

    let dir = TempDir::new("headerless-over-header");
    let path = dir.join("a.npy");
    std::fs::write(
        &path,
        common::npy_bytes("<f8", Order::C, &[4, 4], &common::f64_bytes(0.0, 16)),
    )
    .unwrap();
    let bytes = |offset| Headerless::new(DType::parse("|u1").unwrap(), offset, None, Order::C);
    let strict = npy_mmap::open(&path).unwrap();
    for offset in [0, 10, 127] {
        let mut options = OpenOptions::new();
        options.headerless(bytes(offset));
        let refused = |result: npy_mmap::Result<()>| match result {
            Err(error) => match error.kind() {
                ErrorKind::HeaderlessOverHeader { header_end } => {
                    assert_eq!(*header_end, 128);
                    assert!(error.to_string().contains("map from offset 128"), "{error}");
                }
                other => panic!("offset {offset}: {other:?}"),
            },
            Ok(()) => panic!("offset {offset}: a writable mapping over the header was admitted"),
        };
        refused(options.open_rw(&path).map(drop));
        refused(
            options
                .open_foreign(&path, ForeignMode::ReadWrite)
                .map(drop),
        );
        refused(options.open_live(&path).map(drop));
        options.open(&path).unwrap();
        options.open_cow(&path).unwrap();
    }
    // From the data on it is the data: refused only while the strict
    // reader maps it, as any writer would be.
    let mut options = OpenOptions::new();
    options.headerless(bytes(128));
    assert!(matches!(
        options.open_rw(&path).unwrap_err().kind(),
        ErrorKind::Conflict { .. }
    ));
    drop(strict);
    options.open_rw(&path).unwrap();
    // A file that is not an .npy is any bytes.
    let plain = dir.join("tokens.bin");
    std::fs::write(&plain, [0u8; 64]).unwrap();
    let mut options = OpenOptions::new();
    options.headerless(bytes(0));
    options.open_rw(&plain).unwrap();
}

/// Round 5, item 3 (Dask targets): a file made under another name by other
/// means (workers filling a partial file) is committed through the same
/// steps as an `AtomicFile`: the old file's mode kept, a reader of the old
/// file keeps its bytes, refused across folders, and (unless replacing)
/// refused over an existing name, the prepared file left in place.
#[test]
#[cfg(unix)]
fn a_prepared_file_is_committed_through_the_atomic_commit() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("commit-prepared");
    let dest = dir.join("out.npy");
    std::fs::write(&dest, b"old").unwrap();
    std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o640)).unwrap();
    let old = std::fs::File::open(&dest).unwrap();
    let partial = dir.join(".out.npy.partial-1");
    std::fs::write(&partial, b"new bytes").unwrap();
    AtomicFile::commit_prepared(&partial, &dest, true).unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), b"new bytes");
    let mode = std::fs::metadata(&dest).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640, "the old file's mode is kept");
    assert!(!partial.exists());
    let mut kept = String::new();
    std::io::Read::read_to_string(&mut &old, &mut kept).unwrap();
    assert_eq!(kept, "old", "a reader of the old file keeps it");

    std::fs::write(&partial, b"newer").unwrap();
    let error = AtomicFile::commit_prepared(&partial, &dest, false).unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::AlreadyExists), "{error}");
    assert!(partial.exists() && std::fs::read(&dest).unwrap() == b"new bytes");

    let other = TempDir::new("commit-prepared-other");
    let error = AtomicFile::commit_prepared(&partial, other.join("out.npy"), true).unwrap_err();
    assert!(error.to_string().contains("not in the folder"), "{error}");
}

//! Faults that need a real, small filesystem: each test mounts its own tmpfs
//! (CI runs as root; when mounting is refused the test fails saying why, it
//! never skips) and fills it. Run with `cargo test -- --ignored` (`.ci/run`
//! does).
//!
//! - reading a sparse file on a full tmpfs, which used to kill the reader
//!   with SIGBUS (a read fault on a tmpfs hole needs a page);
//! - saves, overwriting creates and streams on a full disk, which must leave
//!   the old file and no temporary;
//! - a deflated member that honestly inflates 1 GiB from a few MiB, which
//!   `show` and `stats` must stream in bounded memory.
#![cfg(target_os = "linux")]

mod common;

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_exit, npy, scratch, stdout};
use npy_core::{DType, Order};
use npy_mmap::CreateOptions;
use npy_mmap::npz::NpzWriter;

/// A tmpfs of `size` mounted for one test; unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(test: &str, size: &str) -> Tmpfs {
        let dir = scratch(test).join("mnt");
        std::fs::create_dir_all(&dir).unwrap();
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output()
            .expect("running mount");
        assert!(
            output.status.success(),
            "mounting a {size} tmpfs at {} failed (these tests need root, as CI has): {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        Tmpfs(dir)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Writes a filler file until the filesystem has no page left.
    fn fill(&self) {
        let mut file = std::fs::File::create(self.join("filler")).unwrap();
        let block = vec![0xA5u8; 64 << 10];
        loop {
            match file.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(error) => {
                    assert_eq!(error.raw_os_error(), Some(28), "ENOSPC: {error}");
                    break;
                }
            }
        }
        let page = [0u8; 1];
        while file.write(&page).is_ok_and(|n| n == 1) {}
    }

    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
#[ignore = "mounts a tmpfs (root); run by .ci/run"]
fn reading_a_sparse_file_on_a_full_tmpfs_never_kills_the_reader() {
    let fs = Tmpfs::mount("full_disk_sparse_read", "4m");
    let array = fs.join("sparse.npy");
    // 16 MiB of data on a 4 MiB filesystem: sparse, nothing written.
    let output = npy([
        OsStr::new("create"),
        array.as_os_str(),
        OsStr::new("--dtype"),
        OsStr::new("<f4"),
        OsStr::new("--shape"),
        OsStr::new("4096,1024"),
    ]);
    assert_exit(&output, 0);
    fs.fill();
    let converted = scratch("full_disk_sparse_read_out").join("converted.npy");
    let runs: [Vec<&OsStr>; 5] = [
        vec![OsStr::new("stats"), array.as_os_str()],
        vec![OsStr::new("show"), array.as_os_str()],
        vec![OsStr::new("validate"), array.as_os_str()],
        vec![
            OsStr::new("convert"),
            array.as_os_str(),
            converted.as_os_str(),
            OsStr::new("--order"),
            OsStr::new("F"),
        ],
        vec![OsStr::new("info"), array.as_os_str()],
    ];
    for args in runs {
        let output = npy(&args);
        // Before the fix, stats/show/convert died here with SIGBUS.
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&output.status),
            None,
            "{args:?} was killed"
        );
        assert_exit(&output, 0);
    }
    let stats = stdout(&npy([OsStr::new("stats"), array.as_os_str()]));
    assert!(stats.contains("count: 4194304"), "{stats}");
    assert!(stats.contains("max:   0.0"), "{stats}");
    let converted = npy_mmap::open(&converted).unwrap();
    assert_eq!(converted.order(), Order::Fortran);
    assert!(converted.bytes().iter().all(|&b| b == 0));
    // The library's own whole-file read goes through read(2) too.
    assert_eq!(npy_mmap::load(&array).unwrap().bytes().len(), 16 << 20);
}

#[test]
#[ignore = "mounts a tmpfs (root); run by .ci/run"]
fn replacing_on_a_full_disk_leaves_the_old_file() {
    let fs = Tmpfs::mount("full_disk_replace", "1m");
    let npy_path = fs.join("a.npy");
    let npz_path = fs.join("a.npz");
    npy_mmap::save(&npy_path, &[1.0f64; 16][..]).unwrap();
    let mut writer = NpzWriter::create(&npz_path).unwrap();
    writer.add("a", &[1.0f64; 16][..]).unwrap();
    writer.finish().unwrap();
    let (old_npy, old_npz) = (
        std::fs::read(&npy_path).unwrap(),
        std::fs::read(&npz_path).unwrap(),
    );
    fs.fill();
    let big = vec![2.0f64; 1 << 18]; // 2 MiB: more than the whole disk
    let f8 = DType::parse("<f8").unwrap();

    let error = npy_mmap::save(&npy_path, &big[..]).unwrap_err();
    assert!(error.to_string().contains("No space left"), "{error}");
    let npz_error = NpzWriter::create(&npz_path).and_then(|mut writer| {
        writer.add("a", &big[..])?;
        writer.finish()
    });
    let npz_error = npz_error.unwrap_err();
    assert!(
        npz_error.to_string().contains("No space left"),
        "{npz_error}"
    );
    let error = CreateOptions::new(f8.clone(), [1 << 18])
        .overwrite(true)
        .reserve(true)
        .create(&npy_path)
        .map(drop)
        .unwrap_err();
    assert!(error.to_string().contains("No space left"), "{error}");
    let streamed = CreateOptions::new(f8, [0])
        .overwrite(true)
        .stream(&npy_path)
        .and_then(|mut writer| {
            writer.write_rows(&big)?;
            writer.finish()
        });
    // The stream may start (the temporary file takes no page until written),
    // but it cannot finish, and the path keeps the old file.
    let streamed = streamed.unwrap_err();
    assert!(streamed.to_string().contains("No space left"), "{streamed}");

    assert_eq!(std::fs::read(&npy_path).unwrap(), old_npy);
    assert_eq!(std::fs::read(&npz_path).unwrap(), old_npz);
    assert_eq!(
        fs.names(),
        ["a.npy", "a.npz", "filler"],
        "no temporary left"
    );
}

/// An archive at `path` whose one member `x.npy` is `rows` × 2^17 float64
/// zeros, deflated (1 MiB of zeros per block, a few KiB each): built from
/// repeated flushed blocks, so a 1 GiB member takes a second to make.
fn deflated_zeros(path: &Path, rows: usize) {
    use flate2::{Compress, Compression, FlushCompress};
    const BLOCK: usize = 1 << 20;
    let header = npy_core::Header::new(DType::parse("<f8").unwrap(), Order::C, vec![rows, 1 << 17]);
    let header_bytes = header.to_bytes(None).unwrap();
    let block = |input: &[u8]| {
        let mut compress = Compress::new(Compression::fast(), false);
        let mut out = Vec::with_capacity(input.len() + 1024);
        compress
            .compress_vec(input, &mut out, FlushCompress::Full)
            .unwrap();
        assert_eq!(compress.total_in() as usize, input.len());
        out
    };
    let (head, zeros) = (block(&header_bytes), block(&vec![0u8; BLOCK]));
    let mut crc = crc32fast::Hasher::new();
    crc.update(&header_bytes);
    let mut zeros_crc = crc32fast::Hasher::new();
    zeros_crc.update(&vec![0u8; BLOCK]);
    let mut data = head;
    for _ in 0..rows {
        data.extend_from_slice(&zeros);
        crc.combine(&zeros_crc);
    }
    data.extend_from_slice(&[0x03, 0x00]); // an empty final block
    let crc = crc.finalize();
    let size = u32::try_from(header_bytes.len() + rows * BLOCK).unwrap();
    let compressed = u32::try_from(data.len()).unwrap();
    let name = b"x.npy";
    let mut zip = Vec::new();
    let common = |out: &mut Vec<u8>| {
        out.extend_from_slice(&20u16.to_le_bytes()); // version needed
        out.extend_from_slice(&0u16.to_le_bytes()); // flags
        out.extend_from_slice(&8u16.to_le_bytes()); // deflate
        out.extend_from_slice(&0u16.to_le_bytes()); // time
        out.extend_from_slice(&0x21u16.to_le_bytes()); // 1980-01-01
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&compressed.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes()); // extra length
    };
    zip.extend_from_slice(b"PK\x03\x04");
    common(&mut zip);
    zip.extend_from_slice(name);
    zip.extend_from_slice(&data);
    let directory = zip.len() as u32;
    zip.extend_from_slice(b"PK\x01\x02");
    zip.extend_from_slice(&20u16.to_le_bytes()); // made by
    common(&mut zip);
    zip.extend_from_slice(&[0; 6]); // comment length, disk, internal attributes
    zip.extend_from_slice(&0u32.to_le_bytes()); // external attributes
    zip.extend_from_slice(&0u32.to_le_bytes()); // local header offset
    zip.extend_from_slice(name);
    let directory_len = zip.len() as u32 - directory;
    zip.extend_from_slice(b"PK\x05\x06\0\0\0\0\x01\0\x01\0");
    zip.extend_from_slice(&directory_len.to_le_bytes());
    zip.extend_from_slice(&directory.to_le_bytes());
    zip.extend_from_slice(&0u16.to_le_bytes());
    std::fs::write(path, zip).unwrap();
}

#[test]
#[ignore = "inflates 1 GiB; run by .ci/run"]
fn a_member_inflating_to_a_gibibyte_streams_in_bounded_memory() {
    let dir = scratch("a_member_inflating_to_a_gibibyte_streams_in_bounded_memory");
    let npz = dir.join("bomb.npz");
    deflated_zeros(&npz, 1024);
    let compressed = std::fs::metadata(&npz).unwrap().len();
    assert!(compressed < 16 << 20, "{compressed} bytes");
    // 512 MiB of address space: the old whole-member load needed 1 GiB.
    for command in ["show", "stats"] {
        let output = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -v 524288 && exec \"$0\" {command} \"$1\" --member x"
            ))
            .arg(env!("CARGO_BIN_EXE_npy"))
            .arg(&npz)
            .output()
            .unwrap();
        assert_exit(&output, 0);
        let text = stdout(&output);
        match command {
            "stats" => assert!(text.contains("count: 134217728"), "{text}"),
            _ => assert!(text.starts_with("[[0. 0. 0. ... 0. 0. 0.]"), "{text}"),
        }
    }
}

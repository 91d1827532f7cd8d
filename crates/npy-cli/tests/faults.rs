//! The CLI's findings from the fault-injection trial: extract replaces files
//! by rename and never follows a symbolic link out of its folder, pack and
//! convert leave no temporary behind, hostile archives are refused at once,
//! FIFOs never hang a command.

mod common;

use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{arange_3x4, assert_exit, npy, scratch, stderr, stdout, write};
use npy_mmap::npz::NpzWriter;

/// An archive at `path` holding `a` = [1., 2., 3.] and `sub/b` = [4.].
fn archive(path: &Path) {
    let mut writer = NpzWriter::create(path).unwrap();
    writer
        .add(
            "a",
            &npy_core::ArrayView::from_slice(&[1.0f64, 2.0, 3.0], &[3], npy_core::Order::C)
                .unwrap(),
        )
        .unwrap();
    writer.add("sub/b", &[4.0f64][..]).unwrap();
    writer.finish().unwrap();
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[cfg(unix)]
#[test]
fn extract_never_follows_a_link_out_of_its_folder() {
    let dir = scratch("extract_never_follows_a_link_out_of_its_folder");
    let npz = dir.join("in.npz");
    archive(&npz);
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let victim = write(&elsewhere, "victim", b"precious");

    // out/a.npy is a link to the victim: the member replaces the link.
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("a.npy")).unwrap();
    let output = npy([
        OsStr::new("extract"),
        npz.as_os_str(),
        OsStr::new("a"),
        OsStr::new("--dir"),
        out.as_os_str(),
        OsStr::new("--force"),
    ]);
    assert_exit(&output, 0);
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    let a = out.join("a.npy");
    assert!(!a.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(
        npy_mmap::open(&a).unwrap().view::<f64>().unwrap().to_vec(),
        [1.0, 2.0, 3.0]
    );

    // out/sub is a link to another folder: member sub/b is refused.
    std::os::unix::fs::symlink(&elsewhere, out.join("sub")).unwrap();
    let output = npy([
        OsStr::new("extract"),
        npz.as_os_str(),
        OsStr::new("sub/b"),
        OsStr::new("--dir"),
        out.as_os_str(),
    ]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("symbolic link"),
        "{}",
        stderr(&output)
    );
    assert_eq!(names(&elsewhere), ["victim"], "nothing landed elsewhere");
}

#[test]
fn extract_replaces_files_that_readers_have_mapped() {
    let dir = scratch("extract_replaces_files_that_readers_have_mapped");
    let npz = dir.join("in.npz");
    archive(&npz);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let old = out.join("a.npy");
    npy_mmap::save(&old, &[9.0f64; 1000][..]).unwrap();
    // A reader maps the old file; extracting used to truncate it in place,
    // and the reader's next touch was a SIGBUS.
    let reader = npy_mmap::open(&old).unwrap();
    let output = npy([
        OsStr::new("extract"),
        npz.as_os_str(),
        OsStr::new("--dir"),
        out.as_os_str(),
        OsStr::new("--force"),
    ]);
    assert_exit(&output, 0);
    let seen = reader.view::<f64>().unwrap();
    assert!(seen.iter().all(|&v| v == 9.0), "the reader keeps its copy");
    drop(seen);
    assert_eq!(npy_mmap::open(&old).unwrap().shape(), [3]);
    assert_eq!(names(&out), ["a.npy", "sub"]);
    assert_eq!(names(&out.join("sub")), ["b.npy"]);
}

#[test]
fn a_member_failing_its_crc_leaves_the_existing_file() {
    let dir = scratch("a_member_failing_its_crc_leaves_the_existing_file");
    let existing = write(&dir, "a.npy", &arange_3x4());
    let output = npy([
        OsStr::new("extract"),
        common::fixtures().join("npz/bad_crc.npz").as_os_str(),
        OsStr::new("a"),
        OsStr::new("--dir"),
        dir.as_os_str(),
        OsStr::new("--force"),
    ]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("Bad CRC-32"),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read(&existing).unwrap(), arange_3x4());
    assert_eq!(names(&dir), ["a.npy"], "no temporary left behind");
}

#[test]
fn pack_and_convert_leave_no_temporary_on_failure() {
    let dir = scratch("pack_and_convert_leave_no_temporary_on_failure");
    let input = write(&dir, "in.npy", &arange_3x4());
    // The output name is taken by a non-empty directory.
    std::fs::create_dir_all(dir.join("out.npz/x")).unwrap();
    std::fs::create_dir_all(dir.join("out.npy/x")).unwrap();
    let output = npy([
        OsStr::new("pack"),
        dir.join("out.npz").as_os_str(),
        input.as_os_str(),
        OsStr::new("--force"),
    ]);
    assert_exit(&output, 1);
    let output = npy([
        OsStr::new("convert"),
        input.as_os_str(),
        dir.join("out.npy").as_os_str(),
        OsStr::new("--order"),
        OsStr::new("F"),
        OsStr::new("--force"),
    ]);
    assert_exit(&output, 1);
    assert_eq!(names(&dir), ["in.npy", "out.npy", "out.npz"]);
}

#[cfg(unix)]
#[test]
fn convert_replaces_its_output_keeping_the_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("convert_replaces_its_output_keeping_the_mode");
    let input = write(&dir, "in.npy", &arange_3x4());
    let out = write(&dir, "out.npy", b"old");
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    let output = npy([
        OsStr::new("convert"),
        input.as_os_str(),
        out.as_os_str(),
        OsStr::new("--byte-order"),
        OsStr::new("big"),
        OsStr::new("--force"),
    ]);
    assert_exit(&output, 0);
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(npy_mmap::open(&out).unwrap().dtype().descr(), ">f8");
    assert_eq!(names(&dir), ["in.npy", "out.npy"]);
}

#[test]
fn validate_refuses_a_shared_stream_archive_at_once() {
    use std::io::Cursor;
    let dir = scratch("validate_refuses_a_shared_stream_archive_at_once");
    // One deflated member, listed 2,000 times under other names.
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    writer
        .set_compression(npy_mmap::npz::Compression::DEFLATED)
        .unwrap();
    writer.add_raw_member("a.npy", &vec![0u8; 1 << 20]).unwrap();
    let bytes = writer.into_inner().unwrap().into_inner();
    let end = bytes.len() - 22;
    let le32 = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let (len, start) = (le32(end + 12), le32(end + 16));
    let mut bomb = bytes[..start].to_vec();
    for i in 0..2000 {
        let mut entry = bytes[start..start + len].to_vec();
        entry[46..51].copy_from_slice(format!("{i:05}").as_bytes());
        bomb.extend_from_slice(&entry);
    }
    let mut eocd = bytes[end..].to_vec();
    eocd[8..10].copy_from_slice(&2000u16.to_le_bytes());
    eocd[10..12].copy_from_slice(&2000u16.to_le_bytes());
    eocd[12..16].copy_from_slice(&((len * 2000) as u32).to_le_bytes());
    bomb.extend_from_slice(&eocd);
    let path = write(&dir, "bomb.npz", &bomb);
    let started = Instant::now();
    let output = npy([OsStr::new("validate"), path.as_os_str()]);
    assert_exit(&output, 1);
    assert!(stdout(&output).contains("differ"), "{}", stdout(&output));
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[cfg(unix)]
#[test]
fn a_fifo_never_hangs_a_command() {
    let dir = scratch("a_fifo_never_hangs_a_command");
    let fifo = dir.join("pipe.npy");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for command in ["info", "show", "stats", "validate"] {
        let output = npy([OsStr::new(command), fifo.as_os_str()]);
        assert!(!output.status.success(), "{command}");
        assert!(
            stderr(&output).contains("a FIFO"),
            "{command}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn show_and_stats_stream_deflated_members() {
    let dir = scratch("show_and_stats_stream_deflated_members");
    let data: Vec<f64> = (0..100_000).map(f64::from).collect();
    let npz = dir.join("big.npz");
    let mut writer = NpzWriter::create(&npz).unwrap();
    writer
        .set_compression(npy_mmap::npz::Compression::DEFLATED)
        .unwrap();
    writer
        .add(
            "x",
            &npy_core::ArrayView::from_slice(&data, &[1000, 100], npy_core::Order::C).unwrap(),
        )
        .unwrap();
    writer.finish().unwrap();
    let stored = dir.join("x.npy");
    npy_mmap::save(
        &stored,
        &npy_core::ArrayView::from_slice(&data, &[1000, 100], npy_core::Order::C).unwrap(),
    )
    .unwrap();
    for command in [["show"].as_slice(), &["show", "--rows", "990:"], &["stats"]] {
        let mut member: Vec<&OsStr> = command.iter().map(OsStr::new).collect();
        member.extend([npz.as_os_str(), OsStr::new("--member"), OsStr::new("x")]);
        let mut direct: Vec<&OsStr> = command.iter().map(OsStr::new).collect();
        direct.push(stored.as_os_str());
        let (member, direct) = (npy(&member), npy(&direct));
        assert_exit(&member, 0);
        assert_eq!(stdout(&member), stdout(&direct), "{command:?}");
    }
}

#[test]
fn npy_data_can_be_piped_in_as_dash() {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let run = |args: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_npy"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A pipe, not a file: the reader gets the bytes once, in order.
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&arange_3x4());
        });
        let output = child.wait_with_output().unwrap();
        writer.join().unwrap();
        output
    };
    let shown = run(&["show", "-"]);
    assert_exit(&shown, 0);
    assert_eq!(
        stdout(&shown),
        "[[ 0.  1.  2.  3.]\n [ 4.  5.  6.  7.]\n [ 8.  9. 10. 11.]]\n"
    );
    let stats = run(&["stats", "-"]);
    assert_exit(&stats, 0);
    assert!(stdout(&stats).contains("count: 12"), "{}", stdout(&stats));
    let info = run(&["info", "--json", "-"]);
    assert_exit(&info, 0);
    assert!(
        stdout(&info).contains("\"shape\":[3,4]"),
        "{}",
        stdout(&info)
    );
    assert_exit(&run(&["validate", "-"]), 0);
}

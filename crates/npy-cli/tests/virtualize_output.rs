//! Issue 39: `npy virtualize -o DEST` writes through the one atomic commit
//! with the CLI's `--force` rule (a reader mapping DEST keeps the old file,
//! an existing DEST is refused without `--force`, an input is never the
//! output, a symbolic link is never written through), its variable names
//! are names Zarr keeps, and its references never carry credentials.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use common::{
    arange_3x4, assert_exit, names, npy, npy_bytes, scratch, serve_whole, stderr, stdout, write,
};
use serde_json::Value;

/// `npy virtualize input -o dest [extra...]`.
fn virtualize(input: &Path, dest: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "virtualize".as_ref(),
        input.as_os_str(),
        "-o".as_ref(),
        dest.as_os_str(),
    ];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    npy(args)
}

/// A 1 MiB `<f8` array: larger than any reference JSON written here, so a
/// truncation in place leaves a mapping of it pages past the end of file.
fn big_npy() -> Vec<u8> {
    let n = 1usize << 17;
    let data: Vec<u8> = (0..n).flat_map(|i| (i as f64).to_le_bytes()).collect();
    npy_bytes(
        &format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({n},), }}"),
        14,
        &data,
    )
}

#[test]
fn a_reader_mapping_the_destination_keeps_the_old_bytes_and_the_mode_is_kept() {
    let dir = scratch("virtualize_mapped_destination");
    let input = write(&dir, "t.npy", &arange_3x4());
    let old = big_npy();
    let dest = write(&dir, "refs.json", &old);
    std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o640)).unwrap();
    let old_inode = std::fs::metadata(&dest).unwrap().ino();
    // A real mapping of the old file, held across the command.
    let mapped = npy_mmap::open(&dest).unwrap();
    let output = virtualize(&input, &dest, &["--force"]);
    assert_exit(&output, 0);
    // Truncated in place, these pages would be past the end of the file:
    // reading them would kill this process with SIGBUS.
    let data_start = old.len() - mapped.bytes().len();
    assert_eq!(mapped.bytes(), &old[data_start..]);
    // DEST is a new file holding the references, with the old one's mode.
    let meta = std::fs::metadata(&dest).unwrap();
    assert_ne!(meta.ino(), old_inode);
    assert_eq!(meta.mode() & 0o7777, 0o640);
    let doc: Value = serde_json::from_slice(&std::fs::read(&dest).unwrap()).unwrap();
    assert!(doc["refs"]["t/.zarray"].is_string(), "{doc}");
    assert_eq!(names(&dir), ["refs.json", "t.npy"]);
}

#[test]
fn an_existing_destination_is_refused_without_force() {
    let dir = scratch("virtualize_no_force");
    let input = write(&dir, "t.npy", &arange_3x4());
    let dest = write(&dir, "refs.json", b"old references\n");
    let output = virtualize(&input, &dest, &[]);
    assert_exit(&output, 1);
    assert_eq!(
        stderr(&output),
        format!(
            "npy: error: {} exists; remove it first, or replace it with --force\n",
            dest.display()
        )
    );
    assert_eq!(std::fs::read(&dest).unwrap(), b"old references\n");
    assert_eq!(names(&dir), ["refs.json", "t.npy"]);
    // A new destination is written without --force, and `-` is standard output.
    let new = dir.join("new.json");
    assert_exit(&virtualize(&input, &new, &[]), 0);
    let output = virtualize(&input, Path::new("-"), &[]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output).into_bytes(), std::fs::read(&new).unwrap());
    assert_eq!(names(&dir), ["new.json", "refs.json", "t.npy"]);
}

#[test]
fn an_input_is_never_the_output_even_with_force() {
    let dir = scratch("virtualize_input_as_output");
    let input = write(&dir, "t.npy", &arange_3x4());
    // The same file by other names: a hard link elsewhere, and the file
    // found in a directory input.
    let elsewhere = scratch("virtualize_input_as_output_link");
    let hard = elsewhere.join("again.npy");
    std::fs::hard_link(&input, &hard).unwrap();
    let spelled = dir.join(".").join("t.npy");
    let cases: [(&Path, &Path); 4] = [
        (&input, &input),
        (&input, &hard),
        (&dir, &input),
        (&input, &spelled),
    ];
    for (given, dest) in cases {
        let output = virtualize(given, dest, &["--force"]);
        assert_exit(&output, 1);
        let expected = format!(
            "npy: error: {} is an input ({}), the same file: write the output elsewhere \
             (--force never replaces an input)\n",
            dest.display(),
            std::fs::canonicalize(&input).unwrap().display()
        );
        assert_eq!(stderr(&output), expected, "{given:?} -> {dest:?}");
        assert_eq!(std::fs::read(&input).unwrap(), arange_3x4());
        assert_eq!(names(&dir), ["t.npy"]);
        assert_eq!(names(&elsewhere), ["again.npy"]);
    }
}

#[test]
fn a_symbolic_link_destination_is_never_written_through() {
    let dir = scratch("virtualize_symlink");
    let input = write(&dir, "t.npy", &arange_3x4());
    let target = write(&dir, "theirs.json", b"theirs\n");
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let dangling = dir.join("dangling.json");
    std::os::unix::fs::symlink(dir.join("nowhere.json"), &dangling).unwrap();
    let to_input = dir.join("to-input.json");
    std::os::unix::fs::symlink(&input, &to_input).unwrap();
    // Without --force: refused, saying it is a link; nothing changes.
    for dest in [&link, &dangling, &to_input] {
        let output = virtualize(&input, dest, &[]);
        assert_exit(&output, 1);
        assert_eq!(
            stderr(&output),
            format!(
                "npy: error: {} is a symbolic link, and output is never written through one; \
                 remove it first, or replace the link itself with --force\n",
                dest.display()
            )
        );
        assert!(dest.symlink_metadata().unwrap().file_type().is_symlink());
    }
    assert_eq!(std::fs::read(&target).unwrap(), b"theirs\n");
    assert!(!dir.join("nowhere.json").exists());
    // With --force: the link itself is replaced by the references; what it
    // pointed at is untouched (an input included).
    for dest in [&link, &dangling, &to_input] {
        assert_exit(&virtualize(&input, dest, &["--force"]), 0);
        let meta = dest.symlink_metadata().unwrap();
        assert!(meta.file_type().is_file(), "{dest:?}");
        let doc: Value = serde_json::from_slice(&std::fs::read(dest).unwrap()).unwrap();
        assert!(doc["refs"]["t/.zarray"].is_string(), "{doc}");
    }
    assert_eq!(std::fs::read(&target).unwrap(), b"theirs\n");
    assert_eq!(std::fs::read(&input).unwrap(), arange_3x4());
    assert_eq!(
        names(&dir),
        [
            "dangling.json",
            "link.json",
            "t.npy",
            "theirs.json",
            "to-input.json"
        ]
    );
}

/// An npz holding one member named `name` (an `<f8` (3, 4) array).
fn npz_with_member(dir: &Path, file: &str, name: &str) -> PathBuf {
    let mut npz = npy_mmap::npz::NpzWriter::new(std::io::Cursor::new(Vec::new())).unwrap();
    npz.add_raw_member(name, &arange_3x4()).unwrap();
    write(dir, file, &npz.into_inner().unwrap().into_inner())
}

#[test]
fn member_names_zarr_cannot_keep_are_refused_with_the_reason() {
    let dir = scratch("virtualize_member_names");
    let cases = [
        ("../evil.npy", "\"../evil\"", "'/'"),
        ("a/b.npy", "\"a/b\"", "'/'"),
        (".npy", "\"\"", "empty"),
        ("..npy", "\".\"", "'.'"),
        (".zgroup.npy", "\".zgroup\"", "'.'"),
        ("__x.npy", "\"__x\"", "'__'"),
        ("zarr.json.npy", "\"zarr.json\"", "zarr.json"),
    ];
    for (i, (member, shown, reason)) in cases.into_iter().enumerate() {
        let npz = npz_with_member(&dir, &format!("bad{i}.npz"), member);
        for format in ["kerchunk", "zarr3"] {
            let output = npy([
                "virtualize".as_ref(),
                npz.as_os_str(),
                "--format".as_ref(),
                format.as_ref(),
            ]);
            assert_exit(&output, 1);
            let message = stderr(&output);
            assert!(
                message.contains(&format!(
                    "the variable name {shown} (from member {member:?}"
                )) && message.contains(reason)
                    && message.contains("rename"),
                "{member}: {message}"
            );
        }
    }
    // Names that only look odd are kept: a dot inside, a member of several inputs.
    let fine = npz_with_member(&dir, "fine.npz", "x.y.npy");
    let output = npy(["virtualize".as_ref(), fine.as_os_str()]);
    assert_exit(&output, 0);
    let doc: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert!(doc["refs"]["x.y/.zarray"].is_string(), "{doc}");
}

#[test]
fn references_never_carry_credentials_from_a_url() {
    let file = arange_3x4();
    let port = serve_whole(file);
    let clean = format!("http://127.0.0.1:{port}/data/t.npy");
    for url in [
        format!("http://reader:s3cr3t@127.0.0.1:{port}/data/t.npy"),
        format!(
            "http://reader:s3cr3t@127.0.0.1:{port}/data/t.npy?X-Amz-Signature=s3cr3t&token=s3cr3t"
        ),
        format!("http://127.0.0.1:{port}/data/t.npy#s3cr3t"),
    ] {
        for format in ["kerchunk", "zarr3"] {
            let output = npy(["virtualize", &url, "--format", format]);
            assert_exit(&output, 0);
            let text = stdout(&output);
            assert!(
                !text.contains("s3cr3t") && !text.contains("reader"),
                "{text}"
            );
            let doc: Value = serde_json::from_str(&text).unwrap();
            let (chunk, attrs) = match format {
                "kerchunk" => (
                    doc["refs"]["t/0.0"][0].clone(),
                    serde_json::from_str::<Value>(doc["refs"]["t/.zattrs"].as_str().unwrap())
                        .unwrap(),
                ),
                _ => (
                    doc["arrays"]["t"]["manifest"]["0.0"]["path"].clone(),
                    doc["arrays"]["t"]["metadata"]["attributes"].clone(),
                ),
            };
            assert_eq!(chunk, Value::from(clean.as_str()), "{url}");
            assert_eq!(
                attrs["_npy_source"]["url"],
                Value::from(clean.as_str()),
                "{url}"
            );
        }
    }
}

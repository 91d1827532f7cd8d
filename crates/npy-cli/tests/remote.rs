//! URLs as sources and `npy cp`: through `file://` URLs (object_store's
//! local-file store, no server), the same commands give the same answers
//! as on local paths; the `#[ignore]`d test repeats it against the local
//! S3 server of the live suite (scripts/s3-server.sh).

mod common;

use std::path::Path;

use common::{assert_exit, fixtures, npy, scratch, stderr, stdout};

fn url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Runs the same reading commands on a local path and a URL of the same
/// bytes: the outputs are identical.
fn same_answers(local: &Path, remote: &str, commands: &[&[&str]]) {
    for command in commands {
        let on = |target: &str| {
            let mut args: Vec<String> = command.iter().map(|s| s.to_string()).collect();
            args.insert(1, target.to_string());
            let output = npy(&args);
            assert_exit(&output, 0);
            stdout(&output)
        };
        let local_out = on(local.to_str().unwrap());
        let remote_out = on(remote).replace(remote, local.to_str().unwrap());
        assert_eq!(remote_out, local_out, "{command:?}");
    }
}

#[test]
fn arrays_read_through_urls_as_through_paths() {
    let dir = scratch("remote_arrays");
    let store = dir.join("store");
    std::fs::create_dir_all(&store).unwrap();
    let local = fixtures().join("f8_c_2d.npy");
    let copy = store.join("a.npy");
    let output = npy(["cp", local.to_str().unwrap(), &url(&copy)]);
    assert_exit(&output, 0);
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(&local).unwrap()
    );
    same_answers(
        &local,
        &url(&copy),
        &[
            &["info"],
            &["info", "--json"],
            &["validate"],
            &["show"],
            &["show", "--rows", "1:2"],
            &["stats"],
            &["stats", "--json"],
        ],
    );
}

#[test]
fn archives_read_through_urls_as_through_paths() {
    let dir = scratch("remote_archives");
    for name in ["savez_compressed.npz", "nested_names.npz"] {
        let local = fixtures().join("npz").join(name);
        let copy = dir.join(name);
        assert_exit(&npy(["cp", local.to_str().unwrap(), &url(&copy)]), 0);
        same_answers(
            &local,
            &url(&copy),
            &[&["info"], &["info", "--json"], &["ls"], &["validate"]],
        );
    }
    let extracted = dir.join("out");
    let output = npy([
        "extract",
        &url(&dir.join("nested_names.npz")),
        "--dir",
        extracted.to_str().unwrap(),
    ]);
    assert_exit(&output, 0);
    assert!(
        extracted.join("group/sub/y.npy").is_file(),
        "{}",
        stdout(&output)
    );
    let output = npy([
        "show",
        &url(&dir.join("savez_compressed.npz")),
        "--member",
        "x",
    ]);
    assert_exit(&output, 0);
}

#[test]
fn cp_downloads_verify_and_refuse_what_numpy_cannot_load() {
    let dir = scratch("remote_cp");
    let source = fixtures().join("i4_le.npy");
    let object = dir.join("object.npy");
    std::fs::copy(&source, &object).unwrap();
    // Into a folder: the object's name is kept.
    let into = dir.join("down");
    std::fs::create_dir_all(&into).unwrap();
    let output = npy(["cp", &url(&object), into.to_str().unwrap()]);
    assert_exit(&output, 0);
    assert_eq!(
        std::fs::read(into.join("object.npy")).unwrap(),
        std::fs::read(&source).unwrap()
    );
    // A truncated object is not downloaded, and the destination is untouched.
    let bytes = std::fs::read(&source).unwrap();
    std::fs::write(&object, &bytes[..bytes.len() - 1]).unwrap();
    let output = npy([
        "cp",
        &url(&object),
        into.join("object.npy").to_str().unwrap(),
    ]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("Failed to read all data"),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read(into.join("object.npy")).unwrap(), bytes);
    // Nor is a truncated local file uploaded.
    let short = dir.join("short.npy");
    std::fs::write(&short, &bytes[..bytes.len() - 1]).unwrap();
    let output = npy(["cp", short.to_str().unwrap(), &url(&dir.join("up.npy"))]);
    assert_exit(&output, 1);
    assert!(!dir.join("up.npy").exists());
    // Two URLs, two paths.
    let output = npy(["cp", &url(&object), &url(&dir.join("x.npy"))]);
    assert_exit(&output, 1);
    assert!(stderr(&output).contains("are URLs"), "{}", stderr(&output));
    let output = npy(["cp", source.to_str().unwrap(), "x.npy"]);
    assert_exit(&output, 1);
    // A missing object is named with the operation that failed.
    let output = npy(["info", &url(&dir.join("missing.npy"))]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("cannot be read: open"),
        "{}",
        stderr(&output)
    );
}

#[test]
#[ignore = "needs the local S3 server (scripts/s3-server.sh)"]
fn cp_and_reading_commands_over_s3() {
    let bucket = std::env::var("NPY_S3_BUCKET")
        .expect("NPY_S3_BUCKET: run scripts/s3-server.sh start and eval its env");
    let dir = scratch("remote_s3");
    for (name, commands) in [
        (
            "f4_f_3d.npy",
            &[&["info"][..], &["validate"], &["show"], &["stats"]][..],
        ),
        (
            "npz/savez_mixed.npz",
            &[&["info"][..], &["ls"], &["validate"]][..],
        ),
    ] {
        let local = fixtures().join(name);
        let remote = format!("s3://{bucket}/cli-live/{}", name.replace('/', "_"));
        assert_exit(&npy(["cp", local.to_str().unwrap(), &remote]), 0);
        same_answers(&local, &remote, commands);
        let back = dir.join("back");
        assert_exit(&npy(["cp", &remote, back.to_str().unwrap()]), 0);
        assert_eq!(
            std::fs::read(&back).unwrap(),
            std::fs::read(&local).unwrap()
        );
    }
}

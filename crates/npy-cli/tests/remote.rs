//! URLs as sources and `npy cp`: through `file://` URLs (object_store's
//! local-file store, no server), the same commands give the same answers
//! as on local paths; the `#[ignore]`d test repeats it against the local
//! S3 server of the live suite (scripts/s3-server.sh).

mod common;

use std::path::Path;

use common::{assert_exit, fixtures, http_server, npy, scratch, serve_whole, stderr, stdout};

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
        "--force",
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
    assert!(
        stderr(&output).contains("Failed to read all data"),
        "{}",
        stderr(&output)
    );
    assert!(!dir.join("up.npy").exists());
    // Two URLs, two paths.
    let output = npy(["cp", &url(&object), &url(&dir.join("x.npy"))]);
    assert_exit(&output, 1);
    assert!(stderr(&output).contains("are URLs"), "{}", stderr(&output));
    let output = npy(["cp", source.to_str().unwrap(), "x.npy"]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("nor x.npy is a URL"),
        "{}",
        stderr(&output)
    );
    // A missing object: one line naming its URL.
    let missing = url(&dir.join("missing.npy"));
    let output = npy(["info", &missing]);
    assert_exit(&output, 1);
    assert_eq!(
        stderr(&output),
        format!("npy: error: {missing}: no such object\n")
    );
}

/// `npy cp x.npy file:///dst.npy` replaces dst.npy like every other
/// replacing command: its mode stays (object_store's local store wrote a
/// new file, resetting 0640 to 0644).
#[test]
fn cp_to_a_file_url_keeps_the_destinations_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("remote_cp_mode");
    let source = fixtures().join("i4_le.npy");
    let destination = dir.join("dst.npy");
    std::fs::write(&destination, b"old").unwrap();
    std::fs::set_permissions(&destination, std::fs::Permissions::from_mode(0o640)).unwrap();
    let output = npy([
        "cp",
        source.to_str().unwrap(),
        &url(&destination),
        "--force",
    ]);
    assert_exit(&output, 0);
    assert_eq!(
        std::fs::read(&destination).unwrap(),
        std::fs::read(&source).unwrap()
    );
    let mode = std::fs::metadata(&destination)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o640, "{mode:o}");
    // A new file in a new folder, as object_store's local store made it.
    let fresh = dir.join("new/folder/fresh.npy");
    assert_exit(&npy(["cp", source.to_str().unwrap(), &url(&fresh)]), 0);
    assert_eq!(
        std::fs::read(&fresh).unwrap(),
        std::fs::read(&source).unwrap()
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
        // A fresh name each time: an existing file is not replaced without --force.
        let back = dir.join(format!("back-{}", name.replace('/', "_")));
        assert_exit(&npy(["cp", &remote, back.to_str().unwrap()]), 0);
        assert_eq!(
            std::fs::read(&back).unwrap(),
            std::fs::read(&local).unwrap()
        );
    }
}

/// `--allow-pickle` applies to URLs as to paths: object arrays decode (and
/// print what the local file prints), and without it are refused in
/// numpy's words (a URL used to take the array path whatever the flag).
#[test]
fn allow_pickle_applies_to_urls() {
    let dir = scratch("remote_pickle");
    let local = fixtures().join("object/obj_issue_example.npy");
    let copy = dir.join("objects.npy");
    std::fs::copy(&local, &copy).unwrap();
    same_answers(
        &local,
        &url(&copy),
        &[&["show", "--allow-pickle"], &["validate", "--allow-pickle"]],
    );
    let output = npy(["show", &url(&copy)]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("Object arrays cannot be loaded when allow_pickle=False"),
        "{}",
        stderr(&output)
    );
    // An archive's object member, through its URL.
    let archive = fixtures().join("npz/objects.npz");
    let copy = dir.join("objects.npz");
    std::fs::copy(&archive, &copy).unwrap();
    same_answers(
        &archive,
        &url(&copy),
        &[
            &["show", "--allow-pickle", "--member", "obj"],
            &["validate", "--allow-pickle"],
        ],
    );
    let output = npy(["show", &url(&copy), "--member", "obj"]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("allow_pickle=False"),
        "{}",
        stderr(&output)
    );
}

/// A server that accepts and never answers: with `--timeout 0.5` the
/// command gives up with the store's "timed out" instead of waiting the
/// 3 minutes of object_store's retries (the server holds on for a minute,
/// so only the timeout can end the command before it).
#[test]
fn a_silent_server_is_abandoned_after_the_timeout() {
    use std::io::{BufRead, BufReader};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut line = String::new();
                let _ = BufReader::new(&stream).read_line(&mut line);
                std::thread::sleep(std::time::Duration::from_secs(60));
            });
        }
    });
    let url = format!("http://127.0.0.1:{port}/a.npy");
    // One deadline for the whole operation, twice the timeout (issue 29:
    // the first request, its retries and a HEAD each had their own clock,
    // four timeouts in all), named in the error.
    for command in ["info", "show", "stats"] {
        let started = std::time::Instant::now();
        let output = npy([command, &url, "--timeout", "0.5"]);
        let took = started.elapsed();
        assert_exit(&output, 1);
        assert!(
            stderr(&output).contains("no answer within 1 s (twice the 0.5 s timeout"),
            "{}",
            stderr(&output)
        );
        assert!(
            took < std::time::Duration::from_millis(1500),
            "{command}: {took:?}"
        );
    }
    // The option is checked like any other.
    let output = npy(["info", &url, "--timeout", "0"]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("the timeout must be a positive number of seconds"),
        "{}",
        stderr(&output)
    );
}

/// Issue 24: a missing object was the store's raw XML body over several
/// lines; now one line naming the URL.
#[test]
fn a_missing_object_is_one_line_naming_the_url() {
    let port = http_server(|_| {
        let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>\n  <Code>NoSuchKey</Code>\n\
                    <Message>The specified key does not exist.</Message>\n</Error>\n";
        format!(
            "HTTP/1.1 404 Not Found\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    });
    for command in ["info", "show", "stats", "validate"] {
        let url = format!("http://127.0.0.1:{port}/dir/missing.npy");
        let output = npy([command, &url]);
        assert!(!output.status.success(), "{command}");
        assert_eq!(
            stderr(&output),
            format!("npy: error: {url}: no such object\n"),
            "{command}"
        );
    }
}

/// Issue 24: a refused connection was retried for seconds; it fails at
/// once (object_store names its retries when it made some).
#[test]
fn a_refused_connection_fails_without_retrying() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let output = npy(["info", &format!("http://127.0.0.1:{port}/a.npy")]);
    assert_exit(&output, 1);
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.to_ascii_lowercase().contains("connect"),
        "{message}"
    );
    assert!(!message.contains("retries"), "{message}");
}

/// Issue 24: a plain HTTP server without Range support: a small object is
/// read with one plain GET and every command works.
#[test]
fn a_server_without_range_support_still_serves_small_arrays() {
    let file = std::fs::read(fixtures().join("f8_c_2d.npy")).unwrap();
    let port = serve_whole(file);
    let url = format!("http://127.0.0.1:{port}/f8_c_2d.npy");
    same_answers(
        &fixtures().join("f8_c_2d.npy"),
        &url,
        &[&["show"], &["stats"], &["info"], &["validate"]],
    );
}

/// The live S3 server's answer for a missing key is one line too.
#[test]
#[ignore = "needs the local S3 server (scripts/s3-server.sh)"]
fn a_missing_s3_object_is_one_line() {
    let bucket = std::env::var("NPY_S3_BUCKET")
        .expect("NPY_S3_BUCKET: run scripts/s3-server.sh start and eval its env");
    let url = format!("s3://{bucket}/cli-live/no-such-key.npy");
    for command in ["info", "show"] {
        let output = npy([command, &url]);
        assert_exit(&output, 1);
        assert_eq!(
            stderr(&output),
            format!("npy: error: {url}: no such object\n"),
            "{command}"
        );
    }
}

/// First-use mistakes against the live S3 server say what happened and what
/// to set: a missing bucket is named (not "no such object"), and a plain
/// `http://` endpoint without `AWS_ALLOW_HTTP` says to set it.
#[test]
#[ignore = "needs the local S3 server (scripts/s3-server.sh)"]
fn s3_setup_mistakes_say_what_to_set() {
    let bucket = std::env::var("NPY_S3_BUCKET")
        .expect("NPY_S3_BUCKET: run scripts/s3-server.sh start and eval its env");
    let url = "s3://npy-no-such-bucket/a.npy";
    let output = npy(["info", url]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).starts_with(&format!(
            "npy: error: {url}: no such bucket 'npy-no-such-bucket'"
        )),
        "{}",
        stderr(&output)
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_npy"))
        .args(["info", &format!("s3://{bucket}/cli-live/a.npy")])
        .env_remove("AWS_ALLOW_HTTP")
        .output()
        .expect("the npy binary runs");
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("plain http://")
            && stderr(&output).contains("set AWS_ALLOW_HTTP=true"),
        "{}",
        stderr(&output)
    );
}

//! `.npz` commands over numpy's archives in `tests/fixtures/npz/`, checked
//! against numpy's answers in `manifest.json`.

mod common;

use std::ffi::OsStr;

use common::{assert_exit, fixtures, npy, scratch, stderr, stdout};
use serde_json::{Value, json};

fn archives() -> Vec<Value> {
    let text = std::fs::read_to_string(fixtures().join("manifest.json")).unwrap();
    let manifest: Value = serde_json::from_str(&text).unwrap();
    manifest["npz"].as_array().unwrap().clone()
}

#[test]
fn info_json_lists_members_like_numpys_files() {
    for archive in archives() {
        let file = archive["file"].as_str().unwrap();
        let output = npy([
            OsStr::new("info"),
            OsStr::new("--json"),
            fixtures().join(file).as_os_str(),
        ]);
        if !archive["open_error"].is_null() {
            assert_exit(&output, 1);
            continue;
        }
        assert_exit(&output, 0);
        let info: Value = serde_json::from_str(&stdout(&output)).unwrap();
        let members = info["members"].as_array().unwrap();
        let names: Vec<&Value> = members.iter().map(|m| &m["name"]).collect();
        let files: Vec<&Value> = archive["files"].as_array().unwrap().iter().collect();
        assert_eq!(names, files, "{file}");
        for (ours, numpys) in members.iter().zip(archive["members"].as_array().unwrap()) {
            assert_eq!(ours["member"], numpys["member"], "{file}");
            assert_eq!(ours["compression"], numpys["compression"], "{file}");
            assert_eq!(ours["compressed_size"], numpys["compressed_size"], "{file}");
            assert_eq!(ours["size"], numpys["file_size"], "{file}");
            if let Some(npy) = numpys.get("npy").filter(|_| numpys.get("error").is_none()) {
                for key in [
                    "version",
                    "shape",
                    "fortran_order",
                    "itemsize",
                    "nbytes",
                    "data_offset",
                ] {
                    assert_eq!(ours[key], npy[key], "{file} {}: {key}", numpys["member"]);
                }
            }
            if numpys["kind"] == "raw" {
                assert_eq!(ours["kind"], "raw", "{file}");
            }
        }
    }
}

#[test]
fn validate_passes_good_archives_and_names_bad_members() {
    for archive in archives() {
        let file = archive["file"].as_str().unwrap();
        let output = npy([OsStr::new("validate"), fixtures().join(file).as_os_str()]);
        let members = archive["members"].as_array().cloned().unwrap_or_default();
        let broken =
            !archive["open_error"].is_null() || members.iter().any(|m| m.get("error").is_some());
        if broken {
            assert_exit(&output, 1);
            for member in &members {
                if member.get("error").is_some() {
                    let name = member["member"].as_str().unwrap();
                    if member["error"]["message"]
                        == "Object arrays cannot be loaded when allow_pickle=False"
                    {
                        // Valid, its pickle not decoded: a note, not a problem.
                        assert!(!stdout(&output).contains(name), "{file}: {name}");
                        assert!(stderr(&output).contains(name), "{file}: {name}");
                        continue;
                    }
                    assert!(
                        stdout(&output).contains(name),
                        "{file}: {name} not named in\n{}",
                        stdout(&output)
                    );
                }
            }
        } else {
            assert_exit(&output, 0);
        }
    }
}

#[test]
fn show_and_stats_read_members() {
    let archive = fixtures().join("npz/f_order.npz");
    let output = npy([
        OsStr::new("show"),
        archive.as_os_str(),
        OsStr::new("--member"),
        OsStr::new("f"),
    ]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "[[0. 1. 2.]\n [3. 4. 5.]]\n");
    // The full member name works too, like numpy's lookup.
    let output = npy([
        OsStr::new("show"),
        archive.as_os_str(),
        OsStr::new("--member"),
        OsStr::new("c.npy"),
    ]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "[0 1 2 3 4]\n");
    // Several members and none chosen: the error lists them.
    let output = npy([OsStr::new("show"), archive.as_os_str()]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("--member (members: f, c)"),
        "{}",
        stderr(&output)
    );
    let output = npy([
        OsStr::new("show"),
        archive.as_os_str(),
        OsStr::new("--member"),
        OsStr::new("nope"),
    ]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("nope is not a file in the archive"),
        "{}",
        stderr(&output)
    );

    let output = npy([
        OsStr::new("stats"),
        OsStr::new("--json"),
        fixtures().join("npz/savez_compressed.npz").as_os_str(),
        OsStr::new("--member"),
        OsStr::new("big"),
    ]);
    assert_exit(&output, 0);
    let stats: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(stats["count"], 1000);
}

#[test]
fn ls_prints_one_line_per_member() {
    let output = npy([
        OsStr::new("ls"),
        fixtures().join("npz/non_npy_members.npz").as_os_str(),
    ]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert!(
        lines[1].starts_with("test1 ") && lines[1].contains("'<i8'") && lines[1].contains("(5,)"),
        "{text}"
    );
    assert!(
        lines[3].starts_with("metadata ") && lines[3].contains("raw bytes"),
        "{text}"
    );
    assert!(lines[4].ends_with("deflated"), "{text}");
}

#[test]
fn extract_keeps_folders_and_skips_raw_members() {
    let dir = scratch("extract_keeps_folders_and_skips_raw_members");
    let output = npy([
        OsStr::new("extract"),
        fixtures().join("npz/nested_names.npz").as_os_str(),
        OsStr::new("--dir"),
        dir.as_os_str(),
    ]);
    assert_exit(&output, 0);
    for (name, shape) in [
        ("group/x.npy", json!([5])),
        ("group/sub/y.npy", json!([1, 2])),
        ("x.npy.npy", json!([])),
    ] {
        let path = dir.join(name);
        let info = npy([OsStr::new("info"), OsStr::new("--json"), path.as_os_str()]);
        assert_exit(&info, 0);
        let info: Value = serde_json::from_str(&stdout(&info)).unwrap();
        assert_eq!(info["shape"], shape, "{name}");
    }

    let raw = scratch("extract_keeps_folders_and_skips_raw_members_raw");
    let output = npy([
        OsStr::new("extract"),
        fixtures().join("npz/non_npy_members.npz").as_os_str(),
        OsStr::new("--dir"),
        raw.as_os_str(),
    ]);
    assert_exit(&output, 0);
    assert!(raw.join("test1.npy").exists() && raw.join("test2.npy").exists());
    assert!(!raw.join("metadata.npy").exists());
    assert!(
        stderr(&output).contains("skipping member 'metadata'"),
        "{}",
        stderr(&output)
    );

    // Only the named members, by key.
    let some = scratch("extract_keeps_folders_and_skips_raw_members_some");
    let output = npy([
        OsStr::new("extract"),
        fixtures().join("npz/f_order.npz").as_os_str(),
        OsStr::new("c"),
        OsStr::new("--dir"),
        some.as_os_str(),
    ]);
    assert_exit(&output, 0);
    assert_eq!(std::fs::read_dir(&some).unwrap().count(), 1);
    assert!(some.join("c.npy").exists());
}

#[test]
fn extract_refuses_names_that_escape_the_directory() {
    use npy_mmap::npz::NpzWriter;
    let dir = scratch("extract_refuses_names_that_escape_the_directory");
    let npy_file = std::fs::read(fixtures().join("f8_le.npy")).unwrap();
    for (case, name) in [
        ("parent", "../evil.npy"),
        ("absolute", "/tmp/evil.npy"),
        ("nested", "a/../../evil.npy"),
    ] {
        let archive = dir.join(format!("{case}.npz"));
        let mut writer = match NpzWriter::create(&archive) {
            Ok(writer) => writer,
            Err(err) => panic!("{err}"),
        };
        writer.add_raw_member(name, &npy_file).unwrap();
        writer.finish().unwrap();
        let target = dir.join(format!("{case}-out"));
        let output = npy([
            OsStr::new("extract"),
            archive.as_os_str(),
            OsStr::new("--dir"),
            target.as_os_str(),
        ]);
        assert_exit(&output, 1);
        assert!(
            stderr(&output).contains("refusing to extract"),
            "{case}: {}",
            stderr(&output)
        );
        assert!(!dir.join("evil.npy").exists(), "{case}");
        assert!(
            !std::path::Path::new("/tmp/evil.npy.npy").exists(),
            "{case}"
        );
    }
}

#[test]
fn pack_names_members_after_file_stems() {
    let dir = scratch("pack_names_members_after_file_stems");
    for compress in [false, true] {
        let archive = dir.join(format!("packed-{compress}.npz"));
        let mut args = vec![OsStr::new("pack"), archive.as_os_str()];
        let a = fixtures().join("f8_c_2d.npy");
        let b = fixtures().join("rec_subarray.npy");
        args.push(a.as_os_str());
        args.push(b.as_os_str());
        if compress {
            args.push(OsStr::new("--compress"));
        }
        assert_exit(&npy(&args), 0);
        let info = npy([
            OsStr::new("info"),
            OsStr::new("--json"),
            archive.as_os_str(),
        ]);
        let info: Value = serde_json::from_str(&stdout(&info)).unwrap();
        let members = info["members"].as_array().unwrap();
        assert_eq!(members[0]["name"], "f8_c_2d");
        assert_eq!(members[1]["name"], "rec_subarray");
        let method = if compress { "deflated" } else { "stored" };
        assert!(members.iter().all(|m| m["compression"] == method), "{info}");
        // Round trip: the member shows what the file shows.
        let shown = npy([
            OsStr::new("show"),
            archive.as_os_str(),
            OsStr::new("--member"),
            OsStr::new("rec_subarray"),
        ]);
        let direct = npy([OsStr::new("show"), b.as_os_str()]);
        assert_eq!(stdout(&shown), stdout(&direct));
    }

    // Two inputs with one stem would collide: refused before writing.
    let clash = dir.join("clash.npz");
    let output = npy([
        OsStr::new("pack"),
        clash.as_os_str(),
        fixtures().join("f8_le.npy").as_os_str(),
        fixtures().join("f8_le.npy").as_os_str(),
    ]);
    assert_exit(&output, 1);
    assert!(!clash.exists());
    // A bad input is refused before writing.
    let output = npy([
        OsStr::new("pack"),
        clash.as_os_str(),
        fixtures().join("bad/truncated_data.npy").as_os_str(),
    ]);
    assert_exit(&output, 1);
    assert!(!clash.exists());
}

#[test]
fn extract_leaves_nothing_of_a_member_failing_its_crc() {
    let dir = scratch("extract_leaves_nothing_of_a_member_failing_its_crc");
    let output = npy([
        OsStr::new("extract"),
        fixtures().join("npz/bad_crc.npz").as_os_str(),
        OsStr::new("a"),
        OsStr::new("--dir"),
        dir.as_os_str(),
    ]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("Bad CRC-32 for file 'a.npy'"),
        "{}",
        stderr(&output)
    );
    assert!(!dir.join("a.npy").exists());
}

#[test]
fn ls_and_extract_of_an_npy_file_say_it_is_not_an_archive() {
    let npy_file = fixtures().join("f8_3x0.npy");
    let out = scratch("ls-npy");
    for args in [
        vec![OsStr::new("ls"), npy_file.as_os_str()],
        vec![OsStr::new("extract"), npy_file.as_os_str(), out.as_os_str()],
    ] {
        let output = npy(&args);
        assert_exit(&output, 1);
        assert!(
            stderr(&output).contains("is an .npy file, not an .npz archive"),
            "{}",
            stderr(&output)
        );
    }
}

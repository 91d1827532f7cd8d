//! `npy validate`: exit 0 when all files are valid, 1 when any is not, 2 on
//! usage or I/O errors; never a panic.

mod common;

use common::{arange_3x4, assert_exit, npy, npy_bytes, scratch, stderr, stdout, write};

#[test]
fn a_numpy_file_is_valid() {
    let dir = scratch("a_numpy_file_is_valid");
    let good = write(&dir, "good.npy", &arange_3x4());
    let output = npy([std::ffi::OsStr::new("validate"), good.as_os_str()]);
    assert_exit(&output, 0);
    assert!(stdout(&output).is_empty());
}

#[test]
fn trailing_bytes_are_a_note_unless_strict() {
    let dir = scratch("trailing_bytes_are_a_note_unless_strict");
    // What an interrupted append leaves: the array, then bytes the header
    // does not describe. numpy and the library open such a file.
    let path = write(
        &dir,
        "trailing.npy",
        &[arange_3x4().as_slice(), b"xyz"].concat(),
    );
    let output = npy([std::ffi::OsStr::new("validate"), path.as_os_str()]);
    assert_exit(&output, 0);
    assert!(stdout(&output).is_empty(), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("3 trailing bytes after the 96 bytes of data"),
        "{}",
        stderr(&output)
    );
    let strict = npy([
        std::ffi::OsStr::new("validate"),
        std::ffi::OsStr::new("--strict"),
        path.as_os_str(),
    ]);
    assert_exit(&strict, 1);
    assert!(
        stdout(&strict).contains("3 trailing bytes"),
        "{}",
        stdout(&strict)
    );
}

#[test]
fn each_bad_file_gets_one_line_naming_the_problem() {
    let dir = scratch("each_bad_file_gets_one_line_naming_the_problem");
    let good = arange_3x4();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.npy", vec![], "EOF"),
        (
            "bad_magic.npy",
            [b"\x93numpy".as_slice(), &good[6..]].concat(),
            "magic",
        ),
        (
            "bad_version.npy",
            [&good[..6], b"\x04\x00".as_slice(), &good[8..]].concat(),
            "version",
        ),
        ("truncated_header.npy", good[..60].to_vec(), "EOF"),
        (
            "short_data.npy",
            good[..good.len() - 1].to_vec(),
            "Failed to read all data",
        ),
        (
            "not_a_dict.npy",
            npy_bytes("['descr', '<f8']", 0, &[]),
            "not a dictionary",
        ),
    ];
    let mut args = vec![std::ffi::OsString::from("validate")];
    for (name, bytes, _) in &cases {
        args.push(write(&dir, name, bytes).into_os_string());
    }
    args.push(write(&dir, "good.npy", &good).into_os_string());
    let output = npy(&args);
    assert_exit(&output, 1);
    let report = stdout(&output);
    assert_eq!(report.lines().count(), cases.len(), "{report}");
    for (name, _, problem) in &cases {
        let line = report
            .lines()
            .find(|line| line.contains(name))
            .unwrap_or_else(|| panic!("no line for {name}:\n{report}"));
        assert!(line.contains(problem), "{name}: {line}");
    }
    // An object array whose "pickle" is zeros: its header is valid, so
    // without --allow-pickle it passes with a note that the pickle was not
    // decoded (issue 24); decoding it finds the problem.
    let object = write(
        &dir,
        "object.npy",
        &npy_bytes(
            "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
            0,
            &[0; 8],
        ),
    );
    let output = npy(["validate".as_ref(), object.as_os_str()]);
    assert_exit(&output, 0);
    assert!(stderr(&output).contains("were not decoded"));
    let output = npy([
        "validate".as_ref(),
        "--allow-pickle".as_ref(),
        object.as_os_str(),
    ]);
    assert_exit(&output, 1);
    assert!(!report.contains("good.npy"), "{report}");
}

#[test]
fn the_header_limit_is_numpys_unless_raised() {
    let dir = scratch("the_header_limit_is_numpys_unless_raised");
    let long_dict = format!(
        "{{'descr': [{}], 'fortran_order': False, 'shape': (0,), }}",
        (0..700)
            .map(|i| format!("('field_{i:05}', '<i4')"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let path = dir.join("big_header.npy");
    let mut bytes = b"\x93NUMPY\x02\x00".to_vec();
    let text_len = long_dict.len() + 1;
    let pad = 64 - (12 + text_len) % 64;
    bytes.extend_from_slice(&u32::try_from(text_len + pad).unwrap().to_le_bytes());
    bytes.extend_from_slice(long_dict.as_bytes());
    bytes.extend(std::iter::repeat_n(b' ', pad));
    bytes.push(b'\n');
    std::fs::write(&path, &bytes).unwrap();

    let output = npy([std::ffi::OsStr::new("validate"), path.as_os_str()]);
    assert_exit(&output, 1);
    assert!(
        stdout(&output).contains("max_header_size"),
        "{}",
        stdout(&output)
    );

    let output = npy([
        std::ffi::OsStr::new("validate"),
        std::ffi::OsStr::new("--max-header-size"),
        std::ffi::OsStr::new("100000"),
        path.as_os_str(),
    ]);
    assert_exit(&output, 0);
}

#[test]
fn unreadable_paths_exit_2() {
    let dir = scratch("unreadable_paths_exit_2");
    let good = write(&dir, "good.npy", &arange_3x4());
    let output = npy([
        std::ffi::OsStr::new("validate"),
        good.as_os_str(),
        dir.join("missing.npy").as_os_str(),
    ]);
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("missing.npy"));
    // A directory is not a file either.
    let output = npy([std::ffi::OsStr::new("validate"), dir.as_os_str()]);
    assert_exit(&output, 2);
}

/// Every prefix and many single-byte corruptions of a valid file: the tool
/// answers 0 or 1, never a panic (101) or a crash.
#[test]
fn corrupted_inputs_never_panic() {
    let dir = scratch("corrupted_inputs_never_panic");
    let good = arange_3x4();
    let mut inputs: Vec<Vec<u8>> = (0..good.len())
        .step_by(7)
        .map(|n| good[..n].to_vec())
        .collect();
    for position in (0..128).step_by(3) {
        for replacement in [b'\0', b'9', b'(', b'\'', b'}', 0xff] {
            let mut bytes = good.clone();
            bytes[position] = replacement;
            inputs.push(bytes);
        }
    }
    let mut args = vec![std::ffi::OsString::from("validate")];
    for (i, bytes) in inputs.iter().enumerate() {
        args.push(write(&dir, &format!("case{i:04}.npy"), bytes).into_os_string());
    }
    let output = npy(&args);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "status {:?}\n{}",
        output.status,
        stderr(&output)
    );
    assert!(!stderr(&output).contains("panicked"), "{}", stderr(&output));
    for command in ["info", "show", "stats"] {
        for (i, _) in inputs.iter().enumerate().step_by(5) {
            let path = dir.join(format!("case{i:04}.npy"));
            let output = npy([std::ffi::OsStr::new(command), path.as_os_str()]);
            assert!(
                matches!(output.status.code(), Some(0 | 1)),
                "{command} case{i:04}: {:?}\n{}",
                output.status,
                stderr(&output)
            );
        }
    }
}

//! Helpers shared by the CLI tests: run the real binary, scratch files, fixtures.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `npy` with `args`; never through a shell.
pub fn npy<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_npy"))
        .args(args)
        .output()
        .expect("the npy binary runs")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

/// Asserts the process ended with `code`, showing its output otherwise.
#[track_caller]
pub fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A fresh, empty directory for one test.
pub fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("npy-cli")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// The numpy-written fixtures at the workspace root.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// An `.npy` file exactly as `np.save` writes it, for a v1 header dict `dict`
/// (e.g. `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }`)
/// with `growth` spaces, followed by `data`.
pub fn npy_bytes(dict: &str, growth: usize, data: &[u8]) -> Vec<u8> {
    let text_len = dict.len() + growth + 1;
    let pad = 64 - (10 + text_len) % 64;
    let header_len = text_len + pad;
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&u16::try_from(header_len).unwrap().to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.extend(std::iter::repeat_n(b' ', growth + pad));
    bytes.push(b'\n');
    bytes.extend_from_slice(data);
    bytes
}

/// `np.arange(12.0).reshape(3, 4)` saved by numpy (128-byte header).
pub fn arange_3x4() -> Vec<u8> {
    let data: Vec<u8> = (0..12).flat_map(|i| f64::from(i).to_le_bytes()).collect();
    npy_bytes(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }",
        20,
        &data,
    )
}

/// Writes `bytes` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write test file");
    path
}

/// The project's Python with the pinned numpy (and matplotlib): `$NPY_PYTHON`,
/// which `scripts/setup-venv.sh` prints and `.ci/run` sets.
pub fn python() -> String {
    std::env::var("NPY_PYTHON").expect(
        "NPY_PYTHON must name the project's Python (NPY_PYTHON=$(scripts/setup-venv.sh); `just interop`)",
    )
}

/// Runs the Python `script` with `dir` as its argument; it writes what numpy
/// says to `dir/output` as JSON, which is returned.
pub fn numpy_answers(script: &str, dir: &Path, output: &str) -> serde_json::Value {
    let status = Command::new(python())
        .args(["-c", script])
        .arg(dir)
        .status()
        .expect("python runs");
    assert!(status.success(), "the numpy generator failed");
    let text = std::fs::read_to_string(dir.join(output)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A one-thread HTTP server on 127.0.0.1 that answers every request with
/// `respond(request head)`: a few lines of `std::net`.
pub fn http_server(respond: impl Fn(&str) -> Vec<u8> + Send + 'static) -> u16 {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = String::new();
            let mut reader = BufReader::new(&stream);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                head.push_str(&line.to_ascii_lowercase());
            }
            let _ = stream.write_all(&respond(&head));
        }
    });
    port
}

/// The names in `dir`, sorted (tests check that no temporary is left).
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A plain HTTP server on 127.0.0.1 that answers every request with all
/// of `body` (no Range support); its port.
pub fn serve_whole(body: Vec<u8>) -> u16 {
    http_server(move |_| {
        let mut response = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        response.extend_from_slice(&body);
        response
    })
}

//! The fuzz targets (`fuzz/fuzz_targets/*.rs`) built and run in the normal
//! test suite: each target's file is compiled here as a module, with a
//! stand-in for libfuzzer-sys's `fuzz_target!` that turns its body into
//! `run(&[u8])`, so an API rename breaks `cargo test`, not just the fuzzing
//! (the fuzz workspace is built only by `fuzz/run.sh`). Each body then runs
//! on the corpus `fuzz/run.sh seed` starts from (the fixtures, shaped per
//! target), so the targets' own checks run on every test run too.

// `use libfuzzer_sys::fuzz_target;` in a target resolves to this crate's root.
extern crate self as libfuzzer_sys;

use std::path::{Path, PathBuf};

/// Stand-in for libfuzzer-sys, reached by path only (no textual scope), so
/// each target's `use` of it is what brings the macro in.
mod stub {
    /// Stand-in for `libfuzzer_sys::fuzz_target!`: the body becomes `run`.
    macro_rules! fuzz_target {
        (|$bytes:ident: &[u8]| $body:block) => {
            pub fn run($bytes: &[u8]) $body
        };
    }
    pub(crate) use fuzz_target;
}
pub(crate) use stub::fuzz_target;

// Each file starts with `#![no_main]`, a crate attribute, ignored in a module.
#[allow(unused_attributes)]
#[path = "../fuzz/fuzz_targets/header.rs"]
mod header;
#[allow(unused_attributes)]
#[path = "../fuzz/fuzz_targets/mmap_open.rs"]
mod mmap_open;
#[allow(unused_attributes)]
#[path = "../fuzz/fuzz_targets/npz.rs"]
mod npz;
#[allow(unused_attributes)]
#[path = "../fuzz/fuzz_targets/pickle.rs"]
mod pickle;
#[allow(unused_attributes)]
#[path = "../fuzz/fuzz_targets/read_npy.rs"]
mod read_npy;

/// Every file under `tests/fixtures` whose name ends with `extension`.
fn fixtures(extension: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, extension: &str, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("fixtures directory") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                walk(&path, extension, out);
            } else if path.to_string_lossy().ends_with(extension) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    walk(&root, extension, &mut out);
    out.sort();
    assert!(out.len() > 3, "few {extension} fixtures under {root:?}");
    out
}

/// Runs `target` on every seed, and on every seed cut short (a truncated
/// file is the most common hostile input).
fn run_on(target: fn(&[u8]), seeds: impl IntoIterator<Item = Vec<u8>>) {
    for seed in seeds {
        target(&seed);
        for len in [0, 1, 9, 64, seed.len() / 2, seed.len().saturating_sub(1)] {
            target(&seed[..len.min(seed.len())]);
        }
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).expect("fixture reads")
}

#[test]
fn header_target_runs_on_the_npy_fixtures() {
    run_on(header::run, fixtures(".npy").iter().map(|p| read(p)));
    header::run(b"<f8");
}

#[test]
fn read_npy_target_runs_on_the_npy_fixtures() {
    run_on(read_npy::run, fixtures(".npy").iter().map(|p| read(p)));
}

#[test]
fn mmap_open_target_runs_on_the_npy_fixtures() {
    // As `fuzz/run.sh seed` shapes them: a window byte, then the file.
    let seeds = fixtures(".npy").into_iter().flat_map(|path| {
        let file = read(&path);
        [0u8, 0x13].map(|window| [&[window][..], &file].concat())
    });
    run_on(mmap_open::run, seeds);
}

#[test]
fn npz_target_runs_on_the_npz_fixtures() {
    run_on(npz::run, fixtures(".npz").iter().map(|p| read(p)));
}

#[test]
fn pickle_target_runs_on_object_arrays_and_their_pickles() {
    let objects: Vec<PathBuf> = fixtures(".npy")
        .into_iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("object")))
        .collect();
    assert!(!objects.is_empty());
    // Whole files, and their bare pickles (after numpy's 128-byte header).
    let seeds = objects.iter().flat_map(|path| {
        let file = read(path);
        let pickle = file.get(128..).unwrap_or_default().to_vec();
        [file, pickle]
    });
    run_on(pickle::run, seeds);
    // Ints beyond Python's 4300-digit limit (LONG4, as `fuzz/run.sh seed`
    // writes them): printed briefly, pickled again and equal.
    for len in [1_785u32, 8_192] {
        let mut pickle = b"\x80\x02\x8b".to_vec();
        pickle.extend_from_slice(&len.to_le_bytes());
        pickle.extend(std::iter::repeat_n(0x7f, len as usize));
        pickle.push(b'.');
        pickle::run(&pickle);
    }
}

//! Shared by the `ext_*` tests: numpy-written fixtures from `tests/fixtures`.
#![allow(dead_code)]

use npy_core::NpyArray;
use npy_core::io::{ReadOptions, read_npy};

/// The bytes of `tests/fixtures/<name>` (written by numpy).
pub fn fixture_bytes(name: &str) -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/").to_owned() + name;
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// A fixture read with npy-core's streaming reader (aligned buffer).
pub fn fixture(name: &str) -> NpyArray {
    read_npy(fixture_bytes(name).as_slice(), &ReadOptions::default())
        .unwrap_or_else(|e| panic!("reading {name}: {e}"))
}

/// Whether this machine is little-endian (the fixtures' `<` data is native).
pub const LITTLE: bool = cfg!(target_endian = "little");

//! PENDING — not compiled yet (cargo only builds files directly in tests/).
//! Data-level fixture checks written against core-data's documented API
//! (`read_npy`, `ReadOptions { parse, to_native }`, `NpyArray::records`,
//! `RecordRef::{bytes, read}`). Move these tests into tests/fixtures.rs once
//! core-text and core-data are both merged into main, and delete this file.
//! (Uses the helpers of tests/fixtures.rs: section, text, number, options_for,
//! Mismatches, has_numpy_wording.)

use npy_core::{ReadOptions, read_npy};

/// The element bytes of a read array, native byte order, logical C order.
fn c_native_bytes(array: &npy_core::NpyArray) -> npy_core::Result<Vec<u8>> {
    Ok(array.records()?.iter().flat_map(|r| r.bytes().to_vec()).collect())
}

fn read_options(entry: &Value) -> ReadOptions {
    ReadOptions {
        parse: options_for(entry),
        to_native: true,
    }
}

/// read_npy + to_native, in C order, is numpy's little-endian C-order data
/// (on a little-endian host native is little).
#[test]
fn data_matches_numpy() {
    assert!(cfg!(target_endian = "little"), "c_le_hex is little-endian");
    let mut m = Mismatches::default();
    for entry in section("npy") {
        let file = text(&entry, "file");
        m.checked += 1;
        let bytes = fixture_bytes(file);
        match read_npy(&bytes[..], &read_options(&entry)).and_then(|a| c_native_bytes(&a)) {
            Ok(data) => m.check(file, "data", to_hex(&data).as_str(), text(&entry, "c_le_hex")),
            Err(e) => m.fail(file, format_args!("read_npy: {e}")),
        }
    }
    m.finish("read_npy data");
}

/// Element values read with typed reads equal numpy's `values`.
#[test]
fn values_match_numpy() {
    let mut m = Mismatches::default();
    for entry in section("npy") {
        let Some(kind) = entry["values_kind"].as_str() else { continue };
        let file = text(&entry, "file");
        let bytes = fixture_bytes(file);
        let array = read_npy(&bytes[..], &read_options(&entry)).expect("see data_matches_numpy");
        let records = array.records().expect("records view");
        let numpy = entry["values"].as_array().expect("values");
        m.check(file, "element count", records.iter().count(), numpy.len());
        for (i, (r, want)) in records.iter().zip(numpy).enumerate() {
            let itemsize = r.dtype().itemsize();
            let ours: Option<Value> = match (kind, itemsize) {
                ("bool", _) => r.read::<bool>().ok().map(Value::from),
                ("int", 1) => r.read::<i8>().ok().map(Value::from),
                ("int", 2) => r.read::<i16>().ok().map(Value::from),
                ("int", 4) => r.read::<i32>().ok().map(Value::from),
                ("int", 8) | ("datetime" | "timedelta", 8) => r.read::<i64>().ok().map(Value::from),
                ("uint", 1) => r.read::<u8>().ok().map(Value::from),
                ("uint", 2) => r.read::<u16>().ok().map(Value::from),
                ("uint", 4) => r.read::<u32>().ok().map(Value::from),
                ("uint", 8) => r.read::<u64>().ok().map(Value::from),
                ("float", 4) => r.read::<f32>().ok().map(|x| float_json(f64::from(x), want)),
                ("float", 8) => r.read::<f64>().ok().map(|x| float_json(x, want)),
                ("bytes", _) => {
                    let b = r.bytes();
                    let end = b.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
                    Some(Value::from(b[..end].iter().map(|&c| char::from(c)).collect::<String>()))
                }
                ("str", _) => {
                    let units: Vec<u32> = r
                        .bytes()
                        .chunks_exact(4)
                        .map(|u| u32::from_ne_bytes(u.try_into().expect("4 bytes")))
                        .collect();
                    let end = units.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
                    units[..end].iter().map(|&c| char::from_u32(c)).collect::<Option<String>>().map(Value::from)
                }
                _ => continue, // f2, long double, complex: c_le_hex covers them byte for byte
            };
            match ours {
                Some(v) => m.check(file, &format!("value {i}"), &v, want),
                None => m.fail(file, format_args!("value {i}: cannot read as {kind}")),
            }
        }
    }
    m.finish("values");
}

/// numpy writes floats as repr strings; equal when they parse to the same
/// bits (so -0.0 and 0.0 differ), or both are NaN.
fn float_json(ours: f64, numpy: &Value) -> Value {
    let theirs: f64 = numpy.as_str().and_then(|s| s.parse().ok()).unwrap_or(f64::NAN);
    let same = ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan());
    if same { numpy.clone() } else { Value::from(format!("{ours:?}")) }
}

/// Whole-file reads of the bad fixtures fail with numpy's wording, including
/// the ones numpy's header check accepts (truncated data).
#[test]
fn bad_fixtures_fail_to_read() {
    let mut m = Mismatches::default();
    for entry in section("bad") {
        let file = text(&entry, "file");
        m.checked += 1;
        let bytes = fixture_bytes(file);
        match read_npy(&bytes[..], &ReadOptions::default()) {
            Ok(_) => m.fail(file, "read a file numpy refuses"),
            Err(e) if has_numpy_wording(&e.to_string(), &entry["expect"]) => {}
            Err(e) => m.fail(file, format_args!("error {e} lacks numpy's wording {}", entry["expect"])),
        }
    }
    m.finish("read_npy of bad fixtures");
}

//! Every fixture in `tests/fixtures/` read by npy-core and compared with the
//! answers numpy recorded in `manifest.json` (see `scripts/gen_fixtures.py`).
//!
//! Each test walks a whole section of the manifest and reports every fixture
//! that disagrees, not just the first, so one run shows the full picture.

mod support;

use std::fmt::Debug;
use std::io::Cursor;

use npy_core::{
    DType, Header, Layout, NpyWriter, Order, ParseOptions, ParsedHeader, ReadOptions, Version,
    read_npy, write_npy,
};
use serde_json::Value;
use support::{
    data_is_c_le, fixture_bytes, fixtures_dir, has_big_endian, has_big_endian_long_double,
    logical_c_bytes, manifest, to_hex, value_disagreements,
};

/// Disagreements between npy-core and numpy, gathered across fixtures.
#[derive(Default)]
struct Mismatches {
    found: Vec<String>,
    checked: usize,
}

impl Mismatches {
    fn check<T: PartialEq + Debug>(&mut self, file: &str, what: &str, ours: T, numpy: T) {
        if ours != numpy {
            self.found
                .push(format!("{file}: {what}: ours {ours:?}, numpy {numpy:?}"));
        }
    }

    fn fail(&mut self, file: &str, message: impl std::fmt::Display) {
        self.found.push(format!("{file}: {message}"));
    }

    /// Panics listing every mismatch; also refuses a vacuous run.
    fn finish(self, what: &str) {
        assert!(self.checked > 0, "{what}: no fixtures were checked");
        assert!(
            self.found.is_empty(),
            "{what}: {} of {} fixtures disagree with numpy:\n{}",
            self.found.len(),
            self.checked,
            self.found.join("\n")
        );
    }
}

fn section(name: &str) -> Vec<Value> {
    manifest()[name]
        .as_array()
        .unwrap_or_else(|| panic!("manifest has no {name} list"))
        .clone()
}

fn text<'a>(entry: &'a Value, key: &str) -> &'a str {
    entry[key]
        .as_str()
        .unwrap_or_else(|| panic!("manifest entry lacks string {key}: {entry}"))
}

fn number(entry: &Value, key: &str) -> usize {
    let n = entry[key]
        .as_u64()
        .unwrap_or_else(|| panic!("manifest entry lacks number {key}: {entry}"));
    usize::try_from(n).expect("fits usize")
}

fn flag(entry: &Value, key: &str) -> bool {
    entry[key]
        .as_bool()
        .unwrap_or_else(|| panic!("manifest entry lacks bool {key}: {entry}"))
}

fn shape(entry: &Value) -> Vec<usize> {
    entry["shape"]
        .as_array()
        .expect("shape list")
        .iter()
        .map(|d| usize::try_from(d.as_u64().expect("dimension")).expect("fits usize"))
        .collect()
}

/// The limit numpy needed for this file (its default unless the manifest says more).
fn options_for(entry: &Value) -> ParseOptions {
    ParseOptions {
        max_header_size: entry["max_header_size"]
            .as_u64()
            .map_or(ParseOptions::default().max_header_size, |n| {
                usize::try_from(n).expect("fits usize")
            }),
        ..Default::default()
    }
}

fn version_text(version: Version) -> &'static str {
    match version {
        Version::V1 => "1.0",
        Version::V2 => "2.0",
        Version::V3 => "3.0",
    }
}

fn version_from(text: &str) -> Version {
    match text {
        "1.0" => Version::V1,
        "2.0" => Version::V2,
        "3.0" => Version::V3,
        other => panic!("manifest version {other}"),
    }
}

/// Compares a parsed header and layout with one manifest entry (a file or an npz member).
fn check_header(m: &mut Mismatches, name: &str, entry: &Value, header: &Header, layout: &Layout) {
    m.check(
        name,
        "descr",
        header.dtype.header_repr().as_str(),
        text(entry, "descr"),
    );
    m.check(name, "shape", header.shape.clone(), shape(entry));
    let order = if flag(entry, "fortran_order") {
        Order::Fortran
    } else {
        Order::C
    };
    m.check(name, "order", header.order, order);
    m.check(
        name,
        "version",
        version_text(layout.version),
        text(entry, "version"),
    );
    m.check(
        name,
        "header_len",
        layout.header_len,
        number(entry, "header_len"),
    );
    m.check(
        name,
        "data_offset",
        layout.data_offset,
        number(entry, "data_offset"),
    );
    m.check(
        name,
        "itemsize",
        header.dtype.itemsize(),
        number(entry, "itemsize"),
    );
    m.check(name, "data_len", layout.data_len, number(entry, "nbytes"));
}

/// Every good fixture with its bytes and our parse; the ones we refuse are
/// recorded in `m` (and reported in detail by `headers_match_numpy`).
fn parsed_fixtures(m: &mut Mismatches) -> Vec<(Value, Vec<u8>, Header, Layout)> {
    let mut parsed = Vec::new();
    for entry in section("npy") {
        let file = text(&entry, "file").to_owned();
        let bytes = fixture_bytes(&file);
        match Header::parse(&bytes, &options_for(&entry)) {
            Ok(ParsedHeader { header, layout }) => parsed.push((entry, bytes, header, layout)),
            Err(_) => m.fail(&file, "does not parse (see headers_match_numpy)"),
        }
    }
    parsed
}

/// The manifest and the directory list the same files, so no fixture goes unchecked.
#[test]
fn manifest_lists_every_fixture_file() {
    let manifest = manifest();
    let mut listed: Vec<String> = ["npy", "bad", "npz", "object", "object_npz"]
        .iter()
        .flat_map(|s| manifest[*s].as_array().expect("section").iter())
        .map(|e| text(e, "file").to_owned())
        .collect();
    listed.sort();

    let mut on_disk = Vec::new();
    let mut dirs = vec![fixtures_dir()];
    while let Some(dir) = dirs.pop() {
        for item in std::fs::read_dir(&dir).expect("read fixtures dir") {
            let path = item.expect("dir entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("npy" | "npz")
            ) {
                let relative = path.strip_prefix(fixtures_dir()).expect("under fixtures");
                let parts: Vec<_> = relative.iter().map(|p| p.to_string_lossy()).collect();
                on_disk.push(parts.join("/"));
            }
        }
    }
    on_disk.sort();
    assert_eq!(
        listed, on_disk,
        "manifest.json and tests/fixtures/ disagree"
    );
    assert!(listed.len() > 100, "only {} fixtures", listed.len());
}

/// Header fields, version, offsets and sizes agree with numpy for every good file,
/// parsed from a slice and read from a stream.
#[test]
fn headers_match_numpy() {
    let mut m = Mismatches::default();
    for entry in section("npy") {
        let file = text(&entry, "file");
        let bytes = fixture_bytes(file);
        m.checked += 1;
        match Header::parse(&bytes, &options_for(&entry)) {
            Ok(ParsedHeader { header, layout }) => {
                check_header(&mut m, file, &entry, &header, &layout)
            }
            Err(e) => m.fail(file, format_args!("numpy reads it, we refuse: {e}")),
        }
        // The streaming reader gives the same answer and stops at the first data byte.
        let mut cursor = Cursor::new(&bytes);
        match Header::read_from(&mut cursor, &options_for(&entry)) {
            Ok(ParsedHeader { header, layout }) => {
                let streamed = format!("{file} (read_from)");
                check_header(&mut m, &streamed, &entry, &header, &layout);
                let data_offset = number(&entry, "data_offset") as u64;
                m.check(&streamed, "position", cursor.position(), data_offset);
            }
            Err(e) => m.fail(
                file,
                format_args!("read_from refuses what numpy reads: {e}"),
            ),
        }
    }
    m.finish("Header::parse and Header::read_from");
}

/// Headers over numpy's default 10000-character limit are refused by default, as numpy does.
#[test]
fn default_header_limit_matches_numpy() {
    let mut m = Mismatches::default();
    for entry in section("npy") {
        if entry["max_header_size"].is_null() {
            continue;
        }
        let file = text(&entry, "file");
        m.checked += 1;
        match Header::parse(&fixture_bytes(file), &ParseOptions::default()) {
            Ok(_) => m.fail(file, "accepted a header numpy refuses by default"),
            Err(e) if e.to_string().contains("Header info length") => {}
            Err(e) => m.fail(file, format_args!("wrong error: {e}")),
        }
    }
    m.finish("max_header_size");
}

/// Our descr text is numpy's, and parsing it gives back the same dtype.
#[test]
fn descr_text_round_trips() {
    let mut m = Mismatches::default();
    let npz_members: Vec<Value> = section("npz")
        .iter()
        .flat_map(|a| a["members"].as_array().cloned().unwrap_or_default())
        .filter(|member| member["npy"].is_object())
        .map(|member| member["npy"].clone())
        .collect();
    for entry in section("npy").iter().chain(&npz_members) {
        let descr = text(entry, "descr");
        m.checked += 1;
        match DType::parse(descr) {
            Ok(dtype) => {
                m.check(
                    descr,
                    "header_repr() of parse(descr)",
                    dtype.header_repr().as_str(),
                    descr,
                );
                m.check(
                    descr,
                    "itemsize",
                    dtype.itemsize(),
                    number(entry, "itemsize"),
                );
            }
            Err(e) => m.fail(
                descr,
                format_args!("DType::parse refuses numpy's descr: {e}"),
            ),
        }
    }
    m.finish("DType::parse/descr");
}

/// `Header::to_bytes` writes the exact bytes numpy wrote, for every file whose
/// header numpy's writer produced (with its own version choice, or forced).
#[test]
fn encoder_writes_numpy_header_bytes() {
    let mut m = Mismatches::default();
    for (entry, bytes, header, _) in parsed_fixtures(&mut m) {
        let file = text(&entry, "file");
        let numpy_header = &bytes[..number(&entry, "data_offset")];
        let compare = |m: &mut Mismatches, version: Option<Version>| {
            m.checked += 1;
            match header.to_bytes(version) {
                Ok(ours) if ours == numpy_header => {}
                Ok(ours) => m.fail(
                    file,
                    format_args!(
                        "to_bytes({version:?}) differs:\n  ours  {:?}\n  numpy {:?}",
                        String::from_utf8_lossy(&ours),
                        String::from_utf8_lossy(numpy_header)
                    ),
                ),
                Err(e) => m.fail(file, format_args!("to_bytes({version:?}) failed: {e}")),
            }
        };
        if flag(&entry, "np_save_header") {
            compare(&mut m, None);
        }
        if flag(&entry, "np_header_at_version") {
            compare(&mut m, Some(version_from(text(&entry, "version"))));
        }
    }
    m.finish("Header::to_bytes");
}

/// Where the data is already little-endian and in C order, the bytes our layout
/// points at are numpy's `c_le_hex` (checks offsets and lengths end to end).
#[test]
fn layout_locates_numpys_data() {
    let mut m = Mismatches::default();
    for (entry, bytes, header, layout) in parsed_fixtures(&mut m) {
        let file = text(&entry, "file");
        if !data_is_c_le(&header) {
            continue;
        }
        m.checked += 1;
        let data_end = layout.data_offset + layout.data_len;
        match bytes.get(layout.data_offset..data_end) {
            Some(data) => m.check(
                file,
                "data",
                to_hex(data).as_str(),
                text(&entry, "c_le_hex"),
            ),
            None => m.fail(file, "data range beyond the end of the file"),
        }
        m.check(
            file,
            "trailing bytes",
            bytes.len() - data_end,
            number(&entry, "trailing_bytes"),
        );
    }
    m.finish("Layout");
}

/// True when `message` holds one of numpy's key phrases (or any message, for `null`).
fn has_numpy_wording(message: &str, expect: &Value) -> bool {
    match expect.as_array() {
        None => true,
        Some(phrases) => phrases
            .iter()
            .any(|p| message.contains(p.as_str().expect("phrase"))),
    }
}

/// Every malformed file is refused with numpy's wording. Files whose header numpy
/// accepts (truncated data, negative or overflowing shapes, objects) are refused by
/// our header check, or their layout promises more data than the file holds.
#[test]
fn bad_fixtures_fail_with_numpys_wording() {
    let mut m = Mismatches::default();
    for entry in section("bad") {
        let file = text(&entry, "file");
        let bytes = fixture_bytes(file);
        m.checked += 1;
        match Header::parse(&bytes, &ParseOptions::default()) {
            Err(e) if has_numpy_wording(&e.to_string(), &entry["expect"]) => {}
            Err(e) => m.fail(
                file,
                format_args!(
                    "error {:?} lacks numpy's wording {}",
                    e.to_string(),
                    entry["expect"]
                ),
            ),
            Ok(ParsedHeader { layout, .. })
                if flag(&entry, "numpy_header_ok")
                    && layout.data_offset + layout.data_len > bytes.len() => {}
            Ok(_) => m.fail(file, "accepted a file numpy refuses"),
        }
    }
    m.finish("bad fixtures");
}

/// Stored npz members are plain .npy bytes inside the archive: parsing them in
/// place (as a mapping of the archive would) gives numpy's answers.
#[test]
fn stored_npz_members_parse_in_place() {
    let mut m = Mismatches::default();
    for archive in section("npz") {
        let file = text(&archive, "file");
        let bytes = fixture_bytes(file);
        for member in archive["members"].as_array().cloned().unwrap_or_default() {
            let Some(start) = member["archive_data_offset"].as_u64() else {
                continue; // deflated: needs a zip reader (tests/interop_npz.rs)
            };
            let name = format!("{file}:{}", text(&member, "member"));
            let start = usize::try_from(start).expect("fits usize");
            let member_bytes = &bytes[start..start + number(&member, "file_size")];
            let parsed = Header::parse(member_bytes, &ParseOptions::default());
            m.checked += 1;
            match (&member["npy"], &member["error"], parsed) {
                (npy, _, Ok(ParsedHeader { header, layout })) if npy.is_object() => {
                    check_header(&mut m, &name, npy, &header, &layout);
                }
                (_, error, Err(e)) if error.is_object() => {
                    if !has_numpy_wording(&e.to_string(), &error["expect"]) {
                        m.fail(
                            &name,
                            format_args!("error {e} lacks numpy's wording {}", error["expect"]),
                        );
                    }
                }
                // A bad CRC is the zip layer's business: the header itself is fine.
                (_, error, Ok(_))
                    if error["message"].as_str().is_some_and(|s| s.contains("CRC")) => {}
                (_, _, Ok(_)) if member["kind"] == "raw" => {
                    m.fail(&name, "parsed a raw (non-npy) member as a header");
                }
                (_, _, Err(_)) if member["kind"] == "raw" => {}
                (_, _, Ok(_)) => m.fail(&name, "accepted a member numpy refuses"),
                (_, _, Err(e)) => m.fail(&name, format_args!("numpy reads it, we refuse: {e}")),
            }
        }
    }
    m.finish("stored npz members");
}

/// How to read a fixture: numpy's header limit for it, converted to native order or not.
fn read_options(entry: &Value, to_native: bool) -> ReadOptions {
    ReadOptions {
        parse: options_for(entry),
        to_native,
        ..Default::default()
    }
}

/// `read_npy` with `to_native`, in logical C order, is numpy's little-endian
/// C-order data byte for byte (on a little-endian host native is little), and
/// the converted header has no big-endian scalar left.
#[test]
fn read_npy_data_matches_numpy() {
    const { assert!(cfg!(target_endian = "little"), "c_le_hex is little-endian") };
    let mut m = Mismatches::default();
    for entry in section("npy") {
        let file = text(&entry, "file");
        m.checked += 1;
        let bytes = fixture_bytes(file);
        let array = match read_npy(&bytes[..], &read_options(&entry, true)) {
            Ok(array) => array,
            Err(e) => {
                m.fail(file, format_args!("read_npy: {e}"));
                continue;
            }
        };
        m.check(
            file,
            "big-endian after to_native",
            has_big_endian(&array.header().dtype),
            false,
        );
        m.check(
            file,
            "stream position",
            array.layout().data_offset + array.layout().data_len,
            number(&entry, "data_offset") + number(&entry, "nbytes"),
        );
        match logical_c_bytes(&array) {
            Ok(data) => m.check(
                file,
                "data",
                to_hex(&data).as_str(),
                text(&entry, "c_le_hex"),
            ),
            Err(e) => m.fail(file, format_args!("records view: {e}")),
        }
    }
    m.finish("read_npy data");
}

/// Every element decoded as a `Value` (bools, ints, half floats, long doubles
/// as f64, complex, strings, datetimes with NaT) equals numpy's `values`,
/// after conversion to native order.
#[test]
fn native_values_match_numpy() {
    let mut m = Mismatches::default();
    for entry in section("npy") {
        if entry["values_kind"].is_null() {
            continue;
        }
        let file = text(&entry, "file");
        m.checked += 1;
        match read_npy(&fixture_bytes(file)[..], &read_options(&entry, true)) {
            Ok(array) => {
                for problem in value_disagreements(&array, &entry) {
                    m.fail(file, problem);
                }
            }
            Err(e) => m.fail(file, format_args!("read_npy: {e}")),
        }
    }
    m.finish("values (native order)");
}

/// `Value` decodes data in its stored byte order too: the same values without
/// `to_native` (except big-endian long doubles, documented as undecodable).
#[test]
fn stored_order_values_match_numpy() {
    let mut m = Mismatches::default();
    for entry in section("npy") {
        if entry["values_kind"].is_null() {
            continue;
        }
        let file = text(&entry, "file");
        match read_npy(&fixture_bytes(file)[..], &read_options(&entry, false)) {
            Ok(array) if has_big_endian_long_double(&array.header().dtype) => {}
            Ok(array) => {
                m.checked += 1;
                for problem in value_disagreements(&array, &entry) {
                    m.fail(file, problem);
                }
            }
            Err(e) => m.fail(file, format_args!("read_npy: {e}")),
        }
    }
    m.finish("values (stored order)");
}

/// Whole-file reads of the bad fixtures fail with numpy's wording, including
/// the ones whose header numpy accepts (truncated data, objects, bad shapes).
#[test]
fn bad_fixtures_fail_to_read() {
    let mut m = Mismatches::default();
    for entry in section("bad") {
        let file = text(&entry, "file");
        m.checked += 1;
        let bytes = fixture_bytes(file);
        for to_native in [false, true] {
            let options = ReadOptions {
                to_native,
                ..ReadOptions::default()
            };
            match read_npy(&bytes[..], &options) {
                Ok(_) => m.fail(file, "read_npy read a file numpy refuses"),
                Err(e) if has_numpy_wording(&e.to_string(), &entry["expect"]) => {}
                Err(e) => m.fail(
                    file,
                    format_args!(
                        "error {:?} lacks numpy's wording {}",
                        e.to_string(),
                        entry["expect"]
                    ),
                ),
            }
        }
    }
    m.finish("read_npy of bad fixtures");
}

/// "We write files numpy would write": `write_npy` of the header and data we
/// read reproduces every file `np.save` wrote, whole (header and data), and
/// `NpyWriter` at the file's version every file numpy's writer wrote at a
/// forced version.
#[test]
fn write_npy_reproduces_numpys_files() {
    let mut m = Mismatches::default();
    for entry in section("npy") {
        let file = text(&entry, "file");
        let save = flag(&entry, "np_save_header");
        let at_version = flag(&entry, "np_header_at_version");
        if !save && !at_version {
            continue;
        }
        let bytes = fixture_bytes(file);
        let numpy_file = &bytes[..number(&entry, "data_offset") + number(&entry, "nbytes")];
        let array = match read_npy(&bytes[..], &read_options(&entry, false)) {
            Ok(array) => array,
            Err(e) => {
                m.fail(file, format_args!("read_npy: {e}"));
                continue;
            }
        };
        let mut compare = |what: &str, written: npy_core::Result<Vec<u8>>| {
            m.checked += 1;
            match written {
                Ok(ours) if ours == numpy_file => {}
                Ok(ours) => m.fail(
                    file,
                    format_args!(
                        "{what}: {} bytes, numpy {}; first difference at byte {:?}",
                        ours.len(),
                        numpy_file.len(),
                        ours.iter().zip(numpy_file).position(|(a, b)| a != b)
                    ),
                ),
                Err(e) => m.fail(file, format_args!("{what} failed: {e}")),
            }
        };
        if save {
            let mut ours = Vec::new();
            let written = write_npy(
                &mut ours,
                &npy_core::NpyBytes::new(array.header(), array.bytes()).unwrap(),
            )
            .map(|()| ours);
            compare("write_npy", written);
        }
        if at_version {
            let version = version_from(text(&entry, "version"));
            let written =
                NpyWriter::new(Vec::new(), array.header(), Some(version)).and_then(|mut w| {
                    // In two pieces, so the streaming path is exercised.
                    let (first, second) = array.bytes().split_at(array.bytes().len() / 2);
                    w.write_bytes(first)?;
                    w.write_bytes(second)?;
                    w.finish()
                });
            compare("NpyWriter at the file's version", written);
        }
    }
    m.finish("write_npy");
}

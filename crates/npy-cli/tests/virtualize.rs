//! `npy virtualize`: the kerchunk references' structure, the Zarr v3
//! manifest's, and the refusals (real readers open them in
//! crates/npy-python/tests/test_virtual.py).

mod common;

use common::{arange_3x4, assert_exit, npy, npy_bytes, scratch, stderr, stdout, write};
use serde_json::{Value, json};

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn kerchunk_references_are_golden() {
    let dir = scratch("virtualize_golden");
    let file = write(&dir, "t.npy", &arange_3x4());
    let output = npy([
        "virtualize".as_ref(),
        file.as_os_str(),
        "--rows-per-chunk".as_ref(),
        "1".as_ref(),
    ]);
    assert_exit(&output, 0);
    let doc = json_of(&stdout(&output));
    assert_eq!(doc["version"], json!(1));
    let refs = doc["refs"].as_object().unwrap();
    let keys: Vec<&str> = refs.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            ".zgroup",
            "t/.zarray",
            "t/.zattrs",
            "t/0.0",
            "t/1.0",
            "t/2.0"
        ]
    );
    assert_eq!(
        json_of(refs[".zgroup"].as_str().unwrap()),
        json!({"zarr_format": 2})
    );
    let zarray = json_of(refs["t/.zarray"].as_str().unwrap());
    let header = npy_core::Header::parse(&arange_3x4(), &Default::default()).unwrap();
    assert_eq!(
        zarray,
        json!({"zarr_format": 2, "shape": [3, 4], "chunks": [1, 4],
               "dtype": header.header.dtype.descr(), "compressor": null, "filters": null,
               "fill_value": null, "order": "C", "dimension_separator": "."})
    );
    let zattrs = json_of(refs["t/.zattrs"].as_str().unwrap());
    assert_eq!(zattrs["_ARRAY_DIMENSIONS"], json!(["dim_0", "dim_1"]));
    let source = &zattrs["_npy_source"];
    let canonical = std::fs::canonicalize(&file).unwrap();
    assert_eq!(source["url"], json!(canonical.to_str().unwrap()));
    assert_eq!(
        source["size"],
        json!(std::fs::metadata(&file).unwrap().len())
    );
    assert!(
        source["etag"].is_string() && source["mtime_ns"].is_u64(),
        "{source}"
    );
    let row = header.header.row_bytes().unwrap() as u64;
    let start = header.layout.data_offset as u64;
    assert_eq!(
        refs["t/2.0"],
        json!([canonical.to_str().unwrap(), start + 2 * row, row])
    );
}

#[test]
fn a_directory_is_one_variable_per_file_and_zarr3_has_manifests() {
    let dir = scratch("virtualize_dir");
    // A Fortran-order big-endian int16 (2, 3) and a C-order float64 (3, 4).
    let data: Vec<u8> = (0..6i16).flat_map(i16::to_be_bytes).collect();
    let dict = "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }";
    write(&dir, "f.npy", &npy_bytes(dict, 0, &data));
    write(&dir, "t.npy", &arange_3x4());
    write(&dir, "notes.txt", b"not an array");
    let output = npy([
        "virtualize".as_ref(),
        dir.as_os_str(),
        "--format".as_ref(),
        "zarr3".as_ref(),
    ]);
    assert_exit(&output, 0);
    let doc = json_of(&stdout(&output));
    let arrays = doc["arrays"].as_object().unwrap();
    assert_eq!(arrays.keys().collect::<Vec<_>>(), ["f", "t"]);
    let f = &arrays["f"];
    assert_eq!(f["metadata"]["data_type"], json!("int16"));
    assert_eq!(
        f["metadata"]["codecs"],
        json!([{"name": "transpose", "configuration": {"order": [1, 0]}},
               {"name": "bytes", "configuration": {"endian": "big"}}])
    );
    assert_eq!(
        f["metadata"]["dimension_names"],
        json!(["f_dim_0", "f_dim_1"])
    );
    let chunk = &f["manifest"]["0.0"];
    assert!(
        chunk["path"].as_str().unwrap().starts_with("file:///"),
        "{chunk}"
    );
    assert_eq!(
        (&chunk["offset"], &chunk["length"]),
        (&json!(128), &json!(12))
    );
}

#[test]
fn refusals_name_the_reason() {
    let dir = scratch("virtualize_refusals");
    let file = write(&dir, "t.npy", &arange_3x4());
    let output = npy([
        "virtualize".as_ref(),
        file.as_os_str(),
        "--rows-per-chunk".as_ref(),
        "2".as_ref(),
    ]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("pick a divisor of 3 such as 1 or 3"),
        "{}",
        stderr(&output)
    );
    let text = write(
        &dir,
        "s.npy",
        &npy_bytes(
            "{'descr': '|S2', 'fortran_order': False, 'shape': (2,), }",
            0,
            b"abcd",
        ),
    );
    let output = npy([
        "virtualize".as_ref(),
        text.as_os_str(),
        "--format".as_ref(),
        "zarr3".as_ref(),
    ]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("use the kerchunk (Zarr v2) format"),
        "{}",
        stderr(&output)
    );
    let empty = scratch("virtualize_empty");
    let output = npy(["virtualize".as_ref(), empty.as_os_str()]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("no .npy or .npz files there"),
        "{}",
        stderr(&output)
    );
}

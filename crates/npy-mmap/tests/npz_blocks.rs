//! Random access to deflated npz members (issue 38): the block index our
//! writer records, checkpoints built for other writers' members, row reads
//! that inflate only their blocks, forged indexes.
#![cfg(feature = "npz")]

use std::io::{Cursor, Write};

use npy_core::{ArrayView, Order};
use npy_mmap::npz::{BlockIndex, Compression, EXTRA_FIELD_ID, NpzArchive, NpzWriter};

/// The benchmark's compressible signal: smooth, plus noise, rounded.
fn signal(len: usize) -> Vec<f64> {
    (0..len)
        .map(|i| {
            let noise = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
            let value = (i as f64 * 1e-3).sin() * 100.0 + noise as f64 / (1u64 << 24) as f64;
            (value * 1024.0).round() / 1024.0
        })
        .collect()
}

/// 720,000 f64 rows of 1 (5.5 MiB: 6 blocks) and a small member, deflated by us.
fn our_archive(data: &[f64]) -> Vec<u8> {
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    writer.set_compression(Compression::DEFLATED).unwrap();
    writer.add("x", data).unwrap();
    writer.add("small", &[1u16, 2, 3][..]).unwrap();
    writer.into_inner().unwrap().into_inner()
}

/// The same array deflated by another writer (the zip crate: one deflate
/// stream whose matches reach across any point), as numpy's are.
fn their_archive(data: &[f64]) -> Vec<u8> {
    let mut npy = Vec::new();
    npy_core::io::write_npy(&mut npy, data).unwrap();
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(false);
    zip.start_file("x.npy", options).unwrap();
    zip.write_all(&npy).unwrap();
    zip.finish().unwrap().into_inner()
}

fn rows(archive: &mut NpzArchive<Cursor<&[u8]>>, range: std::ops::Range<usize>) -> Vec<f64> {
    archive
        .read_rows("x", range)
        .unwrap()
        .view::<f64>()
        .unwrap()
        .to_vec()
}

/// Row ranges at the start, across block boundaries, at the end.
fn check_rows(archive: &mut NpzArchive<Cursor<&[u8]>>, data: &[f64]) {
    let n = data.len();
    for range in [
        0..10,
        131_000..132_100,
        262_000..400_000,
        n - 5..n,
        0..n,
        7..7,
    ] {
        assert!(
            rows(archive, range.clone()) == data[range.clone()],
            "rows {range:?}"
        );
    }
}

#[test]
fn members_we_deflate_carry_a_block_index_and_read_rows_by_blocks() {
    let data = signal(720_000);
    let bytes = our_archive(&data);
    let mut archive = NpzArchive::from_bytes(&bytes).unwrap();
    assert_eq!(archive.keys(), ["x", "small"]);
    let index = archive.block_index("x").unwrap().expect("deflated");
    assert!(index.is_written());
    let content = archive.info("x").unwrap().size;
    assert_eq!(index.len() as u64, content.div_ceil(1 << 20));
    check_rows(&mut archive, &data);
    // A byte range of the content: the .npy header, then data.
    let head = archive.read_range("x", 0..6).unwrap();
    assert_eq!(head, b"\x93NUMPY");
    // The whole member, block-parallel, equals the array.
    assert!(archive.load("x").unwrap().view::<f64>().unwrap().to_vec() == data);
    // One block: no index is written; a pass builds one on first use.
    let small = archive.block_index("small").unwrap().unwrap();
    assert!(!small.is_written() && small.len() == 1);
    assert_eq!(
        archive
            .read_rows("small", 1..3)
            .unwrap()
            .view::<u16>()
            .unwrap()
            .to_vec(),
        [2, 3]
    );
}

#[test]
fn members_of_other_writers_get_checkpoints_on_first_use() {
    let data = signal(720_000);
    let bytes = their_archive(&data);
    let mut archive = NpzArchive::from_bytes(&bytes).unwrap();
    // load() streams it (no index yet): numpy's result.
    assert!(archive.load("x").unwrap().view::<f64>().unwrap().to_vec() == data);
    let index = archive.block_index("x").unwrap().unwrap();
    assert!(!index.is_written());
    assert!(index.len() >= 5, "{} checkpoints in 5.5 MiB", index.len());
    check_rows(&mut archive, &data);
    // Kept for the archive's life: the same index, and load() uses it now.
    let again = archive.block_index("x").unwrap().unwrap();
    assert!(std::sync::Arc::ptr_eq(&index, &again));
    assert!(archive.load("x").unwrap().view::<f64>().unwrap().to_vec() == data);
}

#[test]
fn fortran_order_rows_are_along_the_last_axis() {
    let data = signal(300_000);
    let view = ArrayView::from_slice(&data, &[3, 100_000], Order::Fortran).unwrap();
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    writer.set_compression(Compression::DEFLATED).unwrap();
    writer.add("x", &view).unwrap();
    let bytes = writer.into_inner().unwrap().into_inner();
    let mut archive = NpzArchive::from_bytes(&bytes).unwrap();
    let part = archive.read_rows("x", 50_000..50_004).unwrap();
    assert_eq!(part.header().shape, [3, 4]);
    // In memory (Fortran) order, the rows are one stretch of the data.
    let memory: Vec<f64> = part
        .bytes()
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert!(memory == data[150_000..150_012]);
}

/// Where the block-index payload of member `x` lies in `bytes` (its
/// central directory entry's extra field).
fn index_payload(bytes: &[u8]) -> std::ops::Range<usize> {
    let id = EXTRA_FIELD_ID.to_le_bytes();
    let at = bytes
        .windows(4)
        .rposition(|w| w[..2] == id && usize::from(u16::from_le_bytes([w[2], w[3]])) > 10)
        .expect("an index field");
    let len = usize::from(u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]));
    at + 4..at + 4 + len
}

/// Entry `i`'s compressed length in the payload.
fn entry_len(payload: &mut [u8], i: usize) -> &mut [u8] {
    &mut payload[10 + 8 * i..14 + 8 * i]
}

fn add_to_len(payload: &mut [u8], i: usize, delta: i64) {
    let field = entry_len(payload, i);
    let len = u32::from_le_bytes(field[..4].try_into().unwrap()) as i64 + delta;
    field.copy_from_slice(&(len as u32).to_le_bytes());
}

#[test]
fn forged_indexes_are_refused_or_fall_back_never_giving_wrong_bytes() {
    let data = signal(720_000);
    let good = our_archive(&data);
    let payload = index_payload(&good);
    type Forgery = fn(&mut [u8]);
    let forgeries: [(&str, Forgery); 7] = [
        ("a length past the member", |p| add_to_len(p, 5, 1 << 30)),
        ("a length of zero", |p| {
            entry_len(p, 2).copy_from_slice(&[0; 4])
        }),
        ("a boundary moved mid-block (sums and CRC unchanged)", |p| {
            add_to_len(p, 1, 37);
            add_to_len(p, 2, -37);
        }),
        ("two entries swapped", |p| {
            let (a, b) = (p[18..26].to_vec(), p[26..34].to_vec());
            p[18..26].copy_from_slice(&b);
            p[26..34].copy_from_slice(&a);
        }),
        ("a block's CRC changed", |p| p[14] ^= 1),
        ("another span", |p| p[4] ^= 1),
        ("an unknown version", |p| p[0] = 9),
    ];
    for (what, forge) in forgeries {
        let mut bytes = good.clone();
        forge(&mut bytes[payload.clone()]);
        let mut archive = NpzArchive::from_bytes(&bytes).unwrap();
        check_rows(&mut archive, &data);
        let index = archive.block_index("x").unwrap().unwrap();
        assert!(!index.is_written(), "{what}: the forged index is not used");
        let mut archive = NpzArchive::from_bytes(&bytes).unwrap();
        let loaded = archive.load("x").unwrap();
        assert!(
            loaded.view::<f64>().unwrap().to_vec() == data,
            "{what}: load"
        );
    }
}

#[test]
fn the_index_parser_refuses_what_does_not_tile_the_member() {
    // Every truncation and every single-byte change of a real payload is
    // refused or describes the member exactly (never a panic).
    let data = signal(300_000);
    let bytes = our_archive(&data);
    let payload = bytes[index_payload(&bytes)].to_vec();
    let archive = NpzArchive::from_bytes(&bytes).unwrap();
    let info = archive.info("x").unwrap();
    let parse =
        |p: &[u8]| BlockIndex::from_extra_field(p, info.size, info.compressed_size, info.crc32);
    assert!(parse(&payload).is_ok());
    for len in 0..payload.len() {
        assert!(parse(&payload[..len]).is_err(), "truncated to {len}");
    }
    for at in 0..payload.len() {
        let mut changed = payload.clone();
        changed[at] ^= 0x5a;
        if let Ok(index) = parse(&changed) {
            assert_eq!(index.size(), info.size);
        }
    }
    let error = parse(&payload[..3]).unwrap_err().to_string();
    assert!(error.contains("block index"), "{error}");
}

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("npz-blocks-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn built_indexes_are_saved_beside_the_archive_and_refused_when_stale() {
    use npy_mmap::OpenOptions;
    use npy_mmap::npz::index_path;
    let dir = temp_dir("sidecar");
    let path = dir.join("theirs.npz");
    let data = signal(400_000);
    std::fs::write(&path, their_archive(&data)).unwrap();
    let sidecar = index_path(&path);
    assert_eq!(sidecar, dir.join("theirs.npz.idx"));

    let mut archive = OpenOptions::new().open_npz(&path).unwrap();
    assert_eq!(archive.save_index(&sidecar).unwrap(), 1);
    let saved = std::fs::read(&sidecar).unwrap();
    assert!(saved.len() < 200 << 10, "{} bytes", saved.len());
    let mut again = OpenOptions::new().open_npz(&path).unwrap();
    assert_eq!(again.load_index(&sidecar).unwrap(), 1);
    let index = again.block_index("x").unwrap().unwrap();
    assert_eq!(*index, *archive.block_index("x").unwrap().unwrap());
    let rows = again.read_rows("x", 200_000..200_100).unwrap();
    assert!(rows.view::<f64>().unwrap().to_vec() == data[200_000..200_100]);

    // Damaged: refused, saying so.
    let mut damaged = saved.clone();
    damaged[40] ^= 1;
    std::fs::write(&sidecar, &damaged).unwrap();
    let error = again.load_index(&sidecar).unwrap_err().to_string();
    assert!(error.contains("damaged"), "{error}");

    // Stale: the archive was rewritten (other data) after the sidecar.
    std::fs::write(&sidecar, &saved).unwrap();
    let other = signal(400_001);
    std::fs::write(&path, their_archive(&other)).unwrap();
    let mut changed = OpenOptions::new().open_npz(&path).unwrap();
    let error = changed.load_index(&sidecar).unwrap_err().to_string();
    assert!(error.contains("another archive"), "{error}");
    // Found beside it on first use, refused, and the pass builds the right one.
    let rows = changed.read_rows("x", 400_000..400_001).unwrap();
    assert_eq!(rows.view::<f64>().unwrap().to_vec(), &other[400_000..]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A reader that counts the bytes read through it.
struct Counting<'a> {
    inner: Cursor<&'a [u8]>,
    read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl std::io::Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

impl std::io::Seek for Counting<'_> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(to)
    }
}

#[test]
fn a_row_slice_reads_only_the_compressed_blocks_holding_it() {
    let data = signal(1_500_000); // 11.4 MiB: 12 blocks
    let bytes = our_archive(&data);
    let read = std::rc::Rc::new(std::cell::Cell::new(0));
    let counting = Counting {
        inner: Cursor::new(&bytes[..]),
        read: read.clone(),
    };
    let mut archive = NpzArchive::new(counting).unwrap();
    let compressed = archive.info("x").unwrap().compressed_size;
    read.set(0);
    // 131,072 rows: 1 MiB, straddling a block boundary.
    let part = archive.read_rows("x", 700_000..831_072).unwrap();
    assert!(part.view::<f64>().unwrap().to_vec() == data[700_000..831_072]);
    let per_block = compressed / 12;
    assert!(
        read.get() < 3 * per_block + (64 << 10),
        "read {} bytes of {compressed} for a 1 MiB slice",
        read.get()
    );
}

/// numpy, Python's zipfile and Info-ZIP's unzip read our indexed members
/// as any deflated member (the index is an extra field they skip), and the
/// ratio is numpy's within 0.5 %.
#[test]
#[ignore = "needs numpy and unzip: run with NPY_PYTHON set (just interop)"]
fn numpy_zipfile_and_unzip_read_indexed_members_unchanged() {
    let python = std::env::var("NPY_PYTHON").expect("NPY_PYTHON names a Python with numpy");
    let dir = temp_dir("interop");
    let data = signal(4_000_000); // 30.5 MiB: 31 blocks
    let ours = dir.join("ours.npz");
    let mut writer = NpzWriter::create(&ours).unwrap();
    writer.set_compression(Compression::DEFLATED).unwrap();
    writer.add("x", &data[..]).unwrap();
    writer.add("meta", &[1u8, 2, 3][..]).unwrap();
    writer.finish().unwrap();
    let mut npy = Vec::new();
    npy_core::io::write_npy(&mut npy, &data[..]).unwrap();
    std::fs::write(dir.join("x.npy"), npy).unwrap();
    let script = r#"
import sys, zipfile, numpy as np
d = sys.argv[1]
x = np.load(d + "/x.npy")
with np.load(d + "/ours.npz") as z:
    assert z.files == ["x", "meta"], z.files
    assert np.array_equal(z["x"], x)
    assert z["meta"].tolist() == [1, 2, 3]
with zipfile.ZipFile(d + "/ours.npz") as z:
    assert z.testzip() is None
    assert [i.filename for i in z.infolist()] == ["x.npy", "meta.npy"]
np.savez_compressed(d + "/numpy.npz", x=x)
with zipfile.ZipFile(d + "/ours.npz") as a, zipfile.ZipFile(d + "/numpy.npz") as b:
    ours, theirs = a.getinfo("x.npy").compress_size, b.getinfo("x.npy").compress_size
print(ours, theirs)
assert ours <= theirs * 1.005, (ours, theirs, ours / theirs)
"#;
    let output = std::process::Command::new(&python)
        .args(["-c", script])
        .arg(&dir)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!(
        "compressed sizes, ours and numpy's: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    let unzip = std::process::Command::new("unzip")
        .arg("-t")
        .arg(&ours)
        .output()
        .expect("unzip is installed (scripts/ensure-unzip.sh)");
    let said = String::from_utf8_lossy(&unzip.stdout);
    assert!(
        unzip.status.success() && said.contains("No errors detected"),
        "{said}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

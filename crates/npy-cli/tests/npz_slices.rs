//! Slices of deflated `.npz` members (issue 38): `npy show --rows` reads
//! only the blocks holding the rows it shows, and `npy index` saves the
//! checkpoints of members other writers made for the next commands.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_exit, npy, scratch, stderr, stdout};
use npy_mmap::npz::{Compression, EXTRA_FIELD_ID, NpzWriter};

/// `values` deflated by our writer as member `x` of `dir/name`.
fn deflated(dir: &Path, name: &str, values: &[f64]) -> PathBuf {
    let path = dir.join(name);
    let mut writer = NpzWriter::create(&path).unwrap();
    writer.set_compression(Compression::DEFLATED).unwrap();
    writer.add("x", values).unwrap();
    writer.finish().unwrap();
    path
}

/// Renames the block-index extra field so the member reads as another
/// writer's (the same independent blocks, no index).
fn strip_index(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let id = EXTRA_FIELD_ID.to_le_bytes();
    let at = bytes.windows(2).rposition(|w| w == id).unwrap();
    bytes[at] = b'Q';
    std::fs::write(path, bytes).unwrap();
}

/// Overwrites 64 compressed bytes in the middle of the only member.
fn damage_middle(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let middle = bytes.len() / 2;
    for byte in &mut bytes[middle..middle + 64] {
        *byte = !*byte;
    }
    std::fs::write(path, bytes).unwrap();
}

fn show_rows(path: &Path, rows: &str) -> std::process::Output {
    npy([
        "show".as_ref(),
        path.as_os_str(),
        "--rows".as_ref(),
        rows.as_ref(),
    ])
}

#[test]
fn show_of_a_deflated_members_last_rows_reads_only_their_blocks() {
    let dir = scratch("npz_slices_show");
    let values: Vec<f64> = (0..1_500_000).map(f64::from).collect(); // 12 blocks
    let path = deflated(&dir, "a.npz", &values);
    damage_middle(&path);
    // The last rows lie in the last block, which is intact: shown.
    let output = show_rows(&path, "-3:");
    assert_exit(&output, 0);
    assert!(stdout(&output).contains("1499999."), "{}", stdout(&output));
    // Rows in the damaged block (one of the twelve): an error naming the
    // member, never values; the rows of every other block are shown.
    let mut failed = 0;
    for block in 0..12 {
        let first = block * 131_072 + 5;
        let output = show_rows(&path, &format!("{first}:{}", first + 2));
        if output.status.success() {
            assert!(
                stdout(&output).contains(&format!("{first}.")),
                "{}",
                stdout(&output)
            );
        } else {
            assert!(
                stderr(&output).contains("member 'x.npy'"),
                "{}",
                stderr(&output)
            );
            failed += 1;
        }
    }
    assert_eq!(failed, 1, "the damage lies in one block");
}

#[test]
fn npy_index_saves_checkpoints_that_show_uses() {
    let dir = scratch("npz_slices_index");
    let values: Vec<f64> = (0..1_500_000).map(f64::from).collect();
    let path = deflated(&dir, "theirs.npz", &values);
    strip_index(&path);
    let output = npy(["index".as_ref(), path.as_os_str()]);
    assert_exit(&output, 0);
    let sidecar = dir.join("theirs.npz.idx");
    assert!(sidecar.is_file(), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("1 deflated member"),
        "{}",
        stdout(&output)
    );
    damage_middle(&path);
    // With the checkpoints, the last rows need only the last stretch.
    let output = show_rows(&path, "-3:");
    assert_exit(&output, 0);
    assert!(stdout(&output).contains("1499999."), "{}", stdout(&output));
    // Without them, reading up to the last rows meets the damage.
    std::fs::remove_file(&sidecar).unwrap();
    assert_exit(&show_rows(&path, "-3:"), 1);
}

//! A stored member over 4 GiB: real zip64 sizes in the local header and the
//! central directory, and a zip64 end record.
//!
//! Ignored by default: it writes and reads back 4.1 GiB (tens of seconds on
//! a disk, and the space must be free). Run with `--ignored`.
#![cfg(feature = "npz")]

use std::io::{self, Read};

use npy_core::{Element, Header, Order};
use npy_mmap::npz::{MemberCompression, NpzWriter};

#[test]
#[ignore = "writes and reads 4.1 GiB"]
fn stored_member_over_4_gib_round_trips() {
    const CHUNK: usize = 1 << 24;
    let count = (4usize << 30) / 8 + (100 << 20) / 8; // 4.1 GiB of u64
    let header = Header {
        dtype: u64::dtype(),
        order: Order::C,
        shape: vec![count],
    };
    let dir = std::env::temp_dir().join(format!("npz-large-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The only case where this test does not run its body: a machine without
    // the disk space for it. It says so instead of failing on ENOSPC.
    let free = fs4::available_space(&dir).unwrap();
    if free < 6 << 30 {
        eprintln!(
            "SKIPPED: needs 6 GiB free in {}, has {free} bytes",
            dir.display()
        );
        std::fs::remove_dir_all(&dir).unwrap();
        return;
    }
    let path = dir.join("large.npz");
    let chunk: Vec<u8> = (0..CHUNK / 8)
        .flat_map(|i| (i as u64).to_le_bytes())
        .collect();
    let mut writer =
        NpzWriter::new(io::BufWriter::new(std::fs::File::create(&path).unwrap())).unwrap();
    let total = count * 8;
    let pieces = (0..total.div_ceil(CHUNK)).map(|i| &chunk[..CHUNK.min(total - i * CHUNK)]);
    let mut member = writer.start_array("big", &header).unwrap();
    for piece in pieces {
        io::Write::write_all(&mut member, piece).unwrap();
    }
    member.finish().unwrap();
    writer.add("after", &[7u8, 8, 9][..]).unwrap();
    writer.into_inner().unwrap();

    let mut archive = npy_mmap::OpenOptions::new().open_npz(&path).unwrap();
    let info = archive.info("big").unwrap();
    assert_eq!(info.compression, MemberCompression::Stored);
    assert!(info.size > u64::from(u32::MAX));
    let npy_core::ParsedHeader {
        header: read_header,
        layout,
    } = archive.header("big").unwrap();
    assert_eq!(read_header, header);
    assert_eq!(info.size, (layout.data_offset + total) as u64);
    // Stream the whole member: the sizes and the CRC-32 must agree.
    let mut reader = archive.reader("big").unwrap();
    let copied = io::copy(&mut reader, &mut io::sink()).unwrap();
    assert_eq!(copied, info.size);
    drop(reader);
    // The member after the big one is found through zip64 offsets.
    assert_eq!(archive.load("after").unwrap().bytes(), [7, 8, 9]);
    let mut tail = Vec::new();
    archive
        .reader("after")
        .unwrap()
        .read_to_end(&mut tail)
        .unwrap();
    assert!(tail.ends_with(&[7, 8, 9]));
    std::fs::remove_dir_all(dir).unwrap();
}

//! The block index of a deflated npz member (issue 38) on arbitrary bytes:
//! the extra-field walk, the parser's checks against the member the central
//! directory describes, and inflating from whatever it accepts.
//!
//! Input: content size u64, compressed size u64, CRC-32 u32 (the member
//! as the directory records it), then a central directory entry's extra
//! fields; the bytes after the 0x424e field double as compressed data.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npy_mmap::npz::{BlockIndex, find_extra_field};

fuzz_target!(|bytes: &[u8]| {
    let Some((member, extra)) = bytes.split_at_checked(20) else {
        return;
    };
    let size = u64::from_le_bytes(member[..8].try_into().unwrap());
    let compressed_size = u64::from_le_bytes(member[8..16].try_into().unwrap());
    let crc32 = u32::from_le_bytes(member[16..20].try_into().unwrap());
    let Some(payload) = find_extra_field(extra) else {
        return;
    };
    let Ok(index) = BlockIndex::from_extra_field(payload, size, compressed_size, crc32) else {
        return;
    };
    // Accepted: the blocks tile the member.
    assert_eq!(index.size(), size);
    assert!(!index.is_empty());
    assert_eq!(index.input_range(0..index.len()), 0..compressed_size);
    let data = &extra[extra.len().min(4 + payload.len())..];
    for range in [0..size.min(1 << 16), size.saturating_sub(100)..size] {
        let blocks = index.covering(range.clone());
        let input = index.input_range(blocks);
        if range.end - range.start > 1 << 16 || input.end > data.len() as u64 {
            continue;
        }
        let mut out = vec![0u8; (range.end - range.start) as usize];
        let given = &data[input.start as usize..input.end as usize];
        let _ = index.inflate_range(range, given, input.start, &mut out);
    }
});

//! Reading the elements a command shows from a deflated `.npz` member's
//! blocks: only the blocks holding them are read and inflated.

use std::io::{Read, Seek};

use npy_mmap::npz::NpzArchive;

/// Offsets closer than this share one read (a deflated member's blocks are
/// 1 MiB: nearer offsets would mostly share blocks anyway).
const CLUSTER_GAP: usize = 1 << 20;

/// The `width` bytes at each data offset in `offsets` (any order) of member
/// `key`, whose data starts at `data_offset` of its content, one after
/// another in the order of `offsets`, when the member has a block index at
/// hand (our writer's, or checkpoints `npy index` saved): only the blocks
/// holding them are inflated, each checked against its CRC-32. `None`
/// without an index (building one would inflate the whole member).
pub fn gather_blocks<R: Read + Seek>(
    archive: &mut NpzArchive<R>,
    key: &str,
    data_offset: u64,
    offsets: &[usize],
    width: usize,
) -> anyhow::Result<Option<Vec<u8>>> {
    if offsets.is_empty() || archive.cached_block_index(key)?.is_none() {
        return Ok(None);
    }
    let mut order: Vec<usize> = (0..offsets.len()).collect();
    order.sort_unstable_by_key(|&i| offsets[i]);
    let mut out = vec![0u8; offsets.len() * width];
    let mut rest = &order[..];
    while let Some(&first) = rest.first() {
        // One read per cluster of nearby offsets.
        let start = offsets[first];
        let mut end = start + width;
        let mut taken = 1;
        while let Some(&next) = rest.get(taken) {
            if offsets[next] > end + CLUSTER_GAP {
                break;
            }
            end = end.max(offsets[next] + width);
            taken += 1;
        }
        let from = data_offset + start as u64;
        let bytes = archive.read_range(key, from..data_offset + end as u64)?;
        for &i in &rest[..taken] {
            let at = offsets[i] - start;
            out[i * width..(i + 1) * width].copy_from_slice(&bytes[at..at + width]);
        }
        rest = &rest[taken..];
    }
    Ok(Some(out))
}

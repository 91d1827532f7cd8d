//! Reading the elements a command shows from a deflated `.npz` member's
//! blocks: only the blocks holding them are read and inflated.

use std::io::{Read, Seek};
use std::ops::Range;

use anyhow::Context as _;
use npy_core::plan::{Coalesce, locate};

use npy_mmap::npz::NpzArchive;

/// Offsets closer than this share one read (a deflated member's blocks are
/// 1 MiB: nearer offsets would mostly share blocks anyway).
const CLUSTER_GAP: u64 = 1 << 20;

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
    // One read per run of nearby offsets (npy-core's planner).
    let spans: Vec<Range<u64>> = offsets
        .iter()
        .map(|&offset| offset as u64..(offset + width) as u64)
        .collect();
    let runs = Coalesce {
        align: 1,
        max_gap: CLUSTER_GAP,
    }
    .ranges(spans.iter().cloned());
    let mut placed = Vec::with_capacity(spans.len());
    for (i, span) in spans.iter().enumerate() {
        let (run, at) = locate(&runs, span).context("an element outside the reads planned")?;
        placed.push((run, at, i));
    }
    placed.sort_unstable();
    let mut out = vec![0u8; offsets.len() * width];
    for (run, elements) in placed.chunk_by(|a, b| a.0 == b.0).map(|e| (e[0].0, e)) {
        let range = &runs[run];
        let bytes = archive.read_range(key, data_offset + range.start..data_offset + range.end)?;
        for &(_, at, i) in elements {
            out[i * width..(i + 1) * width].copy_from_slice(&bytes[at..at + width]);
        }
    }
    Ok(Some(out))
}

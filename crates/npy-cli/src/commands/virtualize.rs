//! `npy virtualize`: kerchunk references or Zarr v3 manifests for arrays
//! in files and object storage (npy-remote's `zarr` module does the work).

use anyhow::Context;
use npy_remote::zarr::{ChunkOptions, GatherOptions, gather, kerchunk_refs, zarr3_manifest};

use crate::cli::{VirtualFormat, VirtualizeArgs};
use crate::remote::runtime;

/// `npy virtualize INPUT... [-o OUT.json]`.
pub fn run(args: &VirtualizeArgs, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let gathering = GatherOptions {
        concurrency: args.concurrency.max(1),
        ..GatherOptions::default()
    };
    let arrays = runtime()?.block_on(gather(&args.inputs, &gathering))?;
    let chunks = ChunkOptions {
        rows_per_chunk: args.rows_per_chunk,
        target_bytes: args.chunk_mib.max(1) << 20,
    };
    let json = match args.format {
        VirtualFormat::Kerchunk => kerchunk_refs(&arrays, &chunks)?,
        VirtualFormat::Zarr3 => zarr3_manifest(&arrays, &chunks)?,
    };
    let text = serde_json::to_string(&json)?;
    match &args.output {
        Some(path) if path.as_os_str() != "-" => std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?,
        _ => writeln!(out, "{text}")?,
    }
    Ok(())
}

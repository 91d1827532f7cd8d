//! `npy virtualize`: kerchunk references or Zarr v3 manifests for arrays
//! in files and object storage (npy-remote's `zarr` module does the work).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use npy_remote::zarr::{ChunkOptions, GatherOptions, gather, kerchunk_refs, zarr3_manifest};

use crate::cli::{VirtualFormat, VirtualizeArgs};
use crate::output;
use crate::remote::runtime;

/// `npy virtualize INPUT... [-o OUT.json [--force]]`.
pub fn run(args: &VirtualizeArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let dest = args
        .output
        .as_deref()
        .filter(|path| path.as_os_str() != "-");
    if let Some(dest) = dest {
        // Before any work: the inputs as named, then an existing file.
        let named = args
            .inputs
            .iter()
            .filter(|input| !npy_remote::is_url(input));
        output::refuse_input_as_output(dest, named.map(Path::new))?;
        output::refuse_to_replace(dest, args.force)?;
    }
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
    let Some(dest) = dest else {
        writeln!(out, "{text}")?;
        return Ok(());
    };
    // Every file the references point at, directories' files included.
    let read: Vec<PathBuf> = arrays.iter().filter_map(|a| local_file(&a.url)).collect();
    output::refuse_input_as_output(dest, read.iter().map(PathBuf::as_path))?;
    let cannot = || format!("cannot write {}", dest.display());
    let mut file = output::create(dest, args.force).with_context(cannot)?;
    file.write_all(text.as_bytes()).with_context(cannot)?;
    file.write_all(b"\n").with_context(cannot)?;
    output::committed(file.commit())
}

/// The local file a reference points at: an absolute path or a `file://` URL.
fn local_file(url: &str) -> Option<PathBuf> {
    if url.starts_with('/') {
        return Some(PathBuf::from(url));
    }
    url::Url::parse(url).ok()?.to_file_path().ok()
}

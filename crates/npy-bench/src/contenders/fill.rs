//! Create a preallocated file, then fill it from worker processes.

use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::process::{Child, Command};

use anyhow::{Result, bail, ensure};
use memmap2::MmapMut;
use ndarray::{ArrayViewMut1, s};
use ndarray_npy::ViewMutNpyExt as _;
use npy_bench::{Contender, Row, Samples};
use npy_core::DType;
use npy_mmap::{CreateOptions, OpenOptions};
use serde_json::json;

use crate::{Harness, remove_if_exists};

use super::{gib, path_str, timed};
use Contender::{NdarrayNpy, Ours};

// 7. Create a preallocated file, then fill it from worker processes.
pub fn fill(h: &mut Harness) -> Result<()> {
    let runs = h.args.runs.min(3);
    let len = usize::try_from(h.args.fill / 8)?;
    let path = h.args.dir.join("fill.npy");
    let size = gib(h.args.fill);
    let report = h.numpy(
        "fill",
        json!({"path": path_str(&h.args.dir.join("fill-numpy.npy")), "len": len, "runs": runs}),
    );
    let mut create = Row::new(
        "create",
        format!("create preallocated {size} (<f8), sparse"),
    );
    let mut create_reserved = Row::new(
        "create.reserve",
        format!("create {size} with its disk blocks reserved (fills use these)"),
    );
    let processes = [1usize, 2];
    let row = |id: String, label: String| Row::new(id, label).with_bytes(h.args.fill);
    let mut fills = processes.map(|p| {
        row(
            format!("fill.{p}"),
            format!("fill {size} + flush, {p} process(es)"),
        )
    });
    let mut plain_fills = processes.map(|p| {
        row(
            format!("fill.{p}.plain"),
            format!(
                "fill {size} + flush, {p} process(es), ours numpy's way: sparse file, one flush"
            ),
        )
    });
    // Interleaved, so the disk's drift spreads over every filler alike.
    let fillers = [Filler::Recommended, Filler::Plain, Filler::NdarrayNpy];
    let mut create_samples = [Vec::new(), Vec::new()];
    let mut reserve_samples = Vec::new();
    let mut fill_samples = vec![vec![Vec::new(); processes.len()]; fillers.len()];
    let exe = std::env::current_exe()?;
    for _ in 0..runs {
        for (k, &count) in processes.iter().enumerate() {
            for (f, filler) in fillers.iter().enumerate() {
                remove_if_exists(&path)?;
                let reserve = *filler == Filler::Recommended;
                let seconds = timed(|| create_file(filler.contender(), &path, len, reserve))?;
                match filler {
                    Filler::Recommended => reserve_samples.push(seconds),
                    Filler::Plain => create_samples[0].push(seconds),
                    Filler::NdarrayNpy => create_samples[1].push(seconds),
                }
                let seconds = timed(|| {
                    let workers: Vec<Child> = (0..count)
                        .map(|p| {
                            let rows = len * p / count..len * (p + 1) / count;
                            Command::new(&exe)
                                .arg("fill-worker")
                                .arg(filler.worker_name())
                                .arg(&path)
                                .arg(rows.start.to_string())
                                .arg(rows.end.to_string())
                                .spawn()
                        })
                        .collect::<std::io::Result<_>>()?;
                    for mut worker in workers {
                        ensure!(worker.wait()?.success(), "a fill worker failed");
                    }
                    Ok(())
                })?;
                fill_samples[f][k].push(seconds);
                verify_fill(&path, len)?;
                remove_if_exists(&path)?;
            }
        }
    }
    let [ours_sparse, ndarray_sparse] = create_samples;
    create.set(Ours, Samples::new(ours_sparse));
    create.set(NdarrayNpy, Samples::new(ndarray_sparse));
    create_reserved.set(Ours, Samples::new(reserve_samples));
    for (filler, per_count) in fillers.iter().zip(fill_samples) {
        let rows = match filler {
            Filler::Plain => &mut plain_fills,
            _ => &mut fills,
        };
        for (row, samples) in rows.iter_mut().zip(per_count) {
            row.set(filler.contender(), Samples::new(samples));
        }
    }
    h.push(create, report.as_ref());
    h.push(create_reserved, None);
    for row in fills {
        h.push(row, report.as_ref());
    }
    for row in plain_fills {
        h.push(row, None);
    }
    Ok(())
}

/// Who fills, and how.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Filler {
    /// Ours as the crate docs advise: a reserved file, 64 MiB blocks, each
    /// block's writeback started as soon as it is filled.
    Recommended,
    /// Ours the way numpy does it: a sparse file, one flush at the end.
    Plain,
    /// ndarray-npy: a sparse file, one flush at the end.
    NdarrayNpy,
}

impl Filler {
    fn contender(self) -> Contender {
        match self {
            Filler::Recommended | Filler::Plain => Ours,
            Filler::NdarrayNpy => NdarrayNpy,
        }
    }

    /// What `fill-worker` is told.
    fn worker_name(self) -> &'static str {
        match self {
            Filler::Recommended => Ours.name(),
            Filler::Plain => PLAIN_FILL,
            Filler::NdarrayNpy => NdarrayNpy.name(),
        }
    }
}

/// The `fill-worker` name of ours filling numpy's way.
const PLAIN_FILL: &str = "npy-mmap-plain";

/// Creates the file to fill. Ours fills files created with `reserve`, as
/// the README and examples do for files workers will fill (a full disk
/// fails at create, not as a SIGBUS in a worker); the others can only
/// create sparse files.
fn create_file(who: Contender, path: &Path, len: usize, reserve: bool) -> Result<()> {
    match who {
        Ours => {
            CreateOptions::new(DType::parse("<f8")?, [len])
                .reserve(reserve)
                .preallocate(path)?;
        }
        NdarrayNpy => {
            let file = File::create_new(path)?;
            ndarray_npy::write_zeroed_npy::<f64, _>(&file, len)?;
        }
        _ => bail!("{} cannot preallocate", who.name()),
    }
    Ok(())
}

/// Element i of a filled file is i.
fn fill_values(values: &mut [f64], first: usize) {
    for (i, value) in values.iter_mut().enumerate() {
        *value = (first + i) as f64;
    }
}

fn verify_fill(path: &Path, len: usize) -> Result<()> {
    let array = npy_mmap::open(path)?;
    let view = array.view::<f64>()?;
    for i in [0, len / 2, len.saturating_sub(1)] {
        ensure!(
            view.get([i]) == Some(&(i as f64)),
            "fill left element {i} = {:?}",
            view.get([i])
        );
    }
    Ok(())
}

/// How much a fill worker writes before starting that block's writeback.
const FILL_BLOCK_BYTES: usize = 64 << 20;

/// One worker process: fill `rows` of the file and flush.
pub fn fill_worker(contender: &str, path: &Path, rows: Range<usize>) -> Result<()> {
    if contender == PLAIN_FILL {
        let mut array = OpenOptions::new().rows(rows.clone()).open_rw(path)?;
        let mut view = array.view_mut::<f64>()?;
        fill_values(view.as_slice_mut().expect("contiguous"), rows.start);
        array.flush()?;
    } else if contender == Ours.name() {
        // What the crate docs advise for filling: block by block, each
        // block's writeback started as soon as it is filled.
        let mut array = OpenOptions::new().rows(rows.clone()).open_rw(path)?;
        array.fill_blocks::<f64>(FILL_BLOCK_BYTES / 8, |block, mut part| {
            fill_values(
                part.as_slice_mut().expect("contiguous"),
                rows.start + block.start,
            );
            Ok(())
        })?;
    } else if contender == NdarrayNpy.name() {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)?;
        // SAFETY: the other workers write disjoint rows; nobody truncates.
        let mut map = unsafe { MmapMut::map_mut(&file)? };
        let mut view = ArrayViewMut1::<f64>::view_mut_npy(&mut map)?;
        let mut window = view.slice_mut(s![rows.clone()]);
        fill_values(window.as_slice_mut().expect("contiguous"), rows.start);
        map.flush()?;
    } else {
        bail!("no fill worker for {contender}");
    }
    Ok(())
}

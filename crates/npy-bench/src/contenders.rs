//! The workloads, each done the way its crate's documentation shows; numpy's
//! side is `benches/numpy/compare.py`, run right after ours.
//!
//! ndarray-npy and npyz take buffers, not files, for mapped access: they get
//! a `memmap2` mapping, as their documentation suggests ([`map_file`]).

use std::fs::File;
use std::hint::black_box;
use std::io::{BufReader, BufWriter, Cursor, Write as _};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use anyhow::{Context as _, Result, bail, ensure};
use memmap2::{Mmap, MmapMut};
use ndarray::{Array1, ArrayView1, ArrayViewMut1, Ix1, OwnedRepr, s};
use ndarray_npy::{ReadNpyExt as _, ViewMutNpyExt as _, ViewNpyExt as _};
use npy_bench::{Contender, Row, Samples, sum_f64};
use npy_core::{DType, Header, Order, ParseOptions, ReadOptions, write_npy};
use npy_mmap::npz::{Compression, NpzWriter};
use npy_mmap::{Advice, CreateOptions, OpenOptions};
use npyz::WriterBuilder as _;
use serde_json::json;

use crate::data::{BigFiles, NpzFiles, WholeFiles};
use crate::{Harness, micro, remove_if_exists, time};

use Contender::{NdarrayNpy, Npyz, Ours};

/// Maps a whole file read-only, for the crates that view a buffer.
fn map_file(path: &Path) -> Result<Mmap> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    // SAFETY: the harness's data files are not changed while mapped.
    Ok(unsafe { Mmap::map(&file)? })
}

/// Seconds `f` takes; its result is kept from the optimizer.
fn timed<R>(f: impl FnOnce() -> Result<R>) -> Result<f64> {
    let (seconds, result) = time(f);
    black_box(result?);
    Ok(seconds)
}

/// Seconds per read of summing `read(i)` over `indices` (the sum keeps the
/// reads from being optimised away).
///
/// The same reads run once untimed first: on a 4 GiB working set every read
/// walks the page tables, and whether those tables are in the CPU caches
/// depends on who touched the mapping last (another contender reading the
/// same mapping just before would warm them). The warm-up pass gives every
/// contender the same start.
fn seconds_per_read(indices: &[usize], mut read: impl FnMut(usize) -> Result<f64>) -> Result<f64> {
    let mut pass = || -> Result<f64> {
        let mut total = 0.0;
        for &i in indices {
            total += read(i)?;
        }
        Ok(total)
    };
    black_box(pass()?);
    let seconds = timed(pass)?;
    Ok(seconds / indices.len().max(1) as f64)
}

/// A contender's operation for one run, returning the seconds it took.
type Op<'a> = (Contender, Box<dyn FnMut() -> Result<f64> + 'a>);

/// Runs every contender's operation `runs` times, interleaved, into `row`.
fn interleaved(runs: usize, row: &mut Row, ops: Vec<Op<'_>>) -> Result<()> {
    run_ops(runs, row, ops, Schedule::Interleaved)
}

/// The order of a row's runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Schedule {
    /// Round-robin, starting one contender later each run: machine drift
    /// spreads over every contender alike, and each follows every other in
    /// turn (what one run leaves behind, such as freed memory the kernel
    /// has not handed out again yet, then favours no one).
    Interleaved,
    /// Each contender's runs back to back, as numpy's side runs them: for
    /// workloads whose speed depends on reusing memory the previous run
    /// freed (see `whole_read`).
    Consecutive,
}

fn run_ops(runs: usize, row: &mut Row, mut ops: Vec<Op<'_>>, schedule: Schedule) -> Result<()> {
    let mut samples = vec![Vec::new(); ops.len()];
    let order: Vec<(usize, usize)> = match schedule {
        Schedule::Interleaved => {
            let count = ops.len();
            (0..runs)
                .flat_map(|run| (0..count).map(move |k| (run, (run + k) % count)))
                .collect()
        }
        Schedule::Consecutive => (0..ops.len())
            .flat_map(|k| (0..runs).map(move |run| (run, k)))
            .collect(),
    };
    for (run, k) in order {
        let (who, op) = &mut ops[k];
        let seconds = op().with_context(|| format!("{} {} run {run}", who.name(), row.id))?;
        samples[k].push(seconds);
    }
    for ((who, _), samples) in ops.into_iter().zip(samples) {
        row.set(who, Samples::new(samples));
    }
    Ok(())
}

fn gib(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else {
        format!("{} MiB", bytes >> 20)
    }
}

fn path_str(path: &Path) -> String {
    path.display().to_string()
}

// 1. Header parse, in process.
pub fn header(h: &mut Harness) -> Result<()> {
    let report = h.numpy("header", json!({"runs": 11}));
    let simple = Header::new(DType::parse("<f8")?, Order::C, vec![1000, 1000]).to_bytes(None)?;
    let fields: Vec<String> = (0..50).map(|i| format!("('field_{i}', '<f8')")).collect();
    let record_dtype = DType::parse(&format!("[{}]", fields.join(", ")))?;
    let record = Header::new(record_dtype, Order::C, vec![1000]).to_bytes(None)?;
    let options = ParseOptions::default();
    for (id, label, bytes) in [
        ("header.simple", "header parse <f8 (1000, 1000)", simple),
        ("header.record", "header parse 50-field record", record),
    ] {
        let mut row = Row::new(id, label);
        row.set(
            Ours,
            micro(11, || {
                black_box(Header::parse(black_box(&bytes), &options).expect("parses"));
            }),
        );
        row.set(
            NdarrayNpy,
            micro(11, || {
                let mut reader = black_box(&bytes[..]);
                black_box(
                    ndarray_npy::npy::header::Header::from_reader(&mut reader).expect("parses"),
                );
            }),
        );
        row.set(
            Npyz,
            micro(11, || {
                black_box(npyz::NpyHeader::from_reader(black_box(&bytes[..])).expect("parses"));
            }),
        );
        h.push(row, report.as_ref());
    }
    Ok(())
}

// 2. Open read-only, mapped where the contender can, with a typed view.
pub fn open(h: &mut Harness, files: &BigFiles) -> Result<()> {
    let report = h.numpy(
        "open",
        json!({"small": path_str(&files.small), "big": path_str(&files.big)}),
    );
    let big_label = format!("open {} file (r)", gib(h.args.big));
    for (id, label, path) in [
        ("open.4k", "open 4 KiB file (r)".to_owned(), &files.small),
        ("open.big", big_label, &files.big),
    ] {
        let mut row = Row::new(id, label);
        row.set(
            Ours,
            micro(11, || {
                let array = npy_mmap::open(path).expect("opens");
                black_box(array.view::<f64>().expect("f64").len());
            }),
        );
        row.set(
            NdarrayNpy,
            micro(11, || {
                let map = map_file(path).expect("maps");
                black_box(ArrayView1::<f64>::view_npy(&map).expect("views").len());
            }),
        );
        row.set(
            Npyz,
            micro(11, || {
                let map = map_file(path).expect("maps");
                black_box(npyz::NpyFile::new(&map[..]).expect("parses").len());
            }),
        );
        h.push(row, report.as_ref());
    }
    // The floor: the system calls alone (open, mmap, munmap, close), no header.
    let mut row = Row::new(
        "open.limit",
        format!(
            "open + mmap + munmap {}, no header (limit)",
            gib(h.args.big)
        ),
    );
    row.set(
        Ours,
        micro(11, || {
            black_box(map_file(&files.big).expect("maps").len());
        }),
    );
    h.push(row, None);
    Ok(())
}

// 3. Sequential sum of a warm file, and the in-RAM limit.
pub fn sum(h: &mut Harness, files: &BigFiles) -> Result<()> {
    let runs = h.args.runs;
    let expected = files.expected_sum();
    let check = move |sum: f64| -> Result<f64> {
        ensure!(sum == expected, "sum {sum} != {expected}");
        Ok(sum)
    };
    // Warm the page cache (the data was synced to disk when written).
    check(sum_f64(
        npy_mmap::open(&files.big)?
            .view::<f64>()?
            .as_slice()
            .expect("contiguous"),
    ))?;
    let report = h.numpy(
        "sum",
        json!({"big": path_str(&files.big), "runs": runs, "expected": expected}),
    );
    let size = gib(h.args.big);
    let bytes = files.big_len as u64 * 8;

    let mut row = Row::new(
        "sum.warm",
        format!("sum {size} float64, warm file (open + sum)"),
    )
    .with_bytes(bytes);
    interleaved(
        runs,
        &mut row,
        vec![
            (
                Ours,
                Box::new(|| {
                    timed(|| {
                        // The crate docs' advice for a scan: map every
                        // page in one call instead of a fault at a time.
                        let array = OpenOptions::new()
                            .advice(Advice::PopulateRead)
                            .open(&files.big)?;
                        check(sum_f64(
                            array.view::<f64>()?.as_slice().expect("contiguous"),
                        ))
                    })
                }),
            ),
            (
                NdarrayNpy,
                Box::new(|| {
                    timed(|| {
                        let map = map_file(&files.big)?;
                        let view = ArrayView1::<f64>::view_npy(&map)?;
                        check(sum_f64(view.as_slice().expect("contiguous")))
                    })
                }),
            ),
            (
                Npyz,
                Box::new(|| {
                    timed(|| {
                        let map = map_file(&files.big)?;
                        let data = npyz::NpyFile::new(&map[..])?.data::<f64>()?;
                        check(data.sum::<std::io::Result<f64>>()?)
                    })
                }),
            ),
        ],
    )?;
    h.push(row, report.as_ref());

    // The same with the pages already mapped: what the faults cost.
    let mut row = Row::new(
        "sum.mapped",
        format!("sum {size} float64, mapping already faulted in"),
    )
    .with_bytes(bytes);
    {
        let ours = npy_mmap::open(&files.big)?;
        let ours_view = ours.view::<f64>()?;
        let ours_slice = ours_view.as_slice().expect("contiguous");
        let map = map_file(&files.big)?;
        let theirs = ArrayView1::<f64>::view_npy(&map)?;
        let theirs_slice = theirs.as_slice().expect("contiguous");
        check(sum_f64(ours_slice))?;
        check(sum_f64(theirs_slice))?;
        interleaved(
            runs,
            &mut row,
            vec![
                (Ours, Box::new(|| timed(|| check(sum_f64(ours_slice))))),
                (
                    NdarrayNpy,
                    Box::new(|| timed(|| check(sum_f64(theirs_slice)))),
                ),
            ],
        )?;
    }
    h.push(row, report.as_ref());

    // The physical limit: the same loop over memory that is no file's.
    let mut row =
        Row::new("sum.ram", format!("sum {size} float64 in RAM (limit)")).with_bytes(bytes);
    let in_ram: Vec<f64> = (0..files.big_len).map(|i| (i % 1024) as f64).collect();
    interleaved(
        runs,
        &mut row,
        vec![(Ours, Box::new(|| timed(|| check(sum_f64(&in_ram)))))],
    )?;
    drop(in_ram);
    h.push(row, report.as_ref());
    Ok(())
}

// 4. Random scalar reads from a warm, mapped file.
pub fn random_reads(h: &mut Harness, files: &BigFiles) -> Result<()> {
    let runs = h.args.runs;
    let report = h.numpy(
        "reads",
        json!({"big": path_str(&files.big), "indices": path_str(&files.indices), "runs": runs}),
    );
    let indices = &files.index_values;
    let mut row = Row::new(
        "reads.random",
        format!(
            "random scalar read, warm {} file (per read, {} reads)",
            gib(h.args.big),
            indices.len()
        ),
    );

    let ours = npy_mmap::open(&files.big)?;
    let ours_view = ours.view::<f64>()?;
    let map = map_file(&files.big)?;
    let theirs = ArrayView1::<f64>::view_npy(&map)?;
    // Fault every page in first: the figure is for a warm mapping.
    sum_f64(ours_view.as_slice().expect("contiguous"));
    sum_f64(theirs.as_slice().expect("contiguous"));
    let mut npyz_reader = npyz::NpyFile::new(Cursor::new(&map[..]))?.data::<f64>()?;
    interleaved(
        runs,
        &mut row,
        vec![
            (
                Ours,
                Box::new(|| {
                    seconds_per_read(indices, |i| Ok(*ours_view.get(&[i]).expect("in bounds")))
                }),
            ),
            (
                NdarrayNpy,
                Box::new(|| seconds_per_read(indices, |i| Ok(theirs[i]))),
            ),
            (
                Npyz,
                Box::new(|| seconds_per_read(indices, |i| Ok(npyz_reader.read_at(i as u64)?))),
            ),
        ],
    )?;
    h.push(row, report.as_ref());
    Ok(())
}

// 5. Whole-array read into memory, as native float64.
pub fn whole_read(h: &mut Harness, files: &WholeFiles) -> Result<()> {
    let runs = h.args.runs;
    let report = h.numpy(
        "read",
        json!({"native": path_str(&files.native), "big_endian": path_str(&files.big_endian), "runs": runs}),
    );
    let last = (files.len.max(1) - 1) as f64 * 0.5;
    let check = move |value: Option<f64>| -> Result<()> {
        ensure!(value == Some(last), "last element {value:?} != {last}");
        Ok(())
    };
    let bytes = files.len as u64 * 8;
    let size = gib(h.args.whole);
    for (id, label, path) in [
        (
            "read.native",
            format!("read {size} into memory (<f8)"),
            &files.native,
        ),
        (
            "read.be",
            format!("read {size} into memory (>f8 → native)"),
            &files.big_endian,
        ),
    ] {
        // Warm the page cache.
        npy_mmap::load(path)?;
        let mut row = Row::new(id, label).with_bytes(bytes);
        // Consecutive, like numpy's side: each run then reuses the memory the
        // previous one freed. Interleaved, a contender's freed memory can be
        // handed back to the VM's host before its next run, and the next
        // fresh gigabyte then costs host faults (docs/BENCHMARKS.md).
        run_ops(
            runs,
            &mut row,
            vec![
                (
                    Ours,
                    Box::new(|| {
                        timed(|| {
                            let options = ReadOptions {
                                to_native: true,
                                ..ReadOptions::default()
                            };
                            let array = npy_mmap::OpenOptions::from(options).load(path)?;
                            check(
                                array
                                    .view::<f64>()?
                                    .as_slice()
                                    .and_then(|s| s.last().copied()),
                            )?;
                            Ok(array)
                        })
                    }),
                ),
                (
                    NdarrayNpy,
                    Box::new(|| {
                        timed(|| {
                            let array = Array1::<f64>::read_npy(File::open(path)?)?;
                            check(array.last().copied())?;
                            Ok(array)
                        })
                    }),
                ),
                (
                    Npyz,
                    Box::new(|| {
                        timed(|| {
                            let file = BufReader::new(File::open(path)?);
                            let values = npyz::NpyFile::new(file)?.into_vec::<f64>()?;
                            check(values.last().copied())?;
                            Ok(values)
                        })
                    }),
                ),
            ],
            Schedule::Consecutive,
        )?;
        h.push(row, report.as_ref());
    }
    // The floor: copying the same bytes from RAM into fresh memory.
    let mut row = Row::new(
        "read.limit",
        format!("memcpy {size} into fresh memory (limit)"),
    )
    .with_bytes(bytes);
    let source = vec![1u8; files.len * 8];
    interleaved(
        runs,
        &mut row,
        vec![(Ours, Box::new(|| timed(|| Ok(source.to_vec()))))],
    )?;
    drop(source);
    h.push(row, None);
    Ok(())
}

// 6. Save an in-memory array to a new file (page cache; no fsync, like np.save).
pub fn save(h: &mut Harness, files: &WholeFiles) -> Result<()> {
    let runs = h.args.runs;
    let out = h.args.dir.join("saved.npy");
    let report = h.numpy(
        "save",
        json!({"len": files.len, "out": path_str(&out), "runs": runs}),
    );
    let values: Vec<f64> = (0..files.len).map(|i| i as f64 * 0.5).collect();
    let shape = [files.len];
    let mut row = Row::new("save", format!("save {} (<f8)", gib(h.args.whole)))
        .with_bytes(files.len as u64 * 8);
    // Untimed before each run: remove the last file and wait for the disk,
    // so no run pays for the writeback of the one before (numpy's side too).
    let fresh = |out: &Path| -> Result<PathBuf> {
        remove_if_exists(out)?;
        ensure!(Command::new("sync").status()?.success(), "sync failed");
        Ok(out.to_path_buf())
    };
    // Consecutive, like numpy's side and for the reason `whole_read` gives:
    // each save fills fresh page-cache memory.
    run_ops(
        runs,
        &mut row,
        vec![
            (
                Ours,
                Box::new(|| {
                    let out = fresh(&out)?;
                    timed(|| {
                        let file = BufWriter::new(File::create(&out)?);
                        Ok(write_npy(
                            file,
                            &npy_core::ArrayView::from_slice(&values, &shape, Order::C).unwrap(),
                        )?)
                    })
                }),
            ),
            (
                NdarrayNpy,
                Box::new(|| {
                    let out = fresh(&out)?;
                    timed(|| {
                        Ok(ndarray_npy::write_npy(
                            &out,
                            &ArrayView1::from(&values[..]),
                        )?)
                    })
                }),
            ),
            (
                Npyz,
                Box::new(|| {
                    let out = fresh(&out)?;
                    timed(|| {
                        let mut writer = npyz::WriteOptions::<f64>::new()
                            .default_dtype()
                            .shape(&[values.len() as u64])
                            .writer(BufWriter::new(File::create(&out)?))
                            .begin_nd()?;
                        writer.extend(values.iter().copied())?;
                        writer.finish()?;
                        Ok(())
                    })
                }),
            ),
        ],
        Schedule::Consecutive,
    )?;
    remove_if_exists(&out)?;
    h.push(row, report.as_ref());
    Ok(())
}

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
            view.get(&[i]) == Some(&(i as f64)),
            "fill left element {i} = {:?}",
            view.get(&[i])
        );
    }
    Ok(())
}

/// How much a fill worker writes before starting that block's writeback.
const FILL_BLOCK_BYTES: usize = 64 << 20;

/// One worker process: fill `rows` of the file and flush.
pub fn fill_worker(contender: &str, path: &Path, rows: Range<usize>) -> Result<()> {
    if contender == PLAIN_FILL {
        let mut array = OpenOptions::new().window(rows.clone()).open_rw(path)?;
        let mut view = array.view_mut::<f64>()?;
        fill_values(view.as_slice_mut().expect("contiguous"), rows.start);
        array.flush()?;
    } else if contender == Ours.name() {
        // What the crate docs advise for filling: block by block, each
        // block's writeback started as soon as it is filled.
        let mut array = OpenOptions::new().window(rows.clone()).open_rw(path)?;
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

// 8. npz: stored and compressed writes and reads, one member.
pub fn npz(h: &mut Harness, files: &NpzFiles) -> Result<()> {
    let runs = h.args.runs;
    let raw = files.raw_bytes();
    let archive = |who: Contender, kind: &str| files.dir.join(format!("{}-{kind}.npz", who.name()));
    let size = gib(files.big.len() as u64 * 8);
    let mut rows = Vec::new();
    for (kind, compressed) in [("stored", false), ("deflate", true)] {
        let mut row = Row::new(
            format!("npz.{kind}.write"),
            format!("npz {kind} write ({size} + 1 MiB)"),
        )
        .with_bytes(raw);
        let (big, small) = (&files.big, &files.small);
        let ours_path = archive(Ours, kind);
        let nd_path = archive(NdarrayNpy, kind);
        let npyz_path = archive(Npyz, kind);
        interleaved(
            runs,
            &mut row,
            vec![
                (
                    Ours,
                    Box::new(|| {
                        timed(|| {
                            let compression = if compressed {
                                Compression::DEFLATED
                            } else {
                                Compression::Stored
                            };
                            let sink = BufWriter::new(File::create(&ours_path)?);
                            let mut writer = NpzWriter::with_compression(sink, compression)?;
                            writer.add("big", &big[..])?;
                            writer.add("small", &small[..])?;
                            writer.into_inner()?.flush()?;
                            Ok(())
                        })
                    }),
                ),
                (
                    NdarrayNpy,
                    Box::new(|| {
                        timed(|| {
                            let file = File::create(&nd_path)?;
                            let mut writer = if compressed {
                                ndarray_npy::NpzWriter::new_compressed(file)
                            } else {
                                ndarray_npy::NpzWriter::new(file)
                            };
                            writer.add_array("big", &ArrayView1::from(&big[..]))?;
                            writer.add_array("small", &ArrayView1::from(&small[..]))?;
                            writer.finish()?;
                            Ok(())
                        })
                    }),
                ),
                (
                    Npyz,
                    Box::new(|| {
                        timed(|| {
                            let method = if compressed {
                                npyz::zip::CompressionMethod::Deflated
                            } else {
                                npyz::zip::CompressionMethod::Stored
                            };
                            let options =
                                npyz::zip::write::FileOptions::default().compression_method(method);
                            let mut npz = npyz::npz::NpzWriter::create(&npyz_path)?;
                            for (name, values) in [("big", big), ("small", small)] {
                                let mut writer = npz
                                    .array::<f64>(name, options)?
                                    .default_dtype()
                                    .shape(&[values.len() as u64])
                                    .begin_nd()?;
                                writer.extend(values.iter().copied())?;
                                writer.finish()?;
                            }
                            npz.zip_writer().finish()?.flush()?;
                            Ok(())
                        })
                    }),
                ),
            ],
        )?;
        if compressed {
            let mut ratios = Vec::new();
            for who in [Ours, NdarrayNpy, Npyz] {
                let len = std::fs::metadata(archive(who, kind))?.len();
                ratios.push(format!("{} {:.2}", who.name(), raw as f64 / len as f64));
            }
            h.note(format!(
                "npz compression ratio (raw / archive): {}",
                ratios.join(", ")
            ));
        }
        rows.push(row);
    }

    // Everyone reads the archives we wrote (numpy reads them too).
    let report = h.numpy(
        "npz",
        json!({
            "big": path_str(&files.big_npy),
            "small": path_str(&files.small_npy),
            "dir": path_str(&files.dir),
            "stored": path_str(&archive(Ours, "stored")),
            "deflate": path_str(&archive(Ours, "deflate")),
            "runs": runs,
        }),
    );
    for row in rows {
        h.push(row, report.as_ref());
    }
    for kind in ["stored", "deflate"] {
        let path = archive(Ours, kind);
        let big_len = files.big.len();
        let mut row = Row::new(
            format!("npz.{kind}.read"),
            format!("npz {kind} read, all members"),
        )
        .with_bytes(raw);
        interleaved(
            runs,
            &mut row,
            vec![
                (
                    Ours,
                    Box::new(|| {
                        timed(|| {
                            let mut npz = npy_mmap::OpenOptions::new().open_npz(&path)?;
                            let big = npz.load("big")?;
                            ensure!(big.view::<f64>()?.len() == big_len);
                            Ok((big, npz.load("small")?))
                        })
                    }),
                ),
                (
                    NdarrayNpy,
                    Box::new(|| {
                        timed(|| {
                            let mut npz = ndarray_npy::NpzReader::new(File::open(&path)?)?;
                            let big = npz.by_name::<OwnedRepr<f64>, Ix1>("big")?;
                            ensure!(big.len() == big_len);
                            Ok((big, npz.by_name::<OwnedRepr<f64>, Ix1>("small")?))
                        })
                    }),
                ),
                (
                    Npyz,
                    Box::new(|| {
                        timed(|| {
                            let mut npz = npyz::npz::NpzArchive::open(&path)?;
                            let big = npz.by_name("big")?.context("no big")?.into_vec::<f64>()?;
                            ensure!(big.len() == big_len);
                            let small = npz
                                .by_name("small")?
                                .context("no small")?
                                .into_vec::<f64>()?;
                            Ok((big, small))
                        })
                    }),
                ),
            ],
        )?;
        h.push(row, report.as_ref());
    }
    for (kind, compressed) in [("stored", false), ("deflate", true)] {
        let path = archive(Ours, kind);
        let label = if compressed {
            "npz open + load the 1 MiB member, deflated".to_owned()
        } else {
            "npz open + the 1 MiB member, stored (ours: mapped view)".to_owned()
        };
        let mut row = Row::new(format!("npz.member.{kind}"), label);
        row.set(
            Ours,
            micro(11, || {
                if compressed {
                    let mut npz = npy_mmap::OpenOptions::new().open_npz(&path).expect("opens");
                    black_box(npz.load("small").expect("loads"));
                } else {
                    let mapped = npy_mmap::OpenOptions::new().map_npz(&path).expect("maps");
                    let mut npz = mapped.archive().expect("opens");
                    black_box(npz.view::<f64>("small").expect("views").len());
                }
            }),
        );
        row.set(
            NdarrayNpy,
            micro(11, || {
                let mut npz =
                    ndarray_npy::NpzReader::new(File::open(&path).expect("opens")).expect("zip");
                black_box(npz.by_name::<OwnedRepr<f64>, Ix1>("small").expect("loads"));
            }),
        );
        row.set(
            Npyz,
            micro(11, || {
                let mut npz = npyz::npz::NpzArchive::open(&path).expect("opens");
                let member = npz.by_name("small").expect("reads").expect("present");
                black_box(member.into_vec::<f64>().expect("loads"));
            }),
        );
        h.push(row, report.as_ref());
    }
    if let Some(report) = &report {
        for (key, note) in &report.notes {
            h.note(format!("numpy {key}: {note}"));
        }
    }
    if !h.args.keep {
        for who in [Ours, NdarrayNpy, Npyz] {
            for kind in ["stored", "deflate"] {
                remove_if_exists(&archive(who, kind))?;
            }
        }
    }
    Ok(())
}

// 9. Object arrays: numpy's pickle of short strings, decoded by our
// restricted unpickler and by np.load(allow_pickle=True); saved back.
pub fn objects(h: &mut Harness) -> Result<()> {
    let path = h.args.dir.join("objects.npy");
    let count = h.args.objects;
    // numpy writes the file (so ours decodes numpy's own pickle) and times itself.
    let report = h.numpy(
        "objects",
        json!({"path": path_str(&path), "count": count, "runs": h.args.runs.max(5)}),
    );
    let mut options = ReadOptions::default();
    options.parse.allow_pickle = true;
    let mut loaded = None;
    let load = Samples::new(
        (0..h.args.runs.max(5))
            .map(|_| {
                let (seconds, array) = time(|| npy_mmap::OpenOptions::from(options).load(&path));
                loaded = Some(array);
                seconds
            })
            .collect(),
    );
    let array = loaded.expect("at least one run")?;
    let values = array.objects().map_or(0, <[_]>::len);
    ensure!(values == count, "decoded {values} values, expected {count}");
    let mut row = Row::new(
        "objects.load",
        format!("load object array, {count} short str"),
    );
    row.set(Ours, load);
    h.push(row, report.as_ref());
    let copy = h.args.dir.join("objects-ours.npy");
    let save = Samples::new(
        (0..h.args.runs.max(5))
            .map(|_| time(|| npy_mmap::save(&copy, &array).expect("saves")).0)
            .collect(),
    );
    let mut row = Row::new(
        "objects.save",
        format!("save object array, {count} short str"),
    );
    row.set(Ours, save);
    h.push(row, report.as_ref());
    h.cleanup(&[path, copy])
}

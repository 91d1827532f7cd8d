//! npz: stored and compressed writes and reads, one member.

use std::fs::File;
use std::hint::black_box;
use std::io::{BufWriter, Write as _};

use anyhow::{Context as _, Result, ensure};
use ndarray::{ArrayView1, Ix1, OwnedRepr};
use npy_bench::{Contender, Row};
use npy_mmap::npz::{Compression, NpzWriter};
use npyz::WriterBuilder as _;
use serde_json::json;

use crate::data::NpzFiles;
use crate::{Harness, micro, remove_if_exists};

use super::{gib, interleaved, path_str, timed};
use Contender::{NdarrayNpy, Npyz, Ours};

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
                            let mut writer = NpzWriter::new(sink)?;
                            writer.set_compression(compression)?;
                            writer.add("big", big)?;
                            writer.add("small", small)?;
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

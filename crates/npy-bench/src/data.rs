//! The data every contender reads: written once per run with npy-core's
//! streaming writer (files numpy writes byte for byte the same way).
//! A file of the expected length left by `--keep` is reused.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use npy_bench::random_indices;
use npy_core::{DType, Header, NpyWriter, Order};

/// Files for open, sums and random reads.
pub struct BigFiles {
    /// `big` bytes of float64, element i = i % 1024 (sums are exact).
    pub big: PathBuf,
    pub big_len: usize,
    /// A 4 KiB float64 file: open must cost the same.
    pub small: PathBuf,
    /// Random indices into `big`, as int64 (numpy loads the same ones).
    pub indices: PathBuf,
    pub index_values: Vec<usize>,
}

impl BigFiles {
    pub fn paths(&self) -> Vec<PathBuf> {
        vec![self.big.clone(), self.small.clone(), self.indices.clone()]
    }

    /// The sum every contender must find.
    pub fn expected_sum(&self) -> f64 {
        let (full, rest) = (self.big_len / 1024, self.big_len % 1024);
        (full * 1023 * 1024 / 2 + rest * rest.saturating_sub(1) / 2) as f64
    }
}

/// Files read whole and the array saved.
pub struct WholeFiles {
    /// Native (little-endian) float64, element i = i * 0.5.
    pub native: PathBuf,
    /// The same values as big-endian float64.
    pub big_endian: PathBuf,
    pub len: usize,
}

impl WholeFiles {
    pub fn paths(&self) -> Vec<PathBuf> {
        vec![self.native.clone(), self.big_endian.clone()]
    }
}

/// The npz workload's arrays (in memory and as `.npy` for numpy).
pub struct NpzFiles {
    pub dir: PathBuf,
    /// Compressible float64 ([`compressible`]).
    pub big: Vec<f64>,
    pub big_npy: PathBuf,
    /// 1 MiB float64, element i = i.
    pub small: Vec<f64>,
    pub small_npy: PathBuf,
}

impl NpzFiles {
    pub fn paths(&self) -> Vec<PathBuf> {
        vec![self.big_npy.clone(), self.small_npy.clone()]
    }

    /// Raw array bytes in an archive holding both arrays.
    pub fn raw_bytes(&self) -> u64 {
        ((self.big.len() + self.small.len()) * 8) as u64
    }
}

pub fn big_files(dir: &Path, big: u64, reads: usize) -> Result<BigFiles> {
    let big_len = usize::try_from(big / 8)?;
    let big_path = dir.join("big.npy");
    eprintln!("data: {} ({} MiB)", big_path.display(), big >> 20);
    write_f64(&big_path, "<f8", big_len, |i| (i % 1024) as f64)?;
    let small = dir.join("small-4k.npy");
    // 128-byte header + 496 * 8 = 4096 bytes.
    write_f64(&small, "<f8", 496, |i| i as f64)?;
    let indices = dir.join("indices.npy");
    let index_values = random_indices(reads, big_len.max(1));
    let header = Header::new(DType::parse("<i8")?, Order::C, vec![reads]);
    write_chunks(&indices, &header, |start, out| {
        for &i in &index_values[start..(start + CHUNK).min(reads)] {
            out.extend_from_slice(&(i as i64).to_le_bytes());
        }
    })?;
    Ok(BigFiles {
        big: big_path,
        big_len,
        small,
        indices,
        index_values,
    })
}

pub fn whole_files(dir: &Path, whole: u64) -> Result<WholeFiles> {
    let len = usize::try_from(whole / 8)?;
    let native = dir.join("whole-le.npy");
    let big_endian = dir.join("whole-be.npy");
    eprintln!("data: {} and {}", native.display(), big_endian.display());
    write_f64(&native, "<f8", len, |i| i as f64 * 0.5)?;
    write_f64(&big_endian, ">f8", len, |i| i as f64 * 0.5)?;
    Ok(WholeFiles {
        native,
        big_endian,
        len,
    })
}

pub fn npz_files(dir: &Path, npz: u64) -> Result<NpzFiles> {
    let big: Vec<f64> = (0..usize::try_from(npz / 8)?).map(compressible).collect();
    let small: Vec<f64> = (0..(1 << 20) / 8).map(|i| i as f64).collect();
    let big_npy = dir.join("npz-big.npy");
    let small_npy = dir.join("npz-small.npy");
    write_f64(&big_npy, "<f8", big.len(), |i| big[i])?;
    write_f64(&small_npy, "<f8", small.len(), |i| small[i])?;
    Ok(NpzFiles {
        dir: dir.to_path_buf(),
        big,
        big_npy,
        small,
        small_npy,
    })
}

/// A smooth signal plus noise, rounded to 1/1024: compresses about like
/// measured data does (neither random bits nor long runs).
fn compressible(i: usize) -> f64 {
    let noise = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
    let signal = (i as f64 * 1e-3).sin() * 100.0 + noise as f64 / (1u64 << 24) as f64;
    (signal * 1024.0).round() / 1024.0
}

/// The windows workload's token file: `uint16`, token i = i % 65521.
pub struct TokenFile {
    pub path: PathBuf,
    /// Tokens in the file.
    pub len: usize,
    /// Bytes of tokens (the file less its header).
    pub bytes: u64,
    /// Where the tokens start (the header's length): nanoGPT's memmap offset.
    pub data_offset: usize,
}

impl TokenFile {
    /// Token `i`'s value.
    pub fn token(i: usize) -> u16 {
        (i % 65521) as u16
    }
}

pub fn token_file(dir: &Path, bytes: u64) -> Result<TokenFile> {
    let len = usize::try_from(bytes / 2)?;
    let path = dir.join("tokens.npy");
    eprintln!("data: {} ({} MiB)", path.display(), bytes >> 20);
    let header = Header::new(DType::parse("<u2")?, Order::C, vec![len]);
    let data_offset = header.to_bytes(None)?.len();
    write_chunks(&path, &header, |start, out| {
        for i in start..(start + CHUNK).min(len) {
            out.extend_from_slice(&TokenFile::token(i).to_le_bytes());
        }
    })?;
    Ok(TokenFile {
        path,
        len,
        bytes: len as u64 * 2,
        data_offset,
    })
}

/// Elements per written chunk.
const CHUNK: usize = 1 << 20;

fn write_f64(path: &Path, descr: &str, len: usize, value: impl Fn(usize) -> f64) -> Result<()> {
    let header = Header::new(DType::parse(descr)?, Order::C, vec![len]);
    let big_endian = descr.starts_with('>');
    write_chunks(path, &header, |start, out| {
        for i in start..(start + CHUNK).min(len) {
            let v = value(i);
            out.extend_from_slice(&if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            });
        }
    })
}

/// Writes `header` and the data `fill` produces CHUNK elements at a time,
/// unless a file of the right length is already there.
fn write_chunks(path: &Path, header: &Header, fill: impl Fn(usize, &mut Vec<u8>)) -> Result<()> {
    let expected = header.to_bytes(None)?.len() + header.data_len()?;
    if std::fs::metadata(path).is_ok_and(|m| m.len() == expected as u64) {
        return Ok(());
    }
    let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut writer = NpyWriter::new(BufWriter::new(file), header, None)?;
    let count = header.element_count()?;
    let mut chunk = Vec::with_capacity(CHUNK * 8);
    for start in (0..count).step_by(CHUNK) {
        chunk.clear();
        fill(start, &mut chunk);
        writer.write_bytes(&chunk)?;
    }
    writer.finish()?.into_inner()?.sync_all()?;
    Ok(())
}

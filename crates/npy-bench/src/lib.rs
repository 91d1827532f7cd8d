//! Bookkeeping for the side-by-side comparison (`just compare`): timing
//! samples, their median and spread, numpy's JSON, and the printed table.
//!
//! The workloads themselves live in the `npy-compare` binary (feature
//! `contenders`), so that this part, and the workspace's tests, build
//! without the other crates being compared.
//!
//! ```
//! use npy_bench::{Contender, Row, Samples, render_table};
//!
//! let mut row = Row::new("open.big", "open 4 GiB (r)");
//! row.set(Contender::Ours, Samples::new(vec![10e-6, 11e-6, 12e-6]));
//! row.set(Contender::Numpy, Samples::new(vec![50e-6, 55e-6, 60e-6]));
//! let table = render_table(&[row]);
//! assert!(table.contains("11.0 µs"));
//! assert!(table.contains("5.0×"));
//! assert!(table.contains("—")); // ndarray-npy and npyz did not run
//! ```
#![deny(missing_docs)]

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Who is measured, in table column order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Contender {
    /// This project (npy-core + npy-mmap).
    Ours,
    /// numpy, through `benches/numpy/compare.py`.
    Numpy,
    /// The `ndarray-npy` crate.
    NdarrayNpy,
    /// The `npyz` crate.
    Npyz,
}

impl Contender {
    /// Every contender, in column order.
    pub const ALL: [Contender; 4] = [
        Contender::Ours,
        Contender::Numpy,
        Contender::NdarrayNpy,
        Contender::Npyz,
    ];

    /// The column heading.
    pub fn name(self) -> &'static str {
        match self {
            Contender::Ours => "npy-mmap",
            Contender::Numpy => "numpy",
            Contender::NdarrayNpy => "ndarray-npy",
            Contender::Npyz => "npyz",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Timings of one workload by one contender, in seconds per operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Samples(Vec<f64>);

impl Samples {
    /// Samples in seconds (per operation). Non-finite values are dropped.
    pub fn new(mut seconds: Vec<f64>) -> Samples {
        seconds.retain(|s| s.is_finite());
        seconds.sort_by(f64::total_cmp);
        Samples(seconds)
    }

    /// The sorted samples.
    pub fn seconds(&self) -> &[f64] {
        &self.0
    }

    /// The median (mean of the middle two for an even count); `None` when empty.
    pub fn median(&self) -> Option<f64> {
        let n = self.0.len();
        match n {
            0 => None,
            _ if n % 2 == 1 => Some(self.0[n / 2]),
            _ => Some((self.0[n / 2 - 1] + self.0[n / 2]) / 2.0),
        }
    }

    /// The interquartile range (the middle half of the samples, the
    /// quartiles by the nearest rank) relative to the median: the noise
    /// of a run that one or two outliers among five samples do not move,
    /// where [`spread`](Self::spread) takes the outliers at their word.
    /// Half the min–max range for fewer than four samples.
    pub fn noise(&self) -> Option<f64> {
        let n = self.0.len();
        if n < 4 {
            return self.spread();
        }
        let median = self.median()?;
        let (q1, q3) = (self.0[n / 4], self.0[(3 * n) / 4]);
        (median > 0.0).then(|| (q3 - q1) / median)
    }

    /// Half the range (max − min) relative to the median: "±x%".
    pub fn spread(&self) -> Option<f64> {
        let median = self.median()?;
        let (first, last) = (self.0.first()?, self.0.last()?);
        (median > 0.0).then(|| (last - first) / 2.0 / median)
    }
}

/// One line of the table: a workload and what each contender measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Stable key shared with numpy's script (e.g. `open.big`).
    pub id: String,
    /// What the table shows.
    pub label: String,
    /// Bytes processed per operation: when set, cells also show GB/s.
    pub bytes: Option<u64>,
    results: [Option<Samples>; 4],
}

impl Row {
    /// A row nobody has measured yet.
    pub fn new(id: impl Into<String>, label: impl Into<String>) -> Row {
        Row {
            id: id.into(),
            label: label.into(),
            bytes: None,
            results: Default::default(),
        }
    }

    /// Shows throughput for `bytes` per operation.
    pub fn with_bytes(mut self, bytes: u64) -> Row {
        self.bytes = Some(bytes);
        self
    }

    /// Records `samples` for `who` (empty samples count as not measured).
    pub fn set(&mut self, who: Contender, samples: Samples) {
        self.results[who.index()] = (!samples.0.is_empty()).then_some(samples);
    }

    /// What `who` measured, if it could do the workload.
    pub fn get(&self, who: Contender) -> Option<&Samples> {
        self.results[who.index()].as_ref()
    }

    /// Our speed relative to the fastest other contender: their median
    /// time over ours (above 1 means we are faster). `None` when either
    /// side has no figure.
    pub fn ratio(&self) -> Option<f64> {
        let ours = self.get(Contender::Ours)?.median()?;
        let best_other = Contender::ALL[1..]
            .iter()
            .filter_map(|&c| self.get(c)?.median())
            .min_by(f64::total_cmp)?;
        (ours > 0.0).then(|| best_other / ours)
    }

    fn cell(&self, who: Contender) -> String {
        let Some(samples) = self.get(who) else {
            return "—".to_owned();
        };
        let (Some(median), Some(spread)) = (samples.median(), samples.spread()) else {
            return "—".to_owned();
        };
        let mut cell = format_seconds(median);
        if let Some(bytes) = self.bytes
            && median > 0.0
        {
            let _ = write!(cell, " ({:.2} GB/s)", bytes as f64 / median / 1e9);
        }
        let _ = write!(cell, " ±{:.0}%", spread * 100.0);
        cell
    }
}

/// The warm rows `npy-compare --check` guards: the ones where no disk and
/// no fresh memory sets the time, so the code does, and where ours leads
/// the best other contender today (docs/BENCHMARKS.md). A change that
/// costs one of them its lead fails the check.
pub const CHECKED_ROWS: [&str; 9] = [
    "header.simple",
    "header.record",
    "open.4k",
    "open.big",
    "reads.random",
    "reads.gather",
    "reads.gather_outer",
    "windows.warm",
    "windows.warm_nanogpt",
];

/// What [`check_row`] found for one row.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// The row's id.
    pub id: String,
    /// The fastest other contender.
    pub best: Contender,
    /// Our speed relative to it (above 1: ours is faster), as
    /// [`Row::ratio`].
    pub ratio: f64,
    /// The noise measured in this run: the larger of the two sides'
    /// [`Samples::noise`] (interquartile range over the median).
    pub noise: f64,
}

impl Check {
    /// Whether ours is slower than the best other contender by more than
    /// the noise: its median time above theirs × (1 + noise).
    pub fn failed(&self) -> bool {
        self.ratio * (1.0 + self.noise) < 1.0
    }
}

/// Compares ours with the fastest other contender of `row`, against the
/// noise measured for both in the same run; `None` when either side has
/// no figure (nothing to compare).
///
/// ```
/// use npy_bench::{Contender, Row, Samples, check_row};
///
/// let mut row = Row::new("reads.gather", "random gather");
/// row.set(Contender::Ours, Samples::new(vec![10.5e-9, 11e-9, 11.5e-9]));
/// row.set(Contender::NdarrayNpy, Samples::new(vec![9.9e-9, 10e-9, 10.1e-9]));
/// // 10 % slower, with 4.5 % of noise: a lost lead.
/// let check = check_row(&row).unwrap();
/// assert_eq!(check.best, Contender::NdarrayNpy);
/// assert!(check.failed());
/// // The same medians with 20 % of noise: within it.
/// row.set(Contender::Ours, Samples::new(vec![9e-9, 11e-9, 13.4e-9]));
/// assert!(!check_row(&row).unwrap().failed());
/// ```
pub fn check_row(row: &Row) -> Option<Check> {
    let ours = row.get(Contender::Ours)?;
    let (best, theirs) = Contender::ALL[1..]
        .iter()
        .filter_map(|&c| Some((c, row.get(c)?)))
        .filter(|(_, samples)| samples.median().is_some())
        .min_by(|a, b| {
            f64::total_cmp(&a.1.median().unwrap_or(0.0), &b.1.median().unwrap_or(0.0))
        })?;
    let (ours_median, theirs_median) = (ours.median()?, theirs.median()?);
    if ours_median <= 0.0 {
        return None;
    }
    Some(Check {
        id: row.id.clone(),
        best,
        ratio: theirs_median / ours_median,
        noise: ours.noise()?.max(theirs.noise()?),
    })
}

/// A duration in seconds with a unit that keeps 3 significant digits.
pub fn format_seconds(seconds: f64) -> String {
    let (value, unit) = if seconds < 1e-6 {
        (seconds * 1e9, "ns")
    } else if seconds < 1e-3 {
        (seconds * 1e6, "µs")
    } else if seconds < 1.0 {
        (seconds * 1e3, "ms")
    } else {
        (seconds, "s")
    };
    let decimals = if value < 10.0 {
        2
    } else if value < 100.0 {
        1
    } else {
        0
    };
    format!("{value:.decimals$} {unit}")
}

/// The table as Markdown: workload, each contender's median and spread,
/// and our ratio to the best other ("—" where a contender cannot do the
/// workload, never zero).
pub fn render_table(rows: &[Row]) -> String {
    let mut out = String::from("| workload |");
    for who in Contender::ALL {
        let _ = write!(out, " {} |", who.name());
    }
    out.push_str(" npy-mmap vs best other |\n|---|");
    for _ in Contender::ALL {
        out.push_str("---|");
    }
    out.push_str("---|\n");
    for row in rows {
        let _ = write!(out, "| {} |", row.label);
        for who in Contender::ALL {
            let _ = write!(out, " {} |", row.cell(who));
        }
        match row.ratio() {
            Some(ratio) => {
                let _ = writeln!(out, " {ratio:.1}× |");
            }
            None => out.push_str(" — |\n"),
        }
    }
    out
}

/// What `benches/numpy/compare.py` prints: `{"rows": {id: [seconds...]},
/// "notes": {key: value}}`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NumpyReport {
    /// Per-operation timings by row id.
    pub rows: BTreeMap<String, Vec<f64>>,
    /// Other facts (compression ratios, versions), printed under the table.
    pub notes: BTreeMap<String, String>,
}

/// Parses numpy's JSON report.
pub fn parse_numpy_report(json: &str) -> Result<NumpyReport, String> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("numpy's report is not JSON: {e}"))?;
    let mut report = NumpyReport::default();
    if let Some(rows) = value.get("rows").and_then(|r| r.as_object()) {
        for (id, samples) in rows {
            let samples = samples
                .as_array()
                .ok_or_else(|| format!("numpy's row {id:?} is not a list"))?
                .iter()
                .map(|s| {
                    s.as_f64()
                        .ok_or_else(|| format!("numpy's row {id:?} holds a non-number"))
                })
                .collect::<Result<Vec<f64>, String>>()?;
            report.rows.insert(id.clone(), samples);
        }
    }
    if let Some(notes) = value.get("notes").and_then(|n| n.as_object()) {
        for (key, note) in notes {
            let text = match note {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            report.notes.insert(key.clone(), text);
        }
    }
    Ok(report)
}

/// Parses a size like `4G`, `64M`, `4096`, `1.5G` (binary units: K = 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (number, unit) = match text.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let multiplier: u64 = match unit.to_ascii_uppercase().trim_end_matches(['B', 'I']) {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return Err(format!("unknown size unit in {text:?} (use K, M, G or T)")),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a size"))?;
    let bytes = value * multiplier as f64;
    if !(bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64) {
        return Err(format!("{text:?} is out of range"));
    }
    Ok(bytes as u64)
}

/// Sums `values` with eight independent accumulators, the loop every Rust
/// contender (and the in-RAM limit) uses, so that the sum rows compare how
/// the data is reached, not how it is added.
pub fn sum_f64(values: &[f64]) -> f64 {
    let mut lanes = [0.0f64; 8];
    let chunks = values.chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, value) in lanes.iter_mut().zip(chunk) {
            *lane += value;
        }
    }
    lanes.iter().sum::<f64>() + rest.iter().sum::<f64>()
}

/// `count` indices below `bound` from a fixed-seed xorshift: the same
/// every run (and for every contender).
pub fn random_indices(count: usize, bound: usize) -> Vec<usize> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound as u64) as usize
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_fails_only_beyond_the_noise_and_only_with_both_sides() {
        let row = |ours: Vec<f64>, theirs: Vec<f64>| {
            let mut row = Row::new("windows.warm", "warm random windows");
            row.set(Contender::Ours, Samples::new(ours));
            row.set(Contender::NdarrayNpy, Samples::new(theirs));
            row.set(Contender::Npyz, Samples::new(vec![10.0, 10.0, 10.0]));
            row
        };
        // Ahead: passes, whatever the noise.
        let ahead = check_row(&row(vec![1.0, 1.0, 1.0], vec![2.0, 2.0, 2.0])).unwrap();
        assert_eq!((ahead.best, ahead.ratio), (Contender::NdarrayNpy, 2.0));
        assert!(!ahead.failed());
        // 20 % behind with no noise: fails; with ±25 % of ours: passes.
        assert!(
            check_row(&row(vec![1.2, 1.2, 1.2], vec![1.0, 1.0, 1.0]))
                .unwrap()
                .failed()
        );
        assert!(
            !check_row(&row(vec![0.9, 1.2, 1.5], vec![1.0, 1.0, 1.0]))
                .unwrap()
                .failed()
        );
        // Their noise counts the same.
        assert!(
            !check_row(&row(vec![1.2, 1.2, 1.2], vec![0.75, 1.0, 1.25]))
                .unwrap()
                .failed()
        );
        // Five samples: one outlier each side does not widen the noise.
        let outliers = row(vec![1.2, 1.2, 1.2, 1.2, 9.0], vec![1.0, 1.0, 1.0, 1.0, 0.1]);
        assert!(check_row(&outliers).unwrap().failed());
        // Nobody else measured: nothing to check.
        let mut alone = Row::new("open.limit", "limit");
        alone.set(Contender::Ours, Samples::new(vec![1.0]));
        assert_eq!(check_row(&alone), None);
    }

    #[test]
    fn noise_is_the_interquartile_range_from_four_samples() {
        let s = Samples::new(vec![1.0, 2.0, 2.0, 2.0, 100.0]);
        assert_eq!(s.noise(), Some(0.0));
        let s = Samples::new(vec![4.0, 3.0, 2.0, 1.0]);
        // Quartiles by nearest rank: 2 and 4; median 2.5.
        assert_eq!(s.noise(), Some(0.8));
        let s = Samples::new(vec![1.0, 2.0, 3.0]);
        assert_eq!(s.noise(), s.spread());
    }

    #[test]
    fn median_and_spread() {
        let s = Samples::new(vec![3.0, 1.0, 2.0]);
        assert_eq!(s.median(), Some(2.0));
        assert_eq!(s.spread(), Some(0.5));
        let even = Samples::new(vec![4.0, 1.0, 2.0, 3.0]);
        assert_eq!(even.median(), Some(2.5));
        assert_eq!(Samples::new(vec![]).median(), None);
        assert_eq!(Samples::new(vec![f64::NAN, 1.0]).seconds(), [1.0]);
    }

    #[test]
    fn ratio_uses_the_fastest_other() {
        let mut row = Row::new("x", "x");
        assert_eq!(row.ratio(), None);
        row.set(Contender::Ours, Samples::new(vec![2.0]));
        assert_eq!(row.ratio(), None);
        row.set(Contender::Numpy, Samples::new(vec![10.0]));
        row.set(Contender::Npyz, Samples::new(vec![4.0]));
        assert_eq!(row.ratio(), Some(2.0));
    }

    #[test]
    fn missing_contenders_show_a_dash_not_zero() {
        let mut row = Row::new("save", "save 1 GiB").with_bytes(1 << 30);
        row.set(Contender::Ours, Samples::new(vec![0.5, 0.5, 0.6]));
        row.set(Contender::Npyz, Samples::new(vec![]));
        let table = render_table(&[row]);
        let line = table.lines().nth(2).unwrap();
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(cells[1], "save 1 GiB");
        assert_eq!(cells[2], "500 ms (2.15 GB/s) ±10%");
        assert_eq!(&cells[3..7], ["—", "—", "—", "—"]);
    }

    #[test]
    fn seconds_format() {
        assert_eq!(format_seconds(12.3e-9), "12.3 ns");
        assert_eq!(format_seconds(1.234e-6), "1.23 µs");
        assert_eq!(format_seconds(231e-6), "231 µs");
        assert_eq!(format_seconds(2.5), "2.50 s");
    }

    #[test]
    fn numpy_report() {
        let report =
            parse_numpy_report(r#"{"rows": {"open.big": [1e-5, 2e-5]}, "notes": {"ratio": 2.5}}"#)
                .unwrap();
        assert_eq!(report.rows["open.big"], [1e-5, 2e-5]);
        assert_eq!(report.notes["ratio"], "2.5");
        assert!(parse_numpy_report(r#"{"rows": {"x": ["a"]}}"#).is_err());
        assert!(parse_numpy_report("Traceback").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("4Q").is_err());
        assert!(parse_size("-1G").is_err());
    }

    #[test]
    fn sum_matches_a_plain_sum() {
        let values: Vec<f64> = (0..1003).map(|i| i as f64).collect();
        assert_eq!(sum_f64(&values), 1002.0 * 1003.0 / 2.0);
        assert_eq!(sum_f64(&[]), 0.0);
    }
}

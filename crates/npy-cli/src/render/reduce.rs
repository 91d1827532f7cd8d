//! Reducing the drawn elements to the picture's size in one streaming pass:
//! block statistics for images, a min/max envelope for lines, bin counts for
//! histograms, and the percentiles that set the colour range.

use clap::ValueEnum;

use super::stream::{Line, Reader};

/// How the elements of one pixel's block become its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Reduce {
    /// The mean of the block, NaNs left out (numpy's nanmean).
    Mean,
    /// The largest value, NaNs left out (numpy's nanmax).
    Max,
    /// The smallest value, NaNs left out (numpy's nanmin).
    Min,
    /// The element at the block's centre (reads only those rows).
    Nearest,
}

/// Splits `n` items into `bins` blocks: block `i` is `edge(i)..edge(i + 1)`
/// with `edge(i) = i * n / bins` (rounded down), so with `n` a multiple of
/// `bins` every block has `n / bins` items.
pub fn edges(n: usize, bins: usize) -> Vec<usize> {
    (0..=bins)
        .map(|i| (i as u128 * n as u128 / bins as u128) as usize)
        .collect()
}

/// A 2-D block of the data to reduce: pixel `(r, c)` has channel `k` at
/// element `base + r * row_stride + c * col_stride + k * channel_stride`.
#[derive(Clone, Copy, Debug)]
pub struct Plane {
    pub base: usize,
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    pub col_stride: usize,
    pub channels: usize,
    pub channel_stride: usize,
}

/// The reduced picture: `rows × cols` pixels of `channels` values, row after row.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    pub rows: usize,
    pub cols: usize,
    pub channels: usize,
    pub values: Vec<f64>,
}

/// Reduces `plane` to `out_rows × out_cols` pixels with `mode`, reading the
/// data once in memory order (rows of a C-order plane, columns of a
/// Fortran-order one), holding only the output-sized accumulators.
pub fn reduce_plane(
    reader: &mut Reader,
    plane: &Plane,
    (out_rows, out_cols): (usize, usize),
    mode: Reduce,
) -> anyhow::Result<Grid> {
    let channels = plane.channels.max(1);
    let row_edges = edges(plane.rows, out_rows);
    let col_edges = edges(plane.cols, out_cols);
    // Lines follow the axis with the smaller stride, so each line is read in memory order.
    let rows_outer = plane.col_stride <= plane.row_stride;
    let (outer_edges, inner_edges, outer_stride, inner_stride) = if rows_outer {
        (&row_edges, &col_edges, plane.row_stride, plane.col_stride)
    } else {
        (&col_edges, &row_edges, plane.col_stride, plane.row_stride)
    };
    let inner_bins = inner_edges.len() - 1;
    let cells = out_rows * out_cols * channels;
    let mut values = vec![if mode == Reduce::Mean { 0.0 } else { f64::NAN }; cells];
    let mut counts = vec![0u32; if mode == Reduce::Mean { cells } else { 0 }];
    let cell_of = |outer: usize, inner: usize| {
        let pixel = if rows_outer {
            outer * out_cols + inner
        } else {
            inner * out_cols + outer
        };
        pixel * channels
    };
    let inner_len = *inner_edges.last().expect("edges are never empty");
    let line_at = |index: usize| Line {
        base: plane.base + index * outer_stride,
        stride: inner_stride,
        channels,
        channel_stride: plane.channel_stride,
    };
    if mode == Reduce::Nearest {
        // Scattered lines of a big array: all asked for at once, so that a
        // file not in memory is read at the disk's speed, not one page
        // fault after another.
        let picked: Vec<Line> = outer_edges
            .windows(2)
            .map(|lines| line_at(lines[0] + (lines[1] - lines[0]) / 2))
            .collect();
        reader.prefetch_lines(&picked, 0..inner_len);
    }
    for (outer_bin, lines) in outer_edges.windows(2).enumerate() {
        let picked = lines[0] + (lines[1] - lines[0]) / 2;
        let lines = if mode == Reduce::Nearest {
            picked..picked + 1
        } else {
            lines[0]..lines[1]
        };
        for index in lines {
            let line = line_at(index);
            let mut bin = 0;
            reader.read_line(&line, 0..inner_len, |first, chunk| {
                let end = first + chunk.len() / channels;
                let mut pixel = first;
                while pixel < end && bin < inner_bins {
                    let stop = inner_edges[bin + 1].min(end);
                    let block = &chunk[(pixel - first) * channels..(stop - first) * channels];
                    let cell = cell_of(outer_bin, bin);
                    match mode {
                        Reduce::Mean => {
                            for channel in 0..channels {
                                let (sum, count) = sum_non_nan(block, channel, channels);
                                values[cell + channel] += sum;
                                counts[cell + channel] += count;
                            }
                        }
                        Reduce::Max | Reduce::Min => {
                            for channel in 0..channels {
                                let extreme =
                                    extreme_non_nan(block, channel, channels, mode == Reduce::Max);
                                let slot = &mut values[cell + channel];
                                // f64::max/min return the other operand for NaN: nanmax/nanmin.
                                *slot = if mode == Reduce::Max {
                                    slot.max(extreme)
                                } else {
                                    slot.min(extreme)
                                };
                            }
                        }
                        Reduce::Nearest => {
                            let bin_start = inner_edges[bin];
                            let centre = bin_start + (inner_edges[bin + 1] - bin_start) / 2;
                            if (pixel..stop).contains(&centre) {
                                let at = (centre - first) * channels;
                                values[cell..cell + channels]
                                    .copy_from_slice(&chunk[at..at + channels]);
                            }
                        }
                    }
                    pixel = stop;
                    if stop == inner_edges[bin + 1] {
                        bin += 1;
                    }
                }
            })?;
        }
    }
    if mode == Reduce::Mean {
        for (value, &count) in values.iter_mut().zip(&counts) {
            *value = if count == 0 {
                f64::NAN
            } else {
                *value / f64::from(count)
            };
        }
    }
    Ok(Grid {
        rows: out_rows,
        cols: out_cols,
        channels,
        values,
    })
}

/// Sum and count of the non-NaN values of one channel, in independent lanes
/// so the loop vectorises.
#[inline]
fn sum_non_nan(block: &[f64], channel: usize, channels: usize) -> (f64, u32) {
    if channels != 1 {
        let (mut sum, mut count) = (0.0, 0u32);
        for &value in block.iter().skip(channel).step_by(channels) {
            if !value.is_nan() {
                sum += value;
                count += 1;
            }
        }
        return (sum, count);
    }
    const LANES: usize = 8;
    let mut sums = [0f64; LANES];
    let mut counts = [0u32; LANES];
    let groups = block.chunks_exact(LANES);
    let rest = groups.remainder();
    for group in groups {
        for lane in 0..LANES {
            let value = group[lane];
            let nan = value.is_nan();
            sums[lane] += if nan { 0.0 } else { value };
            counts[lane] += u32::from(!nan);
        }
    }
    for (lane, &value) in rest.iter().enumerate() {
        let nan = value.is_nan();
        sums[lane] += if nan { 0.0 } else { value };
        counts[lane] += u32::from(!nan);
    }
    (sums.iter().sum(), counts.iter().sum())
}

/// The largest (or smallest) non-NaN value of one channel, NaN when there is
/// none; independent lanes of plain comparisons (NaN compares false, so it is
/// skipped) let the loop vectorise.
#[inline]
fn extreme_non_nan(block: &[f64], channel: usize, channels: usize, largest: bool) -> f64 {
    let better = |a: f64, b: f64| if largest { a > b } else { a < b };
    let start = if largest {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    let mut seen = false;
    let mut best = start;
    if channels != 1 {
        for &value in block.iter().skip(channel).step_by(channels) {
            seen |= !value.is_nan();
            if better(value, best) {
                best = value;
            }
        }
    } else {
        const LANES: usize = 8;
        let mut lanes = [start; LANES];
        let mut seen_lanes = [false; LANES];
        let groups = block.chunks_exact(LANES);
        let rest = groups.remainder();
        for group in groups {
            for lane in 0..LANES {
                let value = group[lane];
                seen_lanes[lane] |= !value.is_nan();
                lanes[lane] = if better(value, lanes[lane]) {
                    value
                } else {
                    lanes[lane]
                };
            }
        }
        for &value in rest.iter().chain(&lanes) {
            if better(value, best) {
                best = value;
            }
        }
        seen = seen_lanes.iter().any(|&s| s) || rest.iter().any(|v| !v.is_nan());
    }
    if seen { best } else { f64::NAN }
}

/// NaN and infinity counts of what was read (`--json`: `nan`, `posinf`,
/// `neginf`, numpy's `nan_to_num` names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Specials {
    pub nan: u64,
    #[serde(rename = "posinf")]
    pub pos_inf: u64,
    #[serde(rename = "neginf")]
    pub neg_inf: u64,
}

impl Specials {
    fn count(&mut self, value: f64) {
        if value.is_nan() {
            self.nan += 1;
        } else if value == f64::INFINITY {
            self.pos_inf += 1;
        } else if value == f64::NEG_INFINITY {
            self.neg_inf += 1;
        }
    }
}

/// One pixel column of a line plot: the first and last finite samples (to
/// join neighbouring columns) and the extremes between them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Column {
    pub first: f64,
    pub last: f64,
    pub min: f64,
    pub max: f64,
}

/// A 1-D array reduced to `columns` pixel columns.
#[derive(Clone, Debug, PartialEq)]
pub struct Envelope {
    /// `None` where a column has no finite sample.
    pub columns: Vec<Option<Column>>,
    /// Sample index range of each column.
    pub edges: Vec<usize>,
    pub specials: Specials,
}

/// Reduces the `len` samples of `line` to at most `columns` columns of
/// min/max envelope (one column per sample when there are fewer samples),
/// so a single spike among millions still reaches its column's extreme.
pub fn envelope(
    reader: &mut Reader,
    line: &Line,
    len: usize,
    columns: usize,
) -> anyhow::Result<Envelope> {
    let columns = columns.min(len).max(1);
    let edges = edges(len, columns);
    let mut out = vec![None::<Column>; columns];
    let mut specials = Specials::default();
    let mut bin = 0;
    reader.read_line(line, 0..len, |first, chunk| {
        for (i, &value) in chunk.iter().enumerate() {
            let sample = first + i;
            while sample >= edges[bin + 1] {
                bin += 1;
            }
            specials.count(value);
            if !value.is_finite() {
                continue;
            }
            let column = out[bin].get_or_insert(Column {
                first: value,
                last: value,
                min: value,
                max: value,
            });
            column.last = value;
            column.min = column.min.min(value);
            column.max = column.max.max(value);
        }
    })?;
    Ok(Envelope {
        columns: out,
        edges,
        specials,
    })
}

/// Bin counts over equal-width bins, exactly as `numpy.histogram` assigns
/// values (edges from `linspace`, the last bin closed, NaN and ±inf left out).
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    pub edges: Vec<f64>,
    pub counts: Vec<u64>,
    pub specials: Specials,
}

impl Histogram {
    /// Empty bins over `lo..=hi`; equal bounds widen by 0.5 each way, as numpy does.
    pub fn new(lo: f64, hi: f64, bins: usize) -> Histogram {
        let (lo, hi) = if lo == hi {
            (lo - 0.5, hi + 0.5)
        } else {
            (lo, hi)
        };
        // numpy.linspace: start + i * step, the last edge exactly `hi` (where
        // `hi - lo` overflows numpy's edges are infinite: ours are `lerp`'s).
        let step = (hi - lo) / bins as f64;
        let mut edges: Vec<f64> = if step.is_finite() {
            (0..=bins).map(|i| lo + i as f64 * step).collect()
        } else {
            (0..=bins)
                .map(|i| lerp(lo, hi, i as f64, bins as f64))
                .collect()
        };
        edges[bins] = hi;
        Histogram {
            edges,
            counts: vec![0; bins],
            specials: Specials::default(),
        }
    }

    /// Counts `values` the way numpy's equal-width fast path does: scale to a
    /// bin, then correct by comparing with the edges.
    pub fn add(&mut self, values: &[f64]) {
        let bins = self.counts.len();
        let lo = self.edges[0];
        let hi = self.edges[bins];
        for &value in values {
            if !value.is_finite() {
                self.specials.count(value);
                continue;
            }
            if value < lo || value > hi {
                continue;
            }
            let mut index = ((fraction(value, lo, hi) * bins as f64) as usize).min(bins);
            if index == bins {
                index -= 1;
            }
            if value < self.edges[index] {
                index -= 1;
            } else if index != bins - 1 && value >= self.edges[index + 1] {
                index += 1;
            }
            self.counts[index] += 1;
        }
    }
}

/// Reads every element of a selection (any number of axes), line by line
/// along its most contiguous axis, handing each chunk of values to `visit`.
pub fn for_each_value(
    reader: &mut Reader,
    offset: usize,
    shape: &[usize],
    strides: &[usize],
    mut visit: impl FnMut(&[f64]),
) -> anyhow::Result<()> {
    if shape.contains(&0) {
        return Ok(());
    }
    let Some(inner) = (0..shape.len()).min_by_key(|&axis| strides[axis]) else {
        // 0-d: one element.
        let line = Line {
            base: offset,
            stride: 1,
            channels: 1,
            channel_stride: 1,
        };
        return reader.read_line(&line, 0..1, |_, values| visit(values));
    };
    // The other axes, largest stride first: the odometer below then walks
    // the lines in memory order, which a stream read forward needs.
    let mut outer: Vec<usize> = (0..shape.len()).filter(|&axis| axis != inner).collect();
    outer.sort_by_key(|&axis| std::cmp::Reverse(strides[axis]));
    let mut index = vec![0usize; outer.len()];
    loop {
        let base = offset
            + outer
                .iter()
                .zip(&index)
                .map(|(&axis, &i)| i * strides[axis])
                .sum::<usize>();
        let line = Line {
            base,
            stride: strides[inner],
            channels: 1,
            channel_stride: 1,
        };
        reader.read_line(&line, 0..shape[inner], |_, values| visit(values))?;
        // Odometer over the other axes, the smallest stride fastest.
        let mut axis = outer.len();
        loop {
            if axis == 0 {
                return Ok(());
            }
            axis -= 1;
            index[axis] += 1;
            if index[axis] < shape[outer[axis]] {
                break;
            }
            index[axis] = 0;
        }
    }
}

/// The `q`-th percentile (0..=100) of `sorted` finite values, computed as
/// `numpy.percentile`'s default (linear) method does, operation for operation.
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let virtual_index = (n - 1) as f64 * (q / 100.0);
    let previous = virtual_index.floor();
    let gamma = virtual_index - previous;
    let below = sorted[(previous as usize).min(n - 1)];
    let above = sorted[(previous as usize + 1).min(n - 1)];
    let diff = above - below;
    if diff.is_infinite() {
        // numpy's arithmetic overflows here (its percentile is ±inf or NaN).
        return Some(lerp(below, above, gamma, 1.0));
    }
    Some(if gamma >= 0.5 {
        above - diff * (1.0 - gamma)
    } else {
        below + diff * gamma
    })
}

/// `a + (b - a) * num / den` (the point `num / den` of the way from `a` to
/// `b`, in that order of operations) for finite `a` and `b` and a fraction
/// in 0..=1, finite even where `b - a`, or its product with `num`,
/// overflows (values more than `f64::MAX` apart, or a colour bar's row
/// number times 1.7e308): then computed on halves. The one home of
/// this interpolation for every range a picture spans (percentiles, bin
/// edges, colour bars).
pub fn lerp(a: f64, b: f64, num: f64, den: f64) -> f64 {
    let step = (b - a) * num / den;
    if step.is_finite() {
        a + step
    } else {
        // `b - a` or its product with `num` overflowed.
        2.0 * (a / 2.0 + (b / 2.0 - a / 2.0) * (num / den))
    }
}

/// `(v - a) / (b - a)`, where `v` lies in the range `a..b` (0 at `a`, 1 at
/// `b`), finite for finite `v`, `a` and `b` where the differences overflow
/// (then computed on halves): matplotlib's `Normalize` and numpy's
/// histogram bin search, which give NaN or 0 there.
pub fn fraction(v: f64, a: f64, b: f64) -> f64 {
    let (num, den) = (v - a, b - a);
    if num.is_finite() && den.is_finite() {
        num / den
    } else {
        (v / 2.0 - a / 2.0) / (b / 2.0 - a / 2.0)
    }
}

/// The finite values of `values`, sorted (for [`percentile`]).
pub fn sorted_finite(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut finite: Vec<f64> = values.filter(|v| v.is_finite()).collect();
    finite.sort_unstable_by(f64::total_cmp);
    finite
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_wider_than_f64_max_stay_finite() {
        let max = f64::MAX;
        // numpy's form where nothing overflows.
        assert_eq!(lerp(1.0, 3.0, 1.0, 4.0), 1.5);
        assert_eq!(percentile(&[1.0, 2.0, 3.0], 50.0), Some(2.0));
        // A colour bar over [0, MAX] (row 499 of 500) and over [-MAX, MAX].
        let row = lerp(0.0, max, 499.0, 500.0);
        assert!((row / (max / 500.0 * 499.0) - 1.0).abs() < 1e-15, "{row}");
        assert_eq!(lerp(-max, max, 250.0, 500.0), 0.0);
        assert_eq!(lerp(-max, max, 1.0, 1.0), max);
        // numpy's percentile is -inf here; ours lies between the two.
        let p98 = percentile(&[-max, max], 98.0).unwrap();
        assert!(p98.is_finite() && p98 > 0.9 * max, "{p98}");
        assert_eq!(fraction(max, -max, max), 1.0);
        assert_eq!(fraction(0.0, -max, max), 0.5);
        assert_eq!(fraction(2.0, 1.0, 3.0), 0.5);
        // Bin edges of a histogram over [-MAX, MAX] are finite and rising.
        let histogram = Histogram::new(-max, max, 4);
        let edges = &histogram.edges;
        assert!(edges.windows(2).all(|w| w[0] < w[1]), "{edges:?}");
        assert_eq!((edges[0], edges[2], edges[4]), (-max, 0.0, max));
        assert!((edges[3] / (max / 2.0) - 1.0).abs() < 1e-15, "{edges:?}");
    }

    #[test]
    fn edges_split_evenly_when_they_can() {
        assert_eq!(edges(8, 4), [0, 2, 4, 6, 8]);
        assert_eq!(edges(10, 3), [0, 3, 6, 10]);
        assert_eq!(edges(5, 5), [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn percentiles_follow_numpy_linear() {
        // np.percentile([1, 2, 3, 4], [0, 2, 50, 98, 100]) == [1, 1.06, 2.5, 3.94, 4]
        let sorted = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&sorted, 0.0), Some(1.0));
        assert_eq!(percentile(&sorted, 50.0), Some(2.5));
        assert_eq!(percentile(&sorted, 100.0), Some(4.0));
        assert!((percentile(&sorted, 2.0).unwrap() - 1.06).abs() < 1e-12);
        assert!((percentile(&sorted, 98.0).unwrap() - 3.94).abs() < 1e-12);
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn histogram_bins_like_numpy() {
        // np.histogram([0, 0.5, 1, 1.5, 2, 2, nan], bins=4) -> counts [1, 1, 1, 3]
        let mut h = Histogram::new(0.0, 2.0, 4);
        h.add(&[0.0, 0.5, 1.0, 1.5, 2.0, 2.0, f64::NAN, f64::INFINITY]);
        assert_eq!(h.edges, [0.0, 0.5, 1.0, 1.5, 2.0]);
        assert_eq!(h.counts, [1, 1, 1, 3]);
        assert_eq!(
            h.specials,
            Specials {
                nan: 1,
                pos_inf: 1,
                neg_inf: 0
            }
        );
        // All equal: numpy widens the range by 0.5 each way.
        let mut h = Histogram::new(3.0, 3.0, 2);
        h.add(&[3.0, 3.0]);
        assert_eq!(h.edges, [2.5, 3.0, 3.5]);
        assert_eq!(h.counts, [0, 2]);
    }

    #[test]
    fn extremes_skip_nans_and_keep_infinities() {
        let mut block: Vec<f64> = (0..19).map(|i| f64::from((i * 7) % 19)).collect();
        block[4] = f64::NAN;
        assert_eq!(extreme_non_nan(&block, 0, 1, true), 18.0);
        assert_eq!(extreme_non_nan(&block, 0, 1, false), 0.0);
        block[17] = f64::NEG_INFINITY;
        assert_eq!(extreme_non_nan(&block, 0, 1, false), f64::NEG_INFINITY);
        assert!(extreme_non_nan(&[f64::NAN; 11], 0, 1, true).is_nan());
        assert_eq!(extreme_non_nan(&[1.0, 9.0, 5.0, 2.0], 1, 2, false), 2.0);
    }

    #[test]
    fn sums_skip_nans_in_every_lane() {
        let mut block: Vec<f64> = (0..21).map(f64::from).collect();
        block[3] = f64::NAN;
        block[20] = f64::NAN;
        let (sum, count) = sum_non_nan(&block, 0, 1);
        assert_eq!(count, 19);
        assert_eq!(sum, (0..20).sum::<i32>() as f64 - 3.0);
        // Channel 1 of 3-channel pixels: 1, 4, 7, ...
        let (sum, count) = sum_non_nan(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 1, 3);
        assert_eq!((sum, count), (5.0, 2));
    }
}

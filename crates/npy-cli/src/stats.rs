//! Streaming statistics over native slices: count, min, max, mean, std, NaN count.
//!
//! Values arrive chunk by chunk (a few hundred KiB, so each chunk sits in
//! cache): one pass finds min, max and the sum, a second the squared
//! deviations from the chunk mean, and chunks are merged with Chan's formula.
//! That keeps std accurate on large arrays without a second pass over the file.

/// How NaNs count, as `npy stats` says in its output (scipy's name for the
/// rule: `nan_policy='omit'`): left out of every statistic, as numpy's
/// `nanmin`, `nanmax`, `nanmean` and `nanstd` leave them out.
pub const NAN_POLICY: &str = "omit";

/// What [`NAN_POLICY`] means, for the text output.
pub const NAN_POLICY_TEXT: &str =
    "left out of min, max, mean and std, as by numpy's nanmin, nanmax, nanmean, nanstd";

/// Values processed side by side in the inner loops.
const LANES: usize = 8;

/// A number type `stats` reads natively.
pub trait Sample:
    Copy + PartialOrd + zerocopy::FromBytes + zerocopy::IntoBytes + zerocopy::Immutable
{
    /// The value for mean and std.
    fn to_f64(self) -> f64;
    /// The value for min and max reports.
    fn to_number(self) -> Number;
    /// NaN (only floats have one).
    fn is_nan(self) -> bool {
        false
    }
}

macro_rules! integer_sample {
    ($($t:ty => $variant:ident),*) => {$(
        impl Sample for $t {
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn to_number(self) -> Number {
                Number::$variant(self.into())
            }
        }
    )*};
}
integer_sample!(i8 => Int, i16 => Int, i32 => Int, i64 => Int, u8 => UInt, u16 => UInt, u32 => UInt, u64 => UInt);

impl Sample for f32 {
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn to_number(self) -> Number {
        Number::Float(f64::from(self))
    }
    #[inline]
    fn is_nan(self) -> bool {
        self.is_nan()
    }
}

impl Sample for f64 {
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    fn to_number(self) -> Number {
        Number::Float(self)
    }
    #[inline]
    fn is_nan(self) -> bool {
        self.is_nan()
    }
}

/// A min or max, kept exact for integers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Int(i64),
    UInt(u64),
    Float(f64),
}

/// Count, mean and sum of squared deviations of the non-NaN values.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Moments {
    count: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    /// Chan et al.'s pairwise update: combine two disjoint parts.
    fn merge(&mut self, other: Moments) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other;
            return;
        }
        let count = self.count + other.count;
        let delta = other.mean - self.mean;
        let weight = other.count as f64 / count as f64;
        self.mean += delta * weight;
        self.m2 += other.m2 + delta * delta * self.count as f64 * weight;
        self.count = count;
    }
}

/// Folds up to [`LANES`] values into the per-lane extremes, sums and NaN counts.
#[inline(always)]
fn observe<T: Sample>(
    group: &[T],
    min: &mut [T; LANES],
    max: &mut [T; LANES],
    sum: &mut [f64; LANES],
    nan: &mut [u64; LANES],
) {
    for (lane, &value) in group.iter().enumerate() {
        let is_nan = value.is_nan();
        nan[lane] += u64::from(is_nan);
        sum[lane] += if is_nan { 0.0 } else { value.to_f64() };
        // NaN compares false, so it never becomes an extreme.
        if value < min[lane] {
            min[lane] = value;
        }
        if value > max[lane] {
            max[lane] = value;
        }
    }
}

/// Running statistics of one array.
#[derive(Clone, Debug, Default)]
pub struct Accumulator<T> {
    moments: Moments,
    nan: u64,
    min: Option<T>,
    max: Option<T>,
}

impl<T: Sample> Accumulator<T> {
    pub fn new() -> Self {
        Accumulator {
            moments: Moments::default(),
            nan: 0,
            min: None,
            max: None,
        }
    }

    /// Adds one chunk of values.
    pub fn add(&mut self, values: &[T]) {
        let Some(&first) = values.iter().find(|v| !v.is_nan()) else {
            self.nan += values.len() as u64;
            return;
        };
        // Independent lanes break the add-latency chain so the loops vectorise.
        let mut min = [first; LANES];
        let mut max = [first; LANES];
        let mut sum = [0f64; LANES];
        let mut nan = [0u64; LANES];
        let lanes = values.chunks_exact(LANES);
        let rest = lanes.remainder();
        for group in lanes {
            observe(group, &mut min, &mut max, &mut sum, &mut nan);
        }
        observe(rest, &mut min, &mut max, &mut sum, &mut nan);
        let nan: u64 = nan.iter().sum();
        let count = values.len() as u64 - nan;
        let mean = sum.iter().sum::<f64>() / count as f64;
        let mut m2 = [0f64; LANES];
        let lanes = values.chunks_exact(LANES);
        let rest = lanes.remainder();
        for group in lanes {
            for lane in 0..LANES {
                let value = group[lane];
                let d = if value.is_nan() {
                    0.0
                } else {
                    value.to_f64() - mean
                };
                m2[lane] += d * d;
            }
        }
        for &value in rest {
            if !value.is_nan() {
                let d = value.to_f64() - mean;
                m2[0] += d * d;
            }
        }
        let min = min
            .into_iter()
            .fold(first, |a, b| if b < a { b } else { a });
        let max = max
            .into_iter()
            .fold(first, |a, b| if b > a { b } else { a });
        self.nan += nan;
        self.min = Some(self.min.map_or(min, |m| if min < m { min } else { m }));
        self.max = Some(self.max.map_or(max, |m| if max > m { max } else { m }));
        self.moments.merge(Moments {
            count,
            mean,
            m2: m2.iter().sum(),
        });
    }

    pub fn finish(&self) -> Report {
        let count = self.moments.count;
        let mut mean = (count > 0).then_some(self.moments.mean);
        let mut std = (count > 0).then(|| (self.moments.m2 / count as f64).sqrt());
        // Infinities (the extremes say whether there are any): numpy's
        // nanmean is that infinity, NaN when both signs are there (their
        // sum), and nanstd is NaN (a deviation from an infinite mean is
        // inf - inf). Chan's merge of chunk means would say NaN for the mean
        // too, as soon as a chunk without the infinity is merged.
        let low = self.min.is_some_and(|v| v.to_f64() == f64::NEG_INFINITY);
        let high = self.max.is_some_and(|v| v.to_f64() == f64::INFINITY);
        if low || high {
            mean = Some(match (low, high) {
                (true, true) => f64::NAN,
                (true, false) => f64::NEG_INFINITY,
                _ => f64::INFINITY,
            });
            std = Some(f64::NAN);
        }
        Report {
            count: count + self.nan,
            nan: self.nan,
            min: self.min.map(Sample::to_number),
            max: self.max.map(Sample::to_number),
            mean,
            std,
        }
    }
}

/// The statistics `npy stats` prints. min, max, mean and std leave NaNs out
/// (like numpy's `nanmin`, `nanmax`, `nanmean`, `nanstd` with ddof=0: the
/// rule [`NAN_POLICY`] names); `None` when there is no non-NaN value.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub count: u64,
    pub nan: u64,
    pub min: Option<Number>,
    pub max: Option<Number>,
    pub mean: Option<f64>,
    pub std: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_merge_to_the_whole() {
        let values: Vec<f64> = (0..10_000)
            .map(|i| ((i * 7919) % 1000) as f64 * 0.5 - 3.0)
            .collect();
        let mut whole = Accumulator::new();
        whole.add(&values);
        let mut chunked = Accumulator::new();
        for chunk in values.chunks(333) {
            chunked.add(chunk);
        }
        let (a, b) = (whole.finish(), chunked.finish());
        assert_eq!(a.count, b.count);
        assert_eq!(a.min, b.min);
        assert_eq!(a.max, b.max);
        assert!((a.mean.unwrap() - b.mean.unwrap()).abs() < 1e-9);
        assert!((a.std.unwrap() - b.std.unwrap()).abs() < 1e-9);
        // numpy: np.std of this array.
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64;
        assert!((b.std.unwrap() - var.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn nans_are_counted_and_left_out() {
        let mut acc = Accumulator::new();
        acc.add(&[f32::NAN, 1.0, 3.0]);
        acc.add(&[f32::NAN]);
        let report = acc.finish();
        assert_eq!(report.count, 4);
        assert_eq!(report.nan, 2);
        assert_eq!(report.min, Some(Number::Float(1.0)));
        assert_eq!(report.max, Some(Number::Float(3.0)));
        assert_eq!(report.mean, Some(2.0));
        assert_eq!(report.std, Some(1.0));
    }

    #[test]
    fn infinities_make_the_mean_infinite_and_std_nan_as_numpys_nan_functions() {
        // np.nanmean([1, inf, nan, 2]) == inf, np.nanstd(...) is nan; with
        // -inf too the mean is nan (inf + -inf). Chunks without the
        // infinity merged after it must not turn the mean into NaN.
        let mut acc = Accumulator::new();
        acc.add(&[1.0, f64::INFINITY, f64::NAN]);
        acc.add(&[2.0, 3.0]);
        let report = acc.finish();
        assert_eq!(report.mean, Some(f64::INFINITY));
        assert!(report.std.unwrap().is_nan());
        assert_eq!(report.max, Some(Number::Float(f64::INFINITY)));
        assert_eq!(report.min, Some(Number::Float(1.0)));
        acc.add(&[f64::NEG_INFINITY]);
        assert!(acc.finish().mean.unwrap().is_nan());
        let mut low = Accumulator::new();
        low.add(&[f32::NEG_INFINITY, 0.0]);
        low.add(&[5.0]);
        assert_eq!(low.finish().mean, Some(f64::NEG_INFINITY));
    }

    #[test]
    fn integers_keep_exact_extremes() {
        let mut acc = Accumulator::new();
        acc.add(&[u64::MAX, 0, 5]);
        let report = acc.finish();
        assert_eq!(report.min, Some(Number::UInt(0)));
        assert_eq!(report.max, Some(Number::UInt(u64::MAX)));
        let mut acc = Accumulator::new();
        acc.add(&[i64::MIN, 7]);
        assert_eq!(acc.finish().min, Some(Number::Int(i64::MIN)));
    }

    #[test]
    fn an_empty_array_has_no_extremes() {
        let report = Accumulator::<f64>::new().finish();
        assert_eq!(report.count, 0);
        assert_eq!(report.min, None);
        assert_eq!(report.mean, None);
    }
}

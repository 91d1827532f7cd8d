//! Floating-point text exactly like numpy's array printing (`floatmode='maxprec'`,
//! `precision=8`) and its scalar `str()`.
//!
//! numpy prints with Dragon4: the shortest digits that identify the value in
//! its own type, cut at 8 fractional digits, where extra or fewer digits are
//! the correctly rounded digits of the exact binary value. Rust's formatter
//! gives the same two things: `{}`/`{:e}` is shortest-round-trip for `f32`
//! and `f64`, and `{:.N}`/`{:.Ne}` rounds the exact value. Half floats have
//! no Rust formatter, so their shortest digits are searched (at most 5).

/// Which IEEE type the values came from: decides the shortest digits and
/// numpy's cutoffs for switching to scientific notation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatWidth {
    /// `f2`
    Half,
    /// `f4`
    Single,
    /// `f8`
    Double,
    /// `f12`/`f16`, printed from its nearest `f64` (the CLI has no wider
    /// type): digits are those of an `f64` value widened to long double.
    Long,
}

/// numpy's `precision` print option.
const PRECISION: usize = 8;

impl FloatWidth {
    /// Rounds `x` to the nearest value of this width (as numpy's arithmetic in
    /// that dtype would).
    pub fn round(self, x: f64) -> f64 {
        match self {
            FloatWidth::Half => round_to_half(x),
            FloatWidth::Single => x as f32 as f64,
            FloatWidth::Double | FloatWidth::Long => x,
        }
    }

    /// `10 ** min(8, finfo.precision)`: numpy's array cutoff for scientific notation.
    fn array_exp_cutoff(self) -> f64 {
        match self {
            FloatWidth::Half => 1e3,
            FloatWidth::Single => 1e6,
            FloatWidth::Double | FloatWidth::Long => 1e8,
        }
    }

    /// The upper bound of positional notation for a scalar's `str()`.
    fn scalar_exp_cutoff(self) -> f64 {
        match self {
            FloatWidth::Half => 1e3,
            FloatWidth::Single => 1e6,
            FloatWidth::Double | FloatWidth::Long => 1e16,
        }
    }

    /// Shortest scientific digits that read back as `x` in this width:
    /// `(digits, exponent)` meaning `d.ddd × 10^exponent`. `x` finite.
    fn shortest(self, x: f64) -> (String, i32) {
        match self {
            FloatWidth::Half => shortest_half(x),
            FloatWidth::Single => split_scientific(&format!("{:e}", x as f32)),
            FloatWidth::Double => split_scientific(&format!("{x:e}")),
            FloatWidth::Long => shortest_long(x),
        }
    }
}

/// Rounds to the nearest IEEE binary16 value, ties to even, overflowing to infinity.
fn round_to_half(x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let magnitude = x.abs();
    let exponent = ((magnitude.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    // 11 significant bits; below the smallest normal (2^-14) the step is fixed at 2^-24.
    let step = 2f64.powi(exponent.max(-14) - 10);
    let rounded = (magnitude / step).round_ties_even() * step;
    let rounded = if rounded >= 65536.0 {
        f64::INFINITY
    } else {
        rounded
    };
    rounded.copysign(x)
}

/// Long double data is mostly `f64` values widened (`np.array(floats,
/// dtype=np.longdouble)`). Such a value needs about 20 digits to be told
/// apart from its long double neighbours unless its short `f64` digits are
/// exact (1.5, 0.25), so numpy prints it with all the digits it allows.
fn shortest_long(x: f64) -> (String, i32) {
    let (digits, exponent) = split_scientific(&format!("{x:e}"));
    let significant = digits.trim_start_matches('-').len();
    let longer = format!("{x:.precision$e}", precision = significant + 24);
    let (longer_digits, _) = split_scientific(&longer);
    let exact = longer_digits.trim_start_matches('-')[significant..]
        .bytes()
        .all(|b| b == b'0');
    if exact {
        (digits, exponent)
    } else {
        split_scientific(&format!("{x:.20e}"))
    }
}

/// Splits Rust's `{:e}` output (`-1.25e-7`) into sign-kept digits and exponent.
fn split_scientific(text: &str) -> (String, i32) {
    let (mantissa, exponent) = text.split_once('e').expect("`{:e}` output has an 'e'");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    (
        digits,
        exponent.parse().expect("`{:e}` exponent is an integer"),
    )
}

fn shortest_half(x: f64) -> (String, i32) {
    // binary16 needs at most 5 significant digits to round-trip.
    for fraction_digits in 0..5 {
        let nearest = split_scientific(&format!("{x:.fraction_digits$e}"));
        if round_to_half(parse_scientific(&nearest)) == x {
            return nearest;
        }
        // Next to a power of two the rounding interval is lopsided: the nearest
        // decimal may miss while the one on the other side of `x` still reads back.
        if let Some(other) = neighbour(&nearest, parse_scientific(&nearest) < x)
            && round_to_half(parse_scientific(&other)) == x
        {
            return other;
        }
    }
    split_scientific(&format!("{x:.4e}"))
}

fn parse_scientific((digits, exponent): &(String, i32)) -> f64 {
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", digits.as_str()),
    };
    let fraction_digits = digits.len() as i32 - 1;
    format!("{sign}{digits}e{}", exponent - fraction_digits)
        .parse()
        .expect("digits and exponent form a float")
}

/// The decimal with the same number of digits one unit away from `nearest`
/// (`up` in magnitude or not), when it keeps the digit count.
fn neighbour((digits, exponent): &(String, i32), up: bool) -> Option<(String, i32)> {
    let negative = digits.starts_with('-');
    let magnitude: u64 = digits.trim_start_matches('-').parse().ok()?;
    let width = digits.trim_start_matches('-').len();
    let away_from_zero = up != negative;
    let moved = if away_from_zero {
        magnitude + 1
    } else {
        magnitude.checked_sub(1)?
    };
    let moved = moved.to_string();
    if moved.len() != width {
        return None;
    }
    Some((
        format!("{}{moved}", if negative { "-" } else { "" }),
        *exponent,
    ))
}

/// Positional digits of `x`: shortest, cut to at most `PRECISION` fractional
/// digits, trailing zeros trimmed but the point kept (`"1."`, `"-0.25"`).
fn positional(width: FloatWidth, x: f64) -> String {
    let (digits, exponent) = width.shortest(x);
    let significant = digits.trim_start_matches('-').len() as i32;
    if significant - 1 - exponent > PRECISION as i32 {
        trim_zeros_keep_point(&format!("{x:.PRECISION$}"))
    } else {
        digits_to_positional(&digits, exponent)
    }
}

/// `("-125", -1)` (meaning -1.25e-1) becomes `"-0.125"`; always with a point.
fn digits_to_positional(digits: &str, exponent: i32) -> String {
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", digits),
    };
    let text = if exponent >= 0 {
        let int_len = exponent as usize + 1;
        if digits.len() <= int_len {
            format!("{digits}{}.", "0".repeat(int_len - digits.len()))
        } else {
            format!("{}.{}", &digits[..int_len], &digits[int_len..])
        }
    } else {
        format!("0.{}{digits}", "0".repeat((-exponent - 1) as usize))
    };
    format!("{sign}{}", trim_zeros_keep_point(&text))
}

fn trim_zeros_keep_point(text: &str) -> String {
    match text.split_once('.') {
        Some((int, frac)) => format!("{int}.{}", frac.trim_end_matches('0')),
        None => format!("{text}."),
    }
}

/// Scientific parts of `x` with exactly `fraction_digits` mantissa digits after
/// the point, rounded from the exact value: `("-1", "2500", -7)`.
fn scientific_parts(x: f64, fraction_digits: usize) -> (String, String, i32) {
    let text = format!("{x:.fraction_digits$e}");
    let (mantissa, exponent) = text.split_once('e').expect("`{:e}` output has an 'e'");
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    (
        int.to_string(),
        frac.to_string(),
        exponent.parse().expect("`{:e}` exponent is an integer"),
    )
}

fn exponent_text(exponent: i32, digits: usize) -> String {
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{sign}{:0digits$}", exponent.unsigned_abs())
}

/// numpy's `FloatingFormat` for one array: every element padded to a common width.
#[derive(Clone, Debug)]
pub struct FloatFormat {
    width: FloatWidth,
    scientific: bool,
    /// Fractional mantissa digits in scientific mode.
    precision: usize,
    pad_left: usize,
    pad_right: usize,
    exp_size: usize,
    /// Show `+` on non-negative values (the imaginary part of complex numbers).
    plus: bool,
}

impl FloatFormat {
    /// Chooses notation and paddings from every value that will be printed.
    pub fn new(width: FloatWidth, values: &[f64], plus: bool) -> FloatFormat {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let mut format = FloatFormat {
            width,
            scientific: false,
            precision: PRECISION,
            pad_left: 0,
            pad_right: 0,
            exp_size: 0,
            plus,
        };
        let nonzero = finite.iter().map(|v| v.abs()).filter(|v| *v != 0.0);
        let (min, max) = nonzero.fold((f64::INFINITY, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        if max > 0.0 {
            // numpy compares in the array's own dtype.
            let ratio = width.round(max / min);
            format.scientific =
                max >= width.array_exp_cutoff() || min < width.round(1e-4) || ratio > 1000.0;
        }
        let sign = |x: f64| {
            if plus && x.is_sign_positive() {
                "+"
            } else {
                ""
            }
        };
        if finite.is_empty() {
            format.exp_size = 0;
        } else if format.scientific {
            let mut precision = 0;
            let mut exp_size = 2;
            let mut pad_left = 0;
            for &x in &finite {
                let (digits, exponent) = width.shortest(x);
                let significant = digits.trim_start_matches('-').len();
                precision = precision.max((significant - 1).min(PRECISION));
                exp_size = exp_size.max(exponent.unsigned_abs().to_string().len());
                pad_left = pad_left.max(sign(x).len() + usize::from(x.is_sign_negative()) + 1);
            }
            format.precision = precision;
            format.exp_size = exp_size;
            format.pad_left = pad_left;
            format.pad_right = exp_size + 2 + precision;
        } else {
            for &x in &finite {
                let text = positional(width, x);
                let (int, frac) = text.split_once('.').expect("positional text has a point");
                format.pad_left = format.pad_left.max(sign(x).len() + int.len());
                format.pad_right = format.pad_right.max(frac.len());
            }
        }
        if finite.len() != values.len() {
            let negative_infinity = plus || values.contains(&f64::NEG_INFINITY);
            let offset = format.pad_right + 1;
            format.pad_left = format
                .pad_left
                .max(3usize.saturating_sub(offset))
                .max((3 + usize::from(negative_infinity)).saturating_sub(offset));
        }
        format
    }

    /// One element, padded.
    pub fn format(&self, x: f64) -> String {
        let sign = if self.plus && x.is_sign_positive() {
            "+"
        } else {
            ""
        };
        if !x.is_finite() {
            let text = if x.is_nan() {
                format!("{sign}nan")
            } else if x < 0.0 {
                "-inf".to_string()
            } else {
                format!("{sign}inf")
            };
            let total = self.pad_left + self.pad_right + 1;
            return format!("{text:>total$}");
        }
        if self.scientific {
            let (int, frac, exponent) = scientific_parts(x, self.precision);
            let int = format!("{sign}{int}");
            format!(
                "{int:>pad$}.{frac}e{}",
                exponent_text(exponent, self.exp_size),
                pad = self.pad_left
            )
        } else {
            let text = positional(self.width, x);
            let (int, frac) = text.split_once('.').expect("positional text has a point");
            let int = format!("{sign}{int}");
            format!(
                "{int:>left$}.{frac:<right$}",
                left = self.pad_left,
                right = self.pad_right
            )
        }
    }
}

/// How a lone float reads in numpy's scalar `str()`; `trim_point` drops a
/// bare `.0` as the parts of a complex scalar do (`(1+2j)`).
pub fn scalar(width: FloatWidth, x: f64, trim_point: bool) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    let magnitude = x.abs();
    if x == 0.0 || (magnitude >= 1e-4 && magnitude < width.scalar_exp_cutoff()) {
        let text = positional_unlimited(width, x);
        if trim_point {
            text.trim_end_matches('.').to_string()
        } else if text.ends_with('.') {
            format!("{text}0")
        } else {
            text
        }
    } else {
        let (digits, exponent) = width.shortest(x);
        let (sign, digits) = match digits.strip_prefix('-') {
            Some(rest) => ("-", rest),
            None => ("", digits.as_str()),
        };
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        format!("{sign}{first}{point}{rest}e{}", exponent_text(exponent, 2))
    }
}

/// Shortest positional digits without the 8-digit cut (scalar `str()`).
fn positional_unlimited(width: FloatWidth, x: f64) -> String {
    let (digits, exponent) = width.shortest(x);
    digits_to_positional(&digits, exponent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(width: FloatWidth, values: &[f64]) -> Vec<String> {
        let format = FloatFormat::new(width, values, false);
        values.iter().map(|v| format.format(*v)).collect()
    }

    // Expected strings are numpy 2.4's `str(np.array(values, dtype))` elements.
    #[test]
    fn positional_arrays_pad_to_a_common_width() {
        assert_eq!(
            array(FloatWidth::Double, &[1.5, 2.25, 3.0]),
            ["1.5 ", "2.25", "3.  "]
        );
        assert_eq!(
            array(FloatWidth::Double, &[1.0, 1000.0]),
            ["   1.", "1000."]
        );
        assert_eq!(array(FloatWidth::Double, &[-1.0, -0.0]), ["-1.", "-0."]);
        assert_eq!(
            array(FloatWidth::Double, &[1.0 / 3.0, 2.0 / 3.0]),
            ["0.33333333", "0.66666667"]
        );
        assert_eq!(array(FloatWidth::Double, &[0.1 + 0.2]), ["0.3"]);
        assert_eq!(
            array(FloatWidth::Single, &[0.1f32 as f64, 0.2f32 as f64]),
            ["0.1", "0.2"]
        );
    }

    #[test]
    fn scientific_arrays_share_mantissa_digits() {
        assert_eq!(
            array(FloatWidth::Double, &[0.1, 1e-5]),
            ["1.e-01", "1.e-05"]
        );
        assert_eq!(
            array(FloatWidth::Double, &[1.0, 1000.1]),
            ["1.0000e+00", "1.0001e+03"]
        );
        assert_eq!(
            array(FloatWidth::Double, &[5e-324, 1.7976931348623157e308]),
            ["4.94065646e-324", "1.79769313e+308"]
        );
        assert_eq!(
            array(FloatWidth::Single, &[1.25e7, 1.0]),
            ["1.25e+07", "1.00e+00"]
        );
        assert_eq!(
            array(FloatWidth::Single, &[999999.0, 1.0]),
            ["9.99999e+05", "1.00000e+00"]
        );
    }

    #[test]
    fn half_floats_use_their_own_shortest_digits() {
        let tenth = round_to_half(0.1);
        assert_eq!(tenth, 0.0999755859375);
        assert_eq!(
            array(FloatWidth::Half, &[tenth, round_to_half(1000.5)]),
            ["9.9976e-02", "1.0005e+03"]
        );
        assert_eq!(array(FloatWidth::Half, &[100.0, 1.0]), ["100.", "  1."]);
        assert_eq!(
            array(FloatWidth::Half, &[1000.0, 1.0]),
            ["1.e+03", "1.e+00"]
        );
        assert_eq!(scalar(FloatWidth::Half, tenth, false), "0.1");
        assert_eq!(scalar(FloatWidth::Half, 65504.0, false), "6.55e+04");
        assert_eq!(scalar(FloatWidth::Half, 1024.0, false), "1.024e+03");
        assert_eq!(round_to_half(65520.0), f64::INFINITY);
        assert_eq!(round_to_half(65519.0), 65504.0);
        assert_eq!(round_to_half(1e-8), 0.0);
        assert_eq!(round_to_half(6e-8), 2f64.powi(-24));
    }

    #[test]
    fn non_finite_values_are_right_aligned() {
        assert_eq!(
            array(FloatWidth::Double, &[f64::NAN, 1.0, f64::NEG_INFINITY]),
            [" nan", "  1.", "-inf"]
        );
        assert_eq!(
            array(FloatWidth::Double, &[f64::NAN, 1e-9]),
            ["   nan", "1.e-09"]
        );
        assert_eq!(
            array(FloatWidth::Double, &[f64::INFINITY, 1e-300, -1.5e-300]),
            ["      inf", " 1.0e-300", "-1.5e-300"]
        );
        assert_eq!(array(FloatWidth::Double, &[f64::NAN]), ["nan"]);
    }

    #[test]
    fn scalars_read_like_numpy_str() {
        assert_eq!(scalar(FloatWidth::Double, 1.0, false), "1.0");
        assert_eq!(scalar(FloatWidth::Double, 1e20, false), "1e+20");
        assert_eq!(scalar(FloatWidth::Double, 1.5e20, false), "1.5e+20");
        assert_eq!(
            scalar(FloatWidth::Double, 9999999999999998.0, false),
            "9999999999999998.0"
        );
        assert_eq!(scalar(FloatWidth::Double, 9e-5, false), "9e-05");
        assert_eq!(
            scalar(FloatWidth::Double, 0.1 + 0.2, false),
            "0.30000000000000004"
        );
        assert_eq!(scalar(FloatWidth::Double, -0.0, false), "-0.0");
        assert_eq!(scalar(FloatWidth::Single, 1e6, false), "1e+06");
        assert_eq!(scalar(FloatWidth::Single, 999999.94, false), "999999.94");
        assert_eq!(scalar(FloatWidth::Single, 1e-4f32 as f64, false), "1e-04");
        assert_eq!(scalar(FloatWidth::Double, 2.0, true), "2");
    }
}

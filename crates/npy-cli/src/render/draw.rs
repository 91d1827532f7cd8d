//! Reducing a subject's data to what one picture needs, in one streaming
//! pass (two for a histogram without a given range): the picture's size in
//! its box, the colour range, and the reduced grid, envelope or histogram.

use anyhow::bail;

use super::args::PictureArgs;
use super::colormap::Rgb;
use super::reduce::{self, Grid, Histogram, Reduce, Specials};
use super::stream::{Line, Reader};
use super::subject::{Kind, Subject};

/// Output size of a `rows × cols` picture drawn in a `width × height` box:
/// reduced (block edges as [`reduce::edges`]) until it fits, keeping the
/// aspect unless `stretch`; a small array is magnified by a whole factor.
/// Returns `(out_rows, out_cols, magnification)`.
fn fit(
    rows: usize,
    cols: usize,
    width: usize,
    height: usize,
    stretch: bool,
) -> (usize, usize, usize) {
    let (out_rows, out_cols) = if stretch {
        (rows.min(height), cols.min(width))
    } else if rows <= height && cols <= width {
        (rows, cols)
    } else {
        let factor = (cols as f64 / width as f64).max(rows as f64 / height as f64);
        let side =
            |n: usize, limit: usize| ((n as f64 / factor).round() as usize).clamp(1, n.min(limit));
        (side(rows, height), side(cols, width))
    };
    let magnify = (width / out_cols).min(height / out_rows).max(1);
    (out_rows, out_cols, magnify)
}

/// The most a heat map's sides may differ: 4 to 1. Keeping the array's
/// aspect beyond that would draw a (8400000, 64) array as a strip one pixel
/// wide; instead its short side is stretched to a quarter of the long side
/// (each drawn pixel a rectangle, the columns, or rows, all shown when
/// there are few enough). Images keep their aspect.
const MAX_ASPECT: usize = 4;

/// A heat map's size from [`fit`]'s: a side shorter than a quarter of the
/// other is widened ([`MAX_ASPECT`]), with more columns (rows) of the
/// array where it has them and wider pixels where it does not. Returns
/// `(out_rows, out_cols, (pixel height, pixel width))`.
fn widen(
    (rows, cols): (usize, usize),
    (out_rows, out_cols, magnify): (usize, usize, usize),
) -> (usize, usize, (usize, usize)) {
    let (height, width) = (out_rows * magnify, out_cols * magnify);
    if height > MAX_ASPECT * width {
        let want = height / MAX_ASPECT;
        let out_cols = cols.min(want).max(out_cols);
        return (out_rows, out_cols, (magnify, (want / out_cols).max(1)));
    }
    if width > MAX_ASPECT * height {
        let want = width / MAX_ASPECT;
        let out_rows = rows.min(want).max(out_rows);
        return (out_rows, out_cols, ((want / out_rows).max(1), magnify));
    }
    (out_rows, out_cols, (magnify, magnify))
}

/// What the picture says about its colour range when the data chose an end
/// (a percentile): values beyond it are drawn in the end colours.
fn range_note((_, low_from): End, (_, high_from): End) -> Option<String> {
    let percentile = |from: &'static str| {
        from.strip_prefix("the ")
            .filter(|f| f.ends_with("percentile"))
    };
    match (percentile(low_from), percentile(high_from)) {
        (None, None) => None,
        (Some(_), Some(_)) => Some("colours: 2nd–98th percentile, beyond clipped".to_string()),
        (Some(low), None) => Some(format!("colours: {low}–{high_from}, beyond clipped")),
        (None, Some(high)) => Some(format!("colours: {low_from}–{high}, beyond clipped")),
    }
}

/// One end of a colour or axis range, and where it came from (`--vmin`, or
/// the data's statistic that stood in for it), for the messages.
type End = (f64, &'static str);

/// `flag`'s value, else `default` (from the data) described as `what`.
fn end(flag: Option<f64>, name: &'static str, default: f64, what: &'static str) -> End {
    match flag {
        Some(value) => (value, name),
        None => (default, what),
    }
}

/// The colour range: `--vmin`/`--vmax`, else the 2nd/98th percentile of the
/// drawn values (bools: 0 and 1).
fn colour_range(picture: &PictureArgs, is_bool: bool, drawn: &[f64]) -> (End, End) {
    if is_bool {
        return (
            end(picture.vmin, "--vmin", 0.0, "False"),
            end(picture.vmax, "--vmax", 1.0, "True"),
        );
    }
    let sorted = if picture.vmin.is_none() || picture.vmax.is_none() {
        reduce::sorted_finite(drawn.iter().copied())
    } else {
        Vec::new()
    };
    let (low, high) = match (
        reduce::percentile(&sorted, 2.0),
        reduce::percentile(&sorted, 98.0),
    ) {
        (Some(low), Some(high)) => ((low, "the 2nd percentile"), (high, "the 98th percentile")),
        _ => ((0.0, "0 (nothing finite)"), (1.0, "1 (nothing finite)")),
    };
    (
        end(picture.vmin, "--vmin", low.0, low.1),
        end(picture.vmax, "--vmax", high.0, high.1),
    )
}

/// matplotlib refuses a colour range that runs backwards, and so do we (in
/// its words), and a range end that is not a finite number; the message
/// names where each end came from.
fn check_range((vmin, vmin_from): End, (vmax, vmax_from): End) -> anyhow::Result<()> {
    for (value, from) in [(vmin, vmin_from), (vmax, vmax_from)] {
        if !value.is_finite() {
            bail!("{from} must be a finite number, not {value}");
        }
    }
    if vmin > vmax {
        bail!(
            "minvalue must be less than or equal to maxvalue ({vmin_from} {vmin} is above {vmax_from} {vmax})"
        );
    }
    Ok(())
}

/// NaN and infinity counts of drawn values.
pub fn specials_of(values: &[f64]) -> Specials {
    let mut specials = Specials::default();
    for &value in values {
        if value.is_nan() {
            specials.nan += 1;
        } else if value == f64::INFINITY {
            specials.pos_inf += 1;
        } else if value == f64::NEG_INFINITY {
            specials.neg_inf += 1;
        }
    }
    specials
}

/// A heat map reduced from the data: the drawn grid and its colours.
pub struct HeatMap {
    pub grid: Grid,
    pub colours: Vec<Rgb>,
    pub vmin: f64,
    pub vmax: f64,
    /// PNG pixels per drawn pixel: (height, width).
    pub magnify: (usize, usize),
    pub block: (usize, usize),
    /// Where the colour range came from, when the data chose it.
    pub range_note: Option<String>,
}

impl HeatMap {
    /// What titles and legends add to the name: the reduction when blocks
    /// were reduced ("mean of 2×3 blocks"), and the colour range's note.
    pub fn notes(&self, reduce: Reduce) -> Vec<String> {
        let mut notes = Vec::new();
        if self.block != (1, 1) {
            let how = format!("{reduce:?}").to_lowercase();
            notes.push(format!("{how} of {}×{} blocks", self.block.0, self.block.1));
        }
        notes.extend(self.range_note.clone());
        notes
    }
}

/// Everything one picture needs, computed from the data in one pass (two for
/// a histogram without --vmin/--vmax).
pub enum Drawing {
    Heat(HeatMap),
    Image {
        grid: Grid,
        magnify: usize,
    },
    Line {
        envelope: reduce::Envelope,
        len: usize,
        range: (f64, f64),
    },
    Hist(Histogram),
}

/// Reduces the subject for a picture whose data area is at most `box_w × box_h`.
pub fn draw(
    subject: &Subject,
    reader: &mut Reader,
    picture: &PictureArgs,
    (box_w, box_h): (usize, usize),
    stretch: bool,
) -> anyhow::Result<Drawing> {
    let selection = &subject.selection;
    match subject.kind {
        Kind::Heat | Kind::Image { .. } => {
            let plane = subject.plane();
            let fitted = fit(plane.rows, plane.cols, box_w, box_h, stretch);
            if let Kind::Image { .. } = subject.kind {
                let (out_rows, out_cols, magnify) = fitted;
                let grid =
                    reduce::reduce_plane(reader, &plane, (out_rows, out_cols), picture.reduce)?;
                return Ok(Drawing::Image { grid, magnify });
            }
            let (out_rows, out_cols, magnify) = if stretch {
                (fitted.0, fitted.1, (fitted.2, fitted.2))
            } else {
                widen((plane.rows, plane.cols), fitted)
            };
            let grid = reduce::reduce_plane(reader, &plane, (out_rows, out_cols), picture.reduce)?;
            let (low, high) = colour_range(picture, subject.decoder.is_bool, &grid.values);
            check_range(low, high)?;
            let range_note = range_note(low, high);
            let (vmin, vmax) = (low.0, high.0);
            let colours = grid
                .values
                .iter()
                .map(|&value| picture.cmap.colour(value, vmin, vmax))
                .collect();
            let block = (plane.rows.div_ceil(out_rows), plane.cols.div_ceil(out_cols));
            Ok(Drawing::Heat(HeatMap {
                grid,
                colours,
                vmin,
                vmax,
                magnify,
                block,
                range_note,
            }))
        }
        Kind::Line => {
            let line = Line {
                base: selection.offset,
                stride: selection.strides[0],
                channels: 1,
                channel_stride: 1,
            };
            let len = selection.shape[0];
            let envelope = reduce::envelope(reader, &line, len, box_w)?;
            let finite = envelope.columns.iter().flatten();
            let low = finite.clone().map(|c| c.min).fold(f64::INFINITY, f64::min);
            let high = finite.map(|c| c.max).fold(f64::NEG_INFINITY, f64::max);
            let (low, high) = if low <= high {
                ((low, "the smallest value"), (high, "the largest value"))
            } else {
                ((0.0, "0 (nothing finite)"), (1.0, "1 (nothing finite)"))
            };
            let (low, high) = (
                end(picture.vmin, "--vmin", low.0, low.1),
                end(picture.vmax, "--vmax", high.0, high.1),
            );
            check_range(low, high)?;
            let range = (low.0, high.0);
            Ok(Drawing::Line {
                envelope,
                len,
                range,
            })
        }
        Kind::Hist => {
            let (lo, hi) = match (picture.vmin, picture.vmax) {
                (Some(lo), Some(hi)) => ((lo, "--vmin"), (hi, "--vmax")),
                (vmin, vmax) => {
                    // numpy.histogram's default range: the data's (finite) extremes.
                    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
                    reduce::for_each_value(
                        reader,
                        selection.offset,
                        &selection.shape,
                        &selection.strides,
                        |values| {
                            for &value in values.iter().filter(|v| v.is_finite()) {
                                lo = lo.min(value);
                                hi = hi.max(value);
                            }
                        },
                    )?;
                    let (lo, hi) = if lo <= hi {
                        ((lo, "the smallest value"), (hi, "the largest value"))
                    } else {
                        ((0.0, "0 (nothing finite)"), (1.0, "1 (nothing finite)"))
                    };
                    (
                        end(vmin, "--vmin", lo.0, lo.1),
                        end(vmax, "--vmax", hi.0, hi.1),
                    )
                }
            };
            // numpy.histogram's checks of its range, in its words.
            let ((lo, lo_from), (hi, hi_from)) = (lo, hi);
            if lo > hi {
                bail!(
                    "max must be larger than min in range parameter. ({lo_from} {lo} is above {hi_from} {hi})"
                );
            }
            if !(lo.is_finite() && hi.is_finite()) {
                let float = |v| crate::print::scalar_float(crate::print::FloatWidth::Double, v);
                bail!(
                    "supplied range of [{}, {}] is not finite ({lo_from}, {hi_from})",
                    float(lo),
                    float(hi)
                );
            }
            let mut histogram = Histogram::new(lo, hi, picture.bins as usize);
            reduce::for_each_value(
                reader,
                selection.offset,
                &selection.shape,
                &selection.strides,
                |values| histogram.add(values),
            )?;
            Ok(Drawing::Hist(histogram))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::args::MAX_SIDE;

    #[test]
    fn pictures_fit_their_box() {
        // Reduced to the box, keeping the aspect.
        assert_eq!(fit(6000, 8000, 720, MAX_SIDE, false), (540, 720, 1));
        assert_eq!(fit(32768, 32768, 1024, 1024, false), (1024, 1024, 1));
        // Small arrays are magnified by a whole factor.
        assert_eq!(fit(300, 400, 1024, 1024, false), (300, 400, 2));
        assert_eq!(fit(1, 1, 80, 42, false), (1, 1, 42));
        // A tall array in a square box.
        assert_eq!(fit(10_000, 10, 1024, 1024, false), (1024, 1, 1));
        // Both sides given: stretched.
        assert_eq!(fit(6000, 8000, 100, 300, true), (300, 100, 1));
    }

    #[test]
    fn heat_maps_are_at_most_four_times_as_long_as_wide() {
        let heat = |rows, cols| widen((rows, cols), fit(rows, cols, 1024, 1024, false));
        // Few columns: all of them, each 32 pixels wide.
        assert_eq!(heat(200_000, 8), (1024, 8, (1, 32)));
        assert_eq!(heat(8_400_000, 64), (1024, 64, (1, 4)));
        // Many: reduced to a quarter of the height.
        assert_eq!(heat(100_000, 500), (1024, 256, (1, 1)));
        // Wide and short, the same way round.
        assert_eq!(heat(8, 200_000), (8, 1024, (32, 1)));
        // Within 4:1 the aspect is kept.
        assert_eq!(heat(300, 400), (300, 400, (2, 2)));
        assert_eq!(heat(4096, 1024), (1024, 256, (1, 1)));
    }

    #[test]
    fn colour_ranges_are_checked_like_matplotlib() {
        let (vmin, vmax) = ("--vmin", "--vmax");
        check_range((0.0, vmin), (1.0, vmax)).unwrap();
        check_range((1.0, vmin), (1.0, vmax)).unwrap();
        // matplotlib's words (Normalize), naming where each end came from.
        assert_eq!(
            check_range((2.0, vmin), (1.0, "the 98th percentile"))
                .unwrap_err()
                .to_string(),
            "minvalue must be less than or equal to maxvalue \
             (--vmin 2 is above the 98th percentile 1)"
        );
        assert_eq!(
            check_range((f64::NAN, vmin), (1.0, vmax))
                .unwrap_err()
                .to_string(),
            "--vmin must be a finite number, not NaN"
        );
    }
}

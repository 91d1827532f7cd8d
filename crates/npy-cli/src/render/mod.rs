//! Pictures of arrays: `npy render` (PNG) and `npy show --image` (terminal).
//!
//! The array is never loaded. What is drawn is chosen first (a 2-D heat map,
//! an RGB(A) image, a 1-D line, a histogram), then one streaming pass over
//! the data reduces it to the picture's size ([`reduce`]), reading through a
//! [`stream::DataSource`] so the same code serves mappings, npz members and,
//! later, ranged remote reads. Colours are matplotlib's ([`colormap`]);
//! axes and text are drawn by plotters with a bundled font ([`figure`]);
//! PNG encoding is the `png` crate's. docs/RENDER.md has the decisions.

mod colormap;
mod colormap_tables;
pub mod decode;
mod figure;
mod png;
mod reduce;
mod select;
mod stream;
mod summary;
mod terminal;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::{Args, ValueEnum};
use npy_core::{DType, ElementLocator, Header, ScalarKind, shape_repr};

use crate::progress::Progress;
use colormap::{Colormap, Rgb};
use decode::Decoder;
use png::Picture;
use reduce::{Grid, Histogram, Plane, Reduce, Specials};
use select::{IndexSpec, Selection};
use stream::{DataSource, Line, Reader};
use summary::Drawn;

/// Largest picture side `--width`/`--height` accept: the accumulators of a
/// reduced picture take 12 bytes per pixel and channel.
const MAX_SIDE: usize = 8192;

/// The smallest line or histogram figure with room for its axes and title.
const MIN_FIGURE: (usize, usize) = (200, 150);

/// Draw an array as a PNG: a heat map, an RGB(A) image, a line plot or a histogram.
#[derive(Debug, Args)]
#[command(after_help = "\
What is drawn depends on the array (after --index and --part):
  2-D numbers            heat map with a colour bar (bool: two colours)
  (H, W, 3|4) uint8      the RGB(A) image itself, byte for byte (floats in [0, 1] with --rgb)
  1-D numbers            line plot; min/max envelope per pixel column, so spikes stay visible
  --hist                 histogram of any numeric array, NaN and inf counts noted
Big arrays are never loaded: one pass over the mapping reduces them to the
picture's size (--reduce). The colour range is --vmin/--vmax, or the 2nd and
98th percentiles of the drawn values: values beyond are drawn in the end
colours, and a range the data chose is named in the title ('colours: 2nd–98th
percentile, beyond clipped'; --vmin/--vmax of the data's own min and max show
everything). NaN, +inf and -inf get their own colours (magenta, lime, cyan),
listed under the colour bar. A heat map's sides differ at most 4 to 1: a tall,
narrow array is widened (its pixels drawn as rectangles), not a thin strip.

Examples:
  npy render field.npy field.png
  npy render frames.npy frame3.png --index 3,:,:
  npy render data.npz wave.png --member signal
  npy render spectrum.npy s.png --part abs --cmap magma --vmin 0 --vmax 10
  npy render big.npy hist.png --hist --bins 200")]
pub struct RenderArgs {
    /// The .npy file (or .npz with --member).
    pub input: PathBuf,
    /// The PNG to write (replaced if it exists).
    pub output: PathBuf,
    /// The member of an .npz.
    #[arg(long, value_name = "NAME")]
    pub member: Option<String>,
    /// Only the data pixels: no title, axes or colour bar.
    #[arg(long)]
    pub bare: bool,
    /// Print what was drawn (sizes, value range, counts, histogram bins) as one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub picture: PictureArgs,
}

/// The picture options `npy render` and `npy show --image` share.
#[derive(Debug, Args)]
pub struct PictureArgs {
    /// Colormap: viridis, magma, inferno, plasma, gray or RdBu (matplotlib's;
    /// add _r to reverse).
    #[arg(long, value_name = "NAME", default_value = "viridis")]
    pub cmap: Colormap,
    /// Value drawn with the first colour (default: the 2nd percentile of the
    /// drawn values); for lines the bottom of the y axis, for histograms the
    /// first bin's edge (default: the smallest value).
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    pub vmin: Option<f64>,
    /// Value drawn with the last colour (default: the 98th percentile of the
    /// drawn values); for lines the top of the y axis, for histograms the
    /// last bin's edge (default: the largest value).
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    pub vmax: Option<f64>,
    /// How the elements of one pixel's block are combined when the array is
    /// bigger than the picture.
    #[arg(long, value_enum, default_value = "mean", value_name = "HOW")]
    pub reduce: Reduce,
    /// Which part to draw, one entry per axis: integers fix an axis, ':' keeps
    /// it (e.g. 3,:,: is the 2-D slice at index 3 of the first axis; missing
    /// trailing axes are ':').
    #[arg(long, value_name = "I,:,:", allow_hyphen_values = true)]
    pub index: Option<IndexSpec>,
    /// Which value of complex numbers to draw.
    #[arg(long, value_enum, default_value = "abs", value_name = "PART")]
    pub part: Part,
    /// Draw an (H, W, 3|4) float array in [0, 1] as an RGB(A) image
    /// (uint8 arrays of that shape are images without it).
    #[arg(long)]
    pub rgb: bool,
    /// Draw a histogram of all selected values instead.
    #[arg(long)]
    pub hist: bool,
    /// Number of equal-width histogram bins.
    #[arg(long, value_name = "N", default_value_t = 50, requires = "hist",
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub bins: u32,
    /// Width in pixels: of a heat map's or image's data (default 1024; images
    /// their own size), of the whole figure for lines and histograms (default
    /// 1024). With --image: in character cells (default: the terminal's).
    #[arg(long, value_name = "PX", value_parser = clap::value_parser!(u32).range(1..=MAX_SIDE as i64))]
    pub width: Option<u32>,
    /// Height in pixels (default: from the width and the array's aspect; 512
    /// for lines and histograms). With both --width and --height a heat map
    /// is stretched to fit.
    #[arg(long, value_name = "PX", value_parser = clap::value_parser!(u32).range(1..=MAX_SIDE as i64))]
    pub height: Option<u32>,
}

impl PictureArgs {
    /// `npy show` without `--image` prints values: picture options there are a mistake.
    pub fn refuse_without_image(&self) -> anyhow::Result<()> {
        let given = [
            (
                "--cmap",
                self.cmap != "viridis".parse().expect("a known colormap"),
            ),
            ("--vmin", self.vmin.is_some()),
            ("--vmax", self.vmax.is_some()),
            ("--reduce", self.reduce != Reduce::Mean),
            ("--index", self.index.is_some()),
            ("--part", self.part != Part::Abs),
            ("--rgb", self.rgb),
            ("--hist", self.hist),
            ("--width", self.width.is_some()),
            ("--height", self.height.is_some()),
        ];
        if let Some((name, _)) = given.iter().find(|(_, given)| *given) {
            bail!("{name} applies to pictures: add --image (or use `npy render`)");
        }
        Ok(())
    }
}

/// Which value of a complex number is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Part {
    Real,
    Imag,
    /// The magnitude, `hypot(re, im)`.
    Abs,
    /// The phase in radians, `atan2(im, re)`.
    Angle,
}

/// What a picture shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Heat,
    Image { channels: usize },
    Line,
    Hist,
}

/// An opened array and what of it is drawn.
struct Subject<'a> {
    /// The dtype of one element (a subarray dtype's base).
    element: &'a DType,
    decoder: Decoder,
    selection: Selection,
    kind: Kind,
    /// What the picture is of, for titles: file, member, shape, dtype, index.
    title: String,
}

impl<'a> Subject<'a> {
    fn new(header: &'a Header, name: &str, picture: &PictureArgs) -> anyhow::Result<Subject<'a>> {
        // The geometry comes from the header alone: the data is read later,
        // from whatever source holds it.
        let locator = ElementLocator::new(header)?;
        let element = locator.element();
        let decoder = Decoder::new(element, picture.part)?;
        let shape = locator.shape();
        // Each axis's stride in elements: where its index 1 lies (axes of one
        // element have no step; an empty array has nothing to draw).
        let strides: Vec<usize> = (0..shape.len())
            .map(|axis| {
                let mut index = vec![0; shape.len()];
                index[axis] = 1;
                locator
                    .byte_offset(&index)
                    .map_or(0, |offset| offset / decoder.itemsize())
            })
            .collect();
        let selection = Selection::new(shape, &strides, picture.index.as_ref())?;
        let is_u8 =
            matches!(element, DType::Scalar(s) if s.kind == ScalarKind::UInt && s.itemsize == 1);
        let shape = &selection.shape;
        let kind = match shape.len() {
            _ if picture.hist => Kind::Hist,
            _ if selection.len() == 0 => {
                bail!(
                    "nothing to draw: the selection has shape {} and no elements",
                    shape_repr(shape)
                )
            }
            1 => Kind::Line,
            2 => Kind::Heat,
            3 if matches!(shape[2], 3 | 4) && (is_u8 || picture.rgb) => {
                Kind::Image { channels: shape[2] }
            }
            0 => bail!("a 0-d array is one value: nothing to draw (try --hist, or `npy show`)"),
            n => bail!(
                "cannot draw a {n}-D selection of shape {}: choose a 2-D slice with --index \
                 (e.g. --index {}), or draw a histogram with --hist{}",
                shape_repr(shape),
                std::iter::repeat_n("0", n - 2)
                    .chain([":", ":"])
                    .collect::<Vec<_>>()
                    .join(","),
                if n == 3 {
                    "; (H, W, 3|4) arrays are images when uint8, or floats with --rgb"
                } else {
                    ""
                }
            ),
        };
        if picture.rgb && !matches!(kind, Kind::Image { .. }) {
            bail!(
                "--rgb draws (H, W, 3) or (H, W, 4) arrays; this selection has shape {}",
                shape_repr(shape)
            );
        }
        if picture.rgb && !is_u8 && !decoder.is_float() {
            bail!(
                "--rgb needs floats in [0, 1] (or uint8), not {} values",
                element.header_repr()
            );
        }
        let mut title = format!("{name}  {} {}", shape_repr(shape), element.descr());
        if let Some(index) = &picture.index {
            title.push_str(&format!("  [{}]", index.text()));
        }
        if decoder.is_complex() {
            title.push_str(&format!("  {:?}", picture.part).to_lowercase());
        }
        Ok(Subject {
            element,
            decoder,
            selection,
            kind,
            title,
        })
    }

    /// A reader of the selection's data; the progress bar expects `passes` reads of it.
    fn reader<'s>(
        &self,
        source: &'s mut dyn DataSource,
        picture: &PictureArgs,
        quiet: bool,
    ) -> Reader<'s> {
        // A histogram without a given range reads once for the range, once to count.
        let passes = if picture.hist && (picture.vmin.is_none() || picture.vmax.is_none()) {
            2
        } else {
            1
        };
        let bytes = (self.selection.len() * self.decoder.itemsize() * passes) as u64;
        Reader::new(
            source,
            self.element,
            self.decoder.clone(),
            Progress::bytes(bytes, "render", quiet),
        )
    }

    /// The selection as a plane of pixels (2-D, or 3-D with channels last).
    fn plane(&self) -> Plane {
        let s = &self.selection;
        Plane {
            base: s.offset,
            rows: s.shape[0],
            cols: s.shape[1],
            row_stride: s.strides[0],
            col_stride: s.strides[1],
            channels: s.shape.get(2).copied().unwrap_or(1),
            channel_stride: s.strides.get(2).copied().unwrap_or(1),
        }
    }
}

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
fn specials_of(values: &[f64]) -> Specials {
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
struct HeatMap {
    grid: Grid,
    colours: Vec<Rgb>,
    vmin: f64,
    vmax: f64,
    /// PNG pixels per drawn pixel: (height, width).
    magnify: (usize, usize),
    block: (usize, usize),
    /// Where the colour range came from, when the data chose it.
    range_note: Option<String>,
}

impl HeatMap {
    /// What titles and legends add to the name: the reduction when blocks
    /// were reduced ("mean of 2×3 blocks"), and the colour range's note.
    fn notes(&self, reduce: Reduce) -> Vec<String> {
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
enum Drawing {
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
fn draw(
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

/// `npy render`.
pub fn run(args: &RenderArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut opened = crate::source::open_array(
        &args.input,
        args.member.as_deref(),
        npy_mmap::Advice::Sequential,
    )?;
    let header = opened.header().clone();
    let name = display_name(&args.input, args.member.as_deref());
    let subject = Subject::new(&header, &name, &args.picture)?;
    stream::with_source(&mut *opened, |source| {
        render_png(args, &subject, source, out)
    })
}

/// Draws `subject` from `source` into the PNG `args` names, and with
/// `--json` says what was drawn.
fn render_png(
    args: &RenderArgs,
    subject: &Subject,
    source: &mut dyn DataSource,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let picture = &args.picture;
    let mut reader = subject.reader(source, picture, args.json);
    let width = picture.width.map(|w| w as usize);
    let height = picture.height.map(|h| h as usize);
    if let (Kind::Image { channels }, None, None) = (subject.kind, width, height) {
        // A full-size image is copied row by row: no reduction, no accumulators.
        let plane = subject.plane();
        let is_float = subject.decoder.is_float();
        png::write_image_rows(&args.output, &mut reader, &plane, channels, is_float)?;
        let drawn = Drawn::Image {
            drawn: [plane.rows, plane.cols],
            magnify: None,
        };
        return summary::write(args, subject, drawn, None, out);
    }
    let (figure_size, area) = figure_layout(args, subject.kind, width, height)?;
    let stretch = width.is_some() && height.is_some();
    let drawing = draw(subject, &mut reader, picture, area, stretch)?;
    let (image, drawn) = paint(args, subject, &drawing, figure_size)?;
    png::write_png(&args.output, &image)?;
    summary::write(args, subject, drawn, Some([image.width, image.height]), out)
}

/// The figure's size and the data area inside it: lines and histograms are
/// figures of 1024 × 512 by default; heat maps and images fit 1024 × 1024,
/// or one given side and the aspect.
fn figure_layout(
    args: &RenderArgs,
    kind: Kind,
    width: Option<usize>,
    height: Option<usize>,
) -> anyhow::Result<((usize, usize), (usize, usize))> {
    let figure_size = (width.unwrap_or(1024), height.unwrap_or(512));
    let area = match kind {
        Kind::Line | Kind::Hist => {
            let (fig_w, fig_h) = figure_size;
            if !args.bare && (fig_w < MIN_FIGURE.0 || fig_h < MIN_FIGURE.1) {
                bail!(
                    "a {fig_w}x{fig_h} figure has no room for axes (at least {}x{}); add --bare for the plot alone",
                    MIN_FIGURE.0,
                    MIN_FIGURE.1
                );
            }
            let columns = if args.bare {
                fig_w
            } else {
                figure::plot_width(fig_w)
            };
            (columns, fig_h)
        }
        Kind::Heat | Kind::Image { .. } => match (width, height) {
            (None, None) => (1024, 1024),
            (w, h) => (w.unwrap_or(MAX_SIDE), h.unwrap_or(MAX_SIDE)),
        },
    };
    Ok((figure_size, area))
}

/// The picture of `drawing`, and what the summary says of it.
fn paint<'d>(
    args: &RenderArgs,
    subject: &Subject,
    drawing: &'d Drawing,
    figure_size: (usize, usize),
) -> anyhow::Result<(Picture, Drawn<'d>)> {
    Ok(match drawing {
        Drawing::Line {
            envelope,
            len,
            range,
        } => (
            figure::line(
                &subject.title,
                envelope,
                *len,
                *range,
                figure_size,
                args.bare,
            )?,
            Drawn::Line {
                columns: envelope.columns.len(),
                range: [range.0, range.1],
                specials: envelope.specials,
            },
        ),
        Drawing::Hist(histogram) => (
            figure::histogram(&subject.title, histogram, figure_size, args.bare)?,
            Drawn::Hist {
                edges: &histogram.edges,
                counts: &histogram.counts,
                specials: histogram.specials,
            },
        ),
        Drawing::Heat(heat) => paint_heat(args, subject, heat)?,
        Drawing::Image { grid, magnify } => (
            figure::image_pixels(grid, *magnify, subject.decoder.is_float()),
            Drawn::Image {
                drawn: [grid.rows, grid.cols],
                magnify: Some(*magnify),
            },
        ),
    })
}

/// A heat map's picture: the title names the reduction and where the
/// colour range came from.
fn paint_heat<'d>(
    args: &RenderArgs,
    subject: &Subject,
    heat_map: &'d HeatMap,
) -> anyhow::Result<(Picture, Drawn<'d>)> {
    let HeatMap {
        grid,
        colours,
        vmin,
        vmax,
        magnify,
        range_note,
        ..
    } = heat_map;
    let specials = specials_of(&grid.values);
    let mut title = subject.title.clone();
    for note in heat_map.notes(args.picture.reduce) {
        title.push_str(&format!("  {note}"));
    }
    let heat = figure::Heat {
        title: &title,
        colours,
        rows: grid.rows,
        cols: grid.cols,
        magnify: *magnify,
        array_rows: subject.plane().rows,
        array_cols: subject.plane().cols,
        cmap: args.picture.cmap,
        vmin: *vmin,
        vmax: *vmax,
        is_bool: subject.decoder.is_bool,
        two_colours: subject.decoder.is_bool && grid.values.iter().all(|&v| v == 0.0 || v == 1.0),
        specials,
    };
    let image = if args.bare {
        figure::bare_heat(&heat)
    } else {
        figure::heat(&heat)?
    };
    let drawn = Drawn::Heat {
        drawn: [grid.rows, grid.cols],
        magnify: magnify.0.min(magnify.1),
        pixel: [magnify.0, magnify.1],
        range_note: range_note.as_deref(),
        vmin: *vmin,
        vmax: *vmax,
        specials,
    };
    Ok((image, drawn))
}

/// The file (and member) as titles name it.
fn display_name(path: &Path, member: Option<&str>) -> String {
    let file = path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    match member {
        Some(member) => format!("{file}:{member}"),
        None => file,
    }
}

/// `npy show --image`: the picture in the terminal, two pixels per cell.
pub fn show_image(
    path: &Path,
    member: Option<&str>,
    picture: &PictureArgs,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let mut opened = crate::source::open_array(path, member, npy_mmap::Advice::Sequential)?;
    let header = opened.header().clone();
    let name = display_name(path, member);
    let subject = Subject::new(&header, &name, picture)?;
    let (cells_w, cells_h) = terminal::size();
    let box_w = picture.width.map_or(cells_w, |w| w as usize);
    let box_h = picture
        .height
        .map_or(2 * cells_h.saturating_sub(3).max(4), |h| h as usize);
    let stretch = picture.width.is_some() && picture.height.is_some();
    let drawing = stream::with_source(&mut *opened, |source| {
        let mut reader = subject.reader(source, picture, false);
        draw(&subject, &mut reader, picture, (box_w, box_h), stretch)
    })?;
    terminal::print(out, &subject.title, picture, &drawing, (box_w, box_h))
}

#[cfg(test)]
mod tests {
    use super::*;

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

//! The PNG figures: data pixels are placed exactly (never resampled by the
//! drawing library); plotters draws the axes, ticks, titles and colour bar
//! labels around them with the bundled DejaVu Sans, so no system font is used.

use std::sync::Once;

use anyhow::anyhow;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use super::colormap::{Colormap, NAN_COLOUR, NEG_INF_COLOUR, POS_INF_COLOUR, Rgb};
use super::png::{Picture, channel_byte};
use super::reduce::{Envelope, Grid, Histogram, Specials, fraction, lerp};
use crate::print::{FloatWidth, scalar_float};

/// DejaVu Sans (matplotlib's default font), under the Bitstream Vera licence
/// in font/LICENSE-DejaVu.txt.
static FONT: &[u8] = include_bytes!("font/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";

/// Space around the data area, in pixels.
const TITLE_HEIGHT: usize = 36;
const LEFT_LABELS: usize = 64;
const BOTTOM_LABELS: usize = 36;
const RIGHT_MARGIN: usize = 24;
/// The colour bar: gap to the data, bar width, label area.
const BAR_GAP: usize = 24;
const BAR_WIDTH: usize = 22;
const BAR_LABELS: usize = 80;
/// Length of the colour bar's tick marks, between the bar and its labels.
const BAR_TICK: i32 = 6;
/// Lines are drawn in matplotlib's first colour (C0).
const LINE_COLOUR: RGBColor = RGBColor(31, 119, 180);
const TEXT_SIZE: f64 = 13.0;
const TITLE_SIZE: f64 = 15.0;

fn register() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // The bundled font is a valid TrueType file; a failure leaves text undrawn.
        let _ = register_font(FAMILY, FontStyle::Normal, FONT);
    });
}

fn drawing_error(err: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("drawing the figure failed: {err}")
}

/// A tick value on an axis spanning `span`, as text: rounded to a millionth
/// of the span (tick positions carry float noise such as 1.1e-16 for 0 or
/// 0.30000000000000004), whole numbers without a point, others as numpy
/// prints a float.
pub fn tick_text(value: f64, span: f64) -> String {
    // An axis wider than f64::MAX (from -1.7e308 to 1.7e308) spans MAX.
    let span = if span == f64::INFINITY {
        f64::MAX
    } else {
        span
    };
    let rounded = if span >= 1e6 && span.is_finite() && value.is_finite() {
        // Spans of a million and more: the same millionth of the span, in
        // significant digits (ticks of huge axes carry noise such as
        // 1.5999999999999998e308, which whole numbers would keep).
        let unit = span.log10().floor() as i32 - 6;
        let magnitude = value.abs().log10().floor() as i32;
        if value == 0.0 || magnitude < unit {
            0.0
        } else {
            let digits = (magnitude - unit) as usize;
            format!("{value:.digits$e}").parse::<f64>().unwrap_or(value) + 0.0
        }
    } else {
        let decimals = if span > 0.0 && span.is_finite() {
            (6 - span.log10().floor() as i64).clamp(0, 300) as usize
        } else {
            12
        };
        format!("{value:.decimals$}")
            .parse::<f64>()
            .unwrap_or(value)
            + 0.0
    };
    if rounded.fract() == 0.0 && rounded.abs() < 1e15 {
        return format!("{rounded:.0}");
    }
    scalar_float(FloatWidth::Double, rounded)
}

/// Index positions on an axis (whole numbers only).
fn index_text(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{:.0}", value + 0.0)
    } else {
        String::new()
    }
}

/// Width of a line or histogram plot's data area in a figure `width` wide.
pub fn plot_width(width: usize) -> usize {
    width.saturating_sub(LEFT_LABELS + RIGHT_MARGIN).max(16)
}

/// A heat map to draw.
pub struct Heat<'a> {
    pub title: &'a str,
    /// One colour per drawn pixel, row after row (`rows × cols`).
    pub colours: &'a [Rgb],
    pub rows: usize,
    pub cols: usize,
    /// Each drawn pixel becomes `magnify.0` (high) × `magnify.1` (wide) PNG
    /// pixels.
    pub magnify: (usize, usize),
    /// The size of the array the axes are numbered by.
    pub array_rows: usize,
    pub array_cols: usize,
    pub cmap: Colormap,
    pub vmin: f64,
    pub vmax: f64,
    pub is_bool: bool,
    /// Every drawn value is False or True: the colour bar is two swatches.
    pub two_colours: bool,
    pub specials: Specials,
}

/// Copies `colours` (`cols` wide), each magnified, into an RGB buffer `stride` pixels wide at `(x, y)`.
fn blit(buffer: &mut [u8], stride: usize, (x, y): (usize, usize), heat: &Heat) {
    let (my, mx) = heat.magnify;
    for (row, colours) in heat.colours.chunks_exact(heat.cols).enumerate() {
        for dy in 0..my {
            let start = ((y + row * my + dy) * stride + x) * 3;
            let out = &mut buffer[start..start + heat.cols * mx * 3];
            for (x, pixel) in out.chunks_exact_mut(3).enumerate() {
                pixel.copy_from_slice(&colours[x / mx]);
            }
        }
    }
}

/// Only the data pixels of a heat map.
pub fn bare_heat(heat: &Heat) -> Picture {
    let (width, height) = (heat.cols * heat.magnify.1, heat.rows * heat.magnify.0);
    let mut pixels = vec![0; width * height * 3];
    blit(&mut pixels, width, (0, 0), heat);
    Picture {
        width,
        height,
        channels: 3,
        pixels,
    }
}

/// The special values present, with their colours and legend text.
fn legend(specials: &Specials) -> Vec<(Rgb, String)> {
    [
        (NAN_COLOUR, "NaN", specials.nan),
        (POS_INF_COLOUR, "+inf", specials.pos_inf),
        (NEG_INF_COLOUR, "-inf", specials.neg_inf),
    ]
    .into_iter()
    .filter(|(_, _, count)| *count > 0)
    .map(|(colour, name, count)| (colour, format!("{name} ({count} px)")))
    .collect()
}

/// A heat map with its title, indexed axes and a labelled colour bar.
pub fn heat(heat: &Heat) -> anyhow::Result<Picture> {
    register();
    let (data_w, data_h) = (heat.cols * heat.magnify.1, heat.rows * heat.magnify.0);
    let legend = legend(&heat.specials);
    let legend_h = legend.len() * 20;
    let body_h = data_h.max(160 + legend_h);
    let bar_h = body_h - legend_h - if legend.is_empty() { 0 } else { 8 };
    // Wide enough for the title too (DejaVu Sans at 15 px: under 9 px a character).
    let width = (LEFT_LABELS + data_w + BAR_GAP + BAR_WIDTH + BAR_LABELS)
        .max(LEFT_LABELS + 9 * heat.title.chars().count() + RIGHT_MARGIN);
    let height = TITLE_HEIGHT + body_h + BOTTOM_LABELS;
    let mut pixels = vec![255u8; width * height * 3];
    let data_at = (LEFT_LABELS, TITLE_HEIGHT);
    let bar_x = LEFT_LABELS + data_w + BAR_GAP;
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (width as u32, height as u32))
            .into_drawing_area();
        let text = (FAMILY, TEXT_SIZE).into_font().color(&BLACK);
        root.draw_text(
            heat.title,
            &(FAMILY, TITLE_SIZE).into_font().color(&BLACK),
            (LEFT_LABELS as i32, 10),
        )
        .map_err(drawing_error)?;
        // The data area: columns left to right, rows top to bottom (y is -row).
        let (left, _) = root.split_horizontally((LEFT_LABELS + data_w) as u32);
        let mut chart = ChartBuilder::on(&left)
            .margin_top(TITLE_HEIGHT as u32)
            .margin_bottom((body_h - data_h) as u32)
            .x_label_area_size(BOTTOM_LABELS as u32)
            .y_label_area_size(LEFT_LABELS as u32)
            .build_cartesian_2d(
                0f64..heat.array_cols as f64,
                -(heat.array_rows as f64)..0f64,
            )
            .map_err(drawing_error)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(8)
            .y_labels(8)
            .label_style(text.clone())
            .x_label_formatter(&|v| index_text(*v))
            .y_label_formatter(&|v| index_text(-*v))
            .draw()
            .map_err(drawing_error)?;
        // The colour bar's axis: values bottom to top.
        let bar_area = root.margin(
            TITLE_HEIGHT as u32,
            (height - TITLE_HEIGHT - bar_h) as u32,
            bar_x as u32,
            (width - bar_x - BAR_WIDTH - BAR_LABELS) as u32,
        );
        let (low, high) = if heat.vmin < heat.vmax {
            (heat.vmin, heat.vmax)
        } else {
            (heat.vmin - 0.5, heat.vmin + 0.5)
        };
        if heat.two_colours {
            for (label, quarter) in [("True", 1), ("False", 3)] {
                let y = (TITLE_HEIGHT + bar_h * quarter / 4) as i32 - 7;
                root.draw_text(label, &text, ((bar_x + BAR_WIDTH + 6) as i32, y))
                    .map_err(drawing_error)?;
            }
        }
        let scale = axis_scale(low, high);
        let mut bar = ChartBuilder::on(&bar_area)
            .set_label_area_size(LabelAreaPosition::Right, BAR_LABELS as u32)
            .build_cartesian_2d(0f64..1f64, low / scale..high / scale)
            .map_err(drawing_error)?;
        let bool_text = |v: &f64| match *v {
            0.0 => "0 (False)".to_string(),
            1.0 => "1 (True)".to_string(),
            _ => String::new(),
        };
        let number_text = |v: &f64| tick_text(*v * scale, high - low);
        let mut mesh = bar.configure_mesh();
        // Tick marks outside the bar, and the labels after them: clear of
        // the bar, not touching it.
        mesh.disable_mesh()
            .disable_x_axis()
            .set_tick_mark_size(LabelAreaPosition::Right, BAR_TICK);
        if heat.two_colours {
            mesh.disable_y_axis();
        }
        mesh.y_labels(if heat.is_bool { 3 } else { 8 })
            .label_style(text.clone())
            .y_label_formatter(if heat.is_bool {
                &bool_text
            } else {
                &number_text
            })
            .draw()
            .map_err(drawing_error)?;
        for (i, (colour, label)) in legend.iter().enumerate() {
            let y = (TITLE_HEIGHT + bar_h + 8 + i * 20) as i32;
            let x = bar_x as i32;
            root.draw(&Rectangle::new(
                [(x, y), (x + 14, y + 14)],
                RGBColor(colour[0], colour[1], colour[2]).filled(),
            ))
            .map_err(drawing_error)?;
            root.draw_text(label, &text, (x + 20, y))
                .map_err(drawing_error)?;
        }
        root.present().map_err(drawing_error)?;
    }
    blit(&mut pixels, width, data_at, heat);
    // The colour bar: each pixel row coloured by the value at its centre
    // (two colours: True's above False's).
    for y in 0..bar_h {
        let t = (bar_h - y) as f64 - 0.5;
        let value = if heat.two_colours {
            if y < bar_h / 2 { 1.0 } else { 0.0 }
        } else {
            lerp(heat.vmin, heat.vmax, t, bar_h as f64)
        };
        let colour = heat.cmap.colour(value, heat.vmin, heat.vmax);
        for x in bar_x..bar_x + BAR_WIDTH {
            let at = ((TITLE_HEIGHT + y) * width + x) * 3;
            pixels[at..at + 3].copy_from_slice(&colour);
        }
    }
    Ok(Picture {
        width,
        height,
        channels: 3,
        pixels,
    })
}

/// The drawn pixels of an image (RGB or RGBA), magnified.
pub fn image_pixels(grid: &Grid, magnify: usize, is_float: bool) -> Picture {
    let channels = grid.channels;
    let (width, height) = (grid.cols * magnify, grid.rows * magnify);
    let mut pixels = Vec::with_capacity(width * height * channels);
    for row in grid.values.chunks_exact(grid.cols * channels) {
        let bytes: Vec<u8> = row.iter().map(|&v| channel_byte(v, is_float)).collect();
        for _ in 0..magnify {
            for pixel in bytes.chunks_exact(channels) {
                for _ in 0..magnify {
                    pixels.extend_from_slice(pixel);
                }
            }
        }
    }
    Picture {
        width,
        height,
        channels,
        pixels,
    }
}

/// Text naming the NaN and infinity counts, empty when there are none.
pub fn specials_text(specials: &Specials) -> String {
    let mut parts = Vec::new();
    for (name, count) in [
        ("NaN", specials.nan),
        ("+inf", specials.pos_inf),
        ("-inf", specials.neg_inf),
    ] {
        if count > 0 {
            parts.push(format!("{name}: {count}"));
        }
    }
    parts.join("  ")
}

/// A vertical run of line-coloured pixels: column, top row, bottom row.
type Span = (i32, i32, i32);

/// Builds a plot's chart in a `width × height` figure; `draw` draws into the
/// chart and returns pixel spans, painted exactly (not anti-aliased) last.
fn plot(
    title: &str,
    (width, height): (usize, usize),
    (x_range, y_range): (std::ops::Range<f64>, std::ops::Range<f64>),
    (x_scale, y_scale): (f64, f64),
    note: &str,
    draw: impl FnOnce(
        &mut ChartContext<
            BitMapBackend,
            Cartesian2d<
                plotters::coord::types::RangedCoordf64,
                plotters::coord::types::RangedCoordf64,
            >,
        >,
    ) -> anyhow::Result<Vec<Span>>,
) -> anyhow::Result<Picture> {
    register();
    let mut pixels = vec![255u8; width * height * 3];
    let spans = {
        let root = BitMapBackend::with_buffer(&mut pixels, (width as u32, height as u32))
            .into_drawing_area();
        let text = (FAMILY, TEXT_SIZE).into_font().color(&BLACK);
        root.draw_text(
            title,
            &(FAMILY, TITLE_SIZE).into_font().color(&BLACK),
            (LEFT_LABELS as i32, 10),
        )
        .map_err(drawing_error)?;
        let (x_span, y_span) = (
            (x_range.end - x_range.start) * x_scale,
            (y_range.end - y_range.start) * y_scale,
        );
        let mut chart = ChartBuilder::on(&root)
            .margin_top(TITLE_HEIGHT as u32)
            .margin_right(RIGHT_MARGIN as u32)
            .x_label_area_size(BOTTOM_LABELS as u32)
            .y_label_area_size(LEFT_LABELS as u32)
            .build_cartesian_2d(x_range, y_range)
            .map_err(drawing_error)?;
        chart
            .configure_mesh()
            .light_line_style(RGBColor(235, 235, 235))
            .bold_line_style(RGBColor(215, 215, 215))
            .label_style(text.clone())
            .x_label_formatter(&|v| tick_text(*v * x_scale, x_span))
            .y_label_formatter(&|v| tick_text(*v * y_scale, y_span))
            .draw()
            .map_err(drawing_error)?;
        if !note.is_empty() {
            let (x, _) = chart.plotting_area().get_pixel_range();
            root.draw_text(note, &text.color(&RGBColor(200, 0, 0)), (x.end - 200, 12))
                .map_err(drawing_error)?;
        }
        let spans = draw(&mut chart)?;
        root.present().map_err(drawing_error)?;
        spans
    };
    for (x, top, bottom) in spans {
        for y in top.min(bottom)..=bottom.max(top) {
            if (0..width as i32).contains(&x) && (0..height as i32).contains(&y) {
                let at = (y as usize * width + x as usize) * 3;
                pixels[at..at + 3].copy_from_slice(&[LINE_COLOUR.0, LINE_COLOUR.1, LINE_COLOUR.2]);
            }
        }
    }
    Ok(Picture {
        width,
        height,
        channels: 3,
        pixels,
    })
}

/// plotters' tick search never ends on an axis beyond about 1e300 (its
/// arithmetic overflows to NaN, and a NaN count of ticks is never too many):
/// such an axis is drawn in units of 1e10 (chart coordinates are values
/// divided by the scale returned) and labelled in the values' own units.
fn axis_scale(low: f64, high: f64) -> f64 {
    if low.abs().max(high.abs()) > 1e300 {
        1e10
    } else {
        1.0
    }
}

/// A range with room around it (5 % each side), never empty.
fn padded(low: f64, high: f64) -> std::ops::Range<f64> {
    if low < high {
        let pad = (high - low) * 0.05;
        low - pad..high + pad
    } else {
        low - 0.5..high + 0.5
    }
}

/// A line plot of a 1-D array: the samples joined by lines, or the min/max
/// envelope of each pixel column when there are more samples than columns.
pub fn line(
    title: &str,
    envelope: &Envelope,
    len: usize,
    (low, high): (f64, f64),
    size: (usize, usize),
    bare: bool,
) -> anyhow::Result<Picture> {
    if bare {
        return Ok(bare_line(envelope, (low, high), size));
    }
    let note = specials_text(&envelope.specials);
    let x_range = if len > 1 {
        0.0..(len - 1) as f64
    } else {
        -0.5..0.5
    };
    // The y axis in chart units (values / y_scale): 5 % beyond f64::MAX is
    // infinite, 5 % beyond f64::MAX / 1e10 is not.
    let y_scale = axis_scale(low, high);
    let y_range = padded(low / y_scale, high / y_scale);
    plot(
        title,
        size,
        (x_range, y_range),
        (1.0, y_scale),
        &note,
        |chart| {
            let samples_per_column = envelope.edges.windows(2).all(|w| w[1] - w[0] == 1);
            if samples_per_column {
                // One sample per column: join them, breaking at NaN and inf.
                let mut run = Vec::new();
                for (i, column) in envelope.columns.iter().enumerate() {
                    match column {
                        Some(c) => run.push((i as f64, c.first / y_scale)),
                        None => {
                            if !run.is_empty() {
                                draw_run(chart, std::mem::take(&mut run))?;
                            }
                        }
                    }
                }
                draw_run(chart, run)?;
                return Ok(Vec::new());
            }
            // Many samples per column: one pixel column each, spanning its extremes
            // and the step from the previous column's last sample.
            let (x_pixels, _) = chart.plotting_area().get_pixel_range();
            let columns = envelope.columns.len();
            Ok(value_spans(envelope)
                .map(|(i, top, bottom)| {
                    let x = x_pixels.start + (i * x_pixels.len() / columns) as i32;
                    let y = |value: f64| chart.backend_coord(&(0.0, value / y_scale)).1;
                    (x, y(top), y(bottom))
                })
                .collect())
        },
    )
}

/// Joins the samples of one finite run (a single sample becomes a dot).
fn draw_run(
    chart: &ChartContext<
        BitMapBackend,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    run: Vec<(f64, f64)>,
) -> anyhow::Result<()> {
    let area = chart.plotting_area();
    match run.len() {
        0 => Ok(()),
        1 => area
            .draw(&Circle::new(run[0], 2, LINE_COLOUR.filled()))
            .map_err(drawing_error),
        _ => area
            .draw(&PathElement::new(run, LINE_COLOUR.stroke_width(1)))
            .map_err(drawing_error),
    }
}

/// Only the line's pixels: a `width × height` picture, the envelope in C0 on white.
fn bare_line(
    envelope: &Envelope,
    (low, high): (f64, f64),
    (width, height): (usize, usize),
) -> Picture {
    let mut pixels = vec![255u8; width * height * 3];
    for (x, y0, y1) in line_spans(envelope, (low, high), height) {
        let x = x * width / envelope.columns.len().max(1);
        for y in y0..=y1 {
            let at = (y * width + x) * 3;
            pixels[at..at + 3].copy_from_slice(&[LINE_COLOUR.0, LINE_COLOUR.1, LINE_COLOUR.2]);
        }
    }
    Picture {
        width,
        height,
        channels: 3,
        pixels,
    }
}

/// For each envelope column with data: `(column, top row, bottom row)` of its
/// span in a picture `height` rows tall showing `low..high` (top is `high`),
/// joined to the previous column's last sample.
pub fn line_spans(
    envelope: &Envelope,
    (low, high): (f64, f64),
    height: usize,
) -> Vec<(usize, usize, usize)> {
    let (low, high) = if low < high {
        (low, high)
    } else {
        (low - 0.5, high + 0.5)
    };
    let row = |value: f64| -> usize {
        let t = fraction(value, high, low);
        ((t * (height - 1) as f64).round().max(0.0) as usize).min(height - 1)
    };
    value_spans(envelope)
        .map(|(i, top, bottom)| (i, row(top), row(bottom)))
        .collect()
}

/// For each envelope column with data: `(column, top value, bottom value)`,
/// its extremes joined to the previous column's last sample (so the line
/// stays connected); a column without data breaks the line.
fn value_spans(envelope: &Envelope) -> impl Iterator<Item = (usize, f64, f64)> + '_ {
    let mut previous_last: Option<f64> = None;
    envelope
        .columns
        .iter()
        .enumerate()
        .filter_map(move |(i, column)| {
            let Some(c) = column else {
                previous_last = None;
                return None;
            };
            let top = c.max.max(previous_last.unwrap_or(c.max));
            let bottom = c.min.min(previous_last.unwrap_or(c.min));
            previous_last = Some(c.last);
            Some((i, top, bottom))
        })
}

/// A histogram: one bar per bin, the NaN and infinity counts noted.
pub fn histogram(
    title: &str,
    histogram: &Histogram,
    size: (usize, usize),
    bare: bool,
) -> anyhow::Result<Picture> {
    let most = histogram.counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let edges = &histogram.edges;
    if bare {
        let (width, height) = size;
        let mut pixels = vec![255u8; width * height * 3];
        for (x, y) in histogram_bars(histogram, width, height) {
            for row in y..height {
                let at = (row * width + x) * 3;
                pixels[at..at + 3].copy_from_slice(&[LINE_COLOUR.0, LINE_COLOUR.1, LINE_COLOUR.2]);
            }
        }
        return Ok(Picture {
            width,
            height,
            channels: 3,
            pixels,
        });
    }
    let mut note = specials_text(&histogram.specials);
    if !note.is_empty() {
        note.push_str(" (not counted)");
    }
    let title = format!("{title}  histogram, {} bins", histogram.counts.len());
    let (first, last) = (edges[0], edges[edges.len() - 1]);
    let x_scale = axis_scale(first, last);
    plot(
        &title,
        size,
        (first / x_scale..last / x_scale, 0.0..most * 1.05),
        (x_scale, 1.0),
        &note,
        |chart| {
            chart
                .draw_series(histogram.counts.iter().enumerate().map(|(i, &count)| {
                    Rectangle::new(
                        [
                            (edges[i] / x_scale, 0.0),
                            (edges[i + 1] / x_scale, count as f64),
                        ],
                        LINE_COLOUR.filled(),
                    )
                }))
                .map_err(drawing_error)?;
            Ok(Vec::new())
        },
    )
}

/// For each pixel column of a `width × height` histogram picture, the top
/// row of its bar (columns with an empty bin are left out).
pub fn histogram_bars(histogram: &Histogram, width: usize, height: usize) -> Vec<(usize, usize)> {
    let most = histogram.counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let bins = histogram.counts.len();
    (0..width)
        .filter_map(|x| {
            let count = histogram.counts[(x * bins / width).min(bins - 1)];
            (count > 0).then(|| {
                let bar = (count as f64 / most * height as f64).round().max(1.0) as usize;
                (x, height - bar.min(height))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_tick_labels_lose_float_noise() {
        assert_eq!(tick_text(1.5999999999999998e308, 1.7e308), "1.6e+308");
        assert_eq!(tick_text(6.000000000000001e307, 1.7e308), "6e+307");
        assert_eq!(
            tick_text(-1.2000000000000002e308, f64::INFINITY),
            "-1.2e+308"
        );
        assert_eq!(tick_text(1e-300, 1.7e308), "0");
        assert_eq!(tick_text(12_345_678.0, 2e7), "12345680");
    }

    #[test]
    fn tick_labels_lose_float_noise() {
        assert_eq!(tick_text(1.1102230246251565e-16, 1.2), "0");
        assert_eq!(tick_text(0.30000000000000004, 1.0), "0.3");
        assert_eq!(tick_text(-0.0, 1.0), "0");
        assert_eq!(tick_text(2500.0, 10000.0), "2500");
        assert_eq!(tick_text(1.5e-9, 1e-8), "1.5e-09");
        assert_eq!(tick_text(-0.6000000000000001, 1.2), "-0.6");
    }
}

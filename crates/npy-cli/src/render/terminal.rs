//! `npy show --image`: pictures as truecolor half-block characters, two
//! pixels per character cell (the upper one the foreground of `▀`, the
//! lower one the background), so pixels are square on usual terminal fonts.

use std::io::Write;

use super::args::PictureArgs;
use super::colormap::{NAN_COLOUR, NEG_INF_COLOUR, POS_INF_COLOUR, Rgb};
use super::draw::{Drawing, HeatMap, specials_of};
use super::figure::{histogram_bars, line_spans, specials_text, tick_text};
use super::png::channel_byte;
use super::reduce::lerp;

/// Line and bar colour (matplotlib's C0).
const INK: Rgb = [31, 119, 180];
/// Cells of the colour scale printed under a heat map.
const SCALE_CELLS: usize = 24;

/// The terminal's size in character cells: its own when standard output is a
/// terminal, else `$COLUMNS`/`$LINES`, else 80 × 24.
pub fn size() -> (usize, usize) {
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
    };
    let from_terminal = console::Term::stdout().size_checked();
    let cols = from_terminal
        .map(|(_, c)| usize::from(c))
        .or_else(|| env("COLUMNS"))
        .unwrap_or(80);
    let rows = from_terminal
        .map(|(r, _)| usize::from(r))
        .or_else(|| env("LINES"))
        .unwrap_or(24);
    (cols.max(1), rows.max(1))
}

/// A picture of optional (transparent) pixels.
struct Canvas {
    width: usize,
    height: usize,
    pixels: Vec<Option<Rgb>>,
}

impl Canvas {
    fn new(width: usize, height: usize) -> Canvas {
        Canvas {
            width,
            height,
            pixels: vec![None; width * height],
        }
    }

    fn set(&mut self, x: usize, y: usize, colour: Rgb) {
        self.pixels[y * self.width + x] = Some(colour);
    }

    /// Writes the canvas, two pixel rows per text line; transparent pixels
    /// show the terminal's own background. Colours are sent only when they
    /// change from the previous cell, and every line ends reset.
    fn write(&self, out: &mut dyn Write) -> std::io::Result<()> {
        for y in (0..self.height).step_by(2) {
            let mut text = String::new();
            // What the terminal currently has (None: its defaults).
            let (mut fg, mut bg): (Option<Rgb>, Option<Rgb>) = (None, None);
            for x in 0..self.width {
                let top = self.pixels[y * self.width + x];
                let bottom = (y + 1 < self.height)
                    .then(|| self.pixels[(y + 1) * self.width + x])
                    .flatten();
                let (glyph, want_fg, want_bg) = match (top, bottom) {
                    (Some(t), Some(b)) => ('▀', Some(t), Some(b)),
                    (Some(t), None) => ('▀', Some(t), None),
                    (None, Some(b)) => ('▄', Some(b), None),
                    (None, None) => (' ', fg, None),
                };
                if want_fg != fg {
                    if let Some([r, g, b]) = want_fg {
                        text.push_str(&format!("\x1b[38;2;{r};{g};{b}m"));
                    }
                    fg = want_fg;
                }
                if want_bg != bg {
                    match want_bg {
                        Some([r, g, b]) => text.push_str(&format!("\x1b[48;2;{r};{g};{b}m")),
                        None => text.push_str("\x1b[49m"),
                    }
                    bg = want_bg;
                }
                text.push(glyph);
            }
            text.push_str("\x1b[0m");
            writeln!(out, "{text}")?;
        }
        Ok(())
    }
}

/// A cell of background colour, for legends.
fn swatch(colour: Rgb) -> String {
    format!(
        "\x1b[48;2;{};{};{}m \x1b[0m",
        colour[0], colour[1], colour[2]
    )
}

/// Prints `drawing` under its title, with a legend line under it.
pub fn print(
    out: &mut dyn Write,
    title: &str,
    picture: &PictureArgs,
    drawing: &Drawing,
    (width, height): (usize, usize),
) -> anyhow::Result<()> {
    writeln!(out, "{title}")?;
    match drawing {
        Drawing::Heat(heat) => {
            let HeatMap {
                grid,
                colours,
                vmin,
                vmax,
                magnify: (my, mx),
                ..
            } = heat;
            let mut canvas = Canvas::new(grid.cols * mx, grid.rows * my);
            for y in 0..canvas.height {
                for x in 0..canvas.width {
                    canvas.set(x, y, colours[(y / my) * grid.cols + x / mx]);
                }
            }
            canvas.write(out)?;
            let span = vmax - vmin;
            let mut legend = format!("{} ", tick_text(*vmin, span));
            for cell in 0..SCALE_CELLS {
                let value = lerp(*vmin, *vmax, cell as f64 + 0.5, SCALE_CELLS as f64);
                legend.push_str(&swatch(picture.cmap.colour(value, *vmin, *vmax)));
            }
            legend.push_str(&format!(" {}", tick_text(*vmax, span)));
            for note in heat.notes(picture.reduce) {
                legend.push_str(&format!("   {note}"));
            }
            let specials = specials_of(&grid.values);
            for (colour, name, count) in [
                (NAN_COLOUR, "NaN", specials.nan),
                (POS_INF_COLOUR, "+inf", specials.pos_inf),
                (NEG_INF_COLOUR, "-inf", specials.neg_inf),
            ] {
                if count > 0 {
                    legend.push_str(&format!("  {} {name}", swatch(colour)));
                }
            }
            writeln!(out, "{legend}")?;
        }
        Drawing::Image { grid, magnify } => {
            let m = *magnify;
            let channels = grid.channels;
            let is_float = picture.rgb;
            let mut canvas = Canvas::new(grid.cols * m, grid.rows * m);
            for y in 0..canvas.height {
                for x in 0..canvas.width {
                    let at = ((y / m) * grid.cols + x / m) * channels;
                    let pixel = &grid.values[at..at + channels];
                    let byte = |c: usize| channel_byte(pixel[c], is_float);
                    // Terminals have no alpha: fully transparent pixels show the background.
                    if channels == 4 && byte(3) == 0 {
                        continue;
                    }
                    canvas.set(x, y, [byte(0), byte(1), byte(2)]);
                }
            }
            canvas.write(out)?;
        }
        Drawing::Line {
            envelope,
            len,
            range,
        } => {
            let height = height.min(2 * width / 3).max(4);
            let mut canvas = Canvas::new(envelope.columns.len(), height);
            for (x, top, bottom) in line_spans(envelope, *range, height) {
                for y in top..=bottom {
                    canvas.set(x, y, INK);
                }
            }
            canvas.write(out)?;
            writeln!(
                out,
                "x: 0 .. {}   y: {} .. {}   {}",
                len.saturating_sub(1),
                tick_text(range.0, range.1 - range.0),
                tick_text(range.1, range.1 - range.0),
                specials_text(&envelope.specials)
            )?;
        }
        Drawing::Hist(histogram) => {
            let height = height.min(2 * width / 3).max(4);
            let mut canvas = Canvas::new(width, height);
            for (x, top) in histogram_bars(histogram, width, height) {
                for y in top..height {
                    canvas.set(x, y, INK);
                }
            }
            canvas.write(out)?;
            let edges = &histogram.edges;
            writeln!(
                out,
                "{} bins over {} .. {}, highest count {}   {}",
                histogram.counts.len(),
                tick_text(edges[0], edges[edges.len() - 1] - edges[0]),
                tick_text(edges[edges.len() - 1], edges[edges.len() - 1] - edges[0]),
                histogram.counts.iter().max().unwrap_or(&0),
                specials_text(&histogram.specials)
            )?;
        }
    }
    Ok(())
}

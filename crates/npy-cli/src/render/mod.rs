//! Pictures of arrays: `npy render` (PNG) and `npy show --image` (terminal).
//!
//! The array is never loaded. What is drawn is chosen first (a 2-D heat map,
//! an RGB(A) image, a 1-D line, a histogram), then one streaming pass over
//! the data reduces it to the picture's size ([`reduce`]), reading through a
//! [`stream::DataSource`] so the same code serves mappings, npz members and,
//! later, ranged remote reads. Colours are matplotlib's ([`colormap`]);
//! axes and text are drawn by plotters with a bundled font ([`figure`]);
//! PNG encoding is the `png` crate's. docs/RENDER.md has the decisions.

mod args;
mod colormap;
mod colormap_tables;
pub mod decode;
mod draw;
mod figure;
mod png;
mod reduce;
mod select;
mod stream;
mod subject;
mod summary;
mod terminal;

pub use args::{PictureArgs, RenderArgs};
pub use decode::Part;

use std::io::Write;
use std::path::Path;

use anyhow::bail;

use args::MAX_SIDE;
use draw::{Drawing, HeatMap, specials_of};
use png::Picture;
use stream::DataSource;
use subject::{Kind, Subject};
use summary::Drawn;

/// The smallest line or histogram figure with room for its axes and title.
const MIN_FIGURE: (usize, usize) = (200, 150);

/// `npy render`.
pub fn run(args: &RenderArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if !crate::source::is_stdin(&args.input) {
        crate::output::refuse_input_as_output(&args.output, [args.input.as_path()])?;
    }
    crate::output::refuse_to_replace(&args.output, args.force)?;
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
        png::write_image_rows(
            &args.output,
            args.force,
            &mut reader,
            &plane,
            channels,
            is_float,
        )?;
        let drawn = Drawn::Image {
            drawn: [plane.rows, plane.cols],
            magnify: None,
        };
        return summary::write(args, subject, drawn, None, out);
    }
    let (figure_size, area) = figure_layout(args, subject.kind, width, height)?;
    let stretch = width.is_some() && height.is_some();
    let drawing = draw::draw(subject, &mut reader, picture, area, stretch)?;
    let (image, drawn) = paint(args, subject, &drawing, figure_size)?;
    png::write_png(&args.output, args.force, &image)?;
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
        draw::draw(&subject, &mut reader, picture, (box_w, box_h), stretch)
    })?;
    terminal::print(out, &subject.title, picture, &drawing, (box_w, box_h))
}

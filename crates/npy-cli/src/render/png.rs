//! Writing pictures as PNG files (the `png` crate's encoder), replaced
//! atomically like every file the tool writes.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use super::reduce::Plane;
use super::stream::{Line, Reader};

/// An RGB or RGBA picture in memory.
pub struct Picture {
    pub width: usize,
    pub height: usize,
    pub channels: usize,
    pub pixels: Vec<u8>,
}

/// Creates `path` and writes a `width × height` PNG of `channels` 8-bit
/// channels, the rows coming from `rows` (which writes them all, in order).
fn write_png_with(
    path: &Path,
    force: bool,
    (width, height, channels): (usize, usize, usize),
    rows: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    // Written like every file the tool writes: a temporary beside it,
    // synced and renamed over it (over an existing file only when
    // `force`), removed if anything fails.
    let mut output = crate::output::create(path, force)
        .with_context(|| format!("cannot create a temporary file for {}", path.display()))?;
    {
        let width = u32::try_from(width).context("the picture is too wide for a PNG")?;
        let height = u32::try_from(height).context("the picture is too tall for a PNG")?;
        let mut encoder = png::Encoder::new(&mut output, width, height);
        encoder.set_color(if channels == 4 {
            png::ColorType::Rgba
        } else {
            png::ColorType::Rgb
        });
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header()?;
        let mut stream = writer.stream_writer()?;
        rows(&mut stream)?;
        stream.finish()?;
        writer.finish()?;
    }
    crate::output::committed(output.commit())
        .with_context(|| format!("cannot write {}", path.display()))
}

pub fn write_png(path: &Path, force: bool, picture: &Picture) -> anyhow::Result<()> {
    let size = (picture.width, picture.height, picture.channels);
    write_png_with(path, force, size, |out| Ok(out.write_all(&picture.pixels)?))
}

/// Converts one value of an image channel to its byte: uint8 values are
/// their own bytes; floats in [0, 1] scale by 255 and truncate, as
/// matplotlib's `imshow` does (outside the range clipped, NaN as 0).
pub fn channel_byte(value: f64, is_float: bool) -> u8 {
    if is_float {
        (value.clamp(0.0, 1.0) * 255.0) as u8
    } else {
        // Means of bytes round to the nearest byte; bytes themselves are exact.
        value.round().clamp(0.0, 255.0) as u8
    }
}

/// Writes the full-size image `plane` to `path` one row at a time.
pub fn write_image_rows(
    path: &Path,
    force: bool,
    reader: &mut Reader,
    plane: &Plane,
    channels: usize,
    is_float: bool,
) -> anyhow::Result<()> {
    write_png_with(path, force, (plane.cols, plane.rows, channels), |out| {
        let mut row = Vec::with_capacity(plane.cols * channels);
        for r in 0..plane.rows {
            let line = Line {
                base: plane.base + r * plane.row_stride,
                stride: plane.col_stride,
                channels,
                channel_stride: plane.channel_stride,
            };
            row.clear();
            reader.read_line(&line, 0..plane.cols, |_, values| {
                row.extend(values.iter().map(|&v| channel_byte(v, is_float)));
            })?;
            out.write_all(&row)?;
        }
        Ok(())
    })
}

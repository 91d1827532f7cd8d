//! The command-line arguments of `npy render` and the picture options it
//! shares with `npy show --image` (clap types): the bottom room of
//! `render`, read by every room above it.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;

use super::colormap::Colormap;
use super::decode::Part;
use super::reduce::Reduce;
use super::select::IndexSpec;

/// Largest picture side `--width`/`--height` accept: the accumulators of a
/// reduced picture take 12 bytes per pixel and channel.
pub const MAX_SIDE: usize = 8192;

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
    /// The PNG to write (an existing file is refused unless --force).
    pub output: PathBuf,
    /// Replace an existing OUTPUT: the new picture is written under a
    /// temporary name and renamed over it (a symbolic link is replaced
    /// itself, never written through; the input is refused even so).
    #[arg(long)]
    pub force: bool,
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

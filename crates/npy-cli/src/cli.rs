//! The command line: every subcommand, option and help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Look at, check and reshape NumPy .npy/.npz files without starting Python.
#[derive(Debug, Parser)]
#[command(
    name = "npy",
    version,
    about,
    after_help = "\
Examples:
  npy info data.npy                    header, shape, sizes
  npy info --json archive.npz          one JSON object, one entry per member
  npy validate *.npy                   exit 0 when all are valid, 1 when any is not
  npy show data.npy --rows 10:20       print rows 10..20 like numpy does
  npy stats big.npy                    count, min, max, mean, std, NaN count
  npy convert in.npy out.npy --order F --byte-order big
  npy pack out.npz a.npy b.npy --compress
  npy create zeros.npy --dtype '<f8' --shape 1000,1000
  npy render big.npy big.png           a heat map (or image, line plot) as PNG
  npy show --image big.npy             the same picture in the terminal
  npy info s3://bucket/big.npy         any reading command takes a URL
  npy cp big.npy s3://bucket/big.npy   upload (or download) and verify"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// For URLs: seconds one request to the store may take, from connecting
    /// to its last byte, before it is abandoned (a silent or dripping
    /// server); failed requests are retried only within this time too.
    #[arg(long, global = true, value_name = "SECONDS",
          default_value_t = npy_remote::StoreOptions::DEFAULT_TIMEOUT.as_secs_f64(),
          value_parser = parse_timeout)]
    pub timeout: f64,
    /// The most bytes copied from standard input (`-`): an .npz archive,
    /// or an .npy array's data, is copied to a temporary file in $TMPDIR
    /// (often memory, as tmpfs), never held in memory. K, M, G, T suffixes
    /// (binary). Default: $NPY_STDIN_LIMIT, else 4G.
    #[arg(long, global = true, value_name = "SIZE", value_parser = crate::stdin::parse_size)]
    pub stdin_limit: Option<u64>,
}

/// A timeout in seconds: a positive, finite number.
fn parse_timeout(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds < 1e9 => Ok(seconds),
        Ok(_) => Err("the timeout must be a positive number of seconds".into()),
        Err(err) => Err(err.to_string()),
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Info(InfoArgs),
    Validate(ValidateArgs),
    Show(ShowArgs),
    Stats(StatsArgs),
    Convert(ConvertArgs),
    Ls(LsArgs),
    Extract(ExtractArgs),
    Pack(PackArgs),
    Index(IndexArgs),
    Create(CreateArgs),
    Render(crate::render::RenderArgs),
    Cp(CpArgs),
    Tidy(TidyArgs),
    Virtualize(VirtualizeArgs),
}

/// Show the header of an .npy file, or the members of an .npz archive.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  npy info data.npy
  npy info --json data.npy | jq .shape
  npy info --json archive.npz | jq '.members[].name'")]
pub struct InfoArgs {
    /// The .npy or .npz file (`-`: standard input, .npy or .npz).
    pub path: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Strictly check headers, sizes and data length (every member of an .npz).
///
/// Exit status: 0 when every file is valid, 1 when any is not (one line per
/// problem on stdout, naming the file), 2 for usage or I/O errors. Stricter
/// than numpy: bytes after the data are a problem too.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  npy validate data.npy
  npy validate --max-header-size 200000 *.npy *.npz")]
pub struct ValidateArgs {
    /// Files to check (`-`: standard input, .npy or .npz).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Largest header accepted, in characters (numpy's default is 10000).
    #[arg(long, value_name = "N", default_value_t = npy_core::header::DEFAULT_MAX_HEADER_SIZE)]
    pub max_header_size: usize,
    /// Count bytes after the data (which numpy and this library ignore, and
    /// an interrupted append leaves) as a problem instead of a note.
    #[arg(long)]
    pub strict: bool,
    #[command(flatten)]
    pub pickle: PickleArgs,
}

/// numpy's `allow_pickle` and `encoding`, for object arrays (`dtype=object`).
#[derive(Debug, Args)]
pub struct PickleArgs {
    /// Decode object arrays (dtype=object) as np.load(allow_pickle=True)
    /// does, with a restricted unpickler that never runs code.
    #[arg(long)]
    pub allow_pickle: bool,
    /// How Python 2 strings in object arrays are decoded (np.load's `encoding`).
    #[arg(long, value_enum, default_value_t = PickleEncoding::Ascii, requires = "allow_pickle")]
    pub encoding: PickleEncoding,
}

/// np.load's `encoding` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PickleEncoding {
    #[value(name = "ASCII", alias = "ascii")]
    Ascii,
    Latin1,
    Bytes,
}

/// Print values the way numpy prints them.
#[derive(Debug, Args)]
#[command(after_help = "\
Big arrays are summarised with '...' like numpy (more than 1000 elements,
3 edge items per axis).

Examples:
  npy show data.npy
  npy show data.npy --rows 100:110
  npy show archive.npz --member weights
  npy show data.npy --limit 10")]
pub struct ShowArgs {
    /// The .npy or .npz file (`-`: standard input, .npy or .npz).
    pub path: PathBuf,
    /// The member of an .npz to show (as numpy's `files` lists it, or with `.npy`).
    #[arg(long, value_name = "NAME")]
    pub member: Option<String>,
    /// Only rows A to B (Python slice bounds, either may be omitted: `:10`,
    /// `5:`, `-3:`). A range reaching past the last row, or reversed, is
    /// refused rather than shown as an empty `[]`.
    #[arg(long, value_name = "A:B", allow_hyphen_values = true)]
    pub rows: Option<RowRange>,
    /// Show at most N rows (applied after --rows).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Print a truecolor picture instead of values (two pixels per character
    /// cell, as wide as the terminal or --width): see `npy render --help`.
    #[arg(long, conflicts_with_all = ["rows", "limit"])]
    pub image: bool,
    #[command(flatten)]
    pub picture: crate::render::PictureArgs,
    #[command(flatten)]
    pub pickle: PickleArgs,
}

/// The element types `npy stats` reads (its help and its refusal say so).
macro_rules! stats_types {
    () => {
        "bool, integer, float16, float32, float64, complex64 and complex128"
    };
}
pub(crate) use stats_types;

/// Count, min, max, mean, std and NaN count of a numeric array, streaming.
#[derive(Debug, Args)]
#[command(after_help = concat!("\
NaNs are counted and left out of min, max, mean and std, as numpy's
nanmin/nanmax/nanmean/nanstd leave them out; the output says so (the nan
line, and \"nan_policy\": \"omit\" in --json). An infinity makes the mean
that infinity (nan with both signs) and std nan, as in numpy. std is the
population standard deviation (ddof=0). Works on ", stats_types!(), "
arrays of either byte order, streaming in bounded memory. For
complex arrays the statistics are of one real value per element: the
magnitude (numpy's np.abs), or with --part the real or imaginary part or the
angle. mean and std are computed in float64. In --json, inf and nan are the
strings 'inf', '-inf' and 'nan', and values of an array with no numbers are
null. A stored (uncompressed) .npz member is read in place, like an .npy.

Examples:
  npy stats data.npy
  npy stats --json big.npy
  npy stats run.npz --member temps
  npy stats spectrum.npy --part real"))]
pub struct StatsArgs {
    /// The .npy file (or .npz with --member; `-`: standard input, .npy or .npz).
    pub path: PathBuf,
    /// The member of an .npz.
    #[arg(long, value_name = "NAME")]
    pub member: Option<String>,
    /// Which value of complex numbers the statistics are of (default: abs,
    /// the magnitude); complex arrays only.
    #[arg(long, value_enum, value_name = "PART")]
    pub part: Option<crate::render::Part>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Rewrite an array into another byte order, memory order or format version.
#[derive(Debug, Args)]
#[command(after_help = "\
The output header is byte-identical to what np.save writes for the result.
Without --version the version is chosen like numpy does. Object arrays
(dtype=object) need --allow-pickle: they are decoded (without running code)
and pickled again as np.save writes them, in C order or as they are.

The output replaces OUTPUT whole (a temporary file beside it, synced to disk,
renamed over it); --no-sync skips the sync for scratch files.

Examples:
  npy convert in.npy out.npy --byte-order little
  npy convert in.npy out.npy --order F
  npy convert in.npy out.npy --version 2
  npy convert data.npz weights.npy --member weights
  npy convert big.npy /scratch/big_f.npy --order F --no-sync
  npy convert objects.npy out.npy --allow-pickle --version 3")]
pub struct ConvertArgs {
    /// The input .npy file (or .npz with --member; `-`: standard input, .npy or .npz).
    pub input: PathBuf,
    /// The output .npy file (an existing file is refused unless --force).
    pub output: PathBuf,
    /// Replace an existing file (without it, an existing OUTPUT is refused
    /// and left as it is). The new file is written under a temporary name
    /// and renamed over the old one, which stays on any failure.
    #[arg(long)]
    pub force: bool,
    /// The member of an .npz input.
    #[arg(long, value_name = "NAME")]
    pub member: Option<String>,
    /// Skip the final fsync of the output (and of its folder): for scratch
    /// files. The output still replaces OUTPUT whole or not at all, but a
    /// crash or power loss soon after can leave it empty or partly written.
    #[arg(long)]
    pub no_sync: bool,
    /// Byte order of the output's multi-byte values.
    #[arg(long, value_enum, value_name = "ORDER")]
    pub byte_order: Option<ByteOrderArg>,
    /// Memory order of the output data.
    #[arg(long, value_enum, value_name = "C|F")]
    pub order: Option<OrderArg>,
    /// Format version of the output.
    #[arg(long, value_name = "1|2|3", value_parser = clap::value_parser!(u8).range(1..=3))]
    pub version: Option<u8>,
    #[command(flatten)]
    pub pickle: PickleArgs,
}

/// List the members of an .npz archive.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  npy ls archive.npz")]
pub struct LsArgs {
    /// The .npz archive (`-`: read from standard input, copied to a
    /// temporary file first: a zip is read from its end).
    pub archive: PathBuf,
}

/// Save the checkpoints of an .npz archive's deflated members beside it
/// (ARCHIVE.idx), so that reading a slice of one needs no pass over it.
///
/// Members our writer deflated carry a block index in the archive already;
/// members other writers made (numpy's savez_compressed) get checkpoints
/// from one pass over each, CRC-checked. Commands that read slices (npy
/// show --rows) and npy_mmap in Python use the file when it matches the
/// archive, and refuse a stale one.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  npy index archive.npz
  npy show archive.npz --member x --rows -10:")]
pub struct IndexArgs {
    /// The .npz archive (a local file: the index is written beside it).
    pub archive: PathBuf,
}

/// Write members of an .npz archive out as .npy files.
#[derive(Debug, Args)]
#[command(after_help = "\
Each member NAME is written to DIR/NAME.npy; folders inside names are kept.
Names that would escape DIR (absolute, or containing '..') are refused.

Examples:
  npy extract archive.npz
  npy extract archive.npz weights bias --dir out/")]
pub struct ExtractArgs {
    /// The .npz archive (`-`: read from standard input, copied to a
    /// temporary file first: a zip is read from its end).
    pub archive: PathBuf,
    /// Members to extract (all when none are given).
    pub names: Vec<String>,
    /// Directory to write into.
    #[arg(long, value_name = "D", default_value = ".")]
    pub dir: PathBuf,
    /// Replace existing files (without it, the command refuses before
    /// writing anything if any destination exists). Each is written under a
    /// temporary name and renamed over the old one.
    #[arg(long)]
    pub force: bool,
}

/// Pack .npy files into an .npz archive, one member per file named after its stem.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  npy pack out.npz weights.npy bias.npy
  npy pack --compress out.npz *.npy")]
pub struct PackArgs {
    /// The archive to write (an existing file is refused unless --force).
    pub output: PathBuf,
    /// Replace an existing file (without it, an existing OUTPUT is refused
    /// and left as it is). The new file is written under a temporary name
    /// and renamed over the old one, which stays on any failure.
    #[arg(long)]
    pub force: bool,
    /// The .npy files to pack.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Deflate the members (like np.savez_compressed).
    #[arg(long)]
    pub compress: bool,
}

/// Create a preallocated, zero-filled .npy file.
#[derive(Debug, Args)]
#[command(after_help = "\
DESCR is any descr numpy writes, in header syntax. The file is sparse unless
--reserve is given, which allocates every block now so a full disk fails here
and not later.

Examples:
  npy create out.npy --dtype '<f8' --shape 1000,1000
  npy create out.npy --dtype '|S7' --shape 10 --order F --reserve
  npy create out.npy --dtype \"[('x', '<i4'), ('y', '>f8', (2, 3))]\" --shape 100
  npy create scalar.npy --dtype '<i8' --shape ''
  npy create out.npy --dtype '<f4' --shape 512,512 --force")]
pub struct CreateArgs {
    /// The file to create (an existing file is refused unless --force).
    pub output: PathBuf,
    /// Replace an existing file: the new file is built under a temporary
    /// name and renamed over the old one, which stays on any failure.
    #[arg(long)]
    pub force: bool,
    /// The dtype, as numpy writes it in a header.
    #[arg(long, value_name = "DESCR")]
    pub dtype: String,
    /// Comma-separated dimensions; an empty string means a 0-d array.
    #[arg(long, value_name = "DIMS", value_parser = parse_shape)]
    pub shape: Shape,
    /// Memory order of the data.
    #[arg(long, value_enum, default_value = "C", value_name = "C|F")]
    pub order: OrderArg,
    /// Allocate the disk blocks now instead of leaving the file sparse.
    #[arg(long)]
    pub reserve: bool,
}

/// A shape given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape(pub Vec<usize>);

fn parse_shape(text: &str) -> Result<Shape, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(Shape(Vec::new()));
    }
    text.split(',')
        .map(|dim| {
            let dim = dim.trim();
            dim.parse::<usize>()
                .map_err(|_| format!("'{dim}' is not a dimension (a non-negative integer)"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Shape)
}

/// `--rows A:B`, Python slice bounds (negative counts from the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowRange {
    pub start: Option<i64>,
    pub end: Option<i64>,
}

impl std::str::FromStr for RowRange {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (start, end) = text
            .split_once(':')
            .ok_or_else(|| format!("'{text}' is not a range A:B"))?;
        let bound = |part: &str| -> Result<Option<i64>, String> {
            let part = part.trim();
            if part.is_empty() {
                Ok(None)
            } else {
                part.parse()
                    .map(Some)
                    .map_err(|_| format!("'{part}' is not an integer"))
            }
        };
        Ok(RowRange {
            start: bound(start)?,
            end: bound(end)?,
        })
    }
}

impl std::fmt::Display for RowRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(start) = self.start {
            write!(f, "{start}")?;
        }
        f.write_str(":")?;
        if let Some(end) = self.end {
            write!(f, "{end}")?;
        }
        Ok(())
    }
}

impl RowRange {
    /// Resolves the bounds against `len` rows: a negative bound counts from
    /// the end, as in Python. Where a Python slice would quietly shrink to
    /// what exists (`5000:6000` of 1000 rows is empty), the range is refused
    /// by the library's rule for row ranges ([`npy_core::Header::check_rows`]):
    /// reversed, or ending past the rows.
    pub fn resolve(&self, len: usize) -> Result<std::ops::Range<usize>, String> {
        let bound = |bound: i64| -> Result<usize, String> {
            let resolved = if bound < 0 {
                usize::try_from(bound.unsigned_abs())
                    .ok()
                    .and_then(|back| len.checked_sub(back))
            } else {
                usize::try_from(bound).ok()
            };
            // numpy's IndexError wording for a single index.
            resolved.ok_or_else(|| {
                format!("index {bound} is out of bounds for axis 0 with size {len} (--rows {self})")
            })
        };
        let start = self.start.map_or(Ok(0), bound)?;
        let end = self.end.map_or(Ok(len), bound)?;
        // The rows are axis 0 of what is shown, whatever the memory order.
        let rows = npy_core::Header::new(npy_core::DType::Object, npy_core::Order::C, vec![len]);
        rows.check_rows(start..end)
            .map_err(|err| format!("{err} (--rows {self})"))?;
        Ok(start..end)
    }

    /// The rows `--rows` and `--limit` select of `len` rows.
    pub fn select(
        rows: Option<RowRange>,
        limit: Option<usize>,
        len: usize,
    ) -> Result<std::ops::Range<usize>, String> {
        let mut range = match rows {
            Some(rows) => rows.resolve(len)?,
            None => 0..len,
        };
        if let Some(limit) = limit {
            range.end = range.end.min(range.start.saturating_add(limit));
        }
        Ok(range)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ByteOrderArg {
    Little,
    Big,
    Native,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OrderArg {
    #[value(name = "C", alias = "c")]
    C,
    #[value(name = "F", alias = "f")]
    F,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_like_the_issue_says() {
        assert_eq!(parse_shape("1000,1000"), Ok(Shape(vec![1000, 1000])));
        assert_eq!(parse_shape(""), Ok(Shape(vec![])));
        assert_eq!(parse_shape("7"), Ok(Shape(vec![7])));
        assert_eq!(parse_shape(" 2, 3 "), Ok(Shape(vec![2, 3])));
        assert_eq!(
            parse_shape("2,-3"),
            Err("'-3' is not a dimension (a non-negative integer)".to_string())
        );
        assert_eq!(
            parse_shape("2,,3"),
            Err("'' is not a dimension (a non-negative integer)".to_string())
        );
    }

    #[test]
    fn row_ranges_follow_python_slices_within_the_rows() {
        let r = |s: &str| s.parse::<RowRange>().unwrap();
        assert_eq!(r("2:5").resolve(10), Ok(2..5));
        assert_eq!(r(":3").resolve(10), Ok(0..3));
        assert_eq!(r("-3:").resolve(10), Ok(7..10));
        assert_eq!(r("0:10").resolve(10), Ok(0..10));
        assert_eq!(r("3:3").resolve(10), Ok(3..3));
        assert_eq!(r(":").resolve(4), Ok(0..4));
        assert_eq!(r(":").resolve(0), Ok(0..0));
        assert_eq!(
            r("5:2").resolve(10),
            Err("range 5..2 is reversed: its start is past its end (--rows 5:2)".into())
        );
        assert_eq!(
            r("0:100").resolve(10),
            Err("range 0..100 is out of bounds for axis 0 with size 10 (--rows 0:100)".into())
        );
        assert_eq!(
            r("-100:").resolve(10),
            Err("index -100 is out of bounds for axis 0 with size 10 (--rows -100:)".into())
        );
        assert_eq!(RowRange::select(Some(r("2:")), Some(3), 10), Ok(2..5));
        assert_eq!(RowRange::select(None, Some(30), 10), Ok(0..10));
        assert_eq!(
            "5".parse::<RowRange>().unwrap_err(),
            "'5' is not a range A:B"
        );
        assert_eq!(
            "a:b".parse::<RowRange>().unwrap_err(),
            "'a' is not an integer"
        );
    }

    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}

/// Copy an .npy file or .npz archive between a local path and a URL
/// (s3://, gs://, az://, http(s)://, file://), in either direction, and
/// verify the copy: its size, and its header (or its archive's members)
/// read back from the destination.
///
/// Uploads are multipart with concurrent parts when large; downloads are
/// concurrent ranged GETs written in order to a temporary file that
/// replaces the destination only once verified. Credentials and endpoints
/// come from the environment (AWS_*, GOOGLE_*, AZURE_*).
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  npy cp big.npy s3://bucket/arrays/big.npy
  npy cp s3://bucket/arrays/big.npy ./big.npy
  npy cp gs://bucket/run.npz run.npz")]
pub struct CpArgs {
    /// What to copy: a local path or a URL.
    pub source: PathBuf,
    /// Where to: a URL or a local path (a local folder keeps the name).
    pub destination: PathBuf,
    /// Bytes per part of the transfer, in MiB.
    #[arg(long, default_value_t = 16)]
    pub part_mib: usize,
    /// Parts in flight at once.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// Replace an existing local destination (a download, or a file://
    /// URL); without it an existing file is refused before anything is
    /// fetched. Objects in a store are replaced as the store replaces them.
    #[arg(long)]
    pub force: bool,
}

/// Find (and with --remove, delete) the temporary files that interrupted
/// writers left in a folder.
///
/// A save, `convert`, `pack`, `extract` or `cp` killed before its rename
/// leaves `.NAME.<16 hex digits>.tmp` beside NAME, a killed Dask store a
/// full-size `.NAME.partial-<12 hex digits>`; the final NAME is never
/// partial. A leftover is stale when no process holds a lock on it (a
/// writer holds its temporary's lock; mappings hold theirs) and it has not
/// changed for --min-age seconds. Only the folder itself is looked at (not
/// its subfolders); symbolic links are never followed or removed.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  npy tidy data/              list leftovers: stale, or in use (kept)
  npy tidy data/ --remove     delete the stale ones")]
pub struct TidyArgs {
    /// The folder to look in.
    pub dir: PathBuf,
    /// Delete the stale leftovers (without it, only list them).
    #[arg(long)]
    pub remove: bool,
    /// Seconds since a leftover last changed before it may be stale: a
    /// writer takes its temporary's lock just after creating it, and a
    /// Dask store holds no lock between its tasks.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    pub min_age: u64,
}

/// Which references `npy virtualize` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VirtualFormat {
    /// kerchunk's reference JSON (fsspec's ReferenceFileSystem, version 1)
    /// with Zarr v2 metadata.
    Kerchunk,
    /// Zarr v3 metadata with a chunk manifest per array (VirtualiZarr's
    /// ChunkManifest entries).
    Zarr3,
}

/// Write virtual Zarr references to .npy files and npz members, so
/// xarray, zarr and Dask read them in place (docs/VIRTUAL.md).
///
/// One variable per array: named after the file's stem, or the member's
/// key (`<stem>.<key>` when several inputs are given). A directory, or a
/// URL ending in `/`, names every .npy and .npz in it. Each .npy costs one
/// ranged read of its header; nothing reads the data.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  npy virtualize data/ -o refs.json
  npy virtualize s3://bucket/run1/ -o run1.json --rows-per-chunk 1000
  npy virtualize run.npz --format zarr3 -o run.zarr3.json
Then, in Python:
  xr.open_dataset(\"reference://\", engine=\"zarr\", backend_kwargs={\"consolidated\": False,
      \"storage_options\": {\"fo\": \"refs.json\"}})")]
pub struct VirtualizeArgs {
    /// .npy or .npz files, directories of them, URLs or URL prefixes (ending in `/`).
    #[arg(required = true)]
    pub inputs: Vec<String>,
    /// Where to write the JSON (default: standard output). An existing
    /// file is refused unless --force; an input never (see --force).
    #[arg(short, long, value_name = "OUT.json")]
    pub output: Option<PathBuf>,
    /// Replace an existing OUT.json: the new file is written under a
    /// temporary name and renamed over it, so readers of the old file keep
    /// it whole. A symbolic link at OUT.json is replaced itself, never
    /// written through; a file that is one of the inputs (the same file,
    /// by any name) is refused even so.
    #[arg(long)]
    pub force: bool,
    /// The reference format.
    #[arg(long, value_enum, default_value_t = VirtualFormat::Kerchunk)]
    pub format: VirtualFormat,
    /// Rows per chunk (along axis 0 in C order, the last axis in Fortran
    /// order); it must divide each array's row count. Default: chosen per
    /// array, a divisor of its rows near --chunk-mib.
    #[arg(long, value_name = "N")]
    pub rows_per_chunk: Option<usize>,
    /// The chunk size aimed at when choosing rows per chunk, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    pub chunk_mib: u64,
    /// Objects whose headers are read at once.
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
}

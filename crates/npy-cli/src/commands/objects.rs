//! Object arrays (`dtype=object`) in `show` and `validate`: decoded only
//! with `--allow-pickle`, by npy-core's restricted unpickler (which never
//! runs code), as numpy decodes them only with `allow_pickle=True`.

use std::path::Path;

use anyhow::{Context, bail};
use npy_core::pickle::{Encoding, PickleOptions};
use npy_core::{DType, Header, NpyArray, Order, ParseOptions, ReadOptions};

use super::verdict::Verdict;
use crate::cli::{PickleArgs, PickleEncoding, RowRange, ShowArgs};
use crate::print;
use crate::source::{self, Kind, NpyFile};

/// numpy's `np.load` options for these arguments.
pub fn read_options(pickle: &PickleArgs, parse: ParseOptions) -> ReadOptions {
    ReadOptions {
        parse: ParseOptions {
            allow_pickle: pickle.allow_pickle,
            ..parse
        },
        pickle: PickleOptions {
            encoding: match pickle.encoding {
                PickleEncoding::Ascii => Encoding::Ascii,
                PickleEncoding::Latin1 => Encoding::Latin1,
                PickleEncoding::Bytes => Encoding::Bytes,
            },
            ..PickleOptions::default()
        },
        ..ReadOptions::default()
    }
}

/// Header parsing that lets object dtypes through (nothing is unpickled).
fn header_options() -> ParseOptions {
    ParseOptions {
        max_header_size: source::INSPECT_MAX_HEADER,
        allow_pickle: true,
    }
}

/// What [`show`] read.
pub enum Shown {
    /// numpy's `str()` of an object array.
    Text(String),
    /// An array without objects read from standard input (which can be
    /// read once): the caller prints it as any other.
    Plain(NpyArray),
}

/// `npy show` of an object array: numpy's `str()` of it, or `None` when the
/// array (the .npy, or the chosen npz member) does not hold objects.
pub fn show(args: &ShowArgs) -> anyhow::Result<Option<Shown>> {
    if source::is_stdin(&args.path) {
        return show_stdin(args);
    }
    let Some(array) = load(&args.path, args.member.as_deref(), &args.pickle)? else {
        return Ok(None);
    };
    let array = select_rows(array, args)?;
    Ok(Some(Shown::Text(print::object_array_str(&array)?)))
}

/// `npy show -`: a stream can be read once, so with `--allow-pickle` it is
/// read here, whatever it holds (without, the ordinary path reads it and
/// refuses objects).
fn show_stdin(args: &ShowArgs) -> anyhow::Result<Option<Shown>> {
    if !args.pickle.allow_pickle {
        return Ok(None);
    }
    if source::sniff(&args.path)? == Kind::Npz {
        bail!(
            "show --allow-pickle reads an .npy on standard input, not an .npz archive: \
             save the archive to a file and give its path"
        );
    }
    let array = read_stdin(&read_options(&args.pickle, header_options()))?;
    if array.objects().is_none() {
        return Ok(Some(Shown::Plain(array)));
    }
    let array = select_rows(array, args)?;
    Ok(Some(Shown::Text(print::object_array_str(&array)?)))
}

fn read_stdin(options: &ReadOptions) -> anyhow::Result<NpyArray> {
    npy_core::read_npy(std::io::stdin().lock(), &stdin_capped(options))
        .context("standard input is not a valid .npy stream")
}

/// `options` with the data (or pickle) read into memory from standard
/// input capped like its spool (`--stdin-limit`): objects are decoded in
/// memory, and an array of numbers that came this way is too.
fn stdin_capped(options: &ReadOptions) -> ReadOptions {
    let limit = usize::try_from(crate::stdin::limit()).unwrap_or(usize::MAX);
    ReadOptions {
        max_data_len: Some(options.max_data_len.map_or(limit, |max| max.min(limit))),
        ..*options
    }
}

/// `npy validate - --allow-pickle`: the stream read as `np.load` would,
/// objects decoded, then the bytes after it counted.
pub fn check_stdin(options: &ReadOptions) -> anyhow::Result<Verdict> {
    let mut stdin = std::io::stdin().lock();
    let array = match npy_core::read_npy(&mut stdin, &stdin_capped(options)) {
        Ok(array) => array,
        Err(npy_core::Error::Io(err)) => return Err(err).context("cannot read standard input"),
        Err(err) => return Ok(Verdict::invalid(crate::message::cause_text(&err))),
    };
    let rest =
        std::io::copy(&mut stdin, &mut std::io::sink()).context("cannot read standard input")?;
    let mut verdict = Verdict::default();
    if rest > 0 {
        verdict.trailing.push(format!(
            "{rest} trailing bytes after the {} bytes of data",
            array.layout().data_len
        ));
    }
    Ok(verdict)
}

/// The object array at `path` (or its `member`), loaded if pickles are
/// allowed; `None` if it is not an object array.
pub fn load(
    path: &Path,
    member: Option<&str>,
    pickle: &PickleArgs,
) -> anyhow::Result<Option<NpyArray>> {
    let options = read_options(pickle, header_options());
    if let Some(url) = crate::remote::url_of(path) {
        let allowed = || refuse_unless_allowed(pickle, path);
        return crate::remote::load_objects(url, member, &options, allowed);
    }
    match source::sniff(path)? {
        Kind::Npy => {
            let file = NpyFile::open(path, &header_options())?;
            if file.header.dtype != DType::Object {
                return Ok(None);
            }
            refuse_unless_allowed(pickle, path)?;
            let load = |locking| {
                npy_mmap::OpenOptions::from(options)
                    .locking(locking)
                    .load(path)
            };
            Ok(Some(source::wait_saying_so(path, load)?))
        }
        Kind::Npz => {
            let open = |locking| {
                npy_mmap::OpenOptions::from(options)
                    .locking(locking)
                    .open_npz(path)
            };
            let mut archive = source::wait_saying_so(path, open)
                .with_context(|| format!("cannot read the archive {}", path.display()))?;
            let key = match member {
                Some(key) => key.to_string(),
                None if archive.len() == 1 => archive.keys()[0].clone(),
                // The array path explains the choice of member.
                None => return Ok(None),
            };
            if !archive.contains(&key) || !archive.is_npy(&key)? {
                return Ok(None);
            }
            if !matches!(archive.header(&key), Ok(parsed) if parsed.header.dtype == DType::Object) {
                return Ok(None);
            }
            refuse_unless_allowed(pickle, path)?;
            Ok(Some(archive.load(&key)?))
        }
    }
}

fn refuse_unless_allowed(pickle: &PickleArgs, path: &Path) -> anyhow::Result<()> {
    if !pickle.allow_pickle {
        bail!(
            "Object arrays cannot be loaded when allow_pickle=False: {} holds Python objects \
             (dtype=object); --allow-pickle decodes them with a restricted unpickler that \
             never runs code",
            path.display()
        );
    }
    Ok(())
}

/// `--rows` and `--limit` on axis 0 of an object array.
fn select_rows(array: NpyArray, args: &ShowArgs) -> anyhow::Result<NpyArray> {
    if args.rows.is_none() && args.limit.is_none() {
        return Ok(array);
    }
    let header = array.header().clone();
    let Some(&rows) = header.shape.first() else {
        bail!("--rows and --limit need an array with at least one dimension; this one is 0-d");
    };
    let range = RowRange::select(args.rows, args.limit, rows).map_err(anyhow::Error::msg)?;
    let per_row: usize = header.shape[1..].iter().product();
    let values = array.into_c_order().into_objects().unwrap_or_default();
    let selected = values[range.start * per_row..range.end * per_row].to_vec();
    let mut shape = header.shape.clone();
    shape[0] = range.len();
    Ok(NpyArray::from_objects(
        Header::new(DType::Object, Order::C, shape),
        selected,
    )?)
}

/// `npy validate --allow-pickle` of an object array: the pickle decodes in
/// full; bytes after it are trailing bytes, as after any array's data.
pub fn check_pickle(path: &Path, file: &NpyFile, options: &ReadOptions) -> Verdict {
    if let Some(url) = crate::remote::url_of(path) {
        // An object is read whole, as `show --allow-pickle` reads it.
        return match crate::remote::load_npy(url, options) {
            Ok(array) => pickle_verdict(&array, file),
            Err(err) => Verdict::invalid(crate::message::error_text(&err)),
        };
    }
    match npy_mmap::OpenOptions::from(*options).load(path) {
        Ok(array) => pickle_verdict(&array, file),
        Err(err) => {
            let text = match err.kind() {
                npy_mmap::ErrorKind::Format(source) => crate::message::cause_text(source),
                _ => crate::message::cause_text(&err),
            };
            Verdict::invalid(text)
        }
    }
}

/// A decoded object array's verdict: bytes after its pickle are trailing.
fn pickle_verdict(array: &NpyArray, file: &NpyFile) -> Verdict {
    let end = array.layout().data_end() as u64;
    let mut verdict = Verdict::default();
    if let Some(surplus) = file.file_size.checked_sub(end).filter(|&n| n > 0) {
        verdict.trailing.push(format!(
            "{surplus} trailing bytes after the {} bytes of pickled data",
            array.layout().data_len
        ));
    }
    verdict
}

//! `.npz` archives: `ls`, `extract`, `pack`, and the npz side of `info`,
//! `validate`, `show` and `stats`.

use std::io::{self, Read, Write};
use std::ops::ControlFlow;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, bail};
use npy_core::io::ReadOptions;
use npy_core::{Header, ParseOptions};
use npy_mmap::AtomicFile;
use npy_mmap::npz::{Compression, MemberCompression, MemberInfo, NpzArchive, NpzWriter};
use serde_json::{Map, Value, json};

use crate::cli::{ExtractArgs, LsArgs, PackArgs};
use crate::commands::Verdict;
use crate::describe;
use crate::source::{self, Archive, OpenedArray};

fn open(path: &Path, parse: ParseOptions) -> anyhow::Result<Archive> {
    let options = ReadOptions {
        parse,
        to_native: false,
        ..Default::default()
    };
    open_archive(path, options)
        .with_context(|| format!("cannot read the archive {}", path.display()))
}

/// The archive at `path`: a local file, or an object a URL names.
fn open_archive(path: &Path, options: ReadOptions) -> npy_mmap::npz::Result<Archive> {
    let source: Box<dyn source::ArchiveSource> = match crate::remote::url_of(path) {
        Some(url) => Box::new(crate::remote::archive_reader(url).map_err(io::Error::other)?),
        None => Box::new(io::BufReader::new(npy_mmap::open_regular(path, false)?)),
    };
    NpzArchive::with_options(source, options)
}

fn inspect_options() -> ParseOptions {
    ParseOptions {
        max_header_size: source::INSPECT_MAX_HEADER,
        ..Default::default()
    }
}

/// For `info` and `ls`, which read headers only: object arrays are
/// described (dtype `'|O'`), their pickles never read.
fn describe_options() -> ParseOptions {
    ParseOptions {
        allow_pickle: true,
        ..inspect_options()
    }
}

fn compression_name(compression: MemberCompression) -> String {
    match compression {
        MemberCompression::Stored => "stored".to_string(),
        MemberCompression::Deflated => "deflated".to_string(),
        MemberCompression::Other(method) => format!("method {method}"),
        _ => "unknown".to_string(),
    }
}

/// What `info` and `ls` say about one member: directory facts, plus the
/// array header for `.npy` members (read without loading the data).
struct MemberSummary {
    info: MemberInfo,
    array: Option<Result<(Header, npy_core::Layout), String>>,
}

fn summaries(archive: &mut Archive) -> anyhow::Result<Vec<MemberSummary>> {
    let names = archive.member_names().to_vec();
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let info = archive.info(&name)?;
        let array = match archive.is_npy(&name) {
            Ok(false) => None,
            Ok(true) => Some(
                archive
                    .header(&name)
                    .map_err(|e| crate::one_line(&e.to_string())),
            ),
            Err(err) => Some(Err(crate::one_line(&err.to_string()))),
        };
        out.push(MemberSummary { info, array });
    }
    Ok(out)
}

/// `npy info` on an archive.
pub fn info(path: &Path, json: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut archive = open(path, describe_options())?;
    let members = summaries(&mut archive)?;
    if json {
        let list: Vec<Value> = members.iter().map(member_json).collect();
        writeln!(out, "{}", json!({ "members": list }))?;
        return Ok(());
    }
    writeln!(
        out,
        "{}: .npz archive, {} members",
        path.display(),
        members.len()
    )?;
    for member in &members {
        writeln!(out)?;
        let mut lines = vec![
            ("name", member.info.key.clone()),
            ("member", member.info.name.clone()),
            ("compression", compression_name(member.info.compression)),
            ("size", format!("{} bytes", member.info.size)),
            (
                "compressed",
                format!("{} bytes", member.info.compressed_size),
            ),
        ];
        match &member.array {
            Some(Ok((header, layout))) => lines.extend(describe::array_lines(header, layout)),
            Some(Err(problem)) => lines.push(("error", problem.clone())),
            None => lines.push(("content", "not an array (raw bytes)".to_string())),
        }
        describe::write_lines(out, &lines)?;
    }
    Ok(())
}

fn member_json(member: &MemberSummary) -> Value {
    let mut object = Map::new();
    object.insert("name".into(), json!(member.info.key));
    object.insert("member".into(), json!(member.info.name));
    object.insert(
        "compression".into(),
        json!(compression_name(member.info.compression)),
    );
    object.insert("compressed_size".into(), json!(member.info.compressed_size));
    object.insert("size".into(), json!(member.info.size));
    match &member.array {
        Some(Ok((header, layout))) => {
            object.insert("kind".into(), json!("array"));
            object.extend(describe::array_json(header, layout));
        }
        Some(Err(problem)) => {
            object.insert("kind".into(), json!("array"));
            object.insert("error".into(), json!(problem));
        }
        None => {
            object.insert("kind".into(), json!("raw"));
        }
    }
    Value::Object(object)
}

/// `npy ls`: one line per member.
pub fn ls(args: &LsArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut archive = open(&args.archive, describe_options())?;
    let members = summaries(&mut archive)?;
    let mut rows = vec![[
        "name".to_string(),
        "dtype".to_string(),
        "shape".to_string(),
        "order".to_string(),
        "size".to_string(),
        "compressed".to_string(),
        "method".to_string(),
    ]];
    for member in &members {
        let (dtype, shape, order) = match &member.array {
            Some(Ok((header, _))) => (
                header.dtype.header_repr(),
                npy_core::shape_repr(&header.shape),
                match header.order {
                    npy_core::Order::C => "C",
                    npy_core::Order::Fortran => "F",
                }
                .to_string(),
            ),
            Some(Err(_)) => ("(bad header)".to_string(), "-".to_string(), "-".to_string()),
            None => ("(raw bytes)".to_string(), "-".to_string(), "-".to_string()),
        };
        rows.push([
            member.info.key.clone(),
            dtype,
            shape,
            order,
            member.info.size.to_string(),
            member.info.compressed_size.to_string(),
            compression_name(member.info.compression),
        ]);
    }
    let widths: Vec<usize> = (0..7)
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &rows {
        let mut line = String::new();
        for (column, cell) in row.iter().enumerate() {
            if column + 1 == row.len() {
                line.push_str(cell);
            } else {
                let pad = widths[column] - cell.chars().count();
                line.push_str(cell);
                line.push_str(&" ".repeat(pad + 2));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// `npy validate` on an archive: every member. The archive's own structure
/// failing to read is a problem with the file, not an I/O error.
pub fn validate(path: &Path, options: &ReadOptions) -> anyhow::Result<Verdict> {
    let mut archive = match open_archive(path, *options) {
        Ok(archive) => archive,
        Err(npy_mmap::npz::NpzError::Io(err)) => {
            return Err(err).with_context(|| format!("cannot read {}", path.display()));
        }
        Err(err) => return Ok(Verdict::invalid(crate::one_line(&err.to_string()))),
    };
    let mut verdict = Verdict::default();
    for name in archive.member_names().to_vec() {
        let member = member_verdict(&mut archive, &name, options);
        verdict.problems.extend(member.problems);
        verdict.trailing.extend(member.trailing);
    }
    Ok(verdict)
}

/// What is wrong with one member, streaming it (CRC-32 checked at its end)
/// so memory stays bounded whatever its size.
fn member_verdict(archive: &mut Archive, name: &str, options: &ReadOptions) -> Verdict {
    let mut reader = match archive.reader(name) {
        Ok(reader) => reader,
        Err(err) => return Verdict::invalid(crate::one_line(&err.to_string())),
    };
    let mut magic = Vec::with_capacity(6);
    if let Err(err) = (&mut reader).take(6).read_to_end(&mut magic) {
        return Verdict::invalid(format!("member '{name}': {err}"));
    }
    if magic.as_slice() != npy_core::header::MAGIC {
        // numpy hands non-.npy members back as bytes; only a `.npy` name
        // promises an array. The rest is read for its CRC-32.
        if name.ends_with(".npy") {
            return Verdict::invalid(format!("member '{name}' is not .npy data"));
        }
        return match io::copy(&mut reader, &mut io::sink()) {
            Ok(_) => Verdict::default(),
            Err(err) => Verdict::invalid(format!("member '{name}': {err}")),
        };
    }
    let mut stream = io::Cursor::new(magic).chain(&mut reader);
    let npy_core::ParsedHeader { header, mut layout } =
        match Header::read_from(&mut stream, &options.parse) {
            Ok(parsed) => parsed,
            Err(err) => {
                return Verdict::invalid(format!(
                    "member '{name}': {}",
                    crate::one_line(&err.to_string())
                ));
            }
        };
    // An object array's data is its pickle, decoded to where it ends.
    if header.dtype == npy_core::DType::Object {
        match npy_core::io::read_objects(&mut stream, &header, layout, options) {
            Ok(array) => layout = *array.layout(),
            Err(err) => {
                return Verdict::invalid(format!(
                    "member '{name}': {}",
                    crate::one_line(&err.to_string())
                ));
            }
        }
    }
    let present = match io::copy(&mut stream, &mut io::sink()) {
        Ok(present) => present,
        Err(err) => return Verdict::invalid(format!("member '{name}': {err}")),
    };
    let surplus = match header.dtype {
        // The pickle was read already: whatever follows it is surplus.
        npy_core::DType::Object => i128::from(present),
        _ => i128::from(present) - layout.data_len as i128,
    };
    let mut verdict = super::validate::data_length_verdict(&header, layout.data_len, surplus);
    for line in verdict.problems.iter_mut().chain(&mut verdict.trailing) {
        *line = format!("member '{name}': {line}");
    }
    verdict
}

/// The array of one member, for `show` and `stats`: `member` may be
/// omitted when the archive holds a single member.
pub fn open_member(path: &Path, member: Option<&str>) -> anyhow::Result<OpenedArray> {
    let mut archive = open(path, inspect_options())?;
    let key = match member {
        Some(key) => key.to_string(),
        None if archive.len() == 1 => archive.keys()[0].clone(),
        None => bail!(
            "{} is an .npz archive of {} members; choose one with --member (members: {})",
            path.display(),
            archive.len(),
            archive.keys().join(", ")
        ),
    };
    if !archive.is_npy(&key)? {
        bail!("member '{key}' of {} is not an array", path.display());
    }
    // Only the header is read now; the data is streamed when it is used.
    let (header, _) = archive.header(&key)?;
    Ok(OpenedArray::member(archive, key, header))
}

/// Where `extract` writes a member, relative to the target directory:
/// `<key>.npy`, keeping folders in the key, refusing keys that would land
/// outside the directory (zip-slip).
fn extract_path(key: &str) -> anyhow::Result<PathBuf> {
    let relative = Path::new(key);
    let escapes = key.is_empty()
        || key.contains('\\')
        || key.contains('\0')
        || relative.is_absolute()
        || relative
            .components()
            .any(|component| !matches!(component, Component::Normal(_) | Component::CurDir));
    if escapes {
        bail!("refusing to extract member '{key}': its name leads outside the target directory");
    }
    Ok(PathBuf::from(format!("{key}.npy")))
}

/// `npy extract`.
pub fn extract(args: &ExtractArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut archive = open(&args.archive, inspect_options())?;
    let explicit = !args.names.is_empty();
    let wanted: Vec<String> = if explicit {
        for name in &args.names {
            if !archive.contains(name) {
                bail!("{name} is not a file in the archive");
            }
        }
        args.names.clone()
    } else {
        archive.member_names().to_vec()
    };
    // Check every destination before writing anything.
    let mut plan = Vec::with_capacity(wanted.len());
    for name in &wanted {
        let info = archive.info(name)?;
        let relative = extract_path(&info.key)?;
        plan.push((info.name.clone(), relative));
    }
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("cannot create {}", args.dir.display()))?;
    for (member, relative) in plan {
        if !archive.is_npy(&member)? {
            if explicit {
                bail!("member '{member}' is not an array; nothing to extract as .npy");
            }
            writeln!(
                std::io::stderr(),
                "npy: skipping member '{member}': not an array"
            )?;
            continue;
        }
        let destination = args.dir.join(&relative);
        // Replaced like every save (temporary + rename): a process that has
        // the old file mapped keeps it, and a member that fails its CRC-32
        // leaves the old file untouched. Every folder below the destination
        // is opened without following symbolic links.
        let mut file = AtomicFile::create_within(&args.dir, &relative).with_context(|| {
            format!(
                "cannot extract member '{member}' to {}",
                destination.display()
            )
        })?;
        archive
            .reader(&member)
            .map_err(io::Error::other)
            .and_then(|mut reader| io::copy(&mut reader, &mut file))
            .with_context(|| format!("cannot extract member '{member}'"))?;
        file.commit()
            .with_context(|| format!("cannot extract member '{member}'"))?;
        writeln!(out, "{}", destination.display())?;
    }
    Ok(())
}

/// `npy pack`: each input becomes the member named after its file stem.
pub fn pack(args: &PackArgs) -> anyhow::Result<()> {
    let mut inputs = Vec::with_capacity(args.inputs.len());
    let mut keys = std::collections::HashSet::new();
    for path in &args.inputs {
        let key = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .filter(|stem| !stem.is_empty())
            .with_context(|| format!("{} has no usable file name for a member", path.display()))?
            .to_string();
        if !keys.insert(key.clone()) {
            bail!("two inputs would both become member '{key}'");
        }
        // Every input is opened (and so checked) before the archive is started.
        inputs.push((key, OpenedArray::map(path, npy_mmap::Advice::Sequential)?));
    }
    let compression = if args.compress {
        Compression::DEFLATED
    } else {
        Compression::Stored
    };
    let mut writer = NpzWriter::create_with_compression(&args.output, compression)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    for (key, array) in &mut inputs {
        // Streamed in chunks: a sparse input is read through the file, and
        // nothing is held whole in memory.
        let mut member = writer.start_array(key, &array.header)?;
        array.for_each_chunk(4 << 20, |chunk| {
            member.write_all(chunk)?;
            Ok(ControlFlow::Continue(()))
        })?;
        member.finish()?;
    }
    writer
        .commit()
        .with_context(|| format!("cannot write {}", args.output.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extraction_stays_inside_the_directory() {
        assert_eq!(extract_path("a").unwrap(), Path::new("a.npy"));
        assert_eq!(extract_path("sub/b").unwrap(), Path::new("sub/b.npy"));
        for bad in [
            "../evil",
            "a/../../evil",
            "/etc/passwd",
            "a\\..\\b",
            "",
            "..",
            "a/..",
        ] {
            assert!(extract_path(bad).is_err(), "{bad}");
        }
    }
}

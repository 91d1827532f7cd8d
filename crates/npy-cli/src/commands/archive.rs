//! `.npz` archives: `ls`, `extract`, `pack`, and the npz side of `info`.
//! (Opening archives and their members is the source module's job.)

use std::io::{self, Write};
use std::ops::ControlFlow;
use std::path::{Component, Path, PathBuf};

use crate::output;
use anyhow::{Context, bail};
use npy_core::{Header, ParseOptions};
use npy_mmap::npz::{Compression, MemberCompression, MemberInfo, NpzWriter};
use serde_json::{Map, Value, json};

use crate::cli::{ExtractArgs, IndexArgs, LsArgs, PackArgs};
use crate::describe;
use crate::source::{self, Archive};

/// For `info` and `ls`, which read headers only: object arrays are
/// described (dtype `'|O'`), their pickles never read.
fn describe_options() -> ParseOptions {
    ParseOptions {
        allow_pickle: true,
        ..source::inspect_options()
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
                    .map(|parsed| (parsed.header, parsed.layout))
                    .map_err(|e| crate::message::cause_text(&e)),
            ),
            Err(err) => Some(Err(crate::message::cause_text(&err))),
        };
        out.push(MemberSummary { info, array });
    }
    Ok(out)
}

/// `npy info` on an archive.
pub fn info(path: &Path, json: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut archive = source::open_archive_for(path, describe_options())?;
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
/// `npy index`: the checkpoints of the archive's deflated members without
/// a block index of their own, saved beside it.
pub fn index(args: &IndexArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let path = &args.archive;
    if crate::remote::url_of(path).is_some() || source::is_stdin(path) {
        bail!(
            "{}: npy index writes the index beside a local archive (copy it here first: npy cp)",
            path.display()
        );
    }
    let mut archive = source::open_archive_for(path, describe_options())?;
    let sidecar = npy_mmap::npz::index_path(path);
    let deflated = archive
        .member_names()
        .iter()
        .filter(|name| {
            archive
                .info(name)
                .is_ok_and(|info| info.compression == MemberCompression::Deflated)
        })
        .count();
    let saved = archive
        .save_index(&sidecar)
        .with_context(|| format!("cannot index {}", path.display()))?;
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    writeln!(
        out,
        "{}: {saved} deflated member{} indexed ({} with the archive's own block index)",
        sidecar.display(),
        plural(saved),
        deflated - saved,
    )?;
    Ok(())
}

pub fn ls(args: &LsArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut archive = source::open_archive_for(&args.archive, describe_options())?;
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
    let mut archive = source::open_archive_for(&args.archive, source::inspect_options())?;
    let explicit = !args.names.is_empty();
    let wanted: Vec<String> = if explicit {
        for name in &args.names {
            source::check_member(&archive, &args.archive, name)?;
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
        crate::output::refuse_to_replace(&args.dir.join(&relative), args.force)?;
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
        // is opened without following symbolic links. Without --force a
        // file that appeared meanwhile is refused at the rename.
        let mut file =
            output::create_within(&args.dir, &relative, args.force).with_context(|| {
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
        output::committed(file.commit())
            .with_context(|| format!("cannot extract member '{member}'"))?;
        writeln!(out, "{}", destination.display())?;
    }
    Ok(())
}

/// `npy pack`: each input becomes the member named after its file stem.
pub fn pack(args: &PackArgs) -> anyhow::Result<()> {
    crate::output::refuse_to_replace(&args.output, args.force)?;
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
        inputs.push((key, source::map_npy(path, npy_mmap::Advice::Sequential)?));
    }
    let compression = if args.compress {
        Compression::DEFLATED
    } else {
        Compression::Stored
    };
    // Without --force, an archive that appeared meanwhile is refused at the rename.
    let file = output::create(&args.output, args.force)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    let mut writer = NpzWriter::create_with(file)?;
    writer.set_compression(compression)?;
    for (key, array) in &mut inputs {
        // Streamed in chunks: a sparse input is read through the file, and
        // nothing is held whole in memory.
        let mut member = writer.start_array(key, array.header())?;
        array.for_each_chunk(4 << 20, &mut |chunk| {
            member.write_all(chunk)?;
            Ok(ControlFlow::Continue(()))
        })?;
        member.finish()?;
    }
    output::committed(writer.finish())
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
            assert_eq!(
                extract_path(bad).unwrap_err().to_string(),
                format!(
                    "refusing to extract member '{bad}': its name leads outside the target directory"
                )
            );
        }
    }
}

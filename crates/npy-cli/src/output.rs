//! The files a command writes: replaced only when the user says so
//! (`--force`), and refused *at the rename* otherwise, so a file that
//! appears at the destination while the command works is never replaced.

use std::path::Path;

use npy_mmap::AtomicFile;

/// The refusal of every command that would replace an existing file
/// without `--force` (`create` gets it from the library, atomically).
pub fn exists_error(path: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "{} exists; remove it first, or replace it with --force",
        path.display()
    )
}

/// Refuses to replace what is at `path` (a file, a link, anything) unless
/// `force`. Checked before any work, so that a refused command writes
/// nothing; a file that appears at `path` while the command runs is then
/// refused by the commit of the [`create`]d file.
///
/// A symbolic link is never written through: the commit renames over the
/// link itself (with `force`), and what it points at is left alone.
pub fn refuse_to_replace(path: &Path, force: bool) -> anyhow::Result<()> {
    match path.symlink_metadata() {
        Ok(_) if force => Ok(()),
        Ok(meta) if meta.file_type().is_symlink() => Err(anyhow::anyhow!(
            "{} is a symbolic link, and output is never written through one; remove it \
             first, or replace the link itself with --force",
            path.display()
        )),
        Ok(_) => Err(exists_error(path)),
        Err(_) => Ok(()),
    }
}

/// Refuses an output that is one of the command's `inputs`, even with
/// `--force`: the command would replace what it reads. The same file is
/// found by device and inode, whatever the names (another spelling, a
/// hard link). What the output names is what a commit would replace: a
/// symbolic link there is replaced itself, so a link to an input is not
/// the input.
pub fn refuse_input_as_output<'a>(
    output: &Path,
    inputs: impl IntoIterator<Item = &'a Path>,
) -> anyhow::Result<()> {
    let Ok(replaced) = output.symlink_metadata() else {
        return Ok(()); // nothing there: nothing of an input is replaced
    };
    for input in inputs {
        let Ok(read) = input.metadata() else { continue };
        if same_file(&replaced, &read) {
            let shown = std::fs::canonicalize(input).unwrap_or_else(|_| input.to_owned());
            anyhow::bail!(
                "{} is an input ({}), the same file: write the output elsewhere \
                 (--force never replaces an input)",
                output.display(),
                shown.display()
            );
        }
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}

/// The temporary file for `path` (see [`AtomicFile::create`]), whose commit
/// replaces a file at `path` only when `force`.
pub fn create(path: &Path, force: bool) -> std::io::Result<AtomicFile> {
    let file = AtomicFile::create(path)?.replace_existing(force);
    test_hook();
    Ok(file)
}

/// [`create`] for `folder/relative`, never leaving `folder` (see
/// [`AtomicFile::create_within`]).
pub fn create_within(folder: &Path, relative: &Path, force: bool) -> std::io::Result<AtomicFile> {
    let file = AtomicFile::create_within(folder, relative)?.replace_existing(force);
    test_hook();
    Ok(file)
}

/// In debug builds only (the tests'), `NPY_TEST_AFTER_TEMPORARY` is a shell
/// command run once each temporary exists, after every check the command
/// made and before its commit: how `tests/no_replace.rs` makes a
/// destination appear at exactly that moment, as another process might.
fn test_hook() {
    #[cfg(debug_assertions)]
    if let Some(command) = std::env::var_os("NPY_TEST_AFTER_TEMPORARY") {
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .status();
        assert!(
            status.as_ref().is_ok_and(|status| status.success()),
            "NPY_TEST_AFTER_TEMPORARY failed: {status:?}"
        );
    }
}

/// A commit's error in the command line's words: a destination that
/// appeared meanwhile is [`exists_error`].
pub fn committed(result: npy_mmap::Result<()>) -> anyhow::Result<()> {
    match result {
        Err(err) if matches!(err.kind(), npy_mmap::ErrorKind::AlreadyExists) => match err.path() {
            Some(path) => Err(exists_error(path)),
            None => Err(err.into()),
        },
        other => Ok(other?),
    }
}

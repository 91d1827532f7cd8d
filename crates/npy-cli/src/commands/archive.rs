//! `.npz` archives: `ls`, `extract`, `pack`, and the npz side of `info` and `validate`.

use std::io::Write;
use std::path::Path;

use npy_core::ParseOptions;

use crate::commands::Verdict;

/// `npy info` on an archive.
pub fn info(path: &Path, json: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let _ = (path, json, out);
    anyhow::bail!("npz archives are not supported yet")
}

/// `npy validate` on an archive: every member.
pub fn validate(path: &Path, options: &ParseOptions) -> anyhow::Result<Verdict> {
    let _ = (path, options);
    anyhow::bail!("npz archives are not supported yet")
}

/// The array of one member, for `show` and `stats`.
pub fn open_member(
    path: &Path,
    member: Option<&str>,
) -> anyhow::Result<crate::source::OpenedArray> {
    let _ = (path, member);
    anyhow::bail!("npz archives are not supported yet")
}

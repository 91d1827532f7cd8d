//! Issue 29, leftovers: `npy tidy DIR` lists the temporaries that killed
//! writers leave (`.NAME.<hex>.tmp`, a Dask store's `.NAME.partial-<hex>`)
//! and `--remove` deletes the stale ones: never one that a live writer or a
//! mapping holds, nothing outside the folder, no symbolic link followed.

mod common;

use std::path::Path;
use std::process::Command;

use common::{assert_exit, npy, scratch, stdout};

/// `np.arange(n, dtype='<i8')` as np.save writes it.
fn arange_i8(dir: &Path, name: &str, n: usize) -> std::path::PathBuf {
    let dict = format!("{{'descr': '<i8', 'fortran_order': False, 'shape': ({n},), }}");
    let data: Vec<u8> = (0..n as i64).flat_map(|v| v.to_le_bytes()).collect();
    common::write(
        dir,
        name,
        &common::npy_bytes(&dict, 21 - n.to_string().len(), &data),
    )
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
#[cfg(unix)]
fn tidy_removes_stale_leftovers_and_keeps_live_ones() {
    let root = scratch("tidy_stale_and_live");
    let dir = root.join("data");
    std::fs::create_dir_all(&dir).unwrap();
    let source = arange_i8(&root, "source.npy", 1000);

    // A real leftover: `npy convert` killed (SIGKILL) the moment its
    // temporary exists, by the debug build's hook.
    let killed = Command::new(env!("CARGO_BIN_EXE_npy"))
        .args([
            "convert".as_ref(),
            source.as_os_str(),
            dir.join("killed.npy").as_os_str(),
        ])
        .env("NPY_TEST_AFTER_TEMPORARY", "kill -9 $PPID")
        .output()
        .unwrap();
    assert_eq!(killed.status.code(), None, "killed by a signal");
    let killed_temp = names(&dir);
    assert_eq!(killed_temp.len(), 1, "{killed_temp:?}");
    assert!(killed_temp[0].starts_with(".killed.npy.") && killed_temp[0].ends_with(".tmp"));

    // A live writer in this process: its temporary is locked.
    let mut live = npy_mmap::AtomicFile::create(dir.join("live.npy")).unwrap();
    std::io::Write::write_all(&mut live, b"being written").unwrap();
    let live_temp = live.temp_path().to_path_buf();
    // A Dask store's partial file, mapped by a task (a mapping holds its
    // shared lock), and one a killed driver left.
    let partial = dir.join(".big.npy.partial-0123456789ab");
    std::fs::copy(&source, &partial).unwrap();
    let mapped = npy_mmap::open(&partial).unwrap();
    let dead_partial = dir.join(".old.npy.partial-ba9876543210");
    std::fs::write(&dead_partial, vec![0u8; 4096]).unwrap();
    // Not leftovers: a link named like one (to a file outside the folder),
    // a real file, a leftover-named file in a subfolder and one outside.
    let victim = root.join("victim.npy");
    std::fs::write(&victim, b"keep me").unwrap();
    let link = dir.join(".link.npy.0123456789abcdef.tmp");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    std::fs::write(dir.join("kept.npy"), b"a real file").unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let nested = dir.join("sub/.n.npy.0123456789abcdef.tmp");
    std::fs::write(&nested, b"x").unwrap();
    let outside = root.join(".o.npy.0123456789abcdef.tmp");
    std::fs::write(&outside, b"x").unwrap();
    let before = names(&dir);

    // Listing: everything just changed, so nothing is old enough (the
    // default --min-age is an hour); nothing is touched.
    let listed = npy(["tidy".as_ref(), dir.as_os_str()]);
    assert_exit(&listed, 0);
    let text = stdout(&listed);
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(
        text.lines().all(|line| line.starts_with("recent ")),
        "{text}"
    );
    // Old enough: the lock decides.
    let listed = npy(["tidy".as_ref(), dir.as_os_str(), "--min-age=0".as_ref()]);
    assert_exit(&listed, 0);
    let text = stdout(&listed);
    let line_of = |path: &Path| {
        text.lines()
            .find(|line| line.contains(&*path.to_string_lossy()))
            .unwrap_or_else(|| panic!("{} not listed: {text}", path.display()))
            .to_string()
    };
    assert!(
        line_of(&dir.join(&killed_temp[0])).starts_with("stale       temporary"),
        "{text}"
    );
    assert!(
        line_of(&live_temp).starts_with("in use      temporary"),
        "{text}"
    );
    assert!(
        line_of(&partial).starts_with("in use      Dask partial"),
        "{text}"
    );
    assert!(
        line_of(&dead_partial).starts_with("stale       Dask partial"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 4, "{text}");
    assert_eq!(names(&dir), before, "listing removes nothing");

    // --remove: the stale two go, the rest stays.
    let removed = npy([
        "tidy".as_ref(),
        dir.as_os_str(),
        "--remove".as_ref(),
        "--min-age".as_ref(),
        "0".as_ref(),
    ]);
    assert_exit(&removed, 0);
    let text = stdout(&removed);
    assert_eq!(text.matches("removed ").count(), 2, "{text}");
    assert!(!dir.join(&killed_temp[0]).exists());
    assert!(!dead_partial.exists());
    assert!(live_temp.exists() && partial.exists());
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    assert!(nested.exists() && outside.exists());
    assert!(dir.join("kept.npy").exists());

    // The live writer and the mapping were not disturbed.
    drop(mapped);
    live.commit().unwrap();
    assert_eq!(
        std::fs::read(dir.join("live.npy")).unwrap(),
        b"being written"
    );
}

//! Object arrays: numpy's pickle of short strings, decoded by our

use anyhow::{Result, ensure};
use npy_bench::{Contender, Row, Samples};
use npy_core::ReadOptions;
use serde_json::json;

use crate::{Harness, time};

use super::path_str;
use Contender::Ours;

// 9. Object arrays: numpy's pickle of short strings, decoded by our
// restricted unpickler and by np.load(allow_pickle=True); saved back.
pub fn objects(h: &mut Harness) -> Result<()> {
    let path = h.args.dir.join("objects.npy");
    let count = h.args.objects;
    // numpy writes the file (so ours decodes numpy's own pickle) and times itself.
    let report = h.numpy(
        "objects",
        json!({"path": path_str(&path), "count": count, "runs": h.args.runs.max(5)}),
    );
    let mut options = ReadOptions::default();
    options.parse.allow_pickle = true;
    let mut loaded = None;
    let load = Samples::new(
        (0..h.args.runs.max(5))
            .map(|_| {
                let (seconds, array) = time(|| npy_mmap::OpenOptions::from(options).load(&path));
                loaded = Some(array);
                seconds
            })
            .collect(),
    );
    let array = loaded.expect("at least one run")?;
    let values = array.objects().map_or(0, <[_]>::len);
    ensure!(values == count, "decoded {values} values, expected {count}");
    let mut row = Row::new(
        "objects.load",
        format!("load object array, {count} short str"),
    );
    row.set(Ours, load);
    h.push(row, report.as_ref());
    let copy = h.args.dir.join("objects-ours.npy");
    let save = Samples::new(
        (0..h.args.runs.max(5))
            .map(|_| time(|| npy_mmap::save(&copy, &array).expect("saves")).0)
            .collect(),
    );
    let mut row = Row::new(
        "objects.save",
        format!("save object array, {count} short str"),
    );
    row.set(Ours, save);
    h.push(row, report.as_ref());
    h.cleanup(&[path, copy])
}

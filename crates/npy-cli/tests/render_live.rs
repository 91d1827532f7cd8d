//! Live numpy + matplotlib comparison of `npy render` (ignored by default;
//! `.ci/run` runs it with `NPY_PYTHON` from scripts/setup-venv.sh, whose venv
//! has the pinned numpy and matplotlib): numpy writes arrays of many dtypes,
//! orders and shapes, computes what each pixel must be (block reductions
//! with numpy, colours with matplotlib's `cmap(t, bytes=True)` for
//! `t = (v - vmin) / (vmax - vmin)`), and every pixel of our bare PNG must
//! equal it exactly.

mod common;

use std::path::Path;
use std::process::Command;

use common::{assert_exit, npy, scratch, stdout};

/// Writes `<case>.npy` and `<case>.rgb` (the expected pixels, row-major RGB
/// or RGBA bytes) per case, and `cases.json` with each case's arguments,
/// size and expected colour range.
const GENERATE: &str = r#"
import json, sys
import numpy as np
import matplotlib

out = sys.argv[1]
rng = np.random.default_rng(16)
SPECIAL = {"nan": (255, 0, 255), "posinf": (0, 255, 0), "neginf": (0, 255, 255)}

def colours(v, vmin, vmax, cmap):
    v = np.asarray(v, dtype=np.float64)
    with np.errstate(all="ignore"):
        t = np.zeros_like(v) if vmax == vmin else (v - vmin) / (vmax - vmin)
    rgb = matplotlib.colormaps[cmap](t, bytes=True)[..., :3].copy()
    rgb[np.isnan(v)] = SPECIAL["nan"]
    rgb[v == np.inf] = SPECIAL["posinf"]
    rgb[v == -np.inf] = SPECIAL["neginf"]
    return rgb

def edges(n, bins):
    return [i * n // bins for i in range(bins + 1)]

def reduce(a, out_rows, out_cols, how):
    a = np.asarray(a, dtype=np.float64)
    re, ce = edges(a.shape[0], out_rows), edges(a.shape[1], out_cols)
    result = np.empty((out_rows, out_cols) + a.shape[2:])
    with np.errstate(all="ignore"), __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore")
        for i in range(out_rows):
            for j in range(out_cols):
                block = a[re[i]:re[i + 1], ce[j]:ce[j + 1]]
                if how == "nearest":
                    result[i, j] = a[re[i] + (re[i + 1] - re[i]) // 2, ce[j] + (ce[j + 1] - ce[j]) // 2]
                else:
                    result[i, j] = {"mean": np.nanmean, "max": np.nanmax, "min": np.nanmin}[how](block, axis=(0, 1))
    return result

def magnify(rgb, m):
    return np.repeat(np.repeat(rgb, m, axis=0), m, axis=1)

cases = {}
def case(name, array, args, drawn, cmap="viridis", vmin=None, vmax=None, m=1, is_bool=False):
    np.save(f"{out}/{name}.npy", array)
    finite = drawn[np.isfinite(drawn)]
    if is_bool:
        vmin, vmax = 0.0, 1.0
    lo = float(np.percentile(finite, 2)) if vmin is None else vmin
    hi = float(np.percentile(finite, 98)) if vmax is None else vmax
    rgb = magnify(colours(drawn, lo, hi, cmap), m)
    rgb.astype(np.uint8).tofile(f"{out}/{name}.rgb")
    cases[name] = {"args": args + ["--cmap", cmap], "width": rgb.shape[1], "height": rgb.shape[0],
                   "channels": 3, "vmin": lo, "vmax": hi}

def image_case(name, array, args, expected):
    np.save(f"{out}/{name}.npy", array)
    expected.astype(np.uint8).tofile(f"{out}/{name}.rgb")
    cases[name] = {"args": args, "width": expected.shape[1], "height": expected.shape[0],
                   "channels": expected.shape[2]}

# Percentile range, NaN and infinities, magnified 2x.
a = rng.standard_normal((40, 60)).astype(np.float32)
a[3, 4], a[5, 6], a[7, 8] = np.nan, np.inf, -np.inf
case("f4_percentiles", a, ["--width", "120"], a.astype(np.float64), m=2)
# Big-endian, Fortran order, explicit range.
b = np.asfortranarray(rng.standard_normal((50, 30))).astype(">f8")
case("f8_be_fortran", b, ["--vmin", "-1.5", "--vmax", "2", "--width", "30"], b.astype(np.float64), cmap="magma", vmin=-1.5, vmax=2.0)
# Integers reduced by block means over uneven blocks (integer sums are exact).
c = rng.integers(-3000, 3000, (64, 96)).astype("<i2")
case("i2_mean_uneven", c, ["--width", "32"], reduce(c, 21, 32, "mean"), cmap="gray")
# Maximum and minimum and nearest of floats.
d = rng.standard_normal((80, 120)).astype(np.float32)
d[0:3, 0:3] = np.nan
case("f4_max", d, ["--width", "40", "--reduce", "max"], reduce(d, 27, 40, "max"), cmap="RdBu_r")
case("f4_min", d, ["--width", "40", "--reduce", "min"], reduce(d, 27, 40, "min"), cmap="inferno")
case("f4_nearest", d, ["--width", "40", "--reduce", "nearest"], reduce(d, 27, 40, "nearest"), cmap="plasma")
# Block means with NaN (left out, all-NaN blocks stay NaN) and inf - inf (NaN).
e = rng.integers(0, 100, (60, 90)).astype(np.float64)
e[0:3, 0:3] = np.nan
e[3:6, 0] = np.nan
e[0, 3] = np.inf
e[0, 6], e[1, 7] = np.inf, -np.inf
case("f8_nanmean", e, ["--width", "30"], reduce(e, 20, 30, "mean"))
# A 2-D slice of a 3-D bool stack: two colours.
f = rng.random((4, 20, 30)) > 0.5
case("bool_slice", f, ["--index", "2,:,:", "--width", "30"], f[2].astype(np.float64), cmap="inferno", is_bool=True)
# Complex parts.
g = (rng.standard_normal((30, 40)) + 1j * rng.standard_normal((30, 40))).astype(np.complex128)
case("c16_angle", g, ["--part", "angle", "--width", "40"], np.angle(g), cmap="RdBu")
case("c16_abs", g, ["--part", "abs", "--width", "40"], np.abs(g), cmap="plasma")
h = np.asfortranarray(g[:, :20]).astype(">c8")
case("c8_be_imag", h, ["--part", "imag", "--width", "20"], h.imag.astype(np.float64))
# Small integer and half-float arrays, a slice of a Fortran-ordered 3-D array.
u = rng.integers(0, 256, (20, 30), dtype=np.uint8)
case("u8_heat", u, ["--width", "30"], u.astype(np.float64))
k = (rng.standard_normal((16, 16)) * 10).astype(np.float16)
case("f2", k, ["--width", "16"], k.astype(np.float64))
s = np.asfortranarray(rng.standard_normal((5, 12, 18)))
case("f8_fortran_slice", s, ["--index", ":,3,:", "--width", "18"], s[:, 3, :])
# Long double (x87 on x86-64 Linux) rounded to float64, and 64-bit integers.
ld = (np.arange(12 * 15, dtype=np.longdouble) / 7).reshape(12, 15)
case("g_longdouble", ld, ["--width", "15"], ld.astype(np.float64))
big = (rng.integers(-2**62, 2**62, (10, 12), dtype=np.int64) * 2 + 1).astype(">i8")
case("i8_be", big, ["--width", "12"], big.astype(np.float64), cmap="gray_r")
# Images: uint8 block means round half up; float RGB scales like imshow.
img = rng.integers(0, 256, (40, 60, 3), dtype=np.uint8)
means = reduce(img, 20, 30, "mean")
image_case("rgb_mean", img, ["--width", "30"], np.floor(means + 0.5))
rgba = np.asfortranarray(rng.integers(0, 256, (10, 14, 4), dtype=np.uint8))
image_case("rgba_fortran", rgba, [], rgba)
frgb = rng.random((12, 16, 3)) * 1.2 - 0.1
image_case("float_rgb", frgb, ["--rgb"], (np.clip(frgb, 0, 1) * 255).astype(np.uint8))

# Histogram counts and edges, as numpy.histogram of the finite values.
x = rng.standard_normal(100_000)
x[::1000] = np.nan
x[5] = np.inf
np.save(f"{out}/hist.npy", x)
counts, hist_edges = np.histogram(x[np.isfinite(x)], bins=37)
hist = {"counts": counts.tolist(), "edges": hist_edges.tolist(), "nan": int(np.isnan(x).sum())}
json.dump({"cases": cases, "hist": hist}, open(f"{out}/cases.json", "w"))
"#;

fn generate(dir: &Path) -> serde_json::Value {
    common::numpy_answers(GENERATE, dir, "cases.json")
}

fn decode(path: &Path) -> (usize, usize, usize, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    pixels.truncate(info.buffer_size());
    (
        info.width as usize,
        info.height as usize,
        info.color_type.samples(),
        pixels,
    )
}

#[test]
#[ignore = "needs numpy and matplotlib: run with NPY_PYTHON set (.ci/run)"]
fn pixels_are_what_numpy_and_matplotlib_give() {
    let dir = scratch("pixels_are_what_numpy_and_matplotlib_give");
    let expected = generate(&dir);
    let mut failures = Vec::new();
    for (name, case) in expected["cases"].as_object().unwrap() {
        let png = dir.join(format!("{name}.png"));
        let mut args: Vec<String> = vec![
            "render".into(),
            dir.join(format!("{name}.npy")).display().to_string(),
            png.display().to_string(),
            "--bare".into(),
            "--json".into(),
        ];
        args.extend(
            case["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string()),
        );
        let output = npy(&args);
        if output.status.code() != Some(0) {
            failures.push(format!(
                "{name}: {}",
                String::from_utf8_lossy(&output.stderr)
            ));
            continue;
        }
        let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
        for key in ["vmin", "vmax"] {
            if case.get(key).is_some() && report[key] != case[key] {
                failures.push(format!(
                    "{name}: {key} {} != numpy's {}",
                    report[key], case[key]
                ));
            }
        }
        let (width, height, channels, pixels) = decode(&png);
        let size = |key: &str| case[key].as_u64().unwrap() as usize;
        if (width, height, channels) != (size("width"), size("height"), size("channels")) {
            failures.push(format!(
                "{name}: size {width}x{height}x{channels}, expected {case}"
            ));
            continue;
        }
        let want = std::fs::read(dir.join(format!("{name}.rgb"))).unwrap();
        let wrong = pixels
            .chunks(channels)
            .zip(want.chunks(channels))
            .filter(|(a, b)| a != b)
            .count();
        if wrong > 0 {
            let first = pixels
                .chunks(channels)
                .zip(want.chunks(channels))
                .position(|(a, b)| a != b)
                .unwrap();
            failures.push(format!(
                "{name}: {wrong} of {} pixels differ; first at ({}, {}): ours {:?}, matplotlib {:?}",
                width * height,
                first % width,
                first / width,
                &pixels[first * channels..(first + 1) * channels],
                &want[first * channels..(first + 1) * channels]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs numpy and matplotlib: run with NPY_PYTHON set (.ci/run)"]
fn histograms_count_like_numpy() {
    let dir = scratch("histograms_count_like_numpy");
    let expected = generate(&dir);
    let output = npy([
        "render".as_ref(),
        dir.join("hist.npy").as_os_str(),
        dir.join("hist.png").as_os_str(),
        "--hist".as_ref(),
        "--bins".as_ref(),
        "37".as_ref(),
        "--json".as_ref(),
    ]);
    assert_exit(&output, 0);
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let hist = &expected["hist"];
    assert_eq!(report["counts"], hist["counts"]);
    assert_eq!(report["edges"], hist["edges"]);
    assert_eq!(report["nan"], hist["nan"]);
    assert_eq!(report["posinf"], 1);
}

#[test]
#[ignore = "needs numpy and matplotlib: run with NPY_PYTHON set (.ci/run)"]
fn the_committed_colormaps_are_matplotlibs() {
    let script = r#"
import matplotlib, numpy as np, re, sys
text = open(sys.argv[1]).read()
for name in ["viridis", "magma", "inferno", "plasma", "gray", "RdBu"]:
    body = re.search(r"pub const %s: \[\[u8; 3\]; 256\] = \[(.*?)\];" % name.upper(), text, re.S).group(1)
    ours = np.array([int(n) for n in re.findall(r"\d+", body)]).reshape(256, 3)
    theirs = matplotlib.colormaps[name](np.arange(256), bytes=True)[:, :3]
    assert (ours == theirs).all(), name
"#;
    let tables = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/render/colormap_tables.rs");
    let status = Command::new(common::python())
        .args(["-c", script])
        .arg(tables)
        .status()
        .expect("python runs");
    assert!(
        status.success(),
        "a committed colormap differs from matplotlib's (rerun scripts/gen_colormaps.py)"
    );
}

/// What matplotlib and numpy say when a colour or histogram range is
/// refused, next to what `npy render` says for the same range: ours must
/// contain theirs word for word.
const REFUSALS: &str = r#"
import json, sys
import numpy as np
from matplotlib.colors import Normalize
out = sys.argv[1]
np.save(f"{out}/a.npy", np.arange(6.0).reshape(2, 3))
words = {}
try:
    Normalize(vmin=2, vmax=1)(np.array([1.5]))
except ValueError as e:
    words["colour_order"] = str(e)
try:
    np.histogram(np.arange(6.0), range=(2, 1))
except ValueError as e:
    words["hist_order"] = str(e)
try:
    np.histogram(np.arange(6.0), range=(0.0, np.inf))
except ValueError as e:
    words["hist_finite"] = str(e)
json.dump(words, open(f"{out}/words.json", "w"))
"#;

#[test]
#[ignore = "needs numpy and matplotlib: run with NPY_PYTHON set (.ci/run)"]
fn range_refusals_use_matplotlibs_and_numpys_words() {
    let dir = scratch("range_refusals_use_matplotlibs_and_numpys_words");
    let words = common::numpy_answers(REFUSALS, &dir, "words.json");
    let input = dir.join("a.npy");
    let out = dir.join("a.png");
    for (key, args) in [
        ("colour_order", vec!["--vmin", "2", "--vmax", "1"]),
        ("hist_order", vec!["--hist", "--vmin", "2", "--vmax", "1"]),
        (
            "hist_finite",
            vec!["--hist", "--vmin", "0", "--vmax", "inf"],
        ),
    ] {
        let theirs = words[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key}: {words}"));
        let mut all: Vec<&std::ffi::OsStr> =
            vec!["render".as_ref(), input.as_os_str(), out.as_os_str()];
        all.extend(args.iter().map(std::ffi::OsStr::new));
        let output = npy(&all);
        assert_eq!(output.status.code(), Some(1), "{key}");
        let ours = String::from_utf8_lossy(&output.stderr);
        assert!(
            ours.contains(theirs),
            "{key}: ours {ours:?}, theirs {theirs:?}"
        );
    }
}

//! The extremes of every dtype `npy render` draws, in every mode: each
//! array either renders (exit 0, a PNG) or is refused with the right words
//! (an empty array: "nothing to draw"). `[0.0, 1.7e308]` used to loop
//! forever in plotters' tick search, and `[[-1.7e308, 1.7e308]]` was refused
//! with "--vmin and --vmax must be finite" though neither was given.
//!
//! No clocks: a hang is caught by a generous ceiling per run (a minute, for
//! what takes milliseconds), which kills the child and fails the test.

mod common;

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{npy_bytes, scratch, write};

/// One named value of a dtype, as its little-endian bytes.
type Named = (&'static str, Vec<u8>);

/// The values worth drawing of a dtype: its extremes, zero, and for floats
/// the infinities, NaN, the smallest subnormal and the smallest normal.
fn extremes(descr: &str) -> Vec<Named> {
    macro_rules! ints {
        ($t:ty) => {
            vec![
                ("min", <$t>::MIN.to_le_bytes().to_vec()),
                ("max", <$t>::MAX.to_le_bytes().to_vec()),
                ("zero", (0 as $t).to_le_bytes().to_vec()),
                ("one", (1 as $t).to_le_bytes().to_vec()),
            ]
        };
    }
    macro_rules! floats {
        ($t:ty) => {
            vec![
                ("lowest", <$t>::MIN.to_le_bytes().to_vec()),
                ("max", <$t>::MAX.to_le_bytes().to_vec()),
                ("zero", (0.0 as $t).to_le_bytes().to_vec()),
                ("inf", <$t>::INFINITY.to_le_bytes().to_vec()),
                ("-inf", <$t>::NEG_INFINITY.to_le_bytes().to_vec()),
                ("nan", <$t>::NAN.to_le_bytes().to_vec()),
                ("subnormal", <$t>::from_bits(1).to_le_bytes().to_vec()),
                ("-subnormal", (-<$t>::from_bits(1)).to_le_bytes().to_vec()),
                ("min-normal", <$t>::MIN_POSITIVE.to_le_bytes().to_vec()),
            ]
        };
    }
    let half = |bits: u16| bits.to_le_bytes().to_vec();
    // x87 extended precision in 16 bytes: 64-bit mantissa (explicit
    // integer bit), then sign and 15-bit exponent, then padding.
    let long = |exponent: u16, mantissa: u64| {
        let mut bytes = mantissa.to_le_bytes().to_vec();
        bytes.extend_from_slice(&exponent.to_le_bytes());
        bytes.extend_from_slice(&[0; 6]);
        bytes
    };
    match descr {
        "|b1" => vec![("false", vec![0]), ("true", vec![1])],
        "|u1" => ints!(u8),
        "|i1" => ints!(i8),
        "<u2" => ints!(u16),
        "<i2" => ints!(i16),
        "<u4" => ints!(u32),
        "<i4" => ints!(i32),
        "<u8" => ints!(u64),
        "<i8" => ints!(i64),
        "<f2" => vec![
            ("lowest", half(0xfbff)),
            ("max", half(0x7bff)),
            ("zero", half(0)),
            ("inf", half(0x7c00)),
            ("-inf", half(0xfc00)),
            ("nan", half(0x7e00)),
            ("subnormal", half(1)),
            ("-subnormal", half(0x8001)),
            ("min-normal", half(0x0400)),
        ],
        "<f4" | "<c8" => floats!(f32),
        "<f8" | "<c16" => floats!(f64),
        "<f16" => vec![
            ("lowest", long(0xfffe, u64::MAX)),
            ("max", long(0x7ffe, u64::MAX)),
            ("zero", long(0, 0)),
            ("inf", long(0x7fff, 1 << 63)),
            ("-inf", long(0xffff, 1 << 63)),
            ("nan", long(0x7fff, 3 << 62)),
            ("subnormal", long(0, 1)),
            ("-subnormal", long(0x8000, 1)),
            ("min-normal", long(1, 1 << 63)),
        ],
        _ => unreachable!("{descr}"),
    }
}

/// The arrays drawn for a dtype: every value beside zero and beside itself
/// (all equal), lowest beside highest, all of them at once, and nothing.
fn arrays(values: &[Named]) -> Vec<(String, Vec<&[u8]>)> {
    let zero = values
        .iter()
        .find(|(name, _)| matches!(*name, "zero" | "false"))
        .map(|(_, bytes)| bytes.as_slice())
        .expect("every dtype has a zero");
    let mut arrays = Vec::new();
    for (name, bytes) in values {
        arrays.push((format!("zero,{name}"), vec![zero, bytes.as_slice()]));
        arrays.push((format!("{name},{name}"), vec![bytes.as_slice(); 2]));
    }
    arrays.push((
        "first,second".to_string(),
        vec![values[0].1.as_slice(), values[1].1.as_slice()],
    ));
    arrays.push((
        "all".to_string(),
        values.iter().map(|(_, b)| b.as_slice()).collect(),
    ));
    arrays.push(("empty".to_string(), Vec::new()));
    arrays
}

/// Runs `npy args`, killing it after a minute (a hang, not a slow run).
fn run(args: &[OsString]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_npy"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("npy runs");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for npy") {
            let mut stderr = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            return (status.code(), stderr);
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("npy {args:?} still runs after a minute: a hang");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Renders every array of `descr` in every mode it has.
fn render_every_extreme(descr: &str) {
    let dir = scratch(&format!("extremes-{}", descr.replace(['<', '|'], "")));
    let values = extremes(descr);
    let complex = descr.starts_with("<c");
    let float = complex || descr.starts_with("<f");
    let item = values[0].1.len() * if complex { 2 } else { 1 };
    for (i, (name, elements)) in arrays(&values).into_iter().enumerate() {
        let data: Vec<u8> = elements
            .iter()
            .flat_map(|bytes| {
                // A complex element: the value as real and imaginary part.
                let parts = if complex { 2 } else { 1 };
                bytes.repeat(parts)
            })
            .collect();
        let n = data.len() / item;
        let file = |shape: &str, data: &[u8], tag: &str| {
            let dict =
                format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
            write(&dir, &format!("{i}-{tag}.npy"), &npy_bytes(&dict, 0, data))
        };
        let line = file(&format!("({n},)"), &data, "line");
        let heat = file(&format!("(1, {n})"), &data, "heat");
        let mut cases: Vec<(Vec<&str>, &Path)> =
            vec![(vec![], &line), (vec!["--hist"], &line), (vec![], &heat)];
        let widest = matches!(name.as_str(), "all" | "first,second" | "empty");
        if widest {
            // A given range, values outside it left out.
            cases.push((vec!["--hist", "--vmin", "-1e308", "--vmax", "1e308"], &line));
        }
        if complex {
            cases.push((vec!["--part", "angle"], &heat));
            cases.push((vec!["--part", "real"], &line));
        }
        let rgb_data: Vec<u8> = data.iter().copied().cycle().take(data.len() * 3).collect();
        let rgb = file(&format!("(1, {n}, 3)"), &rgb_data, "rgb");
        if float && !complex {
            cases.push((vec!["--rgb"], &rgb));
        }
        for (options, input) in &cases {
            let out = dir.join(format!("{i}.png"));
            let _ = std::fs::remove_file(&out);
            let mut args: Vec<OsString> = vec!["render".into(), input.into(), (&out).into()];
            args.extend(["--width", "200", "--height", "150"].map(OsString::from));
            args.extend(options.iter().map(OsString::from));
            check(descr, &name, &args, n, Some(&out));
            // The same picture in the terminal (`npy show --image`), for
            // the widest arrays (its ranges and ticks are the PNG's).
            if !widest {
                continue;
            }
            let mut args: Vec<OsString> = vec!["show".into(), input.into(), "--image".into()];
            args.extend(["--width", "40"].map(OsString::from));
            args.extend(options.iter().map(OsString::from));
            check(descr, &name, &args, n, None);
        }
    }
}

/// One run: a picture, or for an empty array "nothing to draw" (but an
/// empty histogram, as numpy.histogram's of nothing, over 0..1).
fn check(descr: &str, name: &str, args: &[OsString], n: usize, png: Option<&Path>) {
    let (code, stderr) = run(args);
    if n == 0 && !args.iter().any(|a| a == "--hist") {
        assert_eq!(code, Some(1), "{descr} {name} {args:?}: {stderr}");
        assert!(
            stderr.contains("nothing to draw"),
            "{descr} {name} {args:?}: {stderr}"
        );
        return;
    }
    assert_eq!(code, Some(0), "{descr} {name} {args:?}: {stderr}");
    if let Some(png) = png {
        let bytes = std::fs::read(png).expect("a PNG was written");
        assert!(bytes.starts_with(b"\x89PNG"), "{descr} {name} {args:?}");
    }
}

macro_rules! dtype_tests {
    ($($test:ident: $descr:expr;)*) => {$(
        #[test]
        fn $test() {
            render_every_extreme($descr);
        }
    )*};
}

dtype_tests! {
    bool_extremes_render: "|b1";
    u8_extremes_render: "|u1";
    i8_extremes_render: "|i1";
    u16_extremes_render: "<u2";
    i16_extremes_render: "<i2";
    u32_extremes_render: "<u4";
    i32_extremes_render: "<i4";
    u64_extremes_render: "<u8";
    i64_extremes_render: "<i8";
    f16_extremes_render: "<f2";
    f32_extremes_render: "<f4";
    f64_extremes_render: "<f8";
    longdouble_extremes_render: "<f16";
    complex64_extremes_render: "<c8";
    complex128_extremes_render: "<c16";
}

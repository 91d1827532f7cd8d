//! `npy render` and `npy show --image` through the real binary: the PNG is
//! decoded and its pixels checked (numpy + matplotlib comparisons are in
//! render_live.rs).

mod common;

use std::path::Path;

use common::{assert_exit, npy, npy_bytes, scratch, stderr, stdout, write};

/// matplotlib's viridis at 0 and 1 (`viridis([0.0, 1.0], bytes=True)`).
const VIRIDIS_FIRST: [u8; 3] = [68, 1, 84];
const VIRIDIS_LAST: [u8; 3] = [253, 231, 36];
/// The line colour (matplotlib's C0).
const LINE: [u8; 3] = [31, 119, 180];

/// A decoded PNG: width, height, channels and the pixel bytes.
struct Png {
    width: usize,
    height: usize,
    channels: usize,
    pixels: Vec<u8>,
}

impl Png {
    fn pixel(&self, x: usize, y: usize) -> &[u8] {
        let at = (y * self.width + x) * self.channels;
        &self.pixels[at..at + self.channels]
    }
}

fn decode(path: &Path) -> Png {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    pixels.truncate(info.buffer_size());
    Png {
        width: info.width as usize,
        height: info.height as usize,
        channels: info.color_type.samples(),
        pixels,
    }
}

/// Runs `npy render` with `args`, expecting success, and decodes the PNG
/// (`--force`: the tests draw over their pictures).
fn render(input: &Path, output: &Path, args: &[&str]) -> Png {
    let mut all: Vec<&std::ffi::OsStr> = vec![
        "render".as_ref(),
        input.as_os_str(),
        output.as_os_str(),
        "--force".as_ref(),
    ];
    all.extend(args.iter().map(std::ffi::OsStr::new));
    let result = npy(all);
    assert_exit(&result, 0);
    decode(output)
}

fn shape_text(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// An .npy of `descr` with `shape` in C or Fortran order holding `data`.
fn array(
    dir: &Path,
    name: &str,
    descr: &str,
    shape: &[usize],
    fortran: bool,
    data: &[u8],
) -> std::path::PathBuf {
    let dict = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {}, }}",
        if fortran { "True" } else { "False" },
        shape_text(shape)
    );
    write(dir, name, &npy_bytes(&dict, 0, data))
}

/// Deterministic bytes that are no pattern a bug could reproduce by accident.
fn noise(len: usize, seed: u32) -> Vec<u8> {
    let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(12345);
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state >> 8) as u8
        })
        .collect()
}

#[test]
fn rgb_and_rgba_images_are_their_bytes_exactly() {
    let dir = scratch("rgb_and_rgba_images_are_their_bytes_exactly");
    for channels in [3, 4] {
        let (h, w) = (37, 53);
        let bytes = noise(h * w * channels, channels as u32);
        let input = array(
            &dir,
            &format!("c{channels}.npy"),
            "|u1",
            &[h, w, channels],
            false,
            &bytes,
        );
        let png = render(&input, &dir.join(format!("c{channels}.png")), &[]);
        assert_eq!((png.width, png.height, png.channels), (w, h, channels));
        assert_eq!(png.pixels, bytes);
    }
}

#[test]
fn fortran_order_images_and_stacks_give_the_same_bytes() {
    let dir = scratch("fortran_order_images_and_stacks_give_the_same_bytes");
    let (h, w, c) = (9, 11, 3);
    let image = noise(h * w * c, 7);
    // The same image stored in Fortran order: element (i, j, k) at i + h*j + h*w*k.
    let mut fortran = vec![0; image.len()];
    for i in 0..h {
        for j in 0..w {
            for k in 0..c {
                fortran[i + h * j + h * w * k] = image[(i * w + j) * c + k];
            }
        }
    }
    let input = array(&dir, "f.npy", "|u1", &[h, w, c], true, &fortran);
    assert_eq!(render(&input, &dir.join("f.png"), &[]).pixels, image);
    // A stack of two images; --index picks the second.
    let mut stack = noise(h * w * c, 8);
    stack.extend_from_slice(&image);
    let input = array(&dir, "stack.npy", "|u1", &[2, h, w, c], false, &stack);
    assert_eq!(
        render(&input, &dir.join("s.png"), &["--index", "1"]).pixels,
        image
    );
    assert_eq!(
        render(&input, &dir.join("s.png"), &["--index", "-1,:,:,:"]).pixels,
        image
    );
}

#[test]
fn float_rgb_scales_like_matplotlib() {
    let dir = scratch("float_rgb_scales_like_matplotlib");
    let values = [0.0f32, 0.5, 1.0, 1.5, -0.25, 0.999];
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let input = array(&dir, "rgb.npy", "<f4", &[1, 2, 3], false, &data);
    let png = render(&input, &dir.join("rgb.png"), &["--rgb"]);
    // (clip(x, 0, 1) * 255).astype(uint8), as matplotlib's imshow.
    assert_eq!(png.pixels, [0, 127, 255, 255, 0, 254]);
    let failed = npy([
        "render".as_ref(),
        input.as_os_str(),
        dir.join("x.png").as_os_str(),
    ]);
    assert_exit(&failed, 1);
    assert!(stderr(&failed).contains("--index"), "{}", stderr(&failed));
}

#[test]
fn a_single_spike_among_a_million_samples_is_drawn() {
    let dir = scratch("a_single_spike_among_a_million_samples_is_drawn");
    let len = 1_000_000;
    let spike = 777_777;
    let mut values = vec![0f32; len];
    values[spike] = 1.0;
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let input = array(&dir, "signal.npy", "<f4", &[len], false, &data);
    let (width, height) = (500, 100);
    let png = render(
        &input,
        &dir.join("bare.png"),
        &["--bare", "--width", "500", "--height", "100"],
    );
    assert_eq!((png.width, png.height), (width, height));
    let spike_column = spike * width / len;
    let drawn = |x: usize| {
        (0..height)
            .filter(|&y| png.pixel(x, y) == LINE)
            .collect::<Vec<_>>()
    };
    // The spike's column reaches from the baseline (bottom row) to the top row.
    assert_eq!(drawn(spike_column), (0..height).collect::<Vec<_>>());
    for x in (0..width).filter(|&x| x != spike_column && x != spike_column + 1) {
        assert_eq!(drawn(x), [height - 1], "column {x}");
    }
    // The column after the spike joins back down from the spike's last sample.
    assert_eq!(drawn(spike_column + 1), [height - 1]);

    // The full figure keeps it too: some line pixel near the top of the plot.
    let png = render(&input, &dir.join("figure.png"), &[]);
    let line_rows: Vec<usize> = (0..png.height)
        .filter(|&y| (0..png.width).any(|x| png.pixel(x, y) == LINE))
        .collect();
    let (top, bottom) = (line_rows[0], *line_rows.last().unwrap());
    assert!(
        bottom - top > png.height / 2,
        "line spans rows {top}..{bottom}"
    );
    let columns_at_top = (0..png.width)
        .filter(|&x| png.pixel(x, top) == LINE)
        .count();
    assert_eq!(columns_at_top, 1);
}

#[test]
fn bools_are_two_colours_and_heat_maps_magnify_small_arrays() {
    let dir = scratch("bools_are_two_colours_and_heat_maps_magnify_small_arrays");
    let mask = [1u8, 0, 0, 1, 1, 0];
    let input = array(&dir, "mask.npy", "|b1", &[2, 3], false, &mask);
    let png = render(&input, &dir.join("mask.png"), &["--bare", "--width", "30"]);
    // Magnified by a whole factor: 10 pixels per element.
    assert_eq!((png.width, png.height), (30, 20));
    for y in 0..20 {
        for x in 0..30 {
            let want = if mask[(y / 10) * 3 + x / 10] == 1 {
                VIRIDIS_LAST
            } else {
                VIRIDIS_FIRST
            };
            assert_eq!(png.pixel(x, y), want, "({x}, {y})");
        }
    }
}

#[test]
fn the_figure_holds_the_exact_data_pixels_and_text() {
    let dir = scratch("the_figure_holds_the_exact_data_pixels_and_text");
    let values: Vec<f64> = (0..64 * 48).map(|i| ((i * 37) % 101) as f64).collect();
    let mut with_specials = values.clone();
    with_specials[5] = f64::NAN;
    with_specials[6] = f64::INFINITY;
    with_specials[7] = f64::NEG_INFINITY;
    let data: Vec<u8> = with_specials.iter().flat_map(|v| v.to_be_bytes()).collect();
    let input = array(&dir, "be.npy", ">f8", &[48, 64], false, &data);
    let args = ["--vmin", "0", "--vmax", "100", "--width", "128"];
    let bare = render(
        &input,
        &dir.join("bare.png"),
        &[&args[..], &["--bare"]].concat(),
    );
    let figure = render(&input, &dir.join("figure.png"), &args);
    assert_eq!((bare.width, bare.height), (128, 96));
    // NaN, +inf and -inf in their own colours.
    assert_eq!(bare.pixel(10, 0), [255, 0, 255]);
    assert_eq!(bare.pixel(12, 0), [0, 255, 0]);
    assert_eq!(bare.pixel(14, 0), [0, 255, 255]);
    // The bare picture is somewhere in the figure, pixel for pixel.
    let found = (0..=figure.height - bare.height).find_map(|top| {
        (0..=figure.width - bare.width)
            .find(|&left| {
                (0..bare.height).all(|y| {
                    let row = |png: &Png, x0: usize, y0: usize| {
                        let at = ((y0 + y) * png.width + x0) * 3;
                        png.pixels[at..at + bare.width * 3].to_vec()
                    };
                    row(&figure, left, top) == row(&bare, 0, 0)
                })
            })
            .map(|left| (left, top))
    });
    assert!(found.is_some(), "the data pixels are not in the figure");
    // The colour bar right of the data runs from the last colour at its top
    // to the first at its bottom.
    let (left, top) = found.unwrap();
    let bar = (left + bare.width..figure.width).find(|&x| figure.pixel(x, top) == VIRIDIS_LAST);
    let bar = bar.expect("a colour bar column starting with the last colour");
    assert!((top..figure.height).any(|y| figure.pixel(bar, y) == VIRIDIS_FIRST));
    // Anti-aliased text: the title band above the data has dark pixels, and
    // so does the tick-label band below it.
    let dark = |rows: std::ops::Range<usize>| {
        rows.flat_map(|y| (0..figure.width).map(move |x| (x, y)))
            .filter(|&(x, y)| figure.pixel(x, y).iter().all(|&c| c < 100))
            .count()
    };
    assert!(dark(0..top) > 50, "no title text");
    assert!(
        dark(top + bare.height + 2..figure.height) > 50,
        "no tick labels"
    );
}

#[test]
fn heat_maps_of_other_orders_and_types_agree() {
    let dir = scratch("heat_maps_of_other_orders_and_types_agree");
    let (h, w) = (6, 10);
    let values: Vec<i16> = (0..(h * w) as i16).map(|i| (i * 7) % 23 - 11).collect();
    let c_order: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut f_big = vec![0u8; c_order.len()];
    for i in 0..h {
        for j in 0..w {
            let at = (i + h * j) * 2;
            f_big[at..at + 2].copy_from_slice(&values[i * w + j].to_be_bytes());
        }
    }
    let a = array(&dir, "c.npy", "<i2", &[h, w], false, &c_order);
    let b = array(&dir, "f.npy", ">i2", &[h, w], true, &f_big);
    let args = ["--bare", "--cmap", "RdBu", "--width", "20"];
    let pa = render(&a, &dir.join("c.png"), &args);
    let pb = render(&b, &dir.join("f.png"), &args);
    assert_eq!(pa.pixels, pb.pixels);
    // Reduced: block means of 2x2 blocks, any memory order, the same picture.
    let args = ["--bare", "--width", "5", "--reduce", "max"];
    assert_eq!(
        render(&a, &dir.join("c.png"), &args).pixels,
        render(&b, &dir.join("f.png"), &args).pixels
    );
}

#[test]
fn json_reports_histogram_counts_and_ranges() {
    let dir = scratch("json_reports_histogram_counts_and_ranges");
    let values = [0.0f64, 0.5, 1.0, 1.5, 2.0, 2.0, f64::NAN, f64::NEG_INFINITY];
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let input = array(&dir, "h.npy", "<f8", &[2, 4], false, &data);
    let output = npy([
        "render".as_ref(),
        input.as_os_str(),
        dir.join("h.png").as_os_str(),
        "--hist".as_ref(),
        "--bins".as_ref(),
        "4".as_ref(),
        "--json".as_ref(),
    ]);
    assert_exit(&output, 0);
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["kind"], "hist");
    assert_eq!(report["counts"], serde_json::json!([1, 1, 1, 3]));
    assert_eq!(
        report["edges"],
        serde_json::json!([0.0, 0.5, 1.0, 1.5, 2.0])
    );
    assert_eq!(
        (report["nan"].as_u64(), report["neginf"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(decode(&dir.join("h.png")).width > 0);
}

#[test]
fn bad_requests_are_clear_errors() {
    let dir = scratch("bad_requests_are_clear_errors");
    let input = array(&dir, "a.npy", "<f8", &[2, 3, 4], false, &[0; 2 * 3 * 4 * 8]);
    let strings = array(&dir, "s.npy", "|S3", &[2], false, b"abcdef");
    let empty = array(&dir, "e.npy", "<f8", &[0, 3], false, &[]);
    let out = dir.join("x.png");
    for (args, wanted) in [
        (vec![input.as_os_str(), out.as_os_str()], "--index 0,:,:"),
        (
            vec![
                input.as_os_str(),
                out.as_os_str(),
                "--index".as_ref(),
                "2,:,:".as_ref(),
            ],
            "index 2 is out of bounds for axis 0 with size 2",
        ),
        (
            vec![
                input.as_os_str(),
                out.as_os_str(),
                "--index".as_ref(),
                "0,0,0,0".as_ref(),
            ],
            "too many indices",
        ),
        (
            vec![strings.as_os_str(), out.as_os_str()],
            "cannot draw '|S3' values",
        ),
        (vec![empty.as_os_str(), out.as_os_str()], "nothing to draw"),
        (
            vec![
                input.as_os_str(),
                out.as_os_str(),
                "--index".as_ref(),
                "0".as_ref(),
                "--vmin".as_ref(),
                "2".as_ref(),
                "--vmax".as_ref(),
                "1".as_ref(),
            ],
            "minvalue must be less than or equal to maxvalue",
        ),
        (
            vec![
                input.as_os_str(),
                out.as_os_str(),
                "--rgb".as_ref(),
                "--index".as_ref(),
                "0".as_ref(),
            ],
            "--rgb draws (H, W, 3) or (H, W, 4) arrays",
        ),
    ] {
        let mut all = vec!["render".as_ref()];
        all.extend(args);
        let output = npy(all);
        assert_exit(&output, 1);
        assert!(
            stderr(&output).contains(wanted),
            "{wanted}: {}",
            stderr(&output)
        );
    }
    // Nothing is left behind by a failed render, not even a temporary file.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        left.iter()
            .all(|name| name.to_string_lossy().ends_with(".npy")),
        "{left:?}"
    );
    let missing = dir.join("no/such/dir/x.png");
    let output = npy([
        "render".as_ref(),
        empty.as_os_str(),
        missing.as_os_str(),
        "--hist".as_ref(),
    ]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("cannot create"),
        "{}",
        stderr(&output)
    );
    let output = npy([
        "show".as_ref(),
        input.as_os_str(),
        "--cmap".as_ref(),
        "magma".as_ref(),
    ]);
    assert_exit(&output, 1);
    assert!(stderr(&output).contains("--image"), "{}", stderr(&output));
}

#[test]
fn show_image_prints_half_blocks_of_the_same_colours() {
    let dir = scratch("show_image_prints_half_blocks_of_the_same_colours");
    let mask = [1u8, 0, 0, 1];
    let input = array(&dir, "mask.npy", "|b1", &[2, 2], false, &mask);
    let output = npy([
        "show".as_ref(),
        input.as_os_str(),
        "--image".as_ref(),
        "--width".as_ref(),
        "2".as_ref(),
    ]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    // Title, one line of cells (two pixel rows), the colour scale.
    assert_eq!(lines.len(), 3, "{text}");
    let fg = |c: [u8; 3]| format!("\x1b[38;2;{};{};{}m", c[0], c[1], c[2]);
    let bg = |c: [u8; 3]| format!("\x1b[48;2;{};{};{}m", c[0], c[1], c[2]);
    let want = format!(
        "{}{}▀{}{}▀\x1b[0m",
        fg(VIRIDIS_LAST),
        bg(VIRIDIS_FIRST),
        fg(VIRIDIS_FIRST),
        bg(VIRIDIS_LAST)
    );
    assert_eq!(lines[1], want);
    // Plain show is unchanged.
    let output = npy(["show".as_ref(), input.as_os_str()]);
    assert_eq!(stdout(&output), "[[ True False]\n [False  True]]\n");
}

/// Runs `npy args` with its data limit (`RLIMIT_DATA`, set by the shell's
/// `ulimit -d`) at `limit_mib`: the heap and every private writable mapping
/// count, a read-only file mapping does not. An allocation beyond the limit
/// fails and the process aborts, so a spike fails however short it is (a
/// sampler of the resident size could miss it).
#[cfg(target_os = "linux")]
fn run_with_data_limit(limit_mib: u64, args: &[&std::ffi::OsStr]) -> std::process::Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -d \"$NPY_DATA_LIMIT_KIB\" && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_npy"))
        .args(args)
        .env("NPY_DATA_LIMIT_KIB", (limit_mib * 1024).to_string())
        .output()
        .unwrap()
}

#[test]
#[cfg(target_os = "linux")]
fn a_big_sparse_array_renders_in_bounded_memory() {
    let dir = scratch("a_big_sparse_array_renders_in_bounded_memory");
    let input = dir.join("big.npy");
    // 384 MiB of float32 the file system holds as a hole: loading it would
    // take 384 MiB, and its float64 copy twice that.
    let created = npy([
        "create".as_ref(),
        input.as_os_str(),
        "--dtype".as_ref(),
        "<f4".as_ref(),
        "--shape".as_ref(),
        "10240,9830".as_ref(),
    ]);
    assert_exit(&created, 0);
    let out = dir.join("big.png");
    let args = ["render".as_ref(), input.as_os_str(), out.as_os_str()];
    let output = run_with_data_limit(LIMIT_MIB, &args);
    assert_exit(&output, 0);
    // Zeros everywhere: one colour (vmin == vmax gives the first).
    let png = decode(&out);
    assert_eq!(png.pixel(png.width / 2, png.height / 2), VIRIDIS_FIRST);
    // The limit bites: far below what the render needs, it fails.
    std::fs::remove_file(&out).unwrap();
    let output = run_with_data_limit(TOO_LITTLE_MIB, &args);
    assert!(!output.status.success(), "{output:?}");
    assert!(!out.exists());
    std::fs::remove_file(&input).unwrap();
}

/// The memory `npy render` of a big array may use besides the mapping.
#[cfg(target_os = "linux")]
const LIMIT_MIB: u64 = 100;

/// Too little for any render (the control of the limit).
#[cfg(target_os = "linux")]
const TOO_LITTLE_MIB: u64 = 4;

#[test]
fn npz_members_render_like_files() {
    let dir = scratch("npz_members_render_like_files");
    let (h, w) = (7, 9);
    let bytes = noise(h * w * 3, 11);
    let frame = array(&dir, "frame.npy", "|u1", &[h, w, 3], false, &bytes);
    let archive = dir.join("frames.npz");
    for compress in [false, true] {
        let mut pack = vec![
            "pack".as_ref(),
            archive.as_os_str(),
            frame.as_os_str(),
            "--force".as_ref(),
        ];
        if compress {
            pack.push("--compress".as_ref());
        }
        assert_exit(&npy(pack), 0);
        let png = render(&archive, &dir.join("member.png"), &["--member", "frame"]);
        assert_eq!(png.pixels, bytes, "compressed: {compress}");
    }
}

#[test]
fn members_read_forward_give_the_same_pictures_for_any_selection() {
    let dir = scratch("members_read_forward_give_the_same_pictures_for_any_selection");
    // A Fortran-order image: each row of pixels spans all three channel
    // planes, so its lines overlap in memory and the stream restarts.
    let (h, w, c) = (6, 8, 3);
    let image = noise(h * w * c, 21);
    let mut fortran = vec![0; image.len()];
    for i in 0..h {
        for j in 0..w {
            for k in 0..c {
                fortran[i + h * j + h * w * k] = image[(i * w + j) * c + k];
            }
        }
    }
    let frame = array(&dir, "frame.npy", "|u1", &[h, w, c], true, &fortran);
    // A Fortran-order 3-D float array: a slice and a histogram of it.
    let values: Vec<u8> = (0..4 * 5 * 6)
        .flat_map(|i| (f64::from(i) * 0.37).sin().to_le_bytes())
        .collect();
    let cube = array(&dir, "cube.npy", "<f8", &[4, 5, 6], true, &values);
    for compress in [false, true] {
        let archive = dir.join(format!("a{compress}.npz"));
        let mut pack = vec![
            "pack".as_ref(),
            archive.as_os_str(),
            frame.as_os_str(),
            cube.as_os_str(),
        ];
        if compress {
            pack.push("--compress".as_ref());
        }
        assert_exit(&npy(pack), 0);
        let png = render(&archive, &dir.join("m.png"), &["--member", "frame"]);
        assert_eq!(png.pixels, image, "compressed: {compress}");
        for args in [
            &["--index", "1,:,:", "--bare"][..],
            &["--index", ":,:,2", "--bare"],
            &["--hist", "--bare"],
        ] {
            let from_file = render(&cube, &dir.join("f.png"), args);
            let from_member = render(
                &archive,
                &dir.join("m.png"),
                &[args, &["--member", "cube"]].concat(),
            );
            assert_eq!(
                from_file.pixels, from_member.pixels,
                "{args:?}, compressed: {compress}"
            );
        }
    }
}

#[test]
fn sparse_files_are_drawn_through_the_file() {
    let dir = scratch("sparse_files_are_drawn_through_the_file");
    let (rows, cols) = (64, 64);
    let written = 16;
    let values: Vec<u8> = (0..written * cols)
        .flat_map(|i| ((i % 97) as f64).to_le_bytes())
        .collect();
    let dict = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    let full_len = npy_bytes(&dict, 0, &[]).len() + rows * cols * 8;
    // The first rows written, the rest a hole; and the same array written out whole.
    let sparse = write(&dir, "sparse.npy", &npy_bytes(&dict, 0, &values));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&sparse)
        .unwrap()
        .set_len(full_len as u64)
        .unwrap();
    let mut dense_data = values.clone();
    dense_data.resize(rows * cols * 8, 0);
    let dense = write(&dir, "dense.npy", &npy_bytes(&dict, 0, &dense_data));
    for args in [
        &["--bare"][..],
        &["--bare", "--width", "16", "--reduce", "max"],
        &["--bare", "--hist"],
    ] {
        let a = render(&sparse, &dir.join("s.png"), args);
        let b = render(&dense, &dir.join("d.png"), args);
        assert_eq!(a.pixels, b.pixels, "{args:?}");
    }
}

/// Issue 24: a tall, narrow array kept its aspect down to a strip one pixel
/// wide (its x ticks piled up on it); a heat map's sides now differ at
/// most 4 to 1, every column shown.
#[test]
fn tall_narrow_arrays_are_widened_to_show_their_columns() {
    let dir = scratch("tall_narrow_arrays_are_widened_to_show_their_columns");
    let (rows, cols) = (200_000, 8);
    let data: Vec<u8> = (0..rows * cols)
        .flat_map(|i| ((i % cols) as f32 + (i / cols) as f32 * 1e-5).to_le_bytes())
        .collect();
    let input = array(&dir, "tall.npy", "<f4", &[rows, cols], false, &data);
    let output = npy([
        "render".as_ref(),
        input.as_os_str(),
        dir.join("tall.png").as_os_str(),
        "--json".as_ref(),
    ]);
    assert_exit(&output, 0);
    let summary: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(summary["drawn"], serde_json::json!([1024, 8]), "{summary}");
    assert_eq!(summary["pixel"], serde_json::json!([1, 32]), "{summary}");
    // The bare picture is that size: 8 columns of 32 pixels.
    let bare = render(&input, &dir.join("bare.png"), &["--bare"]);
    assert_eq!((bare.width, bare.height), (256, 1024));
    assert_eq!(bare.pixel(0, 0), bare.pixel(31, 0));
    assert_ne!(bare.pixel(31, 0), bare.pixel(32, 0));
    // And a wide, short one the other way.
    let input = array(&dir, "wide.npy", "<f4", &[cols, rows], true, &data);
    let bare = render(&input, &dir.join("wide.png"), &["--bare"]);
    assert_eq!((bare.width, bare.height), (1024, 256));
}

/// Issue 24: the default colour range (2nd–98th percentile) was nowhere in
/// the picture; its title says so (and --json), and a range given with
/// --vmin/--vmax says nothing.
#[test]
fn the_percentile_colour_range_is_named_on_the_picture() {
    let dir = scratch("the_percentile_colour_range_is_named_on_the_picture");
    let data: Vec<u8> = (0..40 * 30)
        .flat_map(|i| f64::from(i).to_le_bytes())
        .collect();
    let input = array(&dir, "a.npy", "<f8", &[30, 40], false, &data);
    let json = |extra: &[&str]| {
        let mut args: Vec<std::ffi::OsString> = vec![
            "render".into(),
            input.clone().into_os_string(),
            dir.join("a.png").into_os_string(),
        ];
        args.push("--json".into());
        args.push("--force".into());
        args.extend(extra.iter().map(std::ffi::OsString::from));
        let output = npy(&args);
        assert_exit(&output, 0);
        serde_json::from_str::<serde_json::Value>(&stdout(&output)).unwrap()
    };
    assert_eq!(
        json(&[])["range_note"],
        "colours: 2nd–98th percentile, beyond clipped"
    );
    assert_eq!(
        json(&["--vmin", "0"])["range_note"],
        "colours: --vmin–98th percentile, beyond clipped"
    );
    assert_eq!(
        json(&["--vmin", "0", "--vmax", "1199"])["range_note"],
        serde_json::Value::Null
    );
    // The title band holds more text with the note than without it.
    let dark = |png: &Png| {
        (0..30)
            .flat_map(|y| (0..png.width).map(move |x| (x, y)))
            .filter(|&(x, y)| png.pixel(x, y).iter().all(|&c| c < 100))
            .count()
    };
    let noted = render(&input, &dir.join("noted.png"), &[]);
    let plain = render(
        &input,
        &dir.join("plain.png"),
        &["--vmin", "0", "--vmax", "1199"],
    );
    assert!(dark(&noted) > dark(&plain) + 100, "no note in the title");
    // And --help says it.
    let help = stdout(&npy(["render", "--help"])).replace('\n', " ");
    assert!(help.contains("named in the title"), "{help}");
}

/// Issue 24: the colour bar's tick labels touched the bar; tick marks now
/// stand outside it and the labels start after them.
#[test]
fn colour_bar_labels_keep_clear_of_the_bar() {
    let dir = scratch("colour_bar_labels_keep_clear_of_the_bar");
    let data: Vec<u8> = (0..100 * 80)
        .flat_map(|i| (f64::from(i % 80) - 40.0).to_le_bytes())
        .collect();
    let input = array(&dir, "a.npy", "<f8", &[100, 80], false, &data);
    let png = render(
        &input,
        &dir.join("a.png"),
        &["--vmin", "-50", "--vmax", "50"],
    );
    // The bar: the rightmost column holding the last colour, at its top.
    let top = (0..png.height)
        .find(|&y| (0..png.width).any(|x| png.pixel(x, y) == VIRIDIS_LAST))
        .unwrap();
    let bar_right = (0..png.width)
        .rev()
        .find(|&x| png.pixel(x, top) == VIRIDIS_LAST)
        .unwrap();
    let bottom = (top..png.height)
        .take_while(|&y| png.pixel(bar_right, y) != [255, 255, 255])
        .last()
        .unwrap();
    // Right of the bar: its axis line, then tick marks (black) or white
    // for at least 5 columns; the labels' grey, anti-aliased glyphs after.
    let grey = |x: usize, y: usize| {
        let p = png.pixel(x, y);
        p[0] == p[1] && p[1] == p[2] && p[0] > 0 && p[0] < 255
    };
    for y in top..=bottom {
        for x in bar_right + 2..bar_right + 7 {
            assert!(!grey(x, y), "label text at ({x}, {y}), touching the bar");
        }
    }
    let text = (top..=bottom)
        .filter(|&y| (bar_right + 7..png.width).any(|x| grey(x, y)))
        .count();
    assert!(text > 20, "no tick labels right of the bar");
}

//! What an array header says, as text lines or a JSON object (`info`, `ls`).

use std::io::Write;

use npy_core::{DType, Header, Layout, Order, Version};
use serde_json::{Map, Value, json};

/// `"1.0"`, `"2.0"`, `"3.0"`.
pub fn version_text(version: Version) -> &'static str {
    match version {
        Version::V1 => "1.0",
        Version::V2 => "2.0",
        Version::V3 => "3.0",
    }
}

/// The shape as Python writes a tuple: `()`, `(5,)`, `(3, 4)`.
pub fn shape_text(shape: &[usize]) -> String {
    match shape {
        [] => "()".to_string(),
        [only] => format!("({only},)"),
        _ => {
            let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
            format!("({})", dims.join(", "))
        }
    }
}

fn order_text(order: Order) -> &'static str {
    match order {
        Order::C => "C",
        Order::Fortran => "F",
    }
}

/// The keys every array description has, in this order.
pub fn array_json(header: &Header, layout: &Layout) -> Map<String, Value> {
    let mut object = Map::new();
    object.insert("version".into(), json!(version_text(layout.version)));
    object.insert("descr".into(), descr_json(&header.dtype));
    object.insert("shape".into(), json!(header.shape));
    object.insert(
        "fortran_order".into(),
        json!(header.order == Order::Fortran),
    );
    object.insert("itemsize".into(), json!(header.dtype.itemsize()));
    object.insert("nbytes".into(), json!(layout.data_len));
    object.insert("header_len".into(), json!(layout.header_len));
    object.insert("data_offset".into(), json!(layout.data_offset));
    object
}

/// The same facts as [`array_json`], as labelled text lines.
pub fn array_lines(header: &Header, layout: &Layout) -> Vec<(&'static str, String)> {
    vec![
        ("version", version_text(layout.version).to_string()),
        ("dtype", header.dtype.descr()),
        ("shape", shape_text(&header.shape)),
        ("order", order_text(header.order).to_string()),
        ("itemsize", header.dtype.itemsize().to_string()),
        ("nbytes", layout.data_len.to_string()),
        ("header length", layout.header_len.to_string()),
        ("data offset", layout.data_offset.to_string()),
    ]
}

/// Writes `label: value` lines with the values aligned.
pub fn write_lines(out: &mut dyn Write, lines: &[(&str, String)]) -> std::io::Result<()> {
    let width = lines
        .iter()
        .map(|(label, _)| label.len())
        .max()
        .unwrap_or(0)
        + 1;
    for (label, value) in lines {
        writeln!(out, "{:width$} {value}", format!("{label}:"))?;
    }
    Ok(())
}

/// The descr numpy would write, as JSON: a string, or for records a list of
/// `[name, type]` / `[name, type, shape]` lists (tuples become lists).
pub fn descr_json(dtype: &DType) -> Value {
    // TODO(npy-core): build this from the library's descr literal once it
    // exposes one; until then only non-structured descrs (plain quoted
    // strings without escapes in everything numpy writes) are converted.
    let text = dtype.descr();
    match text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
        Some(inner) => json!(inner),
        None => json!(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_read_like_python_tuples() {
        assert_eq!(shape_text(&[]), "()");
        assert_eq!(shape_text(&[5]), "(5,)");
        assert_eq!(shape_text(&[3, 4]), "(3, 4)");
    }
}

//! What an array header says, as text lines or a JSON object (`info`, `ls`).

use std::io::Write;

use npy_core::{DType, Header, Layout, Order, StructuredEntry, Version};
use serde_json::{Map, Value, json};

/// `"1.0"`, `"2.0"`, `"3.0"`.
pub fn version_text(version: Version) -> &'static str {
    match version {
        Version::V1 => "1.0",
        Version::V2 => "2.0",
        Version::V3 => "3.0",
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
    object.insert("nbytes".into(), json!(nbytes(header, layout)));
    object.insert("header_len".into(), json!(layout.header_len));
    object.insert("data_offset".into(), json!(layout.data_offset));
    object
}

/// The same facts as [`array_json`], as labelled text lines.
pub fn array_lines(header: &Header, layout: &Layout) -> Vec<(&'static str, String)> {
    vec![
        ("version", version_text(layout.version).to_string()),
        ("dtype", header.dtype.header_repr()),
        ("shape", npy_core::shape_repr(&header.shape)),
        ("order", order_text(header.order).to_string()),
        ("itemsize", header.dtype.itemsize().to_string()),
        ("nbytes", nbytes(header, layout).to_string()),
        ("header length", layout.header_len.to_string()),
        ("data offset", layout.data_offset.to_string()),
    ]
}

/// numpy's `arr.nbytes`: for an object array, a pointer per element (its
/// data in the file is a pickle of another size).
fn nbytes(header: &Header, layout: &Layout) -> usize {
    match header.dtype {
        DType::Object => header
            .element_count()
            .map_or(0, |count| count.saturating_mul(header.dtype.itemsize())),
        _ => layout.data_len,
    }
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

/// The descr numpy would write, as JSON: the Python literal with tuples as
/// lists. A scalar is its type string (`"<f8"`); a record is a list of
/// `[name, type]` / `[name, type, shape]` entries (a titled name is
/// `[title, name]`; gaps are `["", "|V<n>"]` like numpy writes them); a
/// subarray is `[base, shape]`.
pub fn descr_json(dtype: &DType) -> Value {
    // The same entries `DType::descr` writes as text, as JSON.
    match dtype {
        DType::Scalar(scalar) => json!(scalar.type_str()),
        DType::Object => json!("|O"),
        DType::SubArray(base, shape) => json!([descr_json(base), shape]),
        DType::Structured(record) => Value::Array(
            record
                .entries()
                .map(|entry| match entry {
                    StructuredEntry::Padding(len) => json!(["", format!("|V{len}")]),
                    StructuredEntry::Field(field) => {
                        let name = match &field.title {
                            Some(title) => json!([title, field.name]),
                            None => json!(field.name),
                        };
                        match &field.dtype {
                            DType::SubArray(base, shape) => json!([name, descr_json(base), shape]),
                            other => json!([name, descr_json(other)]),
                        }
                    }
                })
                .collect(),
        ),
        // A dtype added to npy-core after this was written: its descr text.
        other => json!(other.descr()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descrs_become_json_like_numpy_literals() {
        let json = |descr: &str| descr_json(&DType::parse(descr).unwrap()).to_string();
        assert_eq!(json("'<f8'"), r#""<f8""#);
        assert_eq!(
            json("[('x', '<i4'), ('y', '>f8', (2, 3))]"),
            r#"[["x","<i4"],["y",">f8",[2,3]]]"#
        );
        assert_eq!(
            json("[(('t', 'a'), '<i4'), ('', '|V4'), ('b', [('c', '|u1')]), ('', '|V3')]"),
            r#"[[["t","a"],"<i4"],["","|V4"],["b",[["c","|u1"]]],["","|V3"]]"#
        );
        assert_eq!(
            json("[('c', ('<f8', (5,)), (2,))]"),
            r#"[["c",["<f8",[5]],[2]]]"#
        );
    }
}

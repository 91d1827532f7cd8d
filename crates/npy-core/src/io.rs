//! Streaming.

/// Formats a shape like Python's tuple repr: `()`, `(5,)`, `(3, 4)`.
pub(crate) fn python_shape(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => {
            let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
            format!("({})", dims.join(", "))
        }
    }
}

//! numpy's `str()` of an array: nested brackets, one common width per
//! column of numbers, wrapping at 75 characters, `...` summaries.
//!
//! Printing works on a [`Selection`] (which elements numpy would show: all of
//! them, or the 3 leading and trailing items of each long axis once the
//! array has more than 1000 elements) and a [`Column`] holding the decoded
//! values of exactly those elements in C order. Only the shown elements are
//! ever decoded, so showing a 10 GB array reads a few pages.

mod build;
mod float;
mod object;

pub use build::{decode_elements, decode_shown};
pub use float::FloatWidth;
use npy_core::{DateTimeUnit, Value};
pub use object::object_array_str;

/// numpy's print options (the defaults; the CLI does not change them).
const THRESHOLD: usize = 1000;
const EDGE_ITEMS: usize = 3;
const LINE_WIDTH: usize = 75;

/// Decoded values of one dtype, in C order.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// `b1`
    Bool(Vec<bool>),
    /// Signed and unsigned integers of every size.
    Int(Vec<i128>),
    /// Real floats of the given width.
    Float(FloatWidth, Vec<f64>),
    /// Complex numbers: each part has the given width.
    Complex(FloatWidth, Vec<(f64, f64)>),
    /// `S<n>` items, trailing NULs removed.
    Bytes(Vec<Vec<u8>>),
    /// `U<n>` items, trailing NULs removed.
    Str(Vec<String>),
    /// Unstructured `V<n>` items.
    Void(Vec<Vec<u8>>),
    /// datetime64 ticks (`None` is NaT).
    DateTime(Option<DateTimeUnit>, Vec<Option<i64>>),
    /// timedelta64 ticks (`None` is NaT).
    TimeDelta(Option<DateTimeUnit>, Vec<Option<i64>>),
    /// Structured records: one column per field, `len` records.
    Record {
        len: usize,
        fields: Vec<FieldColumn>,
    },
    /// Python objects, already formatted as numpy shows them (`repr`,
    /// lists as `list([...])`): printed as they are, unpadded.
    Object(Vec<String>),
}

/// One field of a record column: a subarray field holds `shape`'s product of
/// values per record, consecutively.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldColumn {
    /// The field's subarray shape (empty for a plain field).
    pub shape: Vec<usize>,
    /// The values of this field for every record.
    pub column: Column,
}

impl Column {
    /// Number of values held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        match self {
            Column::Bool(v) => v.len(),
            Column::Int(v) => v.len(),
            Column::Float(_, v) => v.len(),
            Column::Complex(_, v) => v.len(),
            Column::Bytes(v) | Column::Void(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::DateTime(_, v) | Column::TimeDelta(_, v) => v.len(),
            Column::Record { len, .. } => *len,
            Column::Object(v) => v.len(),
        }
    }
}

/// Which elements of an array numpy shows, per axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The array's shape.
    pub shape: Vec<usize>,
    /// Whether each axis is cut to its edge items with a `...` between.
    pub summarised: Vec<bool>,
}

impl Selection {
    /// numpy's choice for an array of `shape`: summarise every axis longer
    /// than 6 once the array has more than 1000 elements.
    pub fn new(shape: &[usize]) -> Selection {
        let size = shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .unwrap_or(usize::MAX);
        let summarise = size > THRESHOLD;
        Selection {
            shape: shape.to_vec(),
            summarised: shape
                .iter()
                .map(|&d| summarise && d > 2 * EDGE_ITEMS)
                .collect(),
        }
    }

    /// The indices shown along `axis`, in order.
    pub fn indices(&self, axis: usize) -> Vec<usize> {
        let len = self.shape[axis];
        if self.summarised[axis] {
            (0..EDGE_ITEMS).chain(len - EDGE_ITEMS..len).collect()
        } else {
            (0..len).collect()
        }
    }

    /// Number of shown elements, `None` if it does not fit a `usize`.
    pub fn len(&self) -> Option<usize> {
        (0..self.shape.len()).try_fold(1usize, |acc, axis| {
            let shown = if self.summarised[axis] {
                2 * EDGE_ITEMS
            } else {
                self.shape[axis]
            };
            acc.checked_mul(shown)
        })
    }

    /// Calls `visit` with the multi-index of every shown element, in C order.
    pub fn for_each_index(&self, mut visit: impl FnMut(&[usize])) {
        if self.shape.contains(&0) {
            return;
        }
        let per_axis: Vec<Vec<usize>> = (0..self.shape.len()).map(|a| self.indices(a)).collect();
        let mut position = vec![0usize; per_axis.len()];
        let mut index: Vec<usize> = per_axis.iter().map(|v| v[0]).collect();
        loop {
            visit(&index);
            // Odometer increment, last axis fastest.
            let mut axis = per_axis.len();
            loop {
                if axis == 0 {
                    return;
                }
                axis -= 1;
                position[axis] += 1;
                if position[axis] < per_axis[axis].len() {
                    index[axis] = per_axis[axis][position[axis]];
                    break;
                }
                position[axis] = 0;
                index[axis] = per_axis[axis][0];
            }
        }
    }
}

/// Which numpy formatter applies, with its widths fixed from the shown data.
enum Formatter {
    Bool {
        true_text: &'static str,
    },
    Int {
        width: usize,
    },
    Float(float::FloatFormat),
    /// numpy's `float_kind=str` inside a 0-d record.
    FloatStr(FloatWidth),
    Complex(float::FloatFormat, float::FloatFormat),
    Bytes,
    Str,
    Void,
    Timelike {
        width: usize,
    },
    Record(Vec<(Formatter, Vec<usize>)>),
    Object,
}

impl Formatter {
    /// `zero_d`: the data is one 0-d element (numpy drops the space before `True`
    /// and prints floats with their scalar `str()` inside a 0-d record).
    fn new(column: &Column, zero_d: bool) -> Formatter {
        match column {
            Column::Bool(_) => Formatter::Bool {
                true_text: if zero_d { "True" } else { " True" },
            },
            Column::Int(values) => {
                let width = match (values.iter().min(), values.iter().max()) {
                    (Some(min), Some(max)) => min.to_string().len().max(max.to_string().len()),
                    _ => 0,
                };
                Formatter::Int { width }
            }
            Column::Float(width, _) if zero_d => Formatter::FloatStr(*width),
            Column::Float(width, values) => {
                Formatter::Float(float::FloatFormat::new(*width, values, false))
            }
            Column::Complex(width, values) => {
                let re: Vec<f64> = values.iter().map(|v| v.0).collect();
                let im: Vec<f64> = values.iter().map(|v| v.1).collect();
                Formatter::Complex(
                    float::FloatFormat::new(*width, &re, false),
                    float::FloatFormat::new(*width, &im, true),
                )
            }
            Column::Bytes(_) => Formatter::Bytes,
            Column::Str(_) => Formatter::Str,
            Column::Void(_) => Formatter::Void,
            Column::DateTime(unit, values) => {
                Formatter::timelike(values, |v| format!("'{}'", Value::DateTime(Some(v), *unit)))
            }
            Column::TimeDelta(_, values) => Formatter::timelike(values, |v| v.to_string()),
            Column::Object(_) => Formatter::Object,
            Column::Record { fields, .. } => Formatter::Record(
                fields
                    .iter()
                    .map(|field| (Formatter::new(&field.column, zero_d), field.shape.clone()))
                    .collect(),
            ),
        }
    }

    /// numpy's `_TimelikeFormat`: the width of the smallest and largest value,
    /// at least 5 (`'NaT'`) when a NaT is present.
    fn timelike(values: &[Option<i64>], text: impl Fn(i64) -> String) -> Formatter {
        let valid = values.iter().copied().flatten();
        let mut width = match (valid.clone().min(), valid.max()) {
            (Some(min), Some(max)) => text(min).len().max(text(max).len()),
            _ => 0,
        };
        if values.contains(&None) {
            width = width.max(5);
        }
        Formatter::Timelike { width }
    }

    /// Element `i` of `column`.
    fn format(&self, column: &Column, i: usize) -> String {
        match (self, column) {
            (Formatter::Bool { true_text }, Column::Bool(v)) => {
                if v[i] { *true_text } else { "False" }.to_string()
            }
            (Formatter::Int { width }, Column::Int(v)) => format!("{:>width$}", v[i]),
            (Formatter::Float(format), Column::Float(_, v)) => format.format(v[i]),
            (Formatter::FloatStr(width), Column::Float(_, v)) => float::scalar(*width, v[i], false),
            (Formatter::Complex(re, im), Column::Complex(_, v)) => {
                let imaginary = im.format(v[i].1);
                // The `j` goes before the imaginary part's right padding.
                let end = imaginary.trim_end().len();
                format!(
                    "{}{}j{}",
                    re.format(v[i].0),
                    &imaginary[..end],
                    &imaginary[end..]
                )
            }
            (Formatter::Bytes, Column::Bytes(v)) => Value::Bytes(v[i].clone()).to_string(),
            (Formatter::Str, Column::Str(v)) => Value::Str(v[i].clone()).to_string(),
            (Formatter::Void, Column::Void(v)) => void_repr(&v[i]),
            (Formatter::Timelike { width }, Column::DateTime(unit, v)) => {
                let text = match v[i] {
                    None => "'NaT'".to_string(),
                    value => format!("'{}'", Value::DateTime(value, *unit)),
                };
                format!("{text:>width$}")
            }
            (Formatter::Timelike { width }, Column::TimeDelta(_, v)) => {
                let text = match v[i] {
                    None => "'NaT'".to_string(),
                    Some(value) => value.to_string(),
                };
                format!("{text:>width$}")
            }
            (Formatter::Record(formatters), Column::Record { fields, .. }) => {
                let parts: Vec<String> = formatters
                    .iter()
                    .zip(fields)
                    .map(|((formatter, shape), field)| {
                        if shape.is_empty() {
                            formatter.format(&field.column, i)
                        } else {
                            let per_record: usize = shape.iter().product();
                            formatter.subarray(&field.column, shape, i * per_record)
                        }
                    })
                    .collect();
                if parts.len() == 1 {
                    format!("({},)", parts[0])
                } else {
                    format!("({})", parts.join(", "))
                }
            }
            (Formatter::Object, Column::Object(v)) => v[i].clone(),
            _ => unreachable!("a formatter is only used on the column it was built from"),
        }
    }

    /// numpy's `SubArrayFormat`: a record field with a shape, as nested
    /// `[a, b]` lists, summarised on its own when it has over 1000 values.
    fn subarray(&self, column: &Column, shape: &[usize], start: usize) -> String {
        let selection = Selection::new(shape);
        let strides = c_strides(shape);
        self.subarray_level(column, &selection, &strides, 0, start)
    }

    fn subarray_level(
        &self,
        column: &Column,
        selection: &Selection,
        strides: &[usize],
        axis: usize,
        offset: usize,
    ) -> String {
        if axis == selection.shape.len() {
            return self.format(column, offset);
        }
        let indices = selection.indices(axis);
        let mut parts: Vec<String> = indices
            .iter()
            .map(|&i| {
                self.subarray_level(
                    column,
                    selection,
                    strides,
                    axis + 1,
                    offset + i * strides[axis],
                )
            })
            .collect();
        if selection.summarised[axis] {
            parts.insert(EDGE_ITEMS, "...".to_string());
        }
        format!("[{}]", parts.join(", "))
    }
}

fn c_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for axis in (0..shape.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1] * shape[axis + 1];
    }
    strides
}

/// numpy's `str()` of an unstructured void: every byte as `\xNN` in upper
/// case hex (unlike `bytes`, printable bytes are not shown as characters).
fn void_repr(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(4 * bytes.len() + 3);
    out.push_str("b'");
    for byte in bytes {
        out.push_str(&format!("\\x{byte:02X}"));
    }
    out.push('\'');
    out
}

/// numpy's `str(array)` for an array of `selection.shape` whose shown
/// elements (see [`Selection::for_each_index`]) are `column`.
pub fn array_str(selection: &Selection, column: &Column) -> String {
    if selection.shape.is_empty() {
        return scalar_str(column);
    }
    format_array(selection, column, " ", "", LINE_WIDTH)
}

/// numpy's `array2string`: the nested brackets of a non-0-d array, elements
/// joined by `separator`, lines wrapped at `line_width` and continued under
/// `prefix` (`"array("` for a repr).
fn format_array(
    selection: &Selection,
    column: &Column,
    separator: &str,
    prefix: &str,
    line_width: usize,
) -> String {
    if selection.shape.contains(&0) {
        return "[]".to_string();
    }
    let formatter = Formatter::new(column, false);
    let shown: Vec<usize> = (0..selection.shape.len())
        .map(|axis| selection.indices(axis).len())
        .collect();
    let layout = Layout {
        formatter: &formatter,
        column,
        selection,
        shown_strides: c_strides(&shown),
        separator,
    };
    layout.recurse(0, 0, &format!(" {}", " ".repeat(prefix.len())), line_width)
}

/// numpy's `str()` of one float scalar of `width`.
pub fn scalar_float(width: FloatWidth, x: f64) -> String {
    float::scalar(width, x, false)
}

/// numpy prints a 0-d array as the `str()` of its scalar.
fn scalar_str(column: &Column) -> String {
    match column {
        Column::Float(width, v) => float::scalar(*width, v[0], false),
        Column::Complex(width, v) => complex_scalar(*width, v[0]),
        Column::Bytes(v) => format!("np.bytes_({})", Value::Bytes(v[0].clone())),
        Column::Str(v) => v[0].clone(),
        Column::DateTime(unit, v) => Value::DateTime(v[0], *unit).to_string(),
        Column::TimeDelta(unit, v) => Value::TimeDelta(v[0], *unit).to_string(),
        _ => Formatter::new(column, true).format(column, 0),
    }
}

/// Python's complex repr as numpy's scalars write it: `(1+2j)`, `1j`.
fn complex_scalar(width: FloatWidth, (re, im): (f64, f64)) -> String {
    let imaginary = float::scalar(width, im, true);
    let imaginary = if im.is_sign_negative() || im.is_nan() && imaginary.starts_with('-') {
        imaginary
    } else {
        format!("+{imaginary}")
    };
    if re == 0.0 && re.is_sign_positive() {
        format!("{}j", imaginary.trim_start_matches('+'))
    } else {
        format!("({}{imaginary}j)", float::scalar(width, re, true))
    }
}

struct Layout<'a> {
    formatter: &'a Formatter,
    column: &'a Column,
    selection: &'a Selection,
    shown_strides: Vec<usize>,
    /// `" "` for `str()`, `", "` for `repr()`.
    separator: &'a str,
}

impl Layout<'_> {
    /// numpy's `_formatArray` recursion; `offset` is the flat index into the
    /// shown elements of the sub-array being printed.
    fn recurse(&self, axis: usize, offset: usize, hanging_indent: &str, width: usize) -> String {
        let ndim = self.selection.shape.len();
        if axis == ndim {
            return self.formatter.format(self.column, offset);
        }
        let next_indent = format!("{hanging_indent} ");
        let next_width = width.saturating_sub(1);
        let summarised = self.selection.summarised[axis];
        let count = self.selection.indices(axis).len();
        let child = |position: usize| {
            self.recurse(
                axis + 1,
                offset + position * self.shown_strides[axis],
                &next_indent,
                next_width,
            )
        };
        let mut out = String::new();
        if axis + 1 == ndim {
            let element_width = width.saturating_sub(1);
            let mut line = hanging_indent.to_string();
            for position in 0..count {
                if summarised && position == EDGE_ITEMS {
                    extend_line(&mut out, &mut line, "...", element_width, hanging_indent);
                    line.push_str(self.separator);
                }
                extend_line_pretty(
                    &mut out,
                    &mut line,
                    &child(position),
                    element_width,
                    hanging_indent,
                );
                if position + 1 < count {
                    line.push_str(self.separator);
                }
            }
            out.push_str(&line);
        } else {
            let separator = format!(
                "{}{}",
                self.separator.trim_end(),
                "\n".repeat(ndim - axis - 1)
            );
            for position in 0..count {
                if summarised && position == EDGE_ITEMS {
                    out.push_str(hanging_indent);
                    out.push_str("...");
                    out.push_str(&separator);
                }
                out.push_str(hanging_indent);
                out.push_str(&child(position));
                if position + 1 < count {
                    out.push_str(&separator);
                }
            }
        }
        format!("[{}]", &out[hanging_indent.len()..])
    }
}

/// Python's `len()` of printed text: characters, not bytes (numpy wraps
/// lines by it).
fn width_of(text: &str) -> usize {
    text.chars().count()
}

/// numpy's `_extendLine`: wrap before `word` when it would pass `width`,
/// unless the line holds nothing but the indent.
fn extend_line(out: &mut String, line: &mut String, word: &str, width: usize, indent: &str) {
    if width_of(line) + width_of(word) > width && width_of(line) > width_of(indent) {
        out.push_str(line.trim_end());
        out.push('\n');
        *line = indent.to_string();
    }
    line.push_str(word);
}

/// numpy's `_extendLine_pretty`: like [`extend_line`], for words that span
/// several lines (records holding subarrays never do; nested arrays do not
/// come through here), kept for fidelity with multi-line words.
fn extend_line_pretty(out: &mut String, line: &mut String, word: &str, width: usize, indent: &str) {
    let words: Vec<&str> = word.lines().collect();
    if words.len() <= 1 {
        extend_line(out, line, word, width, indent);
        return;
    }
    let longest = words.iter().map(|w| width_of(w)).max().unwrap_or(0);
    let word_indent;
    if width_of(line) + longest > width && width_of(line) > width_of(indent) {
        out.push_str(line.trim_end());
        out.push('\n');
        *line = format!("{indent}{}", words[0]);
        word_indent = indent.to_string();
    } else {
        word_indent = " ".repeat(width_of(line));
        line.push_str(words[0]);
    }
    for word in &words[1..] {
        out.push_str(line.trim_end());
        out.push('\n');
        *line = format!("{word_indent}{word}");
    }
    line.push_str(&" ".repeat(longest - width_of(words[words.len() - 1])));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shown elements of an array whose element at flat C index `k` is `k`.
    fn arange(shape: &[usize]) -> (Selection, Column) {
        let selection = Selection::new(shape);
        let strides = c_strides(shape);
        let mut values = Vec::new();
        selection.for_each_index(|index| {
            values.push(
                index
                    .iter()
                    .zip(&strides)
                    .map(|(i, s)| (i * s) as i128)
                    .sum(),
            );
        });
        (selection, Column::Int(values))
    }

    fn show(shape: &[usize]) -> String {
        let (selection, column) = arange(shape);
        array_str(&selection, &column)
    }

    // Expected strings are numpy 2.4's `str(np.arange(n).reshape(shape))`.
    #[test]
    fn nested_brackets_and_blank_lines() {
        assert_eq!(
            show(&[2, 3, 4]),
            "[[[ 0  1  2  3]\n  [ 4  5  6  7]\n  [ 8  9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]]"
        );
        assert_eq!(show(&[3]), "[0 1 2]");
        assert_eq!(show(&[0]), "[]");
        assert_eq!(show(&[2, 0, 3]), "[]");
    }

    #[test]
    fn summaries_keep_three_edge_items() {
        assert_eq!(
            show(&[3, 1000]),
            "[[   0    1    2 ...  997  998  999]\n [1000 1001 1002 ... 1997 1998 1999]\n [2000 2001 2002 ... 2997 2998 2999]]"
        );
        assert_eq!(show(&[2000]), "[   0    1    2 ... 1997 1998 1999]");
        assert_eq!(
            show(&[2, 550]),
            "[[   0    1    2 ...  547  548  549]\n [ 550  551  552 ... 1097 1098 1099]]"
        );
        assert_eq!(
            show(&[10, 10, 11]),
            "[[[   0    1    2 ...    8    9   10]\n  [  11   12   13 ...   19   20   21]\n  [  22   23   24 ...   30   31   32]\n  ...\n  [  77   78   79 ...   85   86   87]\n  [  88   89   90 ...   96   97   98]\n  [  99  100  101 ...  107  108  109]]\n\n [[ 110  111  112 ...  118  119  120]\n  [ 121  122  123 ...  129  130  131]\n  [ 132  133  134 ...  140  141  142]\n  ...\n  [ 187  188  189 ...  195  196  197]\n  [ 198  199  200 ...  206  207  208]\n  [ 209  210  211 ...  217  218  219]]\n\n [[ 220  221  222 ...  228  229  230]\n  [ 231  232  233 ...  239  240  241]\n  [ 242  243  244 ...  250  251  252]\n  ...\n  [ 297  298  299 ...  305  306  307]\n  [ 308  309  310 ...  316  317  318]\n  [ 319  320  321 ...  327  328  329]]\n\n ...\n\n [[ 770  771  772 ...  778  779  780]\n  [ 781  782  783 ...  789  790  791]\n  [ 792  793  794 ...  800  801  802]\n  ...\n  [ 847  848  849 ...  855  856  857]\n  [ 858  859  860 ...  866  867  868]\n  [ 869  870  871 ...  877  878  879]]\n\n [[ 880  881  882 ...  888  889  890]\n  [ 891  892  893 ...  899  900  901]\n  [ 902  903  904 ...  910  911  912]\n  ...\n  [ 957  958  959 ...  965  966  967]\n  [ 968  969  970 ...  976  977  978]\n  [ 979  980  981 ...  987  988  989]]\n\n [[ 990  991  992 ...  998  999 1000]\n  [1001 1002 1003 ... 1009 1010 1011]\n  [1012 1013 1014 ... 1020 1021 1022]\n  ...\n  [1067 1068 1069 ... 1075 1076 1077]\n  [1078 1079 1080 ... 1086 1087 1088]\n  [1089 1090 1091 ... 1097 1098 1099]]]"
        );
    }

    #[test]
    fn long_rows_wrap_at_75_columns() {
        let selection = Selection::new(&[100]);
        let values: Vec<f64> = (0..100).map(|i| i as f64 * 1.1).collect();
        let text = array_str(&selection, &Column::Float(FloatWidth::Double, values));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "[  0.    1.1   2.2   3.3   4.4   5.5   6.6   7.7   8.8   9.9  11.   12.1"
        );
        assert_eq!(
            lines[7],
            "  92.4  93.5  94.6  95.7  96.8  97.9  99.  100.1 101.2 102.3 103.4 104.5"
        );
        assert_eq!(lines[8], " 105.6 106.7 107.8 108.9]");
    }

    fn field(shape: &[usize], column: Column) -> FieldColumn {
        FieldColumn {
            shape: shape.to_vec(),
            column,
        }
    }

    fn one_d(column: Column) -> String {
        array_str(&Selection::new(&[column.len()]), &column)
    }

    // Expected strings are numpy 2.4's `str()` of the same arrays.
    #[test]
    fn every_kind_of_element() {
        use npy_core::TimeUnit;
        let seconds = Some(DateTimeUnit {
            unit: TimeUnit::Second,
            multiple: 1,
        });
        assert_eq!(one_d(Column::Bool(vec![true, false])), "[ True False]");
        assert_eq!(
            one_d(Column::Complex(
                FloatWidth::Double,
                vec![(1.0, 2.0), (3.0, -4.0)]
            )),
            "[1.+2.j 3.-4.j]"
        );
        assert_eq!(
            one_d(Column::Bytes(vec![b"ab".to_vec(), b"c".to_vec()])),
            "[b'ab' b'c']"
        );
        assert_eq!(
            one_d(Column::Str(vec!["ab".into(), "c".into()])),
            "['ab' 'c']"
        );
        assert_eq!(
            one_d(Column::Void(vec![vec![0; 3]; 2])),
            r"[b'\x00\x00\x00' b'\x00\x00\x00']"
        );
        assert_eq!(
            one_d(Column::DateTime(seconds, vec![Some(1_577_836_800), None])),
            "['2020-01-01T00:00:00'                 'NaT']"
        );
        assert_eq!(
            one_d(Column::TimeDelta(seconds, vec![Some(1), None])),
            "[    1 'NaT']"
        );
    }

    #[test]
    fn records_format_each_field_as_a_column() {
        let records = Column::Record {
            len: 2,
            fields: vec![
                field(&[], Column::Int(vec![1, 3])),
                field(&[], Column::Float(FloatWidth::Double, vec![2.0, 4.5])),
            ],
        };
        assert_eq!(one_d(records), "[(1, 2. ) (3, 4.5)]");
        let subarrays = Column::Record {
            len: 3,
            fields: vec![field(
                &[2, 2],
                Column::Float(
                    FloatWidth::Double,
                    vec![1.5, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                ),
            )],
        };
        assert_eq!(
            one_d(subarrays),
            "[([[1.5, 2. ], [3. , 4. ]],) ([[0. , 0. ], [0. , 0. ]],)\n ([[0. , 0. ], [0. , 0. ]],)]"
        );
    }

    #[test]
    fn zero_d_arrays_print_their_scalar() {
        use npy_core::TimeUnit;
        let scalar = |column: Column| array_str(&Selection::new(&[]), &column);
        assert_eq!(scalar(Column::Float(FloatWidth::Double, vec![1.0])), "1.0");
        assert_eq!(scalar(Column::Bool(vec![true])), "True");
        assert_eq!(scalar(Column::Int(vec![-5])), "-5");
        assert_eq!(
            scalar(Column::Bytes(vec![b"x".to_vec()])),
            "np.bytes_(b'x')"
        );
        assert_eq!(scalar(Column::Str(vec!["x".into()])), "x");
        assert_eq!(
            scalar(Column::Complex(FloatWidth::Double, vec![(0.0, 1.0)])),
            "1j"
        );
        assert_eq!(
            scalar(Column::Complex(FloatWidth::Double, vec![(1.0, -2.0)])),
            "(1-2j)"
        );
        assert_eq!(
            scalar(Column::Complex(
                FloatWidth::Double,
                vec![(f64::NAN, f64::INFINITY)]
            )),
            "(nan+infj)"
        );
        assert_eq!(
            scalar(Column::Complex(FloatWidth::Double, vec![(1e20, 1.0)])),
            "(1e+20+1j)"
        );
        let days = Some(DateTimeUnit {
            unit: TimeUnit::Day,
            multiple: 1,
        });
        assert_eq!(
            scalar(Column::DateTime(days, vec![Some(18_262)])),
            "2020-01-01"
        );
        assert_eq!(scalar(Column::DateTime(days, vec![None])), "NaT");
        assert_eq!(scalar(Column::TimeDelta(days, vec![Some(1)])), "1 days");
        let record = Column::Record {
            len: 1,
            fields: vec![
                field(&[], Column::Int(vec![0])),
                field(&[2], Column::Float(FloatWidth::Double, vec![1e20, 0.1])),
                field(&[], Column::Bytes(vec![b"x".to_vec()])),
                field(
                    &[],
                    Column::Record {
                        len: 1,
                        fields: vec![field(&[], Column::Float(FloatWidth::Single, vec![0.0]))],
                    },
                ),
                field(&[], Column::Str(vec!["y".into()])),
                field(&[], Column::DateTime(days, vec![Some(0)])),
                field(&[], Column::TimeDelta(days, vec![Some(0)])),
                field(&[], Column::Complex(FloatWidth::Double, vec![(1.0, 2.0)])),
                field(&[], Column::Bool(vec![false])),
                field(&[], Column::Void(vec![vec![0, 0]])),
            ],
        };
        assert_eq!(
            scalar(record),
            r"(0, [1e+20, 0.1], b'x', (0.0,), 'y', '1970-01-01', 0, 1.+2.j, False, b'\x00\x00')"
        );
    }
}

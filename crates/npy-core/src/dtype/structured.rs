//! Structured and subarray dtypes built from a descr literal, as NumPy's
//! `descr_to_dtype` builds them: field offsets, padding entries, subarray
//! shapes, and the check that no name or title is used twice.

use std::collections::HashSet;

use super::type_str::parse_type_str;
use super::{DType, Field, MAX_ITEMSIZE, Scalar, ScalarKind, Structured, too_big_itemsize};
use crate::error::{Error, Result};
use crate::literal::{Literal, Value};

impl DType {
    /// The dtype a parsed header `descr` value describes (NumPy's
    /// `descr_to_dtype`).
    // Inlined: a record's fields are mostly type strings, which then skip a
    // call of the (large) general case.
    #[inline]
    pub(crate) fn from_literal(literal: &Literal<'_>, value: &Value<'_>) -> Result<DType> {
        match value {
            Value::Str(s) => parse_type_str(literal.text(*s)),
            _ => DType::from_literal_container(literal, value),
        }
    }

    /// [`DType::from_literal`] for anything but a string.
    fn from_literal_container(literal: &Literal<'_>, value: &Value<'_>) -> Result<DType> {
        match value {
            Value::Tuple(items) => match literal.items(*items) {
                [base, shape] => subarray(literal, DType::from_literal(literal, base)?, shape),
                items => Err(Error::InvalidDType {
                    reason: format!(
                        "Tuple must have size 2, but has size {}: {}",
                        items.len(),
                        literal.repr(value)
                    ),
                }),
            },
            Value::List(entries) => record_from_entries(literal, literal.items(*entries)),
            other => Err(Error::InvalidDType {
                reason: format!(
                    "a descr is a string, a (base, shape) tuple or a list of fields, not {}",
                    literal.repr(other)
                ),
            }),
        }
    }
}

/// `numpy.dtype((base, shape))`: `()` gives `base` itself, an int `n` means `(n,)`.
fn subarray(literal: &Literal<'_>, base: DType, shape: &Value<'_>) -> Result<DType> {
    let invalid = |detail: &str| Error::InvalidDType {
        reason: format!(
            "invalid shape in fixed-type tuple{detail}: {}",
            literal.repr(shape)
        ),
    };
    let dims: &[Value<'_>] = match shape {
        Value::Int(_) => std::slice::from_ref(shape),
        Value::Tuple(items) => literal.items(*items),
        _ => return Err(invalid("")),
    };
    let mut out = Vec::with_capacity(dims.len());
    let mut size = base.itemsize();
    for dim in dims {
        let Value::Int(n) = dim else {
            return Err(invalid(""));
        };
        if *n < 0 {
            return Err(invalid(": dimension smaller than zero"));
        }
        let n = usize::try_from(*n)
            .ok()
            .filter(|&n| n <= MAX_ITEMSIZE)
            .ok_or_else(|| invalid(": dimension does not fit into a C int"))?;
        size = size.saturating_mul(n);
        out.push(n);
    }
    if size > MAX_ITEMSIZE {
        return Err(invalid(": dtype size in bytes must fit into a C int"));
    }
    if out.is_empty() {
        return Ok(base);
    }
    Ok(DType::SubArray(Box::new(base), out))
}

/// A structured dtype from a descr list, as NumPy's `descr_to_dtype` builds it:
/// offsets follow each other; `''`-named void entries are padding.
fn record_from_entries<'v>(literal: &'v Literal<'v>, entries: &'v [Value<'v>]) -> Result<DType> {
    let mut fields = Vec::with_capacity(entries.len());
    let mut used = UsedNames::with_capacity(entries.len());
    let mut offset = 0usize;
    for (index, entry) in entries.iter().enumerate() {
        let added = add_entry(literal, entry, index, &mut used, &mut fields, &mut offset);
        if let Err(error) = added {
            // NumPy checks the entries in order: a name used twice before
            // this entry's error is reported instead.
            return Err(used.repeat_error(literal, entries).unwrap_or(error));
        }
    }
    if let Some(error) = used.repeat_error(literal, entries) {
        return Err(error);
    }
    Ok(DType::Structured(Structured {
        fields,
        itemsize: offset,
    }))
}

/// Adds the descr list entry `entry` (the `index`th) at `offset` and moves
/// `offset` past it. Its name and title go to `used`; whether they were used
/// already is checked by the caller.
fn add_entry<'v>(
    literal: &'v Literal<'v>,
    entry: &'v Value<'v>,
    index: usize,
    used: &mut UsedNames<'v>,
    fields: &mut Vec<Field>,
    offset: &mut usize,
) -> Result<()> {
    let invalid = |reason: &str| Error::InvalidDType {
        reason: format!("{reason}: {}", literal.repr(entry)),
    };
    let not_a_field = || invalid("a field must be a (name, type) or (name, type, shape) tuple");
    let items = match entry {
        Value::Tuple(items) | Value::List(items) => literal.items(*items),
        _ => return Err(not_a_field()),
    };
    let (name, dtype) = match items {
        [name, descr] => (name, DType::from_literal(literal, descr)?),
        [name, descr, shape] => (
            name,
            subarray(literal, DType::from_literal(literal, descr)?, shape)?,
        ),
        _ => return Err(not_a_field()),
    };
    let (title, name) = match name {
        Value::Str(name) => (None, literal.text(*name)),
        Value::Tuple(pair) => match literal.items(*pair) {
            [Value::Str(title), Value::Str(name)] => {
                (Some(literal.text(*title)), literal.text(*name))
            }
            [_, Value::Str(_)] => {
                return Err(invalid("field titles other than strings are not supported"));
            }
            _ => return Err(invalid("field names must be strings")),
        },
        _ => return Err(invalid("field names must be strings")),
    };
    let size = dtype.itemsize();
    let is_padding = title.is_none()
        && name.is_empty()
        && matches!(
            &dtype,
            DType::Scalar(Scalar {
                kind: ScalarKind::Void,
                ..
            }) | DType::SubArray(..)
        );
    if !is_padding {
        used.push(name, index, false);
        if let Some(title) = title {
            used.push(title, index, true);
        }
        fields.push(Field {
            name: name.to_string(),
            title: title.map(|title| title.to_string()),
            dtype,
            offset: *offset,
        });
    }
    *offset = offset
        .checked_add(size)
        .filter(|&end| end <= MAX_ITEMSIZE)
        .ok_or_else(too_big_itemsize)?;
    Ok(())
}

/// The names and titles of a structured dtype's fields, in declaration
/// order (a field's name before its title), to refuse one used twice as
/// NumPy does ("name already used as a name or title").
struct UsedNames<'v> {
    names: Vec<UsedName<'v>>,
}

#[derive(Clone, Copy)]
struct UsedName<'v> {
    text: &'v str,
    /// Index of the descr entry.
    entry: usize,
    is_title: bool,
}

impl<'v> UsedNames<'v> {
    fn with_capacity(entries: usize) -> Self {
        UsedNames {
            names: Vec::with_capacity(entries),
        }
    }

    fn push(&mut self, text: &'v str, entry: usize, is_title: bool) {
        self.names.push(UsedName {
            text,
            entry,
            is_title,
        });
    }

    /// NumPy's error for the first name or title, in declaration order, that
    /// repeats an earlier one, if any.
    fn repeat_error(&self, literal: &Literal<'_>, entries: &[Value<'_>]) -> Option<Error> {
        let mut seen = HashSet::with_capacity(self.names.len());
        let repeat = self.names.iter().find(|name| !seen.insert(name.text))?;
        let reason = if repeat.is_title {
            "title already used as a name or title"
        } else {
            "name already used as a name or title"
        };
        Some(Error::InvalidDType {
            reason: format!("{reason}: {}", literal.repr(&entries[repeat.entry])),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` distinct `<i1` fields, as descr entries.
    fn entries(count: usize) -> Vec<String> {
        (0..count).map(|i| format!("('f{i}', '<i1')")).collect()
    }

    fn parse_entries(entries: &[String]) -> Result<DType> {
        DType::parse(&format!("[{}]", entries.join(", ")))
    }

    fn reason(result: Result<DType>) -> String {
        match result {
            Err(Error::InvalidDType { reason }) => reason,
            other => panic!("not an invalid dtype: {other:?}"),
        }
    }

    // Few names, the 50 of the header benchmark, and many.
    const COUNTS: [usize; 5] = [2, 15, 17, 50, 104];

    #[test]
    fn the_first_repeated_name_is_reported() {
        for count in COUNTS {
            let mut list = entries(count);
            // Two repeats: the earlier one in declaration order is reported,
            // with its entry.
            list.push("('f1', '<f8')".to_owned());
            list.push("('f0', '<f4')".to_owned());
            assert_eq!(
                reason(parse_entries(&list)),
                "name already used as a name or title: ('f1', '<f8')",
                "{count} fields"
            );
            let distinct = parse_entries(&entries(count)).expect("distinct names");
            assert_eq!(distinct.itemsize(), count, "{count} fields");
        }
    }

    #[test]
    fn titles_share_the_names_namespace() {
        for count in COUNTS {
            let mut list = entries(count);
            list.push("(('f0', 'new'), '<i1')".to_owned());
            assert_eq!(
                reason(parse_entries(&list)),
                "title already used as a name or title: (('f0', 'new'), '<i1')",
                "{count} fields"
            );
            let mut list = entries(count);
            list.insert(0, "(('t', 'n'), '<i1')".to_owned());
            list.push("('t', '<i1')".to_owned());
            assert_eq!(
                reason(parse_entries(&list)),
                "name already used as a name or title: ('t', '<i1')",
                "{count} fields"
            );
        }
    }

    #[test]
    fn errors_are_reported_in_entry_order() {
        for count in COUNTS {
            // A repeat before a bad entry wins ...
            let mut list = entries(count);
            list.push("('f0', '<i1')".to_owned());
            list.push("('x', '<i3')".to_owned());
            let message = reason(parse_entries(&list));
            assert!(message.starts_with("name already used"), "{message}");
            // ... a bad entry before a repeat too.
            let mut list = entries(count);
            list.push("('x', 5)".to_owned());
            list.push("('f0', '<i1')".to_owned());
            let message = reason(parse_entries(&list));
            assert!(message.starts_with("a descr is a string"), "{message}");
            // An entry whose name repeats and whose size overflows: the name.
            let mut list = entries(count);
            list.push("('f0', '|V2147483647')".to_owned());
            let message = reason(parse_entries(&list));
            assert!(message.starts_with("name already used"), "{message}");
        }
    }

    #[test]
    fn many_names_sharing_long_prefixes_are_checked_exactly() {
        // Names that differ only at the end (the old hash table's crowding
        // case): distinct ones pass, a repeat deep in the list is found.
        let names: Vec<String> = (0..40).map(|i| format!("{}{i}", "n".repeat(24))).collect();
        let mut list: Vec<String> = names.iter().map(|n| format!("('{n}', '<i1')")).collect();
        assert_eq!(parse_entries(&list).expect("distinct").itemsize(), 40);
        list.push(format!("('{}', '<i1')", names[3]));
        assert_eq!(
            reason(parse_entries(&list)),
            format!(
                "name already used as a name or title: ('{}', '<i1')",
                names[3]
            )
        );
    }

    #[test]
    fn names_differing_only_by_nul_bytes_are_not_repeats() {
        // 'a' and 'b\0' collided in the old hash table; they are distinct names.
        let mut list = entries(17);
        list.push("('a', '<i1')".to_owned());
        list.push(r"('b\x00', '<i1')".to_owned());
        list.push(r"('a\x00', '<i1')".to_owned());
        let dtype = parse_entries(&list).expect("distinct names");
        assert_eq!(dtype.itemsize(), 20);
        list.push(r"('b\x00', '<i2')".to_owned());
        assert_eq!(
            reason(parse_entries(&list)),
            r"name already used as a name or title: ('b\x00', '<i2')"
        );
    }
}

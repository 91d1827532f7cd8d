//! `--index 3,:,:`: the part of an array a picture shows, as a first element
//! and per-axis strides into the array's data (the view's geometry, so C and
//! Fortran order and subarray dtypes need no special case).

use anyhow::bail;

/// One entry of `--index`: a fixed position or a whole axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    At(i64),
    All,
}

/// `--index`: comma-separated integers (negative counts from the end, as in
/// numpy) and `:`; axes not named at the end are whole, as in numpy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexSpec(Vec<Entry>);

impl std::str::FromStr for IndexSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        text.split(',')
            .map(|part| match part.trim() {
                ":" => Ok(Entry::All),
                number => number.parse().map(Entry::At).map_err(|_| {
                    format!("'{number}' is neither an integer nor ':' (write e.g. 3,:,:)")
                }),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(IndexSpec)
    }
}

impl IndexSpec {
    /// The index as the user would write it.
    pub fn text(&self) -> String {
        self.0
            .iter()
            .map(|entry| match entry {
                Entry::At(index) => index.to_string(),
                Entry::All => ":".to_string(),
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// The elements drawn: element `offset + Σ i[k] * strides[k]` for each
/// `i[k] < shape[k]` (offsets and strides in elements of the data).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    pub offset: usize,
    pub shape: Vec<usize>,
    pub strides: Vec<usize>,
}

impl Selection {
    /// Applies `spec` to an array of `shape` whose axes step `strides`
    /// elements through memory; errors say what numpy says.
    pub fn new(
        shape: &[usize],
        strides: &[usize],
        spec: Option<&IndexSpec>,
    ) -> anyhow::Result<Selection> {
        let entries = spec.map_or(&[][..], |spec| &spec.0[..]);
        if entries.len() > shape.len() {
            bail!(
                "too many indices for array: array is {}-dimensional, but {} were indexed",
                shape.len(),
                entries.len()
            );
        }
        let mut selection = Selection {
            offset: 0,
            shape: Vec::new(),
            strides: Vec::new(),
        };
        for (axis, (&size, &stride)) in shape.iter().zip(strides).enumerate() {
            match entries.get(axis).copied().unwrap_or(Entry::All) {
                Entry::All => {
                    selection.shape.push(size);
                    selection.strides.push(stride);
                }
                Entry::At(index) => {
                    let resolved = if index < 0 {
                        usize::try_from(index.unsigned_abs())
                            .ok()
                            .and_then(|back| size.checked_sub(back))
                    } else {
                        usize::try_from(index).ok().filter(|&i| i < size)
                    };
                    let Some(position) = resolved else {
                        bail!("index {index} is out of bounds for axis {axis} with size {size}");
                    };
                    // In bounds, so within the data's element count.
                    selection.offset += position * stride;
                }
            }
        }
        Ok(selection)
    }

    /// Number of elements selected.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> IndexSpec {
        text.parse().unwrap()
    }

    #[test]
    fn fixed_axes_move_the_offset_and_whole_axes_stay() {
        // A C-order (4, 5, 6) array.
        let s = Selection::new(&[4, 5, 6], &[30, 6, 1], Some(&spec("3,:,:"))).unwrap();
        assert_eq!(
            s,
            Selection {
                offset: 90,
                shape: vec![5, 6],
                strides: vec![6, 1]
            }
        );
        let s = Selection::new(&[4, 5, 6], &[30, 6, 1], Some(&spec(":,-1"))).unwrap();
        assert_eq!(
            s,
            Selection {
                offset: 24,
                shape: vec![4, 6],
                strides: vec![30, 1]
            }
        );
        // Fortran order: the first axis is contiguous.
        let s = Selection::new(&[4, 5, 6], &[1, 4, 20], Some(&spec("2"))).unwrap();
        assert_eq!(
            s,
            Selection {
                offset: 2,
                shape: vec![5, 6],
                strides: vec![4, 20]
            }
        );
        assert_eq!(Selection::new(&[3], &[1], None).unwrap().shape, [3]);
    }

    #[test]
    fn bad_indices_are_refused_with_numpys_words() {
        let err = Selection::new(&[4, 5], &[5, 1], Some(&spec("4,:"))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "index 4 is out of bounds for axis 0 with size 4"
        );
        let err = Selection::new(&[4, 5], &[5, 1], Some(&spec(":,-6"))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "index -6 is out of bounds for axis 1 with size 5"
        );
        let err = Selection::new(&[4], &[1], Some(&spec("0,0"))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "too many indices for array: array is 1-dimensional, but 2 were indexed"
        );
        assert_eq!(
            "1,x".parse::<IndexSpec>().unwrap_err(),
            "'x' is neither an integer nor ':' (write e.g. 3,:,:)"
        );
        assert_eq!(
            "".parse::<IndexSpec>().unwrap_err(),
            "'' is neither an integer nor ':' (write e.g. 3,:,:)"
        );
    }
}

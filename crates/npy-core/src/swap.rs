//! Byte-order conversion of array data, in place, for any dtype.
//!
//! What swaps, following NumPy's `byteswap`: every multi-byte number
//! (integers, floats, long doubles, datetimes) is reversed whole; complex
//! numbers reverse their real and imaginary parts separately; `U` strings
//! reverse each 4-byte code unit; records swap field by field (recursively;
//! padding is left alone); subarrays swap each item. `S`, `V` and `b1` have no
//! byte order and are untouched. Fields already in the target order stay as
//! they are, so mixed-order records become uniform.
//!
//! ```
//! use npy_core::swap::convert_byte_order;
//! use npy_core::{ByteOrder, DType, Scalar, ScalarKind};
//!
//! let i4 = |byte_order| DType::Scalar(Scalar { kind: ScalarKind::Int, byte_order, itemsize: 4 });
//! let mut data = [0, 0, 0, 1, 0, 0, 1, 0]; // [1, 256] as '>i4'
//! let converted = convert_byte_order(&i4(ByteOrder::Big), &mut data, ByteOrder::Little);
//! assert_eq!(data, [1, 0, 0, 0, 0, 1, 0, 0]);
//! assert_eq!(converted, i4(ByteOrder::Little));
//! ```

use crate::dtype::{ByteOrder, DType, Scalar, ScalarKind};

/// The bytes-per-unit that a scalar swaps, or `None` if it has no byte order.
fn swap_unit(scalar: &Scalar) -> Option<usize> {
    if !scalar.has_byte_order() {
        return None;
    }
    let unit = match scalar.kind {
        ScalarKind::Complex => scalar.itemsize / 2,
        ScalarKind::Unicode => 4,
        _ => scalar.itemsize,
    };
    (unit > 1).then_some(unit)
}

/// One step of swapping an element: reverse `count` runs of `width` bytes
/// starting at `offset`, or repeat an inner plan `count` times `stride` apart.
///
/// Repeats keep the plan's size proportional to the dtype description, not
/// to its itemsize (a header can declare a huge subarray cheaply).
#[derive(Debug)]
enum Step {
    Reverse {
        offset: usize,
        width: usize,
        count: usize,
    },
    Repeat {
        offset: usize,
        stride: usize,
        count: usize,
        steps: Vec<Step>,
    },
}

fn plan(dtype: &DType, offset: usize, to: ByteOrder) -> Vec<Step> {
    match dtype {
        // Objects have no bytes to swap (their data is a pickle).
        DType::Object => Vec::new(),
        DType::Scalar(s) => match swap_unit(s) {
            Some(width) if s.normalized().byte_order != to => vec![Step::Reverse {
                offset,
                width,
                count: s.itemsize / width,
            }],
            _ => Vec::new(),
        },
        DType::Structured(r) => r
            .fields
            .iter()
            .flat_map(|f| plan(&f.dtype, offset + f.offset, to))
            .collect(),
        DType::SubArray(base, shape) => {
            let count: usize = shape.iter().product();
            let stride = base.itemsize();
            let mut steps = plan(base, 0, to);
            match steps.as_slice() {
                [] => Vec::new(),
                // A base that is one run covering itself just makes a longer run.
                [
                    Step::Reverse {
                        offset: 0,
                        width,
                        count: n,
                    },
                ] if width * n == stride => {
                    vec![Step::Reverse {
                        offset,
                        width: *width,
                        count: n * count,
                    }]
                }
                _ => {
                    steps.shrink_to_fit();
                    vec![Step::Repeat {
                        offset,
                        stride,
                        count,
                        steps,
                    }]
                }
            }
        }
    }
}

/// Applies `steps` to one element's bytes; runs that do not fit are skipped
/// (they only arise from hand-made, inconsistent dtypes).
fn apply(steps: &[Step], element: &mut [u8]) {
    for step in steps {
        match *step {
            Step::Reverse {
                offset,
                width,
                count,
            } => {
                let Some(region) = element.get_mut(offset..) else {
                    continue;
                };
                region
                    .chunks_exact_mut(width)
                    .take(count)
                    .for_each(<[u8]>::reverse);
            }
            Step::Repeat {
                offset,
                stride,
                count,
                ref steps,
            } => {
                let Some(region) = element.get_mut(offset..) else {
                    continue;
                };
                if stride == 0 {
                    continue;
                }
                region
                    .chunks_exact_mut(stride)
                    .take(count)
                    .for_each(|item| apply(steps, item));
            }
        }
    }
}

/// Converts the elements of `data` (of `dtype`) to byte order `to` in place
/// and returns the dtype that now describes them ([`DType::with_byte_order`]).
///
/// Only whole elements are converted: a trailing partial element is left as
/// it is. `to == NotApplicable` means native, as in [`DType::with_byte_order`].
pub fn convert_byte_order(dtype: &DType, data: &mut [u8], to: ByteOrder) -> DType {
    let converter = ByteOrderConverter::new(dtype, to);
    converter.convert(data);
    converter.converted_dtype().clone()
}

/// A byte-order conversion planned once for a dtype, then applied to any
/// number of buffers: what a reader uses to convert data piece by piece as
/// it arrives, while each piece is still in the cache.
///
/// ```
/// use npy_core::swap::ByteOrderConverter;
/// use npy_core::{ByteOrder, DType};
///
/// let converter = ByteOrderConverter::new(&DType::parse(">u2")?, ByteOrder::Little);
/// let mut data = [0, 1, 0, 2, 0, 3];
/// for piece in data.chunks_mut(2) {
///     converter.convert(piece);
/// }
/// assert_eq!(data, [1, 0, 2, 0, 3, 0]);
/// assert_eq!(converter.converted_dtype().descr(), "<u2");
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug)]
pub struct ByteOrderConverter {
    itemsize: usize,
    work: Work,
    converted: DType,
}

/// What converting one buffer takes.
#[derive(Debug)]
enum Work {
    /// Nothing has a byte order to change (or elements have no bytes).
    Nothing,
    /// Every element is a sequence of `width`-byte units to reverse (plain
    /// numbers, `U` strings): the buffer is swapped as one run of units.
    Units(usize),
    /// Records and other mixed layouts: the plan, element by element.
    Elements(Vec<Step>),
}

impl ByteOrderConverter {
    /// Plans converting elements of `dtype` to byte order `to`
    /// (`NotApplicable` means native).
    pub fn new(dtype: &DType, to: ByteOrder) -> ByteOrderConverter {
        let to = match to {
            ByteOrder::NotApplicable => ByteOrder::NATIVE,
            order => order,
        };
        let itemsize = dtype.itemsize();
        let steps = plan(dtype, 0, to);
        let work = match steps.as_slice() {
            _ if itemsize == 0 => Work::Nothing,
            [] => Work::Nothing,
            [
                Step::Reverse {
                    offset: 0,
                    width,
                    count,
                },
            ] if width * count == itemsize => Work::Units(*width),
            _ => Work::Elements(steps),
        };
        ByteOrderConverter {
            itemsize,
            work,
            converted: dtype.with_byte_order(to),
        }
    }

    /// Whether [`convert`](Self::convert) leaves every byte as it is.
    pub fn is_noop(&self) -> bool {
        matches!(self.work, Work::Nothing)
    }

    /// The dtype that describes the elements once converted.
    pub fn converted_dtype(&self) -> &DType {
        &self.converted
    }

    /// Converts the whole elements at the start of `data` in place and
    /// returns their length in bytes (a trailing partial element is left as
    /// it is). Pieces of one buffer can be converted separately as long as
    /// each starts on an element.
    pub fn convert(&self, data: &mut [u8]) -> usize {
        let whole = match self.itemsize {
            0 => 0,
            itemsize => data.len() - data.len() % itemsize,
        };
        let data = &mut data[..whole];
        match &self.work {
            Work::Nothing => {}
            Work::Units(width) => swap_units(data, *width),
            Work::Elements(steps) => data
                .chunks_exact_mut(self.itemsize)
                .for_each(|element| apply(steps, element)),
        }
        whole
    }
}

/// Reverses every `width`-byte unit; fixed widths get loops the compiler
/// turns into bswap instructions.
fn swap_units(data: &mut [u8], width: usize) {
    fn fixed<const N: usize>(data: &mut [u8]) {
        data.chunks_exact_mut(N).for_each(|unit| {
            let unit: &mut [u8; N] = unit.try_into().expect("chunk of N bytes");
            unit.reverse();
        });
    }
    match width {
        2 => fixed::<2>(data),
        4 => fixed::<4>(data),
        8 => fixed::<8>(data),
        16 => fixed::<16>(data),
        _ => data.chunks_exact_mut(width).for_each(<[u8]>::reverse),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(kind: ScalarKind, byte_order: ByteOrder, itemsize: usize) -> DType {
        DType::Scalar(Scalar {
            kind,
            byte_order,
            itemsize,
        })
    }

    #[test]
    fn plan_of_large_subarray_is_one_step() {
        let huge = DType::SubArray(
            Box::new(scalar(ScalarKind::Float, ByteOrder::Big, 8)),
            vec![1 << 40],
        );
        let steps = plan(&huge, 0, ByteOrder::Little);
        assert!(matches!(
            steps.as_slice(),
            [Step::Reverse { offset: 0, width: 8, count }] if *count == 1 << 40
        ));
    }
}

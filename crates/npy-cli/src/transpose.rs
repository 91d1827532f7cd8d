//! C <-> F reordering in cache-sized tiles, writing the output slice by slice.
//!
//! Converting between C and Fortran order reverses the axes' memory order:
//! the input's fastest axis becomes the output's slowest. The output is
//! therefore produced in whole slices of that axis, and within a chunk the
//! copy runs in tiles of [`TILE`] values of it, so each input row is read as
//! a short contiguous run and each output slice is written as a stream. An
//! element-by-element gather would touch a new page for nearly every element.

/// Values of the input's fastest axis copied per pass over the other axes.
const TILE: usize = 32;

/// Produces the elements of an array in the reversed memory order.
pub struct AxisReversal<'a> {
    input: &'a [u8],
    itemsize: usize,
    /// The input's axis lengths, fastest in memory first.
    dims: Vec<usize>,
    /// Elements per value of the fastest axis (the product of the other axes).
    slice_len: usize,
    /// Output strides of axes 1.. (axis 1 is the output's slowest of them).
    out_strides: Vec<usize>,
    next: usize,
}

impl<'a> AxisReversal<'a> {
    /// `input` holds an array whose axis lengths, fastest in memory first,
    /// are `dims`, in elements of `itemsize` bytes.
    pub fn new(input: &'a [u8], itemsize: usize, dims: &[usize]) -> AxisReversal<'a> {
        let mut out_strides = vec![0; dims.len()];
        let mut step = 1usize;
        for axis in (1..dims.len()).rev() {
            out_strides[axis] = step;
            step = step.saturating_mul(dims[axis]);
        }
        AxisReversal {
            input,
            itemsize,
            dims: dims.to_vec(),
            slice_len: step,
            out_strides,
            next: 0,
        }
    }

    /// Bytes of one output slice: the smallest unit [`fill`](Self::fill) writes.
    pub fn slice_bytes(&self) -> usize {
        self.slice_len.saturating_mul(self.itemsize)
    }

    /// Fills the start of `out` with the next whole output slices and returns
    /// the bytes written (0 once everything has been produced).
    pub fn fill(&mut self, out: &mut [u8]) -> usize {
        let fastest = self.dims.first().copied().unwrap_or(1);
        let slices = out
            .len()
            .checked_div(self.slice_bytes())
            .unwrap_or(0)
            .min(fastest - self.next);
        let (start, end) = (self.next, self.next + slices);
        match self.itemsize {
            1 => self.copy::<1>(out, start, end),
            2 => self.copy::<2>(out, start, end),
            4 => self.copy::<4>(out, start, end),
            8 => self.copy::<8>(out, start, end),
            16 => self.copy::<16>(out, start, end),
            _ => self.copy::<0>(out, start, end),
        }
        self.next = end;
        slices * self.slice_bytes()
    }

    /// Copies slices `start..end` of the fastest axis into `out`; `N` is the
    /// itemsize when it is a constant the compiler can unroll (0: any size).
    fn copy<const N: usize>(&self, out: &mut [u8], start: usize, end: usize) {
        let size = if N == 0 { self.itemsize } else { N };
        let fastest = self.dims.first().copied().unwrap_or(1);
        for tile in (start..end).step_by(TILE) {
            let tile_end = (tile + TILE).min(end);
            let mut index = vec![0usize; self.dims.len()];
            let mut within_slice = 0usize;
            // Walk the other axes in input memory order: `row` counts them.
            for row in 0..self.slice_len {
                let row_start = row * fastest;
                for value in tile..tile_end {
                    let from = (row_start + value) * size;
                    let to = ((value - start) * self.slice_len + within_slice) * size;
                    out[to..to + size].copy_from_slice(&self.input[from..from + size]);
                }
                let axes = index
                    .iter_mut()
                    .zip(&self.dims)
                    .zip(&self.out_strides)
                    .skip(1);
                for ((position, &len), &stride) in axes {
                    *position += 1;
                    within_slice += stride;
                    if *position < len {
                        break;
                    }
                    within_slice -= stride * len;
                    *position = 0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use npy_core::{ByteOrder, DType, Order, RawView, Scalar, ScalarKind};

    /// The reference: npy-core's view of the C data as its F-ordered
    /// transpose, iterated in logical order.
    fn reference(input: &[u8], itemsize: usize, shape: &[usize]) -> Vec<u8> {
        let dtype = DType::Scalar(Scalar::new(
            ScalarKind::Void,
            ByteOrder::NotApplicable,
            itemsize,
        ));
        let reversed: Vec<usize> = shape.iter().rev().copied().collect();
        let view = RawView::new(input, &dtype, &reversed, Order::Fortran).unwrap();
        view.iter()
            .flat_map(|element| element.bytes().to_vec())
            .collect()
    }

    fn reversed(input: &[u8], itemsize: usize, shape: &[usize], chunk_slices: usize) -> Vec<u8> {
        let dims: Vec<usize> = shape.iter().rev().copied().collect();
        let mut reversal = AxisReversal::new(input, itemsize, &dims);
        let mut buffer = vec![0u8; chunk_slices * reversal.slice_bytes()];
        let mut out = Vec::new();
        loop {
            let n = reversal.fill(&mut buffer);
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buffer[..n]);
        }
        out
    }

    #[test]
    fn matches_the_view_for_many_shapes_and_sizes() {
        for shape in [
            vec![2, 3],
            vec![3, 4, 5],
            vec![70, 3],
            vec![3, 70],
            vec![2, 3, 4, 5],
            vec![5],
            vec![1, 40, 1],
        ] {
            for itemsize in [1, 2, 3, 8, 16] {
                let count: usize = shape.iter().product();
                let input: Vec<u8> = (0..count * itemsize).map(|i| (i * 7 % 251) as u8).collect();
                let expected = reference(&input, itemsize, &shape);
                for chunk_slices in [1, 7, 1000] {
                    assert_eq!(
                        reversed(&input, itemsize, &shape, chunk_slices),
                        expected,
                        "{shape:?} {itemsize} {chunk_slices}"
                    );
                }
            }
        }
    }
}

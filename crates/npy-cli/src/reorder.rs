//! Gathering elements from one memory order into another, chunk by chunk.
//!
//! The output is written sequentially; each output element is fetched from
//! wherever the input order keeps it. Only whole elements move, so this is
//! pure byte shuffling that needs no knowledge of the dtype.

use npy_core::Order;

/// Walks the output positions of an array in `to` order and yields the
/// matching element index in `from` order.
pub struct Gather {
    shape: Vec<usize>,
    /// Input strides (in elements) of each axis.
    from_strides: Vec<usize>,
    /// Axes in the order the output advances them, fastest first.
    axes: Vec<usize>,
    index: Vec<usize>,
    source: usize,
    remaining: usize,
}

/// Element strides of `shape` laid out in `order`.
pub fn strides(shape: &[usize], order: Order) -> Vec<usize> {
    let mut strides = vec![0; shape.len()];
    let mut step = 1usize;
    for axis in fastest_first(shape.len(), order) {
        strides[axis] = step;
        step = step.saturating_mul(shape[axis]);
    }
    strides
}

fn fastest_first(ndim: usize, order: Order) -> Vec<usize> {
    match order {
        Order::C => (0..ndim).rev().collect(),
        Order::Fortran => (0..ndim).collect(),
    }
}

impl Gather {
    /// `count` is the element count (the product of `shape`).
    pub fn new(shape: &[usize], count: usize, from: Order, to: Order) -> Gather {
        Gather {
            shape: shape.to_vec(),
            from_strides: strides(shape, from),
            axes: fastest_first(shape.len(), to),
            index: vec![0; shape.len()],
            source: 0,
            remaining: count,
        }
    }

    /// Fills `out` (a whole number of elements of `itemsize` bytes) with the
    /// next output elements taken from `input`. Returns the elements written.
    pub fn fill(&mut self, input: &[u8], itemsize: usize, out: &mut [u8]) -> usize {
        // Zero-size elements fit any buffer.
        let wanted = out
            .len()
            .checked_div(itemsize)
            .map_or(self.remaining, |n| n.min(self.remaining));
        for slot in 0..wanted {
            let from = self.source * itemsize;
            out[slot * itemsize..(slot + 1) * itemsize]
                .copy_from_slice(&input[from..from + itemsize]);
            self.advance();
        }
        self.remaining -= wanted;
        wanted
    }

    /// Steps the output multi-index by one, keeping the input offset in step.
    fn advance(&mut self) {
        for &axis in &self.axes {
            self.index[axis] += 1;
            self.source += self.from_strides[axis];
            if self.index[axis] < self.shape[axis] {
                return;
            }
            self.source -= self.from_strides[axis] * self.shape[axis];
            self.index[axis] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gather_all(shape: &[usize], from: Order, to: Order, chunk: usize) -> Vec<u8> {
        let count: usize = shape.iter().product();
        let input: Vec<u8> = (0..count as u8).collect();
        let mut gather = Gather::new(shape, count, from, to);
        let mut out = Vec::new();
        let mut buf = vec![0u8; chunk];
        loop {
            let n = gather.fill(&input, 1, &mut buf);
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        out
    }

    #[test]
    fn c_to_fortran_is_a_transpose() {
        // np.arange(6).reshape(2, 3) in F order is 0 3 1 4 2 5.
        assert_eq!(
            gather_all(&[2, 3], Order::C, Order::Fortran, 4),
            [0, 3, 1, 4, 2, 5]
        );
        assert_eq!(
            gather_all(&[2, 3], Order::Fortran, Order::C, 1),
            [0, 2, 4, 1, 3, 5]
        );
        assert_eq!(
            gather_all(&[2, 3], Order::C, Order::C, 5),
            [0, 1, 2, 3, 4, 5]
        );
    }

    #[test]
    fn three_axes_round_trip() {
        let shape = [3, 4, 5];
        let f = gather_all(&shape, Order::C, Order::Fortran, 7);
        // Element (i, j, k) sits at i + 3j + 12k in F order and holds 20i + 5j + k.
        for i in 0..3 {
            for j in 0..4 {
                for k in 0..5 {
                    assert_eq!(f[i + 3 * j + 12 * k] as usize, 20 * i + 5 * j + k);
                }
            }
        }
    }

    #[test]
    fn multi_byte_elements_move_whole() {
        let input: Vec<u8> = (0..12).collect();
        let mut gather = Gather::new(&[2, 3], 6, Order::C, Order::Fortran);
        let mut out = vec![0u8; 12];
        assert_eq!(gather.fill(&input, 2, &mut out), 6);
        assert_eq!(out, [0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]);
    }
}

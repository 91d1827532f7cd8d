//! Random access: fixed-rank and run-time-rank indices, `Index`/`IndexMut`,
//! and gathers, checked against numpy's indexing of the same memory.

use npy_core::element::Element;
use npy_core::{ArrayView, ArrayViewMut, DType, Error, Order};
use zerocopy::IntoBytes;

/// A (3, 4) array holding 0..12 in memory, in `order`.
fn memory() -> Vec<i64> {
    (0..12).collect()
}

#[test]
fn every_index_form_reads_the_same_element() {
    let memory = memory();
    for order in [Order::C, Order::Fortran] {
        let view = ArrayView::<i64>::new(memory.as_bytes(), &i64::dtype(), &[3, 4], order).unwrap();
        for i in 0..3 {
            for j in 0..4 {
                // numpy: a = np.arange(12).reshape(3, 4) (C) or .reshape(4, 3).T (F).
                let expected = match order {
                    Order::C => (i * 4 + j) as i64,
                    Order::Fortran => (i + j * 3) as i64,
                };
                let dynamic = vec![i, j];
                assert_eq!(view.get([i, j]), Some(&expected));
                assert_eq!(view.get([i, j]), Some(&expected));
                assert_eq!(view.get(&dynamic), Some(&expected));
                assert_eq!(view.get(dynamic.as_slice()), Some(&expected));
                assert_eq!(view[[i, j]], expected);
                assert_eq!(view[&dynamic], expected);
            }
        }
        assert_eq!(view.get([3, 0]), None);
        assert_eq!(view.get([0, 4]), None);
        assert_eq!(view.get([usize::MAX, usize::MAX]), None);
        // 2^62 × stride 4 wraps to 0: still out of bounds, never element 0.
        assert_eq!(view.get([1usize << 62, 0]), None);
        assert_eq!(view.get([usize::MAX, 0]), None);
        assert_eq!(view.get([0]), None, "too few entries");
        assert_eq!(view.get([0, 0, 0]), None, "too many entries");
        assert_eq!(view.get(&[0usize][..]), None);
    }
    // One row of a Fortran array: strides (1, 1), not C order's (3, 1).
    let row =
        ArrayView::<i64>::new(memory.as_bytes(), &i64::dtype(), &[1, 3], Order::Fortran).unwrap();
    assert_eq!(row.get([0, 2]), Some(&2));
    assert_eq!(row.get([1, 0]), None);
    // An outer slice of a C array keeps the fast path and its bounds.
    let c = ArrayView::<i64>::new(memory.as_bytes(), &i64::dtype(), &[3, 4], Order::C).unwrap();
    let tail = c.slice_outer(1..2).unwrap();
    assert_eq!(tail[[0, 3]], 7);
    assert_eq!(tail.get([1, 0]), None);
    // A 1-d view takes a plain usize.
    let flat = ArrayView::<i64>::new(memory.as_bytes(), &i64::dtype(), &[12], Order::C).unwrap();
    assert_eq!(flat.get(7), Some(&7));
    assert_eq!(flat[11], 11);
    assert_eq!(flat.get(12), None);
    // A 0-d view takes the empty index.
    let scalar = ArrayView::<i64>::new(memory.as_bytes(), &i64::dtype(), &[], Order::C).unwrap();
    assert_eq!(scalar[[]], 0);
    assert_eq!(scalar.get(0), None);
}

#[test]
fn subarray_dimensions_are_indexed_too() {
    // ('<i8', (2,)) elements of a (3, 2) array: logical shape (3, 2, 2).
    let memory = memory();
    let dtype = DType::parse("('<i8', (2,))").unwrap();
    let view = ArrayView::<i64>::new(memory.as_bytes(), &dtype, &[3, 2], Order::C).unwrap();
    assert_eq!(view.shape(), [3, 2, 2]);
    assert_eq!(view[[2, 1, 0]], 10);
    assert_eq!(view.get([2, 1]), None);
}

#[test]
#[should_panic(expected = "index 3 is out of bounds for axis 0 with size 3")]
fn index_out_of_bounds_panics_like_numpy_says() {
    let memory = memory();
    let view = ArrayView::<i64>::new(memory.as_bytes(), &i64::dtype(), &[3, 4], Order::C).unwrap();
    let _ = view[[3, 0]];
}

#[test]
#[should_panic(expected = "an index into a 2-dimensional array needs 2 entries, not 1")]
fn index_of_the_wrong_rank_panics() {
    let memory = memory();
    let view = ArrayView::<i64>::new(memory.as_bytes(), &i64::dtype(), &[3, 4], Order::C).unwrap();
    let _ = view[1];
}

#[test]
fn mutable_views_index_and_assign() {
    let mut memory = memory();
    let mut view = ArrayViewMut::<i64>::new(
        memory.as_mut_bytes(),
        &i64::dtype(),
        &[3, 4],
        Order::Fortran,
    )
    .unwrap();
    view[[2, 1]] = -1;
    *view.get_mut([0, 3]).unwrap() = -2;
    assert_eq!(view[[2, 1]], -1);
    assert_eq!(view.get([0, 3]), Some(&-2));
    assert_eq!(view.get_mut([3, 0]), None);
    // Fortran order: [2, 1] is memory 2 + 1 * 3, [0, 3] is 9.
    assert_eq!(memory[5], -1);
    assert_eq!(memory[9], -2);
}

#[test]
#[should_panic(expected = "index 4 is out of bounds for axis 1 with size 4")]
fn index_mut_out_of_bounds_panics() {
    let mut memory = memory();
    let mut view =
        ArrayViewMut::<i64>::new(memory.as_mut_bytes(), &i64::dtype(), &[3, 4], Order::C).unwrap();
    view[[0, 4]] = 1;
}

#[test]
fn gather_matches_get_in_both_orders() {
    let memory = memory();
    for order in [Order::C, Order::Fortran] {
        let view = ArrayView::<i64>::new(memory.as_bytes(), &i64::dtype(), &[3, 4], order).unwrap();
        let indices = [[2, 3], [0, 0], [1, 2], [2, 3], [0, 1]];
        let mut out = [0; 5];
        view.gather(&indices, &mut out).unwrap();
        let expected: Vec<i64> = indices.iter().map(|&index| view[index]).collect();
        assert_eq!(out.as_slice(), expected);
        // Run-time-rank indices gather the same.
        let dynamic: Vec<&[usize]> = indices.iter().map(|index| &index[..]).collect();
        let mut again = [0; 5];
        view.gather(&dynamic, &mut again).unwrap();
        assert_eq!(again, out);
    }
}

#[test]
fn gather_refuses_bad_indices_and_writes_nothing() {
    let memory = memory();
    let view = ArrayView::<i64>::new(memory.as_bytes(), &i64::dtype(), &[3, 4], Order::C).unwrap();
    let mut out = [7; 3];
    let err = view
        .gather(&[[0, 0], [1, 4], [5, 0]], &mut out)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::IndexOutOfBounds {
                index: 4,
                axis: 1,
                len: 4
            }
        ),
        "{err:?}"
    );
    assert_eq!(out, [7; 3]);
    let err = view.gather(&[&[0usize][..]], &mut out[..1]).unwrap_err();
    assert!(
        matches!(err, Error::IndexRank { ndim: 2, given: 1 }),
        "{err:?}"
    );
    let err = view.gather(&[[0, 0]], &mut out).unwrap_err();
    assert!(
        matches!(
            err,
            Error::OutputLength {
                expected: 1,
                actual: 3
            }
        ),
        "{err:?}"
    );
    assert_eq!(out, [7; 3]);
}

/// xorshift64: the same pseudo-random indices on every run.
fn random_indices(count: usize, below: usize) -> Vec<usize> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        })
        .collect()
}

#[test]
fn large_gathers_keep_the_callers_order() {
    // 48 MiB of u32 (more than the caches) and 200000 indices, in
    // both orders: every value must land at its own position.
    let rows = 3 << 20;
    let cols = 4;
    let memory: Vec<u32> = (0..(rows * cols) as u32).collect();
    for order in [Order::C, Order::Fortran] {
        let view =
            ArrayView::<u32>::new(memory.as_bytes(), &u32::dtype(), &[rows, cols], order).unwrap();
        let flat = random_indices(200_000, rows * cols);
        let indices: Vec<[usize; 2]> = flat.iter().map(|&i| [i / cols, i % cols]).collect();
        let mut out = vec![0; indices.len()];
        view.gather(&indices, &mut out).unwrap();
        for (&index, &value) in indices.iter().zip(&out) {
            assert_eq!(value, view[index], "{index:?}");
        }
    }
    // A 1-d view, plain usize indices, repeats included.
    let view =
        ArrayView::<u32>::new(memory.as_bytes(), &u32::dtype(), &[rows * cols], Order::C).unwrap();
    let mut indices = random_indices(100_000, rows * cols);
    indices.extend_from_slice(&indices.clone()[..1000]);
    let mut out = vec![0; indices.len()];
    view.gather(&indices, &mut out).unwrap();
    assert!(indices.iter().zip(&out).all(|(&i, &v)| v == i as u32));
    // A bad index far into a large batch still writes nothing.
    indices[90_000] = rows * cols;
    let mut untouched = vec![0; indices.len()];
    let err = view.gather(&indices, &mut untouched).unwrap_err();
    assert!(matches!(err, Error::IndexOutOfBounds { .. }), "{err:?}");
    assert!(untouched.iter().all(|&v| v == 0));
}

#[test]
fn gather_outer_copies_whole_rows_in_both_orders() {
    let memory = memory();
    let c = ArrayView::<i64>::new(memory.as_bytes(), &i64::dtype(), &[3, 4], Order::C).unwrap();
    let mut out = [0; 8];
    c.gather_outer(&[2, 0], &mut out).unwrap();
    assert_eq!(out, [8, 9, 10, 11, 0, 1, 2, 3]);
    // a = np.arange(12).reshape(4, 3).T; a[[2, 0]] == [[2, 5, 8, 11], [0, 3, 6, 9]]
    let f =
        ArrayView::<i64>::new(memory.as_bytes(), &i64::dtype(), &[3, 4], Order::Fortran).unwrap();
    f.gather_outer(&[2, 0], &mut out).unwrap();
    assert_eq!(out, [2, 5, 8, 11, 0, 3, 6, 9]);
    // Each row equals the outer slice numpy's a[i] gives.
    for i in 0..3 {
        let mut row = [0; 4];
        f.gather_outer(&[i], &mut row).unwrap();
        assert_eq!(row.to_vec(), f.slice_outer(i..i + 1).unwrap().to_vec());
    }

    let mut before = [7; 8];
    let err = c.gather_outer(&[0, 3], &mut before).unwrap_err();
    assert!(
        matches!(
            err,
            Error::IndexOutOfBounds {
                index: 3,
                axis: 0,
                len: 3
            }
        ),
        "{err:?}"
    );
    assert_eq!(before, [7; 8]);
    let err = c.gather_outer(&[0], &mut before).unwrap_err();
    assert!(
        matches!(
            err,
            Error::OutputLength {
                expected: 4,
                actual: 8
            }
        ),
        "{err:?}"
    );
    let scalar = ArrayView::<i64>::new(memory.as_bytes(), &i64::dtype(), &[], Order::C).unwrap();
    assert!(matches!(
        scalar.gather_outer(&[0], &mut before[..1]),
        Err(Error::IndexRank { ndim: 0, given: 1 })
    ));
}

#[test]
fn mutable_views_gather_too() {
    let mut memory = memory();
    let view =
        ArrayViewMut::<i64>::new(memory.as_mut_bytes(), &i64::dtype(), &[3, 4], Order::C).unwrap();
    let mut out = [0; 2];
    view.gather(&[[1, 1], [2, 2]], &mut out).unwrap();
    assert_eq!(out, [5, 10]);
    let mut row = [0; 4];
    view.gather_outer(&[1], &mut row).unwrap();
    assert_eq!(row, [4, 5, 6, 7]);
}

/// `gather_outer_prefetched` copies what `gather_outer` copies, for batches
/// shorter and longer than its distance (rows of 512 bytes: 8 rows), and
/// hands its hook each contiguous row's first element once, in order; a
/// strided (Fortran) array is copied without the hook; a bad index is
/// refused before anything is written or prefetched.
#[test]
fn gather_outer_prefetched_copies_like_gather_outer_and_prefetches_each_row_once_ahead() {
    let (rows, cols) = (1000, 64);
    let memory: Vec<u64> = (0..(rows * cols) as u64).collect();
    for count in [0, 1, 8, 9, 1000] {
        let outer: Vec<usize> = random_indices(count, rows);
        for order in [Order::C, Order::Fortran] {
            let view =
                ArrayView::<u64>::new(memory.as_bytes(), &u64::dtype(), &[rows, cols], order)
                    .unwrap();
            let mut expected = vec![0; count * cols];
            view.gather_outer(&outer, &mut expected).unwrap();
            let mut out = vec![0; count * cols];
            let mut prefetched = Vec::new();
            view.gather_outer_prefetched(&outer, &mut out, |first| prefetched.push(*first))
                .unwrap();
            assert_eq!(out, expected);
            let firsts: Vec<u64> = match order {
                Order::C => expected.chunks(cols).map(|row| row[0]).collect(),
                Order::Fortran => Vec::new(),
            };
            assert_eq!(
                prefetched, firsts,
                "each row's first element once, in order"
            );
        }
    }
    let view =
        ArrayView::<u64>::new(memory.as_bytes(), &u64::dtype(), &[rows, cols], Order::C).unwrap();
    let mut untouched = vec![7; 2 * cols];
    let mut prefetched = 0;
    let err = view
        .gather_outer_prefetched(&[0, rows], &mut untouched, |_| prefetched += 1)
        .unwrap_err();
    assert!(matches!(err, Error::IndexOutOfBounds { .. }), "{err:?}");
    assert_eq!(prefetched, 0);
    assert!(untouched.iter().all(|&v| v == 7));
}

/// `gather_prefetched` copies what `gather` copies, in every order and
/// index form, for batches shorter and longer than `PREFETCH_DISTANCE`,
/// and hands its hook each element once, in order; a bad index is refused
/// before anything is written or prefetched.
#[test]
fn gather_prefetched_copies_like_gather_and_prefetches_each_element_once_ahead() {
    use npy_core::index::PREFETCH_DISTANCE;
    let rows = 1000;
    let cols = 3;
    let memory: Vec<u32> = (0..(rows * cols) as u32).collect();
    // Batches shorter and longer than the distance.
    for count in [0, 1, PREFETCH_DISTANCE, PREFETCH_DISTANCE + 1, 1000] {
        let flat = random_indices(count, rows * cols);
        for order in [Order::C, Order::Fortran] {
            let view =
                ArrayView::<u32>::new(memory.as_bytes(), &u32::dtype(), &[rows, cols], order)
                    .unwrap();
            let indices: Vec<[usize; 2]> = flat.iter().map(|&i| [i / cols, i % cols]).collect();
            let mut expected = vec![0; count];
            view.gather(&indices, &mut expected).unwrap();
            let mut out = vec![0; count];
            let mut prefetched = Vec::new();
            view.gather_prefetched(&indices, &mut out, |element| prefetched.push(*element))
                .unwrap();
            assert_eq!(out, expected);
            assert_eq!(prefetched, expected, "each element once, in order");
        }
        // A 1-d view with plain indices.
        let view =
            ArrayView::<u32>::new(memory.as_bytes(), &u32::dtype(), &[rows * cols], Order::C)
                .unwrap();
        let mut out = vec![0; count];
        let mut prefetched = 0;
        view.gather_prefetched(&flat, &mut out, |_| prefetched += 1)
            .unwrap();
        assert!(flat.iter().zip(&out).all(|(&i, &v)| v == i as u32));
        assert_eq!(prefetched, count);
    }
    let view =
        ArrayView::<u32>::new(memory.as_bytes(), &u32::dtype(), &[rows * cols], Order::C).unwrap();
    // Errors before anything is written or prefetched.
    let mut untouched = vec![7; 3];
    let mut prefetched = 0;
    let err = view
        .gather_prefetched(&[0, rows * cols, 1], &mut untouched, |_| prefetched += 1)
        .unwrap_err();
    assert!(matches!(err, Error::IndexOutOfBounds { .. }), "{err:?}");
    assert_eq!((untouched, prefetched), (vec![7; 3], 0));
}

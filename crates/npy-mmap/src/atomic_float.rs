//! Floats that threads and processes can share: the bits of an `f32` or an
//! `f64` in the integer atomic of their size. The bottom of the stack with
//! `sys` (which lets live mappings view data as them): it knows nothing of
//! the crate. Re-exported as `npy_mmap::live::{AtomicF32, AtomicF64}`.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

macro_rules! atomic_float {
    ($(#[$doc:meta])* $name:ident, $float:ty, $bits:ty) => {
        $(#[$doc])*
        #[derive(Debug, Default)]
        #[repr(transparent)]
        pub struct $name($bits);

        impl $name {
            /// A new cell holding `value`.
            pub const fn new(value: $float) -> Self {
                $name(<$bits>::new(value.to_bits()))
            }

            /// Loads the value.
            pub fn load(&self, order: Ordering) -> $float {
                <$float>::from_bits(self.0.load(order))
            }

            /// Stores `value`.
            pub fn store(&self, value: $float, order: Ordering) {
                self.0.store(value.to_bits(), order);
            }

            /// Stores `value`, returning the previous value.
            pub fn swap(&self, value: $float, order: Ordering) -> $float {
                <$float>::from_bits(self.0.swap(value.to_bits(), order))
            }

            /// Stores `new` if the value is bit-for-bit `current`; returns
            /// the previous value, `Ok` if it was replaced.
            pub fn compare_exchange(
                &self,
                current: $float,
                new: $float,
                success: Ordering,
                failure: Ordering,
            ) -> std::result::Result<$float, $float> {
                self.0
                    .compare_exchange(current.to_bits(), new.to_bits(), success, failure)
                    .map(<$float>::from_bits)
                    .map_err(<$float>::from_bits)
            }

            /// Adds `value` (a compare-and-swap loop), returning the
            /// previous value.
            pub fn fetch_add(&self, value: $float, order: Ordering) -> $float {
                self.fetch_update(order, |old| old + value)
            }

            /// Replaces the value with `f(value)` (a compare-and-swap loop),
            /// returning the previous value.
            pub fn fetch_update(&self, order: Ordering, mut f: impl FnMut($float) -> $float) -> $float {
                let load = match order {
                    Ordering::Release => Ordering::Relaxed,
                    Ordering::AcqRel => Ordering::Acquire,
                    order => order,
                };
                let previous = self.0.fetch_update(order, load, |bits| {
                    Some(f(<$float>::from_bits(bits)).to_bits())
                });
                // The closure always returns `Some`: the update never gives up.
                <$float>::from_bits(previous.unwrap_or_else(|bits| bits))
            }
        }
    };
}

atomic_float!(
    /// An `f32` that can be shared between threads and processes: the bits
    /// in an [`AtomicU32`] (`#[repr(transparent)]`), the way live mappings
    /// view float32 data.
    AtomicF32,
    f32,
    AtomicU32
);
atomic_float!(
    /// An `f64` that can be shared between threads and processes: the bits
    /// in an [`AtomicU64`] (`#[repr(transparent)]`), the way live mappings
    /// view float64 data.
    AtomicF64,
    f64,
    AtomicU64
);

//! [`AlignedBytes`]: an owned byte buffer aligned for every element type,
//! the memory of every [`NpyArray`](crate::NpyArray).

use std::fmt;
use std::ops::{Deref, DerefMut};

use zerocopy::IntoBytes;

/// Bytes in a buffer aligned to 16 bytes (enough for every NumPy element
/// type), so typed views of native data never fail on alignment.
#[derive(Default)]
pub struct AlignedBytes {
    storage: Storage,
}

/// Where the bytes live: a byte vector the allocator happened to align
/// (kept to avoid copying what was read into it), 16-byte words, or memory
/// someone else allocated (see [`AlignedBytes::from_owner`]).
enum Storage {
    /// Invariant: the pointer is 16-byte aligned; the vector never grows.
    Bytes(Vec<u8>),
    Words {
        words: Vec<u128>,
        len: usize,
    },
    /// Invariant: the bytes start 16-byte aligned and never move.
    Owner(Box<dyn ByteOwner>),
}

/// Memory that [`AlignedBytes`] can own: anything that derefs to a byte
/// buffer which does not move while owned (an anonymous memory map, a
/// `Vec<u8>`, a boxed slice).
pub trait ByteOwner: AsRef<[u8]> + AsMut<[u8]> + Send + Sync + 'static {}

impl<T: AsRef<[u8]> + AsMut<[u8]> + Send + Sync + 'static> ByteOwner for T {}

impl Default for Storage {
    fn default() -> Self {
        Storage::Words {
            words: Vec::new(),
            len: 0,
        }
    }
}

impl AlignedBytes {
    /// An empty buffer.
    pub fn new() -> Self {
        AlignedBytes::default()
    }

    /// `len` zero bytes in an aligned buffer, to be filled in place.
    pub fn zeroed(len: usize) -> Self {
        AlignedBytes {
            storage: Storage::Words {
                words: vec![0u128; len.div_ceil(16)],
                len,
            },
        }
    }

    /// A copy of `bytes` in an aligned buffer.
    pub fn copy_from(bytes: &[u8]) -> Self {
        let mut words = vec![0u128; bytes.len().div_ceil(16)];
        words.as_mut_bytes()[..bytes.len()].copy_from_slice(bytes);
        AlignedBytes {
            storage: Storage::Words {
                words,
                len: bytes.len(),
            },
        }
    }

    /// Takes ownership of memory allocated elsewhere (for example an
    /// anonymous memory map with huge pages), without copying. Gives it back
    /// if its bytes do not start on a 16-byte boundary.
    pub fn from_owner<O: ByteOwner>(mut owner: O) -> std::result::Result<Self, O> {
        let start = owner.as_mut().as_ptr() as usize;
        if start.is_multiple_of(16) && start == owner.as_ref().as_ptr() as usize {
            Ok(AlignedBytes {
                storage: Storage::Owner(Box::new(owner)),
            })
        } else {
            Err(owner)
        }
    }

    /// Takes `bytes` as is when the allocator aligned it (the usual case
    /// for large buffers), otherwise copies it once into aligned storage.
    pub(crate) fn from_vec(bytes: Vec<u8>) -> Self {
        if !bytes.is_empty() && (bytes.as_ptr() as usize).is_multiple_of(16) {
            AlignedBytes {
                storage: Storage::Bytes(bytes),
            }
        } else {
            AlignedBytes::copy_from(&bytes)
        }
    }

    /// The bytes copied into a plain `Vec<u8>` (which has no alignment guarantee).
    pub fn to_vec(&self) -> Vec<u8> {
        self.deref().to_vec()
    }
}

impl Clone for AlignedBytes {
    fn clone(&self) -> Self {
        // A cloned Vec<u8> may land at an unaligned address: always copy to words.
        AlignedBytes::copy_from(self)
    }
}

impl PartialEq for AlignedBytes {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for AlignedBytes {}

impl Deref for AlignedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.storage {
            Storage::Bytes(bytes) => bytes,
            Storage::Words { words, len } => &words.as_bytes()[..*len],
            Storage::Owner(owner) => (**owner).as_ref(),
        }
    }
}

impl DerefMut for AlignedBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        match &mut self.storage {
            Storage::Bytes(bytes) => bytes,
            Storage::Words { words, len } => &mut words.as_mut_bytes()[..*len],
            Storage::Owner(owner) => (**owner).as_mut(),
        }
    }
}

impl fmt::Debug for AlignedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlignedBytes")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_bytes_are_aligned_and_sized() {
        let b = AlignedBytes::copy_from(&[1, 2, 3]);
        assert_eq!(&*b, &[1, 2, 3]);
        assert_eq!(b.as_ptr() as usize % 16, 0);
        assert_eq!(b.to_vec(), [1, 2, 3]);
        let c = b.clone();
        assert_eq!(c, b);
        assert_eq!(c.as_ptr() as usize % 16, 0);
    }

    #[test]
    fn aligned_bytes_from_any_vec_are_aligned() {
        // Slicing at every offset of a bigger vector gives unaligned starts too.
        let source: Vec<u8> = (0..64).collect();
        for start in 0..16 {
            let b = AlignedBytes::from_vec(source[start..start + 33].to_vec());
            assert_eq!(&*b, &source[start..start + 33]);
            assert_eq!(b.as_ptr() as usize % 16, 0);
            assert_eq!(b.clone().as_ptr() as usize % 16, 0);
        }
        assert!(AlignedBytes::from_vec(Vec::new()).is_empty());
    }
}

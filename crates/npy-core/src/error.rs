//! The one error type of the crate.
//!
//! Messages follow NumPy's wording where NumPy has one, so that a user who
//! searches for the text finds the same explanation for both libraries.

/// Everything that can go wrong while reading, checking or writing `.npy` data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An underlying read or write failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

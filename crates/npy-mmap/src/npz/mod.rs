//! `.npz` archives.

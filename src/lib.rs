//! Workspace root package: owns the top-level examples and tests. (The
//! README's snippets are compiled by `crates/npy-docs`, so that the tour
//! builds only what it runs.)

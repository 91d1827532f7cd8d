//! The project's Markdown, compiled.
//!
//! Every Markdown file with Rust snippets is included below as a module's
//! documentation, so `cargo test --workspace` compiles (and, unless marked
//! `no_run`, runs) each snippet against the current API. `tests/markdown.rs`
//! checks that no such file is left out, and that every API name the docs
//! mention (`NpzWriter::add`, `npy_mmap::load`, ...) is in `docs/api.txt`.
#![deny(missing_docs)]

/// `README.md`.
#[doc = include_str!("../../../README.md")]
pub mod readme {}

/// `docs/OBJECT_ARRAYS.md`.
#[doc = include_str!("../../../docs/OBJECT_ARRAYS.md")]
pub mod object_arrays {}

//! Workspace root package: owns the top-level examples and tests.
//!
//! The README is included here so that its Rust snippets are compiled by
//! `cargo test --workspace` and cannot drift from the API.
#![doc = include_str!("../README.md")]

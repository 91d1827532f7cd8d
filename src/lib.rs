//! Workspace root package: owns the top-level examples and tests.

//! Byte-order conversion.

//! Decoding one element of any dtype into a Rust value.
use crate::{DType, Result};

/// One decoded element.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `b1`.
    Bool(bool),
}

impl Value {
    /// Decodes one element.
    pub fn decode(dtype: &DType, bytes: &[u8]) -> Result<Value> {
        let _ = (dtype, bytes);
        todo!()
    }
}

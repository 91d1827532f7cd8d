//! placeholder
use proc_macro::TokenStream;
/// placeholder
#[proc_macro_derive(NpyRecord, attributes(npy))]
pub fn derive_npy_record(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}

//! `#[derive(NpyRecord)]`: a `#[repr(C)]` struct as a NumPy structured dtype.
//!
//! Use it through npy-core's `derive` feature (`npy_core::NpyRecord`); the
//! rules for the struct, the field attributes and examples are in
//! `npy_core::ext::derive`. The macro only reads the struct's syntax: field
//! names, array lengths and attributes. Offsets come from
//! `core::mem::offset_of!` and sizes from the field types, so the compiler,
//! not the macro, decides the layout, and all checking code lives in
//! npy-core.
//!
//! Mistakes the macro can see (no `#[repr(C)]`, generics, an enum, two
//! fields with one dtype name, unknown attributes) are compile errors that
//! say what to change; the field types and the absence of implicit padding
//! are checked by the compiler through the trait bounds.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::quote;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Expr, Fields, LitStr, Path, Result, Type};

/// Derives `npy_core::Element` and `npy_core::NpyRecord` for a `#[repr(C)]`
/// struct (see `npy_core::ext::derive`).
///
/// Field attributes: `#[npy(padding)]` (not a dtype field: bytes of a gap),
/// `#[npy(rename = "name")]`, `#[npy(subarray)]` (a `[u8; N]` field is a
/// `|u1` subarray rather than `S<N>`). Struct attribute:
/// `#[npy(crate = "path")]`, the path of the npy-core crate.
#[proc_macro_derive(NpyRecord, attributes(npy))]
pub fn derive_npy_record(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    expand(&input)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// What the `#[npy(...)]` attributes of one item say.
#[derive(Default)]
struct Attributes {
    padding: bool,
    subarray: bool,
    rename: Option<LitStr>,
    krate: Option<Path>,
}

fn attributes(attrs: &[syn::Attribute]) -> Result<Attributes> {
    let mut out = Attributes::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("npy")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("padding") {
                out.padding = true;
            } else if meta.path.is_ident("subarray") {
                out.subarray = true;
            } else if meta.path.is_ident("rename") {
                out.rename = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident("crate") {
                out.krate = Some(meta.value()?.parse::<LitStr>()?.parse()?);
            } else {
                return Err(meta.error(
                    "unknown npy attribute; expected `padding`, `rename = \"...\"`, `subarray` or `crate = \"...\"`",
                ));
            }
            Ok(())
        })?;
    }
    Ok(out)
}

fn is_repr_c(attrs: &[syn::Attribute]) -> Result<bool> {
    let mut found = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("repr")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("C") {
                found = true;
            } else if meta.input.peek(syn::token::Paren) {
                // align(N), packed(N): the layout stays C's; skip the argument.
                let content;
                syn::parenthesized!(content in meta.input);
                content.parse::<TokenStream2>()?;
            }
            Ok(())
        })?;
    }
    Ok(found)
}

/// Unwraps invisible groups and parentheses that macros leave around types.
fn strip(ty: &Type) -> &Type {
    match ty {
        Type::Group(group) => strip(&group.elem),
        Type::Paren(paren) => strip(&paren.elem),
        other => other,
    }
}

fn is_u8(ty: &Type) -> bool {
    matches!(strip(ty), Type::Path(p) if p.qself.is_none() && p.path.is_ident("u8"))
}

/// The element type and subarray dimensions of a field type: `[[f32; 3]; 2]`
/// is `f32` with `[2, 3]`. `[u8; N]` is an element itself (`S<N>`) unless
/// `subarray` is set.
fn element_and_shape(ty: &Type, subarray: bool) -> (&Type, Vec<&Expr>) {
    let mut ty = strip(ty);
    let mut shape = Vec::new();
    while let Type::Array(array) = ty {
        if is_u8(&array.elem) && !subarray {
            break;
        }
        shape.push(&array.len);
        ty = strip(&array.elem);
    }
    (ty, shape)
}

fn expand(input: &DeriveInput) -> Result<TokenStream2> {
    let name = &input.ident;
    let Data::Struct(data) = &input.data else {
        return Err(Error::new(
            Span::call_site(),
            "NpyRecord can only be derived for structs: a NumPy record is a C struct",
        ));
    };
    if !input.generics.params.is_empty() {
        return Err(Error::new(
            input.generics.span(),
            "NpyRecord does not support generic structs: a dtype has one fixed layout",
        ));
    }
    if !is_repr_c(&input.attrs)? {
        return Err(Error::new(
            name.span(),
            "NpyRecord needs #[repr(C)]: without it Rust may reorder fields and the layout would not match the dtype",
        ));
    }
    let container = attributes(&input.attrs)?;
    let krate = container
        .krate
        .map(|path| quote!(#path))
        .unwrap_or_else(|| quote!(::npy_core));

    let fields: Vec<&syn::Field> = match &data.fields {
        Fields::Named(named) => named.named.iter().collect(),
        Fields::Unnamed(unnamed) => unnamed.unnamed.iter().collect(),
        Fields::Unit => Vec::new(),
    };
    let mut layouts = Vec::new();
    let mut names: Vec<(String, Span)> = Vec::new();
    for (index, field) in fields.iter().enumerate() {
        let attrs = attributes(&field.attrs)?;
        if attrs.padding {
            if attrs.rename.is_some() || attrs.subarray {
                return Err(Error::new(
                    field.span(),
                    "a #[npy(padding)] field is not a dtype field: it takes no other npy attribute",
                ));
            }
            continue;
        }
        let member: syn::Member = match &field.ident {
            Some(ident) => ident.clone().into(),
            None => syn::Index::from(index).into(),
        };
        let (dtype_name, span) = match (&attrs.rename, &field.ident) {
            (Some(rename), _) => (rename.value(), rename.span()),
            // Raw identifiers (r#type) are spelled without the prefix.
            (None, Some(ident)) => (
                ident.to_string().trim_start_matches("r#").to_owned(),
                ident.span(),
            ),
            // NumPy's default names for unnamed fields.
            (None, None) => (format!("f{index}"), field.span()),
        };
        if names.iter().any(|(n, _)| *n == dtype_name) {
            return Err(Error::new(
                span,
                format!(
                    "two fields are named {dtype_name:?} in the dtype; NumPy needs unique field names"
                ),
            ));
        }
        names.push((dtype_name.clone(), span));
        let (element, shape) = element_and_shape(&field.ty, attrs.subarray);
        if attrs.subarray && shape.is_empty() {
            return Err(Error::new(
                field.ty.span(),
                "#[npy(subarray)] is for array fields such as [u8; N]",
            ));
        }
        layouts.push(quote! {
            #krate::ext::derive::FieldLayout::new::<#element>(
                #dtype_name,
                ::core::mem::offset_of!(Self, #member),
                &[#(#shape),*],
            )
        });
    }

    Ok(quote! {
        impl #krate::ext::derive::NpyRecord for #name {
            fn fields() -> ::std::vec::Vec<#krate::ext::derive::FieldLayout> {
                ::std::vec![#(#layouts),*]
            }
        }

        impl #krate::Element for #name {
            fn matches(dtype: &#krate::DType) -> bool {
                #krate::ext::derive::record_matches::<Self>(dtype)
            }
            fn dtype() -> #krate::DType {
                #krate::ext::derive::record_dtype::<Self>()
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(input: DeriveInput) -> String {
        expand(&input).expect_err("should be refused").to_string()
    }

    #[test]
    fn refuses_what_has_no_fixed_c_layout() {
        let message = error_of(syn::parse_quote! { struct A { a: u32 } });
        assert!(message.contains("needs #[repr(C)]"), "{message}");
        let message = error_of(syn::parse_quote! { #[repr(C)] struct G<T> { a: T } });
        assert!(message.contains("generic"), "{message}");
        let message = error_of(syn::parse_quote! { #[repr(C)] enum E { A } });
        assert!(message.contains("only be derived for structs"), "{message}");
        // repr(C) among other repr arguments counts.
        assert!(expand(&syn::parse_quote! { #[repr(align(8), C)] struct B { a: u32 } }).is_ok());
        assert!(expand(&syn::parse_quote! { #[repr(C, packed(2))] struct P { a: u32 } }).is_ok());
    }

    #[test]
    fn refuses_duplicate_names_and_bad_attributes() {
        let message = error_of(syn::parse_quote! {
            #[repr(C)] struct T { a: u32, #[npy(rename = "a")] b: u32 }
        });
        assert!(message.contains("two fields are named \"a\""), "{message}");
        let message = error_of(syn::parse_quote! { #[repr(C)] struct T { #[npy(pading)] a: u32 } });
        assert!(message.contains("unknown npy attribute"), "{message}");
        let message =
            error_of(syn::parse_quote! { #[repr(C)] struct T { #[npy(subarray)] a: u32 } });
        assert!(message.contains("for array fields"), "{message}");
        let message = error_of(syn::parse_quote! {
            #[repr(C)] struct T { #[npy(padding, rename = "x")] a: [u8; 2] }
        });
        assert!(
            message.contains("takes no other npy attribute"),
            "{message}"
        );
    }

    #[test]
    fn arrays_become_shapes_except_byte_strings() {
        let shape_of = |ty: Type, subarray: bool| {
            let (element, shape) = element_and_shape(&ty, subarray);
            let shape: Vec<String> = shape.iter().map(|e| quote!(#e).to_string()).collect();
            (quote!(#element).to_string(), shape)
        };
        assert_eq!(
            shape_of(syn::parse_quote!([[f32; 3]; 2]), false),
            ("f32".into(), vec!["2".into(), "3".into()])
        );
        assert_eq!(
            shape_of(syn::parse_quote!([u8; 5]), false),
            ("[u8 ; 5]".into(), vec![])
        );
        assert_eq!(
            shape_of(syn::parse_quote!([[u8; 5]; 4]), false),
            ("[u8 ; 5]".into(), vec!["4".into()])
        );
        assert_eq!(
            shape_of(syn::parse_quote!([u8; N]), true),
            ("u8".into(), vec!["N".into()])
        );
        assert_eq!(
            shape_of(syn::parse_quote!(Inner), false),
            ("Inner".into(), vec![])
        );
    }

    #[test]
    fn names_follow_numpy() {
        let tokens = expand(&syn::parse_quote! {
            #[repr(C)]
            #[npy(crate = "my::npy")]
            struct T(u8, #[npy(padding)] [u8; 1], #[npy(rename = "x y")] u16, i32);
        })
        .unwrap()
        .to_string();
        assert!(tokens.contains("\"f0\""), "{tokens}");
        assert!(tokens.contains("\"x y\""), "{tokens}");
        assert!(tokens.contains("\"f3\""), "{tokens}");
        assert!(
            !tokens.contains("\"f1\""),
            "padding is not a field: {tokens}"
        );
        assert!(
            tokens.contains("my :: npy :: ext :: derive :: NpyRecord"),
            "{tokens}"
        );
        let tokens = expand(&syn::parse_quote! { #[repr(C)] struct R { r#type: u8 } })
            .unwrap()
            .to_string();
        assert!(tokens.contains("\"type\""), "{tokens}");
    }
}

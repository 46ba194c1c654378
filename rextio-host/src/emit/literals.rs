//! Identifiers and literals from user source, and parsing what plugins supply: every name or
//! constant that reaches generated Rust goes through one of these.

use crate::codes;
use proc_macro2::{Ident, Literal as LitTok, Span as PmSpan, TokenStream};
use quote::{format_ident, quote};
use rextio_plugin_api::{Diagnostic, Literal};

/// The Rust identifier of a Python local: `l_<name>` for ASCII names; other names are encoded
/// injectively under `lu_` (`_` as `__`, any other character as `_x<hex>_`).
pub fn local_ident(name: &str) -> Ident {
    let ascii = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ascii {
        return format_ident!("l_{}", name);
    }
    let mut enc = String::from("lu_");
    for c in name.chars() {
        match c {
            '_' => enc.push_str("__"),
            c if c.is_ascii_alphanumeric() => enc.push(c),
            c => enc.push_str(&format!("_x{:x}_", u32::from(c))),
        }
    }
    Ident::new(&enc, PmSpan::call_site())
}

/// The Rust identifier of a Python parameter. PyO3 takes the Python keyword name from it, so it
/// must spell the Python name exactly: a raw identifier of an ASCII Python name. Names Rust cannot
/// spell that way (`self`, `crate`, `super`, `Self`, non-ASCII) are refused.
pub fn param_ident(name: &str) -> Result<Ident, String> {
    let ok = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !matches!(name, "_" | "self" | "Self" | "crate" | "super");
    if !ok {
        return Err(format!(
            "parameter `{name}` cannot be spelled as a Rust keyword-argument name"
        ));
    }
    syn::parse_str::<Ident>(&format!("r#{name}")).map_err(|e| format!("parameter `{name}`: {e}"))
}

/// A Rust string literal of arbitrary text.
pub fn str_lit(s: &str) -> LitTok {
    LitTok::string(s)
}

/// A Rust `i64` expression with the exact value.
pub fn int_lit(v: i64) -> TokenStream {
    if v == i64::MIN {
        quote!(i64::MIN)
    } else if v < 0 {
        let abs = LitTok::i64_suffixed(-v);
        quote!((-#abs))
    } else {
        let lit = LitTok::i64_suffixed(v);
        quote!(#lit)
    }
}

/// A Rust `f64` expression with the exact value (NaN, infinities and `-0.0` included).
pub fn float_lit(v: f64) -> TokenStream {
    if v.is_nan() {
        quote!(f64::NAN)
    } else if v.is_infinite() {
        if v > 0.0 {
            quote!(f64::INFINITY)
        } else {
            quote!(f64::NEG_INFINITY)
        }
    } else if v.is_sign_negative() {
        let abs = LitTok::f64_suffixed(-v);
        quote!((-#abs))
    } else {
        let lit = LitTok::f64_suffixed(v);
        quote!(#lit)
    }
}

pub(super) fn literal(l: &Literal) -> TokenStream {
    match l {
        Literal::Int(v) => int_lit(*v),
        Literal::Float(v) => float_lit(*v),
        Literal::Bool(b) => quote!(#b),
        Literal::Str(s) => {
            let s = str_lit(s);
            quote!(#s)
        }
        Literal::None => quote!(()),
    }
}

/// Code a plugin returned, parsed as `T` (`what` it is meant to be): from a plugin of API >=
/// 1.14 only tokens are accepted, from older ones text too.
pub(super) fn plugin_code<T: syn::parse::Parse>(
    reg: &crate::registry::Registered,
    what: &'static str,
    code: &rextio_plugin_api::syntax::Code,
) -> Result<T, String> {
    if reg.negotiated.token_lowering {
        code.require_tokens(what).map_err(|e| e.to_string())?;
    }
    code.parse::<T>(what).map_err(|e| e.to_string())
}

/// Parse a fragment a plugin (or a plugin's type record) supplied.
pub(super) fn parse<T: syn::parse::Parse>(what: &str, text: &str) -> Result<T, String> {
    syn::parse_str::<T>(text).map_err(|e| format!("{what} `{text}` is not valid Rust: {e}"))
}

pub(super) fn fail(message: impl Into<String>) -> Diagnostic {
    Diagnostic::error(codes::LOWERING_FAILED, message)
}

//! Rust syntax crossing the plugin boundary (plugin API 1.14).
//!
//! A plugin builds its lowerings with [`quote!`] from the operands' token streams, so the code
//! it hands the host is balanced by construction and is never re-read from text. With the
//! `check` feature, [`Code::expr`] parses a lowering as one Rust expression: the host calls it
//! on everything it splices, and a plugin's unit tests call it on every lowering they make, so
//! a malformed lowering fails the plugin's own tests instead of a user's build.
//!
//! Plugins declaring a minor below 14 return source text ([`Code::Text`]), which the host
//! lexes and parses as it always has; from 1.14 on, text is refused (see
//! [`Code::require_tokens`]).

pub use proc_macro2::{Ident, Literal, Span, TokenStream};
pub use quote::{format_ident, quote, ToTokens};

use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Rust code a plugin returns: tokens, or the source text of plugins older than API 1.14.
#[derive(Clone)]
pub enum Code {
    /// Tokens built with [`quote!`] (plugin API >= 1.14).
    Tokens(TokenStream),
    /// Source text (plugin API <= 1.13); the host lexes and parses it.
    Text(String),
}

/// Code that is not what its place needs.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{what} `{code}` is not valid Rust: {reason}")]
pub struct SyntaxError {
    /// What the code was meant to be (`expression`, `use item`).
    pub what: &'static str,
    /// The code, as text.
    pub code: String,
    /// The lexer's or parser's reason.
    pub reason: String,
}

impl Code {
    /// The code as tokens: text is lexed (which fails on unbalanced delimiters or stray
    /// characters).
    pub fn tokens(&self, what: &'static str) -> Result<TokenStream, SyntaxError> {
        match self {
            Code::Tokens(t) => Ok(t.clone()),
            Code::Text(s) => TokenStream::from_str(s).map_err(|e| SyntaxError {
                what,
                code: s.clone(),
                reason: e.to_string(),
            }),
        }
    }

    /// `Ok` for tokens; for text, the reason a plugin of API >= 1.14 may not return it.
    pub fn require_tokens(&self, what: &'static str) -> Result<(), SyntaxError> {
        match self {
            Code::Tokens(_) => Ok(()),
            Code::Text(s) => Err(SyntaxError {
                what,
                code: s.clone(),
                reason: "plugin API 1.14 lowerings are token streams (`quote!`), not text"
                    .to_owned(),
            }),
        }
    }

    /// The code parsed as one Rust expression.
    #[cfg(feature = "check")]
    pub fn expr(&self) -> Result<syn::Expr, SyntaxError> {
        self.parse("expression")
    }

    /// The code parsed as a `T` (what it is meant to be, for messages).
    #[cfg(feature = "check")]
    pub fn parse<T: syn::parse::Parse>(&self, what: &'static str) -> Result<T, SyntaxError> {
        let tokens = self.tokens(what)?;
        syn::parse2::<T>(tokens).map_err(|e| SyntaxError {
            what,
            code: self.to_string(),
            reason: e.to_string(),
        })
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Code::Tokens(t) => t.fmt(f),
            Code::Text(s) => f.write_str(s),
        }
    }
}

impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Code::Tokens(t) => write!(f, "Tokens({t})"),
            Code::Text(s) => write!(f, "Text({s:?})"),
        }
    }
}

/// Codes compare by their text: equal tokens print equally.
impl PartialEq for Code {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Eq for Code {}

impl From<TokenStream> for Code {
    fn from(t: TokenStream) -> Self {
        Code::Tokens(t)
    }
}

impl From<String> for Code {
    fn from(s: String) -> Self {
        Code::Text(s)
    }
}

impl From<&str> for Code {
    fn from(s: &str) -> Self {
        Code::Text(s.to_owned())
    }
}

/// An integer literal without a suffix (negative values as a negated literal).
pub fn int_literal(v: i64) -> TokenStream {
    let lit = Literal::u64_unsuffixed(v.unsigned_abs());
    if v < 0 {
        quote!((-#lit))
    } else {
        quote!(#lit)
    }
}

/// An `i64` literal (negative values as a negated literal).
pub fn i64_literal(v: i64) -> TokenStream {
    let lit = Literal::from_str(&format!("{}i64", v.unsigned_abs()))
        .unwrap_or_else(|_| Literal::u64_unsuffixed(v.unsigned_abs()));
    if v < 0 {
        quote!((-#lit))
    } else {
        quote!(#lit)
    }
}

/// A Rust `f64` literal that reads back bit for bit (non-finite values through their bits,
/// negative ones as a negated literal).
pub fn f64_literal(v: f64) -> TokenStream {
    if !v.is_finite() {
        let bits = Literal::u64_suffixed(v.to_bits());
        return quote!(f64::from_bits(#bits));
    }
    // `Debug` is the shortest text that reads back exactly, in exponent form when shorter.
    let lit = Literal::from_str(&format!("{:?}f64", v.abs()))
        .unwrap_or_else(|_| Literal::f64_suffixed(v.abs()));
    if v.is_sign_negative() {
        quote!((-#lit))
    } else {
        quote!(#lit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_text_print_alike_and_compare_by_text() {
        let t = Code::from(quote!(a + b));
        assert_eq!(t, Code::from("a + b"));
        assert!(t.require_tokens("expression").is_ok());
        let e = Code::from("x").require_tokens("expression").unwrap_err();
        assert!(e.to_string().contains("token streams"), "{e}");
    }

    #[test]
    fn text_that_does_not_lex_is_a_syntax_error() {
        let e = Code::from("f(a").tokens("expression").unwrap_err();
        assert_eq!(e.what, "expression");
        assert_eq!(e.code, "f(a");
    }

    #[test]
    fn f64_literals_read_back_bit_for_bit() {
        for v in [
            0.5,
            -0.0,
            -2.5,
            1e-300,
            f64::MAX,
            f64::MIN_POSITIVE,
            0.1 + 0.2,
        ] {
            let text = f64_literal(v).to_string().replace(' ', "");
            let digits = text.trim_start_matches("(-").trim_end_matches(')');
            let back: f64 = digits.trim_end_matches("f64").parse().unwrap();
            let back = if text.starts_with("(-") { -back } else { back };
            assert_eq!(back.to_bits(), v.to_bits(), "{text}");
        }
        for v in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
            let text = f64_literal(v).to_string();
            assert!(text.starts_with("f64 :: from_bits"), "{text}");
            assert!(text.contains(&format!("{}u64", v.to_bits())), "{text}");
        }
    }

    #[test]
    fn integer_literals_keep_their_sign() {
        assert_eq!(int_literal(3).to_string(), "3");
        assert_eq!(int_literal(-3).to_string(), "(- 3)");
        assert_eq!(i64_literal(7).to_string(), "7i64");
        assert_eq!(
            i64_literal(i64::MIN).to_string(),
            "(- 9223372036854775808i64)"
        );
    }

    #[cfg(feature = "check")]
    #[test]
    fn expressions_parse_and_malformed_ones_are_refused() {
        assert!(Code::from(quote!(::rt::f(&(x), 2i64)?)).expr().is_ok());
        assert!(Code::from("::rt::f(&(x), 2i64)?").expr().is_ok());
        // Balanced, so `quote!` builds it; not an expression, so the check refuses it.
        let e = Code::from(quote!(::rt::f(x)+)).expr().unwrap_err();
        assert_eq!(e.what, "expression");
        let e = Code::from(quote!(a b)).expr().unwrap_err();
        assert!(e.to_string().contains("is not valid Rust"), "{e}");
        let item = |c: Code| c.parse::<syn::ItemUse>("use item");
        assert!(item(Code::from(quote!(
            use ::rt::ops;
        )))
        .is_ok());
        assert!(item(Code::from(quote!(::rt::ops))).is_err());
    }
}

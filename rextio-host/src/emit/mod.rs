//! The emitter: the one place generated code is made: Rust and the generated crate's manifest
//! here, the Python binding blocks in [`python`].
//!
//! Rust is built as syntax (`quote` token streams), never pasted as text: every plugin
//! expression, type, boundary function and guard is parsed with `syn` before it is used, so a
//! plugin answer that is not Rust is a lowering error for its function, not a broken crate. Every
//! identifier or literal that comes from user source goes through [`local_ident`],
//! [`param_ident`], [`str_lit`], [`int_lit`] or [`float_lit`]. Items are pretty-printed with
//! `prettyplease`; each function's text is rendered on its own so that compiler diagnostics can
//! be mapped back to the function they fall in ([`GeneratedCrate::function_at_line`]).
//!
//! One file per concern: `literals` (identifiers and literals from user source, parsing plugin
//! fragments), `body` (the lowering visitor over statements and expressions), `region` (fused
//! regions), `method` (module-class state reads), `function` (one function: body, boundary,
//! guards, runner), `assemble` (the crate: placed functions, module init, `lib.rs`), `manifest`
//! (`Cargo.toml`, pins, names), [`python`] (the binding blocks). The names below are the shared
//! vocabulary of those files.

use crate::ir::{CmpKind, Expr, ExprKind, FnIr, ScalarOp, Stmt};
use crate::registry::{Registered, Registry};
use proc_macro2::{Ident, Span as PmSpan, TokenStream};
use quote::{format_ident, quote};
use rextio_plugin_api::{
    syntax::Code, CrateDependency, CrateSource, DeviceAuthorization, Diagnostic, FunctionScope,
    LoweredOperand, LoweringContext, RegionContext, ValueType,
};
use std::collections::{BTreeMap, BTreeSet};

mod assemble;
mod body;
mod function;
mod literals;
mod manifest;
mod method;
pub mod python;
mod region;

pub use assemble::{generate_crate, init_step, GeneratedCrate, InitStep, Placed};
use body::Lx;
use function::render;
pub use function::{lower_function, LoweredFunction, MethodBinding};
use literals::{fail, literal, parse, plugin_code};
pub use literals::{float_lit, int_lit, local_ident, param_ident, str_lit};
use manifest::{cargo_toml, WORKSPACE_LOCK};
pub use manifest::{extension_name, pyo3_pin, sanitize};

/// Failure to lower: a diagnostic (RXT014) for the function.
type LResult<T> = Result<T, Diagnostic>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_identifiers_are_injective_and_valid() {
        let names = ["x", "x_1", "_", "__", "ß", "a_x64_", "aé", "a_xe9_", "Ω_Ω"];
        let ids: Vec<String> = names.iter().map(|n| local_ident(n).to_string()).collect();
        let set: BTreeSet<&String> = ids.iter().collect();
        assert_eq!(set.len(), names.len(), "{ids:?}");
        for id in &ids {
            assert!(syn::parse_str::<Ident>(id).is_ok(), "{id}");
        }
        assert_eq!(local_ident("hidden").to_string(), "l_hidden");
    }

    #[test]
    fn parameters_keep_their_python_spelling_or_are_refused() {
        assert_eq!(param_ident("x").unwrap().to_string(), "r#x");
        assert_eq!(param_ident("match").unwrap().to_string(), "r#match");
        for bad in ["self", "Self", "crate", "super", "_", "ß", ""] {
            assert!(param_ident(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn literals_keep_exact_values() {
        assert_eq!(float_lit(-0.0).to_string(), "(- 0f64)");
        assert_eq!(float_lit(f64::NAN).to_string(), "f64 :: NAN");
        assert_eq!(int_lit(i64::MIN).to_string(), "i64 :: MIN");
        assert_eq!(int_lit(-3).to_string(), "(- 3i64)");
        let s = str_lit("a\"b\\c\n").to_string();
        assert_eq!(
            syn::parse_str::<syn::LitStr>(&s).unwrap().value(),
            "a\"b\\c\n"
        );
    }

    #[test]
    fn cargo_manifest_is_valid_toml_with_pinned_pyo3() {
        let text = cargo_toml("p", "_p", &[]);
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        let pyo3 = &parsed["dependencies"]["pyo3"]["version"];
        assert!(pyo3.as_str().unwrap().starts_with('='), "{pyo3}");
        assert_eq!(pyo3.as_str().unwrap(), pyo3_pin());
        assert_eq!(parsed["lib"]["crate-type"][0].as_str(), Some("cdylib"));
    }
}

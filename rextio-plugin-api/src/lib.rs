//! # rextio-plugin-api
//!
//! The contract between the Rextio host and its backends. A backend is a crate that implements
//! [`Plugin`]: it declares the Python annotations it owns ([`PluginType`]), the rules it can
//! lower ([`RuleRecord`]), the diagnostic codes it may emit ([`CodeDoc`]), and answers two
//! questions the host asks for every call, method call and binary operator on typed values:
//!
//! 1. **claim** — given a [`ClaimSite`] (target, operand types, static literals; never a file
//!    position), answer [`ClaimOutcome::Claimed`] with a rule id and result type,
//!    [`ClaimOutcome::Rejected`] with an `RXTP-<SEG>-NNN` diagnostic when the form is recognised
//!    but its shape is wrong, or [`ClaimOutcome::NotCovered`];
//! 2. **lower** — given a [`ClaimedSite`] and a [`LoweringContext`] holding the operands' Rust
//!    expressions as tokens, return one Rust expression ([`LoweredExpr`]) built with
//!    [`syntax::quote!`] that calls the plugin's runtime crate. Lowering re-validates the claim
//!    and returns a [`LowerError`] on drift.
//!
//! ## Writing a third-party backend
//!
//! ```
//! use rextio_plugin_api::*;
//! use rextio_plugin_api::syntax::quote;
//!
//! struct Doubler { rules: Vec<RuleRecord>, types: Vec<PluginType> }
//!
//! impl Plugin for Doubler {
//!     fn id(&self) -> &str { "doubler" }
//!     fn api_version(&self) -> &str { "1.19.0" }
//!     fn coverage(&self) -> Coverage {
//!         Coverage { packages: vec!["doubler".into()], ..Coverage::default() }
//!     }
//!     fn rules(&self) -> &[RuleRecord] { &self.rules }
//!     fn diagnostic_codes(&self) -> &[CodeDoc] { &[] }
//!     fn type_vocabulary(&self) -> &[PluginType] { &self.types }
//!     fn claim(&self, site: &ClaimSite) -> ClaimOutcome {
//!         if site.kind == SiteKind::Call && site.target == "doubler.double"
//!             && site.args.len() == 1 && site.args[0].ty == Some(ValueType::Int)
//!         {
//!             return ClaimOutcome::Claimed { rule_id: "doubler/double-int".into(), result_type: ValueType::Int };
//!         }
//!         ClaimOutcome::NotCovered
//!     }
//!     fn lower(&self, site: &ClaimedSite, cx: &mut LoweringContext) -> Result<LoweredExpr, LowerError> {
//!         let [x] = cx.args.as_slice() else {
//!             return Err(LowerError::new(&site.rule_id, "expected one operand"));
//!         };
//!         let x = &x.expr;
//!         Ok(LoweredExpr::tokens(quote!(::rextio_plugin_api::runtime::int_mul(#x, 2)?)))
//!     }
//!     fn runtime_crate(&self) -> Option<CrateDependency> { None }
//! }
//!
//! assert!(validate_plugin(&Doubler { rules: vec![], types: vec![] }).is_ok());
//! ```
//!
//! Register it with the host's registry builder
//! (`rextio_host::Registry::builder().with_default_plugins().plugin(Doubler{..}).build()`).
//! Registration negotiates [`Plugin::api_version`] against [`API_VERSION`] (same major, minor
//! not newer), and validates the declarations with [`validate_plugin`]: rule ids and type keys
//! inside `<id>/`, codes of the form `RXTP-<SEG>-NNN` documented once each, runtime crates pinned
//! exactly. Optional hooks ([`Plugin::function_scope_guard`], [`Plugin::device_requirements`])
//! are only called for plugins whose declared minor version introduced them. A plugin declaring
//! a minor below 14 may return its lowerings as text (`LoweredExpr { expr: text.into(), .. }`),
//! which the host parses; from 1.14 on lowerings are tokens, and a plugin's unit tests can
//! parse each one with [`syntax::Code::expr`] (feature `check`).
//!
//! Generated code evaluates a lowered expression inside a function returning `PyResult<_>`, so
//! expressions may use `?`. Runtime functions must map every backend error to a Python
//! exception: nothing reachable from user input may panic.

pub mod device;
pub mod diagnostic;
#[cfg(all(feature = "dl", unix))]
pub mod dl;
pub mod kit;
pub mod lowering;
pub mod modules;
pub mod plugin;
pub mod routes;
pub mod rules;
#[cfg(feature = "runtime")]
pub mod runtime;
pub mod site;
pub mod syntax;
pub mod types;
pub mod validate;
pub mod version;

pub use device::*;
pub use diagnostic::*;
pub use lowering::*;
pub use modules::*;
pub use plugin::*;
pub use rules::*;
pub use semver::Version;
pub use site::*;
pub use types::*;
pub use validate::*;
pub use version::*;

/// Absolute path of this crate's sources (development builds only: generated crates use the
/// embedded copy, see [`embedded`]).
pub const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// This crate's own sources with a standalone manifest, embedded at build time, so the host can
/// write them under its cache directory for generated crates (present in builds from the
/// workspace; absent in such a standalone copy itself).
#[cfg(rextio_embedded_sources)]
pub mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_sources.rs"));
}

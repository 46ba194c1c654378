//! Lowering: turning a claimed site into one Rust expression.

use crate::device::DeviceAuthorization;
use crate::syntax::{Code, TokenStream};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// One operand as lowered Rust code.
#[derive(Debug, Clone)]
pub struct LoweredOperand {
    /// A Rust expression evaluating to the operand (of the operand type's Rust type, or a
    /// scalar: `i64`, `f64`, `bool`), as tokens (`#expr` inside `quote!`). Plugins of API
    /// <= 1.13 read it as text through its `Display`.
    pub expr: TokenStream,
    /// True when the value is an owned temporary nothing else can observe (result of an inner
    /// claimed op). The plugin may then consume it or write it in place. Values that came from
    /// Python are never marked owned.
    pub owned_temp: bool,
}

impl LoweredOperand {
    /// An operand from its tokens.
    pub fn new(expr: TokenStream, owned_temp: bool) -> Self {
        Self { expr, owned_temp }
    }
}

/// Everything a plugin needs to lower one claimed site.
#[derive(Debug, Clone)]
pub struct LoweringContext {
    /// The receiver of a method call.
    pub receiver: Option<LoweredOperand>,
    /// Positional operands, in site order.
    pub args: Vec<LoweredOperand>,
    /// Keyword operands, in site order (name, operand).
    pub keywords: Vec<(String, LoweredOperand)>,
    /// The target backend (`cpu`, or a device capability).
    pub target: String,
    /// Whether a function-scope guard of this plugin is active around the whole body.
    pub function_scope_guard_active: bool,
    /// The device provider's authorization, if the project has one.
    pub device_authorization: Option<DeviceAuthorization>,
    fresh: u32,
}

impl LoweringContext {
    /// `Ok` only when `provider` authorised exactly `capability` and the target is that
    /// capability: what a device rule needs before it lowers. Otherwise the error names what
    /// `lane` needs and what the context holds.
    pub fn require_authorisation(
        &self,
        rule: &str,
        provider: &str,
        capability: &str,
        lane: &str,
    ) -> Result<(), LowerError> {
        let exact = self
            .device_authorization
            .as_ref()
            .is_some_and(|a| a.provider == provider && a.capability == capability)
            && self.target == capability;
        if exact {
            return Ok(());
        }
        let held = match &self.device_authorization {
            Some(a) => format!("`{}` from `{}`", a.capability, a.provider),
            None => "none".to_owned(),
        };
        Err(LowerError::new(
            rule,
            format!(
                "the {lane} needs the `{capability}` authorisation of `{provider}` (target `{}`, authorisation {held})",
                self.target
            ),
        ))
    }

    /// A context for the given operands.
    pub fn new(
        receiver: Option<LoweredOperand>,
        args: Vec<LoweredOperand>,
        keywords: Vec<(String, LoweredOperand)>,
    ) -> Self {
        Self {
            receiver,
            args,
            keywords,
            target: "cpu".to_owned(),
            function_scope_guard_active: false,
            device_authorization: None,
            fresh: 0,
        }
    }

    /// A fresh identifier with the given stem, unique within this site.
    pub fn fresh_name(&mut self, stem: &str) -> String {
        self.fresh += 1;
        format!("__rx_{stem}_{}", self.fresh)
    }

    /// Look up a keyword operand.
    pub fn keyword(&self, name: &str) -> Option<&LoweredOperand> {
        self.keywords
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, o)| o)
    }
}

/// The Rust code for one claimed site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoweredExpr {
    /// One Rust expression (no trailing `;`). It may use `?`: it is evaluated inside a function
    /// returning `PyResult<_>`. Tokens from API 1.14 on; text before.
    pub expr: Code,
    /// `use` items it needs.
    pub uses: Vec<Code>,
}

impl LoweredExpr {
    /// One expression built with `quote!`, needing no `use` items.
    pub fn tokens(expr: TokenStream) -> Self {
        Self {
            expr: Code::Tokens(expr),
            uses: Vec::new(),
        }
    }
}

/// A claim that no longer holds at lowering time, or an internal inconsistency.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("cannot lower `{rule_id}`: {reason}")]
pub struct LowerError {
    /// The rule being lowered.
    pub rule_id: String,
    /// What drifted.
    pub reason: String,
}

impl LowerError {
    /// Build a lowering error.
    pub fn new(rule_id: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            rule_id: rule_id.into(),
            reason: reason.into(),
        }
    }
}

/// What the host tells a plugin about a native function when asking for a guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionScope {
    /// The function's qualified name.
    pub qualname: String,
    /// The rule ids of this plugin used in the function.
    pub rules: Vec<String>,
}

/// A guard the generated function holds for its whole body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeGuard {
    /// A Rust expression whose value is held (RAII) from after input conversion to before output
    /// conversion; dropping it restores the caller's state on every exit. Tokens from API 1.14
    /// on, as lowerings are.
    pub enter_expr: Code,
}

/// How a native function's body may run without the GIL (see `Plugin::detached_body`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetachedBody {
    /// Path of a function `fn<R>(Python<'_>, impl FnOnce() -> R) -> R` in the plugin's runtime
    /// crate. The generated wrapper calls it with the body (a closure owning the converted
    /// arguments, run on the calling thread inside the function-scope guards); the runtime may
    /// release the GIL while the closure runs and must hold it again when the runner returns or
    /// unwinds. Tokens from API 1.14 on, as lowerings are.
    pub runner: Code,
}

/// Where an operand of a region node comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RegionRef {
    /// A value computed before the region ([`Region::inputs`] index).
    Input(usize),
    /// The result of an earlier node of the region ([`Region::nodes`] index).
    Node(usize),
}

/// A value flowing into a region from outside it.
#[derive(Debug, Clone)]
pub struct RegionInput {
    /// How to read it: a Rust place or pure expression that may be evaluated or borrowed any
    /// number of times. Plugin-typed inputs are locals; the fused code borrows them and never
    /// consumes them (the per-site fallback still needs them). When `owned_temp` is true, nothing
    /// outside the region observes the value after it, so the fused code may write its storage
    /// in place, but only on the path where it returns `Some`.
    pub operand: LoweredOperand,
    /// Its static type.
    pub ty: crate::ValueType,
}

/// One claimed site of a region, with operands referring to inputs or earlier nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct RegionNode {
    /// The claim (as `lower` would receive it).
    pub claimed: crate::ClaimedSite,
    /// Receiver operand.
    pub receiver: Option<RegionRef>,
    /// Positional operands.
    pub args: Vec<RegionRef>,
    /// Keyword operands (name, operand).
    pub keywords: Vec<(String, RegionRef)>,
}

/// A straight-line dataflow region: consecutive statements of one function whose values are
/// all claims of one plugin, with no control flow between them (plugin API 1.9).
///
/// Nodes are in evaluation order; every node's result has a plugin type whose rank is static.
/// Only the nodes listed in `outputs` are observed after the region (assigned to a local that
/// is read later, carried around a loop, or returned); the others are internal temporaries.
#[derive(Debug, Clone)]
pub struct Region {
    /// The function's qualified name (for messages).
    pub qualname: String,
    /// Values from outside, each listed once.
    pub inputs: Vec<RegionInput>,
    /// The claims, in evaluation order.
    pub nodes: Vec<RegionNode>,
    /// The nodes whose values leave the region, in the order the lowered tuple yields them.
    pub outputs: Vec<usize>,
}

/// Target facts for lowering a region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionContext {
    /// The target backend (`cpu`, or a device capability).
    pub target: String,
    /// The device provider's authorization, if the project has one.
    pub device_authorization: Option<DeviceAuthorization>,
}

/// A fused lowering of a whole region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoweredRegion {
    /// One Rust expression of type `Option<(T0, T1, ...)>` (the output nodes' Rust types, in
    /// [`Region::outputs`] order; a one-element tuple for one output). It may use `?` for
    /// errors that the per-site path would raise identically. `None` means the fused path does
    /// not apply to these inputs at run time (layout, size, shape): the host then runs the
    /// region's per-site lowering, so `None` must be decided before anything is written.
    /// Tokens from API 1.14 on; text before.
    pub expr: Code,
    /// `use` items it needs.
    pub uses: Vec<Code>,
}

impl LoweredRegion {
    /// One expression built with `quote!`, needing no `use` items.
    pub fn tokens(expr: TokenStream) -> Self {
        Self {
            expr: Code::Tokens(expr),
            uses: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorisation_must_match_provider_capability_and_target() {
        let mut cx = LoweringContext::new(None, vec![], vec![]);
        let ask = |cx: &LoweringContext| cx.require_authorisation("p/r", "prov", "cap-x", "X lane");
        let err = ask(&cx).unwrap_err();
        assert_eq!(err.rule_id, "p/r");
        assert_eq!(
            err.reason,
            "the X lane needs the `cap-x` authorisation of `prov` (target `cpu`, authorisation none)"
        );
        cx.device_authorization = Some(DeviceAuthorization {
            provider: "prov".into(),
            capability: "cap-x".into(),
        });
        assert!(ask(&cx).is_err(), "the target is still cpu");
        cx.target = "cap-x".into();
        assert!(ask(&cx).is_ok());
        cx.device_authorization = Some(DeviceAuthorization {
            provider: "other".into(),
            capability: "cap-x".into(),
        });
        let err = ask(&cx).unwrap_err();
        assert!(
            err.reason.ends_with("authorisation `cap-x` from `other`)"),
            "{err}"
        );
    }
}

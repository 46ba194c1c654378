//! Lowering: turning a claimed site into one Rust expression.

use crate::device::DeviceAuthorization;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// One operand as lowered Rust code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoweredOperand {
    /// A Rust expression evaluating to the operand (of the operand type's Rust type, or a
    /// scalar: `i64`, `f64`, `bool`).
    pub expr: String,
    /// True when the value is an owned temporary nothing else can observe (result of an inner
    /// claimed op). The plugin may then consume it or write it in place. Values that came from
    /// Python are never marked owned.
    pub owned_temp: bool,
}

/// Everything a plugin needs to lower one claimed site.
#[derive(Debug, Clone, PartialEq, Eq)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoweredExpr {
    /// One Rust expression (no trailing `;`). It may use `?`: it is evaluated inside a function
    /// returning `PyResult<_>`.
    pub expr: String,
    /// `use` lines it needs.
    pub uses: Vec<String>,
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeGuard {
    /// A Rust expression whose value is held (RAII) from after input conversion to before output
    /// conversion; dropping it restores the caller's state on every exit.
    pub enter_expr: String,
}

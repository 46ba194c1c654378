//! Rule records: the documented surface of a plugin.

use serde::{Deserialize, Serialize};

/// What kind of site a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleScope {
    /// A function call.
    Call,
    /// A method call.
    Method,
    /// A binary operator.
    BinOp,
    /// A type (boundary, vocabulary).
    Type,
}

/// Whether a rule lowers natively or documents a fallback lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleOutcome {
    /// Sites matching the rule run natively.
    Native,
    /// Sites matching the rule stay on Python with a diagnostic.
    Fallback,
}

/// How settled a rule is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stability {
    /// Covered by certification.
    Stable,
    /// May change.
    Experimental,
}

/// One documented rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleRecord {
    /// `<plugin-id>/<name>`.
    pub id: String,
    /// Site kind.
    pub scope: RuleScope,
    /// The Python form, e.g. `torch.nn.functional.linear(x, w, b)`.
    pub pattern: String,
    /// The static constraint, e.g. `x, w rank 2; b rank 1; no keywords`.
    pub constraint: String,
    /// Native or fallback.
    pub outcome: RuleOutcome,
    /// The diagnostic code for fallback rules.
    pub diagnostic_code: Option<String>,
    /// What to do when the rule does not apply.
    pub guidance: String,
    /// Stability.
    pub stability: Stability,
    /// Set only from certification evidence of this host.
    pub verified: bool,
}

impl RuleRecord {
    /// A native rule: stable, no code or guidance, not verified (certification sets that).
    pub fn native(
        id: impl Into<String>,
        scope: RuleScope,
        pattern: &str,
        constraint: &str,
    ) -> Self {
        Self {
            id: id.into(),
            scope,
            pattern: pattern.to_owned(),
            constraint: constraint.to_owned(),
            outcome: RuleOutcome::Native,
            diagnostic_code: None,
            guidance: String::new(),
            stability: Stability::Stable,
            verified: false,
        }
    }

    /// A fallback rule: sites it documents stay on Python with `code`; experimental.
    pub fn fallback(
        id: impl Into<String>,
        scope: RuleScope,
        pattern: &str,
        constraint: &str,
        code: &str,
        guidance: &str,
    ) -> Self {
        Self {
            outcome: RuleOutcome::Fallback,
            stability: Stability::Experimental,
            ..Self::native(id, scope, pattern, constraint).with_code(code, guidance)
        }
    }

    /// The same rule naming `code` and `guidance` (what to do where it does not apply).
    pub fn with_code(self, code: &str, guidance: &str) -> Self {
        Self {
            diagnostic_code: Some(code.to_owned()),
            guidance: guidance.to_owned(),
            ..self
        }
    }

    /// The same rule with another stability.
    pub fn with_stability(self, stability: Stability) -> Self {
        Self { stability, ..self }
    }
}

//! Claim rules, one module per family. Every claim function is a series of early returns.

mod activations;
mod binops;
mod linear;
mod reductions;

use crate::codes;
use crate::types::{f32_cpu_key, f32_cpu_rank};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Diagnostic, Operand, SiteKind, ValueType};

/// `torch.nn.functional.linear`.
pub const T_LINEAR: &str = "torch.nn.functional.linear";
/// `torch.matmul`.
pub const T_MATMUL: &str = "torch.matmul";

/// Decide a site.
pub fn claim(site: &ClaimSite) -> ClaimOutcome {
    match site.kind {
        SiteKind::Call => match site.target.as_str() {
            T_LINEAR => linear::claim(site),
            T_MATMUL => binops::claim_matmul_call(site),
            _ => ClaimOutcome::NotCovered,
        },
        SiteKind::MethodCall => {
            let Some(recv) = &site.receiver else {
                return ClaimOutcome::NotCovered;
            };
            if !is_ours(recv) {
                return ClaimOutcome::NotCovered;
            }
            match site.target.as_str() {
                "relu" | "sigmoid" | "tanh" => activations::claim(site),
                "mean" | "sum" => reductions::claim(site),
                "matmul" => binops::claim_matmul_method(site),
                other => reject(
                    codes::UNSUPPORTED_SURFACE,
                    format!("tensor method `.{other}()` is not in the native rextio-torch surface"),
                    "keep this function in Python, or use relu/sigmoid/tanh/matmul/mean/sum",
                ),
            }
        }
        SiteKind::BinOp => {
            if !site.args.iter().any(is_ours) {
                return ClaimOutcome::NotCovered;
            }
            match site.target.as_str() {
                "@" => binops::claim_matmul_binop(site),
                "+" => binops::claim_add(site),
                op => reject(
                    codes::UNSUPPORTED_SURFACE,
                    format!("tensor operator `{op}` is not in the native rextio-torch surface (only `+` and `@` are)"),
                    "keep this function in Python",
                ),
            }
        }
        SiteKind::Compare => {
            if !site.args.iter().any(is_ours) {
                return ClaimOutcome::NotCovered;
            }
            reject(
                codes::UNSUPPORTED_SURFACE,
                "tensor comparisons are not lowered (tensor-data-dependent control flow stays Python)",
                "keep this function in Python",
            )
        }
    }
}

/// Whether an operand is one of this plugin's tensor types.
pub(crate) fn is_ours(op: &Operand) -> bool {
    op.key().is_some_and(|k| k.namespace() == "rextio-torch")
}

/// The float32 CPU rank of an operand, if it is a non-literal tensor of ours.
pub(crate) fn rank(op: &Operand) -> Option<u8> {
    if op.literal.is_some() {
        return None;
    }
    op.key().and_then(f32_cpu_rank)
}

/// Describe an operand type for messages.
pub(crate) fn describe(op: &Operand) -> String {
    match &op.ty {
        None => "an unresolved value".to_owned(),
        Some(ValueType::Plugin(k)) => match f32_cpu_rank(k) {
            Some(r) => format!("rank-{r}"),
            None => k.to_string(),
        },
        Some(t) => t.to_string(),
    }
}

pub(crate) fn reject(code: &str, message: impl Into<String>, suggestion: &str) -> ClaimOutcome {
    ClaimOutcome::Rejected(Diagnostic::error(code, message).with_suggestion(suggestion))
}

pub(crate) fn claimed(rule_id: impl Into<String>, rank: u8) -> ClaimOutcome {
    match f32_cpu_key(rank) {
        Some(k) => ClaimOutcome::Claimed {
            rule_id: rule_id.into(),
            result_type: ValueType::Plugin(k),
        },
        None => ClaimOutcome::NotCovered,
    }
}

#[cfg(test)]
mod tests;

//! Rule records: the documented surface.

use crate::codes;
use rextio_plugin_api::{RuleOutcome, RuleRecord, RuleScope, Stability};

/// `F.linear(x, w, b)`.
pub const LINEAR: &str = "rextio-torch/functional-linear-f32-cpu-2d";
/// `a @ b`.
pub const MATMUL_BINOP: &str = "rextio-torch/tensor-matmul-f32-cpu-2d";
/// `torch.matmul(a, b)` / `a.matmul(b)`.
pub const MATMUL_CALL: &str = "rextio-torch/tensor-matmul-call-f32-cpu-2d";
/// `a + b`, same ranks.
pub const ADD_SAME_RANK: &str = "rextio-torch/tensor-add-f32-cpu-same-rank";
/// `a + b`, rank 2 and rank 1.
pub const ADD_BROADCAST: &str = "rextio-torch/tensor-add-f32-cpu-2d-1d-broadcast";
/// `.mean(dim=1, keepdim=False)`.
pub const MEAN_DIM1: &str = "rextio-torch/tensor-mean-dim1-f32-cpu-2d";
/// `.sum(dim=1, keepdim=False)`.
pub const SUM_DIM1: &str = "rextio-torch/tensor-sum-dim1-f32-cpu-2d";
/// The fallback lane for covered sites outside the surface.
pub const UNSUPPORTED: &str = "rextio-torch/unsupported-tensor-surface";

/// The activation methods lowered natively.
pub const ACTIVATIONS: [&str; 3] = ["relu", "sigmoid", "tanh"];

/// Rule id of an activation method on a receiver of `rank`.
pub fn activation_rule(name: &str, rank: u8) -> Option<String> {
    (ACTIVATIONS.contains(&name) && (rank == 1 || rank == 2))
        .then(|| format!("rextio-torch/tensor-{name}-f32-cpu-{rank}d"))
}

fn native(id: String, scope: RuleScope, pattern: &str, constraint: &str) -> RuleRecord {
    RuleRecord {
        id,
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

/// Every rule.
pub fn records() -> Vec<RuleRecord> {
    let mut out = vec![native(
        LINEAR.to_owned(),
        RuleScope::Call,
        "torch.nn.functional.linear(x, w, b)",
        "three positional tensors, no keywords; x, w rank 2, b rank 1; result rank 2",
    )];
    for name in ACTIVATIONS {
        for rank in [1u8, 2] {
            if let Some(id) = activation_rule(name, rank) {
                out.push(native(
                    id,
                    RuleScope::Method,
                    &format!("t.{name}()"),
                    &format!("zero arguments; receiver rank {rank}; result rank {rank}"),
                ));
            }
        }
    }
    out.push(native(
        MATMUL_BINOP.to_owned(),
        RuleScope::BinOp,
        "a @ b",
        "both rank 2; result rank 2",
    ));
    out.push(native(
        MATMUL_CALL.to_owned(),
        RuleScope::Call,
        "torch.matmul(a, b) / a.matmul(b)",
        "both rank 2, positional only; result rank 2",
    ));
    out.push(native(
        ADD_SAME_RANK.to_owned(),
        RuleScope::BinOp,
        "a + b",
        "both rank 1 or both rank 2; result rank of left",
    ));
    out.push(native(
        ADD_BROADCAST.to_owned(),
        RuleScope::BinOp,
        "a + b",
        "one rank 2, one rank 1, either order; result rank 2",
    ));
    out.push(native(
        MEAN_DIM1.to_owned(),
        RuleScope::Method,
        "t.mean(dim=1, keepdim=False)",
        "literal keywords only; receiver rank 2; result rank 1",
    ));
    out.push(native(
        SUM_DIM1.to_owned(),
        RuleScope::Method,
        "t.sum(dim=1, keepdim=False)",
        "literal keywords only; receiver rank 2; result rank 1",
    ));
    out.push(RuleRecord {
        id: UNSUPPORTED.to_owned(),
        scope: RuleScope::Type,
        pattern: "covered torch sites outside the surface".to_owned(),
        constraint: "types, ranks, operators or options outside the native surface".to_owned(),
        outcome: RuleOutcome::Fallback,
        diagnostic_code: Some(codes::UNSUPPORTED_SURFACE.to_owned()),
        guidance: "keep the function in Python or rewrite it with the native forms listed by `rextio capabilities`".to_owned(),
        stability: Stability::Stable,
        verified: false,
    });
    out
}

//! Rule records: the documented surface. Rule ids follow the seed (`rextio-torch/...`); ids
//! marked "beyond the seed" are forms the Rust host can offer that the Python core could not.

use crate::codes;
use rextio_plugin_api::{RuleOutcome, RuleRecord, RuleScope, Stability};

/// `F.linear(x, w, b)`, three positional tensors.
pub const LINEAR: &str = "rextio-torch/functional-linear-f32-cpu-2d";
/// `F.linear(x, w)`, `(x, w, None)`, `(x, w, bias=None)`.
pub const LINEAR_NONE: &str = "rextio-torch/functional-linear-none-f32-cpu-2d";
/// `F.linear` with tensor-valued keywords (beyond the seed).
pub const LINEAR_KEYWORDS: &str = "rextio-torch/functional-linear-keywords-f32-cpu-2d";
/// `F.relu(t)` with omitted or literal `inplace=False`.
pub const F_RELU: &str = "rextio-torch/functional-relu-f32-cpu-rank1-2";
/// Exact GELU.
pub const GELU: &str = "rextio-torch/functional-gelu-none-f32-cpu-rank1-2";
/// `a @ b`, 2 x 2.
pub const MATMUL_BINOP: &str = "rextio-torch/tensor-matmul-f32-cpu-2d";
/// `a @ b`, 2 x 1 or 1 x 2.
pub const MATMUL_BINOP_MIXED: &str = "rextio-torch/tensor-matmul-f32-cpu-mixed-rank";
/// `torch.matmul(a, b)` / `a.matmul(b)`, 2 x 2.
pub const MATMUL_CALL: &str = "rextio-torch/tensor-matmul-call-f32-cpu-2d";
/// `torch.matmul(a, b)` / `a.matmul(b)`, mixed ranks.
pub const MATMUL_CALL_MIXED: &str = "rextio-torch/tensor-matmul-call-f32-cpu-mixed-rank";
/// `.mean(dim=1, keepdim=False)` on rank 2 (the 0.1.0 form).
pub const MEAN_DIM1: &str = "rextio-torch/tensor-mean-dim1-f32-cpu-2d";
/// `.sum(dim=1, keepdim=False)` on rank 2 (the 0.1.0 form).
pub const SUM_DIM1: &str = "rextio-torch/tensor-sum-dim1-f32-cpu-2d";
/// Static-dim mean, method or function.
pub const MEAN_STATIC: &str = "rextio-torch/mean-static-dim-f32-cpu-rank1-2";
/// Static-dim sum, method or function.
pub const SUM_STATIC: &str = "rextio-torch/sum-static-dim-f32-cpu-rank1-2";
/// `t.softmax(dim=1)` on rank 2.
pub const SOFTMAX_DIM1: &str = "rextio-torch/tensor-softmax-dim1-f32-cpu-2d";
/// Static-dim softmax, method or `torch.softmax`.
pub const SOFTMAX_STATIC: &str = "rextio-torch/softmax-static-dim-f32-cpu-rank1-2";
/// `F.softmax`.
pub const F_SOFTMAX: &str = "rextio-torch/functional-softmax-f32-cpu-rank1-2";
/// `t.argmax(dim=1)` on rank 2.
pub const ARGMAX_DIM1: &str = "rextio-torch/tensor-argmax-dim1-i64-cpu-2d";
/// Static-dim argmax with a rank-1 int64 result.
pub const ARGMAX_STATIC: &str = "rextio-torch/argmax-static-dim-i64-cpu-rank1";
/// The fallback lane for covered sites outside the surface.
pub const UNSUPPORTED: &str = "rextio-torch/unsupported-tensor-surface";

/// Activation methods.
pub const ACTIVATIONS: [&str; 3] = ["relu", "sigmoid", "tanh"];
/// Unary math functions and methods.
pub const UNARY: [&str; 7] = ["abs", "neg", "negative", "square", "exp", "log", "sqrt"];
/// Elementwise arithmetic: (operator, name).
pub const ELEMENTWISE: [(&str, &str); 4] = [("+", "add"), ("-", "sub"), ("*", "mul"), ("/", "div")];

/// `t.relu()` etc. on a receiver of `rank`.
pub fn activation_method(name: &str, rank: u8) -> String {
    format!("rextio-torch/tensor-{name}-f32-cpu-{rank}d")
}

/// `torch.relu(t)` etc.
pub fn activation_function(name: &str) -> String {
    format!("rextio-torch/function-{name}-f32-cpu-rank1-2")
}

/// Unary math, function or method.
pub fn unary(name: &str) -> String {
    format!("rextio-torch/unary-{name}-f32-cpu-rank1-2")
}

/// Tensor-tensor operator.
pub fn elementwise(name: &str, broadcast: bool) -> String {
    let shape = if broadcast {
        "2d-1d-broadcast"
    } else {
        "same-rank"
    };
    format!("rextio-torch/tensor-{name}-f32-cpu-{shape}")
}

/// `torch.add(a, b)` etc.
pub fn function_elementwise(name: &str) -> String {
    format!("rextio-torch/function-{name}-f32-cpu-rank1-2")
}

/// Tensor-scalar operator, either side (beyond the seed).
pub fn scalar_elementwise(name: &str) -> String {
    format!("rextio-torch/tensor-{name}-scalar-f32-cpu-rank1-2")
}

fn native(id: impl Into<String>, scope: RuleScope, pattern: &str, constraint: &str) -> RuleRecord {
    RuleRecord {
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

/// Every rule.
pub fn records() -> Vec<RuleRecord> {
    use RuleScope::{BinOp, Call, Method};
    let mut out = vec![
        native(
            LINEAR,
            Call,
            "torch.nn.functional.linear(x, w, b)",
            "three positional tensors; x, w rank 2, b rank 1; result rank 2",
        ),
        native(
            LINEAR_NONE,
            Call,
            "torch.nn.functional.linear(x, w[, None | bias=None])",
            "x, w positional rank 2; no bias; result rank 2",
        ),
        native(
            LINEAR_KEYWORDS,
            Call,
            "torch.nn.functional.linear(x, weight=w, bias=b)",
            "tensor keywords input/weight/bias; ranks 2, 2, 1; result rank 2",
        ),
    ];
    for name in ACTIVATIONS {
        for rank in [1u8, 2] {
            out.push(native(
                activation_method(name, rank),
                Method,
                &format!("t.{name}()"),
                &format!("zero arguments; receiver rank {rank}; result rank {rank}"),
            ));
        }
        out.push(native(
            activation_function(name),
            Call,
            &format!("torch.{name}(t)"),
            "one positional tensor, no keywords; rank 1 or 2; result same rank",
        ));
    }
    out.push(native(
        F_RELU,
        Call,
        "torch.nn.functional.relu(t[, inplace=False])",
        "one positional tensor; inplace omitted or literal False; rank 1 or 2",
    ));
    for name in UNARY {
        out.push(native(
            unary(name),
            Call,
            &format!("torch.{name}(t) / t.{name}()"),
            "one tensor, no other arguments; rank 1 or 2; result same rank",
        ));
    }
    out.push(native(
        GELU,
        Call,
        "torch.nn.functional.gelu(t[, approximate=\"none\"])",
        "one positional tensor; approximate omitted or literal \"none\"; rank 1 or 2",
    ));
    out.push(native(
        MATMUL_BINOP,
        BinOp,
        "a @ b",
        "rank 2 x 2; result rank 2",
    ));
    out.push(native(
        MATMUL_BINOP_MIXED,
        BinOp,
        "a @ b",
        "rank 2 x 1 or 1 x 2; result rank 1",
    ));
    out.push(native(
        MATMUL_CALL,
        Call,
        "torch.matmul(a, b) / a.matmul(b)",
        "rank 2 x 2, positional only; result rank 2",
    ));
    out.push(native(
        MATMUL_CALL_MIXED,
        Call,
        "torch.matmul(a, b) / a.matmul(b)",
        "rank 2 x 1 or 1 x 2, positional only; result rank 1",
    ));
    for (op, name) in ELEMENTWISE {
        out.push(native(
            elementwise(name, false),
            BinOp,
            &format!("a {op} b"),
            "both rank 1 or both rank 2; result same rank",
        ));
        out.push(native(
            elementwise(name, true),
            BinOp,
            &format!("a {op} b"),
            "one rank 2, one rank 1, either order; result rank 2",
        ));
        out.push(native(
            function_elementwise(name),
            Call,
            &format!("torch.{name}(a, b)"),
            "two positional tensors, no options; ranks 1/1, 2/2, 2/1, 1/2",
        ));
        out.push(native(
            scalar_elementwise(name),
            BinOp,
            &format!("t {op} s / s {op} t"),
            "float32 tensor rank 1 or 2 with a Python int or float (literal or parameter); result float32, same rank",
        ));
    }
    out.push(native(
        MEAN_DIM1,
        Method,
        "t.mean(dim=1, keepdim=False)",
        "literal keywords; receiver rank 2; result rank 1",
    ));
    out.push(native(
        SUM_DIM1,
        Method,
        "t.sum(dim=1, keepdim=False)",
        "literal keywords; receiver rank 2; result rank 1",
    ));
    for (id, name) in [(MEAN_STATIC, "mean"), (SUM_STATIC, "sum")] {
        out.push(native(
            id,
            Call,
            &format!("t.{name}(dim[, keepdim=b]) / torch.{name}(t, dim[, keepdim=b])"),
            "dim literal 0/1 once; keepdim omitted or named bool; rank 2 -> 1 or 2; rank 1 needs dim 0 + keepdim=True",
        ));
    }
    out.push(native(
        SOFTMAX_DIM1,
        Method,
        "t.softmax(dim=1)",
        "receiver rank 2; result rank 2",
    ));
    out.push(native(
        SOFTMAX_STATIC,
        Call,
        "t.softmax(dim) / torch.softmax(t, dim)",
        "dim literal once; rank 1: 0; rank 2: 0/1; result same rank",
    ));
    out.push(native(
        F_SOFTMAX,
        Call,
        "torch.nn.functional.softmax(t, dim[, dtype=None])",
        "dim literal once; dtype omitted or literal None; rank 1 or 2",
    ));
    out.push(native(
        ARGMAX_DIM1,
        Method,
        "t.argmax(dim=1[, keepdim=False])",
        "receiver rank 2; result int64 rank 1",
    ));
    out.push(native(
        ARGMAX_STATIC,
        Call,
        "t.argmax(dim[, keepdim=b]) / torch.argmax(t, dim[, keepdim=b])",
        "rank 2: dim 0/1, keepdim False; rank 1: dim 0, keepdim=True; result int64 rank 1",
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

/// Native rule ids, in table order.
pub fn native_ids() -> Vec<String> {
    records()
        .into_iter()
        .filter(|r| r.outcome == RuleOutcome::Native)
        .map(|r| r.id)
        .collect()
}

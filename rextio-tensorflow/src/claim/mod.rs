//! Claim rules, one module per family. Each family turns a site into a [`Plan`] (rule id,
//! result type, runtime function and the operand sources it reads) through early returns;
//! `claim` reports the plan's rule, and lowering recomputes the same plan from the site, so a
//! claim is re-validated rather than trusted.
//!
//! The surface is functional only: calls resolve to `tensorflow.<symbol>` (the host resolves
//! `import tensorflow as tf`), method calls on tensors are not covered, and binary operators are
//! offered because an operand has one of this plugin's types. Keyword checks always come before
//! operand-type checks, so a keyword the host could not type (for example an attribute read such
//! as `output_type=tf.int32`, offered as an operand with no type and no literal, or as a
//! `Literal::Str` of the dotted name) is rejected with this plugin's code, never `NotCovered`.

mod arith;
mod classification;
mod cuda;
mod layout;
mod matmul;
mod reductions;
mod unary;

use crate::codes;
use crate::entry::Rt;
use crate::types::{F32_CPU, I64_CPU_1D};
use rextio_plugin_api::routes::{self, ClaimTable, Route};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Literal, Operand, SiteKind, ValueType};

/// Resolved prefix of every covered call target.
pub const PREFIX: &str = "tensorflow.";

/// Where an operand of the plan comes from in the site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    /// Positional operand `i` (for binary operators: 0 left, 1 right).
    Arg(usize),
}

/// A proven site: which rule, what it returns, and the runtime call that computes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The rule.
    pub rule_id: String,
    /// The result type.
    pub result: ValueType,
    /// Runtime function in `rextio_tensorflow::runtime` (static axes are part of the entry).
    pub f: Rt,
    /// Tensor operands passed by reference, in order.
    pub operands: Vec<Src>,
}

/// Why a site has no plan: a rejection or not ours.
pub type NoPlan = ClaimOutcome;

/// What a planner answers.
pub type Planned = rextio_plugin_api::routes::Planned<Plan>;

/// The claim table: which planner answers each call target. Rows sharing a target are tried by
/// priority; two rows of one target and priority are refused (see
/// [`rextio_plugin_api::routes`]).
pub static TABLE: ClaimTable<Plan> = ClaimTable::new(crate::PLUGIN_ID, codes::UNSUPPORTED, rows);

/// Call rows: `target after tensorflow.` => planner, each row named by its target.
macro_rules! calls {
    ($out:ident: $($target:literal => $plan:expr),* $(,)?) => {
        $out.extend([$(Route::new(
            SiteKind::Call,
            concat!("tensorflow.", $target),
            concat!("tf.", $target),
            $plan,
        )),*]);
    };
}

/// Every row of the claim table.
pub(crate) fn rows() -> Vec<Route<Planned>> {
    let mut out = Vec::new();
    calls!(out:
        "matmul" => matmul::plan,
        "linalg.matmul" => matmul::plan,
        "transpose" => layout::plan_transpose,
        "nn.bias_add" => layout::plan_bias_add,
        "maximum" => |s| arith::plan_extremum(s, "maximum"),
        "minimum" => |s| arith::plan_extremum(s, "minimum"),
        "reduce_mean" => |s| reductions::plan(s, "mean", false),
        "math.reduce_mean" => |s| reductions::plan(s, "mean", false),
        "reduce_sum" => |s| reductions::plan(s, "sum", false),
        "math.reduce_sum" => |s| reductions::plan(s, "sum", false),
        "nn.softmax" => classification::plan_softmax,
        "argmax" => classification::plan_argmax,
    );
    // `tf.reduce_mean(x, axis=1)` / `tf.reduce_sum(...)` with keepdims omitted or False keep
    // their own, older rule ids and codes; every other literal axis is the general rule.
    for target in ["reduce_mean", "math.reduce_mean"] {
        out.push(
            Route::new(
                SiteKind::Call,
                format!("{PREFIX}{target}"),
                format!("tf.{target}(x, axis=1)"),
                |s| reductions::plan(s, "mean", true),
            )
            .guarded(1, reductions::is_axis1_mean),
        );
    }
    for target in ["reduce_sum", "math.reduce_sum"] {
        out.push(
            Route::new(
                SiteKind::Call,
                format!("{PREFIX}{target}"),
                format!("tf.{target}(x, axis=1)"),
                |s| reductions::plan(s, "sum", true),
            )
            .guarded(1, reductions::is_axis1_sum),
        );
    }
    for a in &crate::rules::ACTIVATIONS {
        out.push(Route::new(
            SiteKind::Call,
            format!("{PREFIX}nn.{}", a.name),
            format!("activation table: tf.nn.{}", a.name),
            unary::plan_activation_site,
        ));
    }
    for u in &crate::rules::MATH_UNARY {
        for target in u.targets {
            out.push(Route::new(
                SiteKind::Call,
                format!("{PREFIX}{target}"),
                format!("math unary table: tf.{target}"),
                unary::plan_math_site,
            ));
        }
    }
    out.push(Route::new(
        SiteKind::Call,
        rextio_plugin_api::NEG_TARGET,
        "unary minus: -x",
        unary::plan_neg_operator,
    ));
    for a in &crate::rules::ARITH {
        for target in a.targets {
            out.push(Route::new(
                SiteKind::Call,
                format!("{PREFIX}{target}"),
                format!("arithmetic table: tf.{target}"),
                arith::plan_call_site,
            ));
        }
    }
    out
}

/// Plan a site.
pub fn plan(site: &ClaimSite) -> Planned {
    // GPU values reach only the CUDA lane, never a CPU rule.
    if cuda::LANE.owns(site) {
        return cuda::plan(site);
    }
    match site.kind {
        SiteKind::Call => {
            if site.receiver.is_some() {
                return Err(ClaimOutcome::NotCovered);
            }
            TABLE.plan(site).unwrap_or(Err(ClaimOutcome::NotCovered))
        }
        // Method-style receivers (`x.numpy()`, `x.__add__(y)`) and attribute reads (`x.shape`)
        // are outside the functional surface.
        SiteKind::MethodCall | SiteKind::Attribute => Err(ClaimOutcome::NotCovered),
        SiteKind::BinOp => routes::operator(site, is_ours, arith::plan_binop),
        SiteKind::Compare => routes::operator(site, is_ours, |site| {
            Err(reject(
                codes::UNSUPPORTED,
                format!(
                    "tensor comparison `{}` is not lowered (tensor-data-dependent control flow stays Python)",
                    site.target
                ),
                "keep this function in Python",
            ))
        }),
    }
}

/// The call targets the claim table reaches (coverage documentation).
pub fn symbols() -> Vec<String> {
    TABLE
        .targets(SiteKind::Call)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// Decide a site.
pub fn claim(site: &ClaimSite) -> ClaimOutcome {
    rextio_plugin_api::kit::decide(plan(site).map(|p| (p.rule_id, p.result)))
}

/// Whether a rule belongs to the build-only CUDA lane.
pub fn is_cuda_rule(rule_id: &str) -> bool {
    crate::rules::CUDA_RULES.contains(&rule_id)
}

/// Whether an operand is one of this plugin's tensor types.
pub(crate) fn is_ours(op: &Operand) -> bool {
    op.key().is_some_and(|k| k.namespace() == crate::PLUGIN_ID)
}

/// What a tensor slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tensor {
    /// A float32 CPU tensor of this rank.
    F32(u8),
    /// The int64 rank-1 classification result (not an operation input).
    I64,
}

/// The float32 rank of an operand that is a non-literal float32 tensor of ours.
pub(crate) fn f32_rank_of(op: &Operand) -> Option<u8> {
    F32_CPU.operand_rank(op)
}

/// Classify a tensor slot. An operand the host could not type is not ours to judge
/// (`NotCovered`); anything else outside the vocabulary is rejected with the fallback code.
pub(crate) fn tensor(op: &Operand, shown: &str) -> Result<Tensor, NoPlan> {
    if op.literal.is_none() && op.ty.is_none() {
        return Err(ClaimOutcome::NotCovered);
    }
    if let Some(r) = f32_rank_of(op) {
        return Ok(Tensor::F32(r));
    }
    if op.literal.is_none() && op.key().is_some_and(|k| k.as_str() == I64_CPU_1D) {
        return Ok(Tensor::I64);
    }
    Err(reject(
        codes::UNSUPPORTED,
        format!(
            "{shown} on {} is outside the float32 CPU rank-1/2 tensor vocabulary",
            describe(op)
        ),
        "annotate tensors with rextio_tensorflow.types.TensorF32Cpu1D or TensorF32Cpu2D",
    ))
}

/// Describe an operand for messages.
pub(crate) fn describe(op: &Operand) -> String {
    op.describe(|k| {
        crate::types::MARKERS
            .describe_key(k)
            .unwrap_or_else(|| format!("a `{k}` value"))
    })
}

/// A rejection with this plugin's code.
pub(crate) fn reject(code: &str, message: impl Into<String>, suggestion: &str) -> ClaimOutcome {
    rextio_plugin_api::kit::reject(
        code,
        format!("rextio-tensorflow: {}", message.into()),
        suggestion,
    )
}

/// A float32 CPU plan of result `rank`.
pub(crate) fn plan_f32(
    rule_id: impl Into<String>,
    rank: u8,
    f: Rt,
    operands: Vec<Src>,
) -> Result<Plan, NoPlan> {
    F32_CPU.result(rank).map(|result| Plan {
        rule_id: rule_id.into(),
        result,
        f,
        operands,
    })
}

/// Names of the site's keywords, for messages.
pub(crate) fn keyword_names(site: &ClaimSite) -> String {
    site.keywords
        .iter()
        .map(|k| format!("`{}=`", k.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A static int literal typed `int` (never a bool).
pub(crate) fn int_literal(op: &Operand) -> Option<i64> {
    match (&op.literal, &op.ty) {
        (Some(Literal::Int(v)), Some(ValueType::Int)) => Some(*v),
        _ => None,
    }
}

/// A static bool literal typed `bool`.
pub(crate) fn bool_literal(op: &Operand) -> Option<bool> {
    match (&op.literal, &op.ty) {
        (Some(Literal::Bool(v)), Some(ValueType::Bool)) => Some(*v),
        _ => None,
    }
}

/// A static str literal typed `str`.
pub(crate) fn str_literal(op: &Operand) -> Option<&str> {
    match (&op.literal, &op.ty) {
        (Some(Literal::Str(s)), Some(ValueType::Str)) => Some(s),
        _ => None,
    }
}

/// The axis operand (if given) and the other allowed keywords of an axis-taking call.
pub(crate) type AxisOperands<'s> = (Option<&'s Operand>, Vec<(&'s str, &'s Operand)>);

/// The axis of a call whose tensor is the only other operand: `axis` as the second positional
/// operand or as the keyword `axis=` (exactly once), with `allowed` keywords besides it and at
/// most one extra positional. Returns the axis operand (or `None` when omitted) and the index of
/// each allowed keyword found, or a reason.
pub(crate) fn axis_operand<'s>(
    site: &'s ClaimSite,
    allowed: &[&str],
) -> Result<AxisOperands<'s>, String> {
    if site.args.len() > 2 {
        return Err(format!(
            "takes the tensor and at most a positional axis, got {} positional arguments",
            site.args.len()
        ));
    }
    let mut axis = site.args.get(1);
    let mut extra: Vec<(&str, &Operand)> = Vec::new();
    for kw in &site.keywords {
        if kw.name == "axis" {
            if axis.is_some() {
                return Err("gives axis more than once".to_owned());
            }
            axis = Some(&kw.value);
        } else if allowed.contains(&kw.name.as_str()) {
            if extra.iter().any(|(n, _)| *n == kw.name) {
                return Err(format!("gives `{}=` more than once", kw.name));
            }
            extra.push((kw.name.as_str(), &kw.value));
        } else {
            return Err(format!("with keyword `{}=` is not lowered", kw.name));
        }
    }
    Ok((axis, extra))
}

#[cfg(test)]
pub(crate) mod tests;

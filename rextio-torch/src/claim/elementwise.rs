//! Elementwise functions beyond arithmetic, one table each in [`crate::rules`]: the clamp ops
//! with scalar bounds ([`rules::CLAMPS`]), `maximum` / `minimum` of tensor pairs
//! ([`rules::PAIRWISE`]) and `zeros_like` / `ones_like` / `full_like` ([`rules::FILLS`]).

use super::{
    bind, describe, f32_rank, get, is_i64, is_number, is_ours, operand, plan_f32, rank, reject,
    subject, Arg, NoPlan, Op, Plan, Src,
};
use super::{function_row, method_row};
use crate::entry::Rt;
use crate::rules::{ClampOp, FillOp, PairwiseOp};
use crate::{codes, rules};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Literal};

/// `torch.<name>(t, ...)` for a row of [`rules::CLAMPS`].
pub fn plan_clamp_function(site: &ClaimSite) -> Result<Plan, NoPlan> {
    plan_clamp(site, function_row(site, ClampOp::named)?)
}

/// `t.<name>(...)` for a row of [`rules::CLAMPS`].
pub fn plan_clamp_method(site: &ClaimSite) -> Result<Plan, NoPlan> {
    plan_clamp(site, method_row(site, ClampOp::named)?)
}

fn plan_clamp(site: &ClaimSite, row: &ClampOp) -> Result<Plan, NoPlan> {
    let name = row.name;
    let method = site.receiver.is_some();
    let shown = if method {
        format!(".{name}")
    } else {
        format!("torch.{name}")
    };
    let form = |why: String| {
        reject(
            codes::CLAMP_FORM,
            format!("{shown} {why}"),
            "write torch.clamp(t, min=lo, max=hi) with Python numbers, or t.clamp_min(lo)",
        )
    };
    let bounds = row.bounds.params();
    let mut params: Vec<&str> = Vec::new();
    if !method {
        params.push("input");
    }
    params.extend_from_slice(bounds);
    let bound = bind(site, &params, &[]).map_err(form)?;
    let (t, tensor) = subject(site, &bound, || form("has no tensor".into()))?;
    let r = f32_rank(tensor, &shown)?;
    // Each bound: absent, literal None, or a number.
    let mut given: Vec<(&str, Src)> = Vec::new();
    for b in bounds {
        let Some(src) = get(&bound, b) else { continue };
        let Some(op) = operand(site, src) else {
            return Err(ClaimOutcome::NotCovered);
        };
        if matches!(op.literal, Some(Literal::None)) {
            continue;
        }
        if !is_number(op) {
            return Err(form(format!(
                "with {b}={} is not lowered; bounds must be Python int or float",
                describe(op)
            )));
        }
        given.push((b, src));
    }
    let (f, args) = match given.as_slice() {
        [] => {
            return Err(form(
                "without a min or max bound is not lowered (eager raises)".into(),
            ))
        }
        [("min", lo), ("max", hi)] => (
            Rt::Clamp,
            vec![Arg::Tensor(t), Arg::Scalar(*lo), Arg::Scalar(*hi)],
        ),
        [("min", lo)] => (Rt::ClampMin, vec![Arg::Tensor(t), Arg::Scalar(*lo)]),
        [(_, hi)] => (Rt::ClampMax, vec![Arg::Tensor(t), Arg::Scalar(*hi)]),
        _ => return Err(ClaimOutcome::NotCovered),
    };
    plan_f32(row.rule.to_owned(), r, Op::Call { f, args })
}

/// `torch.<name>(a, b)` for a row of [`rules::PAIRWISE`].
pub fn plan_pairwise_function(site: &ClaimSite) -> Result<Plan, NoPlan> {
    plan_pairwise(site, function_row(site, PairwiseOp::named)?)
}

/// `a.<name>(b)` for a row of [`rules::PAIRWISE`].
pub fn plan_pairwise_method(site: &ClaimSite) -> Result<Plan, NoPlan> {
    plan_pairwise(site, method_row(site, PairwiseOp::named)?)
}

fn plan_pairwise(site: &ClaimSite, row: &PairwiseOp) -> Result<Plan, NoPlan> {
    let name = row.name;
    let (a, b) = match (&site.receiver, site.args.as_slice()) {
        (Some(_), [_]) => (Src::Recv, Src::Arg(0)),
        (None, [_, _]) => (Src::Arg(0), Src::Arg(1)),
        _ => {
            return Err(reject(
                codes::FUNCTIONAL_OPTIONS,
                format!("torch.{name} takes two positional tensors here"),
                &format!("write torch.{name}(a, b)"),
            ))
        }
    };
    if !site.keywords.is_empty() {
        return Err(reject(
            codes::FUNCTIONAL_OPTIONS,
            format!("torch.{name} with keywords is not lowered"),
            &format!("write torch.{name}(a, b) without options"),
        ));
    }
    let (Some(oa), Some(ob)) = (operand(site, a), operand(site, b)) else {
        return Err(ClaimOutcome::NotCovered);
    };
    if is_i64(oa) || is_i64(ob) {
        return Err(reject(
            codes::INT64_ARITHMETIC,
            format!("torch.{name} with an int64 classification result is not lowered"),
            "elementwise functions are float32 only",
        ));
    }
    if !(is_ours(oa) && is_ours(ob)) {
        return Err(reject(
            codes::FUNCTIONAL_OPTIONS,
            format!(
                "torch.{name} of {} and {} is not lowered; it takes two tensors",
                describe(oa),
                describe(ob)
            ),
            "use torch.clamp for a scalar bound",
        ));
    }
    let r = match (rank(oa), rank(ob)) {
        (Some(x), Some(y)) if x == y => x,
        (Some(2), Some(1)) | (Some(1), Some(2)) => 2,
        _ => {
            return Err(reject(
                codes::ELEMENTWISE_RANKS,
                format!(
                    "torch.{name} of {} and {} is not lowered",
                    describe(oa),
                    describe(ob)
                ),
                "use float32 tensors of equal ranks or a rank-2/rank-1 pair",
            ))
        }
    };
    plan_f32(
        rules::function_elementwise(name),
        r,
        Op::Call {
            f: row.f,
            args: vec![Arg::Tensor(a), Arg::Tensor(b)],
        },
    )
}

/// `torch.<name>(t[, value])` for a row of [`rules::FILLS`].
pub fn plan_like(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let row = function_row(site, FillOp::named)?;
    let name = row.name;
    let form = |why: String| {
        reject(
            codes::LIKE_FORM,
            format!("torch.{name} {why}"),
            if row.takes_value {
                "write torch.full_like(t, value) with a Python number and no options"
            } else {
                "write the call with the tensor only; its float32 dtype and CPU device are kept"
            },
        )
    };
    if let Some(k) = site.keywords.first() {
        return Err(form(format!("with keyword `{}` is not lowered", k.name)));
    }
    let want = if row.takes_value { 2 } else { 1 };
    if site.args.len() != want {
        return Err(form(format!(
            "takes {want} positional argument(s) here, got {}",
            site.args.len()
        )));
    }
    let r = f32_rank(&site.args[0], &format!("torch.{name}"))?;
    let mut args = vec![Arg::Tensor(Src::Arg(0))];
    if row.takes_value {
        if !is_number(&site.args[1]) {
            return Err(form(format!(
                "with fill value {} is not lowered; it must be a Python int or float",
                describe(&site.args[1])
            )));
        }
        args.push(Arg::Scalar(Src::Arg(1)));
    }
    plan_f32(rules::like(name), r, Op::Call { f: row.f, args })
}

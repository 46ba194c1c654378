//! The classification head of `crate::rules::CLASSIFICATION`: softmax and log-softmax over a static
//! dim, argmax to int64 rank 1.

use super::{
    bool_literal, dim_args, int_literal, norm_dim, operand, plan_f32, reject, Arg, DimArgs, NoPlan,
    Op, Plan, Src,
};
use crate::codes;
use crate::rules::{Classify, ClassifyOp, FunctionalForm};
use crate::types::i64_cpu_1d;
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Literal};

/// `torch.<name>(t, dim...)` for a row of [`crate::rules::CLASSIFICATION`].
pub fn plan_function(site: &ClaimSite) -> Result<Plan, NoPlan> {
    plan(site, super::function_row(site, ClassifyOp::named)?, false)
}

/// `torch.nn.functional.<name>(t, dim...)` for a row of [`crate::rules::CLASSIFICATION`].
pub fn plan_functional(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let r = site
        .target
        .strip_prefix("torch.nn.functional.")
        .and_then(ClassifyOp::named)
        .ok_or(ClaimOutcome::NotCovered)?;
    plan(site, r, true)
}

/// `t.<name>(dim...)` for a row of [`crate::rules::CLASSIFICATION`].
pub fn plan_method(site: &ClaimSite) -> Result<Plan, NoPlan> {
    plan(site, super::method_row(site, ClassifyOp::named)?, false)
}

/// `functional`: the `torch.nn.functional.` spelling.
fn plan(site: &ClaimSite, r: &'static ClassifyOp, functional: bool) -> Result<Plan, NoPlan> {
    match r.op {
        Classify::Softmax | Classify::LogSoftmax => softmax_like(site, r, functional),
        Classify::Argmax => argmax(site, r),
    }
}

/// Whether the site is `t.name(dim=1...)` on a rank-2 receiver, the dim given as a keyword: the
/// form that keeps the row's older rule.
fn dim1_form(t: Src, rank: u8, raw: i64, dim_src: Src) -> bool {
    t == Src::Recv && rank == 2 && raw == 1 && matches!(dim_src, Src::Kw(_))
}

fn softmax_like(
    site: &ClaimSite,
    r: &'static ClassifyOp,
    functional: bool,
) -> Result<Plan, NoPlan> {
    let name = r.name;
    let shown = match (functional, site.receiver.is_some()) {
        (true, _) => format!("F.{name}"),
        (false, true) => format!(".{name}"),
        (false, false) => format!("torch.{name}"),
    };
    let form = |why: &str| {
        reject(
            codes::SOFTMAX_FORM,
            format!("{shown} {why}"),
            "write t.softmax(dim=-1) or torch.softmax(t, 1)",
        )
    };
    let DimArgs { t, dim, .. } = dim_args(site, false, |kw| {
        functional && kw.name == "dtype" && matches!(kw.value.literal, Some(Literal::None))
    })
    .map_err(|why| form(&why))?;
    let Some(dim_src) = dim else {
        return Err(form("without an explicit dim is not lowered"));
    };
    let Some(raw) = int_literal(operand(site, dim_src)) else {
        return Err(form("needs dim as an int literal"));
    };
    let Some(tensor) = operand(site, t) else {
        return Err(ClaimOutcome::NotCovered);
    };
    let rank = super::f32_rank(tensor, &shown)?;
    let Some(d) = norm_dim(raw, rank) else {
        return Err(form(&format!(
            "with dim={raw} on a rank-{rank} tensor is not lowered"
        )));
    };
    let rule = match (functional, r.functional, r.dim1) {
        (true, FunctionalForm::Own(doc), _) => doc.id,
        (true, FunctionalForm::General, _) => r.general.id,
        (true, FunctionalForm::Unclaimed, _) => return Err(ClaimOutcome::NotCovered),
        (false, _, Some(doc)) if dim1_form(t, rank, raw, dim_src) => doc.id,
        (false, _, _) => r.general.id,
    };
    let op = match r.op {
        Classify::LogSoftmax => Op::Call {
            f: crate::entry::Rt::LogSoftmax,
            args: vec![Arg::Tensor(t), Arg::Int(d)],
        },
        _ => Op::Softmax { t, dim: d },
    };
    plan_f32(rule, rank, op)
}

/// `t.argmax(dim[, keepdim=b])`, `torch.argmax(t, dim[, keepdim=b])`.
fn argmax(site: &ClaimSite, r: &'static ClassifyOp) -> Result<Plan, NoPlan> {
    let shown = if site.receiver.is_some() {
        ".argmax"
    } else {
        "torch.argmax"
    };
    let form = |why: &str| {
        reject(
            codes::ARGMAX_FORM,
            format!("{shown} {why}"),
            "write t.argmax(dim=1) for rank 2, or t.argmax(dim=0, keepdim=True) for rank 1",
        )
    };
    let DimArgs { t, dim, keepdim } = dim_args(site, true, |_| false).map_err(|why| form(&why))?;
    let Some(dim_src) = dim else {
        return Err(form("over the whole tensor would return rank 0"));
    };
    let Some(raw) = int_literal(operand(site, dim_src)) else {
        return Err(form("needs dim as an int literal"));
    };
    let keep = match keepdim {
        None => false,
        Some(s) => {
            bool_literal(operand(site, s)).ok_or_else(|| form("needs keepdim as a bool literal"))?
        }
    };
    let Some(tensor) = operand(site, t) else {
        return Err(ClaimOutcome::NotCovered);
    };
    let rank = super::f32_rank(tensor, shown)?;
    let d = norm_dim(raw, rank).unwrap_or(raw);
    match (rank, d, keep) {
        (2, 0 | 1, false) | (1, 0, true) => {}
        (2, _, true) => return Err(form("with keepdim=True on a rank-2 tensor would return int64 rank 2, which has no registered type")),
        (1, 0, false) => return Err(form("on a rank-1 tensor without keepdim=True would return rank 0")),
        _ => return Err(form(&format!("with dim={d} on a rank-{rank} tensor is not lowered"))),
    }
    let rule = match r.dim1 {
        Some(doc) if dim1_form(t, rank, raw, dim_src) => doc.id,
        _ => r.general.id,
    };
    Ok(Plan {
        rule_id: rule.to_owned(),
        result: i64_cpu_1d(),
        op: Op::Argmax {
            t,
            dim: d,
            keepdim: keep,
        },
    })
}

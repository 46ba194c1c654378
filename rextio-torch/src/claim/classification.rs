//! Classification head: softmax over a static dim and argmax to int64 rank 1.

use super::{
    bool_literal, dim_args, int_literal, norm_dim, operand, plan_f32, reject, Arg, DimArgs, NoPlan,
    Op, Plan, Src,
};
use crate::types::i64_cpu_1d;
use crate::{codes, rules};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Literal};

/// `t.softmax(dim)`, `torch.softmax(t, dim)`, `F.softmax(t, dim[, dtype=None])`.
pub fn plan_softmax(site: &ClaimSite, functional: bool) -> Result<Plan, NoPlan> {
    softmax_like(site, functional, false)
}

/// `t.log_softmax(dim)`, `torch.log_softmax(t, dim)`, `F.log_softmax(t, dim[, dtype=None])`.
pub fn plan_log_softmax(site: &ClaimSite, functional: bool) -> Result<Plan, NoPlan> {
    softmax_like(site, functional, true)
}

fn softmax_like(site: &ClaimSite, functional: bool, log: bool) -> Result<Plan, NoPlan> {
    let shown = match (functional, site.receiver.is_some(), log) {
        (true, _, false) => "F.softmax",
        (false, true, false) => ".softmax",
        (false, false, false) => "torch.softmax",
        (true, _, true) => "F.log_softmax",
        (false, true, true) => ".log_softmax",
        (false, false, true) => "torch.log_softmax",
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
    let r = super::f32_rank(tensor, shown)?;
    let Some(d) = norm_dim(raw, r) else {
        return Err(form(&format!(
            "with dim={raw} on a rank-{r} tensor is not lowered"
        )));
    };
    if log {
        return plan_f32(
            rules::LOG_SOFTMAX,
            r,
            Op::Call {
                f: crate::entry::Rt::LogSoftmax,
                args: vec![Arg::Tensor(t), Arg::Int(d)],
            },
        );
    }
    let rule = if functional {
        rules::F_SOFTMAX
    } else if t == Src::Recv && r == 2 && raw == 1 && matches!(dim_src, Src::Kw(_)) {
        rules::SOFTMAX_DIM1
    } else {
        rules::SOFTMAX_STATIC
    };
    plan_f32(rule, r, Op::Softmax { t, dim: d })
}

/// `t.argmax(dim[, keepdim=b])`, `torch.argmax(t, dim[, keepdim=b])`.
pub fn plan_argmax(site: &ClaimSite) -> Result<Plan, NoPlan> {
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
    let r = super::f32_rank(tensor, shown)?;
    let d = norm_dim(raw, r).unwrap_or(raw);
    match (r, d, keep) {
        (2, 0 | 1, false) | (1, 0, true) => {}
        (2, _, true) => return Err(form("with keepdim=True on a rank-2 tensor would return int64 rank 2, which has no registered type")),
        (1, 0, false) => return Err(form("on a rank-1 tensor without keepdim=True would return rank 0")),
        _ => return Err(form(&format!("with dim={d} on a rank-{r} tensor is not lowered"))),
    }
    let rule = if t == Src::Recv && r == 2 && raw == 1 && matches!(dim_src, Src::Kw(_)) {
        rules::ARGMAX_DIM1
    } else {
        rules::ARGMAX_STATIC
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

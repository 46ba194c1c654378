//! `mean` / `sum`: receiver methods or exact `torch.mean` / `torch.sum`, static dim.

use super::{
    bool_literal, dim_args, int_literal, operand, plan_f32, reject, DimArgs, NoPlan, Op, Plan, Src,
};
use crate::{codes, rules};
use rextio_plugin_api::{ClaimOutcome, ClaimSite};

/// Plan a reduction. `method`: receiver form (`t.mean(...)`), else `torch.mean(t, ...)`.
pub fn plan(site: &ClaimSite, name: &'static str, method: bool) -> Result<Plan, NoPlan> {
    let shown = if method {
        format!(".{name}(...)")
    } else {
        format!("torch.{name}(...)")
    };
    let form = |why: &str| {
        reject(
            codes::REDUCTION_FORM,
            format!("{shown} {why}; expected a literal dim 0 or 1 given once and keepdim omitted or a named bool literal"),
            &format!("write .{name}(dim=1) or torch.{name}(t, 0, keepdim=True)"),
        )
    };
    let DimArgs { t, dim, keepdim } = dim_args(site, true, |_| false).map_err(|why| form(&why))?;
    let Some(dim_src) = dim else {
        return Err(form("reduces the whole tensor (no dim)"));
    };
    let Some(d) = int_literal(operand(site, dim_src)) else {
        return Err(form("has a dim that is not an int literal"));
    };
    let keep = match keepdim {
        None => false,
        Some(s) => bool_literal(operand(site, s))
            .ok_or_else(|| form("has a keepdim that is not a bool literal"))?,
    };
    let Some(tensor) = operand(site, t) else {
        return Err(ClaimOutcome::NotCovered);
    };
    let r = super::f32_rank(tensor, &shown)?;
    let result = match (r, d, keep) {
        (2, 0 | 1, false) => 1,
        (2, 0 | 1, true) => 2,
        (1, 0, true) => 1,
        (1, 0, false) => {
            return Err(reject(
                codes::REDUCTION_RANK,
                format!(
                "{shown} over the only dim of a rank-1 tensor without keepdim=True yields rank 0"
            ),
                "pass keepdim=True",
            ))
        }
        _ => {
            return Err(reject(
                codes::REDUCTION_RANK,
                format!("{shown} with dim={d} on a rank-{r} tensor is not lowered"),
                "use dim 0 or 1 within the tensor's rank",
            ))
        }
    };
    let legacy = method
        && r == 2
        && d == 1
        && !keep
        && matches!(dim_src, Src::Kw(_))
        && keepdim.is_some()
        && site.args.is_empty();
    let rule = match (name, legacy) {
        ("mean", true) => rules::MEAN_DIM1,
        ("sum", true) => rules::SUM_DIM1,
        ("mean", false) => rules::MEAN_STATIC,
        _ => rules::SUM_STATIC,
    };
    let f = if name == "mean" {
        crate::entry::Rt::MeanDim
    } else {
        crate::entry::Rt::SumDim
    };
    plan_f32(
        rule,
        result,
        Op::Reduce {
            f,
            t,
            dim: d,
            keepdim: keep,
        },
    )
}

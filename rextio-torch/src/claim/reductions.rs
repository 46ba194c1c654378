//! The static-dim reductions of `rules::REDUCTIONS` (`mean`, `sum`, `amax`, `amin`): receiver
//! methods or exact `torch.*` functions, static dim (negative dims normalised against the static
//! rank); `t.max(dim)` returning `(values, indices)`.

use super::{
    bool_literal, dim_args, int_literal, norm_dim, operand, plan_f32, reject, Arg, DimArgs, NoPlan,
    Op, Plan, Src,
};
use crate::codes;
use crate::rules::{self, ReductionOp};
use crate::types::{i64_cpu_1d, F32_CPU};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, ValueType};

/// Whether a site is written exactly `t.mean(dim=1, keepdim=False)` (or `sum`, keywords in
/// either order) on a rank-2 float32 receiver: the form with its own, older rule id (the claim
/// table routes it at a higher priority than the general static-dim rule).
pub fn is_dim1_form(site: &ClaimSite) -> bool {
    // The same form parser the planner uses, so the guard and the plan cannot disagree.
    let Ok(DimArgs {
        dim: Some(dim @ Src::Kw(_)),
        keepdim: Some(keepdim),
        ..
    }) = dim_args(site, true, |_| false)
    else {
        return false;
    };
    site.receiver.as_ref().and_then(super::rank) == Some(2)
        && site.args.is_empty()
        && int_literal(operand(site, dim)) == Some(1)
        && bool_literal(operand(site, keepdim)) == Some(false)
}

/// `torch.<name>(t, dim[, keepdim=b])` for a row of [`rules::REDUCTIONS`].
pub fn plan_function(site: &ClaimSite) -> Result<Plan, NoPlan> {
    plan(
        site,
        super::function_row(site, ReductionOp::named)?,
        false,
        false,
    )
}

/// `t.<name>(dim[, keepdim=b])` for a row of [`rules::REDUCTIONS`].
pub fn plan_method(site: &ClaimSite) -> Result<Plan, NoPlan> {
    plan(
        site,
        super::method_row(site, ReductionOp::named)?,
        true,
        false,
    )
}

/// `t.<name>(dim=1, keepdim=False)` written exactly so ([`is_dim1_form`]): the row's older rule.
pub fn plan_dim1(site: &ClaimSite) -> Result<Plan, NoPlan> {
    plan(
        site,
        super::method_row(site, ReductionOp::named)?,
        true,
        true,
    )
}

/// Plan a reduction of `row`. `method`: receiver form (`t.mean(...)`), else
/// `torch.mean(t, ...)`; `dim1_form`: the site is [`is_dim1_form`] and gets that form's rule.
fn plan(
    site: &ClaimSite,
    row: &'static ReductionOp,
    method: bool,
    dim1_form: bool,
) -> Result<Plan, NoPlan> {
    let name = row.name;
    let shown = if method {
        format!(".{name}(...)")
    } else {
        format!("torch.{name}(...)")
    };
    let form = |why: &str| {
        reject(
            codes::REDUCTION_FORM,
            format!("{shown} {why}; expected a literal dim in range given once and keepdim omitted or a named bool literal"),
            &format!("write .{name}(dim=1) or torch.{name}(t, 0, keepdim=True)"),
        )
    };
    let DimArgs { t, dim, keepdim } = dim_args(site, true, |_| false).map_err(|why| form(&why))?;
    let Some(dim_src) = dim else {
        return Err(form("reduces the whole tensor (no dim)"));
    };
    let Some(raw) = int_literal(operand(site, dim_src)) else {
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
    let d = norm_dim(raw, r).unwrap_or(raw);
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
                "use a dim within the tensor's rank (0, 1, -1 or -2)",
            ))
        }
    };
    let rule = match (dim1_form, row.dim1_rule) {
        (true, Some(rule)) => rule,
        _ => row.rule,
    };
    plan_f32(
        rule,
        result,
        Op::Reduce {
            f: row.entry,
            t,
            dim: d,
            keepdim: keep,
        },
    )
}

/// `t.max(dim[, keepdim=b])` / `torch.max(t, dim[, keepdim=b])` -> `(values, indices)`.
pub fn plan_max_dim(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let shown = if site.receiver.is_some() {
        ".max"
    } else {
        "torch.max"
    };
    let form = |why: &str| {
        reject(
            codes::MAX_DIM_FORM,
            format!("{shown} {why}"),
            "write values, indices = t.max(dim=1) on a rank-2 tensor, or torch.maximum(a, b) for an elementwise maximum",
        )
    };
    let DimArgs { t, dim, keepdim } = dim_args(site, true, |_| false).map_err(|why| form(&why))?;
    let Some(dim_src) = dim else {
        return Err(form("without a dim reduces to rank 0"));
    };
    let Some(dim_op) = operand(site, dim_src) else {
        return Err(ClaimOutcome::NotCovered);
    };
    let Some(raw) = int_literal(Some(dim_op)) else {
        return Err(form(&format!(
            "with {} as its second operand is not lowered; the dim must be an int literal",
            super::describe(dim_op)
        )));
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
    let Some(d) = norm_dim(raw, r) else {
        return Err(form(&format!(
            "with dim={raw} on a rank-{r} tensor is out of range"
        )));
    };
    match (r, keep) {
        (2, false) | (1, true) => {}
        (2, true) => return Err(form("with keepdim=True on a rank-2 tensor would return int64 rank-2 indices, which have no registered type")),
        _ => return Err(form("on a rank-1 tensor without keepdim=True would return rank 0")),
    }
    let Some(values) = F32_CPU.ty(1) else {
        return Err(ClaimOutcome::NotCovered);
    };
    Ok(Plan {
        rule_id: rules::MAX_DIM.to_owned(),
        result: ValueType::Tuple(vec![values, i64_cpu_1d()]),
        op: Op::Call {
            f: crate::entry::Rt::MaxDim,
            args: vec![Arg::Tensor(t), Arg::Int(d), Arg::Bool(keep)],
        },
    })
}

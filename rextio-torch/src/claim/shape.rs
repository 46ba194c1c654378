//! Shapes and layout: `t()`, `.T`, `transpose`, `unsqueeze` (materialised, never views),
//! `squeeze` (always rejected: its rank is not static), and shape queries as exact ints
//! (`size`, `dim`, `ndim`, `numel`, `shape`, `len`).

use super::{
    bind, describe, f32_rank, get, int_literal, norm_dim, operand, plan_f32, reject, subject, Arg,
    NoPlan, Op, Plan, Src,
};
use crate::codes;
use crate::entry::Rt;
use crate::rules::{self, Layout, LayoutOp, Query};
use crate::types::{BOOL_CPU, F32_CPU, I64_CPU_1D};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Operand, ValueType};

/// The static rank of any tensor of ours (float32, bool or int64), if it is one.
fn any_rank(op: &Operand) -> Option<u8> {
    if op.literal.is_some() {
        return None;
    }
    let k = op.key()?;
    F32_CPU
        .rank(k)
        .or_else(|| BOOL_CPU.rank(k))
        .or_else(|| (k.as_str() == I64_CPU_1D).then_some(1))
}

fn query_form(what: &str, why: String) -> NoPlan {
    reject(
        codes::SHAPE_QUERY_FORM,
        format!("{what} {why}"),
        "write t.size(1), t.size(dim=-1), t.dim(), t.numel(), t.ndim, t.shape or len(t)",
    )
}

fn int_plan(rule: &str, result: ValueType, f: Rt, args: Vec<Arg>) -> Result<Plan, NoPlan> {
    Ok(Plan {
        rule_id: rule.to_owned(),
        result,
        op: Op::Call { f, args },
    })
}

fn shape_tuple(r: u8) -> (ValueType, Rt) {
    let f = if r == 1 { Rt::Shape1 } else { Rt::Shape2 };
    (ValueType::Tuple(vec![ValueType::Int; usize::from(r)]), f)
}

fn ranked(site: &ClaimSite, what: &str) -> Result<u8, NoPlan> {
    let Some(recv) = &site.receiver else {
        return Err(ClaimOutcome::NotCovered);
    };
    any_rank(recv).ok_or_else(|| query_form(what, format!("on {} is not lowered", describe(recv))))
}

/// A spelling of the shape-query table ([`rules::QUERIES`]): the first row it spells says what
/// it answers (the two rows spelled `t.size` are told apart by their arguments).
pub fn plan_query(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let Some(row) = rules::QUERIES
        .iter()
        .find(|q| q.sites.iter().any(|s| s.spells(site)))
    else {
        return Err(ClaimOutcome::NotCovered);
    };
    match row.query {
        Query::Len => plan_len(site),
        Query::SizeDim | Query::SizeTuple => plan_size(site),
        Query::Dim => plan_int_query(site, &format!(".{}()", site.target), rules::DIM, Rt::Ndim),
        Query::Numel => plan_int_query(site, ".numel()", rules::NUMEL, Rt::Numel),
        Query::Ndim => plan_int_query(site, ".ndim", rules::NDIM_ATTR, Rt::Ndim),
        Query::Shape => plan_shape(site),
    }
}

/// `len(t)`: the size of dim 0.
fn plan_len(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let ([t], true) = (site.args.as_slice(), site.keywords.is_empty()) else {
        return Err(ClaimOutcome::NotCovered);
    };
    if !super::is_ours(t) {
        return Err(ClaimOutcome::NotCovered);
    }
    if any_rank(t).is_none() {
        return Err(query_form(
            "len()",
            format!("of {} is not lowered", describe(t)),
        ));
    }
    int_plan(
        rules::LEN,
        ValueType::Int,
        Rt::SizeDim,
        vec![Arg::Tensor(Src::Arg(0)), Arg::Int(0)],
    )
}

/// `t.size()` / `t.size(d)` / `t.size(dim=d)`.
fn plan_size(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let r = ranked(site, ".size()")?;
    let bound = bind(site, &["dim"], &[]).map_err(|why| query_form(".size()", why))?;
    let Some(src) = get(&bound, "dim") else {
        let (ty, f) = shape_tuple(r);
        return int_plan(rules::SIZE_TUPLE, ty, f, vec![Arg::Tensor(Src::Recv)]);
    };
    let Some(d) = int_literal(operand(site, src)) else {
        return Err(query_form(
            ".size()",
            "needs its dim as an int literal".into(),
        ));
    };
    let Some(d) = norm_dim(d, r) else {
        return Err(query_form(
            ".size()",
            format!("with dim={d} on a rank-{r} tensor is out of range"),
        ));
    };
    int_plan(
        rules::SIZE_DIM,
        ValueType::Int,
        Rt::SizeDim,
        vec![Arg::Tensor(Src::Recv), Arg::Int(d)],
    )
}

/// A query of the receiver alone answered as one int by `f` (`t.dim()`, `t.ndimension()`,
/// `t.numel()`, `t.ndim`): no arguments.
fn plan_int_query(site: &ClaimSite, shown: &str, rule: &str, f: Rt) -> Result<Plan, NoPlan> {
    ranked(site, shown)?;
    if !site.args.is_empty() || !site.keywords.is_empty() {
        return Err(query_form(shown, "takes no arguments".into()));
    }
    int_plan(rule, ValueType::Int, f, vec![Arg::Tensor(Src::Recv)])
}

/// `t.shape`.
fn plan_shape(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let r = ranked(site, ".shape")?;
    let (ty, f) = shape_tuple(r);
    int_plan(rules::SHAPE_ATTR, ty, f, vec![Arg::Tensor(Src::Recv)])
}

/// Attribute reads other than the shape queries: `t.T`, and any other attribute refused.
pub fn plan_attribute(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let Some(recv) = &site.receiver else {
        return Err(ClaimOutcome::NotCovered);
    };
    match site.target.as_str() {
        "T" => {
            let r = f32_rank(recv, ".T")?;
            if r != 2 {
                return Err(reject(
                    codes::VIEW_FORM,
                    format!(".T on a rank-{r} tensor is not lowered (eager warns that it is deprecated)"),
                    "use .T on rank-2 tensors only; a rank-1 tensor is its own transpose",
                ));
            }
            plan_f32(
                rules::T_ATTR,
                2,
                Op::Call {
                    f: Rt::Transpose,
                    args: vec![Arg::Tensor(Src::Recv), Arg::Int(0), Arg::Int(1)],
                },
            )
        }
        other => Err(reject(
            codes::UNSUPPORTED_SURFACE,
            format!("tensor attribute `.{other}` is not in the native rextio-torch surface"),
            "keep this function in Python; .T, .ndim and .shape are lowered",
        )),
    }
}

/// `torch.<name>(t, ...)` for a row of [`rules::LAYOUT`].
pub fn plan_layout_function(site: &ClaimSite) -> Result<Plan, NoPlan> {
    plan_layout(site, super::function_row(site, LayoutOp::named)?)
}

/// `t.<name>(...)` for a row of [`rules::LAYOUT`].
pub fn plan_layout_method(site: &ClaimSite) -> Result<Plan, NoPlan> {
    plan_layout(site, super::method_row(site, LayoutOp::named)?)
}

fn plan_layout(site: &ClaimSite, row: &'static LayoutOp) -> Result<Plan, NoPlan> {
    match row.op {
        Layout::Flatten => plan_flatten(site, row),
        _ => plan_view(site, row),
    }
}

/// The rule id of a row that has one.
fn rule_of(row: &LayoutOp) -> Result<&'static str, NoPlan> {
    row.rule.map(|d| d.id).ok_or(ClaimOutcome::NotCovered)
}

/// `t.t()`, `t.transpose(d0, d1)`, `t.unsqueeze(d)`, `t.squeeze(...)` and their `torch.` forms.
fn plan_view(site: &ClaimSite, row: &'static LayoutOp) -> Result<Plan, NoPlan> {
    let name = row.name;
    let method = site.receiver.is_some();
    let shown = if method {
        format!(".{name}()")
    } else {
        format!("torch.{name}()")
    };
    let form = |why: String| {
        reject(
            codes::VIEW_FORM,
            format!("{shown} {why}"),
            "write t.t(), t.T, t.transpose(0, 1) or t.unsqueeze(0) with int literal dims",
        )
    };
    let params = if method { &row.params[1..] } else { row.params };
    let bound = bind(site, params, &[]).map_err(form)?;
    let (t, tensor) = subject(site, &bound, || form("has no tensor".into()))?;
    if row.op == Layout::Squeeze {
        return Err(reject(
            codes::SQUEEZE_RANK,
            format!("{shown} is not lowered: its result rank depends on whether the dim's size is 1 at run time"),
            "keep this function in Python, or reduce the size-1 dim with .sum(dim=d) / .mean(dim=d)",
        ));
    }
    let r = f32_rank(tensor, &shown)?;
    let lit = |p: &str| -> Result<i64, NoPlan> {
        let Some(src) = get(&bound, p) else {
            return Err(form(format!("needs `{p}`")));
        };
        int_literal(operand(site, src))
            .ok_or_else(|| form(format!("needs `{p}` as an int literal")))
    };
    let rule = rule_of(row)?;
    match row.op {
        Layout::T => {
            let (d0, d1) = if r == 2 { (0, 1) } else { (0, 0) };
            plan_f32(
                rule,
                r,
                Op::Call {
                    f: Rt::Transpose,
                    args: vec![Arg::Tensor(t), Arg::Int(d0), Arg::Int(d1)],
                },
            )
        }
        Layout::Transpose => {
            let (a, b) = (lit("dim0")?, lit("dim1")?);
            let (Some(d0), Some(d1)) = (norm_dim(a, r), norm_dim(b, r)) else {
                return Err(form(format!(
                    "with dims ({a}, {b}) on a rank-{r} tensor is out of range"
                )));
            };
            plan_f32(
                rule,
                r,
                Op::Call {
                    f: Rt::Transpose,
                    args: vec![Arg::Tensor(t), Arg::Int(d0), Arg::Int(d1)],
                },
            )
        }
        Layout::Unsqueeze => {
            let d = lit("dim")?;
            if r != 1 {
                return Err(form(format!(
                    "on a rank-{r} tensor would produce rank {}, which has no registered type",
                    r + 1
                )));
            }
            let Some(d) = norm_dim(d, r + 1) else {
                return Err(form(format!(
                    "with dim={d} on a rank-1 tensor is out of range"
                )));
            };
            plan_f32(
                rule,
                2,
                Op::Call {
                    f: Rt::Unsqueeze,
                    args: vec![Arg::Tensor(t), Arg::Int(d)],
                },
            )
        }
        Layout::Squeeze | Layout::Flatten => Err(ClaimOutcome::NotCovered),
    }
}

/// `t.flatten([start_dim][, end_dim])` / `torch.flatten(t[, start_dim][, end_dim])` on a rank-1
/// or rank-2 float32 tensor with int literal dims (defaults 0 and -1): the same tensor (one dim,
/// or none, flattened) or rank 1 (both dims of a rank-2 tensor), always fresh memory.
fn plan_flatten(site: &ClaimSite, row: &'static LayoutOp) -> Result<Plan, NoPlan> {
    let method = site.receiver.is_some();
    let shown = if method {
        ".flatten()"
    } else {
        "torch.flatten()"
    };
    let form = |why: String| {
        reject(
            codes::VIEW_FORM,
            format!("{shown} {why}"),
            "write t.flatten(), t.flatten(1) or torch.flatten(t, start_dim, end_dim) with int literal dims",
        )
    };
    let params = if method { &row.params[1..] } else { row.params };
    let bound = bind(site, params, &[]).map_err(form)?;
    let (t, tensor) = subject(site, &bound, || form("has no tensor".into()))?;
    let r = f32_rank(tensor, shown)?;
    let lit = |p: &str, default: i64| -> Result<i64, NoPlan> {
        match get(&bound, p) {
            None => Ok(default),
            Some(src) => int_literal(operand(site, src))
                .ok_or_else(|| form(format!("needs `{p}` as an int literal"))),
        }
    };
    let (s, e) = (lit("start_dim", 0)?, lit("end_dim", -1)?);
    let (Some(ns), Some(ne)) = (norm_dim(s, r), norm_dim(e, r)) else {
        return Err(form(format!(
            "with dims ({s}, {e}) on a rank-{r} tensor is out of range"
        )));
    };
    if ns > ne {
        return Err(form(format!(
            "with start_dim {s} after end_dim {e} raises in eager"
        )));
    }
    let result = if r == 2 && ns == 0 && ne == 1 { 1 } else { r };
    plan_f32(
        rule_of(row)?,
        result,
        Op::Call {
            f: Rt::Flatten,
            args: vec![Arg::Tensor(t), Arg::Int(ns), Arg::Int(ne)],
        },
    )
}

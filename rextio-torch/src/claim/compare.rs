//! Tensor comparisons (`< <= > >= == !=`) producing bool tensors, and `torch.where` over a bool
//! condition.

use super::{describe, is_number, is_ours, rank, reject, Arg, NoPlan, Op, Plan, Src};
use crate::entry::Rt;
use crate::types::{BOOL_CPU, F32_CPU};
use crate::{codes, rules};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Operand};

fn bool_plan(rule: String, r: u8, op: Op) -> Result<Plan, NoPlan> {
    match BOOL_CPU.ty(r) {
        Some(result) => Ok(Plan {
            rule_id: rule,
            result,
            op,
        }),
        None => Err(ClaimOutcome::NotCovered),
    }
}

/// `a <op> b` with at least one operand of ours.
pub fn plan_compare(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let [a, b] = site.args.as_slice() else {
        return Err(ClaimOutcome::NotCovered);
    };
    let op = site.target.as_str();
    let Some(&rules::CompareOp {
        name,
        tensor: tensor_f,
        scalar: scalar_f,
        mirrored,
        ..
    }) = rules::CompareOp::of(op)
    else {
        return Err(reject(
            codes::COMPARE_FORM,
            format!("tensor comparison `{op}` is not lowered (`< <= > >= == !=` are)"),
            "keep this function in Python",
        ));
    };
    let bad = |x: &Operand, y: &Operand| {
        reject(
            codes::COMPARE_FORM,
            format!(
                "`{op}` between {} and {} is not lowered; comparisons take float32 tensors of ranks 1/2 or a float32 tensor and an int or float",
                describe(x),
                describe(y)
            ),
            "compare float32 tensors, or a float32 tensor with a Python number",
        )
    };
    if is_ours(a) && is_ours(b) {
        let r = match (rank(a), rank(b)) {
            (Some(x), Some(y)) if x == y => x,
            (Some(2), Some(1)) | (Some(1), Some(2)) => 2,
            _ => return Err(bad(a, b)),
        };
        let shape = if rank(a) == rank(b) {
            "same-rank"
        } else {
            "2d-1d-broadcast"
        };
        return bool_plan(
            rules::compare(name, shape),
            r,
            Op::Call {
                f: tensor_f,
                args: vec![Arg::Tensor(Src::Arg(0)), Arg::Tensor(Src::Arg(1))],
            },
        );
    }
    // One tensor and one number. `s op t` is evaluated by eager as `t mirrored(op) s`.
    let (t, s, f) = if is_ours(a) {
        (Src::Arg(0), Src::Arg(1), scalar_f)
    } else {
        let Some(swapped) = rules::CompareOp::of(mirrored) else {
            return Err(ClaimOutcome::NotCovered);
        };
        (Src::Arg(1), Src::Arg(0), swapped.scalar)
    };
    let (Some(to), Some(so)) = (super::operand(site, t), super::operand(site, s)) else {
        return Err(ClaimOutcome::NotCovered);
    };
    let (Some(r), true) = (rank(to), is_number(so)) else {
        return Err(bad(a, b));
    };
    bool_plan(
        rules::compare(name, "scalar"),
        r,
        Op::Call {
            f,
            args: vec![Arg::Tensor(t), Arg::Scalar(s)],
        },
    )
}

/// A where branch: a float32 tensor (its rank) or a number (`None`).
fn branch(op: &Operand) -> Result<Option<u8>, ()> {
    if let Some(r) = rank(op) {
        Ok(Some(r))
    } else if is_number(op) {
        Ok(None)
    } else {
        Err(())
    }
}

/// `torch.where(cond, a, b)`.
pub fn plan_where(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let form = |why: String| {
        reject(
            codes::WHERE_FORM,
            format!("torch.where {why}"),
            "write torch.where(mask, a, b) with a bool tensor mask and float32 tensor or number branches",
        )
    };
    if !site.keywords.is_empty() {
        return Err(form("with keywords is not lowered".into()));
    }
    let [c, a, b] = site.args.as_slice() else {
        return Err(form(format!(
            "with {} positional argument(s) is not lowered; it takes (condition, input, other)",
            site.args.len()
        )));
    };
    let Some(cr) = c
        .key()
        .filter(|_| c.literal.is_none())
        .and_then(|k| BOOL_CPU.rank(k))
    else {
        return Err(form(format!(
            "needs a bool tensor condition, got {}",
            describe(c)
        )));
    };
    let (Ok(ar), Ok(br)) = (branch(a), branch(b)) else {
        return Err(form(format!(
            "branches must be float32 tensors of rank 1 or 2 or Python numbers, got {} and {}",
            describe(a),
            describe(b)
        )));
    };
    let (f, kind, args) = match (ar, br) {
        (Some(_), Some(_)) => (
            Rt::WhereTensors,
            "tensors",
            [Arg::Tensor(Src::Arg(1)), Arg::Tensor(Src::Arg(2))],
        ),
        (Some(_), None) => (
            Rt::WhereTensorScalar,
            "tensor-scalar",
            [Arg::Tensor(Src::Arg(1)), Arg::Scalar(Src::Arg(2))],
        ),
        (None, Some(_)) => (
            Rt::WhereScalarTensor,
            "tensor-scalar",
            [Arg::Scalar(Src::Arg(1)), Arg::Tensor(Src::Arg(2))],
        ),
        (None, None) => {
            if matches!(a.ty, Some(rextio_plugin_api::ValueType::Int))
                && matches!(b.ty, Some(rextio_plugin_api::ValueType::Int))
            {
                return Err(form(
                    "with two int branches would produce an int64 tensor, which has no registered rank-1/2 type".into(),
                ));
            }
            (
                Rt::WhereScalars,
                "scalars",
                [Arg::Scalar(Src::Arg(1)), Arg::Scalar(Src::Arg(2))],
            )
        }
    };
    let r = [Some(cr), ar, br].into_iter().flatten().max().unwrap_or(cr);
    let Some(result) = F32_CPU.ty(r) else {
        return Err(ClaimOutcome::NotCovered);
    };
    let [x, y] = args;
    Ok(Plan {
        rule_id: rules::where_rule(kind),
        result,
        op: Op::Call {
            f,
            args: vec![Arg::Tensor(Src::Arg(0)), x, y],
        },
    })
}

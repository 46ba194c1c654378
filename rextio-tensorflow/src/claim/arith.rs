//! Elementwise arithmetic (`+ * - /` and `tf.add/multiply/subtract/divide`, also under
//! `tf.math.`) over the rank matrix, and same-rank `tf.maximum` / `tf.minimum`.

use super::{describe, keyword_names, plan_f32, reject, tensor, NoPlan, Plan, Src, Tensor};
use crate::codes;
use crate::rules::{self, Arith, ARITH, EXTREMA};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Operand, ValueType};

/// A Python scalar (int, float or bool, literal or not): excluded from the tensor surface.
fn is_scalar(op: &Operand) -> bool {
    matches!(
        op.ty,
        Some(ValueType::Int) | Some(ValueType::Float) | Some(ValueType::Bool)
    )
}

/// The result rank of a tensor pair in the matrix 2/2, 1/1, 2/1, 1/2.
fn pair_rank(a: Tensor, b: Tensor) -> Option<u8> {
    match (a, b) {
        (Tensor::F32(x), Tensor::F32(y)) if x == y => Some(x),
        (Tensor::F32(2), Tensor::F32(1)) | (Tensor::F32(1), Tensor::F32(2)) => Some(2),
        _ => None,
    }
}

fn plan_pair(
    a: &Arith,
    binop: bool,
    shown: &str,
    l: &Operand,
    r: &Operand,
) -> Result<Plan, NoPlan> {
    let code = if binop { a.binop_code } else { a.call_code };
    let suggestion = "use two float32 tensors of ranks 2/2, 1/1, 2/1 or 1/2";
    if let Some(s) = [l, r].into_iter().find(|o| is_scalar(o)) {
        return Err(reject(
            code,
            format!(
                "{shown} with {} is not lowered; scalar operands are excluded",
                describe(s)
            ),
            "make the scalar a float32 tensor argument, or keep this function in Python",
        ));
    }
    let (tl, tr) = (tensor(l, shown)?, tensor(r, shown)?);
    match pair_rank(tl, tr) {
        Some(rank) => plan_f32(
            rules::arith(a.name, binop),
            rank,
            a.rt,
            vec![Src::Arg(0), Src::Arg(1)],
        ),
        None => Err(reject(
            code,
            format!(
                "{shown} of {} and {} is not lowered",
                describe(l),
                describe(r)
            ),
            suggestion,
        )),
    }
}

/// `tf.add(a, b)` etc.: two positional tensors, no keywords.
pub fn plan_call(site: &ClaimSite, a: &Arith) -> Result<Plan, NoPlan> {
    let shown = format!("tf.{}", &site.target[super::PREFIX.len()..]);
    let suggestion = format!("write tf.{}(a, b) with two annotated tensors", a.targets[0]);
    if !site.keywords.is_empty() {
        return Err(reject(
            a.call_code,
            format!(
                "{shown} with keyword(s) {} is not lowered",
                keyword_names(site)
            ),
            &suggestion,
        ));
    }
    let [l, r] = site.args.as_slice() else {
        return Err(reject(
            a.call_code,
            format!(
                "{shown} takes exactly two positional tensors here, got {}",
                site.args.len()
            ),
            &suggestion,
        ));
    };
    plan_pair(a, false, &shown, l, r)
}

/// A binary operator with at least one operand of ours.
pub fn plan_binop(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let [l, r] = site.args.as_slice() else {
        return Err(ClaimOutcome::NotCovered);
    };
    let op = site.target.as_str();
    // `a op= b` (plugin API 1.17): TensorFlow tensors are immutable and define no in-place
    // operators, so Python rebinds `a` to `a op b`.
    let base = op.strip_suffix('=').unwrap_or(op);
    let Some(a) = ARITH.iter().find(|a| a.op == base) else {
        let suggestion = if op == "@" {
            "write tf.matmul(a, b)"
        } else {
            "keep this function in Python"
        };
        return Err(reject(
            codes::UNSUPPORTED,
            format!("operator `{op}` on TensorFlow tensors is not lowered (`+ - * /` are)"),
            suggestion,
        ));
    };
    plan_pair(a, true, &format!("`{op}`"), l, r)
}

/// [`plan_call`] with the row of [`crate::rules::ARITH`] the site's target names.
pub fn plan_call_site(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let target = site.target.strip_prefix(super::PREFIX);
    match crate::rules::ARITH
        .iter()
        .find(|a| a.targets.iter().any(|t| Some(*t) == target))
    {
        Some(a) => plan_call(site, a),
        None => Err(ClaimOutcome::NotCovered),
    }
}

/// Top-level `tf.maximum(a, b)` / `tf.minimum(a, b)`: equal ranks only.
pub fn plan_extremum(site: &ClaimSite, name: &str) -> Result<Plan, NoPlan> {
    let Some((f, rt, _, code)) = EXTREMA.iter().find(|(n, ..)| *n == name).copied() else {
        return Err(ClaimOutcome::NotCovered);
    };
    let shown = format!("tf.{f}");
    let suggestion = format!("write tf.{f}(a, b) with two float32 tensors of the same rank");
    if !site.keywords.is_empty() {
        return Err(reject(
            code,
            format!(
                "{shown} with keyword(s) {} is not lowered",
                keyword_names(site)
            ),
            &suggestion,
        ));
    }
    let [l, r] = site.args.as_slice() else {
        return Err(reject(
            code,
            format!(
                "{shown} takes exactly two positional tensors here, got {}",
                site.args.len()
            ),
            &suggestion,
        ));
    };
    if let Some(s) = [l, r]
        .into_iter()
        .find(|o| o.literal.is_some() || is_scalar(o))
    {
        return Err(reject(
            code,
            format!(
                "{shown} with {} is not lowered; both operands must be non-literal tensors",
                describe(s)
            ),
            &suggestion,
        ));
    }
    match (tensor(l, &shown)?, tensor(r, &shown)?) {
        (Tensor::F32(x), Tensor::F32(y)) if x == y => {
            plan_f32(rules::extremum(f), x, rt, vec![Src::Arg(0), Src::Arg(1)])
        }
        _ => Err(reject(
            code,
            format!(
                "{shown} of {} and {} is not lowered; mixed ranks and int64 are excluded",
                describe(l),
                describe(r)
            ),
            &suggestion,
        )),
    }
}

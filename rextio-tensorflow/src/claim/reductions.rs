//! `tf.reduce_mean` / `tf.reduce_sum` (also under `tf.math.`): one rank-2 tensor, literal axis
//! 0 or 1 (second positional or `axis=`, once), `keepdims` omitted or a named bool literal.

use super::{
    axis_operand, bool_literal, int_literal, plan_f32, reject, tensor, NoPlan, Plan, Src, Tensor,
    PREFIX,
};
use crate::entry::Rt;
use crate::{codes, rules};
use rextio_plugin_api::ClaimSite;

/// The codes of `which`'s rejections: the `axis=1` form's (also every malformed form's), and
/// the other literal axes'.
fn codes_of(mean: bool) -> (&'static str, &'static str) {
    if mean {
        (codes::MEAN, codes::MEAN_LITERAL_AXIS)
    } else {
        (codes::SUM, codes::SUM_LITERAL_AXIS)
    }
}

/// The form of a reduction: its literal axis (0 or 1) and keepdims, or the rejection of a
/// malformed one.
fn form_of(site: &ClaimSite, mean: bool) -> Result<(i64, bool), NoPlan> {
    let (axis1_code, _) = codes_of(mean);
    let shown = format!("tf.{}", site.target.get(PREFIX.len()..).unwrap_or_default());
    let op = if mean { "reduce_mean" } else { "reduce_sum" };
    let suggestion = format!("write tf.{op}(x, axis=1) or tf.{op}(x, 0, keepdims=True)");
    let form = |why: &str| {
        reject(
            axis1_code,
            format!("{shown} {why}; expected one rank-2 tensor, a literal axis 0 or 1 given once and keepdims omitted or a named bool literal"),
            &suggestion,
        )
    };
    if site.args.is_empty() {
        return Err(form("has no positional tensor"));
    }
    if site.args.len() == 3 {
        return Err(form("has a positional keepdims"));
    }
    let (axis, extra) = axis_operand(site, &["keepdims"]).map_err(|why| form(&why))?;
    let Some(axis) = axis else {
        return Err(form("reduces the whole tensor (no axis)"));
    };
    let Some(d) = int_literal(axis) else {
        return Err(form("has an axis that is not an int literal"));
    };
    if d != 0 && d != 1 {
        return Err(form(&format!("with axis={d} is not lowered")));
    }
    let keep = match extra.first() {
        None => false,
        Some((_, v)) => {
            bool_literal(v).ok_or_else(|| form("has a keepdims that is not a bool literal"))?
        }
    };
    Ok((d, keep))
}

/// Whether a `tf.reduce_mean` site is the `axis=1`, keepdims-False form, which has its own,
/// older rule id (the claim table routes it at a higher priority than the literal-axis rule).
pub fn is_axis1_mean(site: &ClaimSite) -> bool {
    matches!(form_of(site, true), Ok((1, false)))
}

/// [`is_axis1_mean`] for `tf.reduce_sum`.
pub fn is_axis1_sum(site: &ClaimSite) -> bool {
    matches!(form_of(site, false), Ok((1, false)))
}

/// Plan a reduction; `which` is `mean` or `sum`; `axis1_form`: the site is the `axis=1`,
/// keepdims-False form and gets that form's rule and code.
pub fn plan(site: &ClaimSite, which: &str, axis1_form: bool) -> Result<Plan, NoPlan> {
    let mean = which == "mean";
    let (axis1_code, literal_axis_code) = codes_of(mean);
    let shown = format!("tf.{}", site.target.get(PREFIX.len()..).unwrap_or_default());
    let (d, keep) = form_of(site, mean)?;
    let code = if axis1_form {
        axis1_code
    } else {
        literal_axis_code
    };
    match tensor(&site.args[0], &shown)? {
        Tensor::F32(2) => {}
        Tensor::F32(r) => {
            return Err(reject(
                code,
                format!(
                "{shown} on a rank-{r} float32 tensor is not lowered; the operand must be rank 2"
            ),
                "reduce a TensorF32Cpu2D operand",
            ))
        }
        Tensor::I64 => {
            return Err(reject(
                code,
                format!("{shown} on an int64 classification result is not lowered"),
                "reduce float32 tensors",
            ))
        }
    }
    let rule = match (mean, axis1_form) {
        (true, true) => rules::MEAN_AXIS1,
        (true, false) => rules::MEAN_LITERAL_AXIS,
        (false, true) => rules::SUM_AXIS1,
        (false, false) => rules::SUM_LITERAL_AXIS,
    };
    let f = match (mean, d, keep) {
        (true, 0, false) => Rt::ReduceMeanAxis0,
        (true, 0, true) => Rt::ReduceMeanAxis0Keepdims,
        (true, _, false) => Rt::ReduceMeanAxis1,
        (true, _, true) => Rt::ReduceMeanAxis1Keepdims,
        (false, 0, false) => Rt::ReduceSumAxis0,
        (false, 0, true) => Rt::ReduceSumAxis0Keepdims,
        (false, _, false) => Rt::ReduceSumAxis1,
        (false, _, true) => Rt::ReduceSumAxis1Keepdims,
    };
    plan_f32(rule, if keep { 2 } else { 1 }, f, vec![Src::Arg(0)])
}

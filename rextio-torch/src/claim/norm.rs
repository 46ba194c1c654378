//! `F.layer_norm` over the last dim.

use super::{
    bind, bool_literal, describe, f32_rank, get, operand, plan_f32, rank, reject, Arg, NoPlan, Op,
    Plan, Src,
};
use crate::entry::Rt;
use crate::{codes, rules};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Literal, ValueType};

/// Default `eps` of `F.layer_norm`.
const DEFAULT_EPS: f64 = 1e-5;

/// `F.layer_norm(x, (n,), weight=None, bias=None, eps=1e-5)`.
pub fn plan_layer_norm(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let form = |why: String| {
        reject(
            codes::LAYER_NORM_FORM,
            format!("F.layer_norm {why}"),
            "write F.layer_norm(x, (x.shape[-1],), weight, bias, eps) over the last dim",
        )
    };
    let bound = bind(
        site,
        &["input", "normalized_shape", "weight", "bias", "eps"],
        &[],
    )
    .map_err(form)?;
    let (Some(x), Some(ns)) = (get(&bound, "input"), get(&bound, "normalized_shape")) else {
        return Err(form("is missing its input or normalized_shape".into()));
    };
    let (Some(xo), Some(nso)) = (operand(site, x), operand(site, ns)) else {
        return Err(ClaimOutcome::NotCovered);
    };
    let r = f32_rank(xo, "F.layer_norm")?;
    if nso.literal.is_some() || nso.ty != Some(ValueType::Tuple(vec![ValueType::Int])) {
        return Err(form(format!(
            "needs normalized_shape as a one-element tuple of int (the last dim), got {}",
            describe(nso)
        )));
    }
    let w = affine_part(site, &bound, "weight", &form)?;
    let b = affine_part(site, &bound, "bias", &form)?;
    let eps = float_part(site, &bound, "eps", &form)?.map_or(Arg::Float(DEFAULT_EPS), Arg::Scalar);
    plan_f32(
        rules::LAYER_NORM,
        r,
        Op::Call {
            f: Rt::LayerNorm,
            args: vec![Arg::Tensor(x), Arg::TupleFirst(ns), w, b, eps],
        },
    )
}

/// `F.batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
/// momentum=0.1, eps=1e-5)` in eval mode on a rank-2 input: eager's kernel.
pub fn plan_batch_norm(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let form = |why: String| {
        reject(
            codes::BATCH_NORM_FORM,
            format!("F.batch_norm {why}"),
            "call it in eval mode: F.batch_norm(x, running_mean, running_var, weight, bias, training=False, eps=eps) on a rank-2 input",
        )
    };
    let bound = bind(
        site,
        &[
            "input",
            "running_mean",
            "running_var",
            "weight",
            "bias",
            "training",
            "momentum",
            "eps",
        ],
        &[],
    )
    .map_err(form)?;
    let Some(x) = get(&bound, "input") else {
        return Err(form("is missing its input".into()));
    };
    let Some(xo) = operand(site, x) else {
        return Err(ClaimOutcome::NotCovered);
    };
    let r = f32_rank(xo, "F.batch_norm")?;
    if r != 2 {
        return Err(form(format!(
            "needs a rank-2 input (N, C), got {}",
            describe(xo)
        )));
    }
    if let Some(t) = get(&bound, "training") {
        if bool_literal(operand(site, t)) != Some(false) {
            return Err(form(
                "with training other than a literal False updates the running statistics in place"
                    .into(),
            ));
        }
    }
    let stat = |name: &str| match given(site, &bound, name) {
        Some(s) if operand(site, s).and_then(rank) == Some(1) => Ok(Arg::Tensor(s)),
        s => {
            let found = s
                .and_then(|s| operand(site, s))
                .map_or_else(|| "None".to_owned(), describe);
            Err(form(format!(
                "needs {name} as a rank-1 float32 tensor, got {found}"
            )))
        }
    };
    let rm = stat("running_mean")?;
    let rv = stat("running_var")?;
    let w = affine_part(site, &bound, "weight", &form)?;
    let b = affine_part(site, &bound, "bias", &form)?;
    // Momentum plays no part in eval mode, but eager's signature takes a float.
    float_part(site, &bound, "momentum", &form)?;
    let eps = float_part(site, &bound, "eps", &form)?.map_or(Arg::Float(DEFAULT_EPS), Arg::Scalar);
    plan_f32(
        rules::BATCH_NORM,
        r,
        Op::Call {
            f: Rt::BatchNormEval,
            args: vec![Arg::Tensor(x), rm, rv, w, b, eps],
        },
    )
}

/// The weight or bias `name` of a normalisation: a rank-1 tensor, or absent / `None`; `form`
/// refuses anything else.
fn affine_part(
    site: &ClaimSite,
    bound: &[(&str, Src)],
    name: &str,
    form: &dyn Fn(String) -> NoPlan,
) -> Result<Arg, NoPlan> {
    let src = given(site, bound, name);
    if let Some(s) = src {
        if operand(site, s).and_then(rank) != Some(1) {
            let found = operand(site, s).map(describe).unwrap_or_default();
            return Err(form(format!(
                "needs {name} as a rank-1 float32 tensor or None, got {found}"
            )));
        }
    }
    Ok(Arg::OptTensor(src))
}

/// Operand `name` when it is given and is not a literal `None`.
fn given(site: &ClaimSite, bound: &[(&str, Src)], name: &str) -> Option<Src> {
    get(bound, name).filter(|s| {
        !matches!(
            operand(site, *s).and_then(|o| o.literal.as_ref()),
            Some(Literal::None)
        )
    })
}

/// A float option `name` (`eps`, `momentum`): its source when given as a float literal or
/// float parameter, `None` when omitted; `form` refuses anything else.
fn float_part(
    site: &ClaimSite,
    bound: &[(&str, Src)],
    name: &str,
    form: &dyn Fn(String) -> NoPlan,
) -> Result<Option<Src>, NoPlan> {
    let Some(s) = get(bound, name) else {
        return Ok(None);
    };
    match operand(site, s) {
        Some(o) if o.ty == Some(ValueType::Float) => Ok(Some(s)),
        Some(o) => Err(form(format!(
            "needs {name} as a float literal or float parameter, got {}",
            describe(o)
        ))),
        None => Err(ClaimOutcome::NotCovered),
    }
}

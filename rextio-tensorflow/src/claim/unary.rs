//! Activations (`tf.nn.relu/sigmoid/tanh`) and math unary (`tf.abs`, `tf.negative`,
//! `tf.square`, `tf.exp`, `tf.math.log`, `tf.math.sqrt`): one positional tensor, no keywords.

use super::{f32_rank_of, keyword_names, plan_f32, reject, tensor, NoPlan, Plan, Src, Tensor};
use crate::rules::{self, MathUnary, ACTIVATIONS};
use rextio_plugin_api::{ClaimOutcome, ClaimSite};

/// The rank of the only operand of a unary call, after the form checks.
fn single(site: &ClaimSite, shown: &str, code: &str) -> Result<u8, NoPlan> {
    let suggestion = format!("write {shown}(x) with one positional annotated tensor");
    if !site.keywords.is_empty() {
        return Err(reject(
            code,
            format!(
                "{shown} with keyword(s) {} is not lowered; it takes one positional tensor",
                keyword_names(site)
            ),
            &suggestion,
        ));
    }
    let [x] = site.args.as_slice() else {
        return Err(reject(
            code,
            format!(
                "{shown} takes exactly one positional tensor here, got {}",
                site.args.len()
            ),
            &suggestion,
        ));
    };
    match tensor(x, shown)? {
        Tensor::F32(r) => Ok(r),
        Tensor::I64 => Err(reject(
            code,
            format!("{shown} on an int64 classification result is not lowered (int64 is not an operation input)"),
            "apply it to float32 tensors; int64 results are for returning",
        )),
    }
}

/// `tf.nn.relu(x)`, `tf.nn.sigmoid(x)`, `tf.nn.tanh(x)`.
pub fn plan_activation(site: &ClaimSite, name: &str) -> Result<Plan, NoPlan> {
    let Some(act) = ACTIVATIONS.iter().find(|a| a.name == name) else {
        return Err(ClaimOutcome::NotCovered);
    };
    let code = if site.args.first().and_then(f32_rank_of) == Some(1) {
        act.code_1d
    } else {
        act.code_2d
    };
    let r = single(site, &format!("tf.nn.{name}"), code)?;
    plan_f32(rules::activation(act.name, r), r, act.rt, vec![Src::Arg(0)])
}

/// `tf.abs(x)` and the other exact math unary targets; `shown` is the site's spelling, which
/// messages name (`tf.math.abs`, `-x`).
pub fn plan_math(site: &ClaimSite, u: &MathUnary, shown: &str) -> Result<Plan, NoPlan> {
    let r = single(site, shown, u.code)?;
    plan_f32(rules::math_unary(u.name), r, u.rt, vec![Src::Arg(0)])
}

/// [`plan_activation`] with the row of [`rules::ACTIVATIONS`] the site's target names.
pub fn plan_activation_site(site: &ClaimSite) -> Result<Plan, NoPlan> {
    match site.target.strip_prefix("tensorflow.nn.") {
        Some(name) => plan_activation(site, name),
        None => Err(ClaimOutcome::NotCovered),
    }
}

/// [`plan_math`] with the row of [`rules::MATH_UNARY`] the site's target names.
pub fn plan_math_site(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let Some(target) = site.target.strip_prefix(super::PREFIX) else {
        return Err(ClaimOutcome::NotCovered);
    };
    match rules::MATH_UNARY
        .iter()
        .find(|u| u.targets.contains(&target))
    {
        Some(u) => plan_math(site, u, &format!("tf.{target}")),
        None => Err(ClaimOutcome::NotCovered),
    }
}

/// `-x`, which the host offers as `operator.neg(x)`: an EagerTensor's `__neg__` is
/// `tf.math.negative` (TFE `Neg`), so the site plans as that row of [`rules::MATH_UNARY`].
pub fn plan_neg_operator(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let Some(u) = rules::MATH_UNARY
        .iter()
        .find(|u| u.name == rules::NEG_OPERATOR_ROW)
    else {
        return Err(ClaimOutcome::NotCovered);
    };
    plan_math(site, u, "-x (tf.negative)")
}

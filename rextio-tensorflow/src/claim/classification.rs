//! Classification head: `tf.nn.softmax` (rank 1: axis omitted or 0; rank 2: explicit axis 1,
//! since raw TFE Softmax is last-axis only) and `tf.argmax` with a literal axis to int64 rank 1.

use super::{
    axis_operand, f32_rank_of, int_literal, plan_f32, reject, tensor, NoPlan, Plan, Src, Tensor,
};
use crate::entry::Rt;
use crate::types::i64_cpu_1d;
use crate::{codes, rules};
use rextio_plugin_api::ClaimSite;

/// `tf.nn.softmax(x[, axis])`.
pub fn plan_softmax(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let shown = "tf.nn.softmax";
    let code = if site.args.first().and_then(f32_rank_of) == Some(1) {
        codes::SOFTMAX_1D
    } else {
        codes::SOFTMAX_2D
    };
    let suggestion = "write tf.nn.softmax(x, axis=1) for rank 2, or tf.nn.softmax(x) for rank 1";
    let form = |why: &str| reject(code, format!("{shown} {why}"), suggestion);
    if site.args.is_empty() {
        return Err(form("has no positional tensor"));
    }
    let (axis, _) = axis_operand(site, &[]).map_err(|why| form(&why))?;
    let axis = match axis {
        None => None,
        Some(op) => Some(int_literal(op).ok_or_else(|| form("needs axis as an int literal"))?),
    };
    match (tensor(&site.args[0], shown)?, axis) {
        (Tensor::F32(1), None | Some(0)) => plan_f32(
            rules::SOFTMAX_AXIS0_1D,
            1,
            Rt::SoftmaxAxis0,
            vec![Src::Arg(0)],
        ),
        (Tensor::F32(2), Some(1)) => plan_f32(
            rules::SOFTMAX_AXIS1_2D,
            2,
            Rt::SoftmaxAxis1,
            vec![Src::Arg(0)],
        ),
        (Tensor::F32(2), None) => Err(form(
            "on a rank-2 tensor needs an explicit literal axis=1",
        )),
        (Tensor::F32(r), Some(d)) => Err(form(&format!(
            "with axis={d} on a rank-{r} tensor is not lowered; raw TFE Softmax normalises the last axis only"
        ))),
        (Tensor::F32(r), None) => Err(form(&format!("on a rank-{r} tensor is not lowered"))),
        (Tensor::I64, _) => Err(form("on an int64 classification result is not lowered")),
    }
}

/// `tf.argmax(x, axis)` with the default int64 output.
pub fn plan_argmax(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let shown = "tf.argmax";
    let axis0 = site
        .args
        .get(1)
        .or_else(|| site.keyword("axis"))
        .and_then(int_literal)
        == Some(0);
    let code = if axis0 {
        codes::ARGMAX_AXIS0
    } else {
        codes::ARGMAX
    };
    let suggestion = "write tf.argmax(x, axis=1) on a TensorF32Cpu2D and omit output_type";
    let form = |why: &str| reject(code, format!("{shown} {why}"), suggestion);
    if site.keywords.iter().any(|k| k.name == "output_type") {
        // Whatever the value (tf.int32, tf.int64, a dynamic dtype): only the default is lowered.
        return Err(form(
            "with output_type= is not lowered; only the default int64 output is",
        ));
    }
    if site.args.is_empty() {
        return Err(form("has no positional tensor"));
    }
    let (axis, _) = axis_operand(site, &[]).map_err(|why| form(&why))?;
    let Some(axis) = axis else {
        return Err(form("without an explicit axis is not lowered"));
    };
    let Some(d) = int_literal(axis) else {
        return Err(form("needs axis as an int literal"));
    };
    let (rule, f) = match d {
        0 => (rules::ARGMAX_AXIS0, Rt::ArgmaxAxis0),
        1 => (rules::ARGMAX_AXIS1, Rt::ArgmaxAxis1),
        _ => return Err(form(&format!("with axis={d} is not lowered"))),
    };
    match tensor(&site.args[0], shown)? {
        Tensor::F32(2) => Ok(Plan {
            rule_id: rule.to_owned(),
            result: i64_cpu_1d(),
            f,
            operands: vec![Src::Arg(0)],
        }),
        Tensor::F32(r) => Err(form(&format!(
            "on a rank-{r} float32 tensor is not lowered; the operand must be rank 2"
        ))),
        Tensor::I64 => Err(form("on an int64 tensor is not lowered")),
    }
}

//! The build-only CUDA lane: `tf.matmul -> tf.nn.bias_add -> tf.nn.relu ->
//! tf.reduce_mean(axis=1)` on `GPU:0`, and nothing else. Every site with a `TensorF32Gpu0_*`
//! operand comes here: the four forms are claimed, everything else is rejected, so a GPU value
//! never reaches a CPU rule and never crosses between host and device.
//!
//! Lowering these rules also needs the exact device authorisation (see `lower.rs`), and the
//! host keeps the function on Python (RXT019) unless the target authorised
//! [`crate::CUDA_CAPABILITY`].

use super::{describe, int_literal, NoPlan, Plan, Src, PREFIX};
use crate::entry::Rt;
use crate::types::F32_GPU0;
use crate::{codes, rules};
use rextio_plugin_api::kit::DeviceForms;
use rextio_plugin_api::{ClaimSite, SiteKind};

/// The lane's marker types and the wording of its refusals.
pub(crate) static LANE: DeviceForms = DeviceForms {
    family: F32_GPU0,
    namespace: crate::PLUGIN_ID,
    prefix: "rextio-tensorflow: ",
    form_code: codes::CUDA_FORM,
    lane: "the build-only CUDA E3 lane (tf.matmul, tf.nn.bias_add, tf.nn.relu, tf.reduce_mean(axis=1) on GPU:0)",
    form_hint: "keep this function in Python, or write the lane exactly: tf.matmul(x, w), tf.nn.bias_add(h, b), tf.nn.relu(h), tf.reduce_mean(h, axis=1)",
    mix_code: codes::CUDA_DEVICE_MIX,
    mix_message: "this site mixes GPU:0 and CPU tensors; the CUDA E3 lane never copies between host and device",
    mix_hint: "annotate every tensor of the native function with TensorF32Gpu0_* types, or keep it in Python",
};

fn plan_gpu(rule: &str, rank: u8, f: Rt, operands: Vec<Src>) -> Result<Plan, NoPlan> {
    Ok(Plan {
        rule_id: rule.to_owned(),
        result: LANE.result(rank)?,
        f,
        operands,
    })
}

/// Plan a site that touches a `GPU:0` tensor.
pub(crate) fn plan(site: &ClaimSite) -> Result<Plan, NoPlan> {
    LANE.unmixed(site)?;
    if site.kind != SiteKind::Call || site.receiver.is_some() {
        return Err(LANE.outside(format!(
            "`{}` (only the four functional calls are in the lane)",
            site.target
        )));
    }
    let name = site.target.strip_prefix(PREFIX).unwrap_or(&site.target);
    let ranks: Vec<Option<u8>> = site.args.iter().map(|a| LANE.rank(a)).collect();
    let kws = site.keywords.len();
    match (name, ranks.as_slice(), kws) {
        ("matmul", [Some(2), Some(2)], 0) => plan_gpu(
            rules::CUDA_MATMUL,
            2,
            Rt::CudaMatmul,
            vec![Src::Arg(0), Src::Arg(1)],
        ),
        ("nn.bias_add", [Some(2), Some(1)], 0) => plan_gpu(
            rules::CUDA_BIAS_ADD,
            2,
            Rt::CudaBiasAdd,
            vec![Src::Arg(0), Src::Arg(1)],
        ),
        ("nn.relu", [Some(2)], 0) => plan_gpu(rules::CUDA_RELU, 2, Rt::CudaRelu, vec![Src::Arg(0)]),
        ("reduce_mean", [Some(2)], 1)
            if site.keywords[0].name == "axis"
                && int_literal(&site.keywords[0].value) == Some(1) =>
        {
            plan_gpu(
                rules::CUDA_REDUCE_MEAN_AXIS1,
                1,
                Rt::CudaReduceMeanAxis1,
                vec![Src::Arg(0)],
            )
        }
        _ => Err(LANE.outside(format!(
            "`{}` with {}{}",
            site.target,
            site.args
                .iter()
                .map(describe)
                .collect::<Vec<_>>()
                .join(", "),
            if kws > 0 { " and keywords" } else { "" }
        ))),
    }
}

//! `tf.matmul(a, b)` / `tf.linalg.matmul(a, b)`: two positional rank-2 float32 tensors.

use super::{describe, keyword_names, plan_f32, reject, tensor, NoPlan, Plan, Src, Tensor, PREFIX};
use crate::entry::Rt;
use crate::{codes, rules};
use rextio_plugin_api::ClaimSite;

/// Plan MatMul.
pub fn plan(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let shown = format!("tf.{}", &site.target[PREFIX.len()..]);
    let suggestion = "write tf.matmul(a, b) with two TensorF32Cpu2D operands";
    if !site.keywords.is_empty() {
        return Err(reject(
            codes::MATMUL,
            format!(
                "{shown} with keyword(s) {} is not lowered (no transpose_*/adjoint_* or other options)",
                keyword_names(site)
            ),
            suggestion,
        ));
    }
    let [a, b] = site.args.as_slice() else {
        return Err(reject(
            codes::MATMUL,
            format!(
                "{shown} takes exactly two positional tensors here, got {}",
                site.args.len()
            ),
            suggestion,
        ));
    };
    match (tensor(a, &shown)?, tensor(b, &shown)?) {
        (Tensor::F32(2), Tensor::F32(2)) => {
            plan_f32(rules::MATMUL, 2, Rt::Matmul, vec![Src::Arg(0), Src::Arg(1)])
        }
        _ => Err(reject(
            codes::MATMUL,
            format!(
                "{shown} of {} by {} is not lowered; only rank-2 x rank-2 float32 CPU tensors are",
                describe(a),
                describe(b)
            ),
            suggestion,
        )),
    }
}

//! Default `tf.transpose(x)` on rank 2 and `tf.nn.bias_add(value, bias)` in NHWC.

use super::{
    describe, keyword_names, plan_f32, reject, str_literal, tensor, NoPlan, Plan, Src, Tensor,
};
use crate::entry::Rt;
use crate::{codes, rules};
use rextio_plugin_api::ClaimSite;

/// `tf.transpose(x)`: the default perm `[1, 0]` only.
pub fn plan_transpose(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let shown = "tf.transpose";
    let suggestion = "write tf.transpose(x) on a TensorF32Cpu2D, without perm/conjugate/name";
    if !site.keywords.is_empty() {
        return Err(reject(
            codes::TRANSPOSE,
            format!(
                "{shown} with keyword(s) {} is not lowered; only the default perm is",
                keyword_names(site)
            ),
            suggestion,
        ));
    }
    let [x] = site.args.as_slice() else {
        return Err(reject(
            codes::TRANSPOSE,
            format!(
                "{shown} takes exactly one positional tensor here, got {} (explicit perm is not lowered)",
                site.args.len()
            ),
            suggestion,
        ));
    };
    match tensor(x, shown)? {
        Tensor::F32(2) => plan_f32(rules::TRANSPOSE, 2, Rt::Transpose, vec![Src::Arg(0)]),
        _ => Err(reject(
            codes::TRANSPOSE,
            format!(
                "{shown} of {} is not lowered; the operand must be a rank-2 float32 tensor",
                describe(x)
            ),
            suggestion,
        )),
    }
}

/// `tf.nn.bias_add(value, bias[, data_format="NHWC"])`.
pub fn plan_bias_add(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let shown = "tf.nn.bias_add";
    let suggestion =
        "write tf.nn.bias_add(x, b) with x TensorF32Cpu2D and b TensorF32Cpu1D, data_format omitted or \"NHWC\"";
    let form = |why: String| reject(codes::BIAS_ADD, format!("{shown} {why}"), suggestion);
    let mut format_seen = false;
    for kw in &site.keywords {
        match kw.name.as_str() {
            "data_format" if !format_seen => {
                format_seen = true;
                if str_literal(&kw.value) != Some("NHWC") {
                    return Err(form(format!(
                        "with data_format={} is not lowered; only the literal \"NHWC\" (or omitting it) is",
                        describe(&kw.value)
                    )));
                }
            }
            "value" | "bias" => {
                return Err(form(format!(
                "with the tensor keyword `{}=` is not lowered; pass value and bias positionally",
                kw.name
            )))
            }
            other => return Err(form(format!("with keyword `{other}=` is not lowered"))),
        }
    }
    let [v, b] = site.args.as_slice() else {
        return Err(form(format!(
            "takes exactly the positional value and bias here, got {} positional arguments (a positional data_format is not lowered)",
            site.args.len()
        )));
    };
    match (tensor(v, shown)?, tensor(b, shown)?) {
        (Tensor::F32(2), Tensor::F32(1)) => plan_f32(
            rules::BIAS_ADD,
            2,
            Rt::BiasAdd,
            vec![Src::Arg(0), Src::Arg(1)],
        ),
        _ => Err(form(format!(
            "of {} and {} is not lowered; value must be rank-2 and bias rank-1 float32",
            describe(v),
            describe(b)
        ))),
    }
}

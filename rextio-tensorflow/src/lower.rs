//! Lowering: a claimed site becomes one call into `rextio_tensorflow::runtime`. The plan is
//! recomputed from the site and must match the claim; otherwise lowering fails closed.

use crate::claim::{self, Src};
use rextio_plugin_api::syntax::quote;
use rextio_plugin_api::{kit, ClaimedSite, LowerError, LoweredExpr, LoweringContext};

/// Lower a site; re-validates the claim against the site first.
pub fn lower(site: &ClaimedSite, cx: &mut LoweringContext) -> Result<LoweredExpr, LowerError> {
    let rule = site.rule_id.as_str();
    let drift = |reason: &str| LowerError::new(rule, reason);
    if site.plugin_id != crate::PLUGIN_ID {
        return Err(drift("the site was claimed by another plugin"));
    }
    if site.site.receiver.is_some() || cx.receiver.is_some() {
        return Err(drift(
            "method-style receivers are never lowered (functional TensorFlow calls only)",
        ));
    }
    // The CPU:0 lane lowers under any target (its boundary proves CPU:0); the CUDA lane only
    // under the exact authorisation.
    if claim::is_cuda_rule(rule) {
        cx.require_authorisation(
            rule,
            crate::CUDA_PROVIDER,
            crate::CUDA_CAPABILITY,
            "CUDA E3 lane",
        )?;
    }
    let plan = kit::replanned(site, claim::plan(&site.site), |p| (&p.rule_id, &p.result))?;
    if cx.args.len() != site.site.args.len() || cx.keywords.len() != site.site.keywords.len() {
        return Err(drift("operand count differs from the claimed site"));
    }
    let mut operands = Vec::with_capacity(plan.operands.len());
    for src in &plan.operands {
        let Src::Arg(i) = *src;
        let op = cx
            .args
            .get(i)
            .ok_or_else(|| drift("an operand of the plan is missing"))?;
        // Inputs are only borrowed: TFE ops allocate their outputs and never write an input.
        let e = &op.expr;
        operands.push(quote!(&(#e)));
    }
    let f = plan.f.path();
    Ok(LoweredExpr::tokens(
        quote!(::rextio_tensorflow::runtime::#f(#(#operands),*)?),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::tests::{accepted, binop, call, kw, t1, t2};
    use rextio_plugin_api::kit::testing;
    use rextio_plugin_api::syntax::quote;
    use rextio_plugin_api::{ClaimSite, ClaimedSite, Literal, LoweredOperand, Operand};

    fn context(site: &ClaimSite) -> LoweringContext {
        testing::context(site, false)
    }

    fn claimed(site: &ClaimSite) -> ClaimedSite {
        testing::claimed(crate::PLUGIN_ID, site, claim::claim(site)).expect("claimed")
    }

    /// The lowering as compact text (no spaces), after checking that it parses.
    fn lowered(site: &ClaimSite) -> String {
        let e = lower(&claimed(site), &mut context(site)).unwrap();
        e.expr.expr().unwrap_or_else(|err| panic!("{err}"));
        testing::compact(&e.expr)
    }

    fn compact(text: &str) -> String {
        text.replace(' ', "")
    }

    #[test]
    fn every_accepted_form_lowers_to_one_runtime_call() {
        for (site, _) in accepted() {
            let e = lowered(&site);
            assert!(
                e.starts_with("::rextio_tensorflow::runtime::") && e.ends_with(")?"),
                "{e}"
            );
            assert!(
                !e.contains("v10"),
                "keyword operands are never emitted: {e}"
            );
        }
    }

    #[test]
    fn canonical_helpers_match_the_published_names() {
        let int = |v| Operand::literal(Literal::Int(v));
        let boolean = |v| Operand::literal(Literal::Bool(v));
        let cases: Vec<(ClaimSite, &str)> = vec![
            (
                call("tensorflow.matmul", vec![t2(), t2()], vec![]),
                "matmul(&(v0), &(v1))",
            ),
            (
                call("tensorflow.linalg.matmul", vec![t2(), t2()], vec![]),
                "matmul(&(v0), &(v1))",
            ),
            (
                call("tensorflow.nn.relu", vec![t1()], vec![]),
                "relu(&(v0))",
            ),
            (
                call("tensorflow.math.log", vec![t2()], vec![]),
                "log(&(v0))",
            ),
            (
                call("tensorflow.negative", vec![t2()], vec![]),
                "negative(&(v0))",
            ),
            (binop("+", t2(), t1()), "add(&(v0), &(v1))"),
            (binop("/", t1(), t2()), "div(&(v0), &(v1))"),
            (
                call("tensorflow.math.subtract", vec![t2(), t2()], vec![]),
                "sub(&(v0), &(v1))",
            ),
            (
                call("tensorflow.multiply", vec![t1(), t1()], vec![]),
                "mul(&(v0), &(v1))",
            ),
            (
                call("tensorflow.minimum", vec![t1(), t1()], vec![]),
                "minimum(&(v0), &(v1))",
            ),
            (
                call(
                    "tensorflow.nn.bias_add",
                    vec![t2(), t1()],
                    vec![kw(
                        "data_format",
                        Operand::literal(Literal::Str("NHWC".into())),
                    )],
                ),
                "bias_add(&(v0), &(v1))",
            ),
            (
                call(
                    "tensorflow.reduce_mean",
                    vec![t2(), int(0)],
                    vec![kw("keepdims", boolean(true))],
                ),
                "reduce_mean_axis0_keepdims(&(v0))",
            ),
            (
                call(
                    "tensorflow.reduce_sum",
                    vec![t2()],
                    vec![kw("axis", int(1))],
                ),
                "reduce_sum_axis1(&(v0))",
            ),
            (
                call("tensorflow.nn.softmax", vec![t1()], vec![]),
                "softmax_axis0(&(v0))",
            ),
            (
                call("tensorflow.nn.softmax", vec![t2(), int(1)], vec![]),
                "softmax_axis1(&(v0))",
            ),
            (
                call("tensorflow.argmax", vec![t2()], vec![kw("axis", int(0))]),
                "argmax_axis0(&(v0))",
            ),
            (
                call("tensorflow.transpose", vec![t2()], vec![]),
                "transpose(&(v0))",
            ),
        ];
        for (site, want) in cases {
            assert_eq!(
                lowered(&site),
                compact(&format!("::rextio_tensorflow::runtime::{want}?"))
            );
        }
    }

    #[test]
    fn drifted_claims_fail_closed() {
        let site = binop("+", t2(), t1());
        let mut c = claimed(&site);
        c.rule_id = "rextio-tensorflow/mul-binop-f32-cpu".into();
        assert!(lower(&c, &mut context(&site)).is_err());
        let mut c = claimed(&site);
        c.site.args[1] = Operand::literal(Literal::Float(1.0));
        assert!(lower(&c, &mut context(&site)).is_err());
        let mut c = claimed(&site);
        c.result_type = crate::types::F32_CPU.ty(1).unwrap();
        assert!(lower(&c, &mut context(&site)).is_err());
        let c = claimed(&site);
        let mut cx = context(&site);
        cx.args.pop();
        assert!(lower(&c, &mut cx).is_err());
        let mut cx = context(&site);
        cx.receiver = Some(LoweredOperand::new(quote!(r), false));
        assert!(lower(&c, &mut cx).is_err());
        // A CPU rule under a CUDA target still lowers to the CPU:0 lane, unchanged.
        let mut cx = context(&site);
        cx.target = "cuda-tensorflow-tfe-linux-x86_64".into();
        assert_eq!(
            compact(&lower(&c, &mut cx).unwrap().expr.to_string()),
            lowered(&site)
        );
        let mut c = claimed(&site);
        c.plugin_id = "rextio-torch".into();
        assert!(lower(&c, &mut context(&site)).is_err());
        let mut c = claimed(&site);
        c.site.receiver = Some(t2());
        assert!(lower(&c, &mut context(&site)).is_err());
    }

    #[test]
    fn the_cuda_lane_lowers_only_with_the_exact_authorisation() {
        let want = [
            "::rextio_tensorflow::runtime::cuda::matmul_gpu0(&(v0), &(v1))?",
            "::rextio_tensorflow::runtime::cuda::bias_add_gpu0(&(v0), &(v1))?",
            "::rextio_tensorflow::runtime::cuda::relu_gpu0(&(v0))?",
            "::rextio_tensorflow::runtime::cuda::reduce_mean_axis1_gpu0(&(v0))?",
        ];
        let sites = crate::claim::tests::cuda_accepted();
        assert_eq!(sites.len(), want.len());
        for ((site, _), want) in sites.iter().zip(want) {
            let got = testing::exact_authorisation(
                lower,
                &claimed(site),
                crate::CUDA_PROVIDER,
                crate::CUDA_CAPABILITY,
                &[
                    (crate::CUDA_PROVIDER, "cuda-libtorch-linux-x86_64"),
                    (crate::CUDA_PROVIDER, "cuda-linux-x86_64"),
                    ("someone-else", crate::CUDA_CAPABILITY),
                ],
            )
            .unwrap_or_else(|why| panic!("{site:?}: {why}"))
            .expr;
            got.expr().unwrap_or_else(|err| panic!("{err}"));
            assert_eq!(testing::compact(&got), compact(want));
        }
    }
}

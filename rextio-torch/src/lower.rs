//! Lowering: a claimed site becomes one call into `rextio_torch::runtime`. The plan is
//! recomputed from the site and must match the claim; otherwise lowering fails closed.

use crate::claim::{self, Arg, Op, Src};
use crate::entry::Rt;
use rextio_plugin_api::syntax::{
    f64_literal, i64_literal, int_literal, quote, Ident, Span, TokenStream,
};
use rextio_plugin_api::{
    kit, ClaimedSite, LowerError, LoweredExpr, LoweredOperand, LoweringContext,
};

fn pick(cx: &LoweringContext, src: Src) -> Option<&LoweredOperand> {
    match src {
        Src::Recv => cx.receiver.as_ref(),
        Src::Arg(i) => cx.args.get(i),
        Src::Kw(i) => cx.keywords.get(i).map(|(_, o)| o),
    }
}

fn by_ref(op: &LoweredOperand) -> TokenStream {
    let e = &op.expr;
    quote!(&(#e))
}

/// A call of a runtime entry point.
fn call(f: Rt, args: &[TokenStream]) -> TokenStream {
    call_owned(f.ident(), args)
}

/// A call of the runtime function `f` (an entry point's owned variant, which consumes its
/// first operand, or the entry itself).
fn call_owned(f: Ident, args: &[TokenStream]) -> TokenStream {
    quote!(::rextio_torch::runtime::#f(#(#args),*)?)
}

/// Lower a site; re-validates the claim against the site first.
pub fn lower(site: &ClaimedSite, cx: &mut LoweringContext) -> Result<LoweredExpr, LowerError> {
    let rule = site.rule_id.as_str();
    let drift = |reason: &str| LowerError::new(rule, reason);
    let plan = kit::replanned(site, claim::plan(&site.site), |p| (&p.rule_id, &p.result))?;
    if claim::is_cuda_rule(rule) {
        cx.require_authorisation(
            rule,
            crate::CUDA_PROVIDER,
            crate::CUDA_CAPABILITY,
            "CUDA E2 slice",
        )?;
    }
    if usize::from(cx.receiver.is_some()) != usize::from(site.site.receiver.is_some())
        || cx.args.len() != site.site.args.len()
        || cx.keywords.len() != site.site.keywords.len()
    {
        return Err(drift("operand count differs from the claimed site"));
    }
    let get = |src: Src| pick(cx, src).ok_or_else(|| drift("an operand of the plan is missing"));
    let expr = match plan.op {
        Op::Linear { x, w, b } => {
            let bias = match b {
                Some(b) => {
                    let b = by_ref(get(b)?);
                    quote!(Some(#b))
                }
                None => quote!(None),
            };
            call(Rt::Linear, &[by_ref(get(x)?), by_ref(get(w)?), bias])
        }
        Op::Math { op, t } => {
            let t = get(t)?;
            let variant = Ident::new(op.row().variant, Span::call_site());
            let op = quote!(::rextio_torch::rules::Unary::#variant);
            if t.owned_temp {
                let e = &t.expr;
                quote!(::rextio_torch::runtime::unary_owned(#op, #e)?)
            } else {
                let t = by_ref(t);
                quote!(::rextio_torch::runtime::unary(#op, #t)?)
            }
        }
        Op::Unary { f, t } => {
            let t = get(t)?;
            match f.owned_ident() {
                Some(owned) if t.owned_temp => call_owned(owned, std::slice::from_ref(&t.expr)),
                _ => call(f, &[by_ref(t)]),
            }
        }
        Op::Matmul { a, b } => call(Rt::Matmul, &[by_ref(get(a)?), by_ref(get(b)?)]),
        Op::Binary {
            f,
            a,
            b,
            keep: true,
        } => {
            // `a op= b`: the result keeps `a`'s shape, or eager's in-place error is raised.
            let (a, b) = (get(a)?, get(b)?);
            let base = f.ident();
            if a.owned_temp {
                call_owned(
                    Ident::new(&format!("{base}_assign_owned"), Span::call_site()),
                    &[a.expr.clone(), by_ref(b)],
                )
            } else {
                call_owned(
                    Ident::new(&format!("{base}_assign"), Span::call_site()),
                    &[by_ref(a), by_ref(b)],
                )
            }
        }
        Op::Binary { f, a, b, .. } => {
            let (a, b) = (get(a)?, get(b)?);
            let commutes = matches!(f, Rt::Add | Rt::Mul);
            match f.owned_ident() {
                Some(owned) if a.owned_temp => call_owned(owned, &[a.expr.clone(), by_ref(b)]),
                // IEEE addition and multiplication commute exactly: the owned right operand may host it.
                Some(owned) if b.owned_temp && commutes => {
                    call_owned(owned, &[b.expr.clone(), by_ref(a)])
                }
                _ => call(f, &[by_ref(a), by_ref(b)]),
            }
        }
        Op::Scalar { f, t, s } => {
            let (t, s) = (get(t)?, get(s)?);
            match f.owned_ident() {
                Some(owned) if t.owned_temp => call_owned(owned, &[t.expr.clone(), s.expr.clone()]),
                _ => call(f, &[by_ref(t), s.expr.clone()]),
            }
        }
        Op::Reduce { f, t, dim, keepdim } => {
            call(f, &[by_ref(get(t)?), int_literal(dim), quote!(#keepdim)])
        }
        Op::Softmax { t, dim } => call(Rt::Softmax, &[by_ref(get(t)?), int_literal(dim)]),
        Op::Call { f, args } => {
            let mut parts = Vec::with_capacity(args.len());
            for a in args {
                parts.push(match a {
                    Arg::Tensor(s) | Arg::Tensors(s) => by_ref(get(s)?),
                    Arg::OptTensor(Some(s)) => {
                        let t = by_ref(get(s)?);
                        quote!(Some(#t))
                    }
                    Arg::OptTensor(None) => quote!(None),
                    Arg::Scalar(s) => {
                        let e = &get(s)?.expr;
                        quote!((#e))
                    }
                    Arg::TupleFirst(s) => {
                        let e = &get(s)?.expr;
                        quote!((#e).0)
                    }
                    Arg::Int(v) => i64_literal(v),
                    Arg::Bool(v) => quote!(#v),
                    Arg::Float(v) => f64_literal(v),
                });
            }
            call(f, &parts)
        }
        Op::Argmax { t, dim, keepdim } => call(
            Rt::Argmax,
            &[by_ref(get(t)?), int_literal(dim), quote!(#keepdim)],
        ),
    };
    Ok(LoweredExpr::tokens(expr))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::tests::{accepted, binop, t1, t2};
    use rextio_plugin_api::kit::testing;
    use rextio_plugin_api::ClaimedSite;

    fn context(site: &rextio_plugin_api::ClaimSite, owned: bool) -> LoweringContext {
        testing::context(site, owned)
    }

    fn claimed(site: &rextio_plugin_api::ClaimSite) -> ClaimedSite {
        testing::claimed(crate::PLUGIN_ID, site, claim::claim(site)).expect("claimed")
    }

    /// The site's lowering as compact text (no spaces), after checking that it parses as one
    /// expression: a malformed lowering fails here, in the plugin's own tests.
    fn text(site: &rextio_plugin_api::ClaimSite, owned: bool) -> String {
        let e = lower(&claimed(site), &mut context(site, owned)).unwrap();
        checked(&e)
    }

    fn checked(e: &LoweredExpr) -> String {
        e.expr.expr().unwrap_or_else(|err| panic!("{err}"));
        assert!(e.uses.is_empty());
        testing::compact(&e.expr)
    }

    fn compact(s: &str) -> String {
        s.replace(' ', "")
    }

    #[test]
    fn every_accepted_form_lowers_to_one_runtime_call() {
        for (site, _) in accepted() {
            for owned in [false, true] {
                let e = text(&site, owned);
                assert!(
                    e.starts_with("::rextio_torch::runtime::") && e.ends_with(")?"),
                    "{e}"
                );
            }
        }
    }

    #[test]
    fn a_malformed_lowering_fails_the_check_every_lowering_passes() {
        // Balanced tokens (so `quote!` builds them) that are not one expression.
        let bad = LoweredExpr::tokens(quote!(::rextio_torch::runtime::relu(&(v0)) ?? +));
        assert!(bad.expr.expr().is_err());
    }

    #[test]
    fn scalar_division_follows_eager_rtruediv() {
        let site = binop(
            "/",
            rextio_plugin_api::Operand::literal(rextio_plugin_api::Literal::Float(2.0)),
            t1(),
        );
        assert_eq!(
            text(&site, false),
            compact("::rextio_torch::runtime::rdiv_scalar(&(v1), v0)?")
        );
    }

    #[test]
    fn borrowed_operands_are_never_written_in_place() {
        for (site, _) in accepted() {
            let e = text(&site, false);
            assert!(!e.contains("_owned("), "{e}");
        }
    }

    #[test]
    fn negative_dims_are_normalised_statically() {
        let site = crate::claim::tests::method(
            t2(),
            "softmax",
            vec![rextio_plugin_api::Operand::literal(
                rextio_plugin_api::Literal::Int(-1),
            )],
            vec![],
        );
        assert_eq!(
            text(&site, false),
            compact("::rextio_torch::runtime::softmax(&(v99), 1)?")
        );
    }

    #[test]
    fn generic_calls_render_scalars_tuples_and_defaults() {
        let site = crate::claim::tests::call(
            "torch.nn.functional.layer_norm",
            vec![
                t2(),
                rextio_plugin_api::Operand::typed(rextio_plugin_api::ValueType::Tuple(vec![
                    rextio_plugin_api::ValueType::Int,
                ])),
                t1(),
            ],
            vec![],
        );
        assert_eq!(
            text(&site, true),
            compact(
                "::rextio_torch::runtime::layer_norm(&(v0), (v1).0, Some(&(v2)), None, 1e-5f64)?"
            )
        );
        let site = crate::claim::tests::compare(
            "<",
            rextio_plugin_api::Operand::literal(rextio_plugin_api::Literal::Float(0.5)),
            t2(),
        );
        assert_eq!(
            text(&site, false),
            compact("::rextio_torch::runtime::gt_scalar(&(v1), (v0))?")
        );
    }

    #[test]
    fn cat_borrows_the_whole_sequence_with_a_normalised_dim() {
        let two_d = rextio_plugin_api::ValueType::Plugin(rextio_plugin_api::TypeKey::new(
            crate::types::F32_CPU_2D,
        ));
        let site = crate::claim::tests::call(
            "torch.cat",
            vec![
                rextio_plugin_api::Operand::typed(rextio_plugin_api::ValueType::Tuple(vec![
                    two_d.clone(),
                    two_d,
                ])),
                rextio_plugin_api::Operand::literal(rextio_plugin_api::Literal::Int(-1)),
            ],
            vec![],
        );
        // Owned or not, the elements are only borrowed: cat never writes in place.
        for owned in [false, true] {
            assert_eq!(
                text(&site, owned),
                compact("::rextio_torch::runtime::cat(&(v0), 1i64)?")
            );
        }
    }

    #[test]
    fn drifted_claims_fail_closed() {
        let site = binop("+", t2(), t1());
        let mut c = claimed(&site);
        c.rule_id = "rextio-torch/tensor-add-f32-cpu-same-rank".into();
        assert!(lower(&c, &mut context(&site, false)).is_err());
        let mut c = claimed(&site);
        c.site.args[1] = t2();
        assert!(lower(&c, &mut context(&site, false)).is_err());
        let c = claimed(&site);
        let mut cx = context(&site, false);
        cx.args.pop();
        assert!(lower(&c, &mut cx).is_err());
    }

    fn authorised_context(
        site: &rextio_plugin_api::ClaimSite,
        provider: &str,
        capability: &str,
    ) -> LoweringContext {
        testing::authorised(context(site, false), provider, capability)
    }

    #[test]
    fn the_cuda_slice_lowers_only_with_the_exact_authorisation() {
        let want = [
            "::rextio_torch::runtime::cuda0_matmul_2d(&(v0), &(v1))?",
            "::rextio_torch::runtime::cuda0_add_bias_2d_1d(&(v0), &(v1))?",
            "::rextio_torch::runtime::cuda0_relu_2d(&(v99))?",
            "::rextio_torch::runtime::cuda0_mean_dim1_2d(&(v99))?",
        ];
        let sites = crate::claim::tests::cuda_accepted();
        assert_eq!(sites.len(), want.len());
        for ((site, _), want) in sites.iter().zip(want) {
            // Lowered only under the exact authorisation; never CPU code without it.
            let e = testing::exact_authorisation(
                lower,
                &claimed(site),
                crate::CUDA_PROVIDER,
                crate::CUDA_CAPABILITY,
                &[
                    (crate::CUDA_PROVIDER, "cuda-linux-x86_64"),
                    (crate::CUDA_PROVIDER, "cuda-tensorflow-tfe-linux-x86_64"),
                    ("someone-else", crate::CUDA_CAPABILITY),
                ],
            )
            .unwrap_or_else(|why| panic!("{site:?}: {why}"));
            assert_eq!(checked(&e), compact(want));
        }
    }

    #[test]
    fn cpu_rules_lower_the_same_under_a_cuda_target() {
        for (site, _) in accepted() {
            let c = claimed(&site);
            let plain = lower(&c, &mut context(&site, false)).unwrap();
            let mut cx = authorised_context(&site, crate::CUDA_PROVIDER, crate::CUDA_CAPABILITY);
            assert_eq!(lower(&c, &mut cx).unwrap(), plain);
            assert!(!checked(&plain).contains("cuda0_"), "{}", plain.expr);
        }
    }

    #[test]
    fn a_drifted_cuda_claim_fails_closed() {
        let site = crate::claim::tests::cuda_accepted().remove(1).0;
        let mut c = claimed(&site);
        // The same form on CPU types is a different (CPU) rule: drift.
        c.site.args = vec![t2(), t1()];
        let mut cx = authorised_context(&site, crate::CUDA_PROVIDER, crate::CUDA_CAPABILITY);
        assert!(lower(&c, &mut cx).is_err());
    }
}

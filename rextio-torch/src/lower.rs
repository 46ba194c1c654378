//! Lowering: a claimed site becomes one call into `rextio_torch::runtime`.

use crate::claim;
use crate::rules;
use rextio_plugin_api::{
    ClaimOutcome, ClaimedSite, LowerError, LoweredExpr, LoweredOperand, LoweringContext,
};

const RT: &str = "::rextio_torch::runtime";

/// Borrow an operand, or move it when it is an owned temporary.
fn by_ref(op: &LoweredOperand) -> String {
    format!("&({})", op.expr)
}

/// Lower a site; re-validates the claim against the site first.
pub fn lower(site: &ClaimedSite, cx: &mut LoweringContext) -> Result<LoweredExpr, LowerError> {
    let rule = site.rule_id.as_str();
    let drift = |reason: &str| LowerError::new(rule, reason);
    match claim::claim(&site.site) {
        ClaimOutcome::Claimed {
            rule_id,
            result_type,
        } if rule_id == rule && result_type == site.result_type => {}
        _ => return Err(drift("the site no longer matches the claimed rule")),
    }
    let recv_len = usize::from(cx.receiver.is_some());
    if recv_len != usize::from(site.site.receiver.is_some())
        || cx.args.len() != site.site.args.len()
        || cx.keywords.len() != site.site.keywords.len()
    {
        return Err(drift("operand count differs from the claimed site"));
    }
    // Unary on the receiver; in place when the receiver is an owned temporary.
    let unary = |f: &str, cx: &LoweringContext| -> Result<String, LowerError> {
        let r = cx
            .receiver
            .as_ref()
            .ok_or_else(|| drift("missing receiver"))?;
        Ok(if r.owned_temp {
            format!("{RT}::{f}_owned({})?", r.expr)
        } else {
            format!("{RT}::{f}({})?", by_ref(r))
        })
    };
    let expr = match rule {
        rules::LINEAR => {
            let [x, w, b] = cx.args.as_slice() else {
                return Err(drift("linear needs three operands"));
            };
            format!(
                "{RT}::linear({}, {}, Some({}))?",
                by_ref(x),
                by_ref(w),
                by_ref(b)
            )
        }
        rules::MATMUL_BINOP | rules::MATMUL_CALL => {
            let (a, b) = match (&cx.receiver, cx.args.as_slice()) {
                (Some(a), [b]) => (a, b),
                (None, [a, b]) => (a, b),
                _ => return Err(drift("matmul needs two operands")),
            };
            format!("{RT}::matmul({}, {})?", by_ref(a), by_ref(b))
        }
        rules::ADD_SAME_RANK | rules::ADD_BROADCAST => {
            let [a, b] = cx.args.as_slice() else {
                return Err(drift("add needs two operands"));
            };
            if a.owned_temp {
                format!("{RT}::add_owned({}, {})?", a.expr, by_ref(b))
            } else if b.owned_temp {
                // Addition commutes exactly in IEEE arithmetic, so the owned right operand may host it.
                format!("{RT}::add_owned({}, {})?", b.expr, by_ref(a))
            } else {
                format!("{RT}::add({}, {})?", by_ref(a), by_ref(b))
            }
        }
        rules::MEAN_DIM1 => {
            let r = cx
                .receiver
                .as_ref()
                .ok_or_else(|| drift("missing receiver"))?;
            format!("{RT}::mean_dim1({})?", by_ref(r))
        }
        rules::SUM_DIM1 => {
            let r = cx
                .receiver
                .as_ref()
                .ok_or_else(|| drift("missing receiver"))?;
            format!("{RT}::sum_dim1({})?", by_ref(r))
        }
        other => {
            let Some(name) = rules::ACTIVATIONS.iter().find(|n| {
                rules::activation_rule(n, 1).as_deref() == Some(other)
                    || rules::activation_rule(n, 2).as_deref() == Some(other)
            }) else {
                return Err(drift("unknown rule"));
            };
            unary(name, cx)?
        }
    };
    Ok(LoweredExpr {
        expr,
        uses: Vec::new(),
    })
}

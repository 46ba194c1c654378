//! `torch.nn.functional.linear(input, weight, bias=None)`.

use super::{bind, describe, get, operand, plan_f32, rank, reject, NoPlan, Op, Plan, Src};
use crate::{codes, rules};
use rextio_plugin_api::{ClaimSite, Literal};

/// Plan functional linear: input and weight rank 2, bias rank 1 or absent/None.
pub fn plan(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let form = |why: String| {
        reject(
            codes::LINEAR_FORM,
            format!("F.linear {why}; expected F.linear(input, weight[, bias])"),
            "write F.linear(x, weight, bias) or F.linear(x, weight)",
        )
    };
    let bound = bind(site, &["input", "weight", "bias"], &[]).map_err(form)?;
    let (Some(x), Some(w)) = (get(&bound, "input"), get(&bound, "weight")) else {
        return Err(form("is missing its input or weight".into()));
    };
    let b = get(&bound, "bias").filter(|s| {
        !matches!(
            operand(site, *s).and_then(|o| o.literal.as_ref()),
            Some(Literal::None)
        )
    });
    let ranks_ok = [x, w]
        .iter()
        .all(|s| operand(site, *s).and_then(rank) == Some(2))
        && b.is_none_or(|s| operand(site, s).and_then(rank) == Some(1));
    if !ranks_ok {
        let found: Vec<String> = [Some(x), Some(w), b]
            .into_iter()
            .flatten()
            .filter_map(|s| operand(site, s))
            .map(describe)
            .collect();
        return Err(reject(
            codes::LINEAR_RANKS,
            format!("F.linear operands are ({}); expected rank-2 input and weight and an optional rank-1 bias, all float32 CPU", found.join(", ")),
            "annotate input and weight as TensorF32Cpu2D and bias as TensorF32Cpu1D",
        ));
    }
    let keyword_tensor = [Some(x), Some(w), b]
        .into_iter()
        .flatten()
        .any(|s| matches!(s, Src::Kw(_)));
    let rule = match (keyword_tensor, b) {
        (true, _) => rules::LINEAR_KEYWORDS,
        (false, Some(_)) => rules::LINEAR,
        (false, None) => rules::LINEAR_NONE,
    };
    plan_f32(rule, 2, Op::Linear { x, w, b })
}

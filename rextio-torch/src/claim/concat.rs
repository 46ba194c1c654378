//! Joining: `torch.cat(tensors[, dim])` and its alias `torch.concat` of a list or tuple of rank-2
//! float32 tensors whose length the source fixes, along a static dim.
//!
//! The host offers a list written in the call (`torch.cat([a, b])`) as the tuple of its elements,
//! so a list literal, a tuple literal and a tuple-typed local all arrive as one tuple-typed
//! operand; any other operand is not a sequence the types prove.

use super::{bind, describe, get, int_literal, norm_dim, operand, plan_f32, reject, Arg, NoPlan};
use super::{Op, Plan};
use crate::entry::Rt;
use crate::types::{F32_CPU, F32_CPU_2D};
use crate::{codes, rules};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Operand, ValueType};

/// The most tensors one lowered `torch.cat` takes: the runtime implements its tuple view up to
/// this length.
pub const MAX_TENSORS: usize = 16;

/// `torch.cat(tensors, dim=0)` / `torch.concat(tensors, dim=0)`.
pub fn plan_cat(site: &ClaimSite, name: &str) -> Result<Plan, NoPlan> {
    let shown = format!("torch.{name}()");
    let form = |why: String| {
        reject(
            codes::CAT_FORM,
            format!("{shown} {why}"),
            "write torch.cat([a, b]) or torch.cat([a, b], dim=1) with an int literal dim",
        )
    };
    let sequence = |why: String| {
        reject(
            codes::CAT_SEQUENCE,
            format!("{shown} {why}"),
            "pass a list or tuple of TensorF32Cpu2D values written in the call: torch.cat([a, b], 1)",
        )
    };
    let bound = bind(site, &["tensors", "dim"], &[]).map_err(form)?;
    let Some(src) = get(&bound, "tensors") else {
        return Err(form("has no tensors".into()));
    };
    let Some(seq) = operand(site, src) else {
        return Err(ClaimOutcome::NotCovered);
    };
    let items = match (&seq.literal, &seq.ty) {
        (None, Some(ValueType::Tuple(items))) => items,
        _ => {
            return Err(sequence(format!(
                "needs a list or tuple of tensors, got {}",
                describe(seq)
            )))
        }
    };
    if items.is_empty() {
        return Err(sequence(
            "of an empty sequence is not lowered (eager raises)".into(),
        ));
    }
    if items.len() > MAX_TENSORS {
        return Err(sequence(format!(
            "of {} tensors is not lowered (at most {MAX_TENSORS})",
            items.len()
        )));
    }
    for (i, t) in items.iter().enumerate() {
        let is_2d = t.plugin_key().is_some_and(|k| k.as_str() == F32_CPU_2D);
        if !is_2d {
            let what = describe(&Operand::typed(t.clone()));
            let hint = match t.plugin_key().and_then(|k| F32_CPU.rank(k)) {
                Some(1) => " (unsqueeze rank-1 tensors first)",
                _ => "",
            };
            return Err(sequence(format!(
                "element {i} is {what}; only rank-2 float32 CPU tensors (TensorF32Cpu2D) are concatenated natively{hint}"
            )));
        }
    }
    let dim = match get(&bound, "dim") {
        None => 0,
        Some(d) => match operand(site, d) {
            Some(op) => match int_literal(Some(op)) {
                Some(v) => v,
                None => {
                    return Err(form(format!(
                        "needs dim as an int literal, got {}",
                        describe(op)
                    )))
                }
            },
            None => return Err(ClaimOutcome::NotCovered),
        },
    };
    let Some(dim) = norm_dim(dim, 2) else {
        return Err(form(format!(
            "with dim={dim} on rank-2 tensors is out of range (eager raises IndexError)"
        )));
    };
    plan_f32(
        rules::CAT,
        2,
        Op::Call {
            f: Rt::Cat,
            args: vec![Arg::Tensors(src), Arg::Int(dim)],
        },
    )
}

#[cfg(test)]
mod tests {
    use super::MAX_TENSORS;

    #[test]
    fn the_runtime_views_every_length_up_to_the_maximum() {
        let src: String = include_str!("../runtime.rs").split_whitespace().collect();
        let indices = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
        for n in 1..=MAX_TENSORS {
            assert!(
                src.contains(&format!("({});", indices(n))),
                "no TensorTuple of length {n}"
            );
        }
        assert!(!src.contains(&format!("({});", indices(MAX_TENSORS + 1))));
    }
}

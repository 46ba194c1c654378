//! `.mean(dim=1, keepdim=False)` and `.sum(dim=1, keepdim=False)` on rank-2 receivers.

use super::{claimed, describe, rank, reject};
use crate::{codes, rules};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Literal};

/// Claim a dim-1 reduction with literal keywords.
pub fn claim(site: &ClaimSite) -> ClaimOutcome {
    let name = site.target.as_str();
    let rule = if name == "mean" {
        rules::MEAN_DIM1
    } else {
        rules::SUM_DIM1
    };
    let dim = site.keyword("dim").and_then(|o| o.literal.as_ref());
    let keepdim = site.keyword("keepdim").and_then(|o| o.literal.as_ref());
    let exact = site.args.is_empty()
        && site.keywords.len() == 2
        && matches!(dim, Some(Literal::Int(1)))
        && matches!(keepdim, Some(Literal::Bool(false)));
    if !exact {
        return reject(
            codes::REDUCTION_FORM,
            format!(".{name}(...) is lowered only as .{name}(dim=1, keepdim=False) with literal keywords"),
            &format!("write .{name}(dim=1, keepdim=False)"),
        );
    }
    let Some(recv) = &site.receiver else {
        return ClaimOutcome::NotCovered;
    };
    if rank(recv) != Some(2) {
        return reject(
            codes::REDUCTION_RANK,
            format!(
                ".{name}(dim=1, keepdim=False) on {} is not lowered; the receiver must be rank 2",
                describe(recv)
            ),
            "annotate the receiver as TensorF32Cpu2D",
        );
    }
    claimed(rule, 1)
}

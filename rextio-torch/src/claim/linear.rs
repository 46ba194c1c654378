//! `torch.nn.functional.linear(x, w, b)`.

use super::{claimed, describe, rank, reject};
use crate::{codes, rules};
use rextio_plugin_api::{ClaimOutcome, ClaimSite};

/// Claim functional linear: three positional rank (2, 2, 1) tensors, no keywords.
pub fn claim(site: &ClaimSite) -> ClaimOutcome {
    if !site.keywords.is_empty() || site.args.len() != 3 {
        return reject(
            codes::LINEAR_FORM,
            format!(
                "F.linear with {} positional operand(s) and {} keyword(s) is not lowered; expected exactly (x, weight, bias) positionally",
                site.args.len(),
                site.keywords.len()
            ),
            "write F.linear(x, weight, bias) with three positional tensors",
        );
    }
    let ranks: Vec<Option<u8>> = site.args.iter().map(rank).collect();
    if ranks != [Some(2), Some(2), Some(1)] {
        let found: Vec<String> = site.args.iter().map(describe).collect();
        return reject(
            codes::LINEAR_RANKS,
            format!(
                "F.linear operands are ({}); expected (rank-2, rank-2, rank-1) float32 CPU tensors",
                found.join(", ")
            ),
            "annotate x and weight as TensorF32Cpu2D and bias as TensorF32Cpu1D",
        );
    }
    claimed(rules::LINEAR, 2)
}

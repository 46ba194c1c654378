//! Matrix multiplication (`@`, `torch.matmul`, `.matmul`) and `+`.

use super::{claimed, describe, rank, reject};
use crate::{codes, rules};
use rextio_plugin_api::{ClaimOutcome, ClaimSite, Operand};

fn matmul_ranks(a: &Operand, b: &Operand, rule: &str) -> ClaimOutcome {
    if rank(a) == Some(2) && rank(b) == Some(2) {
        return claimed(rule, 2);
    }
    reject(
        codes::MATMUL_RANKS,
        format!(
            "matmul of {} by {} is not lowered; both operands must be rank-2 float32 CPU tensors",
            describe(a),
            describe(b)
        ),
        "annotate both operands as TensorF32Cpu2D",
    )
}

/// `a @ b`.
pub fn claim_matmul_binop(site: &ClaimSite) -> ClaimOutcome {
    let [a, b] = site.args.as_slice() else {
        return ClaimOutcome::NotCovered;
    };
    matmul_ranks(a, b, rules::MATMUL_BINOP)
}

/// `torch.matmul(a, b)`.
pub fn claim_matmul_call(site: &ClaimSite) -> ClaimOutcome {
    let ([a, b], true) = (site.args.as_slice(), site.keywords.is_empty()) else {
        return reject(
            codes::MATMUL_FORM,
            "torch.matmul is lowered only as torch.matmul(a, b) with two positional tensors and no keywords",
            "drop the keywords",
        );
    };
    matmul_ranks(a, b, rules::MATMUL_CALL)
}

/// `a.matmul(b)`.
pub fn claim_matmul_method(site: &ClaimSite) -> ClaimOutcome {
    let (Some(a), [b], true) = (
        &site.receiver,
        site.args.as_slice(),
        site.keywords.is_empty(),
    ) else {
        return reject(
            codes::MATMUL_FORM,
            ".matmul is lowered only as a.matmul(b) with one positional tensor and no keywords",
            "write a.matmul(b)",
        );
    };
    matmul_ranks(a, b, rules::MATMUL_CALL)
}

/// `a + b`.
pub fn claim_add(site: &ClaimSite) -> ClaimOutcome {
    let [a, b] = site.args.as_slice() else {
        return ClaimOutcome::NotCovered;
    };
    match (rank(a), rank(b)) {
        (Some(x), Some(y)) if x == y => claimed(rules::ADD_SAME_RANK, x),
        (Some(2), Some(1)) | (Some(1), Some(2)) => claimed(rules::ADD_BROADCAST, 2),
        (Some(_), Some(_)) => reject(
            codes::ADD_RANKS,
            format!("`+` of {} and {} is not lowered", describe(a), describe(b)),
            "use equal ranks or a rank-2 + rank-1 bias",
        ),
        _ => reject(
            codes::UNSUPPORTED_SURFACE,
            format!(
                "`+` of {} and {} is not lowered; both operands must be float32 CPU tensors",
                describe(a),
                describe(b)
            ),
            "keep scalar arithmetic on tensors in Python",
        ),
    }
}

//! `.relu()`, `.sigmoid()`, `.tanh()` on rank-1/2 receivers.

use super::{claimed, describe, rank, reject};
use crate::{codes, rules};
use rextio_plugin_api::{ClaimOutcome, ClaimSite};

/// Claim a zero-argument activation method.
pub fn claim(site: &ClaimSite) -> ClaimOutcome {
    let name = site.target.as_str();
    if !site.args.is_empty() || !site.keywords.is_empty() {
        return reject(
            codes::ACTIVATION_ARGS,
            format!(".{name}() is lowered only without arguments"),
            &format!("call .{name}() with no arguments"),
        );
    }
    let Some(recv) = &site.receiver else {
        return ClaimOutcome::NotCovered;
    };
    let Some(r) = rank(recv) else {
        return reject(
            codes::UNSUPPORTED_SURFACE,
            format!(
                ".{name}() on {} is outside the float32 CPU rank-1/2 surface",
                describe(recv)
            ),
            "keep this function in Python",
        );
    };
    match rules::activation_rule(name, r) {
        Some(id) => claimed(id, r),
        None => ClaimOutcome::NotCovered,
    }
}

//! Grad-mode decorators: `@torch.no_grad()`, `@torch.no_grad`, `@torch.inference_mode()` and
//! `@torch.inference_mode` add nothing to a native function of this plugin, whose
//! function-scope guard already runs the body with grad disabled and restores the caller's grad
//! mode on every exit; outputs never require grad.

use rextio_plugin_api::{RuleOutcome, RuleRecord, RuleScope, Stability};

/// `@torch.no_grad` / `@torch.no_grad()`.
pub const NO_GRAD: &str = "rextio-torch/decorator-no-grad";
/// `@torch.inference_mode` / `@torch.inference_mode()`.
pub const INFERENCE_MODE: &str = "rextio-torch/decorator-inference-mode";

/// The rule of a decorator this plugin takes, if any.
pub fn rule(path: &str, _called: bool) -> Option<&'static str> {
    match path {
        "torch.no_grad" | "torch.autograd.no_grad" | "torch.autograd.grad_mode.no_grad" => {
            Some(NO_GRAD)
        }
        "torch.inference_mode" | "torch.autograd.grad_mode.inference_mode" => Some(INFERENCE_MODE),
        _ => None,
    }
}

/// The decorator rules' records.
pub fn records() -> Vec<RuleRecord> {
    let rec = |id: &str, pattern: &str| RuleRecord {
        id: id.into(),
        scope: RuleScope::Call,
        pattern: pattern.into(),
        constraint: "a module-level function or module method whose body is otherwise \
            native; the native function runs with grad disabled (outputs never require grad) \
            and restores the caller's grad mode on every exit, and a method also reads and \
            admits its state with grad disabled"
            .into(),
        outcome: RuleOutcome::Native,
        diagnostic_code: None,
        guidance: "other decorators keep the function on Python".into(),
        stability: Stability::Experimental,
        verified: false,
    };
    vec![
        rec(NO_GRAD, "@torch.no_grad() / @torch.no_grad"),
        rec(
            INFERENCE_MODE,
            "@torch.inference_mode() / @torch.inference_mode",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grad_mode_decorators_and_nothing_else() {
        for p in ["torch.no_grad", "torch.inference_mode"] {
            assert!(rule(p, true).is_some() && rule(p, false).is_some(), "{p}");
        }
        for p in [
            "torch.jit.script",
            "functools.lru_cache",
            "torch.enable_grad",
        ] {
            assert!(rule(p, true).is_none(), "{p}");
        }
    }
}

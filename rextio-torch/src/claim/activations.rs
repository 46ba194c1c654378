//! Activations (`relu`, `sigmoid`, `tanh`), unary math (`abs`, `neg`, `negative`, `square`,
//! `exp`, `log`, `sqrt`), `F.relu` and exact `F.gelu`.

use super::{bind, get, operand, plan_f32, reject, NoPlan, Op, Plan, Src};
use crate::entry::Rt;
use crate::{codes, rules};
use rextio_plugin_api::{ClaimSite, Literal};

/// The runtime entry point of a unary name.
fn runtime_name(name: &str) -> Option<Rt> {
    rules::ACTIVATIONS
        .iter()
        .chain(rules::UNARY.iter())
        .find(|n| **n == name)
        .and_then(|n| Rt::from_name(n))
}

fn rule_for(name: &str, rank: u8, method: bool) -> String {
    match (rules::ACTIVATIONS.contains(&name), method) {
        (true, true) => rules::activation_method(name, rank),
        (true, false) => rules::activation_function(name),
        (false, _) => rules::unary(name),
    }
}

/// `t.relu()`, `t.exp()`, ...
pub fn plan_method(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let name = site.target.as_str();
    if !site.args.is_empty() || !site.keywords.is_empty() {
        return Err(reject(
            codes::UNARY_ARGS,
            format!(".{name}() is lowered only without arguments"),
            &format!("call .{name}() with no arguments"),
        ));
    }
    let (Some(recv), Some(f)) = (&site.receiver, runtime_name(name)) else {
        return Err(super::ClaimOutcome::NotCovered);
    };
    let r = super::f32_rank(recv, &format!(".{name}()"))?;
    plan_f32(rule_for(name, r, true), r, Op::Unary { f, t: Src::Recv })
}

/// `torch.relu(t)`, `torch.exp(t)`, ...
pub fn plan_function(site: &ClaimSite, name: &str) -> Result<Plan, NoPlan> {
    let ([t], true) = (site.args.as_slice(), site.keywords.is_empty()) else {
        return Err(reject(
            codes::UNARY_ARGS,
            format!("torch.{name} is lowered only with one positional tensor and no keywords"),
            &format!("write torch.{name}(t)"),
        ));
    };
    let Some(f) = runtime_name(name) else {
        return Err(super::ClaimOutcome::NotCovered);
    };
    let r = super::f32_rank(t, &format!("torch.{name}"))?;
    plan_f32(rule_for(name, r, false), r, Op::Unary { f, t: Src::Arg(0) })
}

/// `F.relu(t[, inplace=False])`.
pub fn plan_f_relu(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let form = |why: String| {
        reject(
            codes::UNARY_ARGS,
            format!("F.relu {why}"),
            "write F.relu(t)",
        )
    };
    let bound = bind(site, &["input", "inplace"], &[]).map_err(form)?;
    if get(&bound, "input") != Some(Src::Arg(0)) {
        return Err(form(
            "needs its tensor as the first positional argument".into(),
        ));
    }
    if let Some(s) = get(&bound, "inplace") {
        if !matches!(
            operand(site, s).and_then(|o| o.literal.as_ref()),
            Some(Literal::Bool(false))
        ) {
            return Err(reject(
                codes::IN_PLACE,
                "F.relu with inplace other than a literal False would write into its input",
                "drop inplace, or pass inplace=False",
            ));
        }
    }
    let r = super::f32_rank(&site.args[0], "F.relu")?;
    plan_f32(
        rules::F_RELU,
        r,
        Op::Unary {
            f: Rt::Relu,
            t: Src::Arg(0),
        },
    )
}

/// `F.gelu(t[, approximate="none"])`.
pub fn plan_gelu(site: &ClaimSite) -> Result<Plan, NoPlan> {
    let form = |why: String| {
        reject(
            codes::GELU_APPROXIMATE,
            format!("F.gelu {why}"),
            "write F.gelu(t) or F.gelu(t, approximate=\"none\")",
        )
    };
    let bound = bind(site, &["input"], &["approximate"]).map_err(form)?;
    if get(&bound, "input") != Some(Src::Arg(0)) {
        return Err(form(
            "needs its tensor as the only positional argument".into(),
        ));
    }
    if let Some(s) = get(&bound, "approximate") {
        match operand(site, s).and_then(|o| o.literal.as_ref()) {
            Some(Literal::Str(v)) if v == "none" => {}
            Some(Literal::Str(v)) => {
                return Err(form(format!("with approximate={v:?} is not exact GELU")))
            }
            _ => return Err(form("with a non-literal approximate is not lowered".into())),
        }
    }
    let r = super::f32_rank(&site.args[0], "F.gelu")?;
    plan_f32(
        rules::GELU,
        r,
        Op::Unary {
            f: Rt::GeluNone,
            t: Src::Arg(0),
        },
    )
}

//! The device target: the provider's preflight of `[target]`, and the gate that keeps a function
//! on Python when a plugin says it needs a device capability the provider did not authorise.

use crate::analysis::{FunctionAnalysis, ModuleAnalysis, Route};
use crate::codes;
use crate::config::TargetSection;
use crate::ir::{Expr, FnIr};
use crate::registry::Registry;
use crate::report::TargetReport;
use rextio_plugin_api::{
    BuildContribution, DeviceAuthorization, DeviceRequirement, Diagnostic, DomainRequirements,
    PreflightRequest, PreflightResult, TypeKey, ValueType, PROVIDER_DETAILS_SINCE_MINOR,
    PROVIDER_DOMAIN_SINCE_MINOR,
};
use std::collections::BTreeSet;

/// The provider answered ready, but for another capability or provider than the target's.
pub const AUTHORISATION_MISMATCH: &str = "authorisation-mismatch";
/// The provider answered ready but could not say what it adds to the generated crate.
pub const BUILD_CONTRIBUTION_FAILED: &str = "build-contribution-failed";

/// The reason codes the host itself gives a target (beside the provider's), with their meaning.
pub const HOST_REASON_CODES: &[(&str, &str)] = &[
    (
        AUTHORISATION_MISMATCH,
        "the provider answered ready for another capability or provider than the target's; nothing is authorised",
    ),
    (
        BUILD_CONTRIBUTION_FAILED,
        "the provider answered ready but its build contribution failed (the message is its error); nothing is authorised",
    ),
];

/// The preflight's outcome for the rest of the pipeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Preflight {
    /// What the reports show.
    pub report: TargetReport,
    /// The authorisation lowering may rely on (only when ready).
    pub authorization: Option<DeviceAuthorization>,
    /// The request it answered (for the lock record and the build contribution).
    pub request: PreflightRequest,
    /// What the provider adds to the generated crate (only when ready).
    pub contribution: Option<BuildContribution>,
}

/// Each device requirement a native function's plugins state for the types it uses, with
/// whether the plugin's API version gives its `device` and `runtimes` a meaning.
fn requirements_of(f: &FunctionAnalysis, registry: &Registry) -> Vec<(bool, DeviceRequirement)> {
    let (Some(ir), Route::Native(ids)) = (&f.ir, &f.route) else {
        return Vec::new();
    };
    let used = used_types(ir);
    let mut out = Vec::new();
    for id in ids {
        let Some(reg) = registry.plugin(id) else {
            continue;
        };
        if !reg.negotiated.device_requirements {
            continue;
        }
        let mine: Vec<TypeKey> = used
            .iter()
            .filter(|k| k.namespace() == id)
            .cloned()
            .collect();
        for req in reg.plugin.device_requirements(&mine) {
            out.push((reg.negotiated.device_spec, req));
        }
    }
    out
}

/// What the project's native functions require of `capability`: every stated device once, every
/// runtime pin once. `None` when a plugin requiring it predates plugin API 1.13 (it states no
/// facts, so there is nothing the provider could check).
pub fn domain_requirements(
    analyses: &[ModuleAnalysis],
    registry: &Registry,
    capability: &str,
) -> Option<DomainRequirements> {
    let mut domain = DomainRequirements::default();
    for f in analyses.iter().flat_map(|m| &m.functions) {
        for (stated, req) in requirements_of(f, registry) {
            if req.capability != capability {
                continue;
            }
            if !stated {
                return None;
            }
            if let Some(d) = req.device {
                if !domain.devices.contains(&d) {
                    domain.devices.push(d);
                }
            }
            for pin in req.runtimes {
                if !domain.runtimes.contains(&pin) {
                    domain.runtimes.push(pin);
                }
            }
        }
    }
    Some(domain)
}

/// Run the selected provider's preflight for `[target]`, with what the native functions of
/// `analyses` require of it. `None` without a target or provider (the project then targets CPU
/// only); the caller has already checked the provider exists.
pub fn preflight(
    registry: &Registry,
    target: Option<&TargetSection>,
    analyses: &[ModuleAnalysis],
) -> Option<Preflight> {
    let target = target?;
    let provider_id = target.device_provider.as_ref()?;
    let reg = registry
        .providers()
        .iter()
        .find(|p| p.provider.id() == provider_id)?;
    let capability = target.device_capability.clone().unwrap_or_default();
    let minor = reg.negotiated.declared.minor;
    let domain = (minor >= PROVIDER_DOMAIN_SINCE_MINOR)
        .then(|| domain_requirements(analyses, registry, &capability))
        .flatten();
    let request = PreflightRequest {
        capability,
        options: target.device_options.clone(),
        domain,
    };
    let details = minor >= PROVIDER_DETAILS_SINCE_MINOR;
    let mut report = TargetReport {
        provider: provider_id.clone(),
        capability: request.capability.clone(),
        ready: false,
        status: "unavailable".into(),
        reason_code: None,
        message: None,
        requirements: request.domain.clone(),
        lock: None,
    };
    let authorization = match reg.provider.preflight(&request) {
        // An authorisation for another capability than the one asked for is not one.
        PreflightResult::Ready(auth)
            if auth.capability == request.capability && auth.provider == *provider_id =>
        {
            Some(auth)
        }
        PreflightResult::Ready(auth) => {
            report.reason_code = Some(AUTHORISATION_MISMATCH.into());
            report.message = Some(format!(
                "the provider answered ready for `{}` of `{}`, not for this capability",
                auth.capability, auth.provider
            ));
            None
        }
        PreflightResult::Unavailable {
            reason_code,
            message,
        } => {
            if let Some(status) = details
                .then(|| reg.provider.reason_status(&reason_code))
                .flatten()
            {
                report.status = status;
            }
            report.reason_code = Some(reason_code);
            report.message = Some(message);
            None
        }
    };
    // A ready target's build contribution; a provider that cannot say what it adds to the
    // build does not authorise it.
    let contribution = match authorization
        .as_ref()
        .map(|_| reg.provider.build_contribution(&request))
    {
        Some(Ok(c)) => Some(c),
        Some(Err(e)) => {
            report.reason_code = Some(BUILD_CONTRIBUTION_FAILED.into());
            report.message = Some(e.to_string());
            None
        }
        None => None,
    };
    let authorization = authorization.filter(|_| contribution.is_some());
    if authorization.is_some() {
        report.ready = true;
        report.status = "ready".into();
    }
    Some(Preflight {
        report,
        authorization,
        request,
        contribution,
    })
}

/// The lock record of a ready target, from providers that negotiated it.
pub fn lock_record(registry: &Registry, preflight: &Preflight) -> Option<serde_json::Value> {
    preflight.authorization.as_ref()?;
    let reg = registry
        .providers()
        .iter()
        .find(|p| p.provider.id() == preflight.report.provider)?;
    (reg.negotiated.declared.minor >= PROVIDER_DETAILS_SINCE_MINOR)
        .then(|| reg.provider.lock_record(&preflight.request))
        .flatten()
}

fn collect_expr(e: &Expr, out: &mut BTreeSet<TypeKey>) {
    if let ValueType::Plugin(k) = &e.ty {
        out.insert(k.clone());
    }
    for c in e.children() {
        collect_expr(c, out);
    }
}

/// Every plugin type a native function's signature, locals and expressions use.
pub fn used_types(ir: &FnIr) -> BTreeSet<TypeKey> {
    let mut out = BTreeSet::new();
    let sig = ir.params.iter().map(|p| &p.ty).chain([&ir.ret]);
    for ty in sig.chain(ir.locals.iter().map(|(_, t)| t)) {
        if let ValueType::Plugin(k) = ty {
            out.insert(k.clone());
        }
    }
    crate::ir::for_each_expr(&ir.body, &mut |e| collect_expr(e, &mut out));
    out
}

/// Keep on Python every native function that needs a device capability the target does not
/// authorise, with a diagnostic (RXT019) naming the capability and the provider's reason.
pub fn gate(analyses: &mut [ModuleAnalysis], registry: &Registry, preflight: Option<&Preflight>) {
    for f in analyses.iter_mut().flat_map(|m| m.functions.iter_mut()) {
        let mut refusal = None;
        for (_, req) in requirements_of(f, registry) {
            let authorised = preflight
                .and_then(|p| p.authorization.as_ref())
                .is_some_and(|a| a.capability == req.capability);
            if authorised {
                continue;
            }
            let why = match preflight {
                None => "rextio.toml has no [target] selecting a device provider".to_owned(),
                Some(p) if p.report.capability != req.capability => format!(
                    "the target {} `{}`, not this capability",
                    if p.report.ready {
                        "authorises"
                    } else {
                        "selects"
                    },
                    p.report.capability
                ),
                Some(p) => format!(
                    "device provider `{}` reported {} ({}){}",
                    p.report.provider,
                    p.report.status,
                    p.report.reason_code.as_deref().unwrap_or("no reason code"),
                    p.report
                        .message
                        .as_deref()
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                ),
            };
            refusal = Some(
                Diagnostic::error(
                    codes::DEVICE_NOT_AUTHORIZED,
                    format!(
                        "`{}` needs device capability `{}` ({}), which is not authorised: {why}",
                        f.name, req.capability, req.reason
                    ),
                )
                .with_suggestion(
                    "configure [target] in rextio.toml for this capability, or use CPU types",
                ),
            );
            break;
        }
        if let Some(d) = refusal {
            f.diagnostics.push(d.at(f.span));
            f.route = Route::Fallback;
            f.claims.clear();
            f.ir = None;
        }
    }
}

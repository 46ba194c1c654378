//! The device target: the provider's preflight of `[target]`, and the gate that keeps a function
//! on Python when a plugin says it needs a device capability the provider did not authorise.

use crate::analysis::{ModuleAnalysis, Route};
use crate::codes;
use crate::config::TargetSection;
use crate::ir::{Expr, FnIr};
use crate::registry::Registry;
use crate::report::TargetReport;
use rextio_plugin_api::{
    DeviceAuthorization, Diagnostic, PreflightRequest, PreflightResult, TypeKey, ValueType,
    PROVIDER_DETAILS_SINCE_MINOR,
};
use std::collections::BTreeSet;

/// The preflight's outcome for the rest of the pipeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Preflight {
    /// What the reports show.
    pub report: TargetReport,
    /// The authorisation lowering may rely on (only when ready).
    pub authorization: Option<DeviceAuthorization>,
    /// The request it answered (for the lock record).
    pub request: PreflightRequest,
}

/// Run the selected provider's preflight for `[target]`. `None` without a target or provider
/// (the project then targets CPU only); the caller has already checked the provider exists.
pub fn preflight(registry: &Registry, target: Option<&TargetSection>) -> Option<Preflight> {
    let target = target?;
    let provider_id = target.device_provider.as_ref()?;
    let reg = registry
        .providers()
        .iter()
        .find(|p| p.provider.id() == provider_id)?;
    let request = PreflightRequest {
        capability: target.device_capability.clone().unwrap_or_default(),
        options: target.device_options.clone(),
    };
    let details = reg.negotiated.declared.minor >= PROVIDER_DETAILS_SINCE_MINOR;
    let (report, authorization) = match reg.provider.preflight(&request) {
        PreflightResult::Ready(auth) => (
            TargetReport {
                provider: provider_id.clone(),
                capability: request.capability.clone(),
                ready: true,
                status: "ready".into(),
                reason_code: None,
                message: None,
                lock: None,
            },
            Some(auth),
        ),
        PreflightResult::Unavailable {
            reason_code,
            message,
        } => {
            let status = details
                .then(|| reg.provider.reason_status(&reason_code))
                .flatten()
                .unwrap_or_else(|| "unavailable".into());
            (
                TargetReport {
                    provider: provider_id.clone(),
                    capability: request.capability.clone(),
                    ready: false,
                    status,
                    reason_code: Some(reason_code),
                    message: Some(message),
                    lock: None,
                },
                None,
            )
        }
    };
    // An authorisation for another capability than the one asked for is not one.
    let authorization =
        authorization.filter(|a| a.capability == request.capability && a.provider == *provider_id);
    Some(Preflight {
        report,
        authorization,
        request,
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
        let (Some(ir), Route::Native(ids)) = (&f.ir, &f.route) else {
            continue;
        };
        let used: Vec<TypeKey> = used_types(ir).into_iter().collect();
        let mut refusal = None;
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
                let authorised = preflight
                    .and_then(|p| p.authorization.as_ref())
                    .is_some_and(|a| a.capability == req.capability);
                if authorised {
                    continue;
                }
                let why = match preflight {
                    None => "rextio.toml has no [target] selecting a device provider".to_owned(),
                    Some(p) if p.report.ready => format!(
                        "the target authorises `{}`, not this capability",
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
            if refusal.is_some() {
                break;
            }
        }
        if let Some(d) = refusal {
            f.diagnostics.push(d.at(f.span));
            f.route = Route::Fallback;
            f.claims.clear();
            f.ir = None;
        }
    }
}

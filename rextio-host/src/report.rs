//! Reports: `check.json` and `build.json` (contract version 1), and the text rendering.

use crate::analysis::{ModuleAnalysis, Route};
use crate::frontend::SourceModule;
use rextio_plugin_api::Severity;
use serde::Serialize;
use std::fmt::Write as _;

/// Report contract version.
pub const CONTRACT_VERSION: &str = "1";

/// `check.json`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CheckReport {
    /// Always "1".
    pub contract_version: &'static str,
    /// The device target's preflight, when `rextio.toml` has a `[target]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetReport>,
    /// Modules in path order.
    pub modules: Vec<ModuleReport>,
}

/// The device provider's preflight of the project's `[target]`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TargetReport {
    /// Provider id.
    pub provider: String,
    /// Capability requested.
    pub capability: String,
    /// Whether the provider authorised it.
    pub ready: bool,
    /// The provider's status name (`ready`, or e.g. `unavailable`, `invalid-configuration`).
    pub status: String,
    /// The provider's stable reason code (absent when ready).
    pub reason_code: Option<String>,
    /// The provider's explanation (absent when ready).
    pub message: Option<String>,
    /// What the project's native functions require of the target, as the provider was asked to
    /// check it; absent when the host could not state it (a provider or plugin API too old).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requirements: Option<rextio_plugin_api::DomainRequirements>,
    /// What the build was authorised with (`build.json` only; option values as digests).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock: Option<serde_json::Value>,
}

/// One module.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ModuleReport {
    /// Dotted name.
    pub module: String,
    /// Path relative to the project root.
    pub path: String,
    /// Functions in source order.
    pub functions: Vec<FunctionReport>,
}

/// One function.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FunctionReport {
    /// `module.function`.
    pub qualname: String,
    /// `native-plugin:<id>[+<id>]` or `fallback-python` in JSON.
    pub route: Route,
    /// Claims of native functions.
    pub plugin_claims: Vec<ClaimReport>,
    /// Diagnostics.
    pub diagnostics: Vec<DiagnosticReport>,
}

/// One claim.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClaimReport {
    /// Rule id.
    pub rule_id: String,
    /// Line.
    pub line: u32,
    /// Column.
    pub column: u32,
}

/// One diagnostic.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DiagnosticReport {
    /// Code.
    pub code: String,
    /// Severity (`error`, `warning`, `info` in JSON).
    pub severity: Severity,
    /// Message.
    pub message: String,
    /// Line.
    pub line: Option<u32>,
    /// Column.
    pub column: Option<u32>,
    /// Suggestion.
    pub suggestion: Option<String>,
}

impl CheckReport {
    /// Build from analyses.
    pub fn new(analyses: &[ModuleAnalysis]) -> Self {
        let modules = analyses
            .iter()
            .map(|m| ModuleReport {
                module: m.module.clone(),
                path: m.path.to_string_lossy().into_owned(),
                functions: m
                    .functions
                    .iter()
                    .map(|f| FunctionReport {
                        qualname: f.qualname.clone(),
                        route: f.route.clone(),
                        plugin_claims: f
                            .claims
                            .iter()
                            .map(|c| ClaimReport {
                                rule_id: c.rule_id.clone(),
                                line: c.span.line,
                                column: c.span.column,
                            })
                            .collect(),
                        diagnostics: f
                            .diagnostics
                            .iter()
                            .map(|d| DiagnosticReport {
                                code: d.code.clone(),
                                severity: d.severity,
                                message: d.message.clone(),
                                line: d.span.map(|s| s.line),
                                column: d.span.map(|s| s.column),
                                suggestion: d.suggestion.clone(),
                            })
                            .collect(),
                    })
                    .collect(),
            })
            .collect();
        Self {
            contract_version: CONTRACT_VERSION,
            target: None,
            modules,
        }
    }

    /// Every function's route, as (qualname, route).
    pub fn routes(&self) -> Vec<(String, String)> {
        self.modules
            .iter()
            .flat_map(|m| {
                m.functions
                    .iter()
                    .map(|f| (f.qualname.clone(), f.route.label()))
            })
            .collect()
    }
}

/// Render the check as text: a route line per function, then each diagnostic with its source
/// line and a caret.
pub fn render_text(report: &CheckReport, sources: &[SourceModule]) -> String {
    let mut out = String::new();
    if let Some(t) = &report.target {
        let _ = write!(
            out,
            "target {} via {}: {}",
            t.capability, t.provider, t.status
        );
        if let (Some(code), Some(msg)) = (&t.reason_code, &t.message) {
            let _ = write!(out, " [{code}] {msg}");
        }
        out.push('\n');
        if let Some(r) = &t.requirements {
            for d in &r.devices {
                let _ = writeln!(
                    out,
                    "  requires {} on {} via {} ({}; {}; {}){}",
                    d.logical_device,
                    d.backend,
                    d.runtime.as_deref().unwrap_or("its own runtime"),
                    d.features.join(", "),
                    d.layouts.join(", "),
                    d.memory_spaces.join(", "),
                    if d.architectures.is_empty() {
                        String::new()
                    } else {
                        format!(" on {}", d.architectures.join(", "))
                    }
                );
            }
            for pin in &r.runtimes {
                let _ = writeln!(out, "  requires {pin}");
            }
        }
    }
    for m in &report.modules {
        let src = sources.iter().find(|s| s.name == m.module);
        for f in &m.functions {
            let _ = writeln!(out, "{}  {}", f.qualname, f.route.label());
            for d in &f.diagnostics {
                let loc = match (d.line, d.column) {
                    (Some(l), Some(c)) => format!("{}:{l}:{c}", m.path),
                    _ => m.path.clone(),
                };
                let _ = writeln!(
                    out,
                    "  {}[{}] {loc}: {}",
                    d.severity.as_str(),
                    d.code,
                    d.message
                );
                if let (Some(src), Some(l), Some(c)) = (src, d.line, d.column) {
                    let text = src.line_text(l);
                    let _ = writeln!(out, "     | {text}");
                    let _ = writeln!(out, "     | {}^", " ".repeat(c.saturating_sub(1) as usize));
                }
                if let Some(s) = &d.suggestion {
                    let _ = writeln!(out, "     = help: {s}");
                }
            }
        }
    }
    out
}

/// `build.json`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BuildReport {
    /// Always "1".
    pub contract_version: &'static str,
    /// The device target's preflight and lock record, when `rextio.toml` has a `[target]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetReport>,
    /// The check part.
    pub modules: Vec<ModuleReport>,
    /// Artifacts.
    pub artifacts: Artifacts,
    /// Stage timings in milliseconds.
    pub timings_ms: Timings,
    /// Cargo's outcome.
    pub cargo: CargoReport,
    /// The interpreter the extension was built for, where the choice came from, and the
    /// discovered candidates skipped before it (absent when nothing is native).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python: Option<crate::python_env::Discovery>,
}

/// Built artifacts.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Artifacts {
    /// The importable tree.
    pub python_dir: String,
    /// The native extension (absent when nothing is native).
    pub extension: Option<String>,
    /// The generated crate.
    pub crate_dir: Option<String>,
    /// The wheel in `dist/`.
    pub wheel: Option<String>,
}

/// Stage timings.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Timings {
    /// Parse + analysis.
    pub check: u128,
    /// Lowering + codegen.
    pub codegen: u128,
    /// Cargo (every round, when functions were demoted and the crate rebuilt).
    pub cargo: u128,
    /// Wheel packaging.
    pub package: u128,
}

/// Cargo's outcome.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CargoReport {
    /// What happened.
    pub status: CargoStatus,
    /// The command.
    pub command: Option<String>,
}

/// How the cargo stage ended (`ok`, `skipped`, `failed` in JSON).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CargoStatus {
    /// The extension was built.
    Ok,
    /// Nothing is native, so nothing was compiled.
    Skipped,
    /// The build failed.
    Failed,
}

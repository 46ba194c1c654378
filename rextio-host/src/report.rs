//! Reports: `check.json` and `build.json` (contract version 1), and the text rendering.

use crate::analysis::ModuleAnalysis;
use crate::frontend::SourceModule;
use serde::Serialize;
use std::fmt::Write as _;

/// Report contract version.
pub const CONTRACT_VERSION: &str = "1";

/// `check.json`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CheckReport {
    /// Always "1".
    pub contract_version: &'static str,
    /// Modules in path order.
    pub modules: Vec<ModuleReport>,
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
    /// `native-plugin:<id>` or `fallback-python`.
    pub route: String,
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
    /// Severity.
    pub severity: String,
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
                        route: f.route.label(),
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
                                severity: d.severity.as_str().to_owned(),
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
                    .map(|f| (f.qualname.clone(), f.route.clone()))
            })
            .collect()
    }
}

/// Render the check as text: a route line per function, then each diagnostic with its source
/// line and a caret.
pub fn render_text(report: &CheckReport, sources: &[SourceModule]) -> String {
    let mut out = String::new();
    for m in &report.modules {
        let src = sources.iter().find(|s| s.name == m.module);
        for f in &m.functions {
            let _ = writeln!(out, "{}  {}", f.qualname, f.route);
            for d in &f.diagnostics {
                let loc = match (d.line, d.column) {
                    (Some(l), Some(c)) => format!("{}:{l}:{c}", m.path),
                    _ => m.path.clone(),
                };
                let _ = writeln!(out, "  {}[{}] {loc}: {}", d.severity, d.code, d.message);
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
    /// The check part.
    pub modules: Vec<ModuleReport>,
    /// Artifacts.
    pub artifacts: Artifacts,
    /// Stage timings in milliseconds.
    pub timings_ms: Timings,
    /// Cargo's outcome.
    pub cargo: CargoReport,
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
    /// Cargo.
    pub cargo: u128,
}

/// Cargo's outcome.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CargoReport {
    /// `ok`, `skipped` (nothing native) or `failed`.
    pub status: String,
    /// The command.
    pub command: Option<String>,
}

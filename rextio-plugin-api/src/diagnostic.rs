//! Diagnostics: values collected along the way, rendered by the host.

use serde::{Deserialize, Serialize};

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The function stays on Python because of this.
    Error,
    /// Worth knowing; does not change the route.
    Warning,
    /// Informational.
    Info,
}

impl Severity {
    /// Lowercase name as used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// A source position (1-based line and column), filled in by the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

/// One diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Diagnostic {
    /// `RXTP-<SEG>-NNN` for plugins, `RXT0NN` for the host.
    pub code: String,
    /// Severity.
    pub severity: Severity,
    /// What was found and why it is not lowered.
    pub message: String,
    /// What to do instead.
    pub suggestion: Option<String>,
    /// Where; plugins leave it empty (claims do not depend on positions).
    pub span: Option<Span>,
}

impl Diagnostic {
    /// An error diagnostic without a position.
    pub fn error(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            severity: Severity::Error,
            message: message.into(),
            suggestion: None,
            span: None,
        }
    }
    /// Attach a suggestion.
    pub fn with_suggestion(mut self, s: impl Into<String>) -> Self {
        self.suggestion = Some(s.into());
        self
    }
    /// Attach a position.
    pub fn at(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }
}

/// The documentation of one diagnostic code, printed by `rextio explain`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeDoc {
    /// The code.
    pub code: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// Long explanation: what triggers it, why, and what to write instead.
    pub explanation: &'static str,
}

/// Whether `code` has the plugin code shape `RXTP-<SEG>-NNN` (SEG: upper-case letters and digits).
pub fn is_plugin_code(code: &str) -> bool {
    let Some(rest) = code.strip_prefix("RXTP-") else {
        return false;
    };
    let Some((seg, num)) = rest.rsplit_once('-') else {
        return false;
    };
    !seg.is_empty()
        && seg
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && num.len() == 3
        && num.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `code` has the host code shape `RXT0NN`.
pub fn is_host_code(code: &str) -> bool {
    code.len() == 6 && code.starts_with("RXT0") && code[4..].bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_code_shape() {
        for ok in ["RXTP-TORCH-001", "RXTP-TENSORFLOW-010", "RXTP-X9-999"] {
            assert!(is_plugin_code(ok), "{ok}");
        }
        for bad in [
            "RXTP-torch-001",
            "RXTP--001",
            "RXTP-TORCH-01",
            "RXTP-TORCH-0001",
            "RXT001",
            "RXTP-TORCH-00a",
            "RXTP-TO_RCH-001",
        ] {
            assert!(!is_plugin_code(bad), "{bad}");
        }
    }

    #[test]
    fn host_code_shape() {
        assert!(is_host_code("RXT001"));
        assert!(is_host_code("RXT075"));
        assert!(!is_host_code("RXT101"));
        assert!(!is_host_code("RXTP-A-001"));
    }
}

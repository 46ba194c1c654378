//! Generated documentation: `docs/diagnostics.md`, rendered from the code tables themselves
//! (the host's [`crate::codes::CODES`], every registered plugin's
//! [`rextio_plugin_api::Plugin::diagnostic_codes`], and the CUDA device provider's reason codes
//! when the `device-cuda` feature is on), so the reference cannot drift from what `rextio
//! explain` prints. A test in `rextio-host/tests/docs.rs` fails when the committed file is stale.

use crate::registry::Registry;
use rextio_plugin_api::CodeDoc;
use std::fmt::Write as _;

/// The command, run from the workspace root, that rewrites `docs/diagnostics.md`.
pub const REGENERATE_DIAGNOSTICS: &str =
    "cargo run -p rextio-host --bin rextio -- docs diagnostics --out docs/diagnostics.md";

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn code_section(out: &mut String, docs: &[&CodeDoc]) {
    let _ = writeln!(out, "| code | summary |\n| --- | --- |");
    for d in docs {
        let anchor = d.code.to_ascii_lowercase();
        let _ = writeln!(out, "| [{}](#{anchor}) | {} |", d.code, cell(d.summary));
    }
    for d in docs {
        let _ = writeln!(
            out,
            "\n### {}\n\n*{}*\n\n{}",
            d.code,
            d.summary,
            d.explanation.trim()
        );
    }
}

/// The Markdown of `docs/diagnostics.md` for the plugins and providers in `registry`.
pub fn diagnostics_markdown(registry: &Registry) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Diagnostics reference\n\n\
         <!-- Generated from the code tables; do not edit. Regenerate with:\n     {REGENERATE_DIAGNOSTICS}\n-->\n\n\
         Every function `rextio check` keeps on Python carries at least one diagnostic with a stable\n\
         code. Host codes (`RXT0NN`) come from the analysis, the emitter and the build driver\n\
         (`rextio-host/src/codes.rs`); plugin codes (`RXTP-<SEGMENT>-NNN`) come from each backend's\n\
         `Plugin::diagnostic_codes()`; device reason codes come from the device provider's preflight\n\
         and appear in RXT019 diagnostics and in the `target` section of `check.json`/`build.json`.\n\
         Codes are never reused. `rextio explain CODE` prints the same text. See\n\
         [architecture.md](architecture.md) for where each stage reports."
    );

    let mut host: Vec<&CodeDoc> = crate::codes::CODES.iter().collect();
    host.sort_by_key(|d| d.code);
    let _ = writeln!(out, "\n## Host codes (rextio-host)\n");
    code_section(&mut out, &host);

    let mut plugins: Vec<_> = registry.plugins().iter().collect();
    plugins.sort_by_key(|r| r.plugin.id().to_owned());
    for r in plugins {
        let mut docs: Vec<&CodeDoc> = r.plugin.diagnostic_codes().iter().collect();
        docs.sort_by_key(|d| d.code);
        let _ = writeln!(
            out,
            "\n## Plugin codes: {} (plugin API {})\n",
            r.plugin.id(),
            r.plugin.api_version()
        );
        if docs.is_empty() {
            let _ = writeln!(out, "This plugin declares no diagnostic codes.");
        } else {
            code_section(&mut out, &docs);
        }
    }
    let _ = writeln!(
        out,
        "\n## Target reason codes (rextio-host)\n\n\
         Reported under `target` like a provider's, when the host cannot take a provider's ready\n\
         answer; functions that need the device capability stay on Python (RXT019).\n\n\
         | reason code | status | meaning |\n| --- | --- | --- |"
    );
    for (code, meaning) in crate::target::HOST_REASON_CODES {
        let _ = writeln!(out, "| `{code}` | unavailable | {} |", cell(meaning));
    }
    device_reason_codes(&mut out);
    out
}

#[cfg(feature = "device-cuda")]
fn device_reason_codes(out: &mut String) {
    use rextio_device_cuda::ReasonCode;
    let _ = writeln!(
        out,
        "\n## Device reason codes: {}\n\n\
         The preflight of `[target] device_provider = \"{}\"` ends with one reason code; its status\n\
         is the coarser class reported next to it. Any code but `ready` keeps functions that need\n\
         the device capability on Python (RXT019).\n\n\
         | reason code | status | meaning |\n| --- | --- | --- |",
        rextio_device_cuda::capability::PROVIDER_ID,
        rextio_device_cuda::capability::PROVIDER_ID
    );
    for code in ReasonCode::ALL {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            code.as_str(),
            code.status(),
            cell(code.summary())
        );
    }
}

#[cfg(not(feature = "device-cuda"))]
fn device_reason_codes(_out: &mut String) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_code_has_a_heading_and_a_table_row() {
        let registry = Registry::builder()
            .build()
            .expect("an empty registry builds");
        let md = diagnostics_markdown(&registry);
        for d in crate::codes::CODES {
            assert!(md.contains(&format!("\n### {}\n", d.code)), "{}", d.code);
            assert!(md.contains(&format!("| [{}](#", d.code)), "{}", d.code);
        }
        assert!(md.contains(REGENERATE_DIAGNOSTICS));
    }

    #[test]
    fn table_cells_escape_pipes_and_newlines() {
        assert_eq!(cell("a | b\nc"), "a \\| b c");
    }
}

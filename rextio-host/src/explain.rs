//! `rextio explain CODE`: the documentation of host and plugin codes.

use crate::codes;
use crate::registry::Registry;
use rextio_plugin_api::CodeDoc;

/// Find a code's documentation and who owns it.
pub fn explain<'a>(code: &str, registry: &'a Registry) -> Option<(String, &'a CodeDoc)>
where
    'static: 'a,
{
    let code = code.trim().to_ascii_uppercase();
    if let Some(doc) = codes::CODES.iter().find(|d| d.code == code) {
        return Some(("rextio host".to_owned(), doc));
    }
    registry.plugins().iter().find_map(|r| {
        r.plugin
            .diagnostic_codes()
            .iter()
            .find(|d| d.code == code)
            .map(|d| (r.plugin.id().to_owned(), d))
    })
}

/// Render one code's documentation.
pub fn render(owner: &str, doc: &CodeDoc) -> String {
    format!(
        "{} ({owner}): {}\n\n{}\n",
        doc.code, doc.summary, doc.explanation
    )
}

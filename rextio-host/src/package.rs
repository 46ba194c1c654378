//! Packaging: the Python wrapper tree, each module copied verbatim with the binding block the
//! emitter makes for it (`crate::emit::python`); the wheel itself is written by [`crate::wheel`].

use crate::emit::Placed;
use crate::frontend::SourceModule;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The Python tree: every module copied verbatim, with a binding block appended to modules that
/// have native functions. Paths are relative to `.rextio/build/python/`.
pub fn python_tree(
    modules: &[SourceModule],
    placed: &[Placed],
    ext_name: &str,
    preload: &[String],
) -> Vec<(PathBuf, String)> {
    let mut by_module: BTreeMap<&str, Vec<&Placed>> = BTreeMap::new();
    for p in placed.iter().filter(|p| p.function.rust_fn.is_some()) {
        by_module.entry(p.module.as_str()).or_default().push(p);
    }
    modules
        .iter()
        .map(|m| {
            let rel = m
                .rel_path
                .strip_prefix("src")
                .unwrap_or(&m.rel_path)
                .to_owned();
            let mut text = m.source.clone();
            if let Some(fns) = by_module.get(m.name.as_str()) {
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&crate::emit::python::binding_block(fns, ext_name, preload));
            }
            (rel, text)
        })
        .collect()
}

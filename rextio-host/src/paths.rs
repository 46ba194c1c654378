//! Where Rextio keeps state shared across projects: one cache root, computed here only.

use std::path::PathBuf;

fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The cache root: `REXTIO_CACHE_DIR`, else `$XDG_CACHE_HOME/rextio`, else
/// `$HOME/.cache/rextio`, else `rextio` under the system temporary directory.
pub fn cache_root() -> PathBuf {
    if let Some(d) = var("REXTIO_CACHE_DIR") {
        return d;
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return d.join("rextio");
    }
    match var("HOME") {
        Some(home) => home.join(".cache").join("rextio"),
        None => std::env::temp_dir().join("rextio"),
    }
}

/// The cargo target directory shared by every generated crate (so tch and torch-sys compile
/// once per machine): `REXTIO_TARGET_DIR`, else `<cache root>/target`.
pub fn target_dir() -> PathBuf {
    var("REXTIO_TARGET_DIR").unwrap_or_else(|| cache_root().join("target"))
}

/// Where certification evidence is read and written: `REXTIO_EVIDENCE_DIR`, else
/// `<cache root>/certification`.
pub fn evidence_dir() -> PathBuf {
    var("REXTIO_EVIDENCE_DIR").unwrap_or_else(|| cache_root().join("certification"))
}

//! Where Rextio keeps state shared across projects: one cache root, computed here only.

use std::path::{Path, PathBuf};

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

/// The cargo target directory shared by the generated crates built with the Python environment
/// whose `sys.prefix` is `prefix`: `REXTIO_TARGET_DIR` as given, else
/// `<cache root>/target/<environment>-<hash>` (see [`environment_target_dir`]).
pub fn target_dir(prefix: &Path) -> PathBuf {
    var("REXTIO_TARGET_DIR")
        .unwrap_or_else(|| environment_target_dir(&cache_root().join("target"), prefix))
}

/// One target directory per Python environment under `root`, so tch and torch-sys compile once
/// per environment rather than once per project. Not one per machine: torch-sys's build script
/// finds libtorch through the environment's interpreter and bakes that `torch/lib` into its
/// link paths and rpath, but it does not rerun when the environment changes, so a crate built
/// for a second environment in a shared directory would link the first one's libtorch. The
/// name is the environment's directory name and a hash of its canonical path.
pub fn environment_target_dir(root: &Path, prefix: &Path) -> PathBuf {
    use sha2::{Digest as _, Sha256};
    let canonical = prefix
        .canonicalize()
        .unwrap_or_else(|_| prefix.to_path_buf());
    let digest = Sha256::digest(canonical.to_string_lossy().as_bytes());
    let hash: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    let name: String = canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    let name = name.trim_start_matches('.');
    root.join(if name.is_empty() {
        format!("env-{hash}")
    } else {
        format!("{name}-{hash}")
    })
}

/// Where certification evidence is read and written: `REXTIO_EVIDENCE_DIR`, else
/// `<cache root>/certification`.
pub fn evidence_dir() -> PathBuf {
    var("REXTIO_EVIDENCE_DIR").unwrap_or_else(|| cache_root().join("certification"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn each_python_environment_gets_its_own_target_directory() {
        let tmp = std::env::temp_dir().join(format!("rextio-paths-{}", std::process::id()));
        let (a, b) = (tmp.join("venv-a"), tmp.join("work").join(".venv"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let root = Path::new("/cache/target");
        let da = environment_target_dir(root, &a);
        let db = environment_target_dir(root, &b);
        assert_ne!(da, db);
        assert_eq!(da.parent(), Some(root));
        let name = da.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("venv-a-") && name.len() == "venv-a-".len() + 12,
            "{name}"
        );
        assert!(
            db.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("venv-"),
            "{db:?}"
        );
        // The same environment reached another way is the same directory.
        let again = environment_target_dir(root, &tmp.join("work").join("..").join("venv-a"));
        assert_eq!(again, da);
        // Stable: the name depends only on the path.
        assert_eq!(environment_target_dir(root, &a), da);
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}

//! Runtime crate sources for generated crates. The plugin API and the backends carry their own
//! sources (`CrateSource::Embedded`); the host writes each set once under
//! `<cache root>/crates/<digest>/<crate>/`, keyed by a digest of every file, so a generated crate
//! depends on an immutable copy, never on the checkout `rextio` was built from.

use rextio_plugin_api::{CrateDependency, CrateSource};
use sha2::{Digest as _, Sha256};
use std::path::{Path, PathBuf};

/// The generated crate's dependency on the plugin API's runtime helpers, embedded.
pub fn plugin_api_dependency() -> CrateDependency {
    CrateDependency {
        name: "rextio-plugin-api".into(),
        source: CrateSource::embedded(rextio_plugin_api::embedded::EMBEDDED_SOURCES),
        features: vec!["runtime".into()],
        build_env: vec![],
        forbidden_env: vec![],
    }
}

/// A digest of a set of embedded crates (names, paths and texts).
fn digest(crates: &[(&str, &[(String, String)])]) -> String {
    let mut h = Sha256::new();
    for (name, files) in crates {
        h.update(name.as_bytes());
        h.update([0]);
        for (path, text) in files.iter() {
            h.update(path.as_bytes());
            h.update([0]);
            h.update(text.as_bytes());
            h.update([0]);
        }
    }
    h.finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn write_set(dir: &Path, crates: &[(&str, &[(String, String)])]) -> std::io::Result<()> {
    for (name, files) in crates {
        for (rel, text) in files.iter() {
            // Only plain relative paths inside the crate's directory.
            let rel = Path::new(rel);
            if rel.is_absolute()
                || rel
                    .components()
                    .any(|c| !matches!(c, std::path::Component::Normal(_)))
            {
                return Err(std::io::Error::other(format!(
                    "embedded file `{}` of `{name}` is not a relative path inside the crate",
                    rel.display()
                )));
            }
            let path = dir.join(name).join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, text)?;
        }
    }
    Ok(())
}

/// Replace every embedded dependency by a path to its copy under `root` (written once per
/// digest; concurrent builds race only to rename identical trees).
pub fn materialize(
    deps: Vec<CrateDependency>,
    root: &Path,
) -> std::io::Result<Vec<CrateDependency>> {
    let crates: Vec<(&str, &[(String, String)])> = deps
        .iter()
        .filter_map(|d| match &d.source {
            CrateSource::Embedded(files) => Some((d.name.as_str(), files.as_slice())),
            _ => None,
        })
        .collect();
    if crates.is_empty() {
        return Ok(deps);
    }
    let set = digest(&crates);
    let dir = root.join(&set);
    if !dir.join(".complete").exists() {
        std::fs::create_dir_all(root)?;
        // Unique per call: builds in other processes and other threads of this one may be
        // writing the same set right now.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = root.join(format!(".tmp-{}-{n}-{set}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        write_set(&tmp, &crates)?;
        std::fs::write(tmp.join(".complete"), b"")?;
        if std::fs::rename(&tmp, &dir).is_err() {
            // Another build wrote the same set first.
            let _ = std::fs::remove_dir_all(&tmp);
            if !dir.join(".complete").exists() {
                return Err(std::io::Error::other(format!(
                    "cannot write runtime sources under {}",
                    dir.display()
                )));
            }
        }
    }
    Ok(deps
        .into_iter()
        .map(|mut d| {
            if matches!(d.source, CrateSource::Embedded(_)) {
                d.source = CrateSource::Path(dir.join(&d.name).to_string_lossy().into_owned());
            }
            d
        })
        .collect())
}

/// Where runtime sources are written: `<cache root>/crates`.
pub fn crates_root() -> PathBuf {
    crate::paths::cache_root().join("crates")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_writers_of_one_set_all_get_a_complete_copy() {
        let root = std::env::temp_dir().join(format!("rextio-vendor-race-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let root = root.clone();
                std::thread::spawn(move || materialize(vec![plugin_api_dependency()], &root))
            })
            .collect();
        for t in threads {
            let out = t.join().unwrap().unwrap();
            let CrateSource::Path(p) = &out[0].source else {
                panic!("not a path")
            };
            let dir = PathBuf::from(p);
            assert!(dir.join("Cargo.toml").exists() && dir.join("src/lib.rs").exists());
        }
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn embedded_crates_are_written_once_per_digest_beside_each_other() {
        let root = std::env::temp_dir().join(format!("rextio-vendor-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let api = plugin_api_dependency();
        let other = CrateDependency {
            name: "other".into(),
            source: CrateSource::Registry("=1.0.0".into()),
            features: vec![],
            build_env: vec![],
            forbidden_env: vec![],
        };
        let out = materialize(vec![api.clone(), other.clone()], &root).unwrap();
        let CrateSource::Path(p) = &out[0].source else {
            panic!("not a path")
        };
        let dir = PathBuf::from(p);
        assert!(dir.join("Cargo.toml").exists() && dir.join("src/lib.rs").exists());
        assert!(
            dir.join("src/runtime.rs").exists(),
            "every source file, whatever the features"
        );
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(!manifest.contains("workspace = true"), "{manifest}");
        assert_eq!(out[1], other);
        // The same set again is the same directory; another set is another directory.
        let again = materialize(vec![api.clone()], &root).unwrap();
        assert_eq!(again[0].source, out[0].source);
        let mut changed = api;
        if let CrateSource::Embedded(files) = &mut changed.source {
            files.push(("src/extra.rs".into(), "// x".into()));
        }
        let other_set = materialize(vec![changed], &root).unwrap();
        assert_ne!(other_set[0].source, out[0].source);
        // Paths escaping the crate directory are refused.
        let evil = CrateDependency {
            name: "evil".into(),
            source: CrateSource::Embedded(vec![("../x.rs".into(), String::new())]),
            features: vec![],
            build_env: vec![],
            forbidden_env: vec![],
        };
        assert!(materialize(vec![evil], &root).is_err());
        let _ = std::fs::remove_dir_all(&root);
    }
}

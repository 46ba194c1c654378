//! # rextio-embed
//!
//! Used from the build scripts of the crates that generated crates depend on (the plugin API's
//! runtime, the backends' runtimes). [`embed_crate`] writes `$OUT_DIR/embedded_sources.rs`: a
//! table of the crate's files, its `src/` tree included with `include_str!` and its manifest
//! rewritten to stand alone (workspace inheritance resolved from the workspace root, sibling
//! workspace crates as `../<name>` paths, no dev-dependencies or lints). The host writes these
//! files under its cache directory, so an installed `rextio` builds projects without the
//! checkout it was built from.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// Why a crate could not be embedded.
#[derive(Debug)]
pub struct EmbedError(pub String);

impl std::fmt::Display for EmbedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EmbedError {}

fn err(msg: impl Into<String>) -> EmbedError {
    EmbedError(msg.into())
}

fn read_toml(path: &Path) -> Result<Table, EmbedError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| err(format!("cannot read {}: {e}", path.display())))?;
    toml::from_str(&text).map_err(|e| err(format!("cannot parse {}: {e}", path.display())))
}

/// The workspace manifest above `crate_dir`.
fn workspace_manifest(crate_dir: &Path) -> Result<Table, EmbedError> {
    let mut dir = crate_dir.parent();
    while let Some(d) = dir {
        let candidate = d.join("Cargo.toml");
        if candidate.exists() {
            let t = read_toml(&candidate)?;
            if t.contains_key("workspace") {
                return Ok(t);
            }
        }
        dir = d.parent();
    }
    Err(err(format!(
        "no workspace manifest above {}",
        crate_dir.display()
    )))
}

/// Resolve one dependency entry against `[workspace.dependencies]`.
fn resolve_dep(name: &str, dep: &Value, ws_deps: &Table) -> Result<Value, EmbedError> {
    let Some(t) = dep.as_table() else {
        return Ok(dep.clone());
    };
    if t.get("workspace").and_then(Value::as_bool) != Some(true) {
        if t.contains_key("path") {
            return Err(err(format!(
                "dependency `{name}` is a path outside the workspace table; declare it in [workspace.dependencies]"
            )));
        }
        return Ok(dep.clone());
    }
    let base = ws_deps
        .get(name)
        .ok_or_else(|| err(format!("`{name}` is not in [workspace.dependencies]")))?;
    let mut out = match base {
        Value::String(v) => {
            let mut t = Table::new();
            t.insert("version".into(), Value::String(v.clone()));
            t
        }
        Value::Table(b) => b.clone(),
        _ => {
            return Err(err(format!(
                "workspace dependency `{name}` has an odd form"
            )))
        }
    };
    // A sibling workspace crate is embedded next to this one.
    if out.remove("path").is_some() {
        out.insert("path".into(), Value::String(format!("../{name}")));
    }
    for (k, v) in t {
        match k.as_str() {
            "workspace" => {}
            "features" => {
                let mut feats: Vec<Value> = out
                    .get("features")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for f in v.as_array().into_iter().flatten() {
                    if !feats.contains(f) {
                        feats.push(f.clone());
                    }
                }
                out.insert("features".into(), Value::Array(feats));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(Value::Table(out))
}

/// The build dependencies named by `package.metadata.rextio-embed.build-dependencies`,
/// resolved against the workspace.
fn build_dependencies(
    manifest: &Table,
    embed_meta: &Table,
    ws_deps: &Table,
) -> Result<Table, EmbedError> {
    let mut out = Table::new();
    let Some(names) = embed_meta.get("build-dependencies") else {
        return Ok(out);
    };
    let names = names
        .as_array()
        .ok_or_else(|| err("package.metadata.rextio-embed.build-dependencies must be a list"))?;
    let declared = manifest.get("build-dependencies").and_then(Value::as_table);
    for name in names {
        let name = name
            .as_str()
            .ok_or_else(|| err("package.metadata.rextio-embed.build-dependencies holds names"))?;
        let dep = declared.and_then(|d| d.get(name)).ok_or_else(|| {
            err(format!(
                "`{name}` is kept for the embedded build script but is not a build-dependency"
            ))
        })?;
        out.insert(name.to_owned(), resolve_dep(name, dep, ws_deps)?);
    }
    Ok(out)
}

/// The crate's manifest, standing alone.
pub fn standalone_manifest(crate_dir: &Path) -> Result<String, EmbedError> {
    let mut manifest = read_toml(&crate_dir.join("Cargo.toml"))?;
    let ws = workspace_manifest(crate_dir)?;
    let ws_table = ws.get("workspace").and_then(Value::as_table);
    let ws_package = ws_table
        .and_then(|w| w.get("package"))
        .and_then(Value::as_table)
        .cloned()
        .unwrap_or_default();
    let ws_deps = ws_table
        .and_then(|w| w.get("dependencies"))
        .and_then(Value::as_table)
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Table(pkg)) = manifest.get_mut("package") {
        let keys: Vec<String> = pkg.keys().cloned().collect();
        for k in keys {
            let inherited = pkg
                .get(&k)
                .and_then(Value::as_table)
                .and_then(|t| t.get("workspace"))
                .and_then(Value::as_bool)
                == Some(true);
            if inherited {
                let v = ws_package
                    .get(&k)
                    .ok_or_else(|| err(format!("package.{k} is not in [workspace.package]")))?;
                pkg.insert(k, v.clone());
            }
        }
        pkg.remove("build");
    }
    // `[package.metadata.rextio-embed]`: the copy's own build script (a file under `src/`) and
    // the build dependencies it keeps.
    let embed_meta = manifest
        .get("package")
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("rextio-embed"))
        .and_then(Value::as_table)
        .cloned()
        .unwrap_or_default();
    let kept_build_deps = build_dependencies(&manifest, &embed_meta, &ws_deps)?;
    if let Some(build) = embed_meta.get("build") {
        let build = build
            .as_str()
            .filter(|b| b.starts_with("src/"))
            .ok_or_else(|| err("package.metadata.rextio-embed.build must be a path under src/"))?;
        if let Some(Value::Table(pkg)) = manifest.get_mut("package") {
            pkg.insert("build".into(), Value::String(build.to_owned()));
        }
    }
    if let Some(Value::Table(pkg)) = manifest.get_mut("package") {
        if let Some(Value::Table(meta)) = pkg.get_mut("metadata") {
            meta.remove("rextio-embed");
            if meta.is_empty() {
                pkg.remove("metadata");
            }
        }
    }
    for section in [
        "dev-dependencies",
        "build-dependencies",
        "lints",
        "bin",
        "test",
        "bench",
        "example",
    ] {
        manifest.remove(section);
    }
    if let Some(Value::Table(deps)) = manifest.get("dependencies").cloned() {
        let mut out = Table::new();
        for (name, dep) in deps {
            out.insert(name.clone(), resolve_dep(&name, &dep, &ws_deps)?);
        }
        manifest.insert("dependencies".into(), Value::Table(out));
    }
    if !kept_build_deps.is_empty() {
        manifest.insert("build-dependencies".into(), Value::Table(kept_build_deps));
    }
    // The copy is built without the build script that sets `rextio_embedded_sources` (or with
    // one that does not): declare the cfg so `#[cfg(rextio_embedded_sources)]` items compile
    // silently in users' builds instead of warning about an unknown cfg.
    let mut rust = Table::new();
    let mut unexpected = Table::new();
    unexpected.insert("level".into(), Value::String("warn".into()));
    unexpected.insert(
        "check-cfg".into(),
        Value::Array(vec![Value::String("cfg(rextio_embedded_sources)".into())]),
    );
    rust.insert("unexpected_cfgs".into(), Value::Table(unexpected));
    let mut lints = Table::new();
    lints.insert("rust".into(), Value::Table(rust));
    manifest.insert("lints".into(), Value::Table(lints));
    toml::to_string_pretty(&manifest).map_err(|e| err(format!("cannot write manifest: {e}")))
}

fn src_files(dir: &Path, rel: &Path, out: &mut Vec<(PathBuf, PathBuf)>) -> Result<(), EmbedError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| err(format!("cannot list {}: {e}", dir.display())))?;
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let rel_path = rel.join(&name);
        if path.is_dir() {
            src_files(&path, &rel_path, out)?;
        } else if path
            .extension()
            .is_some_and(|e| e == "rs" || e == "cpp" || e == "h")
        {
            out.push((rel_path, path));
        }
    }
    Ok(())
}

/// The whole of an embedding crate's build script: [`embed_crate`], then set the
/// `rextio_embedded_sources` cfg (declared for check-cfg) on success, or stop the build with the
/// reason.
pub fn embed_or_exit() {
    println!("cargo::rustc-check-cfg=cfg(rextio_embedded_sources)");
    match embed_crate() {
        Ok(()) => println!("cargo::rustc-cfg=rextio_embedded_sources"),
        Err(e) => {
            eprintln!("cannot embed the crate's sources: {e}");
            std::process::exit(1);
        }
    }
}

/// Write `$OUT_DIR/embedded_sources.rs` for the crate being built (call from its build script;
/// `include!(concat!(env!("OUT_DIR"), "/embedded_sources.rs"))` then defines
/// `EMBEDDED_SOURCES: &[(&str, &str)]`, relative path and text).
pub fn embed_crate() -> Result<(), EmbedError> {
    let crate_dir = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").ok_or_else(|| err("CARGO_MANIFEST_DIR unset"))?,
    );
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").ok_or_else(|| err("OUT_DIR unset"))?);
    let manifest = standalone_manifest(&crate_dir)?;
    let mut files = Vec::new();
    src_files(&crate_dir.join("src"), Path::new("src"), &mut files)?;
    let mut code = String::from(
        "/// This crate's sources with a standalone manifest (relative path, text).\npub static EMBEDDED_SOURCES: &[(&str, &str)] = &[\n",
    );
    let _ = writeln!(code, "    (\"Cargo.toml\", {manifest:?}),");
    for (rel, abs) in &files {
        let rel = rel.to_string_lossy().replace('\\', "/");
        let _ = writeln!(
            code,
            "    ({rel:?}, include_str!({:?})),",
            abs.display().to_string()
        );
    }
    code.push_str("];\n");
    std::fs::write(out_dir.join("embedded_sources.rs"), code)
        .map_err(|e| err(format!("cannot write embedded_sources.rs: {e}")))?;
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!(
        "cargo:rerun-if-changed={}",
        crate_dir.join("../Cargo.toml").display()
    );
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn manifests_stand_alone() {
        let dir = tempfile_dir();
        std::fs::create_dir_all(dir.join("a/src")).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            "[workspace]\nmembers = [\"a\"]\n[workspace.package]\nversion = \"1.2.3\"\nedition = \"2021\"\n[workspace.dependencies]\nb = { path = \"b\" }\nserde = { version = \"1\", features = [\"derive\"] }\nsemver = \"1.0\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("a/Cargo.toml"),
            "[package]\nname = \"a\"\nversion.workspace = true\nedition.workspace = true\n[features]\nrt = [\"b/rt\"]\n[dependencies]\nb.workspace = true\nserde = { workspace = true, features = [\"rc\"], optional = true }\nsemver.workspace = true\nlibc = \"0.2\"\n[dev-dependencies]\nx = \"1\"\n[build-dependencies]\ny = \"1\"\n[lints]\nworkspace = true\n",
        )
        .unwrap();
        let m: Table = toml::from_str(&standalone_manifest(&dir.join("a")).unwrap()).unwrap();
        assert_eq!(m["package"]["version"].as_str(), Some("1.2.3"));
        assert_eq!(m["dependencies"]["b"]["path"].as_str(), Some("../b"));
        assert_eq!(m["dependencies"]["semver"]["version"].as_str(), Some("1.0"));
        let serde = &m["dependencies"]["serde"];
        assert_eq!(serde["optional"].as_bool(), Some(true));
        assert_eq!(serde["features"].as_array().map(Vec::len), Some(2));
        assert_eq!(m["dependencies"]["libc"].as_str(), Some("0.2"));
        for gone in ["dev-dependencies", "build-dependencies"] {
            assert!(!m.contains_key(gone), "{gone}");
        }
        // The workspace's lints are gone; the embedded-sources cfg is declared instead.
        assert!(m["lints"].get("workspace").is_none());
        let cfgs = m["lints"]["rust"]["unexpected_cfgs"]["check-cfg"].as_array();
        assert_eq!(
            cfgs.and_then(|c| c[0].as_str()),
            Some("cfg(rextio_embedded_sources)")
        );
        assert_eq!(m["features"]["rt"][0].as_str(), Some("b/rt"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_declared_build_script_and_its_build_dependencies_are_kept() {
        let dir = tempfile_dir_named("build");
        std::fs::create_dir_all(dir.join("a/src")).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            "[workspace]\nmembers = [\"a\"]\n[workspace.package]\nversion = \"1.2.3\"\n[workspace.dependencies]\ncc = \"=1.2.3\"\nemb = { path = \"emb\" }\n",
        )
        .unwrap();
        let manifest = "[package]\nname = \"a\"\nversion.workspace = true\nbuild = \"build.rs\"\n[package.metadata.rextio-embed]\nbuild = \"src/b/main.rs\"\nbuild-dependencies = [\"cc\"]\n[build-dependencies]\nemb.workspace = true\ncc.workspace = true\n";
        std::fs::write(dir.join("a/Cargo.toml"), manifest).unwrap();
        let m: Table = toml::from_str(&standalone_manifest(&dir.join("a")).unwrap()).unwrap();
        assert_eq!(m["package"]["build"].as_str(), Some("src/b/main.rs"));
        assert!(m["package"].get("metadata").is_none());
        let build_deps = m["build-dependencies"].as_table().unwrap();
        assert_eq!(build_deps.len(), 1);
        assert_eq!(build_deps["cc"]["version"].as_str(), Some("=1.2.3"));
        // A kept name that is not a build dependency is an error, as is a script outside src/.
        let bad = manifest.replace("[\"cc\"]", "[\"zz\"]");
        std::fs::write(dir.join("a/Cargo.toml"), bad).unwrap();
        assert!(standalone_manifest(&dir.join("a")).is_err());
        let bad = manifest.replace("src/b/main.rs", "build2.rs");
        std::fs::write(dir.join("a/Cargo.toml"), bad).unwrap();
        assert!(standalone_manifest(&dir.join("a")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tempfile_dir_named(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rextio-embed-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("rextio-embed-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }
}

//! Certification: build a plugin's certification project, run its checker against eager, and
//! record evidence per plugin and host platform. `RuleRecord.verified` comes only from such
//! evidence for this host, this plugin version and this rule set.

use crate::project::{BuildOptions, Project, ProjectError};
use crate::registry::Registry;
use rextio_plugin_api::{PlatformCell, Plugin, RuleOutcome, RuleRecord};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use thiserror::Error;

/// Evidence schema version.
pub const SCHEMA_VERSION: &str = "1";

/// `os-arch` of this host, e.g. `linux-x86_64`.
pub fn host_platform() -> String {
    format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH)
}

/// Where evidence lives (see [`crate::paths::evidence_dir`]).
pub fn evidence_dir() -> PathBuf {
    crate::paths::evidence_dir()
}

/// The evidence file of a plugin on a platform.
pub fn evidence_path(dir: &Path, plugin: &str, platform: &str) -> PathBuf {
    dir.join(plugin).join(format!("{platform}.json"))
}

/// One rule's result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RuleEvidence {
    /// Rule id.
    pub id: String,
    /// Whether every function claiming it passed.
    pub passed: bool,
    /// The certification functions that claim it.
    pub functions: Vec<String>,
}

/// A certification record.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Evidence {
    /// Schema version.
    pub schema_version: String,
    /// Plugin id.
    pub plugin: String,
    /// Plugin version.
    pub plugin_version: String,
    /// Plugin API version it declares.
    pub plugin_api_version: String,
    /// Digest of the plugin's native rule ids: evidence for another rule set does not count.
    pub rules_digest: String,
    /// Host platform (`linux-x86_64`).
    pub host_platform: String,
    /// rextio version.
    pub rextio_version: String,
    /// `rustc -V`, `cargo -V`, the interpreter, and the checker's runtime versions.
    pub toolchain: BTreeMap<String, String>,
    /// Pins of the generated crate.
    pub pins: BTreeMap<String, String>,
    /// Every native rule with pass/fail.
    pub rules: Vec<RuleEvidence>,
    /// Per-function results of the checker.
    pub functions: serde_json::Value,
    /// sha256 of generated sources (relative path -> digest).
    pub generated_sources_sha256: BTreeMap<String, String>,
    /// sha256 of the built extension.
    pub extension_sha256: String,
    /// The plugin's declared platform table.
    pub platforms: Vec<PlatformCell>,
}

impl Evidence {
    /// Whether every native rule passed.
    pub fn all_passed(&self) -> bool {
        !self.rules.is_empty() && self.rules.iter().all(|r| r.passed)
    }
}

/// Digest of a plugin's native rule ids.
pub fn rules_digest(rules: &[RuleRecord]) -> String {
    let mut ids: Vec<&str> = rules
        .iter()
        .filter(|r| r.outcome == RuleOutcome::Native)
        .map(|r| r.id.as_str())
        .collect();
    ids.sort_unstable();
    hex(&Sha256::digest(ids.join("\n").as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn file_sha256(path: &Path) -> Option<String> {
    std::fs::read(path).ok().map(|b| hex(&Sha256::digest(&b)))
}

/// The rule ids verified on this host for a plugin: those that passed in evidence recorded for
/// this platform, plugin version and rule set. Anything else verifies nothing.
pub fn verified_rules(plugin: &dyn Plugin, dir: &Path) -> BTreeSet<String> {
    let path = evidence_path(dir, plugin.id(), &host_platform());
    let Ok(text) = std::fs::read_to_string(&path) else {
        return BTreeSet::new();
    };
    let Ok(ev) = serde_json::from_str::<Evidence>(&text) else {
        tracing::warn!(path = %path.display(), "unreadable certification evidence ignored");
        return BTreeSet::new();
    };
    let matches = ev.schema_version == SCHEMA_VERSION
        && ev.plugin == plugin.id()
        && ev.plugin_version == plugin.version()
        && ev.host_platform == host_platform()
        && ev.rules_digest == rules_digest(plugin.rules());
    if !matches {
        return BTreeSet::new();
    }
    ev.rules
        .into_iter()
        .filter(|r| r.passed)
        .map(|r| r.id)
        .collect()
}

/// Rules with `verified` set from this host's evidence.
pub fn rules_with_verification(plugin: &dyn Plugin, dir: &Path) -> Vec<RuleRecord> {
    let verified = verified_rules(plugin, dir);
    plugin
        .rules()
        .iter()
        .cloned()
        .map(|mut r| {
            r.verified = r.outcome == RuleOutcome::Native
                && plugin.rule_device(&r.id).is_none()
                && verified.contains(&r.id);
            r
        })
        .collect()
}

/// A certification that could not run (as opposed to one that ran and failed rules).
#[derive(Debug, Error)]
pub enum CertifyError {
    /// Unknown plugin or no kit.
    #[error("plugin `{0}` is not registered or has no certification kit")]
    NoKit(String),
    /// The project failed to build.
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// The checker could not run or wrote no result.
    #[error("certification checker failed: {0}")]
    Checker(String),
    /// Writing evidence failed.
    #[error("cannot write evidence '{path}': {source}")]
    Io {
        /// Path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

fn version_of(program: &str, arg: &str) -> String {
    Command::new(program)
        .arg(arg)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unavailable".into())
}

/// The checkers' shared driver (`rextio_certify.py`: argument handling, the loop over the
/// certification module's functions, the result file and the exit-status contract, and
/// `CudaLane` for a CUDA lane's evidence run), which a kit's `check.py` imports.
pub const CHECKER_LIBRARY: &str = include_str!("scripts/rextio_certify.py");

/// Write [`CHECKER_LIBRARY`] as `dir/rextio_certify.py` and return `dir`, for the checker's
/// `PYTHONPATH`.
pub fn checker_library(dir: &Path) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("rextio_certify.py"), CHECKER_LIBRARY)?;
    Ok(dir.to_owned())
}

/// Certify one plugin: build its project, run its checker, write evidence to `out_dir` and to
/// the evidence directory. Returns the evidence (check `all_passed`).
pub fn certify(
    registry: &Registry,
    plugin_id: &str,
    python: Option<PathBuf>,
    out_dir: &Path,
    evidence_root: &Path,
) -> Result<(Evidence, PathBuf), CertifyError> {
    let reg = registry
        .plugin(plugin_id)
        .ok_or_else(|| CertifyError::NoKit(plugin_id.to_owned()))?;
    let plugin = reg.plugin.as_ref();
    let kit = plugin
        .certification_kit()
        .ok_or_else(|| CertifyError::NoKit(plugin_id.to_owned()))?;
    let project = Project::open(&kit.project_dir)?;
    let options = BuildOptions {
        python: python.clone(),
        ..BuildOptions::default()
    };
    let built = project.build(registry, &options)?;
    create_dir(out_dir)?;
    // The interpreter the build chose; with nothing native, the same resolution the build uses.
    let interpreter = match &built.python {
        Some(d) => d.chosen.executable.clone(),
        None => {
            project
                .python(python.as_deref())
                .map_err(ProjectError::from)?
                .chosen
                .executable
        }
    };
    let checked = run_checker(
        &interpreter,
        &kit.checker,
        &project.root().join("src"),
        &built.python_dir,
        out_dir,
        plugin_id,
    )?;
    let functions = checked
        .result
        .get("functions")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    checked.agrees_with(&functions)?;
    let rules = rule_evidence(plugin, &built.report, &functions);

    let crate_dir = project.state_dir().join("build").join("crate");
    let mut sources = BTreeMap::new();
    for rel in ["Cargo.toml", "src/lib.rs"] {
        if let Some(d) = file_sha256(&crate_dir.join(rel)) {
            sources.insert(rel.to_owned(), d);
        }
    }
    let evidence = Evidence {
        schema_version: SCHEMA_VERSION.to_owned(),
        plugin: plugin.id().to_owned(),
        plugin_version: plugin.version().to_owned(),
        plugin_api_version: plugin.api_version().to_owned(),
        rules_digest: rules_digest(plugin.rules()),
        host_platform: host_platform(),
        rextio_version: env!("CARGO_PKG_VERSION").to_owned(),
        toolchain: toolchain(&checked.result),
        pins: pins(plugin),
        rules,
        functions,
        generated_sources_sha256: sources,
        extension_sha256: built
            .extension
            .as_deref()
            .and_then(file_sha256)
            .unwrap_or_default(),
        platforms: plugin.platforms(),
    };
    let artifact = write_evidence(&evidence, out_dir, evidence_root)?;
    Ok((evidence, artifact))
}

fn create_dir(dir: &Path) -> Result<(), CertifyError> {
    std::fs::create_dir_all(dir).map_err(|source| CertifyError::Io {
        path: dir.to_owned(),
        source,
    })
}

fn write_file(path: &Path, text: &str) -> Result<(), CertifyError> {
    std::fs::write(path, text).map_err(|source| CertifyError::Io {
        path: path.to_owned(),
        source,
    })
}

/// What a checker run left: its exit status and its result file.
struct Checked {
    status: std::process::ExitStatus,
    result: serde_json::Value,
}

impl Checked {
    /// Whether the exit status and the result tell the same story: 1 exactly when some
    /// function failed.
    fn agrees_with(&self, functions: &serde_json::Value) -> Result<(), CertifyError> {
        let any_failed = functions.as_object().is_some_and(|fs| {
            fs.values()
                .any(|r| r.get("passed") != Some(&serde_json::Value::Bool(true)))
        });
        if (self.status.code() == Some(1)) != any_failed {
            return Err(CertifyError::Checker(format!(
                "checker exited with {} but its result {} failures",
                self.status,
                if any_failed { "records" } else { "records no" }
            )));
        }
        Ok(())
    }
}

/// Run the kit's `checker` with `interpreter` on the project's sources (`src`) against the built
/// package (`python_dir`), with the shared driver on `PYTHONPATH`, and read its result.
fn run_checker(
    interpreter: &Path,
    checker: &str,
    src: &Path,
    python_dir: &Path,
    out_dir: &Path,
    plugin_id: &str,
) -> Result<Checked, CertifyError> {
    let result_path = out_dir.join(format!("{plugin_id}-checker.json"));
    // A result from an earlier run must never stand in for this one.
    let _ = std::fs::remove_file(&result_path);
    let library =
        checker_library(&out_dir.join("checker-lib")).map_err(|source| CertifyError::Io {
            path: out_dir.join("checker-lib"),
            source,
        })?;
    let path = std::env::join_paths([library.as_path(), python_dir])
        .map_err(|e| CertifyError::Checker(format!("cannot form PYTHONPATH: {e}")))?;
    let status = Command::new(interpreter)
        .arg(checker)
        .arg(&result_path)
        .arg(src)
        .env("PYTHONPATH", path)
        .env("REXTIO_NATIVE_MODE", "native")
        .status()
        .map_err(|e| {
            CertifyError::Checker(format!("cannot run '{}': {e}", interpreter.display()))
        })?;
    // 0: all passed; 1: some failed (the result says which); anything else: the checker broke,
    // and a result file it may have left behind is not evidence.
    if !matches!(status.code(), Some(0 | 1)) {
        return Err(CertifyError::Checker(format!(
            "checker '{checker}' failed ({status})"
        )));
    }
    let text = std::fs::read_to_string(&result_path).map_err(|e| {
        CertifyError::Checker(format!(
            "{status}; no result at '{}': {e}",
            result_path.display()
        ))
    })?;
    let result = serde_json::from_str(&text)
        .map_err(|e| CertifyError::Checker(format!("unreadable result: {e}")))?;
    Ok(Checked { status, result })
}

/// Each CPU native rule of `plugin` with the functions of `report` that claim it: a rule passes
/// when at least one native function claims it and every such function passed. Rules that run
/// only on an accelerator are certified on such a host (`cargo xtask certify --cuda`), not by
/// the kit.
fn rule_evidence(
    plugin: &dyn rextio_plugin_api::Plugin,
    report: &crate::report::BuildReport,
    functions: &serde_json::Value,
) -> Vec<RuleEvidence> {
    let mut claimed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut native_fns = BTreeSet::new();
    for m in &report.modules {
        for f in &m.functions {
            let name = f.qualname.clone();
            if matches!(f.route, crate::analysis::Route::Native(_)) {
                native_fns.insert(name.clone());
            }
            for c in &f.plugin_claims {
                let e = claimed.entry(c.rule_id.clone()).or_default();
                if !e.contains(&name) {
                    e.push(name.clone());
                }
            }
        }
    }
    let passed = |name: &str| {
        native_fns.contains(name)
            && functions
                .get(name)
                .and_then(|r| r.get("passed"))
                .and_then(serde_json::Value::as_bool)
                == Some(true)
    };
    plugin
        .rules()
        .iter()
        .filter(|r| r.outcome == RuleOutcome::Native && plugin.rule_device(&r.id).is_none())
        .map(|r| {
            let fns = claimed.get(&r.id).cloned().unwrap_or_default();
            RuleEvidence {
                id: r.id.clone(),
                passed: !fns.is_empty() && fns.iter().all(|f| passed(f)),
                functions: fns,
            }
        })
        .collect()
}

/// The toolchain that built the extension, and the runtime the checker reported.
fn toolchain(result: &serde_json::Value) -> BTreeMap<String, String> {
    let mut toolchain = BTreeMap::new();
    toolchain.insert("rustc".to_owned(), version_of("rustc", "-V"));
    toolchain.insert("cargo".to_owned(), version_of("cargo", "-V"));
    if let Some(rt) = result.get("runtime").and_then(|v| v.as_object()) {
        for (k, v) in rt {
            toolchain.insert(k.clone(), v.as_str().unwrap_or_default().to_owned());
        }
    }
    toolchain
}

/// The crates the generated extension pinned: PyO3, the plugin's runtime crate and its support
/// crates (an embedded crate by the digest of its sources).
fn pins(plugin: &dyn rextio_plugin_api::Plugin) -> BTreeMap<String, String> {
    let mut pins = BTreeMap::new();
    pins.insert("pyo3".to_owned(), crate::emit::pyo3_pin());
    for dep in plugin
        .runtime_crate()
        .into_iter()
        .chain(plugin.runtime_support_crates())
    {
        let pin = match &dep.source {
            rextio_plugin_api::CrateSource::Registry(v) => v.clone(),
            rextio_plugin_api::CrateSource::Path(p) => format!("path {p}"),
            rextio_plugin_api::CrateSource::Embedded(files) => {
                use sha2::Digest as _;
                let mut h = sha2::Sha256::new();
                for (p, t) in files {
                    h.update(p.as_bytes());
                    h.update(t.as_bytes());
                }
                let d: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
                format!("embedded sha256:{d}")
            }
        };
        pins.insert(dep.name.clone(), pin);
    }
    pins
}

/// Write `evidence` to `out_dir` (returned) and install it where the host reads it; only rules
/// that passed become `verified`.
fn write_evidence(
    evidence: &Evidence,
    out_dir: &Path,
    evidence_root: &Path,
) -> Result<PathBuf, CertifyError> {
    let text =
        serde_json::to_string_pretty(evidence).map_err(|e| CertifyError::Checker(e.to_string()))?;
    let artifact = out_dir.join(format!(
        "{}-{}.json",
        evidence.plugin, evidence.host_platform
    ));
    write_file(&artifact, &text)?;
    let installed = evidence_path(evidence_root, &evidence.plugin, &evidence.host_platform);
    if let Some(parent) = installed.parent() {
        create_dir(parent)?;
    }
    write_file(&installed, &text)?;
    Ok(artifact)
}

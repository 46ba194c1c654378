//! Interpreter resolution: `--python` > `REXTIO_PYTHON` > `[toolchain] python` >
//! `$VIRTUAL_ENV/bin/python` > `python3` on PATH, then a probe of what it is.

use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::Command;
use thiserror::Error;

/// What the probe found.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct PythonInfo {
    /// The interpreter path as given (not resolved, so a venv's `bin/` stays on PATH).
    #[serde(skip)]
    pub executable: PathBuf,
    /// `sys.prefix` (the venv root for a venv).
    pub prefix: PathBuf,
    /// `major.minor`.
    pub version: String,
    /// Wheel interpreter/ABI tag, e.g. `cp311`.
    pub python_tag: String,
    /// Wheel platform tag, e.g. `linux_x86_64`.
    pub platform_tag: String,
}

/// The interpreter cannot be used.
#[derive(Debug, Error)]
pub enum PythonError {
    /// The probe could not run.
    #[error("cannot run Python interpreter '{path}' (chosen from {source_name}): {reason}; run `cargo xtask setup` or pass --python")]
    NotRunnable {
        /// Path.
        path: PathBuf,
        /// Where the choice came from.
        source_name: &'static str,
        /// Why.
        reason: String,
    },
}

/// Pick the interpreter.
pub fn resolve(cli: Option<&Path>, config: Option<&Path>, root: &Path) -> (PathBuf, &'static str) {
    if let Some(p) = cli {
        return (p.to_owned(), "--python");
    }
    if let Some(p) = std::env::var_os("REXTIO_PYTHON").filter(|v| !v.is_empty()) {
        return (PathBuf::from(p), "REXTIO_PYTHON");
    }
    if let Some(p) = config {
        let p = if p.is_absolute() {
            p.to_owned()
        } else {
            root.join(p)
        };
        return (p, "[toolchain] python in rextio.toml");
    }
    if let Some(v) = std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
        return (PathBuf::from(v).join("bin").join("python"), "$VIRTUAL_ENV");
    }
    (PathBuf::from("python3"), "python3 on PATH")
}

const PROBE: &str = "import json, sys, sysconfig; print(json.dumps({'prefix': sys.prefix, 'version': '%d.%d' % sys.version_info[:2], \
'python_tag': 'cp%d%d' % sys.version_info[:2], 'platform_tag': sysconfig.get_platform().replace('-', '_').replace('.', '_')}))";

/// Run the probe.
pub fn probe(path: &Path, source_name: &'static str) -> Result<PythonInfo, PythonError> {
    let fail = |reason: String| PythonError::NotRunnable {
        path: path.to_owned(),
        source_name,
        reason,
    };
    let out = Command::new(path)
        .arg("-c")
        .arg(PROBE)
        .output()
        .map_err(|e| fail(e.to_string()))?;
    if !out.status.success() {
        return Err(fail(format!(
            "{}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let mut info: PythonInfo = serde_json::from_slice(&out.stdout)
        .map_err(|e| fail(format!("unexpected probe output: {e}")))?;
    info.executable = path.to_owned();
    Ok(info)
}

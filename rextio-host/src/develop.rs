//! `rextio develop`: install a freshly built wheel into the project's interpreter.
//!
//! The build itself is [`crate::Project::build`]; this stage runs
//! `python -m pip install --no-deps --force-reinstall dist/<wheel>` with the interpreter the build
//! chose ([`crate::Project::python`], see [`crate::python_env`]),
//! and records what it installed in `.rextio/develop.json`. When the new wheel's SHA-256 equals
//! the recorded one, the interpreter is the same and the distribution is still installed in it
//! at that version, pip is not run again.

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use thiserror::Error;

/// What `.rextio/develop.json` records about the last install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallRecord {
    /// The wheel's file name.
    pub wheel: String,
    /// Hex SHA-256 of the wheel's bytes.
    pub sha256: String,
    /// The interpreter it was installed with.
    pub python: PathBuf,
    /// The distribution name.
    pub distribution: String,
    /// The distribution version.
    pub version: String,
}

/// What `install` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    /// pip installed the wheel.
    Installed(InstallRecord),
    /// The same wheel is already installed in this interpreter; pip was not run.
    Unchanged(InstallRecord),
}

/// Why the wheel could not be installed.
#[derive(Debug, Error)]
pub enum DevelopError {
    /// File system.
    #[error("cannot access '{path}': {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The wheel's file name is not `<dist>-<version>-<tags>.whl`.
    #[error("'{0}' is not a wheel file name")]
    WheelName(PathBuf),
    /// pip could not be started or failed.
    #[error("`{python} -m pip install --no-deps --force-reinstall {wheel}` failed: {reason}")]
    Pip {
        /// The interpreter.
        python: PathBuf,
        /// The wheel.
        wheel: PathBuf,
        /// Why (pip's output tail).
        reason: String,
    },
}

/// The record file of a project state directory.
pub fn record_path(state_dir: &Path) -> PathBuf {
    state_dir.join("develop.json")
}

/// Hex SHA-256 of a file.
pub fn file_digest(path: &Path) -> Result<String, DevelopError> {
    let bytes = std::fs::read(path).map_err(|source| DevelopError::Io {
        path: path.to_owned(),
        source,
    })?;
    Ok(Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The distribution name and version from a wheel file name.
pub fn wheel_identity(wheel: &Path) -> Option<(String, String)> {
    let name = wheel.file_name()?.to_str()?.strip_suffix(".whl")?;
    let mut parts = name.split('-');
    let dist = parts.next()?.to_owned();
    let version = parts.next()?.to_owned();
    (!dist.is_empty() && !version.is_empty() && parts.count() >= 3).then_some((dist, version))
}

/// The version of `distribution` installed in `python`'s environment, if any.
pub fn installed_version(python: &Path, distribution: &str) -> Option<String> {
    let out = Command::new(python)
        .arg("-c")
        .arg("import importlib.metadata as m, sys\ntry:\n    print(m.version(sys.argv[1]))\nexcept m.PackageNotFoundError:\n    pass")
        .arg(distribution)
        .output()
        .ok()?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !v.is_empty()).then_some(v)
}

/// Install `wheel` with `python` unless `.rextio/develop.json` says this very wheel is already
/// installed there.
pub fn install(state_dir: &Path, wheel: &Path, python: &Path) -> Result<Installed, DevelopError> {
    let (distribution, version) =
        wheel_identity(wheel).ok_or_else(|| DevelopError::WheelName(wheel.to_owned()))?;
    let record = InstallRecord {
        wheel: wheel
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        sha256: file_digest(wheel)?,
        python: python.to_owned(),
        distribution,
        version,
    };
    let path = record_path(state_dir);
    let previous: Option<InstallRecord> = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    if previous.as_ref() == Some(&record)
        && installed_version(python, &record.distribution).as_deref()
            == Some(record.version.as_str())
    {
        return Ok(Installed::Unchanged(record));
    }
    let pip_err = |reason: String| DevelopError::Pip {
        python: python.to_owned(),
        wheel: wheel.to_owned(),
        reason,
    };
    let out = Command::new(python)
        .args([
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--force-reinstall",
            "--disable-pip-version-check",
            "--no-input",
        ])
        .arg(wheel)
        .output()
        .map_err(|e| pip_err(e.to_string()))?;
    if !out.status.success() {
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<&str> = text.trim().lines().collect();
        return Err(pip_err(format!(
            "{}: {}",
            out.status,
            lines[lines.len().saturating_sub(15)..].join("\n")
        )));
    }
    let io = |source| DevelopError::Io {
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(state_dir).map_err(io)?;
    let json = serde_json::to_string_pretty(&record).map_err(|e| io(std::io::Error::other(e)))?;
    std::fs::write(&path, json).map_err(io)?;
    Ok(Installed::Installed(record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wheel_names_give_distribution_and_version() {
        assert_eq!(
            wheel_identity(Path::new("dist/my_proj-0.1.0-cp311-cp311-linux_x86_64.whl")),
            Some(("my_proj".into(), "0.1.0".into()))
        );
        assert_eq!(
            wheel_identity(Path::new("p-1-py3-none-any.whl")),
            Some(("p".into(), "1".into()))
        );
        assert_eq!(wheel_identity(Path::new("p-1.whl")), None);
        assert_eq!(wheel_identity(Path::new("p-1-py3-none-any.zip")), None);
    }

    #[test]
    fn a_wheel_that_is_not_a_wheel_name_is_refused_before_pip_runs() {
        let dir = std::env::temp_dir();
        let err = install(&dir, Path::new("not-a-wheel.txt"), Path::new("python3"));
        assert!(matches!(err, Err(DevelopError::WheelName(_))));
    }
}

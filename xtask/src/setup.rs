//! `cargo xtask setup`: the pinned Python environment in `ROOT/.venv`.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

use crate::env;

/// The Python minor version the workspace pins (README, Environment).
const PYTHON_MINOR: &str = "3.11";
/// Where setup writes the Python requirements the workspace's plugins declare.
const PLUGIN_REQUIREMENTS: &str = "rextio-plugin-requirements.txt";
const STAMP_FILE: &str = ".rextio-setup-stamp";
const VERSION_SCRIPT: &str = "import sys; print('%d.%d.%d' % sys.version_info[:3])";

/// Whether pip keeps the wheels it downloads in its cache.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum PipCache {
    /// A developer's machine: a later setup (a new checkout, a changed pin) reuses them.
    Keep,
    /// A one-off machine (CI): torch's wheels and their CUDA libraries are several GB, and a
    /// second copy of them in the cache can fill a small disk before the tests start.
    Off,
}

/// Creates `.venv/` if needed, installs `requirements.txt` unless the stamp says it is current,
/// and verifies that the pinned torch imports.
pub fn setup(root: &Path) -> Result<()> {
    setup_with(root, PipCache::Keep)
}

/// [`setup`], choosing whether pip caches what it downloads.
pub fn setup_with(root: &Path, cache: PipCache) -> Result<()> {
    let requirements_path = root.join("requirements.txt");
    let tooling = fs::read_to_string(&requirements_path)
        .with_context(|| format!("cannot read {}", requirements_path.display()))?;
    let plugins = plugin_requirements()?;
    // The benchmark's peer lanes (ONNX Runtime) are tested by the workspace tests too.
    let bench_path = root.join("bench").join("requirements.txt");
    let bench = fs::read_to_string(&bench_path)
        .with_context(|| format!("cannot read {}", bench_path.display()))?;
    let requirements = format!("{tooling}\n{bench}\n{}", plugin_requirements_text(&plugins));

    let venv = env::venv_dir(root);
    let python = env::venv_python(root);
    if !python.exists() {
        create_venv(root)?;
    }

    let version = python_version(&mut Command::new(&python)).with_context(|| {
        format!(
            "{} does not run; remove {} and rerun `cargo xtask setup`",
            python.display(),
            venv.display()
        )
    })?;
    if !is_pinned_minor(&version) {
        bail!(
            "{} is Python {version}, but Rextio needs CPython {PYTHON_MINOR}; \
             remove {} and rerun `cargo xtask setup`",
            python.display(),
            venv.display()
        );
    }

    let stamp_path = venv.join(STAMP_FILE);
    let digest = stamp_digest(root, &requirements, &version);
    let current = fs::read_to_string(&stamp_path)
        .map(|s| s.trim() == digest)
        .unwrap_or(false);

    if current {
        eprintln!("xtask: .venv is up to date (Python {version}, requirements.txt unchanged)");
    } else {
        // A stale stamp must not survive a failed install.
        if stamp_path.exists() {
            fs::remove_file(&stamp_path)
                .with_context(|| format!("cannot remove {}", stamp_path.display()))?;
        }
        let plugin_file = venv.join(PLUGIN_REQUIREMENTS);
        fs::write(&plugin_file, plugin_requirements_text(&plugins))
            .with_context(|| format!("cannot write {}", plugin_file.display()))?;
        eprintln!(
            "xtask: pip install -r requirements.txt -r {} into .venv (Python {version})",
            plugin_file.display()
        );
        let mut pip = env::venv_command(root, &python);
        pip.args(["-m", "pip", "install", "--disable-pip-version-check"]);
        if cache == PipCache::Off {
            pip.arg("--no-cache-dir");
        }
        pip.args([
            "-r",
            "requirements.txt",
            "-r",
            "bench/requirements.txt",
            "-r",
        ])
        .arg(&plugin_file);
        env::run(&mut pip, "")?;
    }

    verify_pins(root, &plugins).inspect_err(|_| {
        // Force a reinstall next time.
        let _ = fs::remove_file(&stamp_path);
    })?;

    if !current {
        fs::write(&stamp_path, format!("{digest}\n"))
            .with_context(|| format!("cannot write {}", stamp_path.display()))?;
        eprintln!("xtask: .venv ready");
    }
    Ok(())
}

/// `python3.11 -m venv ROOT/.venv`, falling back to `python3` when that is 3.11.
fn create_venv(root: &Path) -> Result<()> {
    let mut chosen = None;
    for candidate in ["python3.11", "python3"] {
        match python_version(&mut Command::new(candidate)) {
            Some(version) if is_pinned_minor(&version) => {
                chosen = Some((candidate, version));
                break;
            }
            Some(version) => {
                eprintln!("xtask: `{candidate}` is Python {version}, not {PYTHON_MINOR}; skipping")
            }
            None => eprintln!("xtask: `{candidate}` not found or does not run; skipping"),
        }
    }
    let Some((interpreter, version)) = chosen else {
        bail!(
            "no CPython {PYTHON_MINOR} found: neither `python3.11` nor `python3` on PATH is \
             {PYTHON_MINOR}; install it (e.g. `apt-get install python3.11 python3.11-venv` or \
             `pyenv install 3.11`) and rerun `cargo xtask setup`"
        );
    };

    let venv = env::venv_dir(root);
    eprintln!(
        "xtask: creating {} with {interpreter} (Python {version})",
        venv.display()
    );
    let mut cmd = Command::new(interpreter);
    cmd.current_dir(root)
        .env_remove("PYTHONHOME")
        .args(["-m", "venv"])
        .arg(&venv);
    env::run(&mut cmd, "").with_context(|| {
        format!(
            "could not create the virtual environment (on Debian/Ubuntu the `venv` module is \
             in the `python{PYTHON_MINOR}-venv` package); remove {} before retrying",
            venv.display()
        )
    })
}

/// `major.minor.micro` of the interpreter `cmd` runs, or `None` if it does not run.
fn python_version(cmd: &mut Command) -> Option<String> {
    env::capture(cmd.args(["-c", VERSION_SCRIPT]).env_remove("PYTHONHOME"))
        .filter(|v| !v.is_empty())
}

fn is_pinned_minor(version: &str) -> bool {
    version == PYTHON_MINOR || version.starts_with(&format!("{PYTHON_MINOR}."))
}

/// SHA-256 over the workspace root (editable paths resolve against it), requirements.txt, the
/// venv's Python version, and the build metadata of every editable (`-e PATH`) requirement, so
/// that changing any of them reinstalls.
fn stamp_digest(root: &Path, requirements: &str, python_version: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"root\0");
    hasher.update(root.as_os_str().as_encoded_bytes());
    hasher.update(b"\0requirements.txt\0");
    hasher.update(requirements.as_bytes());
    hasher.update(b"\0python\0");
    hasher.update(python_version.as_bytes());
    for line in requirements.lines() {
        let line = line.trim();
        let Some(path) = line
            .strip_prefix("-e ")
            .or_else(|| line.strip_prefix("--editable "))
        else {
            continue;
        };
        let dir = root.join(path.trim());
        // Absolute paths (the plugins' marker packages) are hashed as given.
        for meta in ["pyproject.toml", "setup.cfg", "setup.py"] {
            if let Ok(bytes) = fs::read(dir.join(meta)) {
                hasher.update(b"\0");
                hasher.update(path.trim().as_bytes());
                hasher.update(b"/");
                hasher.update(meta.as_bytes());
                hasher.update(b"\0");
                hasher.update(&bytes);
            }
        }
    }
    hasher
        .finalize()
        .iter()
        .fold(String::with_capacity(64), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

/// The Python requirements of the plugins this workspace builds (each plugin declares its own:
/// the pinned framework and its marker-types package, installed editable from the checkout).
pub fn plugin_requirements() -> Result<Vec<rextio_plugin_api::PythonRequirement>> {
    let registry = rextio_host::Registry::builder()
        .with_default_plugins()
        .build()
        .context("the workspace's plugins do not register")?;
    let mut out: Vec<rextio_plugin_api::PythonRequirement> = Vec::new();
    for r in registry.plugins() {
        if !r.negotiated.module_init {
            continue;
        }
        for req in r.plugin.python_requirements() {
            if !out.iter().any(|o| o.distribution == req.distribution) {
                out.push(req);
            }
        }
    }
    Ok(out)
}

/// pip's requirement-file lines for the plugins' requirements.
fn plugin_requirements_text(reqs: &[rextio_plugin_api::PythonRequirement]) -> String {
    let mut text =
        String::from("# Declared by the workspace's plugins (written by cargo xtask setup).\n");
    for r in reqs {
        match &r.editable_path {
            Some(path) => {
                let _ = writeln!(text, "-e {path}");
            }
            None => {
                let _ = writeln!(text, "{}", r.requirement);
            }
        }
    }
    text
}

/// Checks that every exactly pinned plugin requirement is what the venv has installed (tch
/// needs exactly its torch release; `LIBTORCH_BYPASS_VERSION_CHECK` is never used).
fn verify_pins(root: &Path, reqs: &[rextio_plugin_api::PythonRequirement]) -> Result<()> {
    let python = env::venv_python(root);
    for r in reqs.iter().filter(|r| r.editable_path.is_none()) {
        let Some((_, version)) = r.requirement.split_once("==") else {
            continue;
        };
        let script = format!(
            "import importlib.metadata as m; v = m.version({:?}).split('+')[0]; assert v == {:?}, v",
            r.distribution,
            version.trim()
        );
        let mut cmd = env::venv_command(root, &python);
        cmd.args(["-c", &script]);
        let status = cmd
            .status()
            .with_context(|| format!("failed to start {}", python.display()))?;
        if !status.success() {
            bail!(
                "{} is not what {} has installed; rerun `cargo xtask setup`; if the venv is \
                 broken, remove {} first",
                r.requirement,
                python.display(),
                env::venv_dir(root).display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_minor_matches_only_3_11() {
        assert!(is_pinned_minor("3.11.7"));
        assert!(is_pinned_minor("3.11"));
        assert!(!is_pinned_minor("3.110.1"));
        assert!(!is_pinned_minor("3.12.1"));
        assert!(!is_pinned_minor(""));
    }

    #[test]
    fn every_plugin_declares_a_pinned_framework_and_its_marker_package() {
        let reqs = plugin_requirements().unwrap();
        let text = plugin_requirements_text(&reqs);
        assert!(text.contains("torch==2.13.0"), "{text}");
        assert!(text.contains("tensorflow-cpu==2.21.0"), "{text}");
        assert!(
            text.contains("-e /") && text.contains("rextio-torch/python"),
            "{text}"
        );
        assert!(text.contains("rextio-tensorflow/python"), "{text}");
    }

    #[test]
    fn stamp_depends_on_root_requirements_and_python() {
        let root = Path::new("/nonexistent/rextio");
        let base = stamp_digest(root, "torch==2.13.0\n", "3.11.7");
        assert_eq!(base.len(), 64);
        assert_eq!(base, stamp_digest(root, "torch==2.13.0\n", "3.11.7"));
        assert_ne!(base, stamp_digest(root, "torch==2.13.1\n", "3.11.7"));
        assert_ne!(base, stamp_digest(root, "torch==2.13.0\n", "3.11.8"));
        assert_ne!(
            base,
            stamp_digest(Path::new("/elsewhere"), "torch==2.13.0\n", "3.11.7")
        );
    }
}

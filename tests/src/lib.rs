//! Shared helpers for end-to-end tests: copy a fixture project to a temporary directory, build
//! it with the real host (real cargo, real libtorch), and run Python checks against eager
//! PyTorch in the project's virtual environment.
//!
//! The environment is required: a missing venv is a test failure with instructions, never a
//! skip (`cargo xtask test` creates it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rextio_host::{BuildOptions, BuildOutput, Project, Registry};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// The venv interpreter; panics with instructions when it is missing.
pub fn python() -> PathBuf {
    let p = std::env::var_os("REXTIO_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".venv/bin/python"));
    assert!(p.exists(), "Python environment missing at '{}': run `cargo xtask setup` (or `cargo xtask test`, which sets it up)", p.display());
    p
}

/// Copy a project tree, leaving out build state (`.rextio`, `dist`, `__pycache__`).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == ".rextio" || name == "dist" || name == "__pycache__" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if src.is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// A fixture built natively.
pub struct Built {
    /// The temporary project copy (kept alive while the test runs).
    pub dir: tempfile::TempDir,
    /// The build's output.
    pub out: BuildOutput,
}

impl Built {
    /// Route of a function by qualname.
    pub fn route(&self, qualname: &str) -> String {
        self.out
            .report
            .modules
            .iter()
            .flat_map(|m| m.functions.iter())
            .find(|f| f.qualname == qualname)
            .map(|f| f.route.label())
            .unwrap_or_else(|| panic!("no function {qualname}"))
    }

    /// Diagnostic codes of a function.
    pub fn codes(&self, qualname: &str) -> Vec<String> {
        self.out
            .report
            .modules
            .iter()
            .flat_map(|m| m.functions.iter())
            .find(|f| f.qualname == qualname)
            .map(|f| f.diagnostics.iter().map(|d| d.code.clone()).collect())
            .unwrap_or_default()
    }

    /// Run `tests/python/<script>` with the built tree on `sys.path`; returns stdout, panics
    /// with both streams on failure.
    pub fn run_python(&self, script: &str, env: &[(&str, &str)]) -> String {
        let root = workspace_root();
        let mut cmd = Command::new(python());
        cmd.arg(root.join("tests/python").join(script));
        let pythonpath =
            std::env::join_paths([self.out.python_dir.clone(), root.join("tests/python")]).unwrap();
        cmd.env("PYTHONPATH", pythonpath);
        cmd.env("REXTIO_FIXTURE_SRC", self.dir.path().join("src"));
        cmd.env("REXTIO_NATIVE_MODE", "native");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "{script} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            out.status
        );
        stdout
    }
}

/// Build `tests/fixtures/<name>` with the given registry.
pub fn build_with(name: &str, registry: &Registry) -> Built {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &workspace_root().join("tests/fixtures").join(name),
        dir.path(),
    );
    let project = Project::open(dir.path()).unwrap();
    let options = BuildOptions {
        python: Some(python()),
        ..BuildOptions::default()
    };
    let out = project
        .build(registry, &options)
        .unwrap_or_else(|e| panic!("building fixture {name} failed: {e}"));
    Built { dir, out }
}

/// Build `tests/fixtures/<name>` with the first-party plugins.
pub fn build(name: &str) -> Built {
    build_with(
        name,
        &Registry::builder().with_default_plugins().build().unwrap(),
    )
}

//! `cargo xtask dist`: installable wheels under `target/dist/`.
//!
//! ```text
//! cargo build --release --bin rextio ─► rextio-<ver>-py3-none-<platform>.whl
//!                                       rextio-<ver>.data/scripts/rextio (0755), as maturin's
//!                                       `bin` bindings package a binary (ruff, uv)
//! <backend>/python/pyproject.toml    ─► <marker>-<ver>-py3-none-any.whl per backend plugin
//!                                       (the marker-types packages its projects import)
//! ```
//!
//! The binary carries everything a build needs: the runtime crates' sources and the pinned
//! `Cargo.lock` that seeds generated crates are compiled into it, so the installed `rextio`
//! builds projects with no checkout. `pip install target/dist/*.whl torch==2.13.0` installs
//! the tool and the marker types into an environment.

use std::fs;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use rextio_host::wheel::{write_wheel_files, WheelFile, WheelInfo};

use crate::{cargo, setup};

/// `ROOT/target/dist`.
pub fn dist_dir(root: &Path) -> PathBuf {
    root.join("target").join("dist")
}

/// Builds every wheel into `target/dist/` (older wheels there are removed first) and returns
/// their paths, the CLI's first.
pub fn dist(root: &Path) -> Result<Vec<PathBuf>> {
    let out = dist_dir(root);
    fs::create_dir_all(&out).with_context(|| format!("cannot create '{}'", out.display()))?;
    for entry in fs::read_dir(&out).with_context(|| format!("cannot read '{}'", out.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "whl") {
            fs::remove_file(&path)
                .with_context(|| format!("cannot remove the old wheel '{}'", path.display()))?;
        }
    }

    let exe = build_cli(root)?;
    let mut wheels = vec![cli_wheel(&exe, &out)?];
    for req in setup::plugin_requirements()? {
        if let Some(dir) = &req.editable_path {
            let wheel = marker_wheel(Path::new(dir), &out)
                .with_context(|| format!("cannot package the marker types in '{dir}'"))?;
            check_pin(&wheel, &req.requirement)?;
            wheels.push(wheel);
        }
    }
    for w in &wheels {
        let size = fs::metadata(w).map(|m| m.len()).unwrap_or(0);
        eprintln!(
            "xtask: wrote {} ({:.1} MiB)",
            w.display(),
            size as f64 / (1024.0 * 1024.0)
        );
    }
    Ok(wheels)
}

/// `cargo build --release -p rextio-host --bin rextio`; the executable cargo reports.
fn build_cli(root: &Path) -> Result<PathBuf> {
    eprintln!("xtask: cargo build --release -p rextio-host --bin rextio");
    let mut cmd = Command::new(cargo());
    cmd.current_dir(root)
        .args([
            "build",
            "--release",
            "-p",
            "rextio-host",
            "--bin",
            "rextio",
            "--message-format=json-render-diagnostics",
        ])
        .stdout(Stdio::piped());
    let mut child = cmd.spawn().context("cannot start cargo")?;
    let mut exe = None;
    if let Some(stdout) = child.stdout.take() {
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.context("cannot read cargo's output")?;
            exe = exe.or_else(|| executable_in(&line));
        }
    }
    let status = child.wait().context("cargo did not finish")?;
    if !status.success() {
        bail!("`cargo build --release -p rextio-host --bin rextio` failed ({status})");
    }
    exe.context("cargo built no `rextio` executable")
}

/// The `rextio` executable named by one line of cargo's JSON messages, if it names one.
fn executable_in(line: &str) -> Option<PathBuf> {
    let msg: serde_json::Value = serde_json::from_str(line).ok()?;
    (msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "rextio")
        .then(|| msg["executable"].as_str().map(PathBuf::from))
        .flatten()
}

/// The wheel platform tag of the host `rextio` is built for (the binary runs on it only).
fn platform_tag() -> Result<&'static str> {
    Ok(match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "linux_x86_64",
        ("linux", "aarch64") => "linux_aarch64",
        ("macos", "x86_64") => "macosx_10_12_x86_64",
        ("macos", "aarch64") => "macosx_11_0_arm64",
        ("windows", "x86_64") => "win_amd64",
        (os, arch) => bail!("no wheel platform tag known for {os}-{arch}"),
    })
}

/// `rextio-<ver>-py3-none-<platform>.whl` with the binary in `rextio-<ver>.data/scripts/`.
fn cli_wheel(exe: &Path, out: &Path) -> Result<PathBuf> {
    // The version the binary itself reports, so the wheel can never disagree with it.
    let version_out = Command::new(exe)
        .arg("--version")
        .output()
        .with_context(|| format!("cannot run '{}'", exe.display()))?;
    let text = String::from_utf8_lossy(&version_out.stdout);
    let version = text
        .trim()
        .strip_prefix("rextio ")
        .filter(|v| version_out.status.success() && !v.is_empty())
        .with_context(|| format!("'{} --version' printed {text:?}", exe.display()))?
        .to_owned();
    let bytes = fs::read(exe).with_context(|| format!("cannot read '{}'", exe.display()))?;
    let file_name = exe
        .file_name()
        .context("the executable has no file name")?
        .to_string_lossy()
        .into_owned();
    let info = WheelInfo {
        name: "rextio".into(),
        version: version.clone(),
        python_tag: "py3".into(),
        abi_tag: "none".into(),
        platform_tag: platform_tag()?.into(),
        requires_python: None,
        requires_dist: Vec::new(),
        summary: Some(
            "Compile typed Python inference functions (PyTorch, TensorFlow) to native code".into(),
        ),
    };
    let files = [WheelFile {
        name: format!("rextio-{version}.data/scripts/{file_name}"),
        bytes,
        executable: true,
    }];
    Ok(write_wheel_files(out, &info, &files)?)
}

/// What `xtask dist` reads from a marker package's `pyproject.toml`.
#[derive(Debug, PartialEq, Eq)]
struct PyProject {
    name: String,
    version: String,
    description: Option<String>,
    requires_python: Option<String>,
    dependencies: Vec<String>,
    packages: Vec<String>,
}

/// Parses the subset of `pyproject.toml` the marker packages use; anything else in `[project]`
/// is an error, so a wheel never silently leaves out what the file asks for.
fn parse_pyproject(text: &str) -> Result<PyProject> {
    let doc: toml::Table = toml::from_str(text).context("not valid TOML")?;
    let project = doc
        .get("project")
        .and_then(|p| p.as_table())
        .context("no [project] table")?;
    for key in project.keys() {
        if ![
            "name",
            "version",
            "description",
            "requires-python",
            "dependencies",
        ]
        .contains(&key.as_str())
        {
            bail!("[project] key `{key}` is not supported by `cargo xtask dist`");
        }
    }
    let string = |key: &str| project.get(key).and_then(|v| v.as_str()).map(str::to_owned);
    let strings = |v: Option<&toml::Value>, what: &str| -> Result<Vec<String>> {
        v.map_or(Ok(Vec::new()), |v| {
            v.as_array()
                .with_context(|| format!("{what} is not an array"))?
                .iter()
                .map(|s| {
                    s.as_str()
                        .map(str::to_owned)
                        .with_context(|| format!("{what} holds a non-string"))
                })
                .collect()
        })
    };
    let packages = strings(
        doc.get("tool")
            .and_then(|t| t.get("setuptools"))
            .and_then(|t| t.get("packages")),
        "[tool.setuptools] packages",
    )?;
    if packages.is_empty() {
        bail!("[tool.setuptools] packages lists no package");
    }
    Ok(PyProject {
        name: string("name").context("[project] has no name")?,
        version: string("version").context("[project] has no version")?,
        description: string("description"),
        requires_python: string("requires-python"),
        dependencies: strings(project.get("dependencies"), "[project] dependencies")?,
        packages,
    })
}

/// Every file of `dir` (recursively, sorted; no `__pycache__`, no `.pyc`), as wheel paths
/// starting with `prefix`.
fn package_files(dir: &Path, prefix: &str, out: &mut Vec<WheelFile>) -> Result<()> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("cannot read '{}'", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == "__pycache__" || name.ends_with(".pyc") {
            continue;
        }
        let rel = format!("{prefix}/{name}");
        if path.is_dir() {
            package_files(&path, &rel, out)?;
        } else {
            let bytes =
                fs::read(&path).with_context(|| format!("cannot read '{}'", path.display()))?;
            out.push(WheelFile {
                name: rel,
                bytes,
                executable: false,
            });
        }
    }
    Ok(())
}

/// `<name>-<ver>-py3-none-any.whl` from the marker package in `dir`.
fn marker_wheel(dir: &Path, out: &Path) -> Result<PathBuf> {
    let manifest = dir.join("pyproject.toml");
    let text = fs::read_to_string(&manifest)
        .with_context(|| format!("cannot read '{}'", manifest.display()))?;
    let py = parse_pyproject(&text).with_context(|| format!("in '{}'", manifest.display()))?;
    let mut files = Vec::new();
    for package in &py.packages {
        if package.is_empty() || package.contains(['/', '\\']) || package.starts_with('.') {
            bail!(
                "package `{package}` in '{}' is not a package name",
                manifest.display()
            );
        }
        let pkg_dir = dir.join(package.replace('.', "/"));
        if !pkg_dir.join("__init__.py").is_file() {
            bail!(
                "package `{package}` listed in '{}' has no {}",
                manifest.display(),
                pkg_dir.join("__init__.py").display()
            );
        }
        package_files(&pkg_dir, &package.replace('.', "/"), &mut files)?;
    }
    let info = WheelInfo {
        name: py.name,
        version: py.version,
        python_tag: "py3".into(),
        abi_tag: "none".into(),
        platform_tag: "any".into(),
        requires_python: py.requires_python,
        requires_dist: py.dependencies,
        summary: py.description,
    };
    Ok(write_wheel_files(out, &info, &files)?)
}

/// The wheel must be what the plugin pins (`name==version`), or generated projects, whose
/// wheels require that pin, would not install with it.
fn check_pin(wheel: &Path, requirement: &str) -> Result<()> {
    let Some((name, version)) = requirement.split_once("==") else {
        return Ok(());
    };
    let expected = format!(
        "{}-{}-",
        rextio_host::wheel::normalize(name.trim()),
        version.trim()
    );
    let file = wheel
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !file.starts_with(&expected) {
        bail!("the plugin requires `{requirement}`, but its marker package builds {file}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn the_marker_packages_pyproject_is_read_and_unknown_keys_refused() {
        let py = parse_pyproject(
            "[build-system]\nrequires = [\"setuptools>=61\"]\n[project]\nname = \"rextio-torch-types\"\nversion = \"0.1.0\"\ndescription = \"d\"\nrequires-python = \">=3.11,<3.12\"\n[tool.setuptools]\npackages = [\"rextio_torch\"]\n",
        )
        .unwrap();
        assert_eq!(
            py,
            PyProject {
                name: "rextio-torch-types".into(),
                version: "0.1.0".into(),
                description: Some("d".into()),
                requires_python: Some(">=3.11,<3.12".into()),
                dependencies: vec![],
                packages: vec!["rextio_torch".into()],
            }
        );
        let err = parse_pyproject(
            "[project]\nname = \"x\"\nversion = \"1\"\nscripts = {a = \"b:c\"}\n[tool.setuptools]\npackages = [\"x\"]\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("`scripts`"), "{err}");
        let err = parse_pyproject("[project]\nname = \"x\"\nversion = \"1\"\n").unwrap_err();
        assert!(err.to_string().contains("packages"), "{err}");
    }

    #[test]
    fn every_plugin_marker_package_builds_a_pure_wheel_matching_its_pin() {
        let out = tempfile::tempdir().unwrap();
        let mut names = Vec::new();
        for req in setup::plugin_requirements().unwrap() {
            let Some(dir) = &req.editable_path else {
                continue;
            };
            let wheel = marker_wheel(Path::new(dir), out.path()).unwrap();
            check_pin(&wheel, &req.requirement).unwrap();
            let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.ends_with("-0.1.0-py3-none-any.whl"), "{name}");
            let zip = zip::ZipArchive::new(fs::File::open(&wheel).unwrap()).unwrap();
            let members: Vec<String> = zip.file_names().map(|n| n.unwrap().to_string()).collect();
            assert!(
                members.iter().any(|m| m.ends_with("/types.py")),
                "{members:?}"
            );
            assert!(
                !members.iter().any(|m| m.contains("__pycache__")),
                "{members:?}"
            );
            names.push(name);
        }
        names.sort();
        assert_eq!(
            names,
            vec![
                "rextio_tensorflow_types-0.1.0-py3-none-any.whl",
                "rextio_torch_types-0.1.0-py3-none-any.whl"
            ]
        );
        let bad = check_pin(
            Path::new("x/rextio_torch_types-0.2.0-py3-none-any.whl"),
            "rextio-torch-types==0.1.0",
        );
        assert!(bad.is_err());
    }

    #[test]
    fn cargo_reports_the_executable() {
        let line = r#"{"reason":"compiler-artifact","target":{"name":"rextio","kind":["bin"]},"executable":"/t/release/rextio"}"#;
        assert_eq!(
            executable_in(line),
            Some(PathBuf::from("/t/release/rextio"))
        );
        let lib =
            r#"{"reason":"compiler-artifact","target":{"name":"rextio_host"},"executable":null}"#;
        assert_eq!(executable_in(lib), None);
        assert_eq!(executable_in("not json"), None);
    }
}

//! `cargo xtask bench [--quick] [--threads N]`: the benchmark harness (README, Performance).
//!
//! ```text
//! bench/requirements.txt ─► pip install into .venv (ONNX Runtime lane; stamp .venv/.rextio-bench-stamp)
//! tests/fixtures/phase_a ──┐  copy (content-compared)     rextio build (the product)
//! tests/fixtures/control_flow ├─► target/bench/projects/<name>/ ─► .rextio/build/python + reports
//! bench/projects/scoring ──┤
//! bench/projects/tf_* ─────┘  (only when .venv has tensorflow)
//! bench/floor    ─► target/bench/floor/    (+ workspace Cargo.lock) ─► cargo build --release
//! bench/floor_tf ─► target/bench/floor_tf/ (only when .venv has tensorflow)
//!                (shared generated-crate target dir) ─► target/bench/_rextio_bench_floor*.so
//! builds.json (what built, how long, why not) ─► bench/run.py --out target/bench
//!                                              ─► stdout table, bench.json, bench.md, bench.svg
//! ```
//!
//! A project or floor build that fails does not stop the run: `run.py` reports the affected
//! lanes as unavailable (and exits non-zero when a native lane is affected), so one broken
//! piece never hides the others' numbers. Without tensorflow in `.venv` the TensorFlow projects
//! and floor are skipped (recorded as such) and `run.py` reports those workloads skipped.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::{cargo, env, setup};

/// The projects the workloads live in: (name under `target/bench/projects`, source directory,
/// whether it needs tensorflow).
const PROJECTS: [(&str, &str, bool); 6] = [
    ("phase_a", "tests/fixtures/phase_a", false),
    ("control_flow", "tests/fixtures/control_flow", false),
    ("scoring", "bench/projects/scoring", false),
    ("modules", "bench/projects/modules", false),
    ("tf_phase_a", "bench/projects/tf_phase_a", true),
    ("tf_scoring", "bench/projects/tf_scoring", true),
];

/// Entries never copied into (nor removed from) a project copy: build outputs and caches.
const SKIPPED: [&str; 4] = [".rextio", "dist", "__pycache__", ".pytest_cache"];

/// A floor extension: a crate under `bench/` built outside the workspace.
struct Floor {
    /// Key in `builds.json` and directory under `target/bench`.
    key: &'static str,
    /// Source directory under the workspace root.
    source: &'static str,
    /// The library name (`[lib] name` of its Cargo.toml).
    lib: &'static str,
    /// Dependencies whose version comes from `[workspace.dependencies]`.
    pinned: &'static [&'static str],
    /// Dependencies on workspace crates, whose `path` is set to `ROOT/<name>`.
    workspace_paths: &'static [&'static str],
    /// Needs tensorflow in `.venv` (skipped without it).
    tensorflow: bool,
}

const FLOORS: [Floor; 2] = [
    Floor {
        key: "floor",
        source: "bench/floor",
        lib: "_rextio_bench_floor",
        pinned: &["pyo3", "tch"],
        workspace_paths: &[],
        tensorflow: false,
    },
    Floor {
        key: "floor_tf",
        source: "bench/floor_tf",
        lib: "_rextio_bench_floor_tf",
        pinned: &["pyo3"],
        workspace_paths: &["rextio-tensorflow"],
        tensorflow: true,
    },
];

/// The outcome of one build step, for `builds.json`.
struct Step {
    name: String,
    ok: bool,
    /// Not attempted (tensorflow missing); `error` says why.
    skipped: bool,
    seconds: f64,
    error: Option<String>,
}

/// Builds the projects and the floor extension, then runs `bench/run.py`.
pub fn bench(root: &Path, quick: bool, threads: usize) -> Result<()> {
    if threads == 0 {
        bail!("--threads must be at least 1");
    }
    let started = Instant::now();
    setup::setup(root)?;
    install_bench_requirements(root);
    let out = root.join("target").join("bench");
    let projects_dir = out.join("projects");
    fs::create_dir_all(&projects_dir)
        .with_context(|| format!("cannot create '{}'", projects_dir.display()))?;

    eprintln!("xtask: building the rextio CLI");
    let mut cli = env::venv_command(root, cargo());
    cli.args(["build", "--quiet", "-p", "rextio-host", "--bin", "rextio"]);
    env::run(&mut cli, "")?;

    let tensorflow = tensorflow_missing(root);
    if let Some(why) = &tensorflow {
        eprintln!("xtask: note: skipping the TensorFlow projects and floor: {why}");
    }
    let mut projects = Vec::new();
    for (name, source, needs_tf) in PROJECTS {
        if let (true, Some(why)) = (needs_tf, &tensorflow) {
            projects.push(skipped(name, why));
            continue;
        }
        let dest = projects_dir.join(name);
        sync_dir(&root.join(source), &dest)?;
        projects.push(build_project(root, name, &dest));
    }
    let mut floors = Vec::new();
    for floor in &FLOORS {
        floors.push(match (floor.tensorflow, &tensorflow) {
            (true, Some(why)) => skipped(floor.key, why),
            _ => build_floor(root, &out, floor),
        });
    }

    let record = builds_json(&projects, &floors);
    let record_path = out.join("builds.json");
    fs::write(&record_path, record)
        .with_context(|| format!("cannot write '{}'", record_path.display()))?;

    let mut command = String::from("cargo xtask bench");
    if quick {
        command.push_str(" --quick");
    }
    if threads != 1 {
        let _ = write!(command, " --threads {threads}");
    }
    eprintln!("xtask: running bench/run.py ({command})");
    let mut run = env::venv_command(root, env::venv_python(root));
    run.arg(root.join("bench").join("run.py"))
        .arg("--out")
        .arg(&out)
        .arg("--threads")
        .arg(threads.to_string())
        .arg("--command")
        .arg(&command)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    if quick {
        run.arg("--quick");
    }
    let result = env::run(
        &mut run,
        "see the lines starting with `bench: FAILED` above",
    );
    eprintln!(
        "xtask: bench took {:.0} s; results in {}",
        started.elapsed().as_secs_f64(),
        out.display()
    );
    result?;
    // The floor is a reference lane: without it the run still stands (reported unavailable).
    for step in &projects {
        if !step.ok && !step.skipped {
            bail!(
                "building {} failed: {}",
                step.name,
                step.error.as_deref().unwrap_or("?")
            );
        }
    }
    Ok(())
}

/// The bench's extra Python packages (ONNX Runtime lane): `bench/requirements.txt`.
const BENCH_REQUIREMENTS: &str = "bench/requirements.txt";
/// Holds the digest of what was last installed from [`BENCH_REQUIREMENTS`], inside `.venv`.
const BENCH_STAMP: &str = ".rextio-bench-stamp";
/// `cargo xtask setup`'s stamp: when setup reinstalls `requirements.txt`, the bench's
/// packages are checked again (a reinstall may have moved a shared dependency).
const SETUP_STAMP: &str = ".rextio-setup-stamp";

/// Installs `bench/requirements.txt` into `.venv` unless the stamp says it is current. A failed
/// install is a warning: the lanes that need the packages report themselves unavailable.
fn install_bench_requirements(root: &Path) {
    if let Err(e) = try_install_bench_requirements(root) {
        eprintln!(
            "xtask: warning: installing {BENCH_REQUIREMENTS} failed; the ONNX Runtime lane \
             will be unavailable: {e:#}"
        );
    }
}

fn try_install_bench_requirements(root: &Path) -> Result<()> {
    let path = root.join(BENCH_REQUIREMENTS);
    let requirements =
        fs::read_to_string(&path).with_context(|| format!("cannot read '{}'", path.display()))?;
    let venv = env::venv_dir(root);
    let setup_stamp = fs::read_to_string(venv.join(SETUP_STAMP)).unwrap_or_default();
    let digest = bench_stamp_digest(&requirements, &setup_stamp);
    let stamp = venv.join(BENCH_STAMP);
    if fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == digest) {
        return Ok(());
    }
    let _ = fs::remove_file(&stamp);
    eprintln!("xtask: pip install -r {BENCH_REQUIREMENTS} into .venv");
    let mut pip = env::venv_command(root, env::venv_python(root));
    pip.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "-r",
        BENCH_REQUIREMENTS,
    ]);
    env::run(&mut pip, "")?;
    fs::write(&stamp, format!("{digest}\n"))
        .with_context(|| format!("cannot write '{}'", stamp.display()))
}

/// SHA-256 (hex) over `bench/requirements.txt` and setup's stamp.
fn bench_stamp_digest(requirements: &str, setup_stamp: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(b"bench/requirements.txt\0");
    hasher.update(requirements.as_bytes());
    hasher.update(b"\0setup-stamp\0");
    hasher.update(setup_stamp.trim().as_bytes());
    let mut out = String::with_capacity(64);
    for byte in hasher.finalize() {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// `rextio build DIR`, with its output shown only when it fails.
fn build_project(root: &Path, name: &str, dir: &Path) -> Step {
    eprintln!("xtask: rextio build {}", display_rel(root, dir));
    let started = Instant::now();
    let mut cmd = crate::rextio_command(root);
    cmd.arg("build").arg(dir);
    let error = match cmd.output() {
        Ok(output) if output.status.success() => built_for_other_python(root, dir),
        Ok(output) => {
            let stdout = String::from_utf8_lossy(&output.stdout);
            let stderr = String::from_utf8_lossy(&output.stderr);
            eprintln!("{stdout}{stderr}");
            Some(format!(
                "`rextio build {}` exited with {}: {}",
                display_rel(root, dir),
                output.status,
                last_line(&stderr).unwrap_or("no message")
            ))
        }
        Err(e) => Some(format!("cannot start cargo: {e}")),
    };
    step(name, started, error)
}

/// The bench times every lane with `.venv`'s interpreter, which `rextio build` also chose
/// (`REXTIO_PYTHON`); a project whose `build.json` names another one is an error, not a lane
/// timed against the wrong extension.
fn built_for_other_python(root: &Path, dir: &Path) -> Option<String> {
    let report = dir.join(".rextio").join("reports").join("build.json");
    let text = match fs::read_to_string(&report) {
        Ok(t) => t,
        Err(e) => return Some(format!("cannot read '{}': {e}", report.display())),
    };
    let json: serde_json::Value = match serde_json::from_str(&text) {
        Ok(j) => j,
        Err(e) => return Some(format!("'{}' is not JSON: {e}", report.display())),
    };
    // Nothing native: no interpreter was needed.
    let chosen = json["python"]["chosen"]["executable"].as_str()?;
    let bench = env::venv_python(root);
    (Path::new(chosen) != bench).then(|| {
        format!(
            "`rextio build` chose {chosen} ({}), but the bench runs {}",
            json["python"]["chosen"]["source"].as_str().unwrap_or("?"),
            bench.display()
        )
    })
}

/// Why the TensorFlow projects cannot be built here (`.venv` has no `tensorflow` package), or
/// `None`. Only the package's presence is checked (no import: that takes seconds); `run.py`
/// imports it and reports the TensorFlow workloads skipped when that fails.
fn tensorflow_missing(root: &Path) -> Option<String> {
    let mut probe = env::venv_command(root, env::venv_python(root));
    probe.args([
        "-c",
        "import importlib.util, sys; sys.exit(importlib.util.find_spec('tensorflow') is None)",
    ]);
    match probe.status() {
        Ok(status) if status.success() => None,
        Ok(_) => Some("tensorflow is not installed in .venv".to_owned()),
        Err(e) => Some(format!("cannot run the venv's Python: {e}")),
    }
}

/// A step that was not attempted.
fn skipped(name: &str, why: &str) -> Step {
    Step {
        name: name.to_owned(),
        ok: false,
        skipped: true,
        seconds: 0.0,
        error: Some(format!("skipped: {why}")),
    }
}

/// Builds a floor crate as a copy under `out/<key>` (with the workspace's Cargo.lock, in the
/// shared target dir of generated crates) and copies the extension to `out`.
fn build_floor(root: &Path, out: &Path, floor: &Floor) -> Step {
    eprintln!("xtask: building the floor extension ({})", floor.source);
    let started = Instant::now();
    let error = try_build_floor(root, out, floor)
        .err()
        .map(|e| format!("{e:#}"));
    if let Some(e) = &error {
        eprintln!(
            "xtask: warning: the {} lane will be unavailable: {e}",
            floor.key
        );
    }
    step(floor.key, started, error)
}

/// Sets the floor crate's `pinned` requirements from the workspace's `[workspace.dependencies]`
/// (the one place those pins live) and points its `workspace_paths` dependencies at the
/// workspace's crates.
fn pin_floor_dependencies(root: &Path, manifest: &Path, floor: &Floor) -> Result<()> {
    let read = |p: &Path| -> Result<toml::Table> {
        let text =
            fs::read_to_string(p).with_context(|| format!("cannot read '{}'", p.display()))?;
        toml::from_str(&text).with_context(|| format!("cannot parse '{}'", p.display()))
    };
    let workspace = read(&root.join("Cargo.toml"))?;
    let mut crate_manifest = read(manifest)?;
    for &name in floor.pinned {
        let version = workspace
            .get("workspace")
            .and_then(|w| w.get("dependencies"))
            .and_then(|d| d.get(name))
            .and_then(|d| d.get("version"))
            .and_then(toml::Value::as_str)
            .with_context(|| format!("the workspace does not pin `{name}`"))?
            .to_owned();
        let dep = crate_manifest
            .get_mut("dependencies")
            .and_then(|d| d.get_mut(name))
            .and_then(toml::Value::as_table_mut)
            .with_context(|| format!("{} does not depend on `{name}`", floor.source))?;
        dep.insert("version".into(), version.into());
    }
    for &name in floor.workspace_paths {
        let dep = crate_manifest
            .get_mut("dependencies")
            .and_then(|d| d.get_mut(name))
            .and_then(toml::Value::as_table_mut)
            .with_context(|| format!("{} does not depend on `{name}`", floor.source))?;
        let path = root.join(name);
        dep.insert("path".into(), path.to_string_lossy().into_owned().into());
    }
    let text =
        toml::to_string_pretty(&crate_manifest).context("cannot write the floor manifest")?;
    fs::write(manifest, text).with_context(|| format!("cannot write '{}'", manifest.display()))
}

fn try_build_floor(root: &Path, out: &Path, floor: &Floor) -> Result<()> {
    let dir = out.join(floor.key);
    sync_dir(&root.join(floor.source), &dir)?;
    let lock = dir.join("Cargo.lock");
    fs::copy(root.join("Cargo.lock"), &lock)
        .with_context(|| format!("cannot copy Cargo.lock to '{}'", lock.display()))?;
    pin_floor_dependencies(root, &dir.join("Cargo.toml"), floor)?;
    let target_dir = env::venv_env(root)
        .into_iter()
        .find(|(k, _)| k == "REXTIO_TARGET_DIR")
        .map(|(_, v)| PathBuf::from(v))
        .context("the venv environment has no REXTIO_TARGET_DIR")?;
    let mut cmd = env::venv_command(root, cargo());
    cmd.args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target_dir);
    env::run(&mut cmd, "")?;
    let built = target_dir.join("release").join(format!(
        "{}{}{}",
        std::env::consts::DLL_PREFIX,
        floor.lib,
        std::env::consts::DLL_SUFFIX
    ));
    let dest = out.join(format!("{}.so", floor.lib));
    // Unlink first, so a process that mapped the old file keeps it.
    let _ = fs::remove_file(&dest);
    fs::copy(&built, &dest)
        .with_context(|| format!("cannot copy '{}' to '{}'", built.display(), dest.display()))?;
    Ok(())
}

fn step(name: &str, started: Instant, error: Option<String>) -> Step {
    Step {
        name: name.to_owned(),
        ok: error.is_none(),
        skipped: false,
        seconds: started.elapsed().as_secs_f64(),
        error,
    }
}

/// `builds.json`: `{"projects": {NAME: STEP}, FLOOR_KEY: STEP, ...}` (`floor`, `floor_tf`),
/// STEP = `{"ok", "skipped", "seconds", "error"}`.
fn builds_json(projects: &[Step], floors: &[Step]) -> String {
    fn step_json(s: &Step) -> String {
        let error = s
            .error
            .as_deref()
            .map_or_else(|| "null".to_owned(), json_string);
        format!(
            "{{\"ok\": {}, \"skipped\": {}, \"seconds\": {:.2}, \"error\": {error}}}",
            s.ok, s.skipped, s.seconds
        )
    }
    let entries: Vec<String> = projects
        .iter()
        .map(|s| format!("    {}: {}", json_string(&s.name), step_json(s)))
        .collect();
    let mut text = format!("{{\n  \"projects\": {{\n{}\n  }}", entries.join(",\n"));
    for floor in floors {
        let _ = write!(
            text,
            ",\n  {}: {}",
            json_string(&floor.name),
            step_json(floor)
        );
    }
    text.push_str("\n}\n");
    text
}

/// A JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Makes `to` a copy of `from`: files are rewritten only when their content differs (so
/// unchanged sources keep their modification times), entries `from` lacks are removed, and
/// build outputs (`SKIPPED`) are left alone on both sides.
fn sync_dir(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to).with_context(|| format!("cannot create '{}'", to.display()))?;
    let mut names = Vec::new();
    for entry in fs::read_dir(from).with_context(|| format!("cannot read '{}'", from.display()))? {
        let entry = entry.with_context(|| format!("cannot read '{}'", from.display()))?;
        let name = entry.file_name();
        if SKIPPED.iter().any(|s| name == *s) {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if src.is_dir() {
            if dst.is_file() {
                fs::remove_file(&dst)
                    .with_context(|| format!("cannot remove '{}'", dst.display()))?;
            }
            sync_dir(&src, &dst)?;
        } else {
            let data =
                fs::read(&src).with_context(|| format!("cannot read '{}'", src.display()))?;
            if dst.is_dir() {
                fs::remove_dir_all(&dst)
                    .with_context(|| format!("cannot remove '{}'", dst.display()))?;
            }
            if fs::read(&dst).ok().as_deref() != Some(&data[..]) {
                fs::write(&dst, &data)
                    .with_context(|| format!("cannot write '{}'", dst.display()))?;
            }
        }
        names.push(name);
    }
    for entry in fs::read_dir(to).with_context(|| format!("cannot read '{}'", to.display()))? {
        let entry = entry.with_context(|| format!("cannot read '{}'", to.display()))?;
        let name = entry.file_name();
        if names.contains(&name) || SKIPPED.iter().any(|s| name == *s) {
            continue;
        }
        let path = entry.path();
        let removed = if path.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        removed.with_context(|| format!("cannot remove stale '{}'", path.display()))?;
    }
    Ok(())
}

fn last_line(text: &str) -> Option<&str> {
    text.lines().rev().map(str::trim).find(|l| !l.is_empty())
}

fn display_rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_stamp_follows_requirements_and_setup() {
        let base = bench_stamp_digest("onnx==1.23.2\n", "abc");
        assert_eq!(base.len(), 64);
        assert_eq!(base, bench_stamp_digest("onnx==1.23.2\n", "abc\n"));
        assert_ne!(base, bench_stamp_digest("onnx==1.23.3\n", "abc"));
        assert_ne!(base, bench_stamp_digest("onnx==1.23.2\n", "abd"));
    }

    #[test]
    fn floor_tf_manifest_gets_the_workspace_pyo3_and_an_absolute_crate_path() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let base =
            std::env::temp_dir().join(format!("rextio-xtask-floor-tf-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(&base).unwrap();
        let manifest = base.join("Cargo.toml");
        fs::copy(root.join("bench/floor_tf/Cargo.toml"), &manifest).unwrap();
        pin_floor_dependencies(root, &manifest, &FLOORS[1]).unwrap();
        let text: toml::Table = toml::from_str(&fs::read_to_string(&manifest).unwrap()).unwrap();
        let deps = text["dependencies"].as_table().unwrap();
        assert!(deps["pyo3"]["version"].as_str().unwrap().starts_with('='));
        let path = deps["rextio-tensorflow"]["path"].as_str().unwrap();
        assert_eq!(Path::new(path), root.join("rextio-tensorflow"));
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_string("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    }

    #[test]
    fn builds_json_lists_projects_and_floor() {
        let ok = Step {
            name: "phase_a".into(),
            ok: true,
            skipped: false,
            seconds: 1.5,
            error: None,
        };
        let bad = Step {
            name: "floor".into(),
            ok: false,
            skipped: false,
            seconds: 0.25,
            error: Some("exit \"1\"".into()),
        };
        let tf = skipped("floor_tf", "tensorflow is not installed in .venv");
        let text = builds_json(&[ok], &[bad, tf]);
        assert!(text.contains(
            "\"phase_a\": {\"ok\": true, \"skipped\": false, \"seconds\": 1.50, \"error\": null}"
        ));
        assert!(text.contains(
            "\"floor\": {\"ok\": false, \"skipped\": false, \"seconds\": 0.25, \"error\": \"exit \\\"1\\\"\"}"
        ));
        assert!(text.contains(
            "\"floor_tf\": {\"ok\": false, \"skipped\": true, \"seconds\": 0.00, \"error\": \"skipped: tensorflow is not installed in .venv\"}"
        ));
        assert!(text.ends_with("}\n}\n"));
    }

    #[test]
    fn sync_dir_copies_changes_removes_stale_and_keeps_build_outputs() {
        let base = std::env::temp_dir().join(format!("rextio-xtask-sync-{}", std::process::id()));
        let (from, to) = (base.join("from"), base.join("to"));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(from.join("src/pkg")).unwrap();
        fs::create_dir_all(from.join(".rextio")).unwrap();
        fs::write(from.join("rextio.toml"), "a").unwrap();
        fs::write(from.join("src/pkg/m.py"), "x = 1\n").unwrap();
        fs::write(from.join(".rextio/ignored"), "").unwrap();
        fs::create_dir_all(to.join(".rextio/build")).unwrap();
        fs::write(to.join("stale.py"), "").unwrap();

        sync_dir(&from, &to).unwrap();
        assert_eq!(
            fs::read_to_string(to.join("src/pkg/m.py")).unwrap(),
            "x = 1\n"
        );
        assert!(!to.join("stale.py").exists());
        assert!(to.join(".rextio/build").is_dir(), "build outputs are kept");
        assert!(
            !to.join(".rextio/ignored").exists(),
            "build outputs are not copied"
        );

        fs::write(from.join("src/pkg/m.py"), "x = 2\n").unwrap();
        sync_dir(&from, &to).unwrap();
        assert_eq!(
            fs::read_to_string(to.join("src/pkg/m.py")).unwrap(),
            "x = 2\n"
        );
        fs::remove_dir_all(&base).unwrap();
    }
}

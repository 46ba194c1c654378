//! `cargo xtask bench [--quick] [--threads N]`: the benchmark harness (README, Performance).
//!
//! ```text
//! tests/fixtures/phase_a ──┐  copy (content-compared)     rextio build (the product)
//! tests/fixtures/control_flow ├─► target/bench/projects/<name>/ ─► .rextio/build/python + reports
//! bench/projects/scoring ──┘
//! bench/floor ─► target/bench/floor/ (+ workspace Cargo.lock) ─► cargo build --release
//!                (shared generated-crate target dir) ─► target/bench/_rextio_bench_floor.so
//! builds.json (what built, how long, why not) ─► bench/run.py --out target/bench
//!                                              ─► stdout table, bench.json, bench.md, bench.svg
//! ```
//!
//! A project or floor build that fails does not stop the run: `run.py` reports the affected
//! lanes as unavailable (and exits non-zero when a native lane is affected), so one broken
//! piece never hides the others' numbers.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::{cargo, env, setup};

/// The projects the workloads live in: (name under `target/bench/projects`, source directory).
const PROJECTS: [(&str, &str); 3] = [
    ("phase_a", "tests/fixtures/phase_a"),
    ("control_flow", "tests/fixtures/control_flow"),
    ("scoring", "bench/projects/scoring"),
];

/// Entries never copied into (nor removed from) a project copy: build outputs and caches.
const SKIPPED: [&str; 4] = [".rextio", "dist", "__pycache__", ".pytest_cache"];

/// The floor extension's library name (see `bench/floor/Cargo.toml`).
const FLOOR_LIB: &str = "_rextio_bench_floor";

/// The outcome of one build step, for `builds.json`.
struct Step {
    name: String,
    ok: bool,
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
    let out = root.join("target").join("bench");
    let projects_dir = out.join("projects");
    fs::create_dir_all(&projects_dir)
        .with_context(|| format!("cannot create '{}'", projects_dir.display()))?;

    eprintln!("xtask: building the rextio CLI");
    let mut cli = env::venv_command(root, cargo());
    cli.args(["build", "--quiet", "-p", "rextio-host", "--bin", "rextio"]);
    env::run(&mut cli, "")?;

    let mut projects = Vec::new();
    for (name, source) in PROJECTS {
        let dest = projects_dir.join(name);
        sync_dir(&root.join(source), &dest)?;
        projects.push(build_project(root, name, &dest));
    }
    let floor = build_floor(root, &out);

    let record = builds_json(&projects, &floor);
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
        if !step.ok {
            bail!(
                "building {} failed: {}",
                step.name,
                step.error.as_deref().unwrap_or("?")
            );
        }
    }
    Ok(())
}

/// `rextio build DIR`, with its output shown only when it fails.
fn build_project(root: &Path, name: &str, dir: &Path) -> Step {
    eprintln!("xtask: rextio build {}", display_rel(root, dir));
    let started = Instant::now();
    let mut cmd = crate::rextio_command(root);
    cmd.arg("build").arg(dir);
    let error = match cmd.output() {
        Ok(output) if output.status.success() => None,
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

/// Builds `bench/floor` as a copy under `out/floor` (with the workspace's Cargo.lock, in the
/// shared target dir of generated crates) and copies the extension to `out`.
fn build_floor(root: &Path, out: &Path) -> Step {
    eprintln!("xtask: building the floor extension (bench/floor)");
    let started = Instant::now();
    let error = try_build_floor(root, out).err().map(|e| format!("{e:#}"));
    if let Some(e) = &error {
        eprintln!("xtask: warning: the floor lane will be unavailable: {e}");
    }
    step("the floor extension", started, error)
}

/// Sets the floor crate's pyo3 and tch requirements from the workspace's
/// `[workspace.dependencies]`, the one place those pins live.
fn pin_floor_dependencies(root: &Path, manifest: &Path) -> Result<()> {
    let read = |p: &Path| -> Result<toml::Table> {
        let text =
            fs::read_to_string(p).with_context(|| format!("cannot read '{}'", p.display()))?;
        toml::from_str(&text).with_context(|| format!("cannot parse '{}'", p.display()))
    };
    let workspace = read(&root.join("Cargo.toml"))?;
    let mut floor = read(manifest)?;
    for name in ["pyo3", "tch"] {
        let version = workspace
            .get("workspace")
            .and_then(|w| w.get("dependencies"))
            .and_then(|d| d.get(name))
            .and_then(|d| d.get("version"))
            .and_then(toml::Value::as_str)
            .with_context(|| format!("the workspace does not pin `{name}`"))?
            .to_owned();
        let dep = floor
            .get_mut("dependencies")
            .and_then(|d| d.get_mut(name))
            .and_then(toml::Value::as_table_mut)
            .with_context(|| format!("bench/floor does not depend on `{name}`"))?;
        dep.insert("version".into(), version.into());
    }
    let text = toml::to_string_pretty(&floor).context("cannot write the floor manifest")?;
    fs::write(manifest, text).with_context(|| format!("cannot write '{}'", manifest.display()))
}

fn try_build_floor(root: &Path, out: &Path) -> Result<()> {
    let dir = out.join("floor");
    sync_dir(&root.join("bench").join("floor"), &dir)?;
    let lock = dir.join("Cargo.lock");
    fs::copy(root.join("Cargo.lock"), &lock)
        .with_context(|| format!("cannot copy Cargo.lock to '{}'", lock.display()))?;
    pin_floor_dependencies(root, &dir.join("Cargo.toml"))?;
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
        "{}{FLOOR_LIB}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let dest = out.join(format!("{FLOOR_LIB}.so"));
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
        seconds: started.elapsed().as_secs_f64(),
        error,
    }
}

/// `builds.json`: `{"projects": {NAME: STEP}, "floor": STEP}`, STEP = `{"ok", "seconds", "error"}`.
fn builds_json(projects: &[Step], floor: &Step) -> String {
    fn step_json(s: &Step) -> String {
        let error = s
            .error
            .as_deref()
            .map_or_else(|| "null".to_owned(), json_string);
        format!(
            "{{\"ok\": {}, \"seconds\": {:.2}, \"error\": {error}}}",
            s.ok, s.seconds
        )
    }
    let entries: Vec<String> = projects
        .iter()
        .map(|s| format!("    {}: {}", json_string(&s.name), step_json(s)))
        .collect();
    format!(
        "{{\n  \"projects\": {{\n{}\n  }},\n  \"floor\": {}\n}}\n",
        entries.join(",\n"),
        step_json(floor)
    )
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
    fn json_strings_are_escaped() {
        assert_eq!(json_string("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    }

    #[test]
    fn builds_json_lists_projects_and_floor() {
        let ok = Step {
            name: "phase_a".into(),
            ok: true,
            seconds: 1.5,
            error: None,
        };
        let bad = Step {
            name: "the floor extension".into(),
            ok: false,
            seconds: 0.25,
            error: Some("exit \"1\"".into()),
        };
        let text = builds_json(&[ok], &bad);
        assert!(text.contains("\"phase_a\": {\"ok\": true, \"seconds\": 1.50, \"error\": null}"));
        assert!(text.contains(
            "\"floor\": {\"ok\": false, \"seconds\": 0.25, \"error\": \"exit \\\"1\\\"\"}"
        ));
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

//! The installable tool, end to end (issue #11's "Done when"):
//!
//! ```text
//! cargo xtask dist                       target/dist/rextio-*.whl + the marker-types wheels
//! fresh venv A  (outside the checkout)   uv pip install target/dist/*.whl torch==2.13.0
//! empty dir     (venv A activated)       rextio init demo && rextio build demo
//! fresh venv B  (only torch==2.13.0)     uv pip install demo/dist/*.whl (its marker types from target/dist)
//! another dir   (venv B)                 import demo; native functions, parity with eager torch
//! ```
//!
//! `uv` (pinned in requirements.txt) creates the environments: every run makes both anew, and
//! its cache hardlinks torch into them instead of downloading it again. The installed `rextio`
//! runs with a cache directory of its own (kept across runs under the system temporary
//! directory, so its cargo target directory is reused) and none of the workspace's variables:
//! nothing from the checkout or its `.venv` is visible to it.
//!
//! A missing development environment (the `uv` of `.venv`) fails the test; it is never a skip.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use rextio_tests::{python, workspace_root};

/// Runs `cmd`, panicking with both streams unless it succeeds; returns (stdout, stderr).
fn run(cmd: &mut Command, what: &str) -> (String, String) {
    let started = Instant::now();
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start {:?}: {e}", cmd.get_program()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    eprintln!("dist e2e: {what}: {:.1} s", started.elapsed().as_secs_f64());
    (stdout, stderr)
}

/// A directory for this checkout's runs under the system temporary directory (outside the
/// checkout), with `cache/` kept and everything else made anew.
fn base_dir(root: &Path) -> PathBuf {
    use std::hash::{Hash as _, Hasher as _};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    root.hash(&mut h);
    let base = std::env::temp_dir().join(format!("rextio-dist-e2e-{:016x}", h.finish()));
    for fresh in ["build-env", "run-env", "work", "elsewhere"] {
        let dir = base.join(fresh);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
    std::fs::create_dir_all(base.join("work")).unwrap();
    std::fs::create_dir_all(base.join("elsewhere")).unwrap();
    base
}

/// The pinned `uv` of the development environment.
fn uv() -> PathBuf {
    let uv = python().parent().unwrap().join("uv");
    assert!(
        uv.exists(),
        "'{}' is missing: run `cargo xtask setup` (requirements.txt pins uv)",
        uv.display()
    );
    uv
}

/// `uv ARGS` with no project or environment of the workspace in sight.
fn uv_command(base: &Path) -> Command {
    let mut cmd = Command::new(uv());
    cmd.current_dir(base)
        .env_remove("VIRTUAL_ENV")
        .env("UV_PYTHON_DOWNLOADS", "never")
        .env("UV_NO_PROGRESS", "1");
    cmd
}

/// A fresh virtual environment at `dir` with the base interpreter of the development one.
fn fresh_venv(base: &Path, dir: &Path) -> PathBuf {
    run(
        uv_command(base)
            .args([
                "venv",
                "--quiet",
                "--python-preference",
                "only-system",
                "--python",
            ])
            .arg(python())
            .arg(dir),
        &format!("uv venv {}", dir.display()),
    );
    dir.join("bin").join("python")
}

/// The environment of a user shell with `venv` activated: the workspace's variables removed,
/// `venv/bin` first on PATH, the development venv off it, cargo still on it.
fn user_shell(cmd: &mut Command, venv: &Path, cache: &Path) {
    let dev_bin = python().parent().unwrap().to_owned();
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        let workspace_var = k.starts_with("REXTIO_")
            || k.starts_with("LIBTORCH")
            || k.starts_with("PYO3_")
            || k.starts_with("PYTHON")
            || (k.starts_with("CARGO") && k != "CARGO_HOME");
        if workspace_var {
            cmd.env_remove(&key);
        }
    }
    let mut path = vec![venv.join("bin")];
    if let Some(p) = std::env::var_os("PATH") {
        path.extend(std::env::split_paths(&p).filter(|d| d != &dev_bin));
    }
    // The cargo that runs these tests, for generated crates (a user has it on PATH).
    if let Some(dir) = std::env::var_os("CARGO")
        .map(PathBuf::from)
        .and_then(|c| c.parent().map(Path::to_path_buf))
    {
        path.push(dir);
    }
    cmd.env("PATH", std::env::join_paths(path).unwrap())
        .env("VIRTUAL_ENV", venv)
        .env("REXTIO_CACHE_DIR", cache);
}

fn wheels(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    out.sort();
    out
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// The version of a registry package in a Cargo.lock.
fn locked(lock: &str, package: &str) -> Option<String> {
    let lock: toml::Table = toml::from_str(lock).unwrap();
    lock.get("package")?
        .as_array()?
        .iter()
        .find(|p| p.get("name").and_then(|n| n.as_str()) == Some(package))
        .and_then(|p| p.get("version")?.as_str().map(str::to_owned))
}

const CHECK: &str = r#"
import os, sys, sysconfig
import torch
from demo import kernels

site = os.path.realpath(sysconfig.get_paths()["purelib"])
native = kernels.__rextio_native__
assert native is not None, "the native module did not load"
for f in (kernels.__file__, native.__file__):
    assert os.path.realpath(f).startswith(site + os.sep), (f, site)
assert type(kernels.inference).__name__ == "builtin_function_or_method", kernels.inference
assert type(kernels.classify).__name__ == "builtin_function_or_method", kernels.classify

eager = kernels.__rextio_fallback__["inference"]
torch.manual_seed(0)
for rows in (1, 4, 33):
    x, w, b = torch.randn(rows, 8), torch.randn(3, 8), torch.randn(3)
    got = kernels.inference(x, w, b)
    want = eager(x, w, b)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    assert torch.equal(kernels.classify(x, w, b), want.argmax(dim=1))
try:
    kernels.inference(torch.randn(2, 8, dtype=torch.float64), w, b)
except (TypeError, ValueError) as e:
    print("rejected:", type(e).__name__)
else:
    raise AssertionError("a float64 input was accepted")
print("dist e2e ok", torch.__version__, sys.prefix)
"#;

#[test]
fn installed_tool_builds_a_project_that_runs_natively_in_a_fresh_environment() {
    let started = Instant::now();
    let root = workspace_root();
    let base = base_dir(&root);
    let cache = base.join("cache");

    // 1. The wheels.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    run(
        Command::new(&cargo)
            .args(["xtask", "dist"])
            .current_dir(&root),
        "cargo xtask dist",
    );
    let dist = root.join("target").join("dist");
    let built = wheels(&dist);
    let names: Vec<String> = built.iter().map(|p| file_name(p)).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        names.contains(&format!("rextio-{version}-py3-none-linux_x86_64.whl"))
            || names.contains(&format!("rextio-{version}-py3-none-linux_aarch64.whl")),
        "{names:?}"
    );
    assert!(names.contains(&"rextio_torch_types-0.1.0-py3-none-any.whl".to_owned()));
    assert!(names.contains(&"rextio_tensorflow_types-0.1.0-py3-none-any.whl".to_owned()));

    // 2. A fresh environment with the tool and torch: `pip install target/dist/*.whl torch`.
    let build_env = base.join("build-env");
    let build_python = fresh_venv(&base, &build_env);
    run(
        uv_command(&base)
            .args(["pip", "install", "--quiet", "--python"])
            .arg(&build_python)
            .args(&built)
            .arg("torch==2.13.0"),
        "uv pip install target/dist/*.whl torch==2.13.0",
    );
    let rextio = build_env.join("bin").join("rextio");
    let meta = std::fs::symlink_metadata(&rextio).unwrap();
    assert!(meta.is_file(), "{} is not a file", rextio.display());
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(meta.permissions().mode() & 0o111, 0o111, "not executable");
    }

    // 3. `rextio init demo && rextio build demo` in an empty directory, venv activated.
    let work = base.join("work");
    let rextio_cmd = |args: &[&str]| {
        let mut cmd = Command::new(&rextio);
        cmd.args(args).current_dir(&work);
        user_shell(&mut cmd, &build_env, &cache);
        cmd
    };
    let (version_out, _) = run(&mut rextio_cmd(&["--version"]), "rextio --version");
    assert_eq!(version_out.trim(), format!("rextio {version}"));
    let (_, init_err) = run(&mut rextio_cmd(&["init", "demo"]), "rextio init demo");
    assert!(init_err.contains("created package `demo`"), "{init_err}");
    let (build_out, build_err) = run(&mut rextio_cmd(&["build", "demo"]), "rextio build demo");
    // The chosen interpreter is reported: the activated environment's.
    let expected = format!(
        "rextio: python: {} (CPython 3.",
        build_env.join("bin").join("python").display()
    );
    assert!(build_err.contains(&expected), "{build_err}");
    assert!(build_err.contains("from $VIRTUAL_ENV)"), "{build_err}");
    assert!(build_out.contains("wheel: "), "{build_out}");

    let demo = work.join("demo");
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(demo.join(".rextio/reports/build.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["cargo"]["status"], "ok", "{report:#}");
    assert_eq!(report["python"]["chosen"]["source"], "$VIRTUAL_ENV");
    assert_eq!(
        report["python"]["chosen"]["executable"],
        build_env.join("bin/python").to_str().unwrap()
    );
    let routes: Vec<(String, String)> = report["modules"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["functions"].as_array().unwrap().iter())
        .map(|f| {
            (
                f["qualname"].as_str().unwrap().to_owned(),
                f["route"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for f in ["demo.kernels.inference", "demo.kernels.classify"] {
        assert!(
            routes
                .iter()
                .any(|(q, r)| q == f && r == "native-plugin:rextio-torch"),
            "{f}: {routes:?}"
        );
    }
    // It built in the target directory of this environment (torch-sys bakes the environment's
    // libtorch into its link paths, so environments do not share one).
    let env_name = build_env
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let targets: Vec<String> = std::fs::read_dir(cache.join("target"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let own = targets
        .iter()
        .find(|t| t.starts_with(&format!("{env_name}-")))
        .unwrap_or_else(|| panic!("no target directory for {env_name} in {targets:?}"));
    assert!(
        cache.join("target").join(own).join("release").is_dir(),
        "{own}"
    );
    // The generated crate depends on the copies the tool wrote under its own cache, nothing in
    // the checkout, and resolves the versions of the lock file compiled into the tool.
    let crate_dir = demo.join(".rextio/build/crate");
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    let checkout = root.to_str().unwrap();
    assert!(!manifest.contains(checkout), "{manifest}");
    assert!(
        manifest.contains(cache.join("crates").to_str().unwrap()),
        "{manifest}"
    );
    let lock = std::fs::read_to_string(crate_dir.join("Cargo.lock")).unwrap();
    assert!(!lock.contains(checkout), "{lock}");
    let workspace_lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap();
    for package in ["tch", "torch-sys", "pyo3"] {
        let pinned = locked(&workspace_lock, package);
        assert!(pinned.is_some(), "{package} is not in the workspace lock");
        assert_eq!(locked(&lock, package), pinned, "{package}");
    }
    let demo_wheels = wheels(&demo.join("dist"));
    assert_eq!(demo_wheels.len(), 1, "{demo_wheels:?}");
    assert!(
        file_name(&demo_wheels[0]).starts_with("demo-0.1.0-cp311-cp311-linux_"),
        "{demo_wheels:?}"
    );

    // 4. A second fresh environment with only torch, then the project's wheel (its marker-types
    // requirement is found among the dist wheels; nothing comes from an index).
    let run_env = base.join("run-env");
    let run_python = fresh_venv(&base, &run_env);
    run(
        uv_command(&base)
            .args(["pip", "install", "--quiet", "--python"])
            .arg(&run_python)
            .arg("torch==2.13.0"),
        "uv pip install torch==2.13.0 (second environment)",
    );
    run(
        uv_command(&base)
            .args(["pip", "install", "--quiet", "--no-index", "--find-links"])
            .arg(&dist)
            .arg("--python")
            .arg(&run_python)
            .arg(&demo_wheels[0]),
        "uv pip install demo/dist/*.whl",
    );
    let (listed, _) = run(
        uv_command(&base)
            .args(["pip", "list", "--python"])
            .arg(&run_python),
        "uv pip list",
    );
    let installed: Vec<&str> = listed
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(installed.contains(&"demo"), "{listed}");
    assert!(installed.contains(&"rextio-torch-types"), "{listed}");
    assert!(installed.contains(&"torch"), "{listed}");
    assert!(!installed.contains(&"rextio"), "{listed}");
    assert!(!run_env.join("bin").join("rextio").exists());

    // 5. Import it from another directory and run it natively, compared with eager torch.
    let mut check = Command::new(&run_python);
    check
        .args(["-c", CHECK])
        .current_dir(base.join("elsewhere"));
    user_shell(&mut check, &run_env, &cache);
    check.env("REXTIO_NATIVE_MODE", "native");
    let (out, _) = run(&mut check, "import demo in the second environment");
    assert!(out.contains("dist e2e ok 2.13.0"), "{out}");
    assert!(out.contains("rejected:"), "{out}");
    assert!(out.contains(run_env.to_str().unwrap()), "{out}");
    eprintln!("dist e2e: total {:.1} s", started.elapsed().as_secs_f64());
    // Passed: only the cache stays (a failure leaves everything for a look).
    for dir in ["build-env", "run-env", "work", "elsewhere"] {
        let _ = std::fs::remove_dir_all(base.join(dir));
    }
}

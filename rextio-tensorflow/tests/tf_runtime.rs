//! The runtime against a real TensorFlow 2.21.0: builds `tests/tf_ext` (a small pyo3 extension
//! over `rextio_tensorflow::runtime`, like a generated crate) and runs `tests/tf_ext/check.py`
//! with that interpreter, which compares every op, the boundary messages, errors, lifetimes and
//! the one-TensorFlow guarantee against eager TensorFlow.
//!
//! It runs with the interpreter named by `REXTIO_TF_PYTHON`, else `REXTIO_PYTHON` (which
//! `cargo xtask test` sets to the project venv with `tensorflow-cpu==2.21.0` and numpy):
//!
//! ```sh
//! REXTIO_TF_PYTHON=/path/to/venv/bin/python \
//!   cargo test -p rextio-tensorflow --test tf_runtime -- --nocapture
//! ```
//!
//! `native_scoring_timing` (in the same run, or alone with `-- --ignored native_scoring_timing`)
//! builds the extension in release and runs `tests/tf_ext/bench.py`: the bench's scoring
//! pipeline natively vs eager vs `tf.function`, after a parity check.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The two tests share one build directory, and timing must not run beside the checks.
static SERIAL: Mutex<()> = Mutex::new(());

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text)?;
    }
    Ok(())
}

/// Build `tests/tf_ext` as a Python extension (`release` like generated crates, or `debug`) and
/// return its interpreter and the directory that holds `rxtf_check.so`.
fn build_extension(release: bool) -> (String, PathBuf) {
    // `cargo xtask test` sets REXTIO_PYTHON to the project venv, which has the pinned
    // TensorFlow; without either variable the test fails (it never skips).
    let python = std::env::var("REXTIO_TF_PYTHON")
        .or_else(|_| std::env::var("REXTIO_PYTHON"))
        .expect(
            "set REXTIO_TF_PYTHON (or REXTIO_PYTHON) to a CPython 3.11 interpreter with tensorflow-cpu==2.21.0 and numpy; `cargo xtask test` does",
        );
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = crate_dir.parent().unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rxtf-check");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    write(
        &dir.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"rxtf-check\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [lib]\nname = \"rxtf_check\"\ncrate-type = [\"cdylib\"]\npath = \"src/lib.rs\"\n\n\
             [dependencies]\npyo3 = {{ version = \"=0.30.1\", features = [\"extension-module\"] }}\n\
             rextio-tensorflow = {{ path = {:?}, features = [\"runtime\"] }}\n\n[workspace]\n",
            crate_dir.display().to_string()
        ),
    )
    .unwrap();
    write(
        &dir.join("src/lib.rs"),
        &std::fs::read_to_string(crate_dir.join("tests/tf_ext/lib.rs")).unwrap(),
    )
    .unwrap();
    if !dir.join("Cargo.lock").exists() {
        // The workspace lock pins the same pyo3/libc the workspace was tested with.
        std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    }
    let mut args = vec!["build", "--offline", "--lib"];
    if release {
        args.push("--release");
    }
    let status = Command::new(env!("CARGO"))
        .args(&args)
        .current_dir(&dir)
        .env("PYO3_PYTHON", &python)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .status()
        .unwrap();
    assert!(status.success(), "building the test extension failed");
    let profile = if release { "release" } else { "debug" };
    let py_dir = dir.join(format!("py-{profile}"));
    std::fs::create_dir_all(&py_dir).unwrap();
    std::fs::copy(
        dir.join(format!("target/{profile}/librxtf_check.so")),
        py_dir.join("rxtf_check.so"),
    )
    .unwrap();
    (python, py_dir)
}

fn run_script(python: &str, py_dir: &Path, script: &str, args: &[&str]) -> (bool, String) {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(python)
        .arg(crate_dir.join("tests/tf_ext").join(script))
        .args(args)
        .env("PYTHONPATH", py_dir)
        .env("TF_CPP_MIN_LOG_LEVEL", "2")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("{stdout}");
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    (out.status.success(), stdout)
}

#[test]
fn runtime_matches_eager_tensorflow_2_21_0() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (python, py_dir) = build_extension(false);
    let (ok, stdout) = run_script(&python, &py_dir, "check.py", &[]);
    assert!(ok, "check.py failed:\n{stdout}");
    assert!(stdout.contains("all checks passed"));
}

/// The timing mode: a release build (like generated crates) of the same extension, the bench's
/// scoring pipeline checked for parity with eager and then timed against eager and
/// `tf.function` at batch 1, 16 and 128 on one thread. It reports; it gates only when
/// `REXTIO_TF_MIN_SPEEDUP` is set (e.g. `5`: native at least 5x eager at batch 1), because the
/// ratio moves with the load of the machine.
#[test]
#[ignore = "a measurement, not a test: run it on a quiet machine (see the module docs)"]
fn native_scoring_timing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (python, py_dir) = build_extension(true);
    let bar = std::env::var("REXTIO_TF_MIN_SPEEDUP").ok();
    let mut args = vec![];
    if let Some(bar) = &bar {
        args.extend(["--min-speedup", bar.as_str()]);
    }
    let (ok, stdout) = run_script(&python, &py_dir, "bench.py", &args);
    assert!(ok, "bench.py failed:\n{stdout}");
    assert!(stdout.contains("timing done"));
}

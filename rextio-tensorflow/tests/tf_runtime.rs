//! The runtime against a real TensorFlow 2.21.0: builds `tests/tf_ext` (a small pyo3 extension
//! over `rextio_tensorflow::runtime`, like a generated crate) and runs `tests/tf_ext/check.py`
//! with that interpreter, which compares every op, the boundary messages, errors, lifetimes and
//! the one-TensorFlow guarantee against eager TensorFlow.
//!
//! Ignored by default because it needs an interpreter with `tensorflow-cpu==2.21.0` and numpy:
//!
//! ```sh
//! REXTIO_TF_PYTHON=/path/to/venv/bin/python \
//!   cargo test -p rextio-tensorflow --features runtime --test tf_runtime -- --ignored --nocapture
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text)?;
    }
    Ok(())
}

#[test]
#[ignore = "needs REXTIO_TF_PYTHON: a CPython 3.11 with tensorflow-cpu==2.21.0 and numpy"]
fn runtime_matches_eager_tensorflow_2_21_0() {
    let python = std::env::var("REXTIO_TF_PYTHON").expect(
        "set REXTIO_TF_PYTHON to a CPython 3.11 interpreter with tensorflow-cpu==2.21.0 and numpy",
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
    let status = Command::new(env!("CARGO"))
        .args(["build", "--offline", "--lib"])
        .current_dir(&dir)
        .env("PYO3_PYTHON", &python)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .status()
        .unwrap();
    assert!(status.success(), "building the test extension failed");
    let py_dir = dir.join("py");
    std::fs::create_dir_all(&py_dir).unwrap();
    std::fs::copy(
        dir.join("target/debug/librxtf_check.so"),
        py_dir.join("rxtf_check.so"),
    )
    .unwrap();
    let out = Command::new(&python)
        .arg(crate_dir.join("tests/tf_ext/check.py"))
        .env("PYTHONPATH", &py_dir)
        .env("TF_CPP_MIN_LOG_LEVEL", "2")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(out.status.success(), "check.py failed:\n{stdout}");
    assert!(stdout.contains("all checks passed"));
}

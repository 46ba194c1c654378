//! The benchmark harness's own logic (statistics, parity gate, lane decisions, tables, plot) is
//! tested by pytest in `bench/tests`; this runs it with the project's venv so `cargo xtask test`
//! covers it. No test here or there asserts on a measured time.
//!
//! A missing Python environment fails the test with instructions; it is never a skip.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use rextio_tests::{python, workspace_root};

#[test]
fn bench_harness_python_tests_pass() {
    let root = workspace_root();
    let out = Command::new(python())
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "bench/tests",
        ])
        .current_dir(&root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("REXTIO_NATIVE_MODE")
        .output()
        .expect("cannot start the venv's python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "pytest bench/tests failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    assert!(stdout.contains(" passed"), "pytest ran no test:\n{stdout}");
}

//! `rextio init` templates per backend and `rextio develop` (build + install, skipped when the
//! wheel is unchanged).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn rextio(args: &[&str], env: &[(&str, &Path)]) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rextio"));
    cmd.args(args).env(
        "REXTIO_EVIDENCE_DIR",
        std::env::temp_dir().join("rextio-no-evidence"),
    );
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The development interpreter (`REXTIO_PYTHON`, else the workspace's `.venv`).
fn python() -> PathBuf {
    let p = std::env::var_os("REXTIO_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python"));
    assert!(
        p.exists(),
        "Python environment missing at '{}': run `cargo xtask setup`",
        p.display()
    );
    p
}

#[test]
fn init_names_the_package_after_a_directory_that_does_not_exist_yet() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("My-New.proj");
    let (ok, _, err) = rextio(&["init", root.to_str().unwrap()], &[]);
    assert!(ok, "{err}");
    assert!(err.contains("created package `my_new_proj`"), "{err}");
    let toml = std::fs::read_to_string(root.join("rextio.toml")).unwrap();
    assert!(toml.contains("name = \"my_new_proj\""), "{toml}");
    assert!(toml.contains("enabled = [\"rextio-torch\"]"), "{toml}");
    assert!(root.join("src/my_new_proj/kernels.py").is_file());
    assert!(root.join("src/my_new_proj/__init__.py").is_file());
    let reqs = std::fs::read_to_string(root.join("requirements.txt")).unwrap();
    assert!(reqs.contains("torch==2.13.0"), "{reqs}");
    let example = std::fs::read_to_string(root.join("example.py")).unwrap();
    assert!(
        example.contains("from my_new_proj import kernels"),
        "{example}"
    );

    // A name that would shadow the framework is not used as is.
    let root = dir.path().join("torch");
    let (ok, _, err) = rextio(&["init", root.to_str().unwrap()], &[]);
    assert!(
        ok && err.contains("created package `torch_project`"),
        "{err}"
    );
}

#[test]
fn every_backend_template_routes_native_under_deny_fallback() {
    for (backend, plugin, marker) in [
        ("torch", "rextio-torch", "import torch"),
        ("tensorflow", "rextio-tensorflow", "import tensorflow as tf"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join(format!("{backend}-app"));
        let (ok, _, err) = rextio(&["init", root.to_str().unwrap(), "--backend", backend], &[]);
        assert!(ok, "{backend}: {err}");
        let pkg = format!("{backend}_app");
        let kernels =
            std::fs::read_to_string(root.join("src").join(&pkg).join("kernels.py")).unwrap();
        assert!(kernels.contains(marker), "{kernels}");
        let toml = std::fs::read_to_string(root.join("rextio.toml")).unwrap();
        assert!(
            toml.contains(&format!("enabled = [\"{plugin}\"]")),
            "{toml}"
        );
        let (ok, out, err) = rextio(&["check", root.to_str().unwrap(), "--deny-fallback"], &[]);
        assert!(ok, "{backend}: {out}{err}");
        for f in ["inference", "classify"] {
            assert!(
                out.contains(&format!("{pkg}.kernels.{f}  native-plugin:{plugin}")),
                "{backend}: {out}"
            );
        }
    }
}

#[test]
fn develop_builds_installs_skips_an_unchanged_wheel_and_reinstalls_a_changed_one() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("devapp");
    let (ok, _, err) = rextio(&["init", root.to_str().unwrap()], &[]);
    assert!(ok, "{err}");
    // Install into a throwaway directory, never into the shared environment: pip honours
    // PIP_TARGET (with PIP_UPGRADE, without which `--target` keeps existing package
    // directories), and PYTHONPATH lets the interpreter (and develop's check) see what it holds.
    let site = dir.path().join("site");
    let env: [(&str, &Path); 4] = [
        ("REXTIO_PYTHON", python.as_path()),
        ("PIP_TARGET", site.as_path()),
        ("PIP_UPGRADE", Path::new("1")),
        ("PYTHONPATH", site.as_path()),
    ];
    let develop = || rextio(&["develop", root.to_str().unwrap()], &env);

    let (ok, out, err) = develop();
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("devapp.kernels.inference  native-plugin:rextio-torch"),
        "{out}"
    );
    assert!(out.contains("installed devapp 0.1.0 into"), "{out}");
    // Progress in a log (stderr is not a terminal here): stages and cargo's units as plain lines,
    // stage times in build.json.
    for stage in ["generate", "compile", "package"] {
        assert!(err.contains(&format!("rextio: stage {stage}")), "{err}");
    }
    assert!(
        err.contains("rextio: compiled devapp")
            || err.contains("rextio: compiled _rextio_native_devapp"),
        "{err}"
    );
    let build: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join(".rextio/reports/build.json")).unwrap(),
    )
    .unwrap();
    for t in ["check", "codegen", "cargo", "package"] {
        assert!(build["timings_ms"][t].is_u64(), "{t}: {build}");
    }
    assert!(site.join("devapp/kernels.py").is_file());
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(".rextio/develop.json")).unwrap())
            .unwrap();
    assert_eq!(record["distribution"], "devapp");
    assert_eq!(record["sha256"].as_str().unwrap().len(), 64);

    // The installed package runs natively and agrees with its Python body.
    let run = Command::new(&python)
        .arg(root.join("example.py"))
        .env("PYTHONPATH", &site)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success()
            && stdout.contains("native: True")
            && stdout.contains("native and Python agree: True"),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );

    // Nothing changed: same wheel digest, pip is not run again.
    let (ok, out, err) = develop();
    assert!(ok && out.contains("unchanged: devapp 0.1.0"), "{out}{err}");

    // The package was removed behind develop's back: it is installed again.
    std::fs::remove_dir_all(site.join("devapp-0.1.0.dist-info")).unwrap();
    let (ok, out, err) = develop();
    assert!(ok && out.contains("installed devapp 0.1.0"), "{out}{err}");

    // A source change gives a new wheel, which is installed.
    let kernels = root.join("src/devapp/kernels.py");
    let text = std::fs::read_to_string(&kernels).unwrap();
    std::fs::write(&kernels, text.replace("argmax(dim=1)", "argmax(dim=-1)")).unwrap();
    let (ok, out, err) = develop();
    assert!(ok && out.contains("installed devapp 0.1.0"), "{out}{err}");
    let installed = std::fs::read_to_string(site.join("devapp/kernels.py")).unwrap();
    assert!(installed.contains("argmax(dim=-1)"), "{installed}");
}

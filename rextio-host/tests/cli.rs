//! The `rextio` binary: explain, capabilities, init + check, exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

fn rextio(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rextio"))
        .args(args)
        .env(
            "REXTIO_EVIDENCE_DIR",
            std::env::temp_dir().join("rextio-no-evidence"),
        )
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn explain_prints_every_host_and_plugin_code() {
    let registry = rextio_host::Registry::builder()
        .with_default_plugins()
        .build()
        .unwrap();
    let mut codes: Vec<&str> = rextio_host::codes::CODES.iter().map(|c| c.code).collect();
    for r in registry.plugins() {
        codes.extend(r.plugin.diagnostic_codes().iter().map(|c| c.code));
    }
    assert!(codes.len() > 30);
    for code in codes {
        let (ok, out, _) = rextio(&["explain", &code.to_lowercase()]);
        assert!(
            ok && out.starts_with(code) && out.lines().count() >= 3,
            "{code}: {out}"
        );
    }
    let (ok, _, err) = rextio(&["explain", "RXT999"]);
    assert!(!ok && err.contains("unknown diagnostic code"), "{err}");
}

#[test]
fn capabilities_lists_rules_types_platforms_and_unverified_without_evidence() {
    let (ok, out, _) = rextio(&["capabilities", "--format", "json"]);
    assert!(ok);
    let caps: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(caps["host_api_version"], "1.19.0");
    let ids: Vec<&str> = caps["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["rextio-tensorflow", "rextio-torch"]);
    let torch = &caps["plugins"][1];
    let rules = torch["rules"].as_array().unwrap();
    assert_eq!(
        rules.iter().filter(|r| r["outcome"] == "native").count(),
        116,
        "112 CPU rules and the CUDA lane's 4"
    );
    assert!(
        rules.iter().all(|r| r["verified"] == false),
        "no evidence in the test's evidence dir, so nothing is verified"
    );
    assert_eq!(torch["platforms"].as_array().unwrap().len(), 9);
    assert_eq!(torch["types"].as_array().unwrap().len(), 7);
    assert_eq!(caps["plugins"][0]["types"].as_array().unwrap().len(), 5);

    // The device provider with its capabilities (Device Provider API 1.2).
    assert_eq!(caps["device_provider_api_version"], "1.2.0");
    let cuda = &caps["device_providers"][0];
    assert_eq!(cuda["id"], "rextio-device-cuda");
    let capabilities: Vec<&str> = cuda["manifest"]["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for c in [
        "cuda-linux-x86_64",
        "cuda-linux-aarch64",
        "cuda-windows-x86_64",
        "cuda-libtorch-linux-x86_64",
        "cuda-tensorflow-tfe-linux-x86_64",
    ] {
        assert!(capabilities.contains(&c), "{capabilities:?}");
    }
    assert_eq!(cuda["manifest"]["support_claim"], false);
}

#[test]
fn init_then_check_routes_the_starter_natively_and_deny_fallback_sets_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("demo");
    std::fs::create_dir(&root).unwrap();
    let (ok, _, err) = rextio(&["init", root.to_str().unwrap()]);
    assert!(ok, "{err}");
    let (ok, out, _) = rextio(&["check", root.to_str().unwrap(), "--deny-fallback"]);
    assert!(
        ok && out.contains("demo.kernels.inference  native-plugin:rextio-torch"),
        "{out}"
    );
    let (ok, _, err) = rextio(&["init", root.to_str().unwrap()]);
    assert!(!ok && err.contains("already exists"), "{err}");
    std::fs::write(
        root.join("src/demo/extra.py"),
        "def f(x: int) -> int:\n    return x\n",
    )
    .unwrap();
    let (ok, out, _) = rextio(&["check", root.to_str().unwrap(), "--deny-fallback"]);
    assert!(!ok && out.contains("RXT016"), "{out}");
    let (ok, out, _) = rextio(&["check", root.to_str().unwrap(), "--format", "json"]);
    assert!(ok);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["contract_version"], "1");
}

#[test]
fn init_module_template_writes_a_model_whose_methods_route_natively() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("net");
    let (ok, _, err) = rextio(&["init", root.to_str().unwrap(), "--template", "module"]);
    assert!(ok, "{err}");
    assert!(root.join("src/net/model.py").is_file() && !root.join("src/net/kernels.py").exists());
    let (ok, out, _) = rextio(&["check", root.to_str().unwrap(), "--deny-fallback"]);
    for m in [
        "net.model.Block.forward",
        "net.model.Classifier.forward",
        "net.model.Classifier.classify",
    ] {
        assert!(
            ok && out.contains(&format!("{m}  native-plugin:rextio-torch")),
            "{m}: {out}"
        );
    }
    let other = dir.path().join("tfnet");
    let (ok, _, err) = rextio(&[
        "init",
        other.to_str().unwrap(),
        "--backend",
        "tensorflow",
        "--template",
        "module",
    ]);
    assert!(!ok && err.contains("no module classes"), "{err}");
}

#[test]
fn bad_projects_fail_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = rextio(&["check", dir.path().to_str().unwrap()]);
    assert!(!ok && err.contains("no rextio.toml"), "{err}");
    std::fs::write(
        dir.path().join("rextio.toml"),
        "[plugins]\nenabled = [\"rextio-torch\"]\nbogus = 1\n",
    )
    .unwrap();
    let (ok, _, err) = rextio(&["check", dir.path().to_str().unwrap()]);
    assert!(!ok && err.contains("bogus"), "{err}");
    std::fs::write(
        dir.path().join("rextio.toml"),
        "[plugins]\nenabled = [\"rextio-torch\"]\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/m.py"), "def f(:\n").unwrap();
    let (ok, _, err) = rextio(&["check", dir.path().to_str().unwrap()]);
    assert!(
        !ok && err.contains("syntax error") && err.contains("m.py"),
        "{err}"
    );
}

/// What CPython rejects at import is a syntax error of `rextio check` (and so of `build`), with
/// CPython's line and message, though the parser rextio analyses with accepts it.
#[test]
fn modules_cpython_does_not_compile_are_syntax_errors_with_its_line_and_message() {
    let ann = "from rextio_torch.types import TensorF32Cpu2D as M\n";
    for (source, line, message) in [
        (
            "def dup(x: M, x: M) -> M:\n    return x\n",
            2,
            "duplicate argument 'x' in function definition",
        ),
        (
            "def f(x: M) -> M:\n    return x\nreturn 1\n",
            4,
            "'return' outside function",
        ),
        (
            "nonlocal y\n",
            2,
            "nonlocal declaration not allowed at module level",
        ),
        (
            "def f(x: M) -> M:\n    def g():\n        nonlocal q\n    return x\n",
            4,
            "no binding for nonlocal 'q' found",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("rextio.toml"),
            "[plugins]\nenabled = [\"rextio-torch\"]\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("src/pkg")).unwrap();
        std::fs::write(dir.path().join("src/pkg/__init__.py"), "").unwrap();
        std::fs::write(dir.path().join("src/pkg/m.py"), format!("{ann}{source}")).unwrap();
        let (ok, out, err) = rextio(&["check", dir.path().to_str().unwrap()]);
        let want = format!("syntax error in 'src/pkg/m.py' at {line}:");
        assert!(
            !ok && err.contains(&want) && err.contains(message),
            "{source}: want {want} ... {message}; got {out}{err}"
        );
    }
}

#[test]
fn a_build_with_no_usable_interpreter_names_every_candidate_it_skipped() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("app");
    let (ok, _, err) = rextio(&["init", root.to_str().unwrap()]);
    assert!(ok, "{err}");
    // A virtual environment whose python is broken, and a PATH whose python3 is Python 2.
    let venv = dir.path().join("venv");
    let bin = dir.path().join("bin");
    for (path, body) in [
        (venv.join("bin/python"), "echo 'broken venv' >&2; exit 1"),
        (
            bin.join("python3"),
            r#"echo '{"implementation": "CPython", "version": [2, 7, 18], "sys_executable": "/usr/bin/python2", "prefix": "/usr", "base_prefix": "/usr", "platform": "linux-x86_64", "ext_suffix": null, "soabi": null, "abiflags": "", "pointer_width": 64}'"#,
        ),
    ] {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_rextio"))
        .args(["build", root.to_str().unwrap()])
        .env_remove("REXTIO_PYTHON")
        .env("VIRTUAL_ENV", &venv)
        .env("PATH", &bin)
        .env("REXTIO_CACHE_DIR", dir.path().join("cache"))
        .env("REXTIO_EVIDENCE_DIR", dir.path().join("evidence"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("no usable Python interpreter found"), "{err}");
    assert!(
        err.contains(&format!(
            "skipped {} ($VIRTUAL_ENV)",
            venv.join("bin/python").display()
        )) && err.contains("broken venv"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "skipped {} (python3 on PATH)",
            bin.join("python3").display()
        )) && err.contains("Python 2.7.18 is older than 3.10"),
        "{err}"
    );
    // The probe that ran is a real file under the cache directory.
    let probes: Vec<_> = std::fs::read_dir(dir.path().join("cache/probe"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        probes.len() == 1 && probes[0].starts_with("probe_python-") && probes[0].ends_with(".py"),
        "{probes:?}"
    );
}

/// Every path a command takes is read against the directory it was started in, also by the steps
/// that run elsewhere (the build's interpreter probe, cargo, certify's checker).
#[test]
fn every_command_reads_relative_paths_against_the_directory_it_started_in() {
    let python = std::env::var_os("REXTIO_PYTHON")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python")
        });
    assert!(python.exists(), "run `cargo xtask setup` first");
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let cwd = cwd.as_path();
    // The interpreter by a relative path from the start directory (a symlink would lose the
    // virtual environment, which Python finds next to the path it was started by).
    let python = std::path::absolute(&python).unwrap();
    let mut rel = std::path::PathBuf::new();
    for _ in cwd.components().skip(1) {
        rel.push("..");
    }
    rel.push(python.strip_prefix("/").unwrap());
    let rel_python = rel.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_rextio"))
            .args(args)
            .current_dir(cwd)
            .env_remove("REXTIO_PYTHON")
            .env("REXTIO_EVIDENCE_DIR", cwd.join("evidence"))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    };
    let (ok, out) = run(&["init", "app"]);
    assert!(ok && cwd.join("app/rextio.toml").is_file(), "{out}");
    let (ok, out) = run(&["check", "app", "--deny-fallback"]);
    assert!(
        ok && out.contains("app.kernels.inference  native-plugin:rextio-torch"),
        "{out}"
    );
    let (ok, out) = run(&["build", "app", "--python", rel_python]);
    assert!(ok, "{out}");
    let wheels: Vec<_> = std::fs::read_dir(cwd.join("app/dist"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "{out}");
    let (ok, out) = run(&["docs", "diagnostics", "--out", "diagnostics.md"]);
    assert!(ok && cwd.join("diagnostics.md").is_file(), "{out}");
    // An interpreter given by a relative path that is not there is named by its absolute path.
    let (ok, out) = run(&[
        "certify",
        "rextio-torch",
        "--python",
        "missing/bin/python",
        "--out",
        "ev",
    ]);
    let missing = cwd.join("missing/bin/python");
    assert!(
        !ok && out.contains(missing.to_str().unwrap()),
        "expected the interpreter named as {}: {out}",
        missing.display()
    );
    let (ok, out) = run(&["clean", "app"]);
    assert!(ok && !cwd.join("app/dist").exists(), "{out}");
}

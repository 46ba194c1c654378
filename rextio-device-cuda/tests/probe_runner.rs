//! The probe runner against REAL subprocesses: small shell scripts written into a private
//! temporary directory stand in for the probe. The trust policy's ancestor walk stops at that
//! directory (its parent, `/tmp`, is world-writable); everything else is the production logic.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rextio_device_cuda::probe::{parse_probe_output, ProbeLimits, ProbeRunner, ProcessProbeRunner};
use rextio_device_cuda::{
    CudaDeviceProvider, CudaPreflightRequest, HostPlatform, OwnerRule, ProbeProvenance,
    ProbeReport, ProbeStatus, ReasonCode, TrustPolicy,
};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const VALID: &str = r#"{"schema":"rextio-cuda-probe/1","status":"ok","driver_version":12080,"device_count":1,"devices":[{"ordinal":0,"name":"NVIDIA A100","compute_capability":{"major":8,"minor":0}}],"error":null}"#;

struct Sandbox {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        chmod(&root, 0o755);
        Sandbox { _dir: dir, root }
    }

    fn uid(&self) -> u32 {
        fs::metadata(&self.root).unwrap().uid()
    }

    fn policy(&self) -> TrustPolicy {
        TrustPolicy {
            owner: OwnerRule::Uids(vec![self.uid()]),
            ancestors_until: Some(self.root.clone()),
            require_executable: true,
            allowed_roots: Vec::new(),
        }
    }

    fn runner(&self) -> ProcessProbeRunner {
        self.runner_with(ProbeLimits {
            timeout: Duration::from_secs(5),
            max_output_bytes: 4096,
        })
    }

    fn runner_with(&self, limits: ProbeLimits) -> ProcessProbeRunner {
        ProcessProbeRunner::new(self.policy(), limits)
    }

    fn script(&self, name: &str, body: &str, mode: u32) -> PathBuf {
        let path = self.root.join(name);
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        chmod(&path, mode);
        path
    }
}

fn chmod(p: &Path, mode: u32) {
    fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
}

fn code_of(result: Result<ProbeReport, rextio_device_cuda::Refusal>) -> ReasonCode {
    match result {
        Ok(report) => panic!("expected a refusal, got {report:?}"),
        Err(refusal) => {
            assert!(!refusal.message.is_empty());
            refusal.reason
        }
    }
}

#[test]
fn a_well_behaved_probe_script_yields_its_report() {
    let sb = Sandbox::new();
    let probe = sb.script("probe", &format!("echo '{VALID}'"), 0o755);
    let runner = sb.runner();
    let report = runner.run(&probe).unwrap();
    assert_eq!(report, parse_probe_output(VALID.as_bytes()).unwrap());
    assert_eq!(runner.provenance(), ProbeProvenance::Process);
}

#[test]
fn subprocess_failure_modes_have_stable_reason_codes() {
    let table: &[(&str, &str, u32, ReasonCode)] = &[
        (
            "invalid-json",
            "echo 'this is not json'",
            0o755,
            ReasonCode::ProbeInvalidJson,
        ),
        (
            "empty-output",
            "exit 0",
            0o755,
            ReasonCode::ProbeInvalidJson,
        ),
        (
            "two-documents",
            &format!("echo '{VALID}'; echo '{VALID}'"),
            0o755,
            ReasonCode::ProbeInvalidJson,
        ),
        (
            "wrong-schema-id",
            &format!("echo '{}'", VALID.replace("probe/1", "probe/2")),
            0o755,
            ReasonCode::ProbeSchemaMismatch,
        ),
        (
            "unknown-field",
            &format!(
                "echo '{}'",
                VALID.replace("\"error\":null", "\"error\":null,\"path\":\"/x\"")
            ),
            0o755,
            ReasonCode::ProbeSchemaMismatch,
        ),
        (
            "json-array",
            "echo '[]'",
            0o755,
            ReasonCode::ProbeSchemaMismatch,
        ),
        (
            "exit-nonzero",
            &format!("echo '{VALID}'; exit 3"),
            0o755,
            ReasonCode::ProbeExitFailure,
        ),
        (
            "killed-by-signal",
            "kill -9 $$",
            0o755,
            ReasonCode::ProbeExitFailure,
        ),
        (
            "group-writable",
            &format!("echo '{VALID}'"),
            0o775,
            ReasonCode::ProbeUntrustedPermissions,
        ),
        (
            "world-writable",
            &format!("echo '{VALID}'"),
            0o757,
            ReasonCode::ProbeUntrustedPermissions,
        ),
        (
            "not-executable",
            &format!("echo '{VALID}'"),
            0o644,
            ReasonCode::ProbeNotExecutable,
        ),
    ];
    let sb = Sandbox::new();
    let runner = sb.runner();
    for (name, body, mode, expected) in table {
        let probe = sb.script(name, body, *mode);
        assert_eq!(code_of(runner.run(&probe)), *expected, "{name}");
    }
}

#[test]
fn a_missing_probe_is_refused() {
    let sb = Sandbox::new();
    let code = code_of(sb.runner().run(&sb.root.join("no-such-probe")));
    assert_eq!(code, ReasonCode::ProbeMissing);
}

#[test]
fn a_probe_path_that_cannot_be_inspected_is_not_called_missing() {
    // A path through a regular file fails with ENOTDIR, and a symlink loop with ELOOP, whoever
    // runs the test (root bypasses the permission bits a denied directory would need).
    let sb = Sandbox::new();
    sb.script("probe", &format!("echo '{VALID}'"), 0o755);
    let looped = sb.root.join("loop");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    for path in [sb.root.join("probe").join("inner"), looped] {
        let refusal = sb.runner().run(&path).unwrap_err();
        assert_eq!(refusal.reason, ReasonCode::ProbeInspectFailed, "{path:?}");
        assert!(
            refusal.message.contains("cannot be inspected"),
            "{path:?}: {}",
            refusal.message
        );
    }
}

#[test]
fn a_relative_probe_path_is_refused_even_if_it_exists_relative_to_the_cwd() {
    let sb = Sandbox::new();
    sb.script("probe", &format!("echo '{VALID}'"), 0o755);
    for relative in ["probe", "./probe", "rextio-cuda-probe", "bin/../probe"] {
        assert_eq!(
            code_of(sb.runner().run(Path::new(relative))),
            ReasonCode::ProbeNotAbsolute,
            "{relative}"
        );
    }
}

#[test]
fn a_directory_is_not_a_probe() {
    let sb = Sandbox::new();
    let dir = sb.root.join("probe.d");
    fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o755);
    assert_eq!(code_of(sb.runner().run(&dir)), ReasonCode::ProbeNotFile);
}

#[test]
fn a_writable_ancestor_directory_is_refused() {
    let sb = Sandbox::new();
    let bin = sb.root.join("bin");
    fs::create_dir(&bin).unwrap();
    let probe = bin.join("probe");
    fs::write(&probe, format!("#!/bin/sh\necho '{VALID}'\n")).unwrap();
    chmod(&probe, 0o755);
    for mode in [0o777, 0o775, 0o1777] {
        chmod(&bin, mode);
        assert_eq!(
            code_of(sb.runner().run(&probe)),
            ReasonCode::ProbeUntrustedPermissions,
            "{mode:o}"
        );
    }
    chmod(&bin, 0o755);
    sb.runner().run(&probe).unwrap();
}

#[test]
fn a_probe_owned_by_an_untrusted_user_is_refused() {
    let sb = Sandbox::new();
    let probe = sb.script("probe", &format!("echo '{VALID}'"), 0o755);
    let policy = TrustPolicy {
        owner: OwnerRule::Uids(vec![sb.uid().wrapping_add(1)]),
        ..sb.policy()
    };
    let runner = ProcessProbeRunner::new(policy, ProbeLimits::default());
    assert_eq!(code_of(runner.run(&probe)), ReasonCode::ProbeUntrustedOwner);
}

#[test]
fn a_symlink_to_a_trusted_probe_runs_the_canonical_file() {
    let sb = Sandbox::new();
    let probe = sb.script("probe", &format!("echo '{VALID}'"), 0o755);
    let link = sb.root.join("link");
    std::os::unix::fs::symlink(&probe, &link).unwrap();
    sb.runner().run(&link).unwrap();
}

#[test]
fn the_production_policy_refuses_a_probe_below_world_writable_tmp() {
    let sb = Sandbox::new();
    let probe = sb.script("probe", &format!("echo '{VALID}'"), 0o755);
    let tmp_mode = fs::metadata(std::env::temp_dir()).unwrap().mode();
    assert_ne!(
        tmp_mode & 0o002,
        0,
        "this test needs a world-writable temp dir"
    );
    let code = code_of(ProcessProbeRunner::production().run(&probe));
    assert_eq!(code, ReasonCode::ProbeUntrustedPermissions);
}

#[test]
fn a_probe_that_hangs_is_killed_at_the_deadline() {
    let sb = Sandbox::new();
    let probe = sb.script("probe", "exec sleep 30", 0o755);
    let runner = sb.runner_with(ProbeLimits {
        timeout: Duration::from_millis(300),
        max_output_bytes: 4096,
    });
    let started = Instant::now();
    assert_eq!(code_of(runner.run(&probe)), ReasonCode::ProbeTimeout);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_probe_whose_child_keeps_its_output_open_is_killed_at_the_deadline() {
    let sb = Sandbox::new();
    // The script itself exits at once, but a background child inherits standard output.
    let probe = sb.script(
        "probe",
        &format!("sleep 30 &\necho '{VALID}'\nexit 0"),
        0o755,
    );
    let runner = sb.runner_with(ProbeLimits {
        timeout: Duration::from_millis(500),
        max_output_bytes: 4096,
    });
    let started = Instant::now();
    assert_eq!(code_of(runner.run(&probe)), ReasonCode::ProbeTimeout);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_probe_that_floods_its_output_is_cut_off() {
    let sb = Sandbox::new();
    let probe = sb.script(
        "probe",
        "while :; do echo 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'; done",
        0o755,
    );
    let started = Instant::now();
    assert_eq!(
        code_of(sb.runner().run(&probe)),
        ReasonCode::ProbeOutputTooLarge
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // Exactly at the cap is accepted (and then judged as JSON); one byte over is not.
    let runner = sb.runner_with(ProbeLimits {
        timeout: Duration::from_secs(5),
        max_output_bytes: VALID.len() + 1,
    });
    let exact = sb.script("exact", &format!("echo '{VALID}'"), 0o755);
    runner.run(&exact).unwrap();
    let over = sb.script("over", &format!("echo ' {VALID}'"), 0o755);
    assert_eq!(code_of(runner.run(&over)), ReasonCode::ProbeOutputTooLarge);
}

#[test]
fn a_probe_with_a_missing_interpreter_cannot_be_spawned() {
    let sb = Sandbox::new();
    let path = sb.root.join("probe");
    fs::write(&path, "#!/nonexistent/interpreter\n").unwrap();
    chmod(&path, 0o755);
    assert_eq!(
        code_of(sb.runner().run(&path)),
        ReasonCode::ProbeSpawnFailed
    );
}

#[test]
fn the_probe_runs_with_an_empty_environment_in_the_root_directory() {
    let sb = Sandbox::new();
    let env_file = sb.root.join("env.txt");
    let pwd_file = sb.root.join("pwd.txt");
    let probe = sb.script(
        "probe",
        &format!(
            "/usr/bin/env > '{}'\npwd > '{}'\necho '{VALID}'",
            env_file.display(),
            pwd_file.display()
        ),
        0o755,
    );
    assert!(
        std::env::vars_os().count() > 0,
        "the test process has an environment to leak"
    );
    sb.runner().run(&probe).unwrap();
    let env = fs::read_to_string(&env_file).unwrap();
    // Only what /bin/sh itself sets may appear; nothing is inherited from the test process.
    for line in env.lines() {
        let name = line.split('=').next().unwrap_or_default();
        assert!(
            ["PWD", "OLDPWD", "SHLVL", "_"].contains(&name),
            "leaked variable {line}"
        );
    }
    assert_eq!(fs::read_to_string(&pwd_file).unwrap().trim(), "/");
}

fn probe_request(probe: &Path, extra: &[(&str, &str)]) -> CudaPreflightRequest {
    let mut options: std::collections::BTreeMap<String, String> = [
        ("probe_executable", probe.to_str().unwrap()),
        ("device_ordinal", "0"),
        ("sm", "sm_80"),
    ]
    .iter()
    .chain(extra)
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    options.retain(|_, v| !v.is_empty());
    CudaPreflightRequest {
        capability: "cuda-linux-x86_64".into(),
        options,
        domain: None,
    }
}

#[test]
fn preflight_through_a_probe_subprocess_enforces_the_driver_floor() {
    let sb = Sandbox::new();
    let report = |driver: u32| VALID.replace("12080", &driver.to_string());
    // (probe's driver version, min_driver_version option, expected code)
    let table: &[(u32, &str, ReasonCode)] = &[
        (11080, "", ReasonCode::DriverBelowFloor),
        (11999, "", ReasonCode::DriverBelowFloor),
        (12000, "", ReasonCode::Ready),
        (12040, "12050", ReasonCode::DriverBelowFloor),
        (12050, "12050", ReasonCode::Ready),
        (13000, "12050", ReasonCode::Ready),
        (12080, "11000", ReasonCode::DriverFloorBelowManifest),
    ];
    for (i, (driver, floor, expected)) in table.iter().enumerate() {
        let probe = sb.script(
            &format!("probe{i}"),
            &format!("echo '{}'", report(*driver)),
            0o755,
        );
        let provider = CudaDeviceProvider::with_probe_runner(sb.runner())
            .with_host_platform(HostPlatform::new("linux", "x86_64"));
        let out =
            provider.preflight_report(&probe_request(&probe, &[("min_driver_version", floor)]));
        assert_eq!(out.reason_code, *expected, "row {i}: {}", out.message);
        let json = serde_json::to_string(&out).unwrap();
        assert!(
            !json.contains(sb.root.to_str().unwrap()),
            "report leaks the probe path: {json}"
        );
        if *expected == ReasonCode::Ready {
            let obs = out.observations.unwrap();
            assert_eq!(obs.driver_version, *driver);
            assert_eq!(obs.probe, ProbeProvenance::Process);
            assert_eq!(obs.min_driver_version, floor.parse().unwrap_or(12000));
        }
    }
}

#[test]
fn preflight_without_a_probe_or_driver_is_a_clear_status_never_a_panic() {
    // The production provider on a machine where the configured probe does not exist.
    let provider =
        CudaDeviceProvider::new().with_host_platform(HostPlatform::new("linux", "x86_64"));
    let sb = Sandbox::new();
    let out = provider.preflight_report(&probe_request(&sb.root.join("missing-probe"), &[]));
    assert_eq!(out.reason_code, ReasonCode::ProbeMissing);
    assert_eq!(out.status.as_str(), "unavailable");
    assert!(out.message.contains("cargo build"), "{}", out.message);

    // A probe that reports no driver.
    let probe = sb.script(
        "probe",
        r#"echo '{"schema":"rextio-cuda-probe/1","status":"driver-missing","driver_version":null,"device_count":0,"devices":[],"error":null}'"#,
        0o755,
    );
    let provider = CudaDeviceProvider::with_probe_runner(sb.runner())
        .with_host_platform(HostPlatform::new("linux", "x86_64"));
    let out = provider.preflight_report(&probe_request(&probe, &[]));
    assert_eq!(out.reason_code, ReasonCode::DriverMissing);
    assert_eq!(out.status.as_str(), "unavailable");
}

/// The real probe binary of this crate, copied into the sandbox and run by the runner.
#[test]
fn the_real_probe_binary_prints_a_valid_report() {
    let sb = Sandbox::new();
    let probe = sb.root.join("rextio-cuda-probe");
    fs::copy(env!("CARGO_BIN_EXE_rextio-cuda-probe"), &probe).unwrap();
    chmod(&probe, 0o755);
    let report = sb
        .runner_with(ProbeLimits {
            timeout: Duration::from_secs(60),
            max_output_bytes: 64 * 1024,
        })
        .run(&probe)
        .unwrap();
    report.validate().unwrap();
    let any_candidate = rextio_device_cuda::loader::reviewed_candidates()
        .iter()
        .any(|c| fs::symlink_metadata(c).is_ok());
    if !any_candidate {
        assert_eq!(report.status, ProbeStatus::DriverMissing, "{report:?}");
        let provider = CudaDeviceProvider::with_probe_runner(sb.runner())
            .with_host_platform(HostPlatform::current());
        let capability = match std::env::consts::ARCH {
            "aarch64" => "cuda-linux-aarch64",
            _ => "cuda-linux-x86_64",
        };
        let mut req = probe_request(&probe, &[]);
        req.capability = capability.into();
        let out = provider.preflight_report(&req);
        if cfg!(target_os = "linux") {
            assert_eq!(
                out.reason_code,
                ReasonCode::DriverMissing,
                "{}",
                out.message
            );
        }
    }
}

#[test]
fn the_real_probe_binary_refuses_arguments() {
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_rextio-cuda-probe"))
        .arg("--help")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
}

//! Provider-level preflight with SYNTHETIC probe reports (no GPU in CI): selection, options,
//! requirements, driver/device checks, toolkit, mapping onto the plugin API, and redaction.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rextio_device_cuda::probe::{ProbeErrorDetail, ProbeStatus};
use rextio_device_cuda::requirements::{LIBTORCH_CONTRACT, TENSORFLOW_TFE_CONTRACT};
use rextio_device_cuda::{
    options_digest, CudaDeviceProvider, CudaPreflightRequest, DomainRequirements, HostPlatform,
    PreflightStatus, ProbeProvenance, ProbeReport, ReasonCode, RequirementCheck, SyntheticProbe,
    ToolkitVersion,
};
use rextio_plugin_api::{
    negotiate, DeviceProvider, PreflightRequest, PreflightResult, DEVICE_PROVIDER_API_VERSION,
};
use std::collections::{BTreeMap, BTreeSet};

const PROBE: &str = "/opt/secret-location/rextio-cuda-probe";

fn linux() -> HostPlatform {
    HostPlatform::new("linux", "x86_64")
}

fn a100() -> ProbeReport {
    ProbeReport::ok(
        12080,
        &[("NVIDIA A100-SXM4-80GB", 8, 0), ("NVIDIA H100", 9, 0)],
    )
}

fn provider(report: ProbeReport) -> CudaDeviceProvider {
    CudaDeviceProvider::with_probe_runner(SyntheticProbe::new(report)).with_host_platform(linux())
}

fn request(capability: &str, extra: &[(&str, &str)], remove: &[&str]) -> CudaPreflightRequest {
    let mut options: BTreeMap<String, String> = [
        ("probe_executable", PROBE),
        ("device_ordinal", "0"),
        ("sm", "sm_80"),
    ]
    .iter()
    .chain(extra)
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    for name in remove {
        options.remove(*name);
    }
    CudaPreflightRequest {
        capability: capability.to_owned(),
        options,
        domain: None,
    }
}

fn torch_domain() -> DomainRequirements {
    DomainRequirements {
        devices: vec![LIBTORCH_CONTRACT.device_requirement()],
        runtimes: LIBTORCH_CONTRACT.runtime_requirements(),
    }
}

fn status_report(status: ProbeStatus, error: Option<(&str, Option<i32>)>) -> ProbeReport {
    ProbeReport {
        error: error.map(|(entry_point, code)| ProbeErrorDetail {
            entry_point: entry_point.to_owned(),
            code,
        }),
        ..ProbeReport::with_status(status)
    }
}

struct Row {
    name: &'static str,
    report: ProbeReport,
    request: CudaPreflightRequest,
    host: HostPlatform,
    expected: ReasonCode,
}

fn row(
    name: &'static str,
    report: ProbeReport,
    request: CudaPreflightRequest,
    expected: ReasonCode,
) -> Row {
    Row {
        name,
        report,
        request,
        host: linux(),
        expected,
    }
}

fn toolkit_dir(cuda: &str, cudart: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("version.json"),
        format!(r#"{{"cuda":{{"version":"{cuda}"}},"cuda_cudart":{{"version":"{cudart}"}}}}"#),
    )
    .unwrap();
    dir
}

fn table(toolkits: &[tempfile::TempDir]) -> Vec<Row> {
    use ReasonCode as R;
    let raw = "cuda-linux-x86_64";
    let torch = "cuda-libtorch-linux-x86_64";
    let tfe = "cuda-tensorflow-tfe-linux-x86_64";
    let tk = |i: usize| toolkits[i].path().to_str().unwrap().to_owned();
    let with_domain = |mut r: CudaPreflightRequest, d: DomainRequirements| {
        r.domain = Some(d);
        r
    };
    let mut bad_pin = torch_domain();
    bad_pin.runtimes[1].version = "0.24.0".into();
    let mut two = torch_domain();
    two.devices.push(two.devices[0].clone());
    let mut wrong_runtime = torch_domain();
    wrong_runtime.devices[0].runtime = Some("tensorflow-tfe".into());
    let mut wrong_sm = torch_domain();
    wrong_sm.devices[0].architectures = vec!["sm_90".into()];
    let mut bad_json = a100();
    bad_json.device_count = 7;
    vec![
        row("ready raw", a100(), request(raw, &[], &[]), R::Ready),
        row(
            "ready torch",
            a100(),
            with_domain(request(torch, &[], &[]), torch_domain()),
            R::Ready,
        ),
        row("ready tfe", a100(), request(tfe, &[], &[]), R::Ready),
        row(
            "ready second device",
            a100(),
            request(raw, &[("device_ordinal", "1"), ("sm", "sm_90")], &[]),
            R::Ready,
        ),
        row(
            "ready toolkit",
            a100(),
            request(raw, &[("toolkit_root", &tk(0))], &[]),
            R::Ready,
        ),
        row(
            "no capability",
            a100(),
            request("", &[], &[]),
            R::MissingCapability,
        ),
        row(
            "unknown capability",
            a100(),
            request("cuda-macos-aarch64", &[], &[]),
            R::UnknownCapability,
        ),
        row(
            "windows on linux",
            a100(),
            request("cuda-windows-x86_64", &[], &[]),
            R::HostPlatformMismatch,
        ),
        row(
            "aarch64 on x86_64",
            a100(),
            request("cuda-linux-aarch64", &[], &[]),
            R::HostPlatformMismatch,
        ),
        Row {
            name: "libtorch lane on aarch64 host",
            host: HostPlatform::new("linux", "aarch64"),
            ..row(
                "",
                a100(),
                request(torch, &[], &[]),
                R::HostPlatformMismatch,
            )
        },
        row(
            "unknown option",
            a100(),
            request(raw, &[("probe_report", "/r.json")], &[]),
            R::UnknownOption,
        ),
        row(
            "missing probe option",
            a100(),
            request(raw, &[], &["probe_executable"]),
            R::MissingOption,
        ),
        row(
            "missing sm",
            a100(),
            request(tfe, &[], &["sm"]),
            R::MissingOption,
        ),
        row(
            "missing ordinal",
            a100(),
            request(raw, &[], &["device_ordinal"]),
            R::MissingOption,
        ),
        row(
            "bad ordinal",
            a100(),
            request(raw, &[("device_ordinal", "cuda:0")], &[]),
            R::InvalidDeviceOrdinal,
        ),
        row(
            "bad sm",
            a100(),
            request(raw, &[("sm", "ampere")], &[]),
            R::InvalidSm,
        ),
        row(
            "bad driver floor",
            a100(),
            request(raw, &[("min_driver_version", "12.4")], &[]),
            R::InvalidDriverFloor,
        ),
        row(
            "lowered driver floor",
            a100(),
            request(torch, &[("min_driver_version", "11080")], &[]),
            R::DriverFloorBelowManifest,
        ),
        row(
            "bad toolkit floor",
            a100(),
            request(raw, &[("min_toolkit_version", "twelve")], &[]),
            R::InvalidToolkitFloor,
        ),
        row(
            "lowered toolkit floor",
            a100(),
            request(raw, &[("min_toolkit_version", "11.8")], &[]),
            R::ToolkitFloorBelowManifest,
        ),
        row(
            "toolkit on torch lane",
            a100(),
            request(torch, &[("toolkit_root", &tk(0))], &[]),
            R::ToolkitOptionRejected,
        ),
        row(
            "relative toolkit",
            a100(),
            request(raw, &[("toolkit_root", "cuda")], &[]),
            R::ToolkitRootNotAbsolute,
        ),
        row(
            "no requirement",
            a100(),
            with_domain(request(torch, &[], &[]), DomainRequirements::default()),
            R::RequirementMissing,
        ),
        row(
            "two requirements",
            a100(),
            with_domain(request(torch, &[], &[]), two),
            R::RequirementAmbiguous,
        ),
        row(
            "wrong runtime",
            a100(),
            with_domain(request(torch, &[], &[]), wrong_runtime),
            R::RequirementMismatch,
        ),
        row(
            "wrong requirement sm",
            a100(),
            with_domain(request(torch, &[], &[]), wrong_sm),
            R::RequirementSmMismatch,
        ),
        row(
            "wrong pin",
            a100(),
            with_domain(request(torch, &[], &[]), bad_pin),
            R::RuntimePinMismatch,
        ),
        row(
            "torch facts on tfe lane",
            a100(),
            with_domain(
                request(tfe, &[], &[]),
                DomainRequirements {
                    devices: vec![TENSORFLOW_TFE_CONTRACT.device_requirement()],
                    runtimes: LIBTORCH_CONTRACT.runtime_requirements(),
                },
            ),
            R::RuntimePinMismatch,
        ),
        row(
            "relative probe",
            a100(),
            request(raw, &[("probe_executable", "rextio-cuda-probe")], &[]),
            R::ProbeNotAbsolute,
        ),
        row(
            "inconsistent synthetic report",
            bad_json,
            request(raw, &[], &[]),
            R::ProbeSchemaMismatch,
        ),
        row(
            "probe platform",
            status_report(ProbeStatus::PlatformUnsupported, None),
            request(raw, &[], &[]),
            R::ProbePlatformUnsupported,
        ),
        row(
            "driver missing",
            status_report(ProbeStatus::DriverMissing, None),
            request(raw, &[], &[]),
            R::DriverMissing,
        ),
        row(
            "driver untrusted",
            status_report(ProbeStatus::DriverUntrusted, None),
            request(raw, &[], &[]),
            R::DriverUntrusted,
        ),
        row(
            "driver load",
            status_report(ProbeStatus::DriverLoadFailed, None),
            request(raw, &[], &[]),
            R::DriverLoadFailed,
        ),
        row(
            "driver symbol",
            status_report(
                ProbeStatus::DriverSymbolMissing,
                Some(("cuDeviceGetName", None)),
            ),
            request(raw, &[], &[]),
            R::DriverSymbolMissing,
        ),
        row(
            "driver init",
            status_report(ProbeStatus::DriverInitFailed, Some(("cuInit", Some(999)))),
            request(raw, &[], &[]),
            R::DriverInitFailed,
        ),
        row(
            "driver query",
            status_report(
                ProbeStatus::DriverQueryFailed,
                Some(("cuDeviceGetCount", Some(3))),
            ),
            request(raw, &[], &[]),
            R::DriverQueryFailed,
        ),
        row(
            "old driver",
            ProbeReport::ok(11080, &[("NVIDIA A100", 8, 0)]),
            request(raw, &[], &[]),
            R::DriverBelowFloor,
        ),
        row(
            "raised floor",
            a100(),
            request(tfe, &[("min_driver_version", "12090")], &[]),
            R::DriverBelowFloor,
        ),
        row(
            "no device",
            ProbeReport::ok(12080, &[]),
            request(raw, &[], &[]),
            R::NoDevice,
        ),
        row(
            "ordinal out of range",
            a100(),
            request(raw, &[("device_ordinal", "2")], &[]),
            R::DeviceOrdinalOutOfRange,
        ),
        row(
            "sm mismatch",
            a100(),
            request(raw, &[("sm", "sm_86")], &[]),
            R::SmMismatch,
        ),
        row(
            "sm mismatch torch",
            a100(),
            request(torch, &[("device_ordinal", "1")], &[]),
            R::SmMismatch,
        ),
        row(
            "toolkit missing",
            a100(),
            request(raw, &[("toolkit_root", "/nonexistent/cuda-12.8")], &[]),
            R::ToolkitRootMissing,
        ),
        row(
            "toolkit unreadable",
            a100(),
            request(raw, &[("toolkit_root", &tk(1))], &[]),
            R::ToolkitVersionUnreadable,
        ),
        row(
            "toolkit inconsistent",
            a100(),
            request(raw, &[("toolkit_root", &tk(2))], &[]),
            R::ToolkitVersionInconsistent,
        ),
        row(
            "toolkit old",
            a100(),
            request(raw, &[("toolkit_root", &tk(3))], &[]),
            R::ToolkitBelowFloor,
        ),
        row(
            "toolkit below raised floor",
            a100(),
            request(
                raw,
                &[("toolkit_root", &tk(0)), ("min_toolkit_version", "12.9")],
                &[],
            ),
            R::ToolkitBelowFloor,
        ),
    ]
}

fn toolkits() -> Vec<tempfile::TempDir> {
    let unreadable = tempfile::tempdir().unwrap();
    vec![
        toolkit_dir("12.8.1", "12.8.90"),
        unreadable,
        toolkit_dir("12.8.1", "12.6.77"),
        toolkit_dir("11.8.0", "11.8.89"),
    ]
}

#[test]
fn preflight_reason_codes_table() {
    let toolkits = toolkits();
    for r in table(&toolkits) {
        let p = provider(r.report.clone()).with_host_platform(r.host.clone());
        let out = p.preflight_report(&r.request);
        assert_eq!(out.reason_code, r.expected, "{}: {}", r.name, out.message);
        assert_eq!(out.status, r.expected.status(), "{}", r.name);
        assert!(!out.message.is_empty(), "{}", r.name);
        assert_eq!(
            out.observations.is_some(),
            r.expected == ReasonCode::Ready,
            "{}",
            r.name
        );

        // The API mapping carries the same code; the status leads the message.
        match p.preflight(&r.request) {
            PreflightResult::Ready(auth) => {
                assert_eq!(r.expected, ReasonCode::Ready, "{}", r.name);
                assert_eq!(auth.provider, "rextio-device-cuda");
                assert_eq!(auth.capability, r.request.capability);
            }
            PreflightResult::Unavailable {
                reason_code,
                message,
            } => {
                assert_eq!(reason_code, r.expected.as_str(), "{}", r.name);
                assert!(
                    message.starts_with(&format!("{}: ", r.expected.status())),
                    "{message}"
                );
            }
        }

        // Published records never carry a path option's value and never claim support.
        let json = serde_json::to_value(&out).unwrap();
        let text = json.to_string();
        assert!(!text.contains("secret-location"), "{}: {text}", r.name);
        for dir in &toolkits {
            assert!(
                !text.contains(dir.path().to_str().unwrap()),
                "{}: {text}",
                r.name
            );
        }
        assert_eq!(json["support_claim"], false, "{}", r.name);
        if let Some(lock) = json.get("lock").filter(|l| !l.is_null()) {
            assert_eq!(lock["support_claim"], false);
            assert_eq!(lock["options_sha256"], options_digest(&r.request.options));
        }
    }
}

#[test]
fn every_reason_code_is_covered_by_a_preflight_table() {
    // Codes only a real subprocess can produce are covered in tests/probe_runner.rs.
    let subprocess_only: BTreeSet<ReasonCode> = [
        ReasonCode::ProbeMissing,
        ReasonCode::ProbeInspectFailed,
        ReasonCode::ProbeNotFile,
        ReasonCode::ProbeNotExecutable,
        ReasonCode::ProbeUntrustedPermissions,
        ReasonCode::ProbeUntrustedOwner,
        ReasonCode::ProbeSpawnFailed,
        ReasonCode::ProbeTimeout,
        ReasonCode::ProbeOutputTooLarge,
        ReasonCode::ProbeExitFailure,
        ReasonCode::ProbeInvalidJson,
    ]
    .into();
    let toolkits = toolkits();
    let covered: BTreeSet<ReasonCode> = table(&toolkits).iter().map(|r| r.expected).collect();
    for &code in ReasonCode::ALL {
        assert!(
            covered.contains(&code) != subprocess_only.contains(&code),
            "{code}: covered here = {}, listed as subprocess-only = {}",
            covered.contains(&code),
            subprocess_only.contains(&code)
        );
    }
}

#[test]
fn ready_observations_record_floors_lane_and_unverified_pins_but_no_paths() {
    let toolkits = toolkits();
    let raw = provider(a100()).preflight_report(&request(
        "cuda-linux-x86_64",
        &[
            ("toolkit_root", toolkits[0].path().to_str().unwrap()),
            ("min_driver_version", "12040"),
        ],
        &[],
    ));
    let obs = raw.observations.clone().unwrap();
    assert_eq!(obs.min_driver_version, 12040);
    assert_eq!(
        obs.min_toolkit_version,
        Some(ToolkitVersion {
            major: 12,
            minor: 0
        })
    );
    assert_eq!(
        obs.toolkit_version,
        Some(ToolkitVersion {
            major: 12,
            minor: 8
        })
    );
    assert_eq!(obs.driver_version, 12080);
    assert_eq!(obs.device_name, "NVIDIA A100-SXM4-80GB");
    assert_eq!(obs.probe, ProbeProvenance::Synthetic);
    assert_eq!(obs.domain_requirements, RequirementCheck::NotSupplied);
    assert!(obs.required_unverified_runtimes.is_empty());
    let json = serde_json::to_value(&obs).unwrap();
    assert_eq!(json["kernel_executed"], false);
    assert_eq!(json["certification_ready"], false);
    assert_eq!(json["sm"], "sm_80");

    let mut req = request("cuda-libtorch-linux-x86_64", &[], &[]);
    req.domain = Some(torch_domain());
    let torch = provider(a100()).preflight_report(&req);
    let obs = torch.observations.unwrap();
    assert_eq!(obs.domain_requirements, RequirementCheck::Checked);
    assert_eq!(
        obs.min_toolkit_version, None,
        "the libtorch lane inspects no toolkit"
    );
    let pins: Vec<(String, String)> = obs
        .required_unverified_runtimes
        .iter()
        .map(|r| (r.name.clone(), r.version.clone()))
        .collect();
    assert_eq!(
        pins,
        [
            ("libtorch".to_owned(), "2.13.0".to_owned()),
            ("tch".to_owned(), "0.26.0".to_owned())
        ]
    );

    let tfe =
        provider(a100()).preflight_report(&request("cuda-tensorflow-tfe-linux-x86_64", &[], &[]));
    let names: Vec<String> = tfe
        .observations
        .unwrap()
        .required_unverified_runtimes
        .into_iter()
        .map(|r| format!("{} {}", r.name, r.version))
        .collect();
    assert_eq!(names, ["tensorflow 2.21.0", "cpython 3.11"]);
}

#[test]
fn lock_record_depends_on_option_values_only_through_the_digest() {
    let p = provider(a100());
    let a = p
        .lock_record(&request("cuda-linux-x86_64", &[], &[]))
        .unwrap();
    let b = p
        .lock_record(&request(
            "cuda-linux-x86_64",
            &[("probe_executable", "/other/probe")],
            &[],
        ))
        .unwrap();
    assert_eq!(a.option_names, b.option_names);
    assert_ne!(a.options_sha256, b.options_sha256);
    let text = serde_json::to_string(&a).unwrap();
    assert!(
        !text.contains("secret-location") && !text.contains("sm_80"),
        "{text}"
    );
    let err = p
        .lock_record(&request("cuda-linux-x86_64", &[("bogus", "1")], &[]))
        .unwrap_err();
    assert_eq!(err.reason, ReasonCode::UnknownOption);
    assert!(a.domain_requirements.is_none(), "none was supplied");
}

#[test]
fn the_lock_record_names_the_checked_requirement_and_the_contribution() {
    let p = provider(a100());
    let torch = "cuda-libtorch-linux-x86_64";
    let req = CudaPreflightRequest {
        domain: Some(torch_domain()),
        ..request(torch, &[], &[])
    };
    let lock = p.lock_record(&req).unwrap();
    assert_eq!(lock.domain_requirements.as_ref(), Some(&torch_domain()));
    let contribution = lock.contribution.as_ref().unwrap();
    assert_eq!(contribution.capability, torch);
    let json = serde_json::to_value(&lock).unwrap();
    assert_eq!(
        json["domain_requirements"]["devices"][0]["runtime"],
        "libtorch"
    );
    assert_eq!(json["contribution"]["lane"], "libtorch-reuse");
    // The preflight report's lock is the same record.
    let report = p.preflight_report(&req);
    assert_eq!(report.reason_code, ReasonCode::Ready, "{}", report.message);
    assert_eq!(report.lock.as_ref(), Some(&lock));
    // A requirement the contract refuses has no lock record.
    let mut bad = req.clone();
    if let Some(d) = bad.domain.as_mut() {
        d.runtimes[1].version = "0.24.0".into();
    }
    let err = p.lock_record(&bad).unwrap_err();
    assert_eq!(err.reason, ReasonCode::RuntimePinMismatch);
}

#[test]
fn build_contribution_validates_the_selection_without_probing() {
    // A provider whose probe would fail still contributes for a valid selection: contributions
    // describe the build, preflight decides authorisation.
    let p = provider(status_report(ProbeStatus::DriverMissing, None));
    let raw = PreflightRequest {
        capability: "cuda-linux-x86_64".into(),
        options: request("cuda-linux-x86_64", &[], &[]).options,
        domain: None,
    };
    let c = p.build_contribution(&raw).unwrap();
    assert_eq!(c.dependencies.len(), 1);
    assert_eq!(c.dependencies[0].name, "rextio-device-cuda");
    let torch = PreflightRequest {
        capability: "cuda-libtorch-linux-x86_64".into(),
        ..raw.clone()
    };
    assert!(p
        .build_contribution(&torch)
        .unwrap()
        .dependencies
        .is_empty());
    let bad = PreflightRequest {
        capability: "cuda-rocm".into(),
        ..raw
    };
    let err = p.build_contribution(&bad).unwrap_err();
    assert_eq!(err.provider, "rextio-device-cuda");
    assert!(
        err.message.starts_with("[unknown-capability]"),
        "{}",
        err.message
    );
}

#[test]
fn the_provider_negotiates_device_provider_api_1_0_and_claims_nothing() {
    let p = CudaDeviceProvider::new();
    assert_eq!(p.id(), "rextio-device-cuda");
    negotiate(p.id(), p.api_version(), &DEVICE_PROVIDER_API_VERSION).unwrap();
    assert!(!p.manifest().support_claim);
    assert_eq!(p.manifest().capabilities.len(), 5);
}

#[test]
fn preflight_is_deterministic() {
    let toolkits = toolkits();
    for r in table(&toolkits) {
        let p = provider(r.report.clone()).with_host_platform(r.host.clone());
        assert_eq!(
            p.preflight_report(&r.request),
            p.preflight_report(&r.request),
            "{}",
            r.name
        );
    }
}

#[test]
fn statuses_mean_what_the_documentation_says() {
    let expectations = [
        (ReasonCode::DriverMissing, PreflightStatus::Unavailable),
        (ReasonCode::DriverUntrusted, PreflightStatus::Untrusted),
        (
            ReasonCode::UnknownOption,
            PreflightStatus::InvalidConfiguration,
        ),
        (
            ReasonCode::HostPlatformMismatch,
            PreflightStatus::Unsupported,
        ),
        (
            ReasonCode::ProbeSchemaMismatch,
            PreflightStatus::ProbeFailed,
        ),
        (ReasonCode::Ready, PreflightStatus::Ready),
    ];
    for (code, status) in expectations {
        assert_eq!(code.status(), status, "{code}");
    }
}

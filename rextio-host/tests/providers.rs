//! Device providers through the host: registration (negotiation and validation, errors that say
//! "provider"), the preflight of `[target]` in check.json/build.json, the lowering context, and
//! the gate that keeps functions needing an unauthorised capability on Python.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rextio_host::{Project, Registry};
use rextio_plugin_api::*;
use std::collections::BTreeMap;

/// A provider whose preflight answer is fixed by the test; it keeps the last request it saw.
struct Fake {
    id: &'static str,
    version: &'static str,
    manifest: ProviderManifest,
    ready: bool,
    seen: std::sync::Arc<std::sync::Mutex<Option<PreflightRequest>>>,
    /// Answer ready for a capability of this name instead of the one asked for.
    answer_for: Option<&'static str>,
    /// Fail `build_contribution`.
    contribution_fails: bool,
}

impl DeviceProvider for Fake {
    fn id(&self) -> &str {
        self.id
    }
    fn api_version(&self) -> &str {
        self.version
    }
    fn manifest(&self) -> &ProviderManifest {
        &self.manifest
    }
    fn preflight(&self, req: &PreflightRequest) -> PreflightResult {
        if let Ok(mut seen) = self.seen.lock() {
            *seen = Some(req.clone());
        }
        if self.ready && self.manifest.capabilities.contains(&req.capability) {
            PreflightResult::Ready(DeviceAuthorization {
                provider: self.id.into(),
                capability: self
                    .answer_for
                    .map_or(req.capability.clone(), str::to_owned),
            })
        } else {
            PreflightResult::Unavailable {
                reason_code: "gpu-missing".into(),
                message: "no device in this test".into(),
            }
        }
    }
    fn build_contribution(
        &self,
        _req: &PreflightRequest,
    ) -> Result<BuildContribution, ProviderError> {
        if self.contribution_fails {
            return Err(ProviderError {
                provider: self.id.into(),
                message: "no contribution in this test".into(),
            });
        }
        Ok(BuildContribution {
            env: BTreeMap::from([("FAKE_PROVIDER_ENV".to_owned(), "1".to_owned())]),
            dependencies: vec![],
        })
    }
    fn reason_status(&self, code: &str) -> Option<String> {
        (code == "gpu-missing").then(|| "unavailable-hardware".into())
    }
    fn lock_record(&self, req: &PreflightRequest) -> Option<serde_json::Value> {
        Some(
            serde_json::json!({"provider": self.id, "capability": req.capability, "options_digest": "sha256:test"}),
        )
    }
}

fn fake(id: &'static str, version: &'static str, caps: &[&str], ready: bool) -> Fake {
    Fake {
        id,
        version,
        manifest: ProviderManifest {
            id: id.into(),
            capabilities: caps.iter().map(|c| (*c).to_owned()).collect(),
            support_claim: false,
        },
        ready,
        seen: Default::default(),
        answer_for: None,
        contribution_fails: false,
    }
}

fn err(b: rextio_host::RegistryBuilder) -> String {
    b.build().err().expect("registration must fail").to_string()
}

#[test]
fn providers_negotiate_against_the_provider_api_and_errors_say_provider() {
    for v in ["1.0.0", "1.1.0", "1.2.0"] {
        assert!(Registry::builder()
            .provider(fake("p", v, &["c"], false))
            .build()
            .is_ok());
    }
    let e = err(Registry::builder().provider(fake("p", "1.3.0", &["c"], false)));
    assert!(
        e.contains("device provider") && e.contains("1.3.0") && e.contains("1.2.0"),
        "{e}"
    );
    for v in ["2.0.0", "", "1.x"] {
        let e = err(Registry::builder().provider(fake("p", v, &["c"], false)));
        assert!(e.starts_with("cannot register device provider"), "{e}");
    }
    let e = err(Registry::builder()
        .provider(fake("p", "1.0.0", &["c"], false))
        .provider(fake("p", "1.0.0", &["c"], false)));
    assert!(
        e.contains("two device providers") && e.contains("`p`"),
        "{e}"
    );
    let e = err(Registry::builder().provider(fake("p", "1.0.0", &[], false)));
    assert!(
        e.contains("device provider `p`") && e.contains("no capability"),
        "{e}"
    );
    let e = err(Registry::builder().provider(fake("p", "1.0.0", &["c", "c"], false)));
    assert!(e.contains("`c` twice"), "{e}");
    let mut wrong = fake("p", "1.0.0", &["c"], false);
    wrong.manifest.id = "q".into();
    let e = err(Registry::builder().provider(wrong));
    assert!(e.contains("manifest names the id `q`"), "{e}");
    let e = err(Registry::builder().provider(fake("P!", "1.0.0", &["c"], false)));
    assert!(e.contains("device provider `P!`"), "{e}");
    let reg = Registry::builder()
        .provider(fake("z", "1.0.0", &["c"], false))
        .provider(fake("a", "1.0.0", &["c"], false))
        .build()
        .unwrap();
    let ids: Vec<&str> = reg.providers().iter().map(|p| p.provider.id()).collect();
    assert_eq!(ids, vec!["a", "z"]);
}

#[test]
fn replace_provider_swaps_one_id_and_keeps_the_others() {
    let reg = Registry::builder()
        .provider(fake("a", "1.0.0", &["old"], false))
        .provider(fake("z", "1.0.0", &["c"], false))
        .replace_provider(fake("a", "1.1.0", &["new"], false))
        .build()
        .unwrap();
    let listed: Vec<(&str, &[String])> = reg
        .providers()
        .iter()
        .map(|p| {
            (
                p.provider.id(),
                p.provider.manifest().capabilities.as_slice(),
            )
        })
        .collect();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].0, "a");
    assert_eq!(listed[0].1, ["new".to_owned()]);
    assert_eq!(listed[1].0, "z");
    // Without a provider of that id it simply adds one.
    let reg = Registry::builder()
        .replace_provider(fake("b", "1.0.0", &["c"], false))
        .build()
        .unwrap();
    assert_eq!(reg.providers().len(), 1);
}

/// A plugin with a CPU type and a GPU type; functions using the GPU type need capability `gpu-x`
/// (stating `spec` as its device facts); it declares plugin API `version`.
struct Dev(
    Vec<RuleRecord>,
    Vec<PluginType>,
    &'static str,
    Option<DeviceSpec>,
);

impl Plugin for Dev {
    fn id(&self) -> &str {
        "dev"
    }
    fn api_version(&self) -> &str {
        self.2
    }
    fn coverage(&self) -> Coverage {
        Coverage {
            packages: vec!["devlib".into()],
            ..Coverage::default()
        }
    }
    fn rules(&self) -> &[RuleRecord] {
        &self.0
    }
    fn diagnostic_codes(&self) -> &[CodeDoc] {
        &[]
    }
    fn type_vocabulary(&self) -> &[PluginType] {
        &self.1
    }
    fn claim(&self, site: &ClaimSite) -> ClaimOutcome {
        match (site.target.as_str(), site.args.as_slice()) {
            ("devlib.twice", [a]) => match &a.ty {
                Some(t @ ValueType::Plugin(_)) => ClaimOutcome::Claimed {
                    rule_id: "dev/twice".into(),
                    result_type: t.clone(),
                },
                _ => ClaimOutcome::NotCovered,
            },
            _ => ClaimOutcome::NotCovered,
        }
    }
    fn lower(
        &self,
        site: &ClaimedSite,
        cx: &mut LoweringContext,
    ) -> Result<LoweredExpr, LowerError> {
        // The lowering sees the target and the authorisation; it encodes them in the code so
        // the test can read them back from the generated crate.
        let auth = cx
            .device_authorization
            .as_ref()
            .map_or("none".to_owned(), |a| {
                format!("{}:{}", a.provider, a.capability)
            });
        let expr = format!(
            "devrt::twice({}, {:?}, {:?})?",
            cx.args[0].expr, cx.target, auth
        );
        let _ = site;
        Ok(LoweredExpr {
            expr: expr.into(),
            uses: vec![],
        })
    }
    fn runtime_crate(&self) -> Option<CrateDependency> {
        None
    }
    fn device_requirements(&self, used: &[TypeKey]) -> Vec<DeviceRequirement> {
        used.iter()
            .filter(|k| k.as_str() == "dev/gpu")
            .map(|_| DeviceRequirement {
                capability: "gpu-x".into(),
                reason: "dev/gpu tensors live on the device".into(),
                device: self.3.clone(),
                runtimes: vec![RuntimePin::new("devrt", "1.0.0", &["gpu"])],
            })
            .collect()
    }
}

fn dev() -> Dev {
    let ty = |name: &str| PluginType {
        annotation: format!("devlib.{}", name.to_uppercase()),
        key: TypeKey::new(format!("dev/{name}")),
        rust_type: "i64".into(),
        extract_fn: "devrt::extract".into(),
        wrap_fn: "devrt::wrap".into(),
        description: name.into(),
    };
    Dev(
        vec![RuleRecord {
            id: "dev/twice".into(),
            scope: RuleScope::Call,
            pattern: "devlib.twice(t)".into(),
            constraint: String::new(),
            outcome: RuleOutcome::Native,
            diagnostic_code: None,
            guidance: String::new(),
            stability: Stability::Experimental,
            verified: false,
        }],
        vec![ty("cpu"), ty("gpu")],
        "1.7.0",
        None,
    )
}

const SRC: &str = "import devlib\n\n\ndef on_cpu(x: devlib.CPU) -> devlib.CPU:\n    return devlib.twice(x)\n\n\ndef on_gpu(x: devlib.GPU) -> devlib.GPU:\n    return devlib.twice(x)\n";

fn project(target: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("rextio.toml"),
        format!("[plugins]\nenabled = [\"dev\"]\n{target}"),
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/m.py"), SRC).unwrap();
    dir
}

const TARGET: &str = "[target]\ndevice_provider = \"fake\"\ndevice_capability = \"gpu-x\"\n[target.device_options]\nsecret_path = \"/opt/secret\"\n";

#[test]
fn an_unavailable_target_is_reported_and_keeps_device_functions_on_python() {
    let reg = Registry::builder()
        .plugin(dev())
        .provider(fake("fake", "1.1.0", &["gpu-x"], false))
        .build()
        .unwrap();
    let dir = project(TARGET);
    let out = Project::open(dir.path()).unwrap().check(&reg).unwrap();
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(".rextio/reports/check.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["target"]["provider"], "fake");
    assert_eq!(json["target"]["capability"], "gpu-x");
    assert_eq!(json["target"]["ready"], false);
    assert_eq!(json["target"]["status"], "unavailable-hardware");
    assert_eq!(json["target"]["reason_code"], "gpu-missing");
    assert!(
        json["target"].get("lock").is_none(),
        "the lock is build.json's"
    );
    let routes = out.report.routes();
    assert_eq!(routes[0], ("m.on_cpu".into(), "native-plugin:dev".into()));
    assert_eq!(routes[1], ("m.on_gpu".into(), "fallback-python".into()));
    let d = &out.report.modules[0].functions[1].diagnostics[0];
    assert_eq!(d.code, "RXT019");
    assert!(
        d.message.contains("gpu-x")
            && d.message.contains("gpu-missing")
            && d.message.contains("unavailable-hardware"),
        "{}",
        d.message
    );
    let text = rextio_host::report::render_text(&out.report, &out.modules);
    assert!(
        text.starts_with("target gpu-x via fake: unavailable-hardware [gpu-missing]"),
        "{text}"
    );
}

#[test]
fn without_a_target_device_functions_stay_on_python() {
    let reg = Registry::builder().plugin(dev()).build().unwrap();
    let dir = project("");
    let out = Project::open(dir.path()).unwrap().check(&reg).unwrap();
    assert!(out.report.target.is_none());
    let f = &out.report.modules[0].functions[1];
    assert_eq!(f.route, "fallback-python");
    assert!(
        f.diagnostics[0].message.contains("no [target]"),
        "{:?}",
        f.diagnostics
    );
}

#[test]
fn a_ready_target_authorises_lowering_and_the_context_carries_it() {
    let reg = Registry::builder()
        .plugin(dev())
        .provider(fake("fake", "1.1.0", &["gpu-x"], true))
        .build()
        .unwrap();
    let dir = project(TARGET);
    let g = Project::open(dir.path()).unwrap().generate(&reg).unwrap();
    assert_eq!(
        g.check.report.routes(),
        vec![
            ("m.on_cpu".to_owned(), "native-plugin:dev".to_owned()),
            ("m.on_gpu".to_owned(), "native-plugin:dev".to_owned()),
        ]
    );
    let t = g.check.report.target.as_ref().unwrap();
    assert!(t.ready && t.status == "ready" && t.reason_code.is_none());
    let lib = g.crate_.unwrap().lib_rs;
    assert!(lib.contains(r#""gpu-x", "fake:gpu-x""#), "{lib}");

    // A provider authorising another capability does not authorise this one.
    let other = Registry::builder()
        .plugin(dev())
        .provider(fake("fake", "1.1.0", &["gpu-y"], true))
        .build()
        .unwrap();
    let dir = project(&TARGET.replace("gpu-x", "gpu-y"));
    let out = Project::open(dir.path()).unwrap().check(&other).unwrap();
    let f = &out.report.modules[0].functions[1];
    assert_eq!(f.route, "fallback-python");
    assert!(
        f.diagnostics[0].message.contains("authorises `gpu-y`"),
        "{:?}",
        f.diagnostics
    );
}

#[test]
fn providers_written_for_api_1_0_are_not_asked_for_details() {
    let reg = Registry::builder()
        .plugin(dev())
        .provider(fake("fake", "1.0.0", &["gpu-x"], false))
        .build()
        .unwrap();
    let dir = project(TARGET);
    let out = Project::open(dir.path()).unwrap().check(&reg).unwrap();
    let t = out.report.target.unwrap();
    assert_eq!(t.status, "unavailable");
    assert_eq!(t.reason_code.as_deref(), Some("gpu-missing"));
}

fn cuda_check(probe: &str) -> rextio_host::report::TargetReport {
    let reg = Registry::builder().with_default_plugins().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("rextio.toml"),
        format!("[plugins]\nenabled = [\"rextio-torch\"]\n[target]\ndevice_provider = \"rextio-device-cuda\"\ndevice_capability = \"cuda-libtorch-linux-x86_64\"\n[target.device_options]\nprobe_executable = \"{probe}\"\ndevice_ordinal = \"0\"\nsm = \"sm_90\"\n"),
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/m.py"),
        "from rextio_torch.types import TensorF32Cuda0_2D\n\n\ndef f(x: TensorF32Cuda0_2D, w: TensorF32Cuda0_2D) -> TensorF32Cuda0_2D:\n    return x @ w\n",
    )
    .unwrap();
    let out = Project::open(dir.path()).unwrap().check(&reg).unwrap();
    let t = out.report.target.unwrap();
    assert_eq!(t.provider, "rextio-device-cuda");
    // The CUDA function's requirement reached the provider, which checked it before the probe.
    let stated = t
        .requirements
        .as_ref()
        .expect("the host states the requirement");
    assert_eq!(stated.devices.len(), 1);
    assert!(
        !serde_json::to_string(&t).unwrap().contains(probe),
        "option values are not echoed: {t:?}"
    );
    t
}

#[test]
fn the_cuda_provider_reports_a_missing_probe() {
    let t = cuda_check("/nonexistent/rextio-cuda-probe");
    assert!(!t.ready);
    assert_eq!(t.reason_code.as_deref(), Some("probe-missing"), "{t:?}");
    assert_eq!(t.status, "unavailable");
}

/// Whether `dir` and every ancestor are neither group- nor world-writable and are owned by root
/// or by `uid`: the places the provider's trust rule lets a probe run from, judged here on the
/// file modes alone (not through the provider's code).
fn trusted_dir(dir: &std::path::Path, uid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    dir.ancestors().all(|d| {
        std::fs::metadata(d)
            .map(|m| m.mode() & 0o022 == 0 && (m.uid() == 0 || m.uid() == uid))
            .unwrap_or(false)
    })
}

/// The real probe, built from this workspace, run by the real provider: this machine has no
/// CUDA driver, so the preflight must say so with its reason code (on a GPU host it is ready).
/// The probe runs from where the provider trusts it: the build directory when that is trusted,
/// else a private copy under the home directory; a checkout under a world-writable directory
/// such as `/tmp` with no trusted home gets the refusal its location implies.
#[test]
fn the_cuda_provider_runs_the_real_probe() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = root.join("target").join("probe-for-tests");
    let status = std::process::Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "-p",
            "rextio-device-cuda",
            "--bin",
            "rextio-cuda-probe",
        ])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(status.success());
    let built = std::fs::canonicalize(target.join("debug").join("rextio-cuda-probe")).unwrap();
    // This process's uid, as the owner of a file it creates.
    let mine = tempfile::NamedTempFile::new_in(&target).unwrap();
    let uid = mine.as_file().metadata().unwrap().uid();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let private = home
        .filter(|h| h.is_absolute() && trusted_dir(h, uid))
        .and_then(|h| {
            tempfile::Builder::new()
                .prefix(".rextio-probe-test-")
                .tempdir_in(h)
                .ok()
        });
    let (probe, _keep) = if trusted_dir(built.parent().unwrap(), uid) {
        (built, None)
    } else if let Some(dir) = private {
        let copy = dir.path().join("rextio-cuda-probe");
        std::fs::copy(&built, &copy).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
        (std::fs::canonicalize(copy).unwrap(), Some(dir))
    } else {
        let t = cuda_check(built.to_str().unwrap());
        assert!(!t.ready);
        assert_eq!(
            t.reason_code.as_deref(),
            Some("probe-untrusted-permissions"),
            "{t:?}"
        );
        return;
    };
    assert!(trusted_dir(probe.parent().unwrap(), uid));
    let t = cuda_check(probe.to_str().unwrap());
    let driver = [
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "/usr/lib64/libcuda.so.1",
    ]
    .iter()
    .any(|p| std::path::Path::new(p).exists());
    if driver {
        assert!(t.ready || t.reason_code.is_some(), "{t:?}");
    } else {
        assert!(!t.ready);
        assert_eq!(t.reason_code.as_deref(), Some("driver-missing"), "{t:?}");
    }
}

#[test]
fn the_host_states_the_requirements_to_providers_that_take_them() {
    let spec = DeviceSpec {
        logical_device: "gpu:0".into(),
        backend: "x".into(),
        features: vec!["inference".into()],
        ..DeviceSpec::default()
    };
    let asked = |plugin: Dev, provider: &'static str| {
        let fake = fake("fake", provider, &["gpu-x"], true);
        let seen = fake.seen.clone();
        let reg = Registry::builder()
            .plugin(plugin)
            .provider(fake)
            .build()
            .unwrap();
        let dir = project(TARGET);
        let out = Project::open(dir.path()).unwrap().check(&reg).unwrap();
        let request = seen.lock().unwrap().clone().unwrap();
        assert_eq!(out.report.target.unwrap().requirements, request.domain);
        request.domain
    };
    let stating = || {
        let mut d = dev();
        d.2 = "1.13.0";
        d.3 = Some(spec.clone());
        d
    };
    let domain = asked(stating(), "1.2.0").expect("a 1.13 plugin and a 1.2 provider");
    assert_eq!(domain.devices, std::slice::from_ref(&spec));
    assert_eq!(
        domain.runtimes,
        [RuntimePin::new("devrt", "1.0.0", &["gpu"])]
    );
    // A provider written for API 1.1 is not given them; a plugin older than 1.13 states none.
    assert_eq!(asked(stating(), "1.1.0"), None);
    assert_eq!(asked(dev(), "1.2.0"), None);
    // Two functions with the same requirement state it once; none requiring it states nothing.
    let dir = project(TARGET);
    std::fs::write(
        dir.path().join("src/m.py"),
        format!("{SRC}\n\ndef again(x: devlib.GPU) -> devlib.GPU:\n    return devlib.twice(x)\n"),
    )
    .unwrap();
    let reg = Registry::builder()
        .plugin(stating())
        .provider(fake("fake", "1.2.0", &["gpu-x"], true))
        .build()
        .unwrap();
    let analyses = Project::open(dir.path())
        .unwrap()
        .check(&reg)
        .unwrap()
        .analyses;
    let once = rextio_host::target::domain_requirements(&analyses, &reg, "gpu-x").unwrap();
    assert_eq!(once.devices.len(), 1);
    assert_eq!(once.runtimes.len(), 1);
    let other = rextio_host::target::domain_requirements(&analyses, &reg, "gpu-y").unwrap();
    assert_eq!(other, DomainRequirements::default());
}

#[test]
fn a_ready_targets_contribution_reaches_the_generated_crate() {
    let reg = Registry::builder()
        .plugin(dev())
        .provider(fake("fake", "1.2.0", &["gpu-x"], true))
        .build()
        .unwrap();
    let dir = project(TARGET);
    let g = Project::open(dir.path()).unwrap().generate(&reg).unwrap();
    assert_eq!(
        g.provider_env,
        [("FAKE_PROVIDER_ENV".to_owned(), "1".to_owned())]
    );
    let stamp: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(g.crate_dir.join(rextio_host::project::TARGET_STAMP)).unwrap(),
    )
    .unwrap();
    assert_eq!(stamp["provider"], "fake");
    assert_eq!(stamp["contribution"]["env"][0], "FAKE_PROVIDER_ENV");
    assert_eq!(stamp["lock"]["options_digest"], "sha256:test");
    // Not ready: no contribution, no record.
    let reg = Registry::builder()
        .plugin(dev())
        .provider(fake("fake", "1.2.0", &["gpu-x"], false))
        .build()
        .unwrap();
    let g = Project::open(dir.path()).unwrap().generate(&reg).unwrap();
    assert!(g.provider_env.is_empty());
    assert!(!g
        .crate_dir
        .join(rextio_host::project::TARGET_STAMP)
        .exists());
}

#[test]
fn a_ready_answer_the_host_cannot_take_authorises_nothing() {
    let refused = |provider: Fake, code: &str, why: &str| {
        let reg = Registry::builder()
            .plugin(dev())
            .provider(provider)
            .build()
            .unwrap();
        let dir = project(TARGET);
        let out = Project::open(dir.path()).unwrap().check(&reg).unwrap();
        let t = out.report.target.as_ref().unwrap();
        assert!(!t.ready && t.status == "unavailable", "{t:?}");
        assert_eq!(t.reason_code.as_deref(), Some(code));
        assert!(t.message.as_deref().unwrap_or("").contains(why), "{t:?}");
        let f = &out.report.modules[0].functions[1];
        assert_eq!(f.route, "fallback-python");
        assert!(
            f.diagnostics[0].message.contains(code),
            "{:?}",
            f.diagnostics
        );
    };
    let mut other = fake("fake", "1.2.0", &["gpu-x"], true);
    other.answer_for = Some("gpu-z");
    refused(other, "authorisation-mismatch", "`gpu-z`");
    let mut failing = fake("fake", "1.2.0", &["gpu-x"], true);
    failing.contribution_fails = true;
    refused(
        failing,
        "build-contribution-failed",
        "no contribution in this test",
    );
}

//! The CUDA lanes end to end, build-only, with the REAL `rextio-device-cuda` provider fed a
//! SYNTHETIC probe report. No GPU exists here or in CI: the synthetic report is the sanctioned
//! stand-in for the driver inventory (the probe process is the only part replaced; selection,
//! option validation, driver floor, device and SM checks are the provider's real code). Nothing
//! generated is ever loaded or executed; the crates are compiled with real cargo against the
//! venv's CUDA-enabled torch wheel (libtorch) and the TFE-binding runtime.
//!
//! Asserted for each lane (rextio-torch's CUDA lane on `cuda-libtorch-linux-x86_64`,
//! rextio-tensorflow's CUDA lane on `cuda-tensorflow-tfe-linux-x86_64`):
//! - with `[target]` authorising the capability: preflight ready, the slice's functions native
//!   with the CUDA rules, the generated crate compiles (`strict`, so a compile error fails);
//! - without `[target]`, with another capability, or with a provider that is not ready: the
//!   same functions stay on Python with RXT019 naming the capability and reason;
//! - forms outside the slice stay on Python with the plugin's CUDA code;
//! - a CPU project never claims a CUDA rule, with or without a CUDA target.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rextio_device_cuda::probe::ProbeStatus;
use rextio_device_cuda::{CudaDeviceProvider, ProbeReport, SyntheticProbe};
use rextio_host::report::{CheckReport, FunctionReport};
use rextio_host::{BuildOptions, Project, Registry};
use rextio_plugin_api::*;
use std::path::Path;

const TORCH_CAPABILITY: &str = "cuda-libtorch-linux-x86_64";
const TF_CAPABILITY: &str = "cuda-tensorflow-tfe-linux-x86_64";

/// A synthetic inventory: driver 12.8, one sm_90 device at ordinal 0.
fn synthetic_h100() -> ProbeReport {
    ProbeReport::ok(12080, &[("NVIDIA H100 80GB HBM3 (synthetic)", 9, 0)])
}

/// The first-party plugins, with the default CUDA provider replaced by the real provider whose
/// probe run is answered by `report`.
fn registry_with_synthetic_probe(report: ProbeReport) -> Registry {
    Registry::builder()
        .with_default_plugins()
        .replace_provider(CudaDeviceProvider::with_probe_runner(SyntheticProbe::new(
            report,
        )))
        .build()
        .unwrap()
}

fn target(capability: &str) -> String {
    format!(
        "[target]\ndevice_provider = \"rextio-device-cuda\"\ndevice_capability = \"{capability}\"\n\
         [target.device_options]\nprobe_executable = \"/opt/synthetic/rextio-cuda-probe\"\n\
         device_ordinal = \"0\"\nsm = \"sm_90\"\n"
    )
}

const TORCH_SRC: &str = r#"from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Cuda0_1D, TensorF32Cuda0_2D


def head(x: TensorF32Cuda0_2D, w: TensorF32Cuda0_2D, b: TensorF32Cuda0_1D) -> TensorF32Cuda0_1D:
    h = x @ w
    h = h + b
    h = h.relu()
    return h.mean(dim=1)


def nested(x: TensorF32Cuda0_2D, w: TensorF32Cuda0_2D, b: TensorF32Cuda0_1D) -> TensorF32Cuda0_1D:
    return (x @ w + b).relu().mean(dim=1)


def reverse_add(x: TensorF32Cuda0_2D, b: TensorF32Cuda0_1D) -> TensorF32Cuda0_2D:
    return b + x


def mixed(x: TensorF32Cuda0_2D, w: TensorF32Cpu2D) -> TensorF32Cuda0_2D:
    return x @ w


def cpu_head(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    h = x @ w
    h = h + b
    h = h.relu()
    return h.mean(dim=1)
"#;

const TF_SRC: &str = r#"import tensorflow as tf
from rextio_tensorflow.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorF32Gpu0_1D, TensorF32Gpu0_2D


def head(x: TensorF32Gpu0_2D, w: TensorF32Gpu0_2D, b: TensorF32Gpu0_1D) -> TensorF32Gpu0_1D:
    h = tf.matmul(x, w)
    h = tf.nn.bias_add(h, b)
    h = tf.nn.relu(h)
    return tf.reduce_mean(h, axis=1)


def other_spelling(x: TensorF32Gpu0_2D, w: TensorF32Gpu0_2D) -> TensorF32Gpu0_2D:
    return tf.linalg.matmul(x, w)


def mixed(x: TensorF32Gpu0_2D, w: TensorF32Cpu2D) -> TensorF32Gpu0_2D:
    return tf.matmul(x, w)


def cpu_head(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    h = tf.matmul(x, w)
    h = tf.nn.bias_add(h, b)
    h = tf.nn.relu(h)
    return tf.reduce_mean(h, axis=1)
"#;

/// The torch lanes project with a `[target]` for the libtorch capability.
fn torch_cuda_project() -> tempfile::TempDir {
    project(
        "rextio-torch",
        "cudatorch",
        TORCH_SRC,
        Some(&target(TORCH_CAPABILITY)),
    )
}

/// A project in a temporary directory: `src/<package>/lanes.py` and a rextio.toml with the
/// plugin enabled and the optional `[target]`.
fn project(plugin: &str, package: &str, source: &str, target: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let toml = format!(
        "[project]\nname = \"{package}\"\n\n[plugins]\nenabled = [\"{plugin}\"]\n\n{}",
        target.unwrap_or("")
    );
    std::fs::write(dir.path().join("rextio.toml"), toml).unwrap();
    let pkg = dir.path().join("src").join(package);
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    std::fs::write(pkg.join("lanes.py"), source).unwrap();
    dir
}

fn function<'r>(report: &'r CheckReport, qualname: &str) -> &'r FunctionReport {
    report
        .modules
        .iter()
        .flat_map(|m| &m.functions)
        .find(|f| f.qualname == qualname)
        .unwrap_or_else(|| panic!("no function {qualname}"))
}

fn rules(f: &FunctionReport) -> Vec<&str> {
    f.plugin_claims.iter().map(|c| c.rule_id.as_str()).collect()
}

fn codes(f: &FunctionReport) -> Vec<&str> {
    f.diagnostics.iter().map(|d| d.code.as_str()).collect()
}

fn check(dir: &Path, registry: &Registry) -> CheckReport {
    Project::open(dir).unwrap().check(registry).unwrap().report
}

/// Build for real (strict: generated Rust that does not compile fails the test); the extension
/// is produced but never imported.
fn build_strict(dir: &Path, registry: &Registry) -> rextio_host::BuildOutput {
    let options = BuildOptions {
        python: Some(rextio_tests::python()),
        strict: true,
        ..BuildOptions::default()
    };
    Project::open(dir)
        .unwrap()
        .build(registry, &options)
        .unwrap_or_else(|e| panic!("building the CUDA project failed: {e}"))
}

fn generated_lib(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(".rextio/build/crate/src/lib.rs")).unwrap()
}

/// The generated crate of a lane must not move data between host and device.
fn assert_no_transfers(lib: &str) {
    for transfer in [
        ".to_device(",
        ".cuda(",
        ".to(",
        "Device::Cpu",
        "TensorHandleResolve",
        "CopyToDevice",
    ] {
        assert!(
            !lib.contains(transfer),
            "generated crate contains `{transfer}`"
        );
    }
}

/// The generated crate carries the target provider's contribution and links no CUDA library of
/// its own: `Cargo.toml` names exactly `contributed` beyond the plugins' crates, no crate or
/// source asks the linker for a CUDA library or opens the driver, and the crate's target record
/// names the checked requirement, the lane and its resources.
fn assert_carries_contribution(dir: &Path, capability: &str, lane: &str, contributed: &[&str]) {
    let crate_dir = dir.join(".rextio/build/crate");
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap()).unwrap();
    let deps = manifest["dependencies"].as_table().unwrap();
    for name in contributed {
        assert!(
            deps.contains_key(*name),
            "Cargo.toml lacks `{name}`: {deps:?}"
        );
    }
    for name in deps.keys() {
        assert!(
            !name.contains("cuda") || contributed.contains(&name.as_str()),
            "Cargo.toml names `{name}`"
        );
    }
    assert!(!manifest.contains_key("build-dependencies") && !crate_dir.join("build.rs").exists());
    let package = manifest["package"].as_table().unwrap();
    assert!(!package.contains_key("links") && !package.contains_key("build"));
    let lib = generated_lib(dir);
    for needle in ["#[link", "libcuda", "dlopen", "cuInit", "rustc-link-lib"] {
        assert!(!lib.contains(needle), "generated crate contains `{needle}`");
    }
    let stamp: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(crate_dir.join(rextio_host::project::TARGET_STAMP)).unwrap(),
    )
    .unwrap();
    assert_eq!(stamp["provider"], "rextio-device-cuda");
    assert_eq!(stamp["capability"], capability);
    assert_eq!(stamp["lock"]["contribution"]["lane"], lane);
    assert_eq!(stamp["lock"]["support_claim"], false);
    assert_eq!(stamp["requirements"], stamp["lock"]["domain_requirements"]);
    assert_eq!(
        stamp["requirements"]["devices"].as_array().unwrap().len(),
        1
    );
    let listed: Vec<&str> = stamp["contribution"]["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d.as_str())
        .collect();
    assert_eq!(listed, contributed);
}

fn assert_kept_on_python_with_rxt019(report: &CheckReport, qualname: &str, why: &str) {
    let f = function(report, qualname);
    assert_eq!(f.route.label(), "fallback-python", "{qualname}");
    let d = f
        .diagnostics
        .iter()
        .find(|d| d.code == "RXT019")
        .unwrap_or_else(|| panic!("{qualname}: no RXT019 in {:?}", codes(f)));
    assert!(d.message.contains(why), "{}", d.message);
}

#[test]
fn torch_cuda_slice_with_synthetic_probe_is_native_and_its_crate_compiles() {
    let registry = registry_with_synthetic_probe(synthetic_h100());
    let dir = torch_cuda_project();
    let out = build_strict(dir.path(), &registry);
    let report = &out.check.report;
    let t = report.target.as_ref().unwrap();
    assert!(t.ready, "{t:?}");
    assert_eq!(
        (t.status.as_str(), t.capability.as_str()),
        ("ready", TORCH_CAPABILITY)
    );
    assert_eq!(
        out.report.cargo.status,
        rextio_host::report::CargoStatus::Ok
    );
    assert!(out.extension.as_ref().is_some_and(|p| p.exists()));
    for name in ["head", "nested"] {
        let f = function(report, &format!("cudatorch.lanes.{name}"));
        assert_eq!(f.route.label(), "native-plugin:rextio-torch", "{name}");
        let mut got = rules(f);
        got.sort_unstable();
        got.dedup();
        let mut want = rextio_torch::rules::CUDA_RULES.to_vec();
        want.sort_unstable();
        assert_eq!(got, want, "{name}");
    }
    // Outside the slice: stays on Python with the plugin's CUDA codes.
    let f = function(report, "cudatorch.lanes.reverse_add");
    assert_eq!(f.route.label(), "fallback-python");
    assert!(codes(f).contains(&"RXTP-TORCH-027"), "{:?}", codes(f));
    let f = function(report, "cudatorch.lanes.mixed");
    assert_eq!(f.route.label(), "fallback-python");
    assert!(codes(f).contains(&"RXTP-TORCH-028"), "{:?}", codes(f));
    // The CPU function of the same project claims CPU rules only.
    let f = function(report, "cudatorch.lanes.cpu_head");
    assert_eq!(f.route.label(), "native-plugin:rextio-torch");
    assert!(
        rules(f).iter().all(|r| !r.contains("cuda")),
        "{:?}",
        rules(f)
    );
    let lib = generated_lib(dir.path());
    for needle in [
        "extract_f32_cuda0_2d",
        "extract_f32_cuda0_1d",
        "wrap_cuda0",
        "cuda0_matmul_2d",
        "cuda0_add_bias_2d_1d",
        "cuda0_relu_2d",
        "cuda0_mean_dim1_2d",
        "FunctionGuard::enter",
    ] {
        assert!(lib.contains(needle), "generated crate lacks `{needle}`");
    }
    assert_no_transfers(&lib);
    assert_carries_contribution(dir.path(), TORCH_CAPABILITY, "libtorch-reuse", &[]);
    let requirements = t.requirements.as_ref().unwrap();
    assert_eq!(requirements.devices[0].runtime.as_deref(), Some("libtorch"));
    let lock = out.report.target.as_ref().unwrap().lock.as_ref().unwrap();
    assert_eq!(
        lock["domain_requirements"],
        serde_json::to_value(requirements).unwrap()
    );
}

#[test]
fn torch_cuda_slice_without_the_exact_authorisation_stays_on_python_with_rxt019() {
    let ready = registry_with_synthetic_probe(synthetic_h100());
    // No [target]: a CPU project.
    let dir = project("rextio-torch", "cudatorch", TORCH_SRC, None);
    let report = check(dir.path(), &ready);
    assert!(report.target.is_none());
    for name in ["head", "nested"] {
        assert_kept_on_python_with_rxt019(
            &report,
            &format!("cudatorch.lanes.{name}"),
            "no [target]",
        );
    }
    let f = function(&report, "cudatorch.lanes.cpu_head");
    assert_eq!(f.route.label(), "native-plugin:rextio-torch");
    // A target that authorises another capability (ready, but not this one).
    let dir = project(
        "rextio-torch",
        "cudatorch",
        TORCH_SRC,
        Some(&target(TF_CAPABILITY)),
    );
    let report = check(dir.path(), &ready);
    // No function requires that capability, so the provider has nothing to authorise.
    let t = report.target.as_ref().unwrap();
    assert!(!t.ready);
    assert_eq!(t.reason_code.as_deref(), Some("requirement-missing"));
    assert_eq!(t.requirements.as_ref().map(|r| r.devices.len()), Some(0));
    assert_kept_on_python_with_rxt019(&report, "cudatorch.lanes.head", TORCH_CAPABILITY);
    assert_kept_on_python_with_rxt019(&report, "cudatorch.lanes.head", "not this capability");
    // The right capability, but the (synthetic) machine has no driver: not ready.
    let no_driver =
        registry_with_synthetic_probe(ProbeReport::with_status(ProbeStatus::DriverMissing));
    let dir = torch_cuda_project();
    let report = check(dir.path(), &no_driver);
    let t = report.target.as_ref().unwrap();
    assert!(!t.ready);
    assert_eq!(t.reason_code.as_deref(), Some("driver-missing"));
    assert_kept_on_python_with_rxt019(&report, "cudatorch.lanes.head", "driver-missing");
    // An SM that does not match the (synthetic) device: not ready either.
    let dir = project(
        "rextio-torch",
        "cudatorch",
        TORCH_SRC,
        Some(&target(TORCH_CAPABILITY).replace("sm_90", "sm_80")),
    );
    let report = check(dir.path(), &ready);
    assert_eq!(
        report.target.as_ref().unwrap().reason_code.as_deref(),
        Some("sm-mismatch")
    );
    assert_kept_on_python_with_rxt019(&report, "cudatorch.lanes.head", "sm-mismatch");
}

#[test]
fn tensorflow_cuda_lane_with_synthetic_probe_is_native_and_its_crate_compiles() {
    let registry = registry_with_synthetic_probe(synthetic_h100());
    let dir = project(
        "rextio-tensorflow",
        "cudatf",
        TF_SRC,
        Some(&target(TF_CAPABILITY)),
    );
    let out = build_strict(dir.path(), &registry);
    let report = &out.check.report;
    let t = report.target.as_ref().unwrap();
    assert!(t.ready, "{t:?}");
    assert_eq!(t.capability, TF_CAPABILITY);
    assert_eq!(
        out.report.cargo.status,
        rextio_host::report::CargoStatus::Ok
    );
    assert!(out.extension.as_ref().is_some_and(|p| p.exists()));
    let f = function(report, "cudatf.lanes.head");
    assert_eq!(f.route.label(), "native-plugin:rextio-tensorflow");
    assert_eq!(rules(f), rextio_tensorflow::rules::CUDA_RULES.to_vec());
    let f = function(report, "cudatf.lanes.other_spelling");
    assert_eq!(f.route.label(), "fallback-python");
    assert!(codes(f).contains(&"RXTP-TENSORFLOW-040"), "{:?}", codes(f));
    let f = function(report, "cudatf.lanes.mixed");
    assert!(codes(f).contains(&"RXTP-TENSORFLOW-041"), "{:?}", codes(f));
    // The CPU lane lowers unchanged under the CUDA target.
    let f = function(report, "cudatf.lanes.cpu_head");
    assert_eq!(f.route.label(), "native-plugin:rextio-tensorflow");
    assert!(
        rules(f).iter().all(|r| !r.contains("cuda")),
        "{:?}",
        rules(f)
    );
    let lib = generated_lib(dir.path());
    for needle in [
        "cuda::extract_f32_gpu0_2d",
        "cuda::extract_f32_gpu0_1d",
        "cuda::materialize_gpu0",
        "cuda::matmul_gpu0",
        "cuda::bias_add_gpu0",
        "cuda::relu_gpu0",
        "cuda::reduce_mean_axis1_gpu0",
    ] {
        assert!(lib.contains(needle), "generated crate lacks `{needle}`");
    }
    assert_no_transfers(&lib);
    assert_carries_contribution(dir.path(), TF_CAPABILITY, "tensorflow-tfe-reuse", &[]);
    let pins: Vec<&str> = t
        .requirements
        .as_ref()
        .unwrap()
        .runtimes
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(pins, ["tensorflow", "cpython"]);
}

#[test]
fn tensorflow_cuda_lane_without_the_exact_authorisation_stays_on_python_with_rxt019() {
    let ready = registry_with_synthetic_probe(synthetic_h100());
    let dir = project("rextio-tensorflow", "cudatf", TF_SRC, None);
    let report = check(dir.path(), &ready);
    assert_kept_on_python_with_rxt019(&report, "cudatf.lanes.head", TF_CAPABILITY);
    assert_eq!(
        function(&report, "cudatf.lanes.cpu_head").route.label(),
        "native-plugin:rextio-tensorflow"
    );
    // The libtorch capability does not authorise the TFE lane.
    let dir = project(
        "rextio-tensorflow",
        "cudatf",
        TF_SRC,
        Some(&target(TORCH_CAPABILITY)),
    );
    let report = check(dir.path(), &ready);
    assert_kept_on_python_with_rxt019(&report, "cudatf.lanes.head", "not this capability");
}

#[test]
fn a_cpu_target_project_never_claims_cuda_forms() {
    let ready = registry_with_synthetic_probe(synthetic_h100());
    let cpu_torch: String = TORCH_SRC
        .split("\n\n\n")
        .filter(|block| block.contains("cpu_head") || block.starts_with("from "))
        .collect::<Vec<_>>()
        .join("\n\n\n");
    for target in [None, Some(target(TORCH_CAPABILITY))] {
        let dir = project("rextio-torch", "cputorch", &cpu_torch, target.as_deref());
        let report = check(dir.path(), &ready);
        let f = function(&report, "cputorch.lanes.cpu_head");
        assert_eq!(f.route.label(), "native-plugin:rextio-torch");
        let all: Vec<&str> = report
            .modules
            .iter()
            .flat_map(|m| &m.functions)
            .flat_map(rules)
            .collect();
        assert!(!all.is_empty());
        assert!(all.iter().all(|r| !r.contains("cuda")), "{all:?}");
        assert!(f.diagnostics.iter().all(|d| d.code != "RXT019"));
        // Configuration alone does not turn CPU code into GPU code: nothing requires the
        // target, and the provider says so.
        if let Some(t) = &report.target {
            assert!(!t.ready);
            assert_eq!(t.reason_code.as_deref(), Some("requirement-missing"));
        }
    }
}

/// rextio-torch exactly, except for the device requirements it states, which the test edits and
/// the plugin API version it declares: a plugin whose requirement disagrees with the provider's
/// frozen contract (no real plugin does, so this is the only way to reach those codes).
struct Stated {
    torch: rextio_torch::TorchPlugin,
    api: &'static str,
    edit: fn(&mut Vec<DeviceRequirement>),
}

fn stated(api: &'static str, edit: fn(&mut Vec<DeviceRequirement>)) -> Stated {
    Stated {
        torch: rextio_torch::TorchPlugin::new(),
        api,
        edit,
    }
}

impl Plugin for Stated {
    fn id(&self) -> &str {
        self.torch.id()
    }
    fn api_version(&self) -> &str {
        self.api
    }
    fn version(&self) -> &str {
        self.torch.version()
    }
    fn coverage(&self) -> Coverage {
        self.torch.coverage()
    }
    fn rules(&self) -> &[RuleRecord] {
        self.torch.rules()
    }
    fn diagnostic_codes(&self) -> &[CodeDoc] {
        self.torch.diagnostic_codes()
    }
    fn type_vocabulary(&self) -> &[PluginType] {
        self.torch.type_vocabulary()
    }
    fn claim(&self, site: &ClaimSite) -> ClaimOutcome {
        self.torch.claim(site)
    }
    fn lower(
        &self,
        site: &ClaimedSite,
        cx: &mut LoweringContext,
    ) -> Result<LoweredExpr, LowerError> {
        self.torch.lower(site, cx)
    }
    fn lower_region(
        &self,
        region: &Region,
        cx: &RegionContext,
    ) -> Result<Option<LoweredRegion>, LowerError> {
        self.torch.lower_region(region, cx)
    }
    fn runtime_crate(&self) -> Option<CrateDependency> {
        self.torch.runtime_crate()
    }
    fn runtime_support_crates(&self) -> Vec<CrateDependency> {
        self.torch.runtime_support_crates()
    }
    fn function_scope_guard(&self, f: &FunctionScope) -> Option<ScopeGuard> {
        self.torch.function_scope_guard(f)
    }
    fn detached_body(&self, f: &FunctionScope) -> Option<DetachedBody> {
        self.torch.detached_body(f)
    }
    fn module_init(&self) -> Option<ModuleInit> {
        self.torch.module_init()
    }
    fn python_requirements(&self) -> Vec<PythonRequirement> {
        self.torch.python_requirements()
    }
    fn device_requirements(&self, used: &[TypeKey]) -> Vec<DeviceRequirement> {
        let mut reqs = self.torch.device_requirements(used);
        if !reqs.is_empty() {
            (self.edit)(&mut reqs);
        }
        reqs
    }
}

fn registry_with(plugin: Stated, report: ProbeReport) -> Registry {
    Registry::builder()
        .plugin(plugin)
        .provider(CudaDeviceProvider::with_probe_runner(SyntheticProbe::new(
            report,
        )))
        .build()
        .unwrap()
}

fn check_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(".rextio/reports/check.json")).unwrap())
        .unwrap()
}

fn device(reqs: &mut [DeviceRequirement]) -> &mut DeviceSpec {
    reqs[0].device.as_mut().unwrap()
}

#[test]
fn a_requirement_that_disagrees_with_the_frozen_contract_keeps_the_lane_on_python() {
    type Edit = fn(&mut Vec<DeviceRequirement>);
    let rows: [(&str, Edit, &str); 9] = [
        (
            "the tch pin",
            |r| r[0].runtimes[1].version = "0.24.0".into(),
            "runtime-pin-mismatch",
        ),
        (
            "a missing pin",
            |r| drop(r[0].runtimes.pop()),
            "runtime-pin-mismatch",
        ),
        (
            "a pin for another build",
            |r| r[0].runtimes[0].tags = vec!["rocm".into()],
            "runtime-pin-mismatch",
        ),
        (
            "the SM",
            |r| device(r).architectures = vec!["sm_80".into()],
            "requirement-sm-mismatch",
        ),
        (
            "the runtime",
            |r| device(r).runtime = Some("tensorflow-tfe".into()),
            "requirement-mismatch",
        ),
        (
            "a feature",
            |r| device(r).features.push("training".into()),
            "requirement-mismatch",
        ),
        (
            "the memory space",
            |r| device(r).memory_spaces = vec!["host".into()],
            "requirement-mismatch",
        ),
        (
            "no device facts",
            |r| r[0].device = None,
            "requirement-missing",
        ),
        (
            "a second device",
            |r| {
                let mut other = r[0].clone();
                if let Some(d) = other.device.as_mut() {
                    d.logical_device = "gpu:1".into();
                }
                r.push(other);
            },
            "requirement-ambiguous",
        ),
    ];
    for (what, edit, code) in rows {
        let registry = registry_with(stated("1.13.0", edit), synthetic_h100());
        let dir = project(
            "rextio-torch",
            "cudatorch",
            TORCH_SRC,
            Some(&target(TORCH_CAPABILITY)),
        );
        let report = check(dir.path(), &registry);
        let json = check_json(dir.path());
        assert_eq!(json["target"]["ready"], false, "{what}");
        assert_eq!(
            json["target"]["reason_code"], code,
            "{what}: {}",
            json["target"]
        );
        assert_eq!(json["target"]["status"], "unsupported", "{what}");
        // check.json shows what the provider was asked to check.
        let mut stated_reqs = rextio_torch::TorchPlugin::new()
            .device_requirements(&[TypeKey::new(rextio_torch::types::F32_CUDA0_2D)]);
        edit(&mut stated_reqs);
        let devices: Vec<&DeviceSpec> = stated_reqs
            .iter()
            .filter_map(|r| r.device.as_ref())
            .collect();
        assert_eq!(
            json["target"]["requirements"]["devices"],
            serde_json::to_value(&devices).unwrap(),
            "{what}"
        );
        for name in ["head", "nested"] {
            assert_kept_on_python_with_rxt019(&report, &format!("cudatorch.lanes.{name}"), code);
        }
        assert_eq!(
            function(&report, "cudatorch.lanes.cpu_head").route.label(),
            "native-plugin:rextio-torch",
            "{what}"
        );
    }

    // The same plugin stating the contract's facts is authorised.
    let registry = registry_with(stated("1.13.0", |_| {}), synthetic_h100());
    let dir = torch_cuda_project();
    let report = check(dir.path(), &registry);
    assert!(report.target.as_ref().unwrap().ready);
    assert_eq!(
        function(&report, "cudatorch.lanes.head").route.label(),
        "native-plugin:rextio-torch"
    );
    let json = check_json(dir.path());
    assert_eq!(json["target"]["requirements"]["runtimes"][1]["name"], "tch");

    // A plugin written for plugin API 1.12 states no facts: the host supplies none, the provider
    // skips that check (as before the facts existed), and check.json shows no requirements.
    let registry = registry_with(
        stated("1.12.0", |r| r[0].runtimes.clear()),
        synthetic_h100(),
    );
    let report = check(dir.path(), &registry);
    let t = report.target.as_ref().unwrap();
    assert!(t.ready && t.requirements.is_none(), "{t:?}");
    assert!(check_json(dir.path())["target"]
        .get("requirements")
        .is_none());
}

#[test]
fn a_raw_driver_lane_contributes_the_providers_runtime_crate_and_builds() {
    // A plugin stating a route that drives the device itself (no framework runtime) on the
    // raw-driver lane: the provider contributes its own crate, whose `runtime` loads the driver
    // through the reviewed loader; the generated crate depends on it (an embedded copy, not this
    // checkout), builds, and still links no CUDA library.
    let raw = stated("1.13.0", |r| {
        r[0].capability = "cuda-linux-x86_64".into();
        r[0].runtimes.clear();
        let d = device(r);
        d.runtime = None;
        d.reuse_domain_runtime = false;
    });
    let registry = registry_with(raw, synthetic_h100());
    let dir = project(
        "rextio-torch",
        "cudaraw",
        TORCH_SRC,
        Some(&target("cuda-linux-x86_64")),
    );
    let out = build_strict(dir.path(), &registry);
    let t = out.check.report.target.as_ref().unwrap();
    assert!(t.ready, "{t:?}");
    // rextio-torch lowers its CUDA slice only under the libtorch lane's authorisation, so under
    // this one the CUDA functions stay on Python (RXT014 naming the authorisation it holds);
    // the CPU function keeps the crate, which is built with the contributed crate.
    let head = function(&out.check.report, "cudaraw.lanes.head");
    assert_eq!(head.route.label(), "fallback-python");
    assert!(
        head.diagnostics.iter().any(|d| d.code == "RXT014"
            && d.message
                .contains("`cuda-linux-x86_64` from `rextio-device-cuda`")),
        "{:?}",
        head.diagnostics
    );
    assert_eq!(
        function(&out.check.report, "cudaraw.lanes.cpu_head")
            .route
            .label(),
        "native-plugin:rextio-torch"
    );
    assert_eq!(
        out.report.cargo.status,
        rextio_host::report::CargoStatus::Ok
    );
    assert_carries_contribution(
        dir.path(),
        "cuda-linux-x86_64",
        "raw-driver",
        &["rextio-device-cuda"],
    );
}

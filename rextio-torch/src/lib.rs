//! # rextio-torch
//!
//! The PyTorch backend: claims a proven float32 CPU surface of PyTorch (`F.linear`, activation
//! methods, matmul, `+`, static-dim reductions, comparisons to bool tensors, `where`, clamp,
//! layer_norm, materialised transposes, `torch.cat` of rank-2 tensors, shape queries as ints) and
//! lowers each site to one call into [`runtime`], which drives libtorch through `tch`'s fallible
//! APIs. The plugin itself (claim, lower, rules) needs no libtorch; the `runtime` feature, enabled
//! by generated crates, does.

pub mod claim;
pub mod codes;
pub mod decorators;
pub mod eager_specials;
pub mod entry;
mod lower;
pub mod modules;
pub mod platforms;
pub mod region;
pub mod rules;
#[cfg(feature = "runtime")]
pub mod runtime;
pub mod shape;
pub mod types;

/// The fusion crate, as generated code names it (`::rextio_torch::fusion::Program`).
pub use rextio_fusion as fusion;

use crate::types::F32_CUDA0;
use rextio_plugin_api::kit::{Declared, DeviceLane};
use rextio_plugin_api::syntax::quote;
use rextio_plugin_api::{
    CrateDependency, DetachedBody, DeviceSpec, FunctionScope, Plugin, PythonRequirement,
    RuntimePin, ScopeGuard,
};

/// The plugin id.
pub const PLUGIN_ID: &str = "rextio-torch";

/// The device provider that may authorise the CUDA lane.
pub const CUDA_PROVIDER: &str = "rextio-device-cuda";
/// The capability the CUDA lane needs: build-only reuse of PyTorch's libtorch CUDA runtime.
pub const CUDA_CAPABILITY: &str = "cuda-libtorch-linux-x86_64";

/// The exact torch wheel whose libtorch generated code links.
pub const TORCH_VERSION: &str = "2.13.0";
/// The exact `tch` the runtime is built with (the workspace pins the same; a test checks).
pub const TCH_VERSION: &str = "0.26.0";

/// The rextio-torch plugin.
pub struct TorchPlugin {
    declared: Declared,
}

impl Default for TorchPlugin {
    fn default() -> Self {
        Self {
            declared: declared(),
        }
    }
}

impl TorchPlugin {
    /// A plugin with its full rule table.
    pub fn new() -> Self {
        Self::default()
    }
}

/// What the backend declares: its tables, its Python requirements, and the CUDA lane.
fn declared() -> Declared {
    Declared {
        id: PLUGIN_ID,
        api_version: "1.19.0",
        version: env!("CARGO_PKG_VERSION"),
        manifest_dir: env!("CARGO_MANIFEST_DIR"),
        package: "torch",
        symbols: claim::symbols(),
        platforms: platforms::table(),
        rules: rules::records()
            .into_iter()
            .chain(decorators::records())
            .collect(),
        codes: codes::CODES,
        types: types::vocabulary(),
        // tch links exactly this libtorch.
        framework: PythonRequirement {
            requirement: format!("torch=={TORCH_VERSION}"),
            distribution: "torch".into(),
            editable_path: None,
        },
        types_package: ("rextio-torch-types", "0.1.0"),
        runtime: CrateDependency {
            name: "rextio-torch".into(),
            source: own_source(),
            features: vec!["runtime".into()],
            // torch-sys links the libtorch of the interpreter's torch wheel; the exact version
            // check stays on.
            build_env: vec![("LIBTORCH_USE_PYTORCH".into(), "1".into())],
            forbidden_env: vec![
                "LIBTORCH_BYPASS_VERSION_CHECK".into(),
                "LIBTORCH".into(),
                "LIBTORCH_LIB".into(),
                "LIBTORCH_INCLUDE".into(),
            ],
        },
        support_crates: vec![CrateDependency::library(
            "rextio-fusion",
            rextio_fusion::embedded_sources(),
            rextio_fusion::SOURCE_DIR,
        )],
        device: Some(DeviceLane {
            family: F32_CUDA0,
            rules: rules::CUDA_RULES,
            capability: CUDA_CAPABILITY,
            reason: "the CUDA E2 slice runs on cuda:0 through PyTorch's libtorch",
            // Generated code calls libtorch under no-grad, for inference, on strided tensors in
            // cuda:0's memory; it reuses libtorch's runtime and names no architecture.
            device: DeviceSpec::reusing(
                "gpu:0",
                "cuda",
                "libtorch",
                &["inference", "no-grad"],
                &["strided"],
                &["device"],
            ),
            runtimes: vec![
                RuntimePin::new("libtorch", TORCH_VERSION, &["cuda", "pytorch-wheel"]),
                RuntimePin::new("tch", TCH_VERSION, &["cuda"]),
            ],
        }),
    }
}

impl Plugin for TorchPlugin {
    rextio_plugin_api::declared_plugin_methods!(
        declared,
        claim: claim::claim,
        lower: lower::lower,
        lower_region: region::lower_region
    );
    fn module_support(&self) -> Option<rextio_plugin_api::ModuleSupport> {
        Some(modules::support())
    }
    fn module_kind(&self, ctor: &rextio_plugin_api::ModuleCtor) -> rextio_plugin_api::ModuleAnswer {
        modules::kind_of(ctor)
    }
    fn native_decorator(&self, path: &str, called: bool) -> Option<String> {
        decorators::rule(path, called).map(str::to_owned)
    }
    fn fresh_result(&self, rule_id: &str) -> bool {
        rules::fresh_result(rule_id)
    }
    fn symbolic_check(&self) -> Option<String> {
        Some("::rextio_torch::runtime::is_symbolic".into())
    }
    fn function_scope_guard(&self, _f: &FunctionScope) -> Option<ScopeGuard> {
        Some(ScopeGuard {
            enter_expr: quote!(::rextio_torch::runtime::FunctionGuard::enter()).into(),
        })
    }
    fn detached_body(&self, _f: &FunctionScope) -> Option<DetachedBody> {
        Some(DetachedBody {
            runner: quote!(::rextio_torch::runtime::run_body).into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rextio_plugin_api::{validate_plugin, CrateSource};

    #[test]
    fn declarations_are_valid() {
        validate_plugin(&TorchPlugin::new()).unwrap();
    }

    #[test]
    fn generated_crates_get_the_embedded_copy_of_this_crate_not_the_checkout() {
        // Built from the workspace, the build script embeds the sources.
        let dep = TorchPlugin::new().runtime_crate().expect("a runtime crate");
        match dep.source {
            CrateSource::Embedded(files) => {
                assert!(files.iter().any(|(p, _)| p == "Cargo.toml"), "a manifest");
                assert!(files.iter().any(|(p, _)| p == "src/lib.rs"), "the sources");
            }
            other => panic!("not embedded: {other:?}"),
        }
    }

    #[test]
    fn only_the_cuda_slice_needs_a_device_to_certify() {
        let p = TorchPlugin::new();
        for r in p.rules() {
            let cuda = rules::CUDA_RULES.contains(&r.id.as_str());
            assert_eq!(p.rule_device(&r.id).is_some(), cuda, "{}", r.id);
        }
        assert_eq!(
            p.rule_device(rules::CUDA_MATMUL).as_deref(),
            Some(CUDA_CAPABILITY)
        );
    }

    #[test]
    fn only_cuda_types_require_the_libtorch_cuda_capability() {
        use rextio_plugin_api::TypeKey;
        let p = TorchPlugin::new();
        let cpu = [
            TypeKey::new(types::F32_CPU_2D),
            TypeKey::new(types::F32_CPU_1D),
        ];
        assert!(p.device_requirements(&cpu).is_empty());
        assert!(p.device_requirements(&[]).is_empty());
        for key in [types::F32_CUDA0_1D, types::F32_CUDA0_2D] {
            let used = [TypeKey::new(types::F32_CPU_2D), TypeKey::new(key)];
            let req = p.device_requirements(&used);
            assert_eq!(req.len(), 1);
            assert_eq!(req[0].capability, "cuda-libtorch-linux-x86_64");
            assert!(req[0].reason.contains(key), "{}", req[0].reason);
            let device = req[0].device.as_ref().unwrap();
            assert_eq!(device.runtime.as_deref(), Some("libtorch"));
            assert!(device.reuse_domain_runtime && device.architectures.is_empty());
            let pins: Vec<String> = req[0].runtimes.iter().map(|r| r.to_string()).collect();
            assert_eq!(
                pins,
                ["libtorch 2.13.0 [cuda, pytorch-wheel]", "tch 0.26.0 [cuda]"]
            );
        }
    }

    #[test]
    fn the_stated_pins_are_the_ones_the_build_uses() {
        // The workspace manifest pins tch; the project venv's torch is the one tch links.
        let workspace = include_str!("../../Cargo.toml");
        assert!(
            workspace.contains(&format!("tch = {{ version = \"={TCH_VERSION}\"")),
            "the workspace pins another tch than TCH_VERSION"
        );
        let tch_sys = include_str!("../../Cargo.lock");
        assert!(tch_sys.contains(&format!("name = \"tch\"\nversion = \"{TCH_VERSION}\"")));
        let python = TorchPlugin::new().python_requirements();
        assert_eq!(python[0].requirement, format!("torch=={TORCH_VERSION}"));
    }

    #[test]
    fn the_cuda_markers_check_cuda0_at_the_boundary() {
        let v = types::vocabulary();
        for (name, rank) in [("TensorF32Cuda0_1D", 1), ("TensorF32Cuda0_2D", 2)] {
            let t = v
                .iter()
                .find(|t| t.annotation == format!("rextio_torch.types.{name}"))
                .unwrap();
            assert_eq!(
                t.extract_fn,
                format!("::rextio_torch::runtime::extract_f32_cuda0_{rank}d")
            );
            assert_eq!(t.wrap_fn, "::rextio_torch::runtime::wrap_cuda0");
        }
        let py = include_str!("../python/rextio_torch/types.py");
        assert!(py.contains("class TensorF32Cuda0_1D(") && py.contains("class TensorF32Cuda0_2D("));
    }
}

rextio_plugin_api::own_crate_source!();

//! # rextio-tensorflow
//!
//! The TensorFlow backend: claims a proven float32 CPU surface of TensorFlow 2.21.0 (MatMul,
//! activations, math unary, elementwise arithmetic over a rank matrix, Maximum/Minimum, literal-
//! axis reductions, Softmax, ArgMax to int64, default Transpose, NHWC BiasAdd) and lowers each
//! site to one call into [`runtime`] (feature `runtime`), which drives the TFE C API of the
//! tensorflow wheel the Python process already imported. The plugin itself (claim, lower,
//! rules, codes) needs no TensorFlow; no Cargo TensorFlow crate is used anywhere.

pub mod claim;
pub mod codes;
pub mod entry;
mod lower;
pub mod platforms;
pub mod region;
pub mod rules;
#[cfg(feature = "runtime")]
pub mod runtime;
pub mod types;

/// The fusion crate, as generated code names it (`::rextio_tensorflow::fusion::Program`).
pub use rextio_fusion as fusion;

use crate::types::F32_GPU0;
use rextio_plugin_api::kit::{Declared, DeviceLane};
use rextio_plugin_api::{CrateDependency, DeviceSpec, Plugin, PythonRequirement, RuntimePin};

/// The plugin id.
pub const PLUGIN_ID: &str = "rextio-tensorflow";

/// The device provider that may authorise the CUDA lane.
pub const CUDA_PROVIDER: &str = "rextio-device-cuda";
/// The capability the CUDA lane needs: build-only reuse of TensorFlow's TFE runtime.
pub const CUDA_CAPABILITY: &str = "cuda-tensorflow-tfe-linux-x86_64";

/// The exact TensorFlow version the runtime binds (`tf.__version__` and `TF_Version()`).
pub const TENSORFLOW_VERSION: &str = "2.21.0";
/// The CPython version whose private EagerTensor layout the runtime reads.
pub const EAGER_ABI_PYTHON: (i64, i64) = (3, 11);

/// The rextio-tensorflow plugin.
pub struct TensorflowPlugin {
    declared: Declared,
}

impl Default for TensorflowPlugin {
    fn default() -> Self {
        Self {
            declared: declared(),
        }
    }
}

impl TensorflowPlugin {
    /// A plugin with its full rule table.
    pub fn new() -> Self {
        Self::default()
    }
}

/// What the backend declares: its tables, its Python requirements, and the CUDA lane.
fn declared() -> Declared {
    let (major, minor) = EAGER_ABI_PYTHON;
    Declared {
        id: PLUGIN_ID,
        api_version: "1.19.0",
        version: env!("CARGO_PKG_VERSION"),
        manifest_dir: env!("CARGO_MANIFEST_DIR"),
        // The runtime binds only images the imported tensorflow wheel already mapped, so the
        // wrapper imports tensorflow first.
        package: "tensorflow",
        symbols: claim::symbols(),
        platforms: platforms::table(),
        rules: rules::records(),
        codes: codes::CODES,
        types: types::vocabulary(),
        framework: PythonRequirement {
            requirement: format!("tensorflow-cpu=={TENSORFLOW_VERSION}"),
            distribution: "tensorflow-cpu".into(),
            editable_path: None,
        },
        types_package: ("rextio-tensorflow-types", "0.1.0"),
        runtime: CrateDependency {
            name: "rextio-tensorflow".into(),
            source: own_source(),
            features: vec!["runtime".into()],
            // Nothing of TensorFlow is needed at build time: the runtime binds the running
            // wheel with dlopen(RTLD_NOLOAD) when the extension is imported.
            build_env: vec![],
            forbidden_env: vec![],
        },
        support_crates: vec![CrateDependency::library(
            "rextio-fusion",
            rextio_fusion::embedded_sources(),
            rextio_fusion::SOURCE_DIR,
        )],
        device: Some(DeviceLane {
            family: F32_GPU0,
            rules: rules::CUDA_RULES,
            capability: CUDA_CAPABILITY,
            reason: "the CUDA E3 lane runs on GPU:0 through TensorFlow's TFE runtime",
            // Generated code runs TFE ops eagerly, for inference, on tensors TensorFlow placed
            // in GPU:0's memory; it reuses TensorFlow's runtime and names no architecture.
            device: DeviceSpec::reusing(
                "gpu:0",
                "cuda",
                "tensorflow-tfe",
                &["eager", "inference", "no-grad"],
                &["dense"],
                &["device"],
            ),
            runtimes: vec![
                RuntimePin::new(
                    "tensorflow",
                    TENSORFLOW_VERSION,
                    &["cuda", "python-wheel", "tfe-c-api"],
                ),
                RuntimePin::new(
                    "cpython",
                    &format!("{major}.{minor}"),
                    &["private-eager-abi"],
                ),
            ],
        }),
    }
}

impl Plugin for TensorflowPlugin {
    rextio_plugin_api::declared_plugin_methods!(
        declared,
        claim: claim::claim,
        lower: lower::lower,
        lower_region: region::lower_region
    );
    fn module_init(&self) -> Option<rextio_plugin_api::ModuleInit> {
        // Bind the imported wheel's TFE C API once, at import: a wrong or missing TensorFlow is
        // an ImportError, so REXTIO_NATIVE_MODE=auto falls back and `native` raises.
        Some(rextio_plugin_api::ModuleInit {
            expr: rextio_plugin_api::syntax::quote!(::rextio_tensorflow::runtime::load(py)).into(),
        })
    }
    fn symbolic_check(&self) -> Option<String> {
        Some("::rextio_tensorflow::runtime::is_symbolic".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rextio_plugin_api::validate_plugin;

    #[test]
    fn declarations_are_valid() {
        validate_plugin(&TensorflowPlugin::new()).unwrap();
    }

    #[test]
    fn every_rule_code_is_documented_and_every_code_is_used() {
        let p = TensorflowPlugin::new();
        let used: std::collections::BTreeSet<&str> = p
            .rules()
            .iter()
            .filter_map(|r| r.diagnostic_code.as_deref())
            .collect();
        for c in p.diagnostic_codes() {
            assert!(used.contains(c.code), "{} is not named by any rule", c.code);
        }
    }

    #[test]
    fn only_gpu_types_require_the_tfe_cuda_capability() {
        use rextio_plugin_api::TypeKey;
        let p = TensorflowPlugin::new();
        assert!(p
            .device_requirements(&[TypeKey::new(types::F32_CPU_2D)])
            .is_empty());
        for key in [types::F32_GPU0_1D, types::F32_GPU0_2D] {
            let req = p.device_requirements(&[TypeKey::new(types::F32_CPU_1D), TypeKey::new(key)]);
            assert_eq!(req.len(), 1);
            assert_eq!(req[0].capability, "cuda-tensorflow-tfe-linux-x86_64");
            let device = req[0].device.as_ref().unwrap();
            assert_eq!(device.runtime.as_deref(), Some("tensorflow-tfe"));
            assert!(device.reuse_domain_runtime);
            let pins: Vec<String> = req[0].runtimes.iter().map(|r| r.to_string()).collect();
            assert_eq!(
                pins,
                [
                    "tensorflow 2.21.0 [cuda, python-wheel, tfe-c-api]",
                    "cpython 3.11 [private-eager-abi]"
                ]
            );
        }
    }

    #[test]
    fn coverage_preloads_tensorflow() {
        let c = TensorflowPlugin::new().coverage();
        assert_eq!(c.packages, ["tensorflow"]);
        assert_eq!(c.preload_modules, ["tensorflow"]);
        assert!(c
            .symbols
            .iter()
            .all(|s| s.starts_with("tensorflow.") || s == rextio_plugin_api::NEG_TARGET));
        assert!(c.symbols.iter().any(|s| s == rextio_plugin_api::NEG_TARGET));
    }
}

rextio_plugin_api::own_crate_source!();

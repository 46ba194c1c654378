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
use rextio_plugin_api::{
    ClaimOutcome, ClaimSite, ClaimedSite, CodeDoc, Coverage, CrateDependency, CrateSource,
    DeviceRequirement, LowerError, LoweredExpr, LoweringContext, Plugin, PluginType, RuleRecord,
};

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
    rules: Vec<RuleRecord>,
    types: Vec<PluginType>,
}

impl Default for TensorflowPlugin {
    fn default() -> Self {
        Self {
            rules: rules::records(),
            types: types::vocabulary(),
        }
    }
}

impl TensorflowPlugin {
    /// A plugin with its full rule table.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Plugin for TensorflowPlugin {
    fn id(&self) -> &str {
        PLUGIN_ID
    }
    fn api_version(&self) -> &str {
        "1.14.0"
    }
    fn module_init(&self) -> Option<rextio_plugin_api::ModuleInit> {
        // Bind the imported wheel's TFE C API once, at import: a wrong or missing TensorFlow is
        // an ImportError, so REXTIO_NATIVE_MODE=auto falls back and `native` raises.
        Some(rextio_plugin_api::ModuleInit {
            expr: rextio_plugin_api::syntax::quote!(::rextio_tensorflow::runtime::load(py)).into(),
        })
    }
    fn rule_device(&self, rule_id: &str) -> Option<String> {
        rules::CUDA_RULES
            .contains(&rule_id)
            .then(|| CUDA_CAPABILITY.to_owned())
    }
    fn python_requirements(&self) -> Vec<rextio_plugin_api::PythonRequirement> {
        vec![
            rextio_plugin_api::PythonRequirement {
                requirement: "tensorflow-cpu==2.21.0".into(),
                distribution: "tensorflow-cpu".into(),
                editable_path: None,
            },
            rextio_plugin_api::PythonRequirement {
                requirement: "rextio-tensorflow-types==0.1.0".into(),
                distribution: "rextio-tensorflow-types".into(),
                editable_path: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/python").into()),
            },
        ]
    }
    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }
    fn platforms(&self) -> Vec<rextio_plugin_api::PlatformCell> {
        platforms::table()
    }
    fn certification_kit(&self) -> Option<rextio_plugin_api::CertificationKit> {
        Some(rextio_plugin_api::CertificationKit::in_dir(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/certify"
        )))
    }
    fn coverage(&self) -> Coverage {
        Coverage {
            packages: vec!["tensorflow".into()],
            symbols: claim::symbols(),
            // The runtime binds only images the imported tensorflow wheel already mapped.
            preload_modules: vec!["tensorflow".into()],
        }
    }
    fn rules(&self) -> &[RuleRecord] {
        &self.rules
    }
    fn diagnostic_codes(&self) -> &[CodeDoc] {
        codes::CODES
    }
    fn type_vocabulary(&self) -> &[PluginType] {
        &self.types
    }
    fn claim(&self, site: &ClaimSite) -> ClaimOutcome {
        claim::claim(site)
    }
    fn lower(
        &self,
        site: &ClaimedSite,
        cx: &mut LoweringContext,
    ) -> Result<LoweredExpr, LowerError> {
        lower::lower(site, cx)
    }
    fn device_requirements(&self, used: &[rextio_plugin_api::TypeKey]) -> Vec<DeviceRequirement> {
        let gpu: Vec<&str> = used
            .iter()
            .filter(|k| F32_GPU0.rank(k).is_some())
            .map(|k| k.as_str())
            .collect();
        if gpu.is_empty() {
            return Vec::new();
        }
        let (major, minor) = EAGER_ABI_PYTHON;
        vec![DeviceRequirement {
            capability: CUDA_CAPABILITY.to_owned(),
            reason: format!(
                "the CUDA E3 lane runs on GPU:0 through TensorFlow's TFE runtime ({})",
                gpu.join(", ")
            ),
            // Generated code runs TFE ops eagerly, for inference, on tensors TensorFlow placed
            // in GPU:0's memory; it reuses TensorFlow's runtime and names no architecture.
            device: Some(rextio_plugin_api::DeviceSpec::reusing(
                "gpu:0",
                "cuda",
                "tensorflow-tfe",
                &["eager", "inference", "no-grad"],
                &["dense"],
                &["device"],
            )),
            runtimes: vec![
                rextio_plugin_api::RuntimePin::new(
                    "tensorflow",
                    TENSORFLOW_VERSION,
                    &["cuda", "python-wheel", "tfe-c-api"],
                ),
                rextio_plugin_api::RuntimePin::new(
                    "cpython",
                    &format!("{major}.{minor}"),
                    &["private-eager-abi"],
                ),
            ],
        }]
    }
    fn runtime_crate(&self) -> Option<CrateDependency> {
        Some(CrateDependency {
            name: "rextio-tensorflow".into(),
            source: runtime_source(),
            features: vec!["runtime".into()],
            // Nothing of TensorFlow is needed at build time: the runtime binds the running
            // wheel with dlopen(RTLD_NOLOAD) when the extension is imported.
            build_env: vec![],
            forbidden_env: vec![],
        })
    }
    fn runtime_support_crates(&self) -> Vec<CrateDependency> {
        vec![CrateDependency::library(
            "rextio-fusion",
            rextio_fusion::embedded_sources(),
            rextio_fusion::SOURCE_DIR,
        )]
    }
    fn lower_region(
        &self,
        region: &rextio_plugin_api::Region,
        cx: &rextio_plugin_api::RegionContext,
    ) -> Result<Option<rextio_plugin_api::LoweredRegion>, LowerError> {
        region::lower_region(region, cx)
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
        assert!(c.symbols.iter().all(|s| s.starts_with("tensorflow.")));
    }
}

/// This crate's sources with a standalone manifest, embedded at build time (see
/// `rextio-embed`), so generated crates depend on a copy under the host's cache directory.
#[cfg(rextio_embedded_sources)]
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_sources.rs"));
}

/// Where generated crates get this crate: its embedded sources when built from the workspace.
fn runtime_source() -> CrateSource {
    #[cfg(rextio_embedded_sources)]
    {
        CrateSource::embedded(embedded::EMBEDDED_SOURCES)
    }
    #[cfg(not(rextio_embedded_sources))]
    {
        CrateSource::Path(env!("CARGO_MANIFEST_DIR").into())
    }
}

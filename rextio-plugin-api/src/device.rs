//! Device providers: the contract for accelerator lanes.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use thiserror::Error;

/// What a plugin needs from a device provider for the types a function uses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceRequirement {
    /// The capability needed, e.g. `cuda-libtorch-linux-x86_64`.
    pub capability: String,
    /// Why.
    pub reason: String,
    /// The facts of the route the provider checks against its lane's contract (plugin API >=
    /// 1.13; the host ignores them from older plugins). `None` states none: a provider that
    /// requires them then refuses the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceSpec>,
    /// The exact runtimes the route's generated code uses (plugin API >= 1.13).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runtimes: Vec<RuntimePin>,
}

/// The device a route runs on and how it uses it, as a plugin states it.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSpec {
    /// The logical device, e.g. `gpu:0`.
    pub logical_device: String,
    /// The device backend, e.g. `cuda`.
    pub backend: String,
    /// The framework runtime the route reuses (`libtorch`, `tensorflow-tfe`), if any.
    pub runtime: Option<String>,
    /// Execution features, e.g. `inference`, `no-grad`.
    pub features: Vec<String>,
    /// Tensor layouts, e.g. `strided`.
    pub layouts: Vec<String>,
    /// Memory spaces, e.g. `device`.
    pub memory_spaces: Vec<String>,
    /// An optional architecture cross-check (e.g. `sm_90`); empty for none.
    pub architectures: Vec<String>,
    /// Whether the route reuses the framework's runtime rather than driving the device itself.
    pub reuse_domain_runtime: bool,
}

impl DeviceSpec {
    /// A route on `logical_device` of `backend` that reuses the framework runtime `runtime`
    /// (its tensors, allocator and streams) and names no architecture.
    pub fn reusing(
        logical_device: &str,
        backend: &str,
        runtime: &str,
        features: &[&str],
        layouts: &[&str],
        memory_spaces: &[&str],
    ) -> DeviceSpec {
        let owned = |xs: &[&str]| xs.iter().map(|x| (*x).to_owned()).collect();
        DeviceSpec {
            logical_device: logical_device.to_owned(),
            backend: backend.to_owned(),
            runtime: Some(runtime.to_owned()),
            features: owned(features),
            layouts: owned(layouts),
            memory_spaces: owned(memory_spaces),
            architectures: Vec::new(),
            reuse_domain_runtime: true,
        }
    }
}

/// An exact runtime a route depends on (`tch 0.26.0 [cuda]`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimePin {
    /// The runtime's name.
    pub name: String,
    /// Its exact version.
    pub version: String,
    /// Qualifiers (`cuda`, `pytorch-wheel`, ...).
    pub tags: Vec<String>,
}

impl std::fmt::Display for RuntimePin {
    /// `tch 0.26.0 [cuda]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} [{}]",
            self.name,
            self.version,
            self.tags.join(", ")
        )
    }
}

impl RuntimePin {
    /// A pin from static parts.
    pub fn new(name: &str, version: &str, tags: &[&str]) -> RuntimePin {
        RuntimePin {
            name: name.to_owned(),
            version: version.to_owned(),
            tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        }
    }
}

/// What the project's native functions require of the target, gathered by the host from every
/// plugin's [`DeviceRequirement`]s for the target's capability (identical ones once).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainRequirements {
    /// The device facts, one per distinct requirement.
    pub devices: Vec<DeviceSpec>,
    /// The runtime pins, each once.
    pub runtimes: Vec<RuntimePin>,
}

/// A provider's static description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderManifest {
    /// Provider id.
    pub id: String,
    /// Capabilities it can authorise.
    pub capabilities: Vec<String>,
    /// Whether it claims support (false until real-hardware evidence exists).
    pub support_claim: bool,
}

/// What the host asks a provider before building.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreflightRequest {
    /// The capability the project targets.
    pub capability: String,
    /// `[target.device_options]` from the project config.
    pub options: BTreeMap<String, String>,
    /// What the project's native functions require of the target (device provider API >= 1.2;
    /// `None` when the host could not gather it, for example because a plugin older than plugin
    /// API 1.13 states no facts).
    #[serde(default)]
    pub domain: Option<DomainRequirements>,
}

/// The provider's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PreflightResult {
    /// The capability can be used; lowering may rely on this authorization.
    Ready(DeviceAuthorization),
    /// It cannot, with a stable reason code.
    Unavailable {
        /// Stable reason code.
        reason_code: String,
        /// Human explanation.
        message: String,
    },
}

/// Proof handed to lowering that a provider authorised a capability.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceAuthorization {
    /// Provider id.
    pub provider: String,
    /// Capability authorised.
    pub capability: String,
}

/// What a provider adds to the generated crate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildContribution {
    /// Extra environment for cargo.
    pub env: BTreeMap<String, String>,
    /// Extra crate dependencies.
    pub dependencies: Vec<crate::plugin::CrateDependency>,
}

/// A provider failure.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("device provider `{provider}`: {message}")]
pub struct ProviderError {
    /// Provider id.
    pub provider: String,
    /// What went wrong.
    pub message: String,
}

//! Device providers: the contract for accelerator lanes.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use thiserror::Error;

/// What a plugin needs from a device provider for the types a function uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceRequirement {
    /// The capability needed, e.g. `cuda-libtorch-linux-x86_64`.
    pub capability: String,
    /// Why.
    pub reason: String,
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreflightRequest {
    /// The capability the project targets.
    pub capability: String,
    /// `[target.device_options]` from the project config.
    pub options: BTreeMap<String, String>,
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

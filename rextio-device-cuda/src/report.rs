//! Public records: the typed preflight report, ready observations and the lock record.
//!
//! None of them contains a raw option value: options enter the lock record as their names plus
//! one SHA-256 digest ([`options_digest`]). Every record serialises `support_claim: false`.

use crate::capability::{
    CudaCapability, Lane, ToolkitVersion, PROVIDER_API_VERSION, PROVIDER_ID, PROVIDER_VERSION,
};
use crate::contribution::CudaBuildContribution;
use crate::options::Sm;
use crate::probe::ProbeProvenance;
use crate::reason::{PreflightStatus, ReasonCode};
use crate::requirements::{DomainRequirements, RuntimeRequirement};
use rextio_plugin_api::{DeviceAuthorization, PreflightResult};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// A boolean that can only be `false`: `support_claim`, `certification_ready`,
/// `kernel_executed`. It serialises as `false` and refuses to deserialise anything else.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct False;

impl Serialize for False {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(false)
    }
}

impl<'de> Deserialize<'de> for False {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if bool::deserialize(d)? {
            Err(serde::de::Error::custom(
                "rextio-device-cuda never claims support, certification or kernel execution",
            ))
        } else {
            Ok(False)
        }
    }
}

/// Whether the domain requirements were checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RequirementCheck {
    /// The host passed the domain plugins' requirements and they match the lane's contract.
    Checked,
    /// The host passed none (a plugin older than plugin API 1.13 states no facts).
    NotSupplied,
}

/// What a `ready` preflight observed. Contains no paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadyObservations {
    /// The capability's lane.
    pub lane: Lane,
    /// Whether the inventory came from a probe subprocess or a synthetic stand-in.
    pub probe: ProbeProvenance,
    /// The selected device ordinal.
    pub device_ordinal: u32,
    /// Its name as the driver reports it.
    pub device_name: String,
    /// The selected and confirmed architecture.
    pub sm: Sm,
    /// The driver's version (`cuDriverGetVersion`).
    pub driver_version: u32,
    /// The effective minimum driver version.
    pub min_driver_version: u32,
    /// The effective minimum toolkit version (raw-driver lanes).
    pub min_toolkit_version: Option<ToolkitVersion>,
    /// The validated toolkit version, when `toolkit_root` was given.
    pub toolkit_version: Option<ToolkitVersion>,
    /// Whether domain requirements were checked.
    pub domain_requirements: RequirementCheck,
    /// Framework pins the lane requires but the provider does not verify (reuse lanes).
    pub required_unverified_runtimes: Vec<RuntimeRequirement>,
    /// Always false: preflight executes no kernel.
    pub kernel_executed: False,
    /// Always false: a preflight is not certification evidence.
    pub certification_ready: False,
}

/// What enters a project's lock for this provider: option names and a digest, never values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockRecord {
    /// Provider id.
    pub provider: String,
    /// Provider version.
    pub provider_version: String,
    /// Device Provider API version.
    pub api_version: String,
    /// The selected capability.
    pub capability: String,
    /// Names of the configured options, sorted.
    pub option_names: Vec<String>,
    /// [`options_digest`] of the configured options.
    pub options_sha256: String,
    /// The domain requirements checked against the lane's contract; absent when the host
    /// supplied none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain_requirements: Option<DomainRequirements>,
    /// What the lane contributes to the generated crate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contribution: Option<CudaBuildContribution>,
    /// Always false.
    pub support_claim: False,
}

impl LockRecord {
    /// The lock record of a validated selection.
    pub fn new(capability: &str, options: &BTreeMap<String, String>) -> LockRecord {
        LockRecord {
            provider: PROVIDER_ID.to_owned(),
            provider_version: PROVIDER_VERSION.to_owned(),
            api_version: PROVIDER_API_VERSION.to_owned(),
            capability: capability.to_owned(),
            option_names: options.keys().cloned().collect(),
            options_sha256: options_digest(options),
            domain_requirements: None,
            contribution: None,
            support_claim: False,
        }
    }

    /// The lock record of a selection whose domain requirements (if any) were checked: with
    /// them and the lane's build contribution.
    pub fn checked(
        capability: CudaCapability,
        options: &BTreeMap<String, String>,
        domain: Option<&DomainRequirements>,
    ) -> LockRecord {
        LockRecord {
            domain_requirements: domain.cloned(),
            contribution: Some(CudaBuildContribution::for_capability(capability)),
            ..LockRecord::new(capability.id(), options)
        }
    }
}

/// SHA-256 (lowercase hex) of the options' canonical encoding: the domain tag
/// `rextio-device-cuda/options/v1` and a NUL, then for each option in name order the name and the
/// value, each preceded by its byte length as a little-endian `u64`. Unambiguous and independent
/// of insertion order.
pub fn options_digest(options: &BTreeMap<String, String>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"rextio-device-cuda/options/v1\0");
    for (name, value) in options {
        for part in [name, value] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The typed outcome of a preflight, richer than the API's [`PreflightResult`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaPreflightReport {
    /// Provider id.
    pub provider: String,
    /// The requested capability, as given.
    pub capability: String,
    /// The outcome class.
    pub status: PreflightStatus,
    /// The stable reason code (`ready` when ready).
    pub reason_code: ReasonCode,
    /// What was found and what to do. Never contains a path option's value.
    pub message: String,
    /// What a ready preflight observed.
    pub observations: Option<ReadyObservations>,
    /// The lock record, whenever the selection itself was valid.
    pub lock: Option<LockRecord>,
    /// Always false.
    pub support_claim: False,
}

impl CudaPreflightReport {
    /// Whether the capability is authorised.
    pub fn is_ready(&self) -> bool {
        self.status == PreflightStatus::Ready
    }

    /// The API-level result: `Ready` with the authorisation, or `Unavailable` with the reason
    /// code (its status is [`ReasonCode::status`] of the code) and a message prefixed by the
    /// status.
    pub fn to_result(&self) -> PreflightResult {
        if self.is_ready() {
            PreflightResult::Ready(DeviceAuthorization {
                provider: self.provider.clone(),
                capability: self.capability.clone(),
            })
        } else {
            PreflightResult::Unavailable {
                reason_code: self.reason_code.as_str().to_owned(),
                message: format!("{}: {}", self.status, self.message),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn digest_is_deterministic_and_sensitive_to_every_byte() {
        let a = opts(&[("probe_executable", "/opt/p"), ("sm", "sm_80")]);
        let d = options_digest(&a);
        assert_eq!(d.len(), 64);
        assert!(d
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_eq!(d, options_digest(&a.clone()));
        // Boundaries are encoded: moving a byte between name and value changes the digest.
        assert_ne!(
            options_digest(&opts(&[("ab", "c")])),
            options_digest(&opts(&[("a", "bc")]))
        );
        assert_ne!(
            d,
            options_digest(&opts(&[("probe_executable", "/opt/q"), ("sm", "sm_80")]))
        );
        assert_ne!(
            options_digest(&BTreeMap::new()),
            options_digest(&opts(&[("", "")]))
        );
    }

    #[test]
    fn digest_of_empty_options_is_pinned() {
        // Pinned so a change of encoding is a visible, deliberate break of existing locks.
        let expected = {
            let mut h = Sha256::new();
            h.update(b"rextio-device-cuda/options/v1\0");
            h.finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        assert_eq!(options_digest(&BTreeMap::new()), expected);
    }

    #[test]
    fn lock_records_carry_names_and_digest_but_no_values() {
        let options = opts(&[
            ("probe_executable", "/home/alice/very-secret/probe"),
            ("device_ordinal", "0"),
            ("sm", "sm_86"),
        ]);
        let lock = LockRecord::new("cuda-linux-x86_64", &options);
        let json = serde_json::to_string(&lock).unwrap();
        assert!(!json.contains("very-secret"), "{json}");
        assert!(!json.contains("sm_86"), "{json}");
        assert!(!json.contains("\"0\""), "{json}");
        assert!(json.contains("\"support_claim\":false"), "{json}");
        assert_eq!(
            lock.option_names,
            ["device_ordinal", "probe_executable", "sm"]
        );
        assert_eq!(lock.options_sha256, options_digest(&options));
        let back: LockRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(back, lock);
    }

    #[test]
    fn false_fields_refuse_true() {
        assert_eq!(serde_json::to_string(&False).unwrap(), "false");
        assert_eq!(serde_json::from_str::<False>("false").unwrap(), False);
        assert!(serde_json::from_str::<False>("true").is_err());
        assert!(serde_json::from_str::<False>("0").is_err());
    }
}

//! Preflight statuses and the stable reason codes, in one table.
//!
//! A reason code is a stable, kebab-case string. Codes are never reused or renamed; each belongs
//! to exactly one [`PreflightStatus`]. The table [`ReasonCode::ALL`] is what the crate
//! documentation, `rextio explain` style tooling and the data-driven tests read.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The outcome class of a preflight, coarser than its reason code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PreflightStatus {
    /// Every check passed; the capability is authorised (still `support_claim: false`).
    Ready,
    /// The selection or `[target.device_options]` is wrong: the user fixes `rextio.toml`.
    InvalidConfiguration,
    /// The capability is not served here (host platform, domain requirements).
    Unsupported,
    /// A file or directory on the trust boundary is mutable by others or owned by someone else.
    Untrusted,
    /// The probe ran but misbehaved: it is not evidence of anything.
    ProbeFailed,
    /// The host lacks what the capability needs (probe, driver, device, toolkit, versions).
    Unavailable,
}

impl PreflightStatus {
    /// The stable spelling (`ready`, `invalid-configuration`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ready => "ready",
            Self::InvalidConfiguration => "invalid-configuration",
            Self::Unsupported => "unsupported",
            Self::Untrusted => "untrusted",
            Self::ProbeFailed => "probe-failed",
            Self::Unavailable => "unavailable",
        }
    }
}

impl fmt::Display for PreflightStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! reason_codes {
    ($( $(#[$doc:meta])* $variant:ident = $code:literal, $status:ident, $summary:literal; )*) => {
        /// A stable preflight reason code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ReasonCode {
            $( $(#[$doc])* $variant, )*
        }

        impl ReasonCode {
            /// Every code, in documentation order.
            pub const ALL: &'static [ReasonCode] = &[ $( ReasonCode::$variant, )* ];

            /// The stable spelling.
            pub fn as_str(self) -> &'static str {
                match self { $( ReasonCode::$variant => $code, )* }
            }

            /// The status this code belongs to.
            pub fn status(self) -> PreflightStatus {
                match self { $( ReasonCode::$variant => PreflightStatus::$status, )* }
            }

            /// One line saying what the code means.
            pub fn summary(self) -> &'static str {
                match self { $( ReasonCode::$variant => $summary, )* }
            }

            /// Parse a stable spelling back into a code.
            pub fn parse(code: &str) -> Option<ReasonCode> {
                match code { $( $code => Some(ReasonCode::$variant), )* _ => None }
            }
        }
    };
}

reason_codes! {
    /// All checks passed.
    Ready = "ready", Ready, "every preflight check passed; the capability is authorised (support_claim stays false)";
    /// `device_capability` was not given.
    MissingCapability = "missing-capability", InvalidConfiguration, "no [target] device_capability was selected; the provider never picks one itself";
    /// The capability is not in the manifest.
    UnknownCapability = "unknown-capability", InvalidConfiguration, "the selected device_capability is not one of the provider's manifest capabilities";
    /// An option name the provider does not know.
    UnknownOption = "unknown-option", InvalidConfiguration, "[target.device_options] names an option the provider does not define";
    /// A required option is absent or empty.
    MissingOption = "missing-option", InvalidConfiguration, "a required option (probe_executable, device_ordinal, sm) is absent or empty";
    /// `device_ordinal` is not a plain decimal integer.
    InvalidDeviceOrdinal = "invalid-device-ordinal", InvalidConfiguration, "device_ordinal must be a decimal integer such as \"0\"";
    /// `sm` is not `sm_NN`.
    InvalidSm = "invalid-sm", InvalidConfiguration, "sm must be sm_NN or sm_NNN with compute capability 5.0 or newer, e.g. \"sm_80\"";
    /// `min_driver_version` is not an integer.
    InvalidDriverFloor = "invalid-driver-floor", InvalidConfiguration, "min_driver_version must be a decimal CUDA driver version such as \"12040\"";
    /// `min_driver_version` is below the manifest floor.
    DriverFloorBelowManifest = "driver-floor-below-manifest", InvalidConfiguration, "min_driver_version may raise the manifest floor 12000 but never lower it";
    /// `min_toolkit_version` is not `MAJOR.MINOR`.
    InvalidToolkitFloor = "invalid-toolkit-floor", InvalidConfiguration, "min_toolkit_version must be MAJOR.MINOR such as \"12.4\"";
    /// `min_toolkit_version` is below the manifest floor.
    ToolkitFloorBelowManifest = "toolkit-floor-below-manifest", InvalidConfiguration, "min_toolkit_version may raise the manifest floor 12.0 but never lower it";
    /// A toolkit option on a framework-reuse lane.
    ToolkitOptionRejected = "toolkit-option-rejected", InvalidConfiguration, "toolkit_root and min_toolkit_version belong to the raw-driver lanes; the libtorch and TensorFlow TFE lanes reject them";
    /// `toolkit_root` is not absolute.
    ToolkitRootNotAbsolute = "toolkit-root-not-absolute", InvalidConfiguration, "toolkit_root must be an absolute path; nothing is searched";
    /// The capability targets another OS or architecture than this host.
    HostPlatformMismatch = "host-platform-mismatch", Unsupported, "the capability targets another OS or architecture than the host running preflight";
    /// A framework-reuse lane got no domain device requirement.
    RequirementMissing = "requirement-missing", Unsupported, "the domain plugin emitted no CUDA device requirement for this capability; configuration alone does not make code run on a GPU";
    /// More domain requirements than the lane accepts.
    RequirementAmbiguous = "requirement-ambiguous", Unsupported, "the lane accepts exactly one gpu:0 device requirement";
    /// A domain requirement differs from the lane's frozen contract.
    RequirementMismatch = "requirement-mismatch", Unsupported, "a device requirement differs from the capability's frozen contract (device, backend, runtime, features, layouts, memory spaces)";
    /// The requirement's optional SM differs from the selection.
    RequirementSmMismatch = "requirement-sm-mismatch", Unsupported, "the domain requirement names an SM other than the selected sm (or more than one)";
    /// A runtime pin differs from the lane's frozen contract.
    RuntimePinMismatch = "runtime-pin-mismatch", Unsupported, "the domain runtime requirements differ from the capability's frozen pins";
    /// `probe_executable` is relative.
    ProbeNotAbsolute = "probe-not-absolute", InvalidConfiguration, "probe_executable must be an absolute path; PATH is never searched";
    /// `probe_executable` does not exist.
    ProbeMissing = "probe-missing", Unavailable, "probe_executable does not exist";
    /// `probe_executable` or a directory above it could not be inspected.
    ProbeInspectFailed = "probe-inspect-failed", Unavailable, "probe_executable or a directory above it could not be inspected (an I/O error other than not-found, such as permission denied or a path through a file)";
    /// `probe_executable` is not a regular file.
    ProbeNotFile = "probe-not-file", InvalidConfiguration, "probe_executable is not a regular file";
    /// `probe_executable` has no execute permission.
    ProbeNotExecutable = "probe-not-executable", InvalidConfiguration, "probe_executable has no execute permission";
    /// The probe or one of its directories is group- or world-writable.
    ProbeUntrustedPermissions = "probe-untrusted-permissions", Untrusted, "probe_executable or one of its ancestor directories is group- or world-writable";
    /// The probe or one of its directories has an untrusted owner.
    ProbeUntrustedOwner = "probe-untrusted-owner", Untrusted, "probe_executable or one of its ancestor directories is owned by neither root nor the current user";
    /// The probe could not be started.
    ProbeSpawnFailed = "probe-spawn-failed", ProbeFailed, "the probe could not be started";
    /// The probe ran past its deadline.
    ProbeTimeout = "probe-timeout", ProbeFailed, "the probe did not finish within its deadline and was killed";
    /// The probe wrote more than the output cap.
    ProbeOutputTooLarge = "probe-output-too-large", ProbeFailed, "the probe wrote more than the output cap";
    /// The probe exited unsuccessfully.
    ProbeExitFailure = "probe-exit-failure", ProbeFailed, "the probe exited with a failure status or was killed by a signal";
    /// The probe's output is not JSON.
    ProbeInvalidJson = "probe-invalid-json", ProbeFailed, "the probe's output is not one UTF-8 JSON document";
    /// The probe's JSON does not follow the schema.
    ProbeSchemaMismatch = "probe-schema-mismatch", ProbeFailed, "the probe's JSON does not follow the rextio-cuda-probe/1 schema";
    /// The probe does not support the host platform.
    ProbePlatformUnsupported = "probe-platform-unsupported", Unsupported, "the probe has no reviewed driver loader for this platform";
    /// No driver image at any reviewed path.
    DriverMissing = "driver-missing", Unavailable, "no CUDA driver (libcuda.so.1) exists at any reviewed system path";
    /// The driver image failed the trust checks.
    DriverUntrusted = "driver-untrusted", Untrusted, "the CUDA driver image lies outside the reviewed roots or is mutable by others";
    /// The dynamic loader refused the driver image.
    DriverLoadFailed = "driver-load-failed", Unavailable, "the CUDA driver image could not be loaded";
    /// The driver lacks an inventory entry point.
    DriverSymbolMissing = "driver-symbol-missing", Unavailable, "the CUDA driver lacks an inventory entry point";
    /// `cuInit` failed.
    DriverInitFailed = "driver-init-failed", Unavailable, "cuInit failed (the CUresult is in the message)";
    /// An inventory query failed.
    DriverQueryFailed = "driver-query-failed", Unavailable, "a driver inventory query failed (the CUresult is in the message)";
    /// The driver is older than the effective floor.
    DriverBelowFloor = "driver-below-floor", Unavailable, "the CUDA driver is older than the effective minimum driver version";
    /// The driver sees no device.
    NoDevice = "no-device", Unavailable, "the CUDA driver sees no device";
    /// `device_ordinal` is not below the device count.
    DeviceOrdinalOutOfRange = "device-ordinal-out-of-range", Unavailable, "device_ordinal is not below the number of devices the driver sees";
    /// The device's compute capability differs from `sm`.
    SmMismatch = "sm-mismatch", Unavailable, "the selected device's compute capability differs from the selected sm";
    /// `toolkit_root` does not exist or is not a directory.
    ToolkitRootMissing = "toolkit-root-missing", Unavailable, "toolkit_root does not exist or is not a directory";
    /// The toolkit's version record is absent or malformed.
    ToolkitVersionUnreadable = "toolkit-version-unreadable", Unavailable, "toolkit_root/version.json is absent or does not name the toolkit and runtime versions";
    /// Toolkit and runtime name different versions.
    ToolkitVersionInconsistent = "toolkit-version-inconsistent", Unavailable, "the toolkit and its runtime report different MAJOR.MINOR versions";
    /// The toolkit is older than the effective floor.
    ToolkitBelowFloor = "toolkit-below-floor", Unavailable, "the CUDA toolkit is older than the effective minimum toolkit version";
}

/// A check that did not pass: its stable code and a human message.
///
/// Messages say what was expected, what was found and what to do. They never contain the raw
/// value of a path option (`probe_executable`, `toolkit_root`): reports may be published.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[{reason}] {message}")]
pub struct Refusal {
    /// The stable code.
    pub reason: ReasonCode,
    /// The explanation.
    pub message: String,
}

impl Refusal {
    /// A refusal with this code and message.
    pub fn new(reason: ReasonCode, message: impl Into<String>) -> Refusal {
        Refusal {
            reason,
            message: message.into(),
        }
    }

    /// The status the code belongs to.
    pub fn status(&self) -> PreflightStatus {
        self.reason.status()
    }
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ReasonCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ReasonCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        ReasonCode::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown reason code `{text}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn codes_are_unique_kebab_case_and_round_trip() {
        let mut seen = BTreeSet::new();
        for &code in ReasonCode::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "duplicate code {s}");
            assert!(
                s.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{s} is not kebab-case"
            );
            assert_eq!(ReasonCode::parse(s), Some(code));
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<ReasonCode>(&json).unwrap(), code);
            assert!(!code.summary().is_empty());
        }
        assert_eq!(ReasonCode::parse("no-such-code"), None);
    }

    #[test]
    fn only_ready_has_ready_status() {
        for &code in ReasonCode::ALL {
            assert_eq!(
                code.status() == PreflightStatus::Ready,
                code == ReasonCode::Ready,
                "{code}"
            );
        }
    }

    #[test]
    fn status_spellings_are_stable() {
        let table = [
            (PreflightStatus::Ready, "\"ready\""),
            (
                PreflightStatus::InvalidConfiguration,
                "\"invalid-configuration\"",
            ),
            (PreflightStatus::Unsupported, "\"unsupported\""),
            (PreflightStatus::Untrusted, "\"untrusted\""),
            (PreflightStatus::ProbeFailed, "\"probe-failed\""),
            (PreflightStatus::Unavailable, "\"unavailable\""),
        ];
        for (status, json) in table {
            assert_eq!(serde_json::to_string(&status).unwrap(), json);
            assert_eq!(format!("\"{status}\""), json);
        }
    }
}

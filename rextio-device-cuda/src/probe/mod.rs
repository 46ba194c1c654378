//! The driver-inventory probe: its fixed JSON schema, the strict parser, and how it is run.
//!
//! The probe (`rextio-cuda-probe`, a binary of this crate) prints exactly one JSON document:
//!
//! ```json
//! {
//!   "schema": "rextio-cuda-probe/1",
//!   "status": "ok",
//!   "driver_version": 12080,
//!   "device_count": 1,
//!   "devices": [
//!     {"ordinal": 0, "name": "NVIDIA H200", "compute_capability": {"major": 9, "minor": 0}}
//!   ],
//!   "error": null
//! }
//! ```
//!
//! `status` is one of `ok`, `driver-missing`, `driver-untrusted`, `driver-load-failed`,
//! `driver-symbol-missing`, `driver-init-failed`, `driver-query-failed`, `platform-unsupported`.
//! `error` names the failing inventory entry point and its `CUresult` (`code` is `null` when the
//! symbol was missing). Unknown fields anywhere, a different `schema`, or inconsistent content
//! (device count vs list, ordinals out of sequence, an `ok` report without a driver version, an
//! error naming a non-inventory entry point) are schema violations. The report contains no paths.

pub mod inventory;
pub mod runner;

use crate::ffi::INVENTORY_SYMBOLS;
use crate::options::Sm;
use crate::reason::{ReasonCode, Refusal};
use serde::{Deserialize, Serialize};

pub use runner::{
    probe_trust_refusal, ProbeLimits, ProbeProvenance, ProbeRunner, ProcessProbeRunner,
    SyntheticProbe,
};

/// The schema identifier every report carries.
pub const PROBE_SCHEMA: &str = "rextio-cuda-probe/1";
/// The longest device name a report may carry.
pub const MAX_DEVICE_NAME_CHARS: usize = 256;
/// The most devices a report may list.
pub const MAX_DEVICES: u32 = 1024;

/// What the probe found, as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeStatus {
    /// Driver loaded, inventory complete (possibly with zero devices).
    Ok,
    /// No `libcuda.so.1` at any reviewed path.
    DriverMissing,
    /// The image failed the trust checks.
    DriverUntrusted,
    /// The dynamic loader refused the image.
    DriverLoadFailed,
    /// An inventory entry point is missing.
    DriverSymbolMissing,
    /// `cuInit` failed.
    DriverInitFailed,
    /// Another inventory call failed.
    DriverQueryFailed,
    /// The probe has no reviewed loader for this platform.
    PlatformUnsupported,
}

/// A device's compute capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComputeCapability {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
}

impl ComputeCapability {
    /// Whether this is the architecture `sm` selects.
    pub fn matches(self, sm: Sm) -> bool {
        self.major == sm.major && self.minor == sm.minor
    }
}

/// One device in the inventory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeDevice {
    /// The driver ordinal.
    pub ordinal: u32,
    /// `cuDeviceGetName`.
    pub name: String,
    /// From the compute-capability attributes.
    pub compute_capability: ComputeCapability,
}

/// The failing entry point of a non-`ok` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeErrorDetail {
    /// One of the inventory entry points.
    pub entry_point: String,
    /// Its `CUresult`, or `None` when the symbol was missing.
    pub code: Option<i32>,
}

/// The probe's report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeReport {
    /// Always [`PROBE_SCHEMA`].
    pub schema: String,
    /// Overall status.
    pub status: ProbeStatus,
    /// `cuDriverGetVersion` (e.g. 12080), when known.
    pub driver_version: Option<u32>,
    /// Number of devices listed.
    pub device_count: u32,
    /// The devices, ordinal order.
    pub devices: Vec<ProbeDevice>,
    /// The failing entry point, for init/query/symbol failures.
    pub error: Option<ProbeErrorDetail>,
}

impl ProbeReport {
    /// A report with no devices and no error.
    pub fn with_status(status: ProbeStatus) -> ProbeReport {
        ProbeReport {
            schema: PROBE_SCHEMA.to_owned(),
            status,
            driver_version: None,
            device_count: 0,
            devices: Vec::new(),
            error: None,
        }
    }

    /// An `ok` report listing `devices` (ordinals assigned in order).
    pub fn ok(driver_version: u32, devices: &[(&str, u32, u32)]) -> ProbeReport {
        let devices: Vec<ProbeDevice> = devices
            .iter()
            .zip(0u32..)
            .map(|((name, major, minor), ordinal)| ProbeDevice {
                ordinal,
                name: (*name).to_owned(),
                compute_capability: ComputeCapability {
                    major: *major,
                    minor: *minor,
                },
            })
            .collect();
        ProbeReport {
            device_count: u32::try_from(devices.len()).unwrap_or(u32::MAX),
            driver_version: Some(driver_version),
            devices,
            ..ProbeReport::with_status(ProbeStatus::Ok)
        }
    }

    /// Check everything serde cannot: schema id, internal consistency, bounds.
    pub fn validate(&self) -> Result<(), String> {
        if self.schema != PROBE_SCHEMA {
            return Err(format!(
                "schema is `{}`, expected `{PROBE_SCHEMA}`",
                self.schema.escape_debug()
            ));
        }
        if self.device_count > MAX_DEVICES {
            return Err(format!(
                "device_count {} exceeds {MAX_DEVICES}",
                self.device_count
            ));
        }
        if usize::try_from(self.device_count).ok() != Some(self.devices.len()) {
            return Err(format!(
                "device_count is {} but {} devices are listed",
                self.device_count,
                self.devices.len()
            ));
        }
        for (expected, device) in (0u32..).zip(&self.devices) {
            if device.ordinal != expected {
                return Err(format!(
                    "device ordinals must be 0..{} in order, found {} at position {expected}",
                    self.device_count, device.ordinal
                ));
            }
            let chars = device.name.chars().count();
            if chars == 0
                || chars > MAX_DEVICE_NAME_CHARS
                || device.name.chars().any(char::is_control)
            {
                return Err(format!(
                    "device {expected} has a name that is empty, longer than {MAX_DEVICE_NAME_CHARS} characters, or contains control characters"
                ));
            }
            let cc = device.compute_capability;
            if !(1..=99).contains(&cc.major) || cc.minor > 9 {
                return Err(format!(
                    "device {expected} has compute capability {}.{}, outside 1.0..=99.9",
                    cc.major, cc.minor
                ));
            }
        }
        if let Some(error) = &self.error {
            if !INVENTORY_SYMBOLS.contains(&error.entry_point.as_str()) {
                return Err(format!(
                    "error names entry point `{}`, which is not an inventory entry point",
                    error.entry_point.escape_debug()
                ));
            }
            if error.code == Some(0) {
                return Err("error has code 0 (CUDA_SUCCESS)".to_owned());
            }
        }
        let failed_call = matches!(
            self.status,
            ProbeStatus::DriverInitFailed | ProbeStatus::DriverQueryFailed
        );
        match self.status {
            ProbeStatus::Ok => {
                if self.driver_version.is_none() || self.error.is_some() {
                    return Err("an ok report needs driver_version and no error".to_owned());
                }
            }
            _ if !self.devices.is_empty() => {
                return Err(format!(
                    "a `{}` report lists no devices",
                    serde_json::to_value(self.status)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                ));
            }
            _ if failed_call => {
                if self.error.as_ref().and_then(|e| e.code).is_none() {
                    return Err("an init/query failure needs error with a CUresult code".to_owned());
                }
            }
            ProbeStatus::DriverSymbolMissing => {
                if self.error.as_ref().is_none_or(|e| e.code.is_some()) {
                    return Err("a symbol-missing report needs error with code null".to_owned());
                }
            }
            _ => {
                if self.error.is_some() || self.driver_version.is_some() {
                    return Err(
                        "a report without a loaded driver carries no driver_version or error"
                            .to_owned(),
                    );
                }
            }
        }
        Ok(())
    }
}

/// Parse a probe's standard output strictly: one UTF-8 JSON document, the exact schema.
pub fn parse_probe_output(bytes: &[u8]) -> Result<ProbeReport, Refusal> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        Refusal::new(
            ReasonCode::ProbeInvalidJson,
            "the probe's output is not UTF-8",
        )
    })?;
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        Refusal::new(
            ReasonCode::ProbeInvalidJson,
            format!("the probe's output is not one JSON document: {e}"),
        )
    })?;
    let report: ProbeReport = serde_json::from_value(value).map_err(|e| {
        Refusal::new(
            ReasonCode::ProbeSchemaMismatch,
            format!("the probe's JSON does not follow {PROBE_SCHEMA}: {e}"),
        )
    })?;
    report.validate().map_err(|e| {
        Refusal::new(
            ReasonCode::ProbeSchemaMismatch,
            format!("the probe's JSON does not follow {PROBE_SCHEMA}: {e}"),
        )
    })?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"{"schema":"rextio-cuda-probe/1","status":"ok","driver_version":12080,"device_count":1,"devices":[{"ordinal":0,"name":"NVIDIA H200","compute_capability":{"major":9,"minor":0}}],"error":null}"#;

    #[test]
    fn a_well_formed_report_parses() {
        let r = parse_probe_output(OK.as_bytes()).unwrap();
        assert_eq!(r, ProbeReport::ok(12080, &[("NVIDIA H200", 9, 0)]));
        let again = serde_json::to_string(&r).unwrap();
        assert_eq!(
            again, OK,
            "serialisation is the fixed schema, field order included"
        );
        let r = parse_probe_output(format!("\n{OK}\n").as_bytes()).unwrap();
        assert_eq!(r.status, ProbeStatus::Ok);
    }

    #[test]
    fn each_status_round_trips() {
        let mut init = ProbeReport::with_status(ProbeStatus::DriverInitFailed);
        init.error = Some(ProbeErrorDetail {
            entry_point: "cuInit".into(),
            code: Some(999),
        });
        let mut sym = ProbeReport::with_status(ProbeStatus::DriverSymbolMissing);
        sym.error = Some(ProbeErrorDetail {
            entry_point: "cuDeviceGetName".into(),
            code: None,
        });
        for report in [
            ProbeReport::ok(12000, &[]),
            ProbeReport::with_status(ProbeStatus::DriverMissing),
            ProbeReport::with_status(ProbeStatus::DriverUntrusted),
            ProbeReport::with_status(ProbeStatus::DriverLoadFailed),
            ProbeReport::with_status(ProbeStatus::PlatformUnsupported),
            init,
            sym,
        ] {
            let json = serde_json::to_string(&report).unwrap();
            assert_eq!(
                parse_probe_output(json.as_bytes()).unwrap(),
                report,
                "{json}"
            );
        }
    }

    #[test]
    fn malformed_outputs_have_stable_reason_codes() {
        let edit = |from: &str, to: &str| OK.replacen(from, to, 1);
        let table: Vec<(String, ReasonCode)> = vec![
            (String::new(), ReasonCode::ProbeInvalidJson),
            ("not json".into(), ReasonCode::ProbeInvalidJson),
            (format!("{OK}{OK}"), ReasonCode::ProbeInvalidJson),
            (format!("{OK} trailing"), ReasonCode::ProbeInvalidJson),
            ("[1,2]".into(), ReasonCode::ProbeSchemaMismatch),
            ("{}".into(), ReasonCode::ProbeSchemaMismatch),
            (edit("rextio-cuda-probe/1", "rextio-cuda-probe/2"), ReasonCode::ProbeSchemaMismatch),
            (edit("\"error\":null", "\"error\":null,\"extra\":1"), ReasonCode::ProbeSchemaMismatch),
            (edit("\"minor\":0}", "\"minor\":0,\"uuid\":\"x\"}"), ReasonCode::ProbeSchemaMismatch),
            (edit("\"status\":\"ok\"", "\"status\":\"fine\""), ReasonCode::ProbeSchemaMismatch),
            (edit("12080", "\"12080\""), ReasonCode::ProbeSchemaMismatch),
            (edit("12080", "-1"), ReasonCode::ProbeSchemaMismatch),
            (edit("12080", "null"), ReasonCode::ProbeSchemaMismatch),
            (edit("\"device_count\":1", "\"device_count\":2"), ReasonCode::ProbeSchemaMismatch),
            (edit("\"ordinal\":0", "\"ordinal\":1"), ReasonCode::ProbeSchemaMismatch),
            (edit("NVIDIA H200", ""), ReasonCode::ProbeSchemaMismatch),
            (edit("NVIDIA H200", "bad\\u0007name"), ReasonCode::ProbeSchemaMismatch),
            (edit("\"major\":9", "\"major\":0"), ReasonCode::ProbeSchemaMismatch),
            (edit("\"minor\":0", "\"minor\":10"), ReasonCode::ProbeSchemaMismatch),
            (edit("\"error\":null", "\"error\":{\"entry_point\":\"cuInit\",\"code\":1}"), ReasonCode::ProbeSchemaMismatch),
            (edit("\"status\":\"ok\"", "\"status\":\"driver-missing\""), ReasonCode::ProbeSchemaMismatch),
            (
                r#"{"schema":"rextio-cuda-probe/1","status":"driver-init-failed","driver_version":null,"device_count":0,"devices":[],"error":{"entry_point":"cuMemAlloc_v2","code":2}}"#.into(),
                ReasonCode::ProbeSchemaMismatch,
            ),
            (
                r#"{"schema":"rextio-cuda-probe/1","status":"driver-init-failed","driver_version":null,"device_count":0,"devices":[],"error":null}"#.into(),
                ReasonCode::ProbeSchemaMismatch,
            ),
            (
                r#"{"schema":"rextio-cuda-probe/1","status":"driver-missing","driver_version":12000,"device_count":0,"devices":[],"error":null}"#.into(),
                ReasonCode::ProbeSchemaMismatch,
            ),
        ];
        for (i, (text, expected)) in table.into_iter().enumerate() {
            let err = parse_probe_output(text.as_bytes()).unwrap_err();
            assert_eq!(err.reason, expected, "row {i}: {text}: {err}");
        }
        let err = parse_probe_output(&[0xff, 0xfe]).unwrap_err();
        assert_eq!(err.reason, ReasonCode::ProbeInvalidJson);
    }
}

//! `CudaDeviceProvider`: selection, preflight in a fixed order, contributions, lock record.

use crate::capability::{
    manifest, CudaCapability, HostPlatform, PROVIDER_API_VERSION, PROVIDER_ID,
};
use crate::contribution::CudaBuildContribution;
use crate::options::{validate_options, CudaOptions};
use crate::probe::{ProbeReport, ProbeRunner, ProbeStatus, ProcessProbeRunner};
use crate::reason::{ReasonCode, Refusal};
use crate::report::{CudaPreflightReport, False, LockRecord, ReadyObservations, RequirementCheck};
use crate::requirements::{check_requirements, reuse_contract};
use crate::toolkit::validate_toolkit;
use rextio_plugin_api::{
    BuildContribution, DeviceProvider, PreflightRequest, PreflightResult, ProviderError,
    ProviderManifest,
};
use std::collections::BTreeMap;
use std::fmt;

/// A preflight request: the plugin API's, whose `domain` (device provider API 1.2) carries the
/// domain plugins' requirements; `None` skips that check (recorded as `not-supplied`).
pub type CudaPreflightRequest = PreflightRequest;

/// The CUDA device provider.
pub struct CudaDeviceProvider {
    manifest: ProviderManifest,
    runner: Box<dyn ProbeRunner>,
    host: HostPlatform,
}

impl fmt::Debug for CudaDeviceProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaDeviceProvider")
            .field("runner", &self.runner)
            .field("host", &self.host)
            .finish()
    }
}

impl Default for CudaDeviceProvider {
    fn default() -> Self {
        CudaDeviceProvider::new()
    }
}

fn driver_text(version: u32) -> String {
    format!(
        "{version} (CUDA {}.{})",
        version / 1000,
        (version % 1000) / 10
    )
}

fn probe_status_refusal(report: &ProbeReport) -> Option<Refusal> {
    let call = || {
        report
            .error
            .as_ref()
            .map(|e| match e.code {
                Some(code) => format!(
                    "{} returned CUresult {code}{}",
                    e.entry_point,
                    crate::ffi::result_name(code)
                        .map(|n| format!(" ({n})"))
                        .unwrap_or_default()
                ),
                None => format!("{} is missing", e.entry_point),
            })
            .unwrap_or_default()
    };
    let (code, message) = match report.status {
        ProbeStatus::Ok => return None,
        ProbeStatus::DriverMissing => (
            ReasonCode::DriverMissing,
            "no CUDA driver (libcuda.so.1) exists at any reviewed system path; install the NVIDIA driver, or run `rextio check` on a GPU host".to_owned(),
        ),
        ProbeStatus::DriverUntrusted => (
            ReasonCode::DriverUntrusted,
            "the CUDA driver image lies outside the reviewed system roots or it or a directory above it is not root-owned or is group/world-writable".to_owned(),
        ),
        ProbeStatus::DriverLoadFailed => (
            ReasonCode::DriverLoadFailed,
            "the CUDA driver image exists but the dynamic loader refused it".to_owned(),
        ),
        ProbeStatus::DriverSymbolMissing => (
            ReasonCode::DriverSymbolMissing,
            format!("the CUDA driver lacks an inventory entry point: {}", call()),
        ),
        ProbeStatus::DriverInitFailed => (
            ReasonCode::DriverInitFailed,
            format!("the CUDA driver failed to initialise: {}", call()),
        ),
        ProbeStatus::DriverQueryFailed => (
            ReasonCode::DriverQueryFailed,
            format!("a CUDA driver inventory query failed: {}", call()),
        ),
        ProbeStatus::PlatformUnsupported => (
            ReasonCode::ProbePlatformUnsupported,
            "the probe has no reviewed CUDA driver loader for this platform".to_owned(),
        ),
    };
    Some(Refusal::new(code, message))
}

impl CudaDeviceProvider {
    /// The production provider: probe subprocess under the production trust policy, this host.
    pub fn new() -> CudaDeviceProvider {
        CudaDeviceProvider::with_probe_runner(ProcessProbeRunner::production())
    }

    /// A provider with another probe runner: a [`crate::SyntheticProbe`] for tests and CI
    /// without a GPU, or a [`ProcessProbeRunner`] with a test trust policy. This is a
    /// programmatic/manual-test boundary: production Core resolution uses [`Self::new`].
    pub fn with_probe_runner(runner: impl ProbeRunner + 'static) -> CudaDeviceProvider {
        CudaDeviceProvider {
            manifest: manifest(),
            runner: Box::new(runner),
            host: HostPlatform::current(),
        }
    }

    /// The same provider answering as if it ran on `host` (tests of the platform check).
    pub fn with_host_platform(mut self, host: HostPlatform) -> CudaDeviceProvider {
        self.host = host;
        self
    }

    /// Steps 1-3 of preflight: capability, host platform, options. No I/O.
    pub fn validate_selection(
        &self,
        capability: &str,
        options: &BTreeMap<String, String>,
    ) -> Result<(CudaCapability, CudaOptions), Refusal> {
        if capability.trim().is_empty() {
            return Err(Refusal::new(
                ReasonCode::MissingCapability,
                format!(
                    "no device capability selected; set [target] device_capability to one of {}",
                    self.manifest.capabilities.join(", ")
                ),
            ));
        }
        let cap = CudaCapability::parse(capability).ok_or_else(|| {
            Refusal::new(
                ReasonCode::UnknownCapability,
                format!(
                    "device_capability `{}` is not provided by rextio-device-cuda; expected one of {}",
                    capability.escape_debug(),
                    self.manifest.capabilities.join(", ")
                ),
            )
        })?;
        if cap.platform() != self.host {
            return Err(Refusal::new(
                ReasonCode::HostPlatformMismatch,
                format!(
                    "{cap} targets {} but this host is {}; select the capability of this host",
                    cap.platform(),
                    self.host
                ),
            ));
        }
        let options = validate_options(cap, options)?;
        Ok((cap, options))
    }

    /// Run preflight and return the typed report. Never panics; every failure is a status and
    /// a reason code.
    ///
    /// Order: (1) capability selected and known, (2) host platform, (3) options, (4) domain
    /// requirements when supplied, (5) probe executable trust and run, (6) probe status,
    /// (7) driver floor, (8) device ordinal, (9) SM, (10) toolkit root when configured. The
    /// first failing step decides the reason code.
    pub fn preflight_report(&self, req: &CudaPreflightRequest) -> CudaPreflightReport {
        let mut lock = None;
        let outcome = self.run_preflight(req, &mut lock);
        let (reason, message, observations) = match outcome {
            Ok((observations, message)) => (ReasonCode::Ready, message, Some(observations)),
            Err(refusal) => (refusal.reason, refusal.message, None),
        };
        tracing::debug!(capability = %req.capability, reason = %reason, "cuda preflight");
        CudaPreflightReport {
            provider: PROVIDER_ID.to_owned(),
            capability: req.capability.clone(),
            status: reason.status(),
            reason_code: reason,
            message,
            observations,
            lock,
            support_claim: False,
        }
    }

    fn run_preflight(
        &self,
        req: &CudaPreflightRequest,
        lock: &mut Option<LockRecord>,
    ) -> Result<(ReadyObservations, String), Refusal> {
        let (cap, options) = self.validate_selection(&req.capability, &req.options)?;
        *lock = Some(LockRecord::checked(cap, &req.options, None));
        let domain_requirements = match &req.domain {
            Some(domain) => {
                check_requirements(cap, options.sm, domain)?;
                *lock = Some(LockRecord::checked(cap, &req.options, Some(domain)));
                RequirementCheck::Checked
            }
            None => RequirementCheck::NotSupplied,
        };
        let report = self.runner.run(&options.probe_executable)?;
        if let Some(refusal) = probe_status_refusal(&report) {
            return Err(refusal);
        }
        let driver_version = report.driver_version.unwrap_or_default();
        if driver_version < options.min_driver_version {
            return Err(Refusal::new(
                ReasonCode::DriverBelowFloor,
                format!(
                    "the CUDA driver is {}, below the effective minimum {}; update the NVIDIA driver",
                    driver_text(driver_version),
                    driver_text(options.min_driver_version)
                ),
            ));
        }
        if report.devices.is_empty() {
            return Err(Refusal::new(
                ReasonCode::NoDevice,
                "the CUDA driver sees no device (check that the GPU is visible to this host or container)",
            ));
        }
        let device = report
            .devices
            .iter()
            .find(|d| d.ordinal == options.device_ordinal)
            .ok_or_else(|| {
                Refusal::new(
                    ReasonCode::DeviceOrdinalOutOfRange,
                    format!(
                        "device_ordinal = {} but the driver sees {} device(s) (ordinals 0..{})",
                        options.device_ordinal,
                        report.device_count,
                        report.device_count.saturating_sub(1)
                    ),
                )
            })?;
        if !device.compute_capability.matches(options.sm) {
            let cc = device.compute_capability;
            return Err(Refusal::new(
                ReasonCode::SmMismatch,
                format!(
                    "device {} ({}) has compute capability {}.{} (sm_{}{}) but sm = \"{}\" was selected; select the device's architecture",
                    device.ordinal,
                    device.name,
                    cc.major,
                    cc.minor,
                    cc.major,
                    cc.minor,
                    options.sm
                ),
            ));
        }
        let toolkit_version = match (&options.toolkit_root, options.min_toolkit_version) {
            (Some(root), Some(floor)) => Some(validate_toolkit(root, floor)?),
            _ => None,
        };
        let message = format!(
            "{cap} is ready on device {} ({}, {}) with driver {} (minimum {}); support_claim stays false",
            device.ordinal,
            device.name,
            options.sm,
            driver_text(driver_version),
            driver_text(options.min_driver_version)
        );
        Ok((
            ReadyObservations {
                lane: cap.lane(),
                probe: self.runner.provenance(),
                device_ordinal: device.ordinal,
                device_name: device.name.clone(),
                sm: options.sm,
                driver_version,
                min_driver_version: options.min_driver_version,
                min_toolkit_version: options.min_toolkit_version,
                toolkit_version,
                domain_requirements,
                required_unverified_runtimes: reuse_contract(cap)
                    .map(|c| c.runtime_requirements())
                    .unwrap_or_default(),
                kernel_executed: False,
                certification_ready: False,
            },
            message,
        ))
    }

    /// Steps 1-4 of preflight without the probe: the selection, then the domain requirements
    /// when supplied.
    fn checked_selection(&self, req: &CudaPreflightRequest) -> Result<CudaCapability, Refusal> {
        let (cap, options) = self.validate_selection(&req.capability, &req.options)?;
        if let Some(domain) = &req.domain {
            check_requirements(cap, options.sm, domain)?;
        }
        Ok(cap)
    }

    /// The typed build contribution; validates the selection (steps 1-4) but runs no probe.
    pub fn cuda_build_contribution(
        &self,
        req: &CudaPreflightRequest,
    ) -> Result<CudaBuildContribution, Refusal> {
        Ok(CudaBuildContribution::for_capability(
            self.checked_selection(req)?,
        ))
    }

    /// The lock record of a valid selection: names and digest of the options (never their
    /// values), the domain requirements checked (when supplied), the lane's contribution.
    pub fn lock_record(&self, req: &CudaPreflightRequest) -> Result<LockRecord, Refusal> {
        let cap = self.checked_selection(req)?;
        Ok(LockRecord::checked(cap, &req.options, req.domain.as_ref()))
    }
}

impl DeviceProvider for CudaDeviceProvider {
    fn id(&self) -> &str {
        PROVIDER_ID
    }

    fn api_version(&self) -> &str {
        PROVIDER_API_VERSION
    }

    fn manifest(&self) -> &ProviderManifest {
        &self.manifest
    }

    fn preflight(&self, req: &PreflightRequest) -> PreflightResult {
        self.preflight_report(req).to_result()
    }

    fn build_contribution(
        &self,
        req: &PreflightRequest,
    ) -> Result<BuildContribution, ProviderError> {
        self.cuda_build_contribution(req)
            .map(|c| c.to_api())
            .map_err(|refusal| ProviderError {
                provider: PROVIDER_ID.to_owned(),
                message: refusal.to_string(),
            })
    }

    fn reason_status(&self, reason_code: &str) -> Option<String> {
        crate::reason::ReasonCode::parse(reason_code).map(|c| c.status().as_str().to_owned())
    }

    fn lock_record(&self, req: &PreflightRequest) -> Option<serde_json::Value> {
        let record = CudaDeviceProvider::lock_record(self, req).ok()?;
        serde_json::to_value(record).ok()
    }
}

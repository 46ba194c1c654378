//! # rextio-device-cuda: the CUDA device provider
//!
//! A device provider (Device Provider API 1.2, [`rextio_plugin_api::DeviceProvider`]) that decides
//! whether a CUDA capability may be used on this host, and owns the raw CUDA runtime the
//! raw-driver lanes use. It is not a lowering plugin: it claims no Python and knows nothing of
//! PyTorch or TensorFlow semantics. Every record it produces serialises `support_claim: false`;
//! a ready preflight is not certification evidence and executes no kernel.
//!
//! ## Capabilities
//!
//! | capability | host | lane |
//! | --- | --- | --- |
//! | `cuda-linux-x86_64` | Linux x86_64 | raw driver (context, stream, allocation) |
//! | `cuda-linux-aarch64` | Linux AArch64 | raw driver |
//! | `cuda-windows-x86_64` | Windows x86_64 | raw driver (probe loader not implemented yet) |
//! | `cuda-libtorch-linux-x86_64` | Linux x86_64 | build-only reuse of PyTorch's libtorch runtime |
//! | `cuda-tensorflow-tfe-linux-x86_64` | Linux x86_64 | build-only reuse of TensorFlow's TFE runtime |
//!
//! The reuse lanes accept one `gpu:0` domain requirement with frozen facts (see
//! [`requirements::LIBTORCH_CONTRACT`], [`requirements::TENSORFLOW_TFE_CONTRACT`]), contribute
//! only borrow/validate resource contracts, and reject toolkit options.
//!
//! ## Selection: explicit only
//!
//! ```toml
//! [target]
//! device_provider = "rextio-device-cuda"
//! device_capability = "cuda-linux-x86_64"
//!
//! [target.device_options]
//! probe_executable = "/absolute/path/to/rextio-cuda-probe"   # required
//! device_ordinal = "0"                                       # required
//! sm = "sm_80"                                               # required
//! # min_driver_version = "12040"    # raises the driver floor 12000, never lowers it
//! # min_toolkit_version = "12.4"    # raw lanes: raises the toolkit floor 12.0
//! # toolkit_root = "/usr/local/cuda"  # raw lanes: optional validation only
//! ```
//!
//! There is no `PATH`, registry, common-directory or environment discovery and no automatic
//! selection. Raw option values stay in memory: reports and the [`LockRecord`] carry option
//! names plus one SHA-256 digest ([`options_digest`]), and messages never echo a path option.
//!
//! ## Preflight order
//!
//! [`CudaDeviceProvider::preflight_report`] runs these steps; the first that fails decides the
//! [`ReasonCode`] and with it the [`PreflightStatus`]:
//!
//! 1. a capability is selected and is in the manifest;
//! 2. the capability's platform is this host's;
//! 3. options: no unknown names, no toolkit option on a reuse lane, the required ones present,
//!    then each value (`probe_executable` absolute, ordinal, `sm`, floors, `toolkit_root`
//!    absolute);
//! 4. the domain requirements, when the host supplies them (`PreflightRequest::domain`, device
//!    provider API 1.2);
//! 5. the probe executable: present, regular, executable, not group/world-writable
//!    nor any ancestor, owned by root or the current user; then run with an empty environment,
//!    a deadline and an output cap, and parsed strictly ([`probe`]);
//! 6. the probe's status (driver present, trusted, loadable, initialised);
//! 7. the driver version against the effective floor (max of 12000 and `min_driver_version`);
//! 8. a device exists at `device_ordinal`;
//! 9. its compute capability equals `sm`;
//! 10. `toolkit_root`, when configured (raw lanes): `version.json` names one toolkit/runtime
//!     version at or above the effective toolkit floor.
//!
//! A machine without a driver or probe gets a clear status and code (`probe-missing`,
//! `driver-missing`, ...), never a panic.
//!
//! ## Reason codes
//!
//! | code | status | meaning |
//! | --- | --- | --- |
//! | `ready` | ready | every check passed (support_claim stays false) |
//! | `missing-capability` | invalid-configuration | no `device_capability` selected |
//! | `unknown-capability` | invalid-configuration | not a manifest capability |
//! | `unknown-option` | invalid-configuration | an option the provider does not define |
//! | `missing-option` | invalid-configuration | `probe_executable`, `device_ordinal` or `sm` absent/empty |
//! | `invalid-device-ordinal` | invalid-configuration | not a decimal ordinal |
//! | `invalid-sm` | invalid-configuration | not `sm_NN` (compute capability 5.0+) |
//! | `invalid-driver-floor` | invalid-configuration | `min_driver_version` not a decimal version |
//! | `driver-floor-below-manifest` | invalid-configuration | `min_driver_version` below 12000 |
//! | `invalid-toolkit-floor` | invalid-configuration | `min_toolkit_version` not `MAJOR.MINOR` |
//! | `toolkit-floor-below-manifest` | invalid-configuration | `min_toolkit_version` below 12.0 |
//! | `toolkit-option-rejected` | invalid-configuration | toolkit option on a reuse lane |
//! | `toolkit-root-not-absolute` | invalid-configuration | relative `toolkit_root` |
//! | `host-platform-mismatch` | unsupported | capability for another OS/architecture |
//! | `requirement-missing` | unsupported | no domain device requirement |
//! | `requirement-ambiguous` | unsupported | more than one requirement on a reuse lane |
//! | `requirement-mismatch` | unsupported | requirement differs from the frozen contract |
//! | `requirement-sm-mismatch` | unsupported | requirement's SM differs from `sm` |
//! | `runtime-pin-mismatch` | unsupported | runtime pins differ from the frozen contract |
//! | `probe-not-absolute` | invalid-configuration | relative `probe_executable` |
//! | `probe-missing` | unavailable | nothing at `probe_executable` |
//! | `probe-inspect-failed` | unavailable | an I/O error reading the probe or its directories |
//! | `probe-not-file` | invalid-configuration | not a regular file |
//! | `probe-not-executable` | invalid-configuration | no execute bit |
//! | `probe-untrusted-permissions` | untrusted | file or ancestor group/world-writable |
//! | `probe-untrusted-owner` | untrusted | file or ancestor owned by someone else |
//! | `probe-spawn-failed` | probe-failed | could not be started |
//! | `probe-timeout` | probe-failed | killed at the deadline |
//! | `probe-output-too-large` | probe-failed | wrote more than the cap |
//! | `probe-exit-failure` | probe-failed | nonzero exit or signal |
//! | `probe-invalid-json` | probe-failed | not one UTF-8 JSON document |
//! | `probe-schema-mismatch` | probe-failed | not the `rextio-cuda-probe/1` schema |
//! | `probe-platform-unsupported` | unsupported | no reviewed driver loader here |
//! | `driver-missing` | unavailable | no `libcuda.so.1` at a reviewed path |
//! | `driver-untrusted` | untrusted | driver outside reviewed roots or mutable |
//! | `driver-load-failed` | unavailable | the loader refused the image |
//! | `driver-symbol-missing` | unavailable | an inventory entry point is missing |
//! | `driver-init-failed` | unavailable | `cuInit` failed (CUresult in the message) |
//! | `driver-query-failed` | unavailable | an inventory query failed |
//! | `driver-below-floor` | unavailable | driver older than the effective floor |
//! | `no-device` | unavailable | the driver sees no device |
//! | `device-ordinal-out-of-range` | unavailable | no device at `device_ordinal` |
//! | `sm-mismatch` | unavailable | device architecture differs from `sm` |
//! | `toolkit-root-missing` | unavailable | `toolkit_root` not a directory |
//! | `toolkit-version-unreadable` | unavailable | no usable `version.json` |
//! | `toolkit-version-inconsistent` | unavailable | toolkit and cudart versions differ |
//! | `toolkit-below-floor` | unavailable | toolkit older than the effective floor |
//!
//! [`ReasonCode::ALL`] is the same table in code; a test keeps the two in step.
//!
//! ## Host use
//!
//! ```
//! use rextio_device_cuda::{CudaDeviceProvider, ProbeReport, SyntheticProbe};
//! use rextio_plugin_api::{DeviceProvider, PreflightRequest, PreflightResult};
//!
//! // Production: `CudaDeviceProvider::new()` runs the configured probe. Without a GPU (CI),
//! // a synthetic report stands in for the probe; observations record `probe: "synthetic"`.
//! let provider = CudaDeviceProvider::with_probe_runner(SyntheticProbe::new(
//!     ProbeReport::ok(12080, &[("NVIDIA A100", 8, 0)]),
//! ))
//! .with_host_platform(rextio_device_cuda::HostPlatform::new("linux", "x86_64"));
//! let req = PreflightRequest {
//!     capability: "cuda-linux-x86_64".into(),
//!     options: [("probe_executable", "/opt/rextio/rextio-cuda-probe"), ("device_ordinal", "0"), ("sm", "sm_80")]
//!         .into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect(),
//!     // The host fills this with the plugins' requirements; `None` skips step 4.
//!     domain: None,
//! };
//! assert!(matches!(provider.preflight(&req), PreflightResult::Ready(_)));
//! let report = provider.preflight_report(&req);
//! assert_eq!(report.reason_code.as_str(), "ready");
//! ```
//!
//! ## Testing without a GPU
//!
//! No GPU exists in CI. Tests drive preflight with synthetic probe reports
//! ([`SyntheticProbe`]) and with real subprocesses (small shell scripts in a temporary directory
//! standing in for the probe, run by [`ProcessProbeRunner`] under a test trust policy), and
//! drive the [`runtime`] and the probe's inventory logic with fake driver function tables
//! (plain `extern "C"` functions that record their calls). The real probe binary is run too; on
//! a host without a driver it reports `driver-missing`.

// What a raw-driver lane contributes to a generated crate: this crate's embedded sources.
rextio_plugin_api::own_crate_source!();

pub mod capability;
pub mod contribution;
pub mod ffi;
pub mod loader;
pub mod options;
pub mod probe;
pub mod provider;
pub mod reason;
pub mod report;
pub mod requirements;
pub mod runtime;
pub mod toolkit;
pub mod trust;

pub use capability::{
    manifest, CudaCapability, HostPlatform, Lane, ToolkitVersion, MANIFEST_MIN_DRIVER_VERSION,
    MANIFEST_MIN_TOOLKIT_VERSION, PROVIDER_API_VERSION, PROVIDER_ID, PROVIDER_VERSION,
};
pub use contribution::{CudaBuildContribution, ResourceAccess, ResourceContract, ResourceOwner};
pub use options::{CudaOptions, Sm, OPTION_NAMES};
pub use probe::{
    ProbeLimits, ProbeProvenance, ProbeReport, ProbeRunner, ProbeStatus, ProcessProbeRunner,
    SyntheticProbe, PROBE_SCHEMA,
};
pub use provider::{CudaDeviceProvider, CudaPreflightRequest};
pub use reason::{PreflightStatus, ReasonCode, Refusal};
pub use report::{
    options_digest, CudaPreflightReport, False, LockRecord, ReadyObservations, RequirementCheck,
};
pub use requirements::{CudaDeviceRequirement, DomainRequirements, RuntimeRequirement};
pub use trust::{OwnerRule, TrustPolicy};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_docs_list_every_reason_code_with_its_status() {
        let docs = include_str!("lib.rs");
        for &code in ReasonCode::ALL {
            let row = format!("| `{}` | {} |", code.as_str(), code.status());
            assert!(docs.contains(&row), "crate docs lack the row {row}");
        }
        let rows = docs
            .lines()
            .filter(|l| l.starts_with("//! | `") && !l.contains("`cuda-"))
            .count();
        assert_eq!(
            rows,
            ReasonCode::ALL.len(),
            "docs list a code that does not exist"
        );
    }
}

//! Domain requirements: what a domain plugin (rextio-torch, rextio-tensorflow) emits for a CUDA
//! route, and the frozen contracts of the framework-reuse lanes.
//!
//! The records are the plugin API's (`DeviceSpec`, `RuntimePin`, `DomainRequirements`): the host
//! gathers them from the plugins and passes them in `PreflightRequest::domain` (device provider
//! API 1.2).

use crate::capability::{CudaCapability, Lane};
use crate::options::Sm;
use crate::reason::{ReasonCode, Refusal};
use std::collections::BTreeSet;

/// A CUDA device requirement emitted by a domain plugin: the plugin API's device facts.
pub type CudaDeviceRequirement = rextio_plugin_api::DeviceSpec;

/// A runtime pin emitted with the requirement (`tch 0.26.0 [cuda]`): the plugin API's pin.
pub type RuntimeRequirement = rextio_plugin_api::RuntimePin;

/// Everything the domain plugins emitted for the target, as the host gathers it.
pub type DomainRequirements = rextio_plugin_api::DomainRequirements;

/// The frozen facts of a framework-reuse lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReuseContract {
    /// `runtime` of the device requirement.
    pub runtime: &'static str,
    /// Exact feature set.
    pub features: &'static [&'static str],
    /// Exact layout set.
    pub layouts: &'static [&'static str],
    /// Exact memory-space set.
    pub memory_spaces: &'static [&'static str],
    /// Exact runtime pins: (name, version, tags).
    pub pins: &'static [(&'static str, &'static str, &'static [&'static str])],
}

/// The logical device every reuse lane accepts.
pub const REUSE_LOGICAL_DEVICE: &str = "gpu:0";
/// The backend every requirement names.
pub const CUDA_BACKEND: &str = "cuda";

/// The libtorch reuse lane. The pins follow this workspace's rextio-torch (tch 0.26.0 with
/// PyTorch 2.13.0), not the 2.11.0 / 0.24.0 of the original provider release.
pub const LIBTORCH_CONTRACT: ReuseContract = ReuseContract {
    runtime: "libtorch",
    features: &["inference", "no-grad"],
    layouts: &["strided"],
    memory_spaces: &["device"],
    pins: &[
        ("libtorch", "2.13.0", &["cuda", "pytorch-wheel"]),
        ("tch", "0.26.0", &["cuda"]),
    ],
};

/// The TensorFlow TFE reuse lane (TensorFlow 2.21.0, CPython 3.11 private eager ABI).
pub const TENSORFLOW_TFE_CONTRACT: ReuseContract = ReuseContract {
    runtime: "tensorflow-tfe",
    features: &["eager", "inference", "no-grad"],
    layouts: &["dense"],
    memory_spaces: &["device"],
    pins: &[
        (
            "tensorflow",
            "2.21.0",
            &["cuda", "python-wheel", "tfe-c-api"],
        ),
        ("cpython", "3.11", &["private-eager-abi"]),
    ],
};

/// The frozen contract of a capability's lane, if it is a reuse lane.
pub fn reuse_contract(capability: CudaCapability) -> Option<&'static ReuseContract> {
    match capability.lane() {
        Lane::RawDriver => None,
        Lane::LibtorchReuse => Some(&LIBTORCH_CONTRACT),
        Lane::TensorflowTfeReuse => Some(&TENSORFLOW_TFE_CONTRACT),
    }
}

impl ReuseContract {
    /// The pins as records (reported as required-but-unverified facts).
    pub fn runtime_requirements(&self) -> Vec<RuntimeRequirement> {
        self.pins
            .iter()
            .map(|(name, version, tags)| RuntimeRequirement::new(name, version, tags))
            .collect()
    }

    /// The device requirement a domain plugin must emit for this lane (no SM cross-check).
    pub fn device_requirement(&self) -> CudaDeviceRequirement {
        CudaDeviceRequirement::reusing(
            REUSE_LOGICAL_DEVICE,
            CUDA_BACKEND,
            self.runtime,
            self.features,
            self.layouts,
            self.memory_spaces,
        )
    }
}

/// Check the domain requirements against the capability and the selected SM.
pub fn check_requirements(
    capability: CudaCapability,
    sm: Sm,
    domain: &DomainRequirements,
) -> Result<(), Refusal> {
    let contract = reuse_contract(capability);
    match (contract, domain.devices.len()) {
        (_, 0) => {
            return Err(Refusal::new(
                ReasonCode::RequirementMissing,
                format!(
                    "no domain plugin emitted a CUDA device requirement for {capability}; configuration alone does not turn CPU Python into GPU code"
                ),
            ))
        }
        (Some(_), n) if n > 1 => {
            return Err(Refusal::new(
                ReasonCode::RequirementAmbiguous,
                format!("{capability} accepts exactly one gpu:0 device requirement, found {n}"),
            ))
        }
        _ => {}
    }
    for req in &domain.devices {
        let mismatch = match contract {
            Some(c) => contract_mismatch(c, req),
            None => raw_mismatch(req),
        };
        if let Some(what) = mismatch {
            return Err(Refusal::new(
                ReasonCode::RequirementMismatch,
                format!(
                    "the device requirement for {capability} does not match its contract: {what}"
                ),
            ));
        }
        match req.architectures.as_slice() {
            [] => {}
            [one] if Sm::parse(one) == Some(sm) => {}
            other => {
                return Err(Refusal::new(
                    ReasonCode::RequirementSmMismatch,
                    format!(
                        "the device requirement names architectures [{}] but the provider selection is sm = \"{sm}\"; at most one, equal to the selection, is accepted",
                        other.join(", ")
                    ),
                ))
            }
        }
    }
    if let Some(c) = contract {
        let expected: BTreeSet<RuntimeRequirement> = c
            .runtime_requirements()
            .into_iter()
            .map(normalised)
            .collect();
        let found: BTreeSet<RuntimeRequirement> =
            domain.runtimes.iter().cloned().map(normalised).collect();
        if found != expected || found.len() != domain.runtimes.len() {
            let show = |set: &BTreeSet<RuntimeRequirement>| {
                set.iter()
                    .map(|r| format!("{} {} ({})", r.name, r.version, r.tags.join(", ")))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            return Err(Refusal::new(
                ReasonCode::RuntimePinMismatch,
                format!(
                    "{capability} is frozen to [{}], the domain plugin emitted [{}]",
                    show(&expected),
                    show(&found)
                ),
            ));
        }
    }
    Ok(())
}

fn normalised(mut r: RuntimeRequirement) -> RuntimeRequirement {
    r.tags.sort();
    r
}

/// Same elements, no duplicates, order-insensitive.
fn same_set(found: &[String], expected: &[&str]) -> bool {
    let set: BTreeSet<&str> = found.iter().map(String::as_str).collect();
    set.len() == found.len() && set == expected.iter().copied().collect()
}

fn contract_mismatch(c: &ReuseContract, r: &CudaDeviceRequirement) -> Option<String> {
    if r.logical_device != REUSE_LOGICAL_DEVICE {
        return Some(format!(
            "logical_device `{}`, expected `gpu:0`",
            r.logical_device
        ));
    }
    if r.backend != CUDA_BACKEND {
        return Some(format!("backend `{}`, expected `cuda`", r.backend));
    }
    if r.runtime.as_deref() != Some(c.runtime) {
        return Some(format!("runtime {:?}, expected `{}`", r.runtime, c.runtime));
    }
    if !r.reuse_domain_runtime {
        return Some("reuse_domain_runtime is false, expected true".to_owned());
    }
    for (field, found, expected) in [
        ("features", &r.features, c.features),
        ("layouts", &r.layouts, c.layouts),
        ("memory_spaces", &r.memory_spaces, c.memory_spaces),
    ] {
        if !same_set(found, expected) {
            return Some(format!(
                "{field} [{}], expected [{}]",
                found.join(", "),
                expected.join(", ")
            ));
        }
    }
    None
}

fn raw_mismatch(r: &CudaDeviceRequirement) -> Option<String> {
    if r.backend != CUDA_BACKEND {
        return Some(format!("backend `{}`, expected `cuda`", r.backend));
    }
    if r.reuse_domain_runtime || r.runtime.is_some() {
        return Some(
            "a raw-driver lane reuses no framework runtime (runtime must be absent and reuse_domain_runtime false)"
                .to_owned(),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SM80: Sm = Sm { major: 8, minor: 0 };

    fn torch_ok() -> DomainRequirements {
        DomainRequirements {
            devices: vec![LIBTORCH_CONTRACT.device_requirement()],
            runtimes: LIBTORCH_CONTRACT.runtime_requirements(),
        }
    }

    fn tfe_ok() -> DomainRequirements {
        DomainRequirements {
            devices: vec![TENSORFLOW_TFE_CONTRACT.device_requirement()],
            runtimes: TENSORFLOW_TFE_CONTRACT.runtime_requirements(),
        }
    }

    fn raw_ok() -> DomainRequirements {
        DomainRequirements {
            devices: vec![CudaDeviceRequirement {
                runtime: None,
                reuse_domain_runtime: false,
                ..LIBTORCH_CONTRACT.device_requirement()
            }],
            runtimes: vec![],
        }
    }

    #[test]
    fn frozen_contracts_are_accepted_in_any_order() {
        let cap = CudaCapability::LibtorchLinuxX86_64;
        check_requirements(cap, SM80, &torch_ok()).unwrap();
        let mut shuffled = torch_ok();
        shuffled.devices[0].features.reverse();
        shuffled.runtimes.reverse();
        shuffled.runtimes[0].tags.reverse();
        check_requirements(cap, SM80, &shuffled).unwrap();
        let mut with_sm = torch_ok();
        with_sm.devices[0].architectures = vec!["sm_80".into()];
        check_requirements(cap, SM80, &with_sm).unwrap();
        check_requirements(CudaCapability::TensorflowTfeLinuxX86_64, SM80, &tfe_ok()).unwrap();
        check_requirements(CudaCapability::LinuxX86_64, SM80, &raw_ok()).unwrap();
    }

    #[test]
    fn requirement_refusals_have_stable_reason_codes() {
        type Edit = fn(&mut DomainRequirements);
        let torch = CudaCapability::LibtorchLinuxX86_64;
        let tfe = CudaCapability::TensorflowTfeLinuxX86_64;
        type Row = (CudaCapability, fn() -> DomainRequirements, Edit, ReasonCode);
        let table: Vec<Row> = vec![
            (
                torch,
                torch_ok,
                |d| d.devices.clear(),
                ReasonCode::RequirementMissing,
            ),
            (
                CudaCapability::LinuxX86_64,
                raw_ok,
                |d| d.devices.clear(),
                ReasonCode::RequirementMissing,
            ),
            (
                torch,
                torch_ok,
                |d| d.devices.push(d.devices[0].clone()),
                ReasonCode::RequirementAmbiguous,
            ),
            (
                torch,
                torch_ok,
                |d| d.devices[0].logical_device = "gpu:1".into(),
                ReasonCode::RequirementMismatch,
            ),
            (
                torch,
                torch_ok,
                |d| d.devices[0].backend = "rocm".into(),
                ReasonCode::RequirementMismatch,
            ),
            (
                torch,
                torch_ok,
                |d| d.devices[0].runtime = Some("tensorflow-tfe".into()),
                ReasonCode::RequirementMismatch,
            ),
            (
                torch,
                torch_ok,
                |d| d.devices[0].runtime = None,
                ReasonCode::RequirementMismatch,
            ),
            (
                torch,
                torch_ok,
                |d| d.devices[0].reuse_domain_runtime = false,
                ReasonCode::RequirementMismatch,
            ),
            (
                torch,
                torch_ok,
                |d| d.devices[0].features.push("training".into()),
                ReasonCode::RequirementMismatch,
            ),
            (
                torch,
                torch_ok,
                |d| d.devices[0].features.push("no-grad".into()),
                ReasonCode::RequirementMismatch,
            ),
            (
                torch,
                torch_ok,
                |d| d.devices[0].layouts = vec!["sparse".into()],
                ReasonCode::RequirementMismatch,
            ),
            (
                torch,
                torch_ok,
                |d| d.devices[0].memory_spaces = vec!["host".into()],
                ReasonCode::RequirementMismatch,
            ),
            (
                tfe,
                tfe_ok,
                |d| d.devices[0].features.retain(|f| f != "eager"),
                ReasonCode::RequirementMismatch,
            ),
            (
                CudaCapability::LinuxX86_64,
                raw_ok,
                |d| d.devices[0].reuse_domain_runtime = true,
                ReasonCode::RequirementMismatch,
            ),
            (
                torch,
                torch_ok,
                |d| d.devices[0].architectures = vec!["sm_90".into()],
                ReasonCode::RequirementSmMismatch,
            ),
            (
                torch,
                torch_ok,
                |d| d.devices[0].architectures = vec!["sm_80".into(), "sm_80".into()],
                ReasonCode::RequirementSmMismatch,
            ),
            (
                tfe,
                tfe_ok,
                |d| d.devices[0].architectures = vec!["80".into()],
                ReasonCode::RequirementSmMismatch,
            ),
            (
                torch,
                torch_ok,
                |d| d.runtimes[1].version = "0.24.0".into(),
                ReasonCode::RuntimePinMismatch,
            ),
            (
                torch,
                torch_ok,
                |d| d.runtimes.pop().map(drop).unwrap_or_default(),
                ReasonCode::RuntimePinMismatch,
            ),
            (
                torch,
                torch_ok,
                |d| d.runtimes.push(d.runtimes[0].clone()),
                ReasonCode::RuntimePinMismatch,
            ),
            (
                torch,
                torch_ok,
                |d| d.runtimes[0].tags.push("rocm".into()),
                ReasonCode::RuntimePinMismatch,
            ),
            (
                tfe,
                tfe_ok,
                |d| d.runtimes[1].version = "3.12".into(),
                ReasonCode::RuntimePinMismatch,
            ),
            (tfe, torch_ok, |_| {}, ReasonCode::RequirementMismatch),
        ];
        for (i, (cap, base, edit, expected)) in table.into_iter().enumerate() {
            let mut d = base();
            edit(&mut d);
            let err = check_requirements(cap, SM80, &d).unwrap_err();
            assert_eq!(err.reason, expected, "row {i}: {err}");
        }
    }
}

//! Build contributions: what each lane adds to the generated crate and which resources it owns.

use crate::capability::{CudaCapability, Lane, PROVIDER_ID};
use crate::own_source;
use crate::report::False;
use rextio_plugin_api::{BuildContribution, CrateDependency};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Helper id of the packaged raw-driver runtime (`rextio_device_cuda::runtime`).
pub const RUNTIME_HELPER_ID: &str = "rextio-device-cuda/runtime/driver-raii";
/// Id of the runtime check that re-takes the driver inventory before first use.
pub const INVENTORY_CHECK_ID: &str = "rextio-device-cuda/check/driver-inventory";

/// The packaged runtime a raw-driver lane contributes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimePackage {
    /// The crate generated code depends on.
    pub crate_name: String,
    /// The Rust module holding the runtime.
    pub module: String,
    /// The helper id.
    pub helper_id: String,
    /// The inventory check id.
    pub inventory_check_id: String,
}

/// Who owns a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResourceOwner {
    /// This provider's runtime creates and releases it.
    Provider,
    /// The framework (PyTorch, TensorFlow) owns it; the provider only borrows and validates.
    Framework,
}

/// What the provider may do with a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResourceAccess {
    /// Create, use and release exactly once (RAII).
    OwnRaii,
    /// Borrow and validate only: never create, replace, allocate or synchronise.
    BorrowValidate,
}

/// One resource contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceContract {
    /// `context`, `dedicated-stream`, `device-allocation`, `tensor`, `allocator`,
    /// `current-stream`, `eager-context`.
    pub resource: String,
    /// Its owner.
    pub owner: ResourceOwner,
    /// The provider's access.
    pub access: ResourceAccess,
}

/// The typed build contribution of a capability.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaBuildContribution {
    /// Provider id.
    pub provider: String,
    /// The capability.
    pub capability: String,
    /// Its lane.
    pub lane: Lane,
    /// The packaged runtime (raw-driver lanes only).
    pub runtime_package: Option<RuntimePackage>,
    /// Resource contracts.
    pub resources: Vec<ResourceContract>,
    /// Always false.
    pub support_claim: False,
}

fn contract(resource: &str, owner: ResourceOwner, access: ResourceAccess) -> ResourceContract {
    ResourceContract {
        resource: resource.to_owned(),
        owner,
        access,
    }
}

impl CudaBuildContribution {
    /// The contribution of a capability.
    pub fn for_capability(capability: CudaCapability) -> CudaBuildContribution {
        use ResourceAccess::*;
        use ResourceOwner::*;
        let (runtime_package, resources) = match capability.lane() {
            Lane::RawDriver => (
                Some(RuntimePackage {
                    crate_name: "rextio-device-cuda".to_owned(),
                    module: "rextio_device_cuda::runtime".to_owned(),
                    helper_id: RUNTIME_HELPER_ID.to_owned(),
                    inventory_check_id: INVENTORY_CHECK_ID.to_owned(),
                }),
                vec![
                    contract("context", Provider, OwnRaii),
                    contract("dedicated-stream", Provider, OwnRaii),
                    contract("device-allocation", Provider, OwnRaii),
                ],
            ),
            Lane::LibtorchReuse => (
                None,
                vec![
                    contract("tensor", Framework, BorrowValidate),
                    contract("allocator", Framework, BorrowValidate),
                    contract("current-stream", Framework, BorrowValidate),
                ],
            ),
            Lane::TensorflowTfeReuse => (
                None,
                vec![
                    contract("tensor", Framework, BorrowValidate),
                    contract("eager-context", Framework, BorrowValidate),
                ],
            ),
        };
        CudaBuildContribution {
            provider: PROVIDER_ID.to_owned(),
            capability: capability.id().to_owned(),
            lane: capability.lane(),
            runtime_package,
            resources,
            support_claim: False,
        }
    }

    /// The API-level contribution: the raw-driver lanes add this crate (its `runtime` module
    /// needs only libc and loads the driver through [`crate::loader`]); the reuse lanes add
    /// nothing to the build. No environment is added.
    pub fn to_api(&self) -> BuildContribution {
        let dependencies = self
            .runtime_package
            .as_ref()
            .map(|p| CrateDependency {
                name: p.crate_name.clone(),
                source: own_source(),
                features: Vec::new(),
                build_env: Vec::new(),
                forbidden_env: Vec::new(),
            })
            .into_iter()
            .collect();
        BuildContribution {
            env: BTreeMap::new(),
            dependencies,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_lane_contributes_its_resources() {
        for cap in CudaCapability::ALL {
            let c = CudaBuildContribution::for_capability(cap);
            let json = serde_json::to_value(&c).unwrap();
            assert_eq!(json["support_claim"], false);
            let api = c.to_api();
            assert!(api.env.is_empty());
            match cap.lane() {
                Lane::RawDriver => {
                    assert_eq!(api.dependencies.len(), 1);
                    assert_eq!(api.dependencies[0].name, "rextio-device-cuda");
                    assert!(c
                        .resources
                        .iter()
                        .all(|r| r.owner == ResourceOwner::Provider));
                }
                Lane::LibtorchReuse | Lane::TensorflowTfeReuse => {
                    assert!(api.dependencies.is_empty(), "{cap}: no raw runtime package");
                    assert!(c.runtime_package.is_none());
                    assert!(c
                        .resources
                        .iter()
                        .all(|r| r.owner == ResourceOwner::Framework
                            && r.access == ResourceAccess::BorrowValidate));
                }
            }
        }
        let torch = CudaBuildContribution::for_capability(CudaCapability::LibtorchLinuxX86_64);
        let names: Vec<&str> = torch
            .resources
            .iter()
            .map(|r| r.resource.as_str())
            .collect();
        assert_eq!(names, ["tensor", "allocator", "current-stream"]);
        let tfe = CudaBuildContribution::for_capability(CudaCapability::TensorflowTfeLinuxX86_64);
        let names: Vec<&str> = tfe.resources.iter().map(|r| r.resource.as_str()).collect();
        assert_eq!(
            names,
            ["tensor", "eager-context"],
            "no current-stream/event claim"
        );
    }
}

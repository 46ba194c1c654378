//! A backend's declarations as one value, and the `Plugin` methods that only read them.
//!
//! Most of a backend's `Plugin` impl answers from constant data: its id, versions, platform
//! table, rule records, codes, type vocabulary, Python requirements and, for a device lane, which
//! rules and types need a provider. [`Declared`] holds that data and
//! [`declared_plugin_methods!`](crate::declared_plugin_methods) writes those methods, so a
//! backend's impl keeps only what it decides (claim, lower, regions, module init).

use crate::device::{DeviceRequirement, DeviceSpec, RuntimePin};
use crate::diagnostic::CodeDoc;
use crate::kit::RankFamily;
use crate::plugin::{CertificationKit, Coverage, CrateDependency, PlatformCell, PythonRequirement};
use crate::rules::RuleRecord;
use crate::types::{PluginType, TypeKey};

/// What a backend declares about itself.
#[derive(Debug, Clone)]
pub struct Declared {
    /// The plugin id (`rextio-torch`).
    pub id: &'static str,
    /// The plugin API version the backend is written against (`1.15.0`).
    pub api_version: &'static str,
    /// The backend's own version (`env!("CARGO_PKG_VERSION")`).
    pub version: &'static str,
    /// The crate's directory (`env!("CARGO_MANIFEST_DIR")`): its certification kit is
    /// `certify/` there and its marker-types package `python/`.
    pub manifest_dir: &'static str,
    /// The Python package the backend covers; the generated wrapper imports it before loading
    /// the extension.
    pub package: &'static str,
    /// The fully qualified symbols it recognises.
    pub symbols: Vec<String>,
    /// The platform table.
    pub platforms: Vec<PlatformCell>,
    /// Every rule record.
    pub rules: Vec<RuleRecord>,
    /// Every diagnostic code.
    pub codes: &'static [CodeDoc],
    /// The marker-type vocabulary.
    pub types: Vec<PluginType>,
    /// The framework the generated project's environment needs (`torch==2.13.0`).
    pub framework: PythonRequirement,
    /// The marker-types distribution and its version (`("rextio-torch-types", "0.1.0")`),
    /// installed editable from `python/` under [`Declared::manifest_dir`] in a checkout.
    pub types_package: (&'static str, &'static str),
    /// The crate generated code calls (the backend itself with its `runtime` feature).
    pub runtime: CrateDependency,
    /// Support crates the generated crate depends on besides the runtime crate.
    pub support_crates: Vec<CrateDependency>,
    /// The device lane, if the backend has one.
    pub device: Option<DeviceLane>,
}

impl Declared {
    /// The coverage: the package, its symbols, and the package as the one preloaded module.
    pub fn coverage(&self) -> Coverage {
        Coverage {
            packages: vec![self.package.to_owned()],
            symbols: self.symbols.clone(),
            preload_modules: vec![self.package.to_owned()],
        }
    }

    /// The certification kit in the crate's `certify/` directory.
    pub fn certification_kit(&self) -> CertificationKit {
        CertificationKit::in_dir(&format!("{}/certify", self.manifest_dir))
    }

    /// What the generated project's environment needs: the framework, then the marker-types
    /// distribution `distribution==version`, installed editable from the crate's `python/`
    /// directory in a development checkout.
    pub fn python_requirements(&self) -> Vec<PythonRequirement> {
        let (distribution, version) = self.types_package;
        vec![
            self.framework.clone(),
            PythonRequirement {
                requirement: format!("{distribution}=={version}"),
                distribution: distribution.to_owned(),
                editable_path: Some(format!("{}/python", self.manifest_dir)),
            },
        ]
    }

    /// The capability rule `rule_id` needs to certify, if it belongs to the device lane.
    pub fn rule_device(&self, rule_id: &str) -> Option<String> {
        let lane = self.device.as_ref()?;
        lane.rules
            .contains(&rule_id)
            .then(|| lane.capability.to_owned())
    }

    /// What a function using `used` needs from a device provider.
    pub fn device_requirements(&self, used: &[TypeKey]) -> Vec<DeviceRequirement> {
        self.device
            .as_ref()
            .map(|lane| lane.requirements(used))
            .unwrap_or_default()
    }
}

/// A build-only device lane: the marker types that put a function on it, the rules that run on
/// it, and what its generated code asks of the provider.
#[derive(Debug, Clone)]
pub struct DeviceLane {
    /// The lane's marker types.
    pub family: RankFamily,
    /// The lane's rule ids.
    pub rules: &'static [&'static str],
    /// The capability the provider must grant.
    pub capability: &'static str,
    /// Why, without the types (`the CUDA lane runs on cuda:0 through ...`); the requirement's
    /// reason adds the lane's types the function uses.
    pub reason: &'static str,
    /// The device and how generated code uses it.
    pub device: DeviceSpec,
    /// The exact runtimes generated code uses.
    pub runtimes: Vec<RuntimePin>,
}

impl DeviceLane {
    /// One requirement when `used` holds any of the lane's types, none otherwise.
    pub fn requirements(&self, used: &[TypeKey]) -> Vec<DeviceRequirement> {
        let on_lane: Vec<&str> = used
            .iter()
            .filter(|k| self.family.rank(k).is_some())
            .map(|k| k.as_str())
            .collect();
        if on_lane.is_empty() {
            return Vec::new();
        }
        vec![DeviceRequirement {
            capability: self.capability.to_owned(),
            reason: format!("{} ({})", self.reason, on_lane.join(", ")),
            device: Some(self.device.clone()),
            runtimes: self.runtimes.clone(),
        }]
    }
}

/// Writes, inside an `impl Plugin for T` block, the methods that read a [`Declared`] field of
/// `T` (`id`, `api_version`, `version`, `platforms`, `certification_kit`, `coverage`, `rules`,
/// `diagnostic_codes`, `type_vocabulary`, `python_requirements`, `runtime_crate`,
/// `runtime_support_crates`, `rule_device`, `device_requirements`) and `claim`, `lower` and
/// `lower_region` as calls of the named functions, which take the methods' arguments.
///
/// ```ignore
/// impl Plugin for MyPlugin {
///     rextio_plugin_api::declared_plugin_methods!(
///         declared,
///         claim: claim::claim,
///         lower: lower::lower,
///         lower_region: region::lower_region
///     );
///     // Only what the backend decides beyond its declarations follows.
/// }
/// ```
#[macro_export]
macro_rules! declared_plugin_methods {
    ($field:ident, claim: $claim:path, lower: $lower:path, lower_region: $region:path) => {
        $crate::declared_plugin_methods!($field);
        fn claim(&self, site: &$crate::ClaimSite) -> $crate::ClaimOutcome {
            $claim(site)
        }
        fn lower(
            &self,
            site: &$crate::ClaimedSite,
            cx: &mut $crate::LoweringContext,
        ) -> ::std::result::Result<$crate::LoweredExpr, $crate::LowerError> {
            $lower(site, cx)
        }
        fn lower_region(
            &self,
            region: &$crate::Region,
            cx: &$crate::RegionContext,
        ) -> ::std::result::Result<::std::option::Option<$crate::LoweredRegion>, $crate::LowerError>
        {
            $region(region, cx)
        }
    };
    ($field:ident) => {
        fn id(&self) -> &str {
            self.$field.id
        }
        fn api_version(&self) -> &str {
            self.$field.api_version
        }
        fn version(&self) -> &str {
            self.$field.version
        }
        fn platforms(&self) -> ::std::vec::Vec<$crate::PlatformCell> {
            self.$field.platforms.clone()
        }
        fn certification_kit(&self) -> ::std::option::Option<$crate::CertificationKit> {
            ::std::option::Option::Some(self.$field.certification_kit())
        }
        fn coverage(&self) -> $crate::Coverage {
            self.$field.coverage()
        }
        fn rules(&self) -> &[$crate::RuleRecord] {
            &self.$field.rules
        }
        fn diagnostic_codes(&self) -> &[$crate::CodeDoc] {
            self.$field.codes
        }
        fn type_vocabulary(&self) -> &[$crate::PluginType] {
            &self.$field.types
        }
        fn python_requirements(&self) -> ::std::vec::Vec<$crate::PythonRequirement> {
            self.$field.python_requirements()
        }
        fn runtime_crate(&self) -> ::std::option::Option<$crate::CrateDependency> {
            ::std::option::Option::Some(self.$field.runtime.clone())
        }
        fn runtime_support_crates(&self) -> ::std::vec::Vec<$crate::CrateDependency> {
            self.$field.support_crates.clone()
        }
        fn rule_device(&self, rule_id: &str) -> ::std::option::Option<::std::string::String> {
            self.$field.rule_device(rule_id)
        }
        fn device_requirements(
            &self,
            used: &[$crate::TypeKey],
        ) -> ::std::vec::Vec<$crate::DeviceRequirement> {
            self.$field.device_requirements(used)
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    const LANE: RankFamily = RankFamily::new(&["x.Dev1", "x.Dev2"]);

    fn declared() -> Declared {
        Declared {
            id: "x",
            api_version: "1.15.0",
            version: "0.1.0",
            manifest_dir: "/src/x",
            package: "xpkg",
            symbols: vec!["xpkg.f".into()],
            platforms: vec![],
            rules: vec![],
            codes: &[],
            types: vec![],
            framework: PythonRequirement {
                requirement: "xpkg==2.0".into(),
                distribution: "xpkg".into(),
                editable_path: None,
            },
            types_package: ("x-types", "0.1.0"),
            runtime: CrateDependency {
                name: "x".into(),
                source: crate::CrateSource::Path("/src/x".into()),
                features: vec!["runtime".into()],
                build_env: vec![],
                forbidden_env: vec![],
            },
            support_crates: vec![],
            device: Some(DeviceLane {
                family: LANE,
                rules: &["x.dev.f"],
                capability: "cap-x",
                reason: "the lane runs on dev:0",
                device: DeviceSpec::reusing("gpu:0", "cuda", "xrt", &["inference"], &[], &[]),
                runtimes: vec![RuntimePin::new("xrt", "1.0", &[])],
            }),
        }
    }

    #[test]
    fn only_the_lanes_rules_need_its_capability() {
        let d = declared();
        assert_eq!(d.rule_device("x.dev.f").as_deref(), Some("cap-x"));
        assert_eq!(d.rule_device("x.cpu.f"), None);
        let none = Declared {
            device: None,
            ..declared()
        };
        assert_eq!(none.rule_device("x.dev.f"), None);
    }

    #[test]
    fn a_requirement_names_the_lanes_types_the_function_uses_and_only_those() {
        let d = declared();
        assert!(d.device_requirements(&[TypeKey::new("x.Cpu2")]).is_empty());
        assert!(d.device_requirements(&[]).is_empty());
        let req = d.device_requirements(&[
            TypeKey::new("x.Cpu2"),
            TypeKey::new("x.Dev2"),
            TypeKey::new("x.Dev1"),
        ]);
        assert_eq!(req.len(), 1);
        assert_eq!(req[0].capability, "cap-x");
        assert_eq!(req[0].reason, "the lane runs on dev:0 (x.Dev2, x.Dev1)");
        assert_eq!(req[0].runtimes, vec![RuntimePin::new("xrt", "1.0", &[])]);
        assert!(req[0].device.is_some());
    }

    #[test]
    fn the_kit_and_types_package_live_in_the_crate() {
        let d = declared();
        let kit = d.certification_kit();
        assert_eq!(kit.project_dir, "/src/x/certify/project");
        assert_eq!(kit.checker, "/src/x/certify/check.py");
        let python = d.python_requirements();
        assert_eq!(python.len(), 2);
        assert_eq!(python[0].requirement, "xpkg==2.0");
        assert_eq!(python[1].requirement, "x-types==0.1.0");
        assert_eq!(python[1].distribution, "x-types");
        assert_eq!(python[1].editable_path.as_deref(), Some("/src/x/python"));
        let c = d.coverage();
        assert_eq!(c.packages, vec!["xpkg".to_owned()]);
        assert_eq!(c.preload_modules, vec!["xpkg".to_owned()]);
    }
}

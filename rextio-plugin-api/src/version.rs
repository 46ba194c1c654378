//! API versions and the negotiation rule between host and plugin.

use semver::Version;
use thiserror::Error;

/// The plugin API this host implements.
pub const API_VERSION: Version = Version::new(1, 19, 0);

/// The device provider API this host implements.
pub const DEVICE_PROVIDER_API_VERSION: Version = Version::new(1, 2, 0);

/// Minor version of the device provider API that introduced `reason_status` and `lock_record`.
pub const PROVIDER_DETAILS_SINCE_MINOR: u64 = 1;
/// Minor version of the device provider API whose `PreflightRequest` carries `domain`.
pub const PROVIDER_DOMAIN_SINCE_MINOR: u64 = 2;

/// Minor version of the plugin API that introduced `device_requirements`.
pub const DEVICE_REQUIREMENTS_SINCE_MINOR: u64 = 6;
/// Minor version of the plugin API that introduced `function_scope_guard`.
pub const FUNCTION_SCOPE_GUARD_SINCE_MINOR: u64 = 7;
/// Minor version of the plugin API that introduced `module_init` and `python_requirements`.
pub const MODULE_INIT_SINCE_MINOR: u64 = 8;
/// Minor version of the plugin API that introduced `lower_region`.
pub const REGION_LOWERING_SINCE_MINOR: u64 = 9;
/// Minor version of the plugin API that introduced `detached_body`.
pub const DETACHED_BODY_SINCE_MINOR: u64 = 10;
/// Minor version of the plugin API that introduced `module_support` and `module_kind`.
pub const MODULE_CLASSES_SINCE_MINOR: u64 = 11;
/// Minor version of the plugin API that introduced `runtime_support_crates`.
pub const RUNTIME_SUPPORT_CRATES_SINCE_MINOR: u64 = 12;
/// Minor version of the plugin API whose `DeviceRequirement` carries `device` and `runtimes`.
pub const DEVICE_SPEC_SINCE_MINOR: u64 = 13;
/// Minor version of the plugin API whose lowerings are token streams ([`crate::syntax::Code`]):
/// from it on the host refuses text; below it, text is lexed and parsed.
pub const TOKEN_LOWERING_SINCE_MINOR: u64 = 14;
/// Minor version of the plugin API that introduced `symbolic_check`.
pub const SYMBOLIC_CHECK_SINCE_MINOR: u64 = 17;
/// Minor version of the plugin API whose `ModuleSupport::stamp_fn` names a
/// `runtime::memo::StampFn` that is asked for stamps or to check them (`Stamping`); 1.18's
/// made stamps only. The host uses the stamp function of a plugin from this version on; an
/// older plugin's methods keep no state.
pub const STATE_STAMPS_SINCE_MINOR: u64 = 19;

/// Why a declared API version cannot be served by this host.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NegotiationError {
    /// The plugin declared no version at all.
    #[error(
        "`{component}` declares an empty API version; expected a semantic version such as `{host}`"
    )]
    Empty {
        /// Plugin or provider id.
        component: String,
        /// The host's version.
        host: Version,
    },
    /// The declared version does not parse as semver.
    #[error("`{component}` declares API version `{declared}`, which is not a semantic version (expected e.g. `{host}`): {reason}")]
    Malformed {
        /// Plugin or provider id.
        component: String,
        /// What it declared.
        declared: String,
        /// The host's version.
        host: Version,
        /// The parser's reason.
        reason: String,
    },
    /// Different major version: incompatible contract.
    #[error("`{component}` was written for API {declared}, but this host implements API {host}: the major versions differ; rebuild the plugin against API {}.x", host.major)]
    MajorMismatch {
        /// Plugin or provider id.
        component: String,
        /// What it declared.
        declared: Version,
        /// The host's version.
        host: Version,
    },
    /// Same major, but the plugin needs a newer minor than the host offers.
    #[error("`{component}` was written for API {declared}, which is newer than this host's API {host}; upgrade rextio or use a plugin built for API <= {host}")]
    NewerMinor {
        /// Plugin or provider id.
        component: String,
        /// What it declared.
        declared: Version,
        /// The host's version.
        host: Version,
    },
}

/// The outcome of a successful negotiation: what the host may call on this plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    /// The version the plugin declared.
    pub declared: Version,
    /// Whether `device_requirements` may be consulted.
    pub device_requirements: bool,
    /// Whether `function_scope_guard` may be consulted.
    pub function_scope_guard: bool,
    /// Whether `module_init` and `python_requirements` may be consulted.
    pub module_init: bool,
    /// Whether `lower_region` may be consulted.
    pub region_lowering: bool,
    /// Whether `detached_body` may be consulted.
    pub detached_body: bool,
    /// Whether `module_support` and `module_kind` may be consulted.
    pub module_classes: bool,
    /// Whether `runtime_support_crates` may be consulted.
    pub runtime_support_crates: bool,
    /// Whether the `device` and `runtimes` of its device requirements are meant.
    pub device_spec: bool,
    /// Whether its lowerings must be tokens (text is refused).
    pub token_lowering: bool,
    /// Whether `symbolic_check` may be consulted.
    pub symbolic_check: bool,
    /// Whether `ModuleSupport::stamp_fn` may be used.
    pub state_stamps: bool,
}

/// Negotiate a declared API version (as the plugin wrote it) against `host`.
///
/// Accepted: same major, and a minor not greater than the host's. Optional hooks are enabled
/// only when the plugin's minor reaches the version that introduced them.
pub fn negotiate(
    component: &str,
    declared: &str,
    host: &Version,
) -> Result<Negotiated, NegotiationError> {
    let trimmed = declared.trim();
    if trimmed.is_empty() {
        return Err(NegotiationError::Empty {
            component: component.to_owned(),
            host: host.clone(),
        });
    }
    let version = Version::parse(trimmed).map_err(|e| NegotiationError::Malformed {
        component: component.to_owned(),
        declared: declared.to_owned(),
        host: host.clone(),
        reason: e.to_string(),
    })?;
    if version.major != host.major {
        return Err(NegotiationError::MajorMismatch {
            component: component.to_owned(),
            declared: version,
            host: host.clone(),
        });
    }
    if version.minor > host.minor {
        return Err(NegotiationError::NewerMinor {
            component: component.to_owned(),
            declared: version,
            host: host.clone(),
        });
    }
    Ok(Negotiated {
        device_requirements: version.minor >= DEVICE_REQUIREMENTS_SINCE_MINOR,
        function_scope_guard: version.minor >= FUNCTION_SCOPE_GUARD_SINCE_MINOR,
        module_init: version.minor >= MODULE_INIT_SINCE_MINOR,
        region_lowering: version.minor >= REGION_LOWERING_SINCE_MINOR,
        detached_body: version.minor >= DETACHED_BODY_SINCE_MINOR,
        module_classes: version.minor >= MODULE_CLASSES_SINCE_MINOR,
        runtime_support_crates: version.minor >= RUNTIME_SUPPORT_CRATES_SINCE_MINOR,
        device_spec: version.minor >= DEVICE_SPEC_SINCE_MINOR,
        token_lowering: version.minor >= TOKEN_LOWERING_SINCE_MINOR,
        symbolic_check: version.minor >= SYMBOLIC_CHECK_SINCE_MINOR,
        state_stamps: version.minor >= STATE_STAMPS_SINCE_MINOR,
        declared: version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> Version {
        API_VERSION
    }

    #[test]
    fn same_version_enables_every_hook() {
        let n = negotiate("p", "1.17.0", &host()).unwrap();
        assert!(n.function_scope_guard && n.device_requirements && n.module_init);
        assert!(n.region_lowering && n.detached_body && n.module_classes);
        assert!(n.runtime_support_crates && n.device_spec && n.token_lowering);
        assert!(n.symbolic_check);
    }

    #[test]
    fn older_minor_is_accepted_with_fewer_hooks() {
        let n = negotiate("p", "1.16.0", &host()).unwrap();
        assert!(n.token_lowering && !n.symbolic_check);
        let n = negotiate("p", "1.14.0", &host()).unwrap();
        assert!(n.token_lowering);
        let n = negotiate("p", "1.13.0", &host()).unwrap();
        assert!(n.device_spec && !n.token_lowering);
        let n = negotiate("p", "1.12.0", &host()).unwrap();
        assert!(n.runtime_support_crates && !n.device_spec);
        let n = negotiate("p", "1.11.0", &host()).unwrap();
        assert!(n.module_classes && !n.runtime_support_crates);
        let n = negotiate("p", "1.10.0", &host()).unwrap();
        assert!(n.detached_body && !n.module_classes);
        let n = negotiate("p", "1.9.0", &host()).unwrap();
        assert!(n.region_lowering && !n.detached_body);
        let n = negotiate("p", "1.8.1", &host()).unwrap();
        assert!(n.module_init && !n.region_lowering);
        let n = negotiate("p", "1.7.2", &host()).unwrap();
        assert!(n.device_requirements && n.function_scope_guard);
        assert!(!n.module_init);
        let n = negotiate("p", "1.6.3", &host()).unwrap();
        assert!(n.device_requirements);
        assert!(!n.function_scope_guard);
        let n = negotiate("p", "1.3.0", &host()).unwrap();
        assert!(!n.device_requirements && !n.function_scope_guard);
    }

    #[test]
    fn stamp_functions_are_used_from_the_version_that_checks_them() {
        assert!(!negotiate("p", "1.18.0", &host()).unwrap().state_stamps);
        assert!(negotiate("p", "1.19.0", &host()).unwrap().state_stamps);
    }

    #[test]
    fn newer_minor_is_refused_naming_both_versions() {
        let e = negotiate("p", "1.20.0", &host()).unwrap_err();
        assert!(matches!(e, NegotiationError::NewerMinor { .. }));
        let msg = e.to_string();
        assert!(msg.contains("1.20.0") && msg.contains("1.19.0"), "{msg}");
    }

    #[test]
    fn other_major_is_refused() {
        for v in ["0.7.0", "2.0.0", "2.7.0"] {
            let e = negotiate("p", v, &host()).unwrap_err();
            assert!(
                matches!(e, NegotiationError::MajorMismatch { .. }),
                "{v}: {e}"
            );
        }
    }

    #[test]
    fn malformed_and_empty_are_typed_errors() {
        for v in ["1.7", "one.two.three", "1.7.0.0", "v1.7.0"] {
            let e = negotiate("p", v, &host()).unwrap_err();
            assert!(matches!(e, NegotiationError::Malformed { .. }), "{v}: {e}");
        }
        for v in ["", "   "] {
            let e = negotiate("p", v, &host()).unwrap_err();
            assert!(matches!(e, NegotiationError::Empty { .. }), "{v:?}: {e}");
        }
    }

    #[test]
    fn patch_and_prerelease_of_same_minor_are_accepted() {
        assert!(negotiate("p", "1.7.9", &host()).is_ok());
        assert!(negotiate("p", "1.0.0", &host()).is_ok());
    }
}

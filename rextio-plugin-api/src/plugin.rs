//! The `Plugin` and `DeviceProvider` traits.

use crate::device::{
    BuildContribution, DeviceRequirement, PreflightRequest, PreflightResult, ProviderError,
    ProviderManifest,
};
use crate::diagnostic::CodeDoc;
use crate::lowering::{
    DetachedBody, FunctionScope, LowerError, LoweredExpr, LoweringContext, RegionContext,
    ScopeGuard,
};
use crate::modules::{ModuleAnswer, ModuleCtor, ModuleSupport};
use crate::rules::RuleRecord;
use crate::site::{ClaimOutcome, ClaimSite, ClaimedSite};
use crate::types::{PluginType, TypeKey};
use serde::{Deserialize, Serialize};

/// What a plugin covers: sites whose target lies in one of these packages are offered to it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    /// Top-level Python packages, e.g. `torch`.
    pub packages: Vec<String>,
    /// Fully qualified symbols it recognises (documentation and `capabilities`).
    pub symbols: Vec<String>,
    /// Modules the generated Python wrapper imports before loading the native extension
    /// (for example `torch`, whose shared libraries the extension links against).
    pub preload_modules: Vec<String>,
}

/// Where a crate dependency of the generated crate comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum CrateSource {
    /// An exact registry version (`=x.y.z`).
    Registry(String),
    /// An absolute local path.
    Path(String),
    /// Sources carried by the plugin itself (relative path, text; a standalone `Cargo.toml`
    /// among them, its workspace siblings as `../<name>` paths): the host writes them under its
    /// cache directory, so generated crates never depend on a source checkout.
    Embedded(Vec<(String, String)>),
}

impl CrateSource {
    /// Embedded sources from a static table (relative path, text), as `rextio-embed` generates.
    pub fn embedded(files: &[(&str, &str)]) -> Self {
        CrateSource::Embedded(
            files
                .iter()
                .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
                .collect(),
        )
    }
}

/// Declares, in the calling crate, `mod embedded` (the crate's sources as `rextio-embed`'s build
/// script embedded them) and `fn own_source() -> CrateSource`: those embedded sources when the
/// crate was built from the workspace, its directory otherwise. The `rextio_embedded_sources`
/// cfg and the paths are the calling crate's.
#[macro_export]
macro_rules! own_crate_source {
    () => {
        /// This crate's sources with a standalone manifest, embedded at build time (see
        /// `rextio-embed`), so generated crates depend on a copy under the host's cache
        /// directory, never on this checkout.
        #[cfg(rextio_embedded_sources)]
        mod embedded {
            include!(concat!(env!("OUT_DIR"), "/embedded_sources.rs"));
        }

        /// Where a generated crate gets this crate: its embedded sources when built from the
        /// workspace (an embedded copy, built inside a generated crate, never hands itself on).
        fn own_source() -> $crate::CrateSource {
            #[cfg(rextio_embedded_sources)]
            {
                $crate::CrateSource::embedded(embedded::EMBEDDED_SOURCES)
            }
            #[cfg(not(rextio_embedded_sources))]
            {
                $crate::CrateSource::Path(env!("CARGO_MANIFEST_DIR").to_owned())
            }
        }
    };
}

/// A dependency the generated crate needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrateDependency {
    /// Crate name.
    pub name: String,
    /// Where it comes from.
    pub source: CrateSource,
    /// Features to enable.
    pub features: Vec<String>,
    /// Environment variables the build of this crate needs (for example how to find libtorch).
    pub build_env: Vec<(String, String)>,
    /// Environment variables that must not reach the build (for example version-check bypasses).
    pub forbidden_env: Vec<String>,
}

impl CrateDependency {
    /// A library crate with no features or build environment, from its embedded sources when it
    /// has them (built from a workspace), else from `dir` (an embedded copy, which is only ever
    /// built, never handed on).
    pub fn library(name: &str, embedded: Option<&[(&str, &str)]>, dir: &str) -> Self {
        CrateDependency {
            name: name.to_owned(),
            source: match embedded {
                Some(files) => CrateSource::embedded(files),
                None => CrateSource::Path(dir.to_owned()),
            },
            features: Vec::new(),
            build_env: Vec::new(),
            forbidden_env: Vec::new(),
        }
    }
}

/// How far a plugin supports a platform (serialized lowercase, as `rextio capabilities` prints it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlatformState {
    /// Native evidence can be recorded on such a host.
    Certifiable,
    /// Expected to work; not certified here.
    Experimental,
    /// Known not to work (no pinned framework build, impossible target).
    Unsupported,
    /// Not decided yet; no support claim.
    Deferred,
}

impl PlatformState {
    /// The lowercase name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            PlatformState::Certifiable => "certifiable",
            PlatformState::Experimental => "experimental",
            PlatformState::Unsupported => "unsupported",
            PlatformState::Deferred => "deferred",
        }
    }
}

/// Support status of one host platform cell (OS x architecture).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlatformCell {
    /// `linux`, `macos`, `windows`.
    pub os: String,
    /// `x86_64`, `aarch64`, `x86`, `arm32`, or `*`.
    pub arch: String,
    /// Its support state.
    pub status: PlatformState,
    /// A stable reason code.
    pub reason_code: String,
    /// Human explanation.
    pub note: String,
}

impl PlatformCell {
    /// A cell of a platform table.
    pub fn new(os: &str, arch: &str, status: PlatformState, reason_code: &str, note: &str) -> Self {
        Self {
            os: os.into(),
            arch: arch.into(),
            status,
            reason_code: reason_code.into(),
            note: note.into(),
        }
    }
}

/// What `cargo xtask certify` needs to certify a plugin on this host: a project that
/// exercises every native rule, and a checker that runs it against the eager reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CertificationKit {
    /// Absolute path of the certification project (a Rextio project).
    pub project_dir: String,
    /// Absolute path of the checker script, run as
    /// `python CHECKER RESULT_JSON PROJECT_SRC` with the built tree and the host's shared driver
    /// `rextio_certify` (whose `run` implements this contract) on `PYTHONPATH`. It writes
    /// `{"runtime": {...versions...}, "functions": {"module.function": {"passed": bool, ...}}}`
    /// (keys are qualified names) and exits 0 when every function passed, 1 when some failed;
    /// any other exit is a broken checker and fails certification.
    pub checker: String,
}

impl CertificationKit {
    /// The conventional layout: `DIR/project` (a Rextio project) and `DIR/check.py`.
    pub fn in_dir(dir: &str) -> Self {
        Self {
            project_dir: format!("{dir}/project"),
            checker: format!("{dir}/check.py"),
        }
    }
}

/// A backend plugin. Implementations must be pure: `claim` depends only on the site.
pub trait Plugin: Send + Sync {
    /// Stable id, e.g. `rextio-torch`; namespace of its rule ids and type keys.
    fn id(&self) -> &str;
    /// The plugin API version it was written against, as text (`"1.7.0"`).
    fn api_version(&self) -> &str;
    /// The plugin's own version (recorded in certification evidence).
    fn version(&self) -> &str {
        "0.0.0"
    }
    /// The declared platform table (empty when the plugin makes no platform statement).
    fn platforms(&self) -> Vec<PlatformCell> {
        Vec::new()
    }
    /// Its certification kit, if it can be certified.
    fn certification_kit(&self) -> Option<CertificationKit> {
        None
    }
    /// Packages and symbols it covers.
    fn coverage(&self) -> Coverage;
    /// Every rule, native and fallback.
    fn rules(&self) -> &[RuleRecord];
    /// Documentation of each diagnostic code it may emit.
    fn diagnostic_codes(&self) -> &[CodeDoc];
    /// Annotation spelling -> type key -> Rust type and boundary.
    fn type_vocabulary(&self) -> &[PluginType];
    /// Decide a site. Must not depend on anything but the site.
    fn claim(&self, site: &ClaimSite) -> ClaimOutcome;
    /// Lower a site this plugin claimed; re-validates the claim and never panics.
    fn lower(
        &self,
        site: &ClaimedSite,
        cx: &mut LoweringContext,
    ) -> Result<LoweredExpr, LowerError>;
    /// The runtime crate generated code depends on.
    fn runtime_crate(&self) -> Option<CrateDependency>;
    /// Crates the runtime crate depends on by a `../<name>` path, which the host must write
    /// beside it (embedded sources, as the runtime crate's own), and which generated code may
    /// name too (API >= 1.12).
    fn runtime_support_crates(&self) -> Vec<CrateDependency> {
        Vec::new()
    }
    /// A guard held around the whole body of a native function (API >= 1.7).
    fn function_scope_guard(&self, _f: &FunctionScope) -> Option<ScopeGuard> {
        None
    }
    /// A runner for a native function's body that may release the GIL inside it (API >= 1.10),
    /// when this plugin's runtime touches no Python object inside bodies: other Python threads
    /// then run while the body's native work does. The host uses it only when every plugin whose
    /// sites the body lowers returns the same runner and the body calls no other native
    /// function; otherwise the body runs as before.
    fn detached_body(&self, _f: &FunctionScope) -> Option<DetachedBody> {
        None
    }
    /// Device capabilities needed for the given types (API >= 1.6).
    fn device_requirements(&self, _used: &[TypeKey]) -> Vec<DeviceRequirement> {
        Vec::new()
    }
    /// Code run when the extension module is imported, before any function is bound (API >=
    /// 1.8): for example binding a C library the imported framework already loaded. A failure
    /// becomes an `ImportError`, so `REXTIO_NATIVE_MODE=auto` falls back with a warning and
    /// `native` raises.
    fn module_init(&self) -> Option<ModuleInit> {
        None
    }
    /// The device capability a native rule needs, when it runs only on an accelerator (API >=
    /// 1.8). Such rules are certified on a host with that device, not by the CPU certification
    /// kit, and are never `verified` by CPU evidence.
    fn rule_device(&self, _rule_id: &str) -> Option<String> {
        None
    }
    /// Whether native rule `rule_id`'s result is, in eager mode, always a new tensor that shares
    /// memory with no operand and no other object (API >= 1.15). The host proves an operand
    /// [`crate::Operand::private`] from it. A rule that may return its input or a view of it
    /// (a reshape, a transpose, an identity) answers `false`, the default.
    fn fresh_result(&self, _rule_id: &str) -> bool {
        false
    }
    /// Whether a decorator leaves a native function's meaning to this plugin (API >= 1.8): for
    /// `@path` (`called` false) or `@path()` (`called` true), the id of a declared native rule
    /// proving that the function's native lowering already has the decorator's contract (for
    /// example a grad-mode decorator when the plugin's function-scope guard disables grad).
    /// `None` keeps a decorated function on Python.
    fn native_decorator(&self, _path: &str, _called: bool) -> Option<String> {
        None
    }
    /// The Python distributions a project using this plugin needs at run time (API >= 1.8):
    /// the pinned framework and the marker-types package. Used for the development
    /// environment, a built wheel's `Requires-Dist`, and `rextio init`.
    fn python_requirements(&self) -> Vec<PythonRequirement> {
        Vec::new()
    }
    /// One fused lowering for a straight-line region of this plugin's claims (API >= 1.9).
    /// `Ok(None)` declines: the host lowers the region site by site, as it does for plugins of
    /// older minors. A fused lowering chooses at run time between its own path and the per-site
    /// one (see [`crate::LoweredRegion`]), so it never has to cover every input. An error is a
    /// claim that no longer holds (lowering fails closed, as for `lower`).
    fn lower_region(
        &self,
        _region: &crate::Region,
        _cx: &RegionContext,
    ) -> Result<Option<crate::LoweredRegion>, LowerError> {
        Ok(None)
    }
    /// The framework's module classes this plugin understands (API >= 1.11): user classes
    /// deriving from one of its bases are read and their typed methods compiled
    /// ([`crate::modules`]). `None`: classes are reported and stay on Python.
    fn module_support(&self) -> Option<ModuleSupport> {
        None
    }
    /// What a constructor call assigned to `self.<attr>` in a module class's `__init__` holds
    /// (API >= 1.11). Must depend only on `ctor`.
    fn module_kind(&self, _ctor: &ModuleCtor) -> ModuleAnswer {
        ModuleAnswer::NotCovered
    }
    /// The Rust path of a check for the framework's symbolic values (API >= 1.17), called as
    /// `check(&Bound<PyAny>) -> bool`: whether an argument that failed to convert is a value a
    /// tracer passes in place of data (`torch.fx.Proxy`, a TensorFlow graph tensor inside
    /// `tf.function`). A compiled free function given one runs its original Python function
    /// instead, so the tracer records what eager would run; any other refused argument still
    /// raises. The check runs only on that error path and must not raise or import anything.
    /// `None` (the default): such arguments are refused as any other.
    fn symbolic_check(&self) -> Option<String> {
        None
    }
}

/// A plugin's module-init step (see [`Plugin::module_init`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleInit {
    /// A Rust expression of type `PyResult<()>`, evaluated inside the `#[pymodule]` function
    /// with `py: Python<'_>` in scope. Tokens from API 1.14 on, as lowerings are.
    pub expr: crate::syntax::Code,
}

/// One Python distribution a plugin needs (see [`Plugin::python_requirements`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PythonRequirement {
    /// The PEP 508 requirement, pinned exactly for frameworks (`torch==2.13.0`).
    pub requirement: String,
    /// The distribution's import-independent name, for checking what is installed
    /// (`torch`, `tensorflow-cpu`).
    pub distribution: String,
    /// In a development checkout, the absolute path of the package's source to install in
    /// editable mode instead of the requirement (marker-types packages).
    pub editable_path: Option<String>,
}

/// An accelerator device provider (Device Provider API 1.0).
pub trait DeviceProvider: Send + Sync {
    /// Stable id.
    fn id(&self) -> &str;
    /// The provider API version it was written against, as text.
    fn api_version(&self) -> &str;
    /// Static description.
    fn manifest(&self) -> &ProviderManifest;
    /// Decide whether a capability can be used.
    fn preflight(&self, req: &PreflightRequest) -> PreflightResult;
    /// What the build needs for that capability.
    fn build_contribution(
        &self,
        req: &PreflightRequest,
    ) -> Result<BuildContribution, ProviderError>;
    /// The provider's own status name for one of its reason codes (for example
    /// `invalid-configuration`), reported next to the code (Device Provider API >= 1.1).
    fn reason_status(&self, _reason_code: &str) -> Option<String> {
        None
    }
    /// The record of what a build was authorised with, for `build.json`; option values must
    /// appear only as digests (Device Provider API >= 1.1).
    fn lock_record(&self, _req: &PreflightRequest) -> Option<serde_json::Value> {
        None
    }
}

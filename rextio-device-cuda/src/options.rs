//! `[target.device_options]`: the option table, its validation, and the effective floors.

use crate::capability::{
    parse_decimal, CudaCapability, Lane, ToolkitVersion, MANIFEST_MIN_DRIVER_VERSION,
    MANIFEST_MIN_TOOLKIT_VERSION,
};
use crate::reason::{ReasonCode, Refusal};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// `probe_executable`: absolute path of the driver-inventory probe (required).
pub const OPT_PROBE_EXECUTABLE: &str = "probe_executable";
/// `device_ordinal`: the CUDA device ordinal, decimal (required).
pub const OPT_DEVICE_ORDINAL: &str = "device_ordinal";
/// `sm`: the selected architecture, `sm_NN` (required).
pub const OPT_SM: &str = "sm";
/// `min_driver_version`: raises the driver floor (optional, never below 12000).
pub const OPT_MIN_DRIVER_VERSION: &str = "min_driver_version";
/// `min_toolkit_version`: raises the toolkit floor (optional, raw-driver lanes, never below 12.0).
pub const OPT_MIN_TOOLKIT_VERSION: &str = "min_toolkit_version";
/// `toolkit_root`: absolute path of a CUDA toolkit to validate (optional, raw-driver lanes).
pub const OPT_TOOLKIT_ROOT: &str = "toolkit_root";

/// Every option the provider defines, sorted.
pub const OPTION_NAMES: [&str; 6] = [
    OPT_DEVICE_ORDINAL,
    OPT_MIN_DRIVER_VERSION,
    OPT_MIN_TOOLKIT_VERSION,
    OPT_PROBE_EXECUTABLE,
    OPT_SM,
    OPT_TOOLKIT_ROOT,
];

/// The required options, in the order their absence is reported.
pub const REQUIRED_OPTIONS: [&str; 3] = [OPT_PROBE_EXECUTABLE, OPT_DEVICE_ORDINAL, OPT_SM];

/// A CUDA architecture as selected by `sm = "sm_NN"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Sm {
    /// Compute capability major.
    pub major: u32,
    /// Compute capability minor.
    pub minor: u32,
}

impl Sm {
    /// Parse `sm_NN` / `sm_NNN` (compute capability 5.0 or newer; no `a`/`f` suffixes).
    pub fn parse(text: &str) -> Option<Sm> {
        let digits = text.strip_prefix("sm_")?;
        if !(2..=3).contains(&digits.len()) {
            return None;
        }
        let value = parse_decimal(digits)?;
        let sm = Sm {
            major: value / 10,
            minor: value % 10,
        };
        (sm.major >= 5).then_some(sm)
    }
}

impl fmt::Display for Sm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}{}", self.major, self.minor)
    }
}

impl Serialize for Sm {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Sm {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Sm::parse(&text).ok_or_else(|| serde::de::Error::custom(format!("`{text}` is not sm_NN")))
    }
}

/// Validated options. Raw path values stay in memory only; `Debug` redacts them.
#[derive(Clone, PartialEq, Eq)]
pub struct CudaOptions {
    /// The probe executable exactly as configured (checked by the probe runner).
    pub probe_executable: PathBuf,
    /// The device ordinal.
    pub device_ordinal: u32,
    /// The selected architecture.
    pub sm: Sm,
    /// The effective driver floor: max(manifest 12000, `min_driver_version`).
    pub min_driver_version: u32,
    /// The effective toolkit floor for raw-driver lanes; `None` on the reuse lanes.
    pub min_toolkit_version: Option<ToolkitVersion>,
    /// The toolkit to validate (raw-driver lanes only), absolute.
    pub toolkit_root: Option<PathBuf>,
}

impl fmt::Debug for CudaOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaOptions")
            .field("probe_executable", &"<redacted>")
            .field("device_ordinal", &self.device_ordinal)
            .field("sm", &self.sm)
            .field("min_driver_version", &self.min_driver_version)
            .field("min_toolkit_version", &self.min_toolkit_version)
            .field(
                "toolkit_root",
                &self.toolkit_root.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// Validate `[target.device_options]` for a capability.
///
/// Checks, in order: unknown names, toolkit options on a reuse lane, required options, then each
/// value (`probe_executable` absolute, `device_ordinal`, `sm`, `min_driver_version`,
/// `min_toolkit_version`, `toolkit_root` absolute).
/// The first failing check decides the reason code.
pub fn validate_options(
    capability: CudaCapability,
    options: &BTreeMap<String, String>,
) -> Result<CudaOptions, Refusal> {
    check_names(capability, options)?;
    let get = |name: &str| options.get(name).map(String::as_str).unwrap_or_default();

    if !Path::new(get(OPT_PROBE_EXECUTABLE)).is_absolute() {
        return Err(Refusal::new(
            ReasonCode::ProbeNotAbsolute,
            "probe_executable is not an absolute path; give the probe's absolute path (PATH is never searched)",
        ));
    }

    let ordinal_text = get(OPT_DEVICE_ORDINAL);
    let device_ordinal = parse_decimal(ordinal_text)
        .filter(|&v| i32::try_from(v).is_ok())
        .ok_or_else(|| {
            Refusal::new(
                ReasonCode::InvalidDeviceOrdinal,
                format!(
                    "device_ordinal = \"{}\" is not a decimal device ordinal; expected e.g. \"0\"",
                    ordinal_text.escape_debug()
                ),
            )
        })?;

    let sm_text = get(OPT_SM);
    let sm = Sm::parse(sm_text).ok_or_else(|| {
        Refusal::new(
            ReasonCode::InvalidSm,
            format!(
                "sm = \"{}\" is not an architecture; expected sm_NN with compute capability 5.0 or newer, e.g. \"sm_80\"",
                sm_text.escape_debug()
            ),
        )
    })?;

    Ok(CudaOptions {
        probe_executable: PathBuf::from(get(OPT_PROBE_EXECUTABLE)),
        device_ordinal,
        sm,
        min_driver_version: driver_floor(options)?,
        min_toolkit_version: toolkit_floor(capability, options)?,
        toolkit_root: toolkit_root(options)?,
    })
}

/// The option names: none unknown, no toolkit option on a lane that reuses the framework's
/// runtime, every required one present and not blank.
fn check_names(
    capability: CudaCapability,
    options: &BTreeMap<String, String>,
) -> Result<(), Refusal> {
    let unknown: Vec<&str> = options
        .keys()
        .map(String::as_str)
        .filter(|k| !OPTION_NAMES.contains(k))
        .collect();
    if !unknown.is_empty() {
        return Err(Refusal::new(
            ReasonCode::UnknownOption,
            format!(
                "[target.device_options] has unknown option(s) {}; rextio-device-cuda defines {}",
                quote_list(&unknown),
                quote_list(&OPTION_NAMES)
            ),
        ));
    }
    if !capability.lane().uses_toolkit() {
        let toolkit: Vec<&str> = [OPT_TOOLKIT_ROOT, OPT_MIN_TOOLKIT_VERSION]
            .into_iter()
            .filter(|k| options.contains_key(*k))
            .collect();
        if !toolkit.is_empty() {
            return Err(Refusal::new(
                ReasonCode::ToolkitOptionRejected,
                format!(
                    "{} reuses the framework's CUDA runtime and inspects no standalone toolkit; remove {} from [target.device_options]",
                    capability,
                    quote_list(&toolkit)
                ),
            ));
        }
    }
    for name in REQUIRED_OPTIONS {
        if options.get(name).is_none_or(|v| v.trim().is_empty()) {
            return Err(Refusal::new(
                ReasonCode::MissingOption,
                format!(
                    "[target.device_options] needs `{name}` for {capability}; the provider discovers nothing implicitly (expected e.g. probe_executable = \"/abs/path/rextio-cuda-probe\", device_ordinal = \"0\", sm = \"sm_80\")"
                ),
            ));
        }
    }
    Ok(())
}

/// `min_driver_version`: the manifest's floor when omitted; configuration may raise it, never
/// lower it.
fn driver_floor(options: &BTreeMap<String, String>) -> Result<u32, Refusal> {
    let Some(text) = options.get(OPT_MIN_DRIVER_VERSION) else {
        return Ok(MANIFEST_MIN_DRIVER_VERSION);
    };
    let value = parse_decimal(text).ok_or_else(|| {
        Refusal::new(
            ReasonCode::InvalidDriverFloor,
            format!(
                "min_driver_version = \"{}\" is not a CUDA driver version; expected a decimal such as \"12040\" (CUDA 12.4)",
                text.escape_debug()
            ),
        )
    })?;
    if value < MANIFEST_MIN_DRIVER_VERSION {
        return Err(Refusal::new(
            ReasonCode::DriverFloorBelowManifest,
            format!(
                "min_driver_version = {value} is below the manifest floor {MANIFEST_MIN_DRIVER_VERSION}; configuration may raise the floor but never lower it"
            ),
        ));
    }
    Ok(value)
}

/// `min_toolkit_version` of the raw-driver lane (none on the reuse lanes): the manifest's floor
/// when omitted; configuration may raise it, never lower it.
fn toolkit_floor(
    capability: CudaCapability,
    options: &BTreeMap<String, String>,
) -> Result<Option<ToolkitVersion>, Refusal> {
    if capability.lane() != Lane::RawDriver {
        return Ok(None);
    }
    let Some(text) = options.get(OPT_MIN_TOOLKIT_VERSION) else {
        return Ok(Some(MANIFEST_MIN_TOOLKIT_VERSION));
    };
    let value = ToolkitVersion::parse_major_minor(text).ok_or_else(|| {
        Refusal::new(
            ReasonCode::InvalidToolkitFloor,
            format!(
                "min_toolkit_version = \"{}\" is not MAJOR.MINOR; expected e.g. \"12.4\"",
                text.escape_debug()
            ),
        )
    })?;
    if value < MANIFEST_MIN_TOOLKIT_VERSION {
        return Err(Refusal::new(
            ReasonCode::ToolkitFloorBelowManifest,
            format!(
                "min_toolkit_version = {value} is below the manifest floor {MANIFEST_MIN_TOOLKIT_VERSION}; configuration may raise the floor but never lower it"
            ),
        ));
    }
    Ok(Some(value))
}

/// `toolkit_root`, when given: an absolute directory (nothing is searched).
fn toolkit_root(options: &BTreeMap<String, String>) -> Result<Option<PathBuf>, Refusal> {
    let Some(text) = options.get(OPT_TOOLKIT_ROOT) else {
        return Ok(None);
    };
    let path = Path::new(text);
    if !path.is_absolute() {
        return Err(Refusal::new(
            ReasonCode::ToolkitRootNotAbsolute,
            "toolkit_root is not an absolute path; give the toolkit's absolute directory (nothing is searched)",
        ));
    }
    Ok(Some(path.to_path_buf()))
}

fn quote_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{}`", n.escape_debug()))
        .collect::<Vec<_>>()
        .join(", ")
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

    const BASE: [(&str, &str); 3] = [
        ("probe_executable", "/opt/rextio/rextio-cuda-probe"),
        ("device_ordinal", "0"),
        ("sm", "sm_80"),
    ];

    fn with(extra: &[(&str, &str)]) -> BTreeMap<String, String> {
        let mut m = opts(&BASE);
        for (k, v) in extra {
            m.insert((*k).to_owned(), (*v).to_owned());
        }
        m
    }

    fn without(name: &str) -> BTreeMap<String, String> {
        let mut m = opts(&BASE);
        m.remove(name);
        m
    }

    #[test]
    fn valid_minimal_options_get_the_manifest_floors() {
        let o = validate_options(CudaCapability::LinuxX86_64, &opts(&BASE)).unwrap();
        assert_eq!(o.device_ordinal, 0);
        assert_eq!(o.sm, Sm { major: 8, minor: 0 });
        assert_eq!(o.min_driver_version, 12000);
        assert_eq!(o.min_toolkit_version, Some(MANIFEST_MIN_TOOLKIT_VERSION));
        assert_eq!(o.toolkit_root, None);
        let o = validate_options(CudaCapability::LibtorchLinuxX86_64, &opts(&BASE)).unwrap();
        assert_eq!(
            o.min_toolkit_version, None,
            "reuse lanes have no toolkit floor"
        );
    }

    #[test]
    fn floors_may_be_raised() {
        let o = validate_options(
            CudaCapability::LinuxAarch64,
            &with(&[
                ("min_driver_version", "12040"),
                ("min_toolkit_version", "12.4"),
            ]),
        )
        .unwrap();
        assert_eq!(o.min_driver_version, 12040);
        assert_eq!(
            o.min_toolkit_version,
            Some(ToolkitVersion {
                major: 12,
                minor: 4
            })
        );
        let o = validate_options(
            CudaCapability::LinuxX86_64,
            &with(&[("min_driver_version", "12000")]),
        )
        .unwrap();
        assert_eq!(o.min_driver_version, 12000, "equal to the floor is allowed");
    }

    #[test]
    fn option_refusals_have_stable_reason_codes() {
        use CudaCapability::*;
        let table: Vec<(CudaCapability, BTreeMap<String, String>, ReasonCode)> = vec![
            (
                LinuxX86_64,
                with(&[("probe", "/x")]),
                ReasonCode::UnknownOption,
            ),
            (
                LinuxX86_64,
                with(&[("SM", "sm_80")]),
                ReasonCode::UnknownOption,
            ),
            (
                LinuxX86_64,
                with(&[("probe_report", "/r.json")]),
                ReasonCode::UnknownOption,
            ),
            (
                LibtorchLinuxX86_64,
                with(&[("toolkit_root", "/usr/local/cuda")]),
                ReasonCode::ToolkitOptionRejected,
            ),
            (
                TensorflowTfeLinuxX86_64,
                with(&[("toolkit_root", "/usr/local/cuda")]),
                ReasonCode::ToolkitOptionRejected,
            ),
            (
                TensorflowTfeLinuxX86_64,
                with(&[("min_toolkit_version", "12.4")]),
                ReasonCode::ToolkitOptionRejected,
            ),
            (
                LinuxX86_64,
                without("probe_executable"),
                ReasonCode::MissingOption,
            ),
            (
                LinuxX86_64,
                without("device_ordinal"),
                ReasonCode::MissingOption,
            ),
            (LinuxX86_64, without("sm"), ReasonCode::MissingOption),
            (
                LibtorchLinuxX86_64,
                without("sm"),
                ReasonCode::MissingOption,
            ),
            (
                LinuxX86_64,
                with(&[("probe_executable", "  ")]),
                ReasonCode::MissingOption,
            ),
            (
                LinuxX86_64,
                with(&[("probe_executable", "rextio-cuda-probe")]),
                ReasonCode::ProbeNotAbsolute,
            ),
            (
                LinuxX86_64,
                with(&[("probe_executable", "./bin/probe")]),
                ReasonCode::ProbeNotAbsolute,
            ),
            (
                LinuxX86_64,
                with(&[("device_ordinal", "-1")]),
                ReasonCode::InvalidDeviceOrdinal,
            ),
            (
                LinuxX86_64,
                with(&[("device_ordinal", "01")]),
                ReasonCode::InvalidDeviceOrdinal,
            ),
            (
                LinuxX86_64,
                with(&[("device_ordinal", "gpu0")]),
                ReasonCode::InvalidDeviceOrdinal,
            ),
            (
                LinuxX86_64,
                with(&[("device_ordinal", "4294967295")]),
                ReasonCode::InvalidDeviceOrdinal,
            ),
            (LinuxX86_64, with(&[("sm", "80")]), ReasonCode::InvalidSm),
            (LinuxX86_64, with(&[("sm", "sm_8")]), ReasonCode::InvalidSm),
            (LinuxX86_64, with(&[("sm", "sm_37")]), ReasonCode::InvalidSm),
            (
                LinuxX86_64,
                with(&[("sm", "sm_90a")]),
                ReasonCode::InvalidSm,
            ),
            (
                LinuxX86_64,
                with(&[("sm", "compute_80")]),
                ReasonCode::InvalidSm,
            ),
            (
                LinuxX86_64,
                with(&[("sm", "sm_1000")]),
                ReasonCode::InvalidSm,
            ),
            (
                LinuxX86_64,
                with(&[("min_driver_version", "12.0")]),
                ReasonCode::InvalidDriverFloor,
            ),
            (
                LinuxX86_64,
                with(&[("min_driver_version", "")]),
                ReasonCode::InvalidDriverFloor,
            ),
            (
                LinuxX86_64,
                with(&[("min_driver_version", "11080")]),
                ReasonCode::DriverFloorBelowManifest,
            ),
            (
                LibtorchLinuxX86_64,
                with(&[("min_driver_version", "0")]),
                ReasonCode::DriverFloorBelowManifest,
            ),
            (
                LinuxX86_64,
                with(&[("min_toolkit_version", "12")]),
                ReasonCode::InvalidToolkitFloor,
            ),
            (
                LinuxX86_64,
                with(&[("min_toolkit_version", "11.8")]),
                ReasonCode::ToolkitFloorBelowManifest,
            ),
            (
                WindowsX86_64,
                with(&[("toolkit_root", "usr/local/cuda")]),
                ReasonCode::ToolkitRootNotAbsolute,
            ),
        ];
        for (cap, options, expected) in table {
            let err = validate_options(cap, &options).unwrap_err();
            assert_eq!(err.reason, expected, "{cap} {options:?}: {err}");
            assert!(!err.message.is_empty());
        }
    }

    #[test]
    fn unknown_options_are_checked_before_missing_ones() {
        let err = validate_options(
            CudaCapability::LinuxX86_64,
            &opts(&[("sm", "sm_80"), ("bogus", "1")]),
        )
        .unwrap_err();
        assert_eq!(err.reason, ReasonCode::UnknownOption);
        assert!(err.message.contains("`bogus`"), "{err}");
    }

    #[test]
    fn messages_and_debug_never_contain_path_values() {
        let secret = "/home/alice/secret-dir/probe";
        let err = validate_options(
            CudaCapability::LinuxX86_64,
            &with(&[
                ("probe_executable", secret),
                ("toolkit_root", "relative/secret-dir"),
            ]),
        )
        .unwrap_err();
        assert_eq!(err.reason, ReasonCode::ToolkitRootNotAbsolute);
        assert!(!err.message.contains("secret-dir"), "{err}");
        let o = validate_options(
            CudaCapability::LinuxX86_64,
            &with(&[
                ("probe_executable", secret),
                ("toolkit_root", "/secret-dir/cuda"),
            ]),
        )
        .unwrap();
        let debug = format!("{o:?}");
        assert!(!debug.contains("secret-dir"), "{debug}");
    }

    #[test]
    fn sm_round_trips() {
        for (text, major, minor) in [
            ("sm_50", 5, 0),
            ("sm_86", 8, 6),
            ("sm_90", 9, 0),
            ("sm_120", 12, 0),
        ] {
            let sm = Sm::parse(text).unwrap();
            assert_eq!((sm.major, sm.minor), (major, minor));
            assert_eq!(sm.to_string(), text);
        }
    }
}

//! The provider's manifest: capabilities, their target platforms and lanes, and the floors.

use rextio_plugin_api::ProviderManifest;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The provider id, also its entry-point identity.
pub const PROVIDER_ID: &str = "rextio-device-cuda";
/// The Device Provider API this provider is written against.
pub const PROVIDER_API_VERSION: &str = "1.2.0";
/// The provider's own version.
pub const PROVIDER_VERSION: &str = env!("CARGO_PKG_VERSION");
/// The manifest's minimum CUDA driver version (CUDA 12.0); configuration may only raise it.
pub const MANIFEST_MIN_DRIVER_VERSION: u32 = 12000;
/// The manifest's minimum raw-lane toolkit/runtime version (12.0); configuration may only raise it.
pub const MANIFEST_MIN_TOOLKIT_VERSION: ToolkitVersion = ToolkitVersion {
    major: 12,
    minor: 0,
};

/// A CUDA toolkit/runtime version as `MAJOR.MINOR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolkitVersion {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

impl ToolkitVersion {
    /// Parse `MAJOR.MINOR` (plain decimal, no sign, no leading zeros beyond `0`).
    pub fn parse_major_minor(text: &str) -> Option<ToolkitVersion> {
        let (major, minor) = text.split_once('.')?;
        Some(ToolkitVersion {
            major: parse_decimal(major)?,
            minor: parse_decimal(minor)?,
        })
    }
}

impl fmt::Display for ToolkitVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl Serialize for ToolkitVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ToolkitVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        ToolkitVersion::parse_major_minor(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("`{text}` is not MAJOR.MINOR")))
    }
}

/// Parse a plain decimal `u32`: digits only, no sign, no leading zero unless the value is 0.
pub(crate) fn parse_decimal(text: &str) -> Option<u32> {
    if text.is_empty()
        || !text.bytes().all(|b| b.is_ascii_digit())
        || (text.len() > 1 && text.starts_with('0'))
    {
        return None;
    }
    text.parse().ok()
}

/// An OS x architecture cell.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HostPlatform {
    /// `linux`, `windows`, ... (as `std::env::consts::OS`).
    pub os: String,
    /// `x86_64`, `aarch64`, ... (as `std::env::consts::ARCH`).
    pub arch: String,
}

impl HostPlatform {
    /// The platform this process runs on.
    pub fn current() -> HostPlatform {
        HostPlatform::new(std::env::consts::OS, std::env::consts::ARCH)
    }

    /// A platform from its two names.
    pub fn new(os: &str, arch: &str) -> HostPlatform {
        HostPlatform {
            os: os.to_owned(),
            arch: arch.to_owned(),
        }
    }
}

impl fmt::Display for HostPlatform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.os, self.arch)
    }
}

/// Which runtime a capability uses on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lane {
    /// The provider's own raw-driver runtime (context, stream, allocation).
    RawDriver,
    /// Build-only reuse of the libtorch CUDA runtime owned by PyTorch.
    LibtorchReuse,
    /// Build-only reuse of the TensorFlow TFE eager runtime.
    TensorflowTfeReuse,
}

impl Lane {
    /// Whether toolkit options (`toolkit_root`, `min_toolkit_version`) apply.
    pub fn uses_toolkit(self) -> bool {
        self == Lane::RawDriver
    }
}

/// One of the provider's capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CudaCapability {
    /// Raw driver lane, Linux x86_64.
    LinuxX86_64,
    /// Raw driver lane, Linux AArch64.
    LinuxAarch64,
    /// Raw driver lane, Windows x86_64.
    WindowsX86_64,
    /// Build-only libtorch runtime reuse, Linux x86_64.
    LibtorchLinuxX86_64,
    /// Build-only TensorFlow TFE runtime reuse, Linux x86_64.
    TensorflowTfeLinuxX86_64,
}

impl CudaCapability {
    /// Every capability, in manifest order.
    pub const ALL: [CudaCapability; 5] = [
        CudaCapability::LinuxX86_64,
        CudaCapability::LinuxAarch64,
        CudaCapability::WindowsX86_64,
        CudaCapability::LibtorchLinuxX86_64,
        CudaCapability::TensorflowTfeLinuxX86_64,
    ];

    /// The manifest spelling.
    pub fn id(self) -> &'static str {
        match self {
            Self::LinuxX86_64 => "cuda-linux-x86_64",
            Self::LinuxAarch64 => "cuda-linux-aarch64",
            Self::WindowsX86_64 => "cuda-windows-x86_64",
            Self::LibtorchLinuxX86_64 => "cuda-libtorch-linux-x86_64",
            Self::TensorflowTfeLinuxX86_64 => "cuda-tensorflow-tfe-linux-x86_64",
        }
    }

    /// Look a capability up by its manifest spelling.
    pub fn parse(id: &str) -> Option<CudaCapability> {
        Self::ALL.into_iter().find(|c| c.id() == id)
    }

    /// The host platform the capability serves.
    pub fn platform(self) -> HostPlatform {
        match self {
            Self::LinuxAarch64 => HostPlatform::new("linux", "aarch64"),
            Self::WindowsX86_64 => HostPlatform::new("windows", "x86_64"),
            Self::LinuxX86_64 | Self::LibtorchLinuxX86_64 | Self::TensorflowTfeLinuxX86_64 => {
                HostPlatform::new("linux", "x86_64")
            }
        }
    }

    /// The capability's runtime lane.
    pub fn lane(self) -> Lane {
        match self {
            Self::LinuxX86_64 | Self::LinuxAarch64 | Self::WindowsX86_64 => Lane::RawDriver,
            Self::LibtorchLinuxX86_64 => Lane::LibtorchReuse,
            Self::TensorflowTfeLinuxX86_64 => Lane::TensorflowTfeReuse,
        }
    }
}

impl fmt::Display for CudaCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// The manifest this provider declares (`support_claim: false`).
pub fn manifest() -> ProviderManifest {
    ProviderManifest {
        id: PROVIDER_ID.to_owned(),
        capabilities: CudaCapability::ALL
            .iter()
            .map(|c| c.id().to_owned())
            .collect(),
        support_claim: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_lists_the_five_capabilities_and_claims_nothing() {
        let m = manifest();
        assert_eq!(m.id, "rextio-device-cuda");
        assert_eq!(
            m.capabilities,
            [
                "cuda-linux-x86_64",
                "cuda-linux-aarch64",
                "cuda-windows-x86_64",
                "cuda-libtorch-linux-x86_64",
                "cuda-tensorflow-tfe-linux-x86_64"
            ]
        );
        assert!(!m.support_claim);
    }

    #[test]
    fn capabilities_have_their_platform_and_lane() {
        let table = [
            ("cuda-linux-x86_64", "linux", "x86_64", Lane::RawDriver),
            ("cuda-linux-aarch64", "linux", "aarch64", Lane::RawDriver),
            ("cuda-windows-x86_64", "windows", "x86_64", Lane::RawDriver),
            (
                "cuda-libtorch-linux-x86_64",
                "linux",
                "x86_64",
                Lane::LibtorchReuse,
            ),
            (
                "cuda-tensorflow-tfe-linux-x86_64",
                "linux",
                "x86_64",
                Lane::TensorflowTfeReuse,
            ),
        ];
        for (id, os, arch, lane) in table {
            let c = CudaCapability::parse(id).unwrap();
            assert_eq!(c.id(), id);
            assert_eq!(c.platform(), HostPlatform::new(os, arch));
            assert_eq!(c.lane(), lane);
        }
        for bad in [
            "",
            "cuda",
            "CUDA-LINUX-X86_64",
            "cuda-macos-aarch64",
            "cuda-linux-x86",
        ] {
            assert_eq!(CudaCapability::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn decimal_and_toolkit_version_parsing_is_strict() {
        assert_eq!(parse_decimal("0"), Some(0));
        assert_eq!(parse_decimal("12040"), Some(12040));
        for bad in ["", "01", "+1", "-1", "1.0", " 1", "1e3", "99999999999"] {
            assert_eq!(parse_decimal(bad), None, "{bad:?}");
        }
        assert_eq!(
            ToolkitVersion::parse_major_minor("12.4"),
            Some(ToolkitVersion {
                major: 12,
                minor: 4
            })
        );
        for bad in ["12", "12.", ".4", "12.4.1", "v12.4", "12.04"] {
            assert_eq!(ToolkitVersion::parse_major_minor(bad), None, "{bad:?}");
        }
        assert!(
            MANIFEST_MIN_TOOLKIT_VERSION
                < ToolkitVersion {
                    major: 12,
                    minor: 1
                }
        );
        assert!(
            ToolkitVersion {
                major: 11,
                minor: 8
            } < MANIFEST_MIN_TOOLKIT_VERSION
        );
    }
}

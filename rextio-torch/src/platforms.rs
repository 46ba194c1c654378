//! The platform table: every Linux/macOS x {x86, x64, ARM32, ARM64} cell plus Windows, with a
//! stable reason code. Declarative: it never probes the ambient host. Only Linux x86_64 is
//! certifiable here; a rule is `verified` only with certification evidence of the host.

use rextio_plugin_api::{PlatformCell, PlatformState};

/// The table.
pub fn table() -> Vec<PlatformCell> {
    vec![
        PlatformCell::new("linux", "x86_64", PlatformState::Certifiable, "torch-evidence-required", "torch 2.13.0 CPython 3.11 wheel exists; `cargo xtask certify` records evidence on this host"),
        PlatformCell::new("linux", "aarch64", PlatformState::Experimental, "torch-not-certified-here", "pinned wheel exists; no certification runner in this project"),
        PlatformCell::new("macos", "aarch64", PlatformState::Experimental, "torch-not-certified-here", "pinned wheel exists; no certification runner in this project"),
        PlatformCell::new("macos", "x86_64", PlatformState::Unsupported, "torch-no-pinned-wheel", "torch 2.13.0 publishes no macOS x86_64 wheel"),
        PlatformCell::new("linux", "x86", PlatformState::Unsupported, "torch-no-pinned-wheel", "torch 2.13.0 publishes no CPython 3.11 i686 wheel"),
        PlatformCell::new("linux", "arm32", PlatformState::Unsupported, "torch-no-pinned-wheel", "torch 2.13.0 publishes no CPython 3.11 ARMv7 wheel"),
        PlatformCell::new("macos", "x86", PlatformState::Unsupported, "torch-impossible-target", "no modern macOS runs on i686"),
        PlatformCell::new("macos", "arm32", PlatformState::Unsupported, "torch-impossible-target", "no modern macOS runs on ARMv7"),
        PlatformCell::new("windows", "*", PlatformState::Deferred, "torch-windows-deferred", "unverified; no support claim"),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_cell_once_one_certifiable_and_reasons_in_our_namespace() {
        assert_eq!(
            rextio_plugin_api::kit::check_platform_table(&super::table(), "torch"),
            Ok(())
        );
    }
}

//! The platform table: every Linux/macOS x {x86, x64, ARM32, ARM64} cell plus Windows, with a
//! stable reason code. Declarative: it never probes the ambient host. Only Linux x86_64 is
//! certifiable here; a rule is `verified` only with certification evidence of the host.

use rextio_plugin_api::{kit, PlatformCell, PlatformState};

/// The table.
pub fn table() -> Vec<PlatformCell> {
    let mut cells = vec![
        PlatformCell::new("linux", "x86_64", PlatformState::Certifiable, "torch-evidence-required", "torch 2.13.0 CPython 3.11 wheel exists; `cargo xtask certify` records evidence on this host"),
        PlatformCell::new("linux", "aarch64", PlatformState::Experimental, "torch-not-certified-here", "pinned wheel exists; no certification runner in this project"),
        PlatformCell::new("macos", "aarch64", PlatformState::Experimental, "torch-not-certified-here", "pinned wheel exists; no certification runner in this project"),
        PlatformCell::new("macos", "x86_64", PlatformState::Unsupported, "torch-no-pinned-wheel", "torch 2.13.0 publishes no macOS x86_64 wheel"),
        PlatformCell::new("linux", "x86", PlatformState::Unsupported, "torch-no-pinned-wheel", "torch 2.13.0 publishes no CPython 3.11 i686 wheel"),
        PlatformCell::new("linux", "arm32", PlatformState::Unsupported, "torch-no-pinned-wheel", "torch 2.13.0 publishes no CPython 3.11 ARMv7 wheel"),
    ];
    cells.extend(kit::impossible_platform_cells("torch"));
    cells.push(PlatformCell::new(
        "windows",
        "*",
        PlatformState::Deferred,
        "torch-windows-deferred",
        "unverified; no support claim",
    ));
    cells
}

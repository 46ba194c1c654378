//! The platform table: every Linux/macOS x {x86, x64, ARM32, ARM64} cell plus Windows, with a
//! stable reason code. Declarative: it never probes the ambient host. The runtime compiles only
//! for Linux GNU x86_64/aarch64 (elsewhere `compile_error!`); Linux x86_64 is certifiable here.

use rextio_plugin_api::{kit, PlatformCell, PlatformState};

/// The table.
pub fn table() -> Vec<PlatformCell> {
    let mut cells = vec![
        PlatformCell::new("linux", "x86_64", PlatformState::Certifiable, "tensorflow-evidence-required", "tensorflow 2.21.0 manylinux_2_27 CPython 3.11 wheel; `cargo xtask certify` records evidence on this host"),
        PlatformCell::new("linux", "aarch64", PlatformState::Experimental, "tensorflow-not-certified-here", "the manylinux aarch64 wheel exports the same TFE and EagerTensor bridge symbols; no certification runner in this project"),
        PlatformCell::new("macos", "aarch64", PlatformState::Unsupported, "tensorflow-runtime-linux-only", "the runtime module's loader profile is Linux GNU only; macOS arm64 fails closed at native build"),
        PlatformCell::new("macos", "x86_64", PlatformState::Unsupported, "tensorflow-no-pinned-wheel", "tensorflow 2.21.0 publishes no macOS x86_64 wheel"),
        PlatformCell::new("linux", "x86", PlatformState::Unsupported, "tensorflow-no-pinned-wheel", "tensorflow 2.21.0 publishes no i686 wheel"),
        PlatformCell::new("linux", "arm32", PlatformState::Unsupported, "tensorflow-no-pinned-wheel", "tensorflow 2.21.0 publishes no ARMv7 wheel"),
    ];
    cells.extend(kit::impossible_platform_cells("tensorflow"));
    cells.push(PlatformCell::new(
        "windows",
        "*",
        PlatformState::Deferred,
        "tensorflow-windows-deferred",
        "no dlopen/RTLD_NOLOAD loader contract; native build fails closed",
    ));
    cells
}

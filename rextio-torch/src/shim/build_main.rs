//! Build script of the embedded copy of rextio-torch (generated crates depend on it): compiles
//! the runtime's boundary shim.

#[path = "build_shim.rs"]
mod build_shim;

fn main() {
    // The workspace crate sets this cfg when it embeds its sources; the copy never does.
    println!("cargo::rustc-check-cfg=cfg(rextio_embedded_sources)");
    let dir = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("src/shim");
    if std::env::var_os("CARGO_FEATURE_RUNTIME").is_some() {
        if let Err(e) = build_shim::compile(&dir) {
            eprintln!("rextio-torch: {e}");
            std::process::exit(1);
        }
    }
}

//! Embeds this crate's sources (with a standalone manifest) so that generated crates can depend
//! on a copy the host writes under its cache directory, never on this checkout; with the
//! `runtime` feature, compiles the runtime's boundary shim (`src/shim/rx_shim.cpp`).

#[path = "src/shim/build_shim.rs"]
mod build_shim;

fn main() {
    rextio_embed::embed_or_exit();
    if std::env::var_os("CARGO_FEATURE_RUNTIME").is_some() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/shim");
        if let Err(e) = build_shim::compile(&dir) {
            eprintln!("rextio-torch: {e}");
            std::process::exit(1);
        }
    }
}

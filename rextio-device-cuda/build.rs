//! Embeds this crate's sources (with a standalone manifest) so that generated crates can depend
//! on a copy the host writes under its cache directory, never on this checkout.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(rextio_embedded_sources)");
    match rextio_embed::embed_crate() {
        Ok(()) => println!("cargo::rustc-cfg=rextio_embedded_sources"),
        Err(e) => {
            eprintln!("cannot embed the crate's sources: {e}");
            std::process::exit(1);
        }
    }
}

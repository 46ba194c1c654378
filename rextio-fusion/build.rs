//! Embeds this crate's sources (with a standalone manifest) so that generated crates can depend
//! on a copy the host writes under its cache directory, never on this checkout.

fn main() {
    rextio_embed::embed_or_exit();
}

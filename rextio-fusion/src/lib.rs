//! # rextio-fusion
//!
//! Fused regions for every Rextio backend. A straight-line region of claims becomes one small
//! [`Program`] that runs on float32 CPU buffers with this crate's SIMD [`kernels`], instead of
//! one framework call (and one allocation) per site:
//!
//! - [`ir`]: the program, its instructions and their one op vocabulary (the kernels');
//! - [`render`]: a program and its call as Rust tokens for a generated crate;
//! - [`plan`]: shapes, broadcasts, buffer assignment and reuse, in-place owned operands, work;
//! - [`exec`]: running a planned call over a backend's tensors through [`exec::Host`];
//! - [`kernels`]: the float32 kernels with their instruction-set dispatch.
//!
//! A backend keeps only what is its own: which of its rules map to which instruction (and
//! whether its framework's semantics are the kernels' for that op), how it views its tensors'
//! memory and allocates outputs, and when its per-op path is faster. Nothing here knows a
//! framework, Python or a plugin.

pub mod exec;
pub mod ir;
pub mod kernels;
pub mod plan;
pub mod render;

pub use exec::{
    run, Buf, Edges, Host, Limits, PathMode, PathPolicy, GIL_RELEASE_ALONE_WORK, GIL_RELEASE_WORK,
};
pub use ir::{
    number_slots, operands, region_inputs, Input, Ins, Program, ProgramBuf, ProgramView, ReduceF,
    UnaryF, V,
};
pub use plan::{broadcast, plan, Dt, Plan, Role, Shape, Store};
pub use render::{render, render_call, render_region_call};

/// This crate's sources with a standalone manifest, embedded at build time (see `rextio-embed`),
/// so generated crates depend on a copy under the host's cache directory.
#[cfg(rextio_embedded_sources)]
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_sources.rs"));
}

/// This crate's embedded sources (relative path, text) when it was built from the workspace;
/// `None` in an embedded copy (a generated crate's), which never hands itself on.
pub fn embedded_sources() -> Option<&'static [(&'static str, &'static str)]> {
    #[cfg(rextio_embedded_sources)]
    {
        Some(embedded::EMBEDDED_SOURCES)
    }
    #[cfg(not(rextio_embedded_sources))]
    {
        None
    }
}

/// The directory this crate was built from.
pub const SOURCE_DIR: &str = env!("CARGO_MANIFEST_DIR");

#[cfg(test)]
mod tests;

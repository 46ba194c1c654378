//! The host probes of [`crate::eager_specials`]: which of eager's GELU paths a call takes, and
//! that path's answers on the disputed inputs, measured through libtorch once per process.

use super::shim;
use crate::eager_specials::{edges_of, probe_values};
use rextio_fusion::kernels as k;
use std::sync::OnceLock;

/// Copies of the probe values in oneDNN's probe: every value lands at several vector lanes,
/// and the last copy is cut short so part of the vector falls in the tail.
const COPIES: usize = 5;

/// The edges the fused GELU kernels must use for a GELU whose input has `numel` elements, as
/// eager would compute it on this host now; `None` when this host's eager is not one the kernels
/// can reproduce (the fused path then declines the call).
pub(crate) fn gelu_edges(numel: usize) -> Option<k::GeluEdges> {
    if numel > 1 && shim::mkldnn_enabled() {
        onednn_edges()
    } else {
        own_kernel_edges()
    }
}

/// What eager's oneDNN path answers on this host.
fn onednn_edges() -> Option<k::GeluEdges> {
    static EDGES: OnceLock<Option<k::GeluEdges>> = OnceLock::new();
    if let Some(e) = EDGES.get() {
        return *e;
    }
    let values = probe_values();
    let mut xs = Vec::with_capacity(values.len() * COPIES);
    for _ in 0..COPIES {
        xs.extend_from_slice(&values);
    }
    xs.truncate(xs.len() - values.len() / 2);
    let edges = shim::probe_gelu(&xs, false).and_then(|ys| edges_of(&xs, &ys));
    // A program that turned oneDNN off while the probe ran measured torch's own kernel: keep
    // nothing and decline this call.
    if !shim::mkldnn_enabled() {
        return None;
    }
    *EDGES.get_or_init(|| edges)
}

/// What torch's own kernel answers on this host.
fn own_kernel_edges() -> Option<k::GeluEdges> {
    static EDGES: OnceLock<Option<k::GeluEdges>> = OnceLock::new();
    *EDGES.get_or_init(|| {
        let xs = probe_values();
        shim::probe_gelu(&xs, true).and_then(|ys| edges_of(&xs, &ys))
    })
}

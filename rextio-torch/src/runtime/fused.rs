//! The fused path: run a [`Program`] with the fusion crate on the float32 CPU buffers of its
//! tensor inputs, writing results straight into freshly allocated output tensors (or, for an
//! owned input, in place).
//!
//! What is torch's own lives here, as [`rextio_fusion::Host`]: a tensor's view (float32, CPU,
//! contiguous, from the boundary's cached view or one shim call), outputs allocated with
//! `at::empty`, GELU's edges as eager answers them on this host ([`eager_host`]), and the GIL
//! released around large work. Any input, shape or size outside the fused path's reach returns
//! `Ok(None)` before anything is written, and the generated code runs the per-site libtorch
//! path instead, with libtorch's own errors. `REXTIO_TORCH_PATH` forces a path: `fused` (every
//! call the program can express, regardless of the size guard), `per-op` (never fused), or
//! `auto` (default).

use super::eager_host;
use super::shim::{self, FastView};
use super::RxtTorchTensor;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::PyResult;
use rextio_fusion::{Dt, Edges, PathPolicy, Program, Shape, GIL_RELEASE_WORK};

/// The path this process takes, read once: `REXTIO_TORCH_PATH` forces one; `auto` keeps a
/// call on libtorch when one of its matrix products exceeds 2^21 multiply-adds or one of its
/// values 2^18 elements (libtorch's BLAS and threads win there).
static POLICY: PathPolicy = PathPolicy::new("REXTIO_TORCH_PATH", "rextio-torch", 1 << 21, 1 << 18);

/// Run `prog` fused, or `Ok(None)` when the per-site path must run instead.
///
/// While `torch.jit.trace` records on this thread the call always declines: the fused kernels
/// write buffers libtorch never sees, so the trace would hold the call's result as a constant
/// (and answer every later input with it). The per-site path's libtorch operations go through
/// the dispatcher, where the tracer records them as it records eager's.
pub fn fused<const N: usize>(
    prog: &'static Program,
    tensors: &[&RxtTorchTensor],
    scalars: &[f64],
) -> PyResult<Option<[RxtTorchTensor; N]>> {
    POLICY.run::<Torch, N>(prog, tensors, scalars, || {
        Ok((!shim::is_tracing()).then_some(Torch))
    })
}

/// libtorch as the fusion crate's host.
struct Torch;

impl rextio_fusion::Host for Torch {
    type Tensor = RxtTorchTensor;
    type Error = pyo3::PyErr;

    /// Cached when the boundary or a fused call made it, else one shim call. Inlined into the
    /// fusion crate's input loop: returned through memory, its shape was read back before the
    /// stores that wrote it could forward (a stall per input).
    #[inline]
    fn view(&self, t: &RxtTorchTensor, writable: bool) -> PyResult<Option<(Shape, *mut f32)>> {
        let v = match t.cached_view() {
            FastView::Unknown => {
                let mut meta = shim::RxMeta::zeroed();
                shim::describe(t.tensor(), writable, &mut meta)?;
                FastView::of(&meta)
            }
            known => known,
        };
        Ok(match v {
            FastView::F32(shape, addr) => Some((shape, addr as *mut f32)),
            _ => None,
        })
    }

    fn share(&self, t: &RxtTorchTensor) -> RxtTorchTensor {
        t.clone()
    }

    fn alloc(&self, shape: Shape, dt: Dt) -> PyResult<(RxtTorchTensor, *mut u8)> {
        let mut sizes = [0i64; 2];
        for (s, &d) in sizes.iter_mut().zip(shape.sizes()) {
            *s = i64::try_from(d).map_err(|_| internal("a size overflows int64"))?;
        }
        let code = match dt {
            Dt::F32 => shim::SCALAR_FLOAT,
            Dt::I64 => shim::SCALAR_INT64,
        };
        let (t, ptr) = shim::empty_cpu(&sizes[..shape.rank], code)?;
        // The next fused call reading this output needs no shim call to view it.
        let fast = match dt {
            Dt::F32 => FastView::F32(shape, ptr as usize),
            Dt::I64 => FastView::Outside,
        };
        Ok((RxtTorchTensor::with_view(t, fast), ptr.cast()))
    }

    /// Eager's answers on the disputed inputs for a GELU of one element and of more (see
    /// [`eager_host`]), probed only where the call has such a GELU.
    fn edges(&self, one: bool, many: bool) -> Option<Edges> {
        // Unused when not asked for.
        let unused = rextio_fusion::kernels::GeluEdges::PRODUCT_FORM;
        Some(Edges {
            gelu_one: if one {
                eager_host::gelu_edges(1)?
            } else {
                unused
            },
            gelu_many: if many {
                eager_host::gelu_edges(2)?
            } else {
                unused
            },
        })
    }

    fn run_kernels<T: Send>(&self, work: usize, kernels: impl FnOnce() -> T + Send) -> T {
        run_kernels(work, kernels)
    }

    fn internal(&self, what: &str) -> pyo3::PyErr {
        internal(what)
    }

    fn setting_error(what: &str) -> pyo3::PyErr {
        PyValueError::new_err(what.to_owned())
    }
}

/// Run a call's kernels: without the GIL from [`GIL_RELEASE_WORK`] units of work (other Python
/// threads run meanwhile, so a threaded server scales), with it below, and with it too up to
/// [`rextio_fusion::GIL_RELEASE_ALONE_WORK`] when no other Python thread exists
/// ([`super::keeps_gil`]). Inside a body run by [`super::run_body`] the GIL, once released,
/// stays released until the body ends (one hand-off per call rather than one per region);
/// elsewhere it is released around these kernels only.
fn run_kernels<T: Send>(work: usize, kernels: impl FnOnce() -> T + Send) -> T {
    if work < GIL_RELEASE_WORK || super::release_for_body(work) {
        kernels()
    } else {
        pyo3::Python::attach(|py| {
            if super::keeps_gil(py, work) {
                kernels()
            } else {
                py.detach(kernels)
            }
        })
    }
}

fn internal(what: &str) -> pyo3::PyErr {
    PyRuntimeError::new_err(format!(
        "rextio-torch: internal error in the fused path: {what}"
    ))
}

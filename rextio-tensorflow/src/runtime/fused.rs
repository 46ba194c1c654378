//! The fused path: run a region's [`Program`] with the fusion crate on the host memory of its
//! EagerTensors, instead of one `TFE_Execute` per op.
//!
//! What is TensorFlow's own lives here, as [`rextio_fusion::Host`]:
//! - inputs are read in place from each handle's buffer (`TFE_TensorHandleDevicePointer`; no
//!   copy) when the handle is a float32 tensor of rank 1 or 2 on this process's local CPU
//!   (`/job:localhost/replica:0/task:0/device:CPU:0`, by exact name) in the region's eager
//!   context, its buffer as long as its shape says; anything else declines the call. An input
//!   the host proved owned is overwritten in place only when its buffer is its handle's alone
//!   (allocated by this path and read by nothing but fused programs since: TensorFlow may share
//!   one buffer between handles, through view-like ops, forwarded inputs or NumPy); every other
//!   input is only read;
//! - outputs are allocated once as TF tensors (`TF_AllocateTensor`, `TFE_NewTensorHandle`)
//!   and leave as EagerTensors through the usual boundary;
//! - kernels run with denormals flushed to zero, as TensorFlow's CPU kernels run;
//! - TensorFlow has no GELU rule, so GELU edges are never asked for;
//! - the GIL is released around large work.
//!
//! `REXTIO_TF_PATH` forces a path: `fused` (every call the program can express), `per-op`
//! (never fused) or `auto` (default: sizes up to the limits below).

use super::eager::{new_host_tensor, Local, Status};
use super::loader::{TF_FLOAT, TF_INT64};
use super::RxtTfTensor;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::{PyResult, Python};
use rextio_fusion::{Dt, Edges, PathPolicy, Program, Shape, GIL_RELEASE_WORK};

use std::cell::OnceCell;
use std::rc::Rc;

/// The path this process takes, read once: `REXTIO_TF_PATH` forces one; `auto` keeps a call on
/// TFE when one of its matrix products exceeds 2^24 multiply-adds (where TFE's threaded Eigen
/// and oneDNN kernels may win) or one of its values 2^20 elements. Measured with one TF thread
/// on an AVX-512 host, the fused path still ran the bench's 256×256 · 256×128 layer (8.4 M
/// multiply-adds, bias, relu) in 116 µs against TFE's 289 µs and TFLite's 142 µs, so the
/// bound sits above it.
static POLICY: PathPolicy =
    PathPolicy::new("REXTIO_TF_PATH", "rextio-tensorflow", 1 << 24, 1 << 20);

/// Run `prog` fused on `tensors` (and `scalars`), or `Ok(None)` when the per-op path must run
/// instead.
pub fn fused<const N: usize>(
    prog: &'static Program,
    tensors: &[&RxtTfTensor],
    scalars: &[f64],
) -> PyResult<Option<[RxtTfTensor; N]>> {
    POLICY.run::<Tf, N>(prog, tensors, scalars, || Tf::for_call(tensors))
}

/// TensorFlow's eager runtime as the fusion crate's host, for one call.
struct Tf {
    context: Rc<super::eager::Context>,
    device: Rc<std::ffi::CString>,
    /// Made when a TensorFlow call first needs one (a call whose views are all known and that
    /// allocates nothing makes none).
    status: OnceCell<Status>,
}

impl Tf {
    /// The host of a call on `tensors`, which share the first one's eager context and device;
    /// `None` unless that device is this process's local CPU, the one device the fused path
    /// reads and writes.
    fn for_call(tensors: &[&RxtTfTensor]) -> PyResult<Option<Tf>> {
        let Some(first) = tensors.first() else {
            return Ok(None);
        };
        if !first
            .inner
            .context
            .is_local(&first.facts.device, Local::Cpu0)
        {
            return Ok(None);
        }
        first.inner.context.check_sync()?;
        Ok(Some(Tf {
            context: Rc::clone(&first.inner.context),
            device: Rc::clone(&first.facts.device),
            status: OnceCell::new(),
        }))
    }

    fn status(&self) -> PyResult<&Status> {
        if let Some(s) = self.status.get() {
            return Ok(s);
        }
        let s = Status::new(self.context.api)?;
        Ok(self.status.get_or_init(|| s))
    }
}

impl rextio_fusion::Host for Tf {
    type Tensor = RxtTfTensor;
    type Error = pyo3::PyErr;

    fn view(&self, t: &RxtTfTensor, _writable: bool) -> PyResult<Option<(Shape, *mut f32)>> {
        let f = &t.facts;
        if f.dtype != TF_FLOAT
            || !(1..=2).contains(&f.rank)
            || f.device != self.device
            || t.inner.context.raw != self.context.raw
        {
            return Ok(None);
        }
        let v = t.inner.host_view(f.rank, self.status()?)?;
        let rank = usize::try_from(f.rank).unwrap_or(0);
        let Some(shape) = Shape::of(&v.dims[..rank]) else {
            return Ok(None);
        };
        let Some(want) = shape.numel().checked_mul(4) else {
            return Ok(None);
        };
        let ptr = v.addr as *mut f32;
        if v.bytes != want || ptr.is_null() || !ptr.is_aligned() {
            return Ok(None);
        }
        Ok(Some((shape, ptr)))
    }

    fn share(&self, t: &RxtTfTensor) -> RxtTfTensor {
        t.clone()
    }

    fn may_overwrite(&self, t: &RxtTfTensor) -> bool {
        t.inner.is_exclusive()
    }

    fn alloc(&self, shape: Shape, dt: Dt) -> PyResult<(RxtTfTensor, *mut u8)> {
        let mut dims = [0i64; 2];
        for (d, &s) in dims.iter_mut().zip(shape.sizes()) {
            *d = i64::try_from(s).map_err(|_| internal("a size overflows int64"))?;
        }
        let (dtype, width) = match dt {
            Dt::F32 => (TF_FLOAT, 4),
            Dt::I64 => (TF_INT64, 8),
        };
        let bytes = shape
            .numel()
            .checked_mul(width)
            .ok_or_else(|| internal("an output's size overflows"))?;
        let rank = shape.rank;
        let (handle, ptr) = new_host_tensor(&self.context, dtype, &dims[..rank], bytes)?;
        // The first host tensor of a context is checked in full; `TFE_NewTensorHandle` puts
        // every later one on the device that one showed, with the dtype and rank asked for.
        let facts = match self.context.host_device() {
            Some(device) if device == self.device => super::eager::Facts {
                dtype,
                rank: std::os::raw::c_int::try_from(rank)
                    .map_err(|_| internal("an output's rank overflows"))?,
                device,
            },
            _ => {
                let facts = handle.facts(self.status()?)?;
                if facts.device != self.device
                    || facts.dtype != dtype
                    || usize::try_from(facts.rank).ok() != Some(rank)
                {
                    return Err(internal(&format!(
                        "a new host tensor is a rank-{} {} on {}, not its inputs' device",
                        facts.rank,
                        super::dtype_name(facts.dtype),
                        facts.device.to_string_lossy()
                    )));
                }
                self.context.set_host_device(&facts.device);
                facts
            }
        };
        Ok((
            RxtTfTensor {
                inner: Rc::new(handle),
                facts,
            },
            ptr,
        ))
    }

    fn edges(&self, _one: bool, _many: bool) -> Option<Edges> {
        None
    }

    fn run_kernels<T: Send>(&self, work: usize, kernels: impl FnOnce() -> T + Send) -> T {
        let flushed = move || rextio_fusion::kernels::with_denormals_flushed(kernels);
        if work < GIL_RELEASE_WORK {
            flushed()
        } else {
            Python::attach(|py| py.detach(flushed))
        }
    }

    fn internal(&self, what: &str) -> pyo3::PyErr {
        internal(what)
    }

    fn setting_error(what: &str) -> pyo3::PyErr {
        PyValueError::new_err(what.to_owned())
    }
}

fn internal(what: &str) -> pyo3::PyErr {
    PyRuntimeError::new_err(format!(
        "rextio-tensorflow: internal error in the fused path: {what}"
    ))
}

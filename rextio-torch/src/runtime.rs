//! The runtime module linked into generated crates: zero-copy boundary, fallible ops, guard.
//!
//! Every libtorch error becomes a Python exception; nothing here unwraps or panics on a path a
//! user can reach. Values that came from Python are only ever read: in-place kernels run only on
//! owned temporaries (`*_owned`), which the host hands over when nothing else can observe them.

use crate::rules::Unary;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::rc::Rc;
use tch::{Device, Kind, Scalar, TchError, Tensor};

mod eager_host;
mod fused;
mod modules;
pub use fused::fused;
pub use modules::{
    is_symbolic, module_admit, module_call_check, module_entry_check, module_global_check,
    module_stamps,
};

mod shim;
#[cfg(test)]
mod tests;
pub(crate) use shim::FastView;

/// A torch tensor inside generated code. `Clone` shares storage.
///
/// A tensor argument is *borrowed*: the handle is the `at::Tensor` its Python object already
/// holds (no new C++ reference), and the object is not referenced either: it is an argument of
/// the running call, which its caller holds until the call returns, so the value must not outlive
/// the call (generated code drops every value before the wrapper returns, and hands results to
/// Python through [`wrap`], which takes a new reference). Nothing in a body therefore touches a
/// Python object, which lets [`run_body`] release the GIL. Other tensors own their handle behind an `Rc` (so the type is not
/// `Send`: a value never leaves the thread running the call), and cloning one (a fused call
/// handing back the buffer it overwrote in place, say) costs no libtorch call. Besides the
/// handle it may carry what the fused path needs to read it without asking libtorch again (its
/// float32 CPU view), known when the boundary or a fused call created it. Mutable access forgets
/// that view and first gives the value a handle of its own.
#[derive(Debug, Clone)]
pub struct RxtTorchTensor {
    h: Handle,
    view: FastView,
}

#[derive(Debug)]
enum Handle {
    /// The tensor inside this Python object (never freed here; the object is the call's
    /// argument, not referenced by the handle).
    Borrowed(ManuallyDrop<Tensor>, ArgObject),
    /// A handle of the runtime's own.
    Owned(Rc<Shared>),
}

/// An owned handle; cloning it (only done to make a shared one unique before an in-place op)
/// makes a new handle on the same storage. Dropping it hands the tensor to the shim, which
/// reuses it for a later output when nothing else can reach it.
#[derive(Debug)]
struct Shared(ManuallyDrop<Tensor>);

impl Shared {
    fn new(t: Tensor) -> Self {
        Shared(ManuallyDrop::new(t))
    }

    /// The tensor, which the caller now owns.
    fn into_inner(self) -> Tensor {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used again nor dropped, so the tensor is taken exactly once.
        unsafe { ManuallyDrop::take(&mut this.0) }
    }
}

impl Clone for Shared {
    fn clone(&self) -> Self {
        Shared::new(self.0.shallow_clone())
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: dropped once; the field is not used afterwards.
        shim::release(unsafe { ManuallyDrop::take(&mut self.0) });
    }
}

impl Clone for Handle {
    fn clone(&self) -> Self {
        match self {
            // Another borrow of the same `at::Tensor`: no C++ or Python reference is taken, so
            // the copy is bound by the same rule as the original (it must not outlive the call
            // whose argument, or kept-alive module attribute, holds the object), which every
            // value of a body obeys. Copying the pointer costs no allocation, where a handle of
            // our own would cost two (module bodies copy every weight they read).
            Handle::Borrowed(t, o) => {
                // SAFETY: the same live `at::Tensor*` the original borrows; never freed here.
                let copy = unsafe { Tensor::from_ptr(t.as_ptr().cast_mut()) };
                Handle::Borrowed(ManuallyDrop::new(copy), *o)
            }
            Handle::Owned(t) => Handle::Owned(Rc::clone(t)),
        }
    }
}

impl RxtTorchTensor {
    /// Wrap an owned libtorch handle (its view unknown until asked).
    pub fn from_tensor(t: Tensor) -> Self {
        Self::with_view(t, FastView::Unknown)
    }

    pub(crate) fn with_view(t: Tensor, view: FastView) -> Self {
        Self {
            h: Handle::Owned(Rc::new(Shared::new(t))),
            view,
        }
    }

    /// The libtorch handle.
    pub fn tensor(&self) -> &Tensor {
        match &self.h {
            Handle::Borrowed(t, _) => t,
            Handle::Owned(t) => &t.0,
        }
    }

    /// The libtorch handle, for an in-place op (forgets the cached view; a borrowed or shared
    /// handle is replaced by one of its own on the same storage first).
    pub fn tensor_mut(&mut self) -> &mut Tensor {
        self.view = FastView::Unknown;
        if let Handle::Borrowed(t, _) = &self.h {
            self.h = Handle::Owned(Rc::new(Shared::new(t.shallow_clone())));
        }
        match &mut self.h {
            Handle::Owned(arc) => &mut Rc::make_mut(arc).0,
            Handle::Borrowed(t, _) => t,
        }
    }

    pub(crate) fn cached_view(&self) -> FastView {
        self.view
    }
}

/// The Python object a borrowed argument lives in: an argument of the running call, alive until
/// the generated wrapper returns (its caller holds it), and never dereferenced without the GIL.
#[derive(Debug, Clone, Copy)]
struct ArgObject(NonNull<pyo3::ffi::PyObject>);

/// Where the GIL stands for the body running on this thread (see [`run_body`]).
#[derive(Clone, Copy)]
enum BodyGil {
    /// No body runs through `run_body` on this thread.
    Outside,
    /// A body runs and the thread holds the GIL.
    Held,
    /// A body runs and released the GIL; the saved thread state.
    Released(*mut pyo3::ffi::PyThreadState),
}

thread_local! {
    static BODY: Cell<BodyGil> = const { Cell::new(BodyGil::Outside) };
}

/// Run a native function's body (the generated wrapper's runner, plugin API 1.10). The body
/// starts holding the GIL; the first native work above [`rextio_fusion::GIL_RELEASE_WORK`]
/// releases it for the rest of the body (bodies touch no Python object: see
/// [`RxtTorchTensor`]), so other Python threads run meanwhile, and the GIL is held again before
/// this returns or unwinds. A body doing less work never releases it (releasing costs more than
/// it frees there), nor does one doing moderate work while no other Python thread exists
/// ([`keeps_gil`]).
pub fn run_body<R>(_py: Python<'_>, body: impl FnOnce() -> R) -> R {
    let outer = BODY.with(|b| b.replace(BodyGil::Held));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
    if let BodyGil::Released(state) = BODY.with(|b| b.replace(outer)) {
        // SAFETY: `state` is what `PyEval_SaveThread` returned on this thread during this body;
        // restoring it takes the GIL back before anything touches Python again.
        unsafe { pyo3::ffi::PyEval_RestoreThread(state) };
    }
    match result {
        Ok(r) => r,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Release the GIL for the rest of the body running through [`run_body`] on this thread, ahead
/// of `work` units of kernels, unless [`keeps_gil`] says no other thread could use it. Returns
/// whether the body has settled the GIL (`false` outside such a body: the caller then keeps to
/// its own GIL handling).
pub(crate) fn release_for_body(work: usize) -> bool {
    BODY.with(|b| match b.get() {
        BodyGil::Outside => false,
        BodyGil::Released(_) => true,
        BodyGil::Held => {
            // SAFETY: inside `run_body` this thread holds the GIL (the wrapper was called from
            // Python and has not released it).
            let py = unsafe { Python::assume_attached() };
            if !keeps_gil(py, work) {
                // SAFETY: as above; the rest of the body touches no Python object, and
                // `run_body` restores the saved state.
                b.set(BodyGil::Released(unsafe { pyo3::ffi::PyEval_SaveThread() }));
            }
            true
        }
    })
}

/// Whether kernels doing `work` units keep the GIL although they could release it: below
/// [`rextio_fusion::GIL_RELEASE_ALONE_WORK`], when no other Python thread exists to take it.
pub(crate) fn keeps_gil(py: Python<'_>, work: usize) -> bool {
    work < rextio_fusion::GIL_RELEASE_ALONE_WORK
        && rextio_plugin_api::runtime::gil::sole_python_thread(py)
}

/// Map a libtorch error to a Python `RuntimeError`, keeping libtorch's message without its C++
/// backtrace.
pub fn map_err(e: TchError) -> PyErr {
    torch_error(&e.to_string())
}

/// A libtorch error message (from tch or the boundary shim) as a Python `RuntimeError`, without
/// its C++ backtrace.
fn torch_error(text: &str) -> PyErr {
    let head = text
        .split("\nException raised from")
        .next()
        .unwrap_or(text)
        .trim_end();
    let head = head.strip_prefix("Internal torch error: ").unwrap_or(head);
    PyRuntimeError::new_err(format!("rextio-torch: {head}"))
}

fn extract(
    obj: &Bound<'_, PyAny>,
    kind: Kind,
    dtype: &str,
    rank: usize,
) -> PyResult<RxtTorchTensor> {
    extract_on(obj, Device::Cpu, kind, dtype, rank)
}

/// The boundary message for a tensor on the wrong device.
fn wrong_device(device: Device) -> PyErr {
    PyValueError::new_err(match device {
        Device::Cuda(0) => "rextio-torch: expected a cuda:0 tensor",
        _ => "rextio-torch: expected a CPU tensor",
    })
}

fn extract_on(
    obj: &Bound<'_, PyAny>,
    device: Device,
    kind: Kind,
    dtype: &str,
    rank: usize,
) -> PyResult<RxtTorchTensor> {
    let mut meta = shim::RxMeta::zeroed();
    let Some(ptr) = shim::borrow(obj, &mut meta)? else {
        return Err(PyTypeError::new_err(
            "rextio-torch: expected a torch.Tensor",
        ));
    };
    let Some(owner) = NonNull::new(obj.as_ptr()) else {
        return Err(PyTypeError::new_err(
            "rextio-torch: expected a torch.Tensor",
        ));
    };
    // SAFETY: `ptr` is the `at::Tensor` inside `obj`; the handle is never freed (ManuallyDrop)
    // and `obj`, a call argument that keeps it valid, outlives the value (see `ArgObject`).
    let t = ManuallyDrop::new(unsafe { Tensor::from_ptr(ptr.as_ptr().cast()) });
    let mut t = RxtTorchTensor {
        h: Handle::Borrowed(t, ArgObject(owner)),
        view: FastView::Unknown,
    };
    let on_device = match device {
        Device::Cpu => meta.device_type == shim::DEVICE_CPU,
        Device::Cuda(i) => {
            meta.device_type == shim::DEVICE_CUDA
                && i64::from(meta.device_index) == i64::try_from(i).unwrap_or(-1)
        }
        _ => false,
    };
    if !on_device {
        return Err(wrong_device(device));
    }
    let want = match kind {
        Kind::Float => shim::SCALAR_FLOAT,
        Kind::Int64 => shim::SCALAR_INT64,
        Kind::Bool => shim::SCALAR_BOOL,
        // Kinds without a code here are read through libtorch.
        _ => -1,
    };
    let kind_ok = if want >= 0 {
        meta.scalar_type == want
    } else {
        t.tensor().f_kind().ok() == Some(kind)
    };
    if !kind_ok {
        return Err(PyValueError::new_err(format!(
            "rextio-torch: expected a {dtype} tensor"
        )));
    }
    if meta.layout != shim::LAYOUT_STRIDED {
        return Err(PyValueError::new_err(
            "rextio-torch: expected a strided (dense) tensor",
        ));
    }
    let got = meta.rank;
    if usize::try_from(got).ok() != Some(rank) {
        return Err(PyValueError::new_err(format!(
            "rextio-torch: expected rank-{rank} tensor, got rank {got}"
        )));
    }
    t.view = FastView::of(&meta);
    Ok(t)
}

fn extract_f32_cpu(obj: &Bound<'_, PyAny>, rank: usize) -> PyResult<RxtTorchTensor> {
    extract(obj, Kind::Float, "float32", rank)
}

/// Boundary check for `TensorF32Cpu1D`.
pub fn extract_f32_cpu_1d(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<RxtTorchTensor> {
    extract_f32_cpu(obj, 1)
}

/// Boundary check for `TensorF32Cpu2D`.
pub fn extract_f32_cpu_2d(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<RxtTorchTensor> {
    extract_f32_cpu(obj, 2)
}

/// The only device of the build-only CUDA lane.
const CUDA0: Device = Device::Cuda(0);

/// Boundary check for `TensorF32Cuda0_1D`: a strided float32 rank-1 tensor already on `cuda:0`
/// (never copied or moved).
pub fn extract_f32_cuda0_1d(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<RxtTorchTensor> {
    extract_on(obj, CUDA0, Kind::Float, "float32", 1)
}

/// Boundary check for `TensorF32Cuda0_2D`: a strided float32 rank-2 tensor already on `cuda:0`
/// (never copied or moved).
pub fn extract_f32_cuda0_2d(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<RxtTorchTensor> {
    extract_on(obj, CUDA0, Kind::Float, "float32", 2)
}

/// Hand a `cuda:0` result back to Python (no storage copy); a result on any other device is an
/// error, never a transfer.
pub fn wrap_cuda0(py: Python<'_>, t: RxtTorchTensor) -> PyResult<Py<PyAny>> {
    if t.tensor().device() != CUDA0 {
        return Err(wrong_device(CUDA0));
    }
    if t.tensor().is_sparse() || t.tensor().is_mkldnn() {
        return Err(PyValueError::new_err(
            "rextio-torch: expected a strided (dense) tensor",
        ));
    }
    wrap(py, t)
}

/// Every operand and result of the CUDA slice: float32 on `cuda:0` with the rank the rule
/// proved. A violation is an error naming the op; nothing is moved to another device.
fn cuda0(t: &RxtTorchTensor, rank: usize, op: &str) -> PyResult<()> {
    if t.tensor().device() != CUDA0 {
        return Err(PyValueError::new_err(format!(
            "rextio-torch: {op}: expected a cuda:0 tensor"
        )));
    }
    if t.tensor().f_kind().ok() != Some(Kind::Float) {
        return Err(PyValueError::new_err(format!(
            "rextio-torch: {op}: expected a float32 tensor"
        )));
    }
    let got = t.tensor().dim();
    if got != rank {
        return Err(PyValueError::new_err(format!(
            "rextio-torch: {op}: expected rank-{rank} tensor, got rank {got}"
        )));
    }
    Ok(())
}

fn cuda0_result(r: Result<Tensor, TchError>, rank: usize, op: &str) -> PyResult<RxtTorchTensor> {
    let t = ok(r)?;
    cuda0(&t, rank, op)?;
    Ok(t)
}

/// CUDA lane: `a @ b` with both operands rank 2 on `cuda:0` (libtorch's CUDA matmul; no
/// transfer).
pub fn cuda0_matmul_2d(a: &RxtTorchTensor, b: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    cuda0(a, 2, "matmul")?;
    cuda0(b, 2, "matmul")?;
    cuda0_result(a.tensor().f_matmul(b.tensor()), 2, "matmul")
}

/// CUDA lane: `h + bias` with `h` rank 2 and `bias` rank 1, both on `cuda:0`.
pub fn cuda0_add_bias_2d_1d(h: &RxtTorchTensor, bias: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    cuda0(h, 2, "add")?;
    cuda0(bias, 1, "add")?;
    cuda0_result(h.tensor().f_add(bias.tensor()), 2, "add")
}

/// CUDA lane: `h.relu()` on a rank-2 `cuda:0` tensor (out of place).
pub fn cuda0_relu_2d(h: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    cuda0(h, 2, "relu")?;
    cuda0_result(h.tensor().f_relu(), 2, "relu")
}

/// CUDA lane: `h.mean(dim=1)` on a rank-2 `cuda:0` tensor; the result is rank 1 on `cuda:0`.
pub fn cuda0_mean_dim1_2d(h: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    cuda0(h, 2, "mean")?;
    cuda0_result(
        h.tensor().f_mean_dim(&[1i64][..], false, None::<Kind>),
        1,
        "mean",
    )
}

/// Hand a tensor back to Python (no storage copy).
pub fn wrap(py: Python<'_>, t: RxtTorchTensor) -> PyResult<Py<PyAny>> {
    match t.h {
        // An argument returned as it came: the same Python object, as eager returns it.
        // SAFETY: the object is an argument of the running call (see `ArgObject`), alive; we
        // hold the GIL (`py`) and take a new reference.
        Handle::Borrowed(_, owner) => {
            Ok(unsafe { Bound::from_borrowed_ptr(py, owner.0.as_ptr()) }.unbind())
        }
        // The only handle: moved into the Python object.
        Handle::Owned(rc) => match Rc::try_unwrap(rc) {
            Ok(shared) => shim::wrap_owned(py, shared.into_inner()),
            Err(rc) => shim::wrap_owned(py, rc.0.shallow_clone()),
        },
    }
}

/// The function-scope no-grad guard: outputs never require grad, and the caller's grad mode is
/// restored when it drops, on every exit.
pub struct FunctionGuard {
    was_enabled: bool,
}

impl FunctionGuard {
    /// Disable grad for the rest of the scope.
    pub fn enter() -> Self {
        Self {
            was_enabled: shim::set_grad_enabled(false),
        }
    }
}

impl Drop for FunctionGuard {
    fn drop(&mut self) {
        shim::set_grad_enabled(self.was_enabled);
    }
}

fn ok(r: Result<Tensor, TchError>) -> PyResult<RxtTorchTensor> {
    r.map(RxtTorchTensor::from_tensor).map_err(map_err)
}

/// Boundary check for `TensorI64Cpu1D`.
pub fn extract_i64_cpu_1d(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<RxtTorchTensor> {
    extract(obj, Kind::Int64, "int64", 1)
}

/// `F.linear(x, w, b)` / `F.linear(x, w)`.
pub fn linear(
    x: &RxtTorchTensor,
    w: &RxtTorchTensor,
    b: Option<&RxtTorchTensor>,
) -> PyResult<RxtTorchTensor> {
    ok(x.tensor().f_linear(w.tensor(), b.map(|b| b.tensor())))
}

/// `a @ b` for rank 2 x 2, 2 x 1 and 1 x 2.
pub fn matmul(a: &RxtTorchTensor, b: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(a.tensor().f_matmul(b.tensor()))
}

macro_rules! binary {
    ($name:ident, $owned:ident, $assign:ident, $assign_owned:ident, $f:ident, $f_:ident, $op:literal) => {
        #[doc = concat!("`a ", $op, " b` on tensors.")]
        pub fn $name(a: &RxtTorchTensor, b: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
            ok(a.tensor().$f(b.tensor()))
        }
        #[doc = concat!("`a ", $op, " b` where `a` is an owned temporary: in place when the result keeps `a`'s shape.")]
        pub fn $owned(mut a: RxtTorchTensor, b: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
            if crate::shape::broadcasts_into(&a.tensor().size(), &b.tensor().size()) {
                // The returned handle aliases `a`; only the side effect matters.
                drop(a.tensor_mut().$f_(b.tensor()).map_err(map_err)?);
                Ok(a)
            } else {
                $name(&a, b)
            }
        }
        #[doc = concat!("`a ", $op, "= b` on a tensor nothing else refers to: eager updates `a` in place, so a broadcast that would grow `a` raises eager's error; otherwise `a ", $op, " b`.")]
        pub fn $assign(a: &RxtTorchTensor, b: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
            if !crate::shape::broadcasts_into(&a.tensor().size(), &b.tensor().size()) {
                // libtorch's in-place op gives eager's error; on a scratch tensor, so `a` is
                // never written here.
                let mut scratch = a.tensor().f_empty_like().map_err(map_err)?;
                drop(scratch.$f_(b.tensor()).map_err(map_err)?);
            }
            $name(a, b)
        }
        #[doc = concat!("`a ", $op, "= b` where `a` is an owned temporary: in place, or eager's error when the broadcast would grow `a`.")]
        pub fn $assign_owned(mut a: RxtTorchTensor, b: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
            drop(a.tensor_mut().$f_(b.tensor()).map_err(map_err)?);
            Ok(a)
        }
    };
}

binary!(
    add,
    add_owned,
    add_assign,
    add_assign_owned,
    f_add,
    f_add_,
    "+"
);
binary!(
    sub,
    sub_owned,
    sub_assign,
    sub_assign_owned,
    f_sub,
    f_sub_,
    "-"
);
binary!(
    mul,
    mul_owned,
    mul_assign,
    mul_assign_owned,
    f_mul,
    f_mul_,
    "*"
);
binary!(
    div,
    div_owned,
    div_assign,
    div_assign_owned,
    f_div,
    f_div_,
    "/"
);

macro_rules! scalar {
    ($name:ident, $owned:ident, $f:ident, $f_:ident, $op:literal) => {
        #[doc = concat!("`t ", $op, " s` with a Python int or float `s`; a float32 tensor stays float32.")]
        pub fn $name<S: Into<Scalar>>(t: &RxtTorchTensor, s: S) -> PyResult<RxtTorchTensor> {
            ok(t.tensor().$f(s))
        }
        #[doc = concat!("`t ", $op, " s` on an owned temporary, in place.")]
        pub fn $owned<S: Into<Scalar>>(mut t: RxtTorchTensor, s: S) -> PyResult<RxtTorchTensor> {
            drop(t.tensor_mut().$f_(s).map_err(map_err)?);
            Ok(t)
        }
    };
}

scalar!(
    add_scalar,
    add_scalar_owned,
    f_add_scalar,
    f_add_scalar_,
    "+"
);
scalar!(
    sub_scalar,
    sub_scalar_owned,
    f_sub_scalar,
    f_sub_scalar_,
    "-"
);
scalar!(
    mul_scalar,
    mul_scalar_owned,
    f_mul_scalar,
    f_mul_scalar_,
    "*"
);
scalar!(
    div_scalar,
    div_scalar_owned,
    f_div_scalar,
    f_div_scalar_,
    "/"
);

/// `s - t` (eager: `torch.rsub(t, s)`).
pub fn rsub_scalar<S: Into<Scalar>>(t: &RxtTorchTensor, s: S) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_rsub_scalar(s))
}

/// `s - t` on an owned temporary.
pub fn rsub_scalar_owned<S: Into<Scalar>>(t: RxtTorchTensor, s: S) -> PyResult<RxtTorchTensor> {
    rsub_scalar(&t, s)
}

/// `s / t`, computed as eager computes it (`Tensor.__rtruediv__`): `t.reciprocal() * s`.
pub fn rdiv_scalar<S: Into<Scalar>>(t: &RxtTorchTensor, s: S) -> PyResult<RxtTorchTensor> {
    let r = t.tensor().f_reciprocal().map_err(map_err)?;
    mul_scalar_owned(RxtTorchTensor::from_tensor(r), s)
}

/// `s / t` on an owned temporary, in place.
pub fn rdiv_scalar_owned<S: Into<Scalar>>(mut t: RxtTorchTensor, s: S) -> PyResult<RxtTorchTensor> {
    drop(t.tensor_mut().f_reciprocal_().map_err(map_err)?);
    mul_scalar_owned(t, s)
}

/// A unary op of the table ([`crate::rules::UNARY_OPS`]).
pub fn unary(op: Unary, t: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    let t = t.tensor();
    ok(match op {
        Unary::Relu => t.f_relu(),
        Unary::Sigmoid => t.f_sigmoid(),
        Unary::Tanh => t.f_tanh(),
        Unary::Abs => t.f_abs(),
        Unary::Neg => t.f_neg(),
        Unary::Negative => t.f_negative(),
        Unary::Square => t.f_square(),
        Unary::Exp => t.f_exp(),
        Unary::Log => t.f_log(),
        Unary::Sqrt => t.f_sqrt(),
        Unary::Erf => t.f_erf(),
    })
}

/// [`unary`] on an owned temporary, in place.
pub fn unary_owned(op: Unary, mut t: RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    let m = t.tensor_mut();
    let done = match op {
        Unary::Relu => m.f_relu_(),
        Unary::Sigmoid => m.f_sigmoid_(),
        Unary::Tanh => m.f_tanh_(),
        Unary::Abs => m.f_abs_(),
        Unary::Neg => m.f_neg_(),
        Unary::Negative => m.f_negative_(),
        Unary::Square => m.f_square_(),
        Unary::Exp => m.f_exp_(),
        Unary::Log => m.f_log_(),
        Unary::Sqrt => m.f_sqrt_(),
        Unary::Erf => m.f_erf_(),
    };
    // The returned handle aliases `t`; only the side effect matters.
    drop(done.map_err(map_err)?);
    Ok(t)
}

/// Exact GELU (`approximate="none"`, fixed here, never taken from the source).
pub fn gelu_none(t: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_gelu("none"))
}

/// Exact GELU on an owned temporary, in place.
pub fn gelu_none_owned(mut t: RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    drop(t.tensor_mut().f_gelu_("none").map_err(map_err)?);
    Ok(t)
}

/// `t.mean(dim, keepdim=...)`.
pub fn mean_dim(t: &RxtTorchTensor, dim: i64, keepdim: bool) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_mean_dim(&[dim][..], keepdim, None::<Kind>))
}

/// `t.sum(dim, keepdim=...)`.
pub fn sum_dim(t: &RxtTorchTensor, dim: i64, keepdim: bool) -> PyResult<RxtTorchTensor> {
    ok(t.tensor()
        .f_sum_dim_intlist(&[dim][..], keepdim, None::<Kind>))
}

/// `t.softmax(dim)`.
pub fn softmax(t: &RxtTorchTensor, dim: i64) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_softmax(dim, None::<Kind>))
}

/// `t.argmax(dim, keepdim)`; the result is checked to be a CPU int64 rank-1 tensor.
pub fn argmax(t: &RxtTorchTensor, dim: i64, keepdim: bool) -> PyResult<RxtTorchTensor> {
    let r = t.tensor().f_argmax(dim, keepdim).map_err(map_err)?;
    if r.device() != Device::Cpu || r.f_kind().ok() != Some(Kind::Int64) || r.dim() != 1 {
        return Err(PyRuntimeError::new_err(
            "rextio-torch: argmax did not produce a CPU int64 rank-1 tensor",
        ));
    }
    Ok(RxtTorchTensor::from_tensor(r))
}

/// Boundary check for `TensorBoolCpu1D`.
pub fn extract_bool_cpu_1d(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<RxtTorchTensor> {
    extract(obj, Kind::Bool, "bool", 1)
}

/// Boundary check for `TensorBoolCpu2D`.
pub fn extract_bool_cpu_2d(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<RxtTorchTensor> {
    extract(obj, Kind::Bool, "bool", 2)
}

/// `t.log_softmax(dim)`.
pub fn log_softmax(t: &RxtTorchTensor, dim: i64) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_log_softmax(dim, None::<Kind>))
}

/// `t.amax(dim, keepdim=...)`.
pub fn amax_dim(t: &RxtTorchTensor, dim: i64, keepdim: bool) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_amax(&[dim][..], keepdim))
}

/// `t.amin(dim, keepdim=...)`.
pub fn amin_dim(t: &RxtTorchTensor, dim: i64, keepdim: bool) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_amin(&[dim][..], keepdim))
}

/// `t.max(dim, keepdim)` -> `(values, indices)`; the indices are checked to be CPU int64 rank 1.
pub fn max_dim(
    t: &RxtTorchTensor,
    dim: i64,
    keepdim: bool,
) -> PyResult<(RxtTorchTensor, RxtTorchTensor)> {
    let (values, indices) = t.tensor().f_max_dim(dim, keepdim).map_err(map_err)?;
    if indices.device() != Device::Cpu
        || indices.f_kind().ok() != Some(Kind::Int64)
        || indices.dim() != 1
        || values.dim() != 1
    {
        return Err(PyRuntimeError::new_err(
            "rextio-torch: max did not produce rank-1 values and CPU int64 rank-1 indices",
        ));
    }
    Ok((
        RxtTorchTensor::from_tensor(values),
        RxtTorchTensor::from_tensor(indices),
    ))
}

/// `t.clamp(min, max)` with scalar bounds; a float32 tensor stays float32.
pub fn clamp<A: Into<Scalar>, B: Into<Scalar>>(
    t: &RxtTorchTensor,
    min: A,
    max: B,
) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_clamp::<Scalar>(min.into(), max.into()))
}

/// `t.clamp_min(min)` / `t.clamp(min=min)`.
pub fn clamp_min<S: Into<Scalar>>(t: &RxtTorchTensor, min: S) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_clamp_min(min))
}

/// `t.clamp_max(max)` / `t.clamp(max=max)`.
pub fn clamp_max<S: Into<Scalar>>(t: &RxtTorchTensor, max: S) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_clamp_max(max))
}

/// `torch.maximum(a, b)` (NaN propagates, as in eager).
pub fn maximum(a: &RxtTorchTensor, b: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(a.tensor().f_maximum(b.tensor()))
}

/// `torch.minimum(a, b)` (NaN propagates, as in eager).
pub fn minimum(a: &RxtTorchTensor, b: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(a.tensor().f_minimum(b.tensor()))
}

/// `torch.zeros_like(t)`.
pub fn zeros_like(t: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_zeros_like())
}

/// `torch.ones_like(t)`.
pub fn ones_like(t: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_ones_like())
}

/// `torch.full_like(t, value)`: the tensor's dtype (float32) is kept, as in eager.
pub fn full_like<S: Into<Scalar>>(t: &RxtTorchTensor, value: S) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_full_like(value))
}

/// `F.silu(t)`.
pub fn silu(t: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_silu())
}

/// `F.leaky_relu(t)` with the default slope 0.01.
pub fn leaky_relu(t: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_leaky_relu())
}

/// `F.leaky_relu(t, slope)`: `t > 0 ? t : t * slope`, eager's kernel formula (tch exposes the
/// op only with its default slope). NaN stays NaN, `-0.0 * slope` keeps eager's sign.
pub fn leaky_relu_slope<S: Into<Scalar>>(t: &RxtTorchTensor, slope: S) -> PyResult<RxtTorchTensor> {
    let positive = t.tensor().f_gt(0).map_err(map_err)?;
    let scaled = t.tensor().f_mul_scalar(slope).map_err(map_err)?;
    ok(t.tensor().f_where_self(&positive, &scaled))
}

/// `F.gelu(t, approximate="tanh")`: eager's own kernel (its tanh form has no oneDNN path).
pub fn gelu_tanh(t: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_gelu("tanh"))
}

/// `F.elu(t)` with `alpha=1.0`.
pub fn elu(t: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_elu())
}

/// `F.elu(t, alpha)` with another `alpha`: eager's kernel through the shim.
pub fn elu_alpha(t: &RxtTorchTensor, alpha: f64) -> PyResult<RxtTorchTensor> {
    shim::elu(t.tensor(), alpha).map(RxtTorchTensor::from_tensor)
}

/// `F.softplus(t, beta, threshold)` with other parameters: eager's kernel through the shim.
pub fn softplus_params(t: &RxtTorchTensor, beta: f64, threshold: f64) -> PyResult<RxtTorchTensor> {
    shim::softplus(t.tensor(), beta, threshold).map(RxtTorchTensor::from_tensor)
}

/// `F.softplus(t)` with `beta=1, threshold=20`.
pub fn softplus(t: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
    ok(t.tensor().f_softplus())
}

/// `F.dropout(t, p, training)`: eager's kernel (`at::dropout`), so training mode draws its mask
/// from torch's default generator exactly as eager does. A `p` outside [0, 1] raises eager's
/// `ValueError` before anything runs (NaN passes that check in eager too, and libtorch then
/// refuses it).
///
/// Where eager returns `t` itself without drawing (out of training mode, `p = 0`, no elements)
/// the result is a copy: lowered code owns every runtime result and may write a later op into
/// it, which must never reach the caller's tensor (the rule is not fresh, so the host never
/// takes the result for private either). The values are eager's; only the identity differs.
pub fn dropout(t: &RxtTorchTensor, p: f64, training: bool) -> PyResult<RxtTorchTensor> {
    // Eager's own test, so NaN passes it (a range's `contains` would refuse NaN).
    #[allow(clippy::manual_range_contains)]
    if p < 0.0 || p > 1.0 {
        return Err(PyValueError::new_err(format!(
            "dropout probability has to be between 0 and 1, but got {p:?}"
        )));
    }
    let x = t.tensor();
    // A NaN `p` reaches libtorch, which refuses it in either mode, as it does eager's.
    if (!training || p == 0.0 || x.numel() == 0) && !p.is_nan() {
        return materialise(x.shallow_clone());
    }
    ok(x.f_dropout(p, training))
}

/// `F.layer_norm(x, (n,), weight, bias, eps)` over the last dim; libtorch checks `n` against
/// the input's last dim exactly as eager does.
pub fn layer_norm(
    x: &RxtTorchTensor,
    n: i64,
    weight: Option<&RxtTorchTensor>,
    bias: Option<&RxtTorchTensor>,
    eps: f64,
) -> PyResult<RxtTorchTensor> {
    ok(x.tensor().f_layer_norm(
        &[n][..],
        weight.map(|w| w.tensor()),
        bias.map(|b| b.tensor()),
        eps,
        false,
    ))
}

/// `F.batch_norm(x, running_mean, running_var, weight, bias, training=False, momentum, eps)`:
/// eager's kernel in eval mode, which reads the running statistics and never updates them
/// (momentum plays no part then). libtorch checks the statistics' length against `x`'s dim 1.
pub fn batch_norm_eval(
    x: &RxtTorchTensor,
    running_mean: &RxtTorchTensor,
    running_var: &RxtTorchTensor,
    weight: Option<&RxtTorchTensor>,
    bias: Option<&RxtTorchTensor>,
    eps: f64,
) -> PyResult<RxtTorchTensor> {
    ok(x.tensor().f_batch_norm(
        weight.map(|w| w.tensor()),
        bias.map(|b| b.tensor()),
        Some(running_mean.tensor()),
        Some(running_var.tensor()),
        false,
        0.0,
        eps,
        false,
    ))
}

/// A fresh copy of a view: results never alias their inputs, because owned temporaries may be
/// written in place later.
fn materialise(view: Tensor) -> PyResult<RxtTorchTensor> {
    ok(view.f_detach_copy())
}

/// `t.transpose(d0, d1)` / `t.t()` / `t.T`, as a fresh tensor (eager returns a view).
pub fn transpose(t: &RxtTorchTensor, d0: i64, d1: i64) -> PyResult<RxtTorchTensor> {
    materialise(t.tensor().f_transpose(d0, d1).map_err(map_err)?)
}

/// `t.unsqueeze(d)`, as a fresh tensor (eager returns a view).
pub fn unsqueeze(t: &RxtTorchTensor, d: i64) -> PyResult<RxtTorchTensor> {
    materialise(t.tensor().f_unsqueeze(d).map_err(map_err)?)
}

/// `t.flatten(s, e)` / `torch.flatten(t, s, e)`, as a fresh tensor (eager returns the input
/// itself or a view).
pub fn flatten(t: &RxtTorchTensor, s: i64, e: i64) -> PyResult<RxtTorchTensor> {
    materialise(t.tensor().f_flatten(s, e).map_err(map_err)?)
}

/// A fixed-length tuple of tensors: a list or tuple written in the call (`torch.cat([a, b])`),
/// which generated code holds as a Rust tuple, seen as a slice of borrowed tensors.
pub trait TensorTuple {
    /// Call `f` with the tensors, in order (no copy of their storage).
    fn with_tensors<R>(&self, f: impl FnOnce(&[&Tensor]) -> R) -> R;
}

macro_rules! tensor_tuple {
    ($(($($i:tt),+);)+) => {
        $(
            impl TensorTuple for ($(tensor_tuple!(@one $i),)+) {
                fn with_tensors<R>(&self, f: impl FnOnce(&[&Tensor]) -> R) -> R {
                    f(&[$(self.$i.tensor()),+])
                }
            }
        )+
    };
    (@one $i:tt) => { RxtTorchTensor };
}

// Lengths 1 to 16: `claim::concat::MAX_TENSORS`, which a test checks against this list.
tensor_tuple! {
    (0);
    (0, 1);
    (0, 1, 2);
    (0, 1, 2, 3);
    (0, 1, 2, 3, 4);
    (0, 1, 2, 3, 4, 5);
    (0, 1, 2, 3, 4, 5, 6);
    (0, 1, 2, 3, 4, 5, 6, 7);
    (0, 1, 2, 3, 4, 5, 6, 7, 8);
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13);
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/// `torch.cat(tensors, dim)`: a fresh tensor (never aliasing an input, even for one element).
/// libtorch checks the other dims' sizes exactly as eager does; a mismatch is a RuntimeError.
pub fn cat<T: TensorTuple>(tensors: &T, dim: i64) -> PyResult<RxtTorchTensor> {
    tensors.with_tensors(|ts| ok(Tensor::f_cat(ts, dim)))
}

macro_rules! comparison {
    ($name:ident, $scalar:ident, $f:ident, $f_scalar:ident, $op:literal) => {
        #[doc = concat!("`a ", $op, " b` on tensors; a bool tensor.")]
        pub fn $name(a: &RxtTorchTensor, b: &RxtTorchTensor) -> PyResult<RxtTorchTensor> {
            ok(a.tensor().$f(b.tensor()))
        }
        #[doc = concat!("`t ", $op, " s` with a Python int or float `s`; a bool tensor.")]
        pub fn $scalar<S: Into<Scalar>>(t: &RxtTorchTensor, s: S) -> PyResult<RxtTorchTensor> {
            ok(t.tensor().$f_scalar(s))
        }
    };
}

comparison!(gt, gt_scalar, f_gt_tensor, f_gt, ">");
comparison!(lt, lt_scalar, f_lt_tensor, f_lt, "<");
comparison!(ge, ge_scalar, f_ge_tensor, f_ge, ">=");
comparison!(le, le_scalar, f_le_tensor, f_le, "<=");
comparison!(eq, eq_scalar, f_eq_tensor, f_eq, "==");
comparison!(ne, ne_scalar, f_ne_tensor, f_ne, "!=");

/// `torch.where(c, a, b)` with tensor branches.
pub fn where_tensors(
    c: &RxtTorchTensor,
    a: &RxtTorchTensor,
    b: &RxtTorchTensor,
) -> PyResult<RxtTorchTensor> {
    ok(a.tensor().f_where_self(c.tensor(), b.tensor()))
}

/// `torch.where(c, a, s)`; a float32 tensor with a Python scalar stays float32.
pub fn where_tensor_scalar<S: Into<Scalar>>(
    c: &RxtTorchTensor,
    a: &RxtTorchTensor,
    s: S,
) -> PyResult<RxtTorchTensor> {
    ok(a.tensor().f_where_scalarother(c.tensor(), s))
}

/// `torch.where(c, s, b)`.
pub fn where_scalar_tensor<S: Into<Scalar>>(
    c: &RxtTorchTensor,
    s: S,
    b: &RxtTorchTensor,
) -> PyResult<RxtTorchTensor> {
    ok(Tensor::f_where_scalarself(c.tensor(), s, b.tensor()))
}

/// `torch.where(c, s1, s2)`: the default float dtype (float32), as eager promotes Python numbers
/// of which at least one is a float.
pub fn where_scalars<A: Into<Scalar>, B: Into<Scalar>>(
    c: &RxtTorchTensor,
    a: A,
    b: B,
) -> PyResult<RxtTorchTensor> {
    let r = Tensor::f_where_scalar::<Scalar>(c.tensor(), a.into(), b.into()).map_err(map_err)?;
    if r.f_kind().ok() != Some(Kind::Float) {
        return Err(PyRuntimeError::new_err(
            "rextio-torch: where did not produce a float32 tensor",
        ));
    }
    Ok(RxtTorchTensor::from_tensor(r))
}

/// `t.size(d)` / `len(t)` (d = 0) as an exact int.
pub fn size_dim(t: &RxtTorchTensor, d: i64) -> PyResult<i64> {
    let size = t.tensor().size();
    usize::try_from(d)
        .ok()
        .and_then(|i| size.get(i).copied())
        .ok_or_else(|| {
            pyo3::exceptions::PyIndexError::new_err(format!(
                "rextio-torch: dimension {d} out of range for a rank-{} tensor",
                size.len()
            ))
        })
}

/// `t.shape` / `t.size()` of a rank-1 tensor.
pub fn shape_1d(t: &RxtTorchTensor) -> PyResult<(i64,)> {
    t.tensor().size1().map(|n| (n,)).map_err(map_err)
}

/// `t.shape` / `t.size()` of a rank-2 tensor.
pub fn shape_2d(t: &RxtTorchTensor) -> PyResult<(i64, i64)> {
    t.tensor().size2().map_err(map_err)
}

/// `t.dim()` / `t.ndim`.
pub fn ndim(t: &RxtTorchTensor) -> PyResult<i64> {
    i64::try_from(t.tensor().dim()).map_err(|_| {
        pyo3::exceptions::PyOverflowError::new_err("rextio-torch: rank overflows int64")
    })
}

/// `t.numel()`, computed with checked arithmetic.
pub fn numel(t: &RxtTorchTensor) -> PyResult<i64> {
    t.tensor()
        .size()
        .iter()
        .try_fold(1i64, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| {
            pyo3::exceptions::PyOverflowError::new_err("rextio-torch: numel overflows int64")
        })
}

//! The runtime module linked into generated crates (feature `runtime`).
//!
//! It drives the TFE C API of the tensorflow 2.21.0 wheel the Python process imported, and
//! nothing else: the wheel's images are bound with `dlopen(RTLD_NOW | RTLD_LOCAL |
//! RTLD_NOLOAD)` (never a second TensorFlow, never `RTLD_DEFAULT`), every symbol is resolved from
//! its owning image and checked with `dladdr`, `tf.__version__` and `TF_Version()` must both be
//! 2.21.0, and ops run in the existing Python eager context (never `TFE_NewContext`).
//!
//! Values cross the Python boundary through TensorFlow's private EagerTensor bridge:
//! `EagerTensor_CheckExact` (exact EagerTensor only: no `tf.Variable`, no numpy),
//! `EagerTensor_Handle` (a handle the EagerTensor owns: borrowed, with a strong reference to the
//! EagerTensor held as long as the borrow, and handed back as that same EagerTensor when a
//! function returns an argument unchanged) and `EagerTensorFromHandle(handle, false)`, which
//! takes ownership of the handle it is given. Every handle, op, status and constant is an RAII
//! value; [`RxtTfTensor`] is `!Send`. Every TensorFlow error becomes a Python exception; nothing here
//! panics.
//!
//! Cost per op is kept close to `TFE_Execute` itself: each thread caches its borrow of the eager
//! context and re-validates it cheaply under the GIL at every boundary conversion (same Python
//! `Context` object, same capsule; the executor for this thread is checked synchronous before
//! each op and fused program), an EagerTensor met again keeps what its first conversion read
//! (see [`known`]), int32 axis and
//! permutation inputs are prepared once per borrow, attribute and op names are C literals, and
//! result facts intern the device name instead of copying it, and each thread reuses one idle
//! `TFE_Op` per context (`TFE_OpReset`; never holding inputs while idle) and its statuses that
//! are still OK.

#[cfg(not(all(
    target_os = "linux",
    target_env = "gnu",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
compile_error!(
    "rextio-tensorflow runtime: unsupported target. It binds the tensorflow 2.21.0 manylinux wheel \
     with dlopen(RTLD_NOLOAD) and the private EagerTensor bridge, which this crate supports only on \
     Linux GNU (glibc) x86_64 and aarch64; Windows, macOS, musl and 32-bit targets are not supported."
);

pub mod cuda;
mod eager;
mod fused;
mod known;
mod loader;

pub use fused::fused;

use eager::{runtime_error, value_error, Attr, Context, Facts, Handle, Local, Op, Status};
use loader::{TF_FLOAT, TF_INT32, TF_INT64};
use pyo3::exceptions::{PyImportError, PyTypeError};
use pyo3::prelude::*;
use std::ffi::CStr;
use std::os::raw::c_int;
use std::rc::Rc;

pub use loader::BindError;

/// A TensorFlow tensor inside generated code: an owned `TFE_TensorHandle` (RAII) with its
/// validated dtype, rank and CPU device. `Clone` shares the owner; it is `!Send`.
#[derive(Clone)]
pub struct RxtTfTensor {
    inner: Rc<Handle>,
    facts: Facts,
}

impl std::fmt::Debug for RxtTfTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RxtTfTensor")
            .field("dtype", &dtype_name(self.facts.dtype))
            .field("rank", &self.facts.rank)
            .field("device", &self.facts.device)
            .finish()
    }
}

impl RxtTfTensor {
    /// The rank.
    pub fn rank(&self) -> usize {
        usize::try_from(self.facts.rank).unwrap_or(0)
    }
    /// The dtype name (`float32` or `int64`).
    pub fn dtype(&self) -> &'static str {
        dtype_name(self.facts.dtype)
    }
}

fn dtype_name(dtype: c_int) -> &'static str {
    match dtype {
        TF_FLOAT => "float32",
        TF_INT64 => "int64",
        TF_INT32 => "int32",
        _ => "another dtype",
    }
}

/// Bind the imported tensorflow wheel and check the eager context; called from the generated
/// module's init so that any binding failure raises `ImportError` when the extension is imported.
/// Idempotent: later calls only re-check the eager context.
pub fn load(py: Python<'_>) -> PyResult<()> {
    let api = loader::api(py).map_err(|e| PyImportError::new_err(e.to_string()))?;
    Context::current(py, api)
        .and_then(|c| c.check_sync())
        .map_err(|e| PyImportError::new_err(format!("rextio-tensorflow: {e}")))
}

/// Whether the wheel is bound (after [`load`] or a first boundary conversion).
pub fn is_loaded() -> bool {
    loader::bound().is_some()
}

/// The canonical directory of the tensorflow package the runtime bound, once bound.
pub fn tensorflow_root() -> Option<&'static std::path::Path> {
    loader::bound().map(|a| a.root.as_path())
}

/// The platform profile of this build (`linux-x86_64` or `linux-aarch64`).
pub fn platform_profile() -> &'static str {
    loader::PROFILE.id
}

fn api(py: Python<'_>) -> PyResult<&'static loader::Api> {
    loader::api(py).map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}

fn extract(obj: &Bound<'_, PyAny>, dtype: c_int, rank: c_int) -> PyResult<RxtTfTensor> {
    extract_on(obj, dtype, rank, Local::Cpu0, "expected a CPU tensor")
}

/// The boundary conversion of both lanes: an exact EagerTensor whose handle is borrowed (see
/// [`Handle::borrowed`]; the buffer is never copied or moved), then checked for device
/// (`device`, by exact full name and only when the context lists it; else `wrong_device`), dtype,
/// rank and concrete dims.
pub(crate) fn extract_on(
    obj: &Bound<'_, PyAny>,
    dtype: c_int,
    rank: c_int,
    device: Local,
    wrong_device: &str,
) -> PyResult<RxtTfTensor> {
    let py = obj.py();
    let api = api(py)?;
    let ptr = obj.as_ptr();
    // SAFETY: the GIL is held (`obj` is bound) and `obj` is live for both bridge calls.
    if !unsafe { (api.eager_tensor_check_exact)(ptr) } {
        return Err(PyTypeError::new_err(
            "rextio-tensorflow: expected a TensorFlow EagerTensor",
        ));
    }
    // SAFETY: as above; the handle is borrowed from `obj` and copied before `obj` is released.
    let borrowed = unsafe { (api.eager_tensor_handle)(ptr) };
    if borrowed.is_null() {
        return Err(
            PyErr::take(py).unwrap_or_else(|| runtime_error("EagerTensor_Handle returned null"))
        );
    }
    let context = Context::current(py, api)?;
    if let Some(k) = known::recall(obj, borrowed, &context) {
        // Met before in this context, still alive: the same handle, whose facts, sizes and
        // buffer never change. Only the checks asked for now remain.
        check_facts(&k.facts, &context, dtype, rank, device, wrong_device)?;
        let handle = Handle::borrowed(api, borrowed, context, obj.clone().unbind())
            .with_known(k.dims, k.view);
        return Ok(RxtTfTensor {
            inner: Rc::new(handle),
            facts: k.facts,
        });
    }
    let status = Status::new(api)?;
    // `borrowed` is owned by `obj`, which the handle keeps alive.
    let handle = Handle::borrowed(api, borrowed, Rc::clone(&context), obj.clone().unbind());
    let facts = handle.facts(&status)?;
    check_facts(&facts, &context, dtype, rank, device, wrong_device)?;
    handle.check_dims(rank, &status)?;
    // What the fused path reads of a local float32 matrix or vector, read once now.
    let view = if facts.dtype == TF_FLOAT
        && (1..=2).contains(&facts.rank)
        && context.is_local(&facts.device, Local::Cpu0)
    {
        Some(handle.host_view(facts.rank, &status)?)
    } else {
        None
    };
    known::remember(
        obj,
        borrowed,
        &context,
        &facts,
        handle.dims2(rank, &status)?,
        view,
    );
    Ok(RxtTfTensor {
        inner: Rc::new(handle),
        facts,
    })
}

/// The boundary's checks of a handle's facts: device, dtype, rank.
fn check_facts(
    facts: &Facts,
    context: &Context,
    dtype: c_int,
    rank: c_int,
    device: Local,
    wrong_device: &str,
) -> PyResult<()> {
    if !context.is_local(&facts.device, device) {
        return Err(value_error(wrong_device));
    }
    if facts.dtype != dtype {
        return Err(value_error(if dtype == TF_INT64 {
            "expected an int64 tensor"
        } else {
            "expected a float32 tensor"
        }));
    }
    if facts.rank != rank {
        return Err(value_error(format!(
            "expected rank-{rank} tensor, got rank {}",
            facts.rank
        )));
    }
    Ok(())
}

/// Boundary check for `TensorF32Cpu1D`.
pub fn extract_f32_cpu_1d(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<RxtTfTensor> {
    extract(obj, TF_FLOAT, 1)
}

/// Boundary check for `TensorF32Cpu2D`.
pub fn extract_f32_cpu_2d(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<RxtTfTensor> {
    extract(obj, TF_FLOAT, 2)
}

/// Boundary check for `TensorI64Cpu1D`.
pub fn extract_i64_cpu_1d(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<RxtTfTensor> {
    extract(obj, TF_INT64, 1)
}

/// Whether `obj` is a graph tensor, the value `tf.function` traces with
/// (`tf.is_symbolic_tensor`): a compiled function given one runs its original Python function,
/// so the traced graph holds eager's operations. Read through `sys.modules`, so the check
/// imports nothing; any failure answers `false` (the argument is then refused as before).
pub fn is_symbolic(obj: &Bound<'_, PyAny>) -> bool {
    let py = obj.py();
    let Some(tf) = rextio_plugin_api::runtime::boundary::imported_module(py, "tensorflow") else {
        return false;
    };
    tf.getattr(pyo3::intern!(py, "is_symbolic_tensor"))
        .and_then(|f| f.call1((obj,)))
        .and_then(|r| r.is_truthy())
        .unwrap_or(false)
}

/// Hand a tensor back to Python as an EagerTensor (no copy of the buffer). The handle given to
/// `EagerTensorFromHandle` is owned by it from then on, also when it fails.
pub fn materialize_tensor(py: Python<'_>, t: RxtTfTensor) -> PyResult<Py<PyAny>> {
    // Python may keep the tensor and share it: never written in place again.
    t.inner.share_buffer();
    // An argument returned as it came is the same EagerTensor, as in Python.
    if let Some(origin) = t.inner.origin() {
        return Ok(origin.clone_ref(py));
    }
    let handle = match Rc::try_unwrap(t.inner) {
        Ok(h) => h,
        Err(shared) => shared.copy_sharing()?,
    };
    let api = handle.api;
    let raw = handle.into_raw()?;
    // SAFETY: the GIL is held; `raw` is an owned handle whose ownership passes to the callee.
    let obj = unsafe { (api.eager_tensor_from_handle)(raw, false) };
    if obj.is_null() {
        return Err(
            PyErr::take(py).unwrap_or_else(|| runtime_error("EagerTensorFromHandle returned null"))
        );
    }
    // SAFETY: a non-null result is a new reference.
    Ok(unsafe { Bound::from_owned_ptr(py, obj) }.unbind())
}

/// A constant second input of an op: int32 values, scalar or rank 1.
pub(crate) struct Const(pub(crate) &'static [i32], pub(crate) bool);

pub(crate) fn require(t: &RxtTfTensor, rank: c_int, what: &str) -> PyResult<()> {
    if t.facts.dtype != TF_FLOAT {
        return Err(value_error(format!("{what}: expected a float32 tensor")));
    }
    if t.facts.rank != rank {
        return Err(value_error(format!(
            "{what}: expected rank-{rank} tensor, got rank {}",
            t.facts.rank
        )));
    }
    Ok(())
}

fn require_f32(t: &RxtTfTensor, what: &str) -> PyResult<()> {
    require(t, t.facts.rank, what)
}

fn execute(
    name: &'static CStr,
    inputs: &[&RxtTfTensor],
    konst: Option<Const>,
    attrs: &[Attr],
    out: (c_int, c_int),
) -> PyResult<RxtTfTensor> {
    execute_on(name, inputs, konst, attrs, out, Local::Cpu0)
}

/// Run one TFE op on the device of its first input (all inputs share it and the eager
/// context); the result must have the promised dtype and rank and be on `want`: an op never
/// moves data to another device unnoticed.
pub(crate) fn execute_on(
    name: &'static CStr,
    inputs: &[&RxtTfTensor],
    konst: Option<Const>,
    attrs: &[Attr],
    out: (c_int, c_int),
    want: Local,
) -> PyResult<RxtTfTensor> {
    let label = name.to_str().unwrap_or("op");
    let Some(first) = inputs.first() else {
        return Err(runtime_error(format!("{label} needs an input")));
    };
    let context = &first.inner.context;
    let device = &first.facts.device;
    for t in inputs {
        if t.inner.context.raw != context.raw {
            return Err(runtime_error(format!(
                "{label}: operands belong to different eager contexts"
            )));
        }
        if t.facts.device != *device {
            return Err(value_error(format!(
                "{label}: operands are on different devices ({} and {})",
                device.to_string_lossy(),
                t.facts.device.to_string_lossy()
            )));
        }
    }
    context.check_sync()?;
    let status = Status::new(context.api)?;
    let op = Op::new(context, name, context.placement(device), &status)?;
    for t in inputs {
        // The op's result may be a view of this buffer.
        t.inner.share_buffer();
        op.input(t.inner.ptr(), &status)?;
    }
    if let Some(Const(values, scalar)) = konst {
        op.input(context.prepared(values, scalar)?, &status)?;
    }
    for a in attrs {
        op.attr(a);
    }
    let result = op.execute(&status)?;
    drop(op);
    let facts = result.facts(&status)?;
    let (dtype, rank) = out;
    if !context.is_local(&facts.device, want) || facts.dtype != dtype || facts.rank != rank {
        return Err(runtime_error(format!(
            "{label} produced a {} rank-{} tensor on {}, expected {} rank {rank} on {}",
            dtype_name(facts.dtype),
            facts.rank,
            facts.device.to_string_lossy(),
            dtype_name(dtype),
            want.label()
        )));
    }
    Ok(RxtTfTensor {
        inner: Rc::new(result),
        facts,
    })
}

/// The `T` attribute of the CUDA lane's ops. CPU ops set no type attributes: TFE infers `T`,
/// `Tidx` and `Tperm` from the inputs as they are added, and attributes left out (`transpose_a`,
/// `data_format`, ...) take their op-def defaults, which are the values these ops use; setting
/// them again only cost attribute-map work on every op. Attributes that choose behaviour
/// (`keep_dims`, `output_type`) stay explicit.
pub(crate) const T_FLOAT: Attr = Attr::Type(c"T", TF_FLOAT);

/// `tf.matmul(a, b)` on rank-2 tensors (TFE MatMul).
pub fn matmul(a: &RxtTfTensor, b: &RxtTfTensor) -> PyResult<RxtTfTensor> {
    require(a, 2, "MatMul")?;
    require(b, 2, "MatMul")?;
    execute(c"MatMul", &[a, b], None, &[], (TF_FLOAT, 2))
}

macro_rules! unary {
    ($name:ident, $op:literal, $cop:literal, $py:literal) => {
        #[doc = concat!("`", $py, "(x)` on a rank-1 or rank-2 float32 tensor (TFE ", $op, ").")]
        pub fn $name(x: &RxtTfTensor) -> PyResult<RxtTfTensor> {
            require_f32(x, $op)?;
            execute($cop, &[x], None, &[], (TF_FLOAT, x.facts.rank))
        }
    };
}

unary!(relu, "Relu", c"Relu", "tf.nn.relu");
unary!(sigmoid, "Sigmoid", c"Sigmoid", "tf.nn.sigmoid");
unary!(tanh, "Tanh", c"Tanh", "tf.nn.tanh");
unary!(elu, "Elu", c"Elu", "tf.nn.elu");
unary!(abs, "Abs", c"Abs", "tf.abs");
unary!(negative, "Neg", c"Neg", "tf.negative");
unary!(square, "Square", c"Square", "tf.square");
unary!(exp, "Exp", c"Exp", "tf.exp");
unary!(log, "Log", c"Log", "tf.math.log");
unary!(sqrt, "Sqrt", c"Sqrt", "tf.math.sqrt");

macro_rules! binary {
    ($name:ident, $op:literal, $cop:literal, $py:literal) => {
        #[doc = concat!("`", $py, "` on float32 tensors of ranks 2/2, 1/1, 2/1 or 1/2 (TFE ", $op, "; TensorFlow broadcasting).")]
        pub fn $name(a: &RxtTfTensor, b: &RxtTfTensor) -> PyResult<RxtTfTensor> {
            require_f32(a, $op)?;
            require_f32(b, $op)?;
            let rank = a.facts.rank.max(b.facts.rank);
            execute($cop, &[a, b], None, &[], (TF_FLOAT, rank))
        }
    };
}

binary!(add, "AddV2", c"AddV2", "a + b / tf.add(a, b)");
binary!(sub, "Sub", c"Sub", "a - b / tf.subtract(a, b)");
binary!(mul, "Mul", c"Mul", "a * b / tf.multiply(a, b)");
binary!(div, "RealDiv", c"RealDiv", "a / b / tf.divide(a, b)");
binary!(maximum, "Maximum", c"Maximum", "tf.maximum(a, b)");
binary!(minimum, "Minimum", c"Minimum", "tf.minimum(a, b)");

/// `tf.nn.bias_add(value, bias)` in NHWC: rank-2 value, rank-1 bias (TFE BiasAdd).
pub fn bias_add(value: &RxtTfTensor, bias: &RxtTfTensor) -> PyResult<RxtTfTensor> {
    require(value, 2, "BiasAdd")?;
    require(bias, 1, "BiasAdd")?;
    execute(c"BiasAdd", &[value, bias], None, &[], (TF_FLOAT, 2))
}

fn reduce(
    op: &'static CStr,
    x: &RxtTfTensor,
    axis: &'static [i32],
    keepdims: bool,
) -> PyResult<RxtTfTensor> {
    require(x, 2, op.to_str().unwrap_or("reduction"))?;
    let attrs = [Attr::Bool(c"keep_dims", keepdims)];
    let rank = if keepdims { 2 } else { 1 };
    execute(op, &[x], Some(Const(axis, true)), &attrs, (TF_FLOAT, rank))
}

macro_rules! reduction {
    ($name:ident, $op:literal, $cop:literal, $py:literal, $axis:literal, $keep:literal) => {
        #[doc = concat!("`tf.", $py, "(x, axis=", stringify!($axis), ", keepdims=", stringify!($keep), ")` on a rank-2 float32 tensor (TFE ", $op, ").")]
        pub fn $name(x: &RxtTfTensor) -> PyResult<RxtTfTensor> {
            reduce($cop, x, &[$axis], $keep)
        }
    };
}

reduction!(reduce_mean_axis0, "Mean", c"Mean", "reduce_mean", 0, false);
reduction!(
    reduce_mean_axis0_keepdims,
    "Mean",
    c"Mean",
    "reduce_mean",
    0,
    true
);
reduction!(reduce_mean_axis1, "Mean", c"Mean", "reduce_mean", 1, false);
reduction!(
    reduce_mean_axis1_keepdims,
    "Mean",
    c"Mean",
    "reduce_mean",
    1,
    true
);
reduction!(reduce_sum_axis0, "Sum", c"Sum", "reduce_sum", 0, false);
reduction!(
    reduce_sum_axis0_keepdims,
    "Sum",
    c"Sum",
    "reduce_sum",
    0,
    true
);
reduction!(reduce_sum_axis1, "Sum", c"Sum", "reduce_sum", 1, false);
reduction!(
    reduce_sum_axis1_keepdims,
    "Sum",
    c"Sum",
    "reduce_sum",
    1,
    true
);

/// `tf.nn.softmax(x)` / `axis=0` on a rank-1 float32 tensor (TFE Softmax, last axis).
pub fn softmax_axis0(x: &RxtTfTensor) -> PyResult<RxtTfTensor> {
    require(x, 1, "Softmax")?;
    execute(c"Softmax", &[x], None, &[], (TF_FLOAT, 1))
}

/// `tf.nn.softmax(x, axis=1)` on a rank-2 float32 tensor (TFE Softmax, last axis).
pub fn softmax_axis1(x: &RxtTfTensor) -> PyResult<RxtTfTensor> {
    require(x, 2, "Softmax")?;
    execute(c"Softmax", &[x], None, &[], (TF_FLOAT, 2))
}

fn argmax(x: &RxtTfTensor, axis: &'static [i32]) -> PyResult<RxtTfTensor> {
    require(x, 2, "ArgMax")?;
    let attrs = [Attr::Type(c"output_type", TF_INT64)];
    execute(
        c"ArgMax",
        &[x],
        Some(Const(axis, true)),
        &attrs,
        (TF_INT64, 1),
    )
}

/// `tf.argmax(x, axis=0)` on a rank-2 float32 tensor: int64 rank 1 (TFE ArgMax).
pub fn argmax_axis0(x: &RxtTfTensor) -> PyResult<RxtTfTensor> {
    argmax(x, &[0])
}

/// `tf.argmax(x, axis=1)` on a rank-2 float32 tensor: int64 rank 1 (TFE ArgMax).
pub fn argmax_axis1(x: &RxtTfTensor) -> PyResult<RxtTfTensor> {
    argmax(x, &[1])
}

/// `tf.transpose(x)` with the default perm `[1, 0]` on a rank-2 float32 tensor (TFE Transpose).
pub fn transpose(x: &RxtTfTensor) -> PyResult<RxtTfTensor> {
    require(x, 2, "Transpose")?;
    execute(
        c"Transpose",
        &[x],
        Some(Const(&[1, 0], false)),
        &[],
        (TF_FLOAT, 2),
    )
}

//! Rust side of the boundary shim (`src/shim/rx_shim.cpp`): one C call reads everything the
//! boundary checks and the fused path needs from a tensor argument, without allocating; one
//! allocates a CPU output without going through the dispatcher.

use pyo3::exceptions::PyRuntimeError;
use pyo3::{ffi, PyErr};
use rextio_fusion::Shape;
use rextio_plugin_api::runtime::memo::Stamp;
use std::ffi::{c_char, c_void, CStr};
use std::ptr::NonNull;
use tch::Tensor;

/// Mirrors `rx_meta` in `rx_shim.cpp`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct RxMeta {
    pub data: *mut c_void,
    pub sizes: [i64; 2],
    pub numel: i64,
    pub rank: i32,
    pub scalar_type: i8,
    pub device_type: i8,
    pub device_index: i8,
    pub layout: i8,
    pub contiguous: u8,
    pub neg_or_conj: u8,
    pub pad: [u8; 6],
}

impl RxMeta {
    pub(crate) const fn zeroed() -> Self {
        Self {
            data: std::ptr::null_mut(),
            sizes: [0; 2],
            numel: 0,
            rank: 0,
            scalar_type: 0,
            device_type: 0,
            device_index: 0,
            layout: 0,
            contiguous: 0,
            neg_or_conj: 0,
            pad: [0; 6],
        }
    }
}

/// `c10::ScalarType` codes.
pub(crate) const SCALAR_INT64: i8 = 4;
pub(crate) const SCALAR_FLOAT: i8 = 6;
pub(crate) const SCALAR_BOOL: i8 = 11;
/// `c10::DeviceType::CPU` / `CUDA`.
pub(crate) const DEVICE_CPU: i8 = 0;
pub(crate) const DEVICE_CUDA: i8 = 1;
/// `c10::Layout::Strided`.
pub(crate) const LAYOUT_STRIDED: i8 = 0;

const RX_OK: i32 = 0;
const RX_NOT_A_TENSOR: i32 = 1;

extern "C" {
    fn rx_last_error() -> *const c_char;
    fn rx_set_grad_enabled(enabled: i32) -> i32;
    fn rx_grad_enabled() -> i32;
    fn rx_is_tracing() -> i32;
    fn rx_mkldnn_enabled() -> i32;
    fn rx_probe_gelu(xs: *const f32, ys: *mut f32, n: i64, one_by_one: i32) -> i32;
    fn rx_wrap_owned(tensor: *mut c_void) -> *mut ffi::PyObject;
    fn rx_release(tensor: *mut c_void);
    fn rx_borrow(obj: *mut ffi::PyObject, out: *mut *mut c_void, meta: *mut RxMeta) -> i32;
    fn rx_describe(tensor: *mut c_void, meta: *mut RxMeta, writable: i32) -> i32;
    fn rx_stamps(objs: *const *mut ffi::PyObject, n: i64, out: *mut u64, tensor: *mut u8) -> i32;
    fn rx_stamps_match(objs: *const *mut ffi::PyObject, n: i64, expect: *const u64) -> i32;
    fn rx_elu(tensor: *mut c_void, alpha: f64, out: *mut *mut c_void) -> i32;
    fn rx_softplus(tensor: *mut c_void, beta: f64, threshold: f64, out: *mut *mut c_void) -> i32;
    fn rx_empty_cpu(
        rank: i32,
        sizes: *const i64,
        scalar_type: i32,
        out: *mut *mut c_void,
        data: *mut *mut c_void,
    ) -> i32;
}

fn shim_error() -> PyErr {
    // SAFETY: the shim returns a NUL-terminated string it owns, valid until its next call on
    // this thread; it is copied at once.
    let msg = unsafe { CStr::from_ptr(rx_last_error()) }.to_string_lossy();
    super::torch_error(&msg)
}

/// Borrow the tensor a Python object holds (the GIL is held by the caller through `obj`): the
/// `at::Tensor` inside the object (valid while the object lives; never to be freed), described
/// into `meta`, or `None` when the object is not a `torch.Tensor`.
///
/// `meta` is the caller's, read field by field where the shim wrote it: returning the
/// description by value made every extraction move it with wide loads over the shim's narrow
/// stores, which the CPU cannot forward (a stall per load, on every tensor of every call).
pub(crate) fn borrow(
    obj: &pyo3::Bound<'_, pyo3::PyAny>,
    meta: &mut RxMeta,
) -> Result<Option<NonNull<c_void>>, PyErr> {
    let mut out: *mut c_void = std::ptr::null_mut();
    // SAFETY: `obj` is a live object and we hold the GIL; the out-pointers are valid.
    let rc = unsafe { rx_borrow(obj.as_ptr(), &mut out, meta) };
    match rc {
        RX_OK => NonNull::new(out).map(Some).ok_or_else(shim_error),
        RX_NOT_A_TENSOR => Ok(None),
        _ => Err(shim_error()),
    }
}

/// Describe a handle into the caller's `meta` (read in place, as [`borrow`] says why);
/// `writable` asks for the mutable data pointer.
pub(crate) fn describe(t: &Tensor, writable: bool, meta: &mut RxMeta) -> Result<(), PyErr> {
    // SAFETY: `t.as_ptr()` is a live `at::Tensor*` for the duration of the call; `meta` is valid.
    let rc = unsafe { rx_describe(t.as_ptr().cast_mut().cast(), meta, i32::from(writable)) };
    if rc == RX_OK {
        Ok(())
    } else {
        Err(shim_error())
    }
}

/// The owned `at::Tensor*` a shim op returned, or its error.
fn owned_result(rc: i32, out: *mut c_void) -> Result<Tensor, PyErr> {
    if rc != RX_OK || out.is_null() {
        return Err(shim_error());
    }
    // SAFETY: `out` is a fresh `at::Tensor*` that nothing else owns; tch's `Tensor` takes
    // ownership (and frees it with `at_free`).
    Ok(unsafe { Tensor::from_ptr(out.cast()) })
}

/// `F.elu(t, alpha)`: eager's kernel (`at::elu`), a new tensor.
pub(crate) fn elu(t: &Tensor, alpha: f64) -> Result<Tensor, PyErr> {
    let mut out: *mut c_void = std::ptr::null_mut();
    // SAFETY: `t.as_ptr()` is a live `at::Tensor*` for the call; `out` is a valid local.
    let rc = unsafe { rx_elu(t.as_ptr().cast_mut().cast(), alpha, &mut out) };
    owned_result(rc, out)
}

/// `F.softplus(t, beta, threshold)`: eager's kernel (`at::softplus`), a new tensor.
pub(crate) fn softplus(t: &Tensor, beta: f64, threshold: f64) -> Result<Tensor, PyErr> {
    let mut out: *mut c_void = std::ptr::null_mut();
    // SAFETY: as in `elu`.
    let rc = unsafe { rx_softplus(t.as_ptr().cast_mut().cast(), beta, threshold, &mut out) };
    owned_result(rc, out)
}

/// A new uninitialised contiguous CPU tensor and its data pointer (null when empty).
pub(crate) fn empty_cpu(sizes: &[i64], scalar_type: i8) -> Result<(Tensor, *mut c_void), PyErr> {
    let rank = i32::try_from(sizes.len())
        .map_err(|_| PyRuntimeError::new_err("rextio-torch: rank out of range"))?;
    let mut out: *mut c_void = std::ptr::null_mut();
    let mut data: *mut c_void = std::ptr::null_mut();
    // SAFETY: `sizes` is valid for `rank` elements; the out-pointers are valid locals.
    let rc = unsafe {
        rx_empty_cpu(
            rank,
            sizes.as_ptr(),
            i32::from(scalar_type),
            &mut out,
            &mut data,
        )
    };
    Ok((owned_result(rc, out)?, data))
}

/// Hand an owned handle to Python (moved into its Python object: no reference count traffic).
/// A small fresh result may instead be written into a result handed out earlier that Python has
/// let go of, which comes back (see `take_lent` in the shim).
pub(crate) fn wrap_owned(
    py: pyo3::Python<'_>,
    mut t: Tensor,
) -> Result<pyo3::Py<pyo3::PyAny>, PyErr> {
    let ptr = t.as_mut_ptr();
    // The shim consumes the handle (deletes it), so tch must not free it again.
    std::mem::forget(t);
    // SAFETY: `ptr` is an owned `at::Tensor*` handed over to the shim; we hold the GIL (`py`);
    // the result is a new reference or null with a Python error set.
    let obj = unsafe { rx_wrap_owned(ptr.cast()) };
    // SAFETY: as above.
    unsafe { pyo3::Bound::from_owned_ptr_or_err(py, obj) }.map(pyo3::Bound::unbind)
}

/// Drop a handle of the runtime's own: the shim keeps the tensor for `empty_cpu` to hand out
/// again when nothing else can reach it (no other handle, view, Python object or autograd
/// state), and frees it otherwise.
pub(crate) fn release(mut t: Tensor) {
    let ptr = t.as_mut_ptr();
    // The shim consumes the handle (keeps or deletes it), so tch must not free it again.
    std::mem::forget(t);
    // SAFETY: `ptr` is an owned `at::Tensor*` handed over to the shim, which never throws.
    unsafe { rx_release(ptr.cast()) }
}

/// How many objects one `rx_stamps` call takes.
pub(crate) const STAMP_CHUNK: usize = 32;
/// Words per stamp (`RX_STAMP_WORDS` in the shim).
const STAMP_WORDS: usize = 8;
const _: () = assert!(std::mem::size_of::<Stamp>() == STAMP_WORDS * 8);

/// The stamps of up to [`STAMP_CHUNK`] Python objects (see `rx_stamps`), written into `out`
/// (one per object); `tensor[i]` says whether object `i` was a tensor (its stamp is zero
/// otherwise). `false` when libtorch could not describe one.
pub(crate) fn stamps(
    objs: &[pyo3::Bound<'_, pyo3::PyAny>],
    out: &mut [Stamp],
    tensor: &mut [u8; STAMP_CHUNK],
) -> bool {
    let n = objs.len();
    if n > STAMP_CHUNK || out.len() != n {
        return false;
    }
    let mut ptrs = [std::ptr::null_mut(); STAMP_CHUNK];
    for (p, o) in ptrs.iter_mut().zip(objs) {
        *p = o.as_ptr();
    }
    // SAFETY: the first `n` pointers are live objects and we hold the GIL; `Stamp` is
    // `repr(transparent)` over `[u64; STAMP_WORDS]`, so `out` is `STAMP_WORDS · n` writable
    // words, and `tensor` has room for one byte per object.
    let rc = unsafe {
        rx_stamps(
            ptrs.as_ptr(),
            n as i64,
            out.as_mut_ptr().cast::<u64>(),
            tensor.as_mut_ptr(),
        )
    };
    rc == RX_OK
}

/// Whether each of up to [`STAMP_CHUNK`] Python objects still has its stamp in `expect` (see
/// `rx_stamps_match`), skipping those whose expected stamp is immutable (the same builtin
/// object keeps it). `false` when one differs, is no longer a tensor, or libtorch failed.
pub(crate) fn stamps_match(objs: &[pyo3::Bound<'_, pyo3::PyAny>], expect: &[Stamp]) -> bool {
    let n = objs.len();
    if n > STAMP_CHUNK || expect.len() != n {
        return false;
    }
    let mut ptrs = [std::ptr::null_mut(); STAMP_CHUNK];
    for ((p, o), e) in ptrs.iter_mut().zip(objs).zip(expect) {
        if !e.is_immutable() {
            *p = o.as_ptr();
        }
    }
    // SAFETY: the first `n` pointers are live objects or null and we hold the GIL; `Stamp` is
    // `repr(transparent)` over `[u64; STAMP_WORDS]`, so `expect` is `STAMP_WORDS · n` words.
    unsafe { rx_stamps_match(ptrs.as_ptr(), n as i64, expect.as_ptr().cast::<u64>()) == 1 }
}

/// Whether autograd's grad mode is on for this thread.
pub(crate) fn grad_enabled() -> bool {
    // SAFETY: reads a thread-local flag; cannot fail.
    unsafe { rx_grad_enabled() != 0 }
}

/// Whether `torch.jit.trace` is recording on this thread (`true` when that cannot be told).
pub(crate) fn is_tracing() -> bool {
    // SAFETY: reads a thread-local pointer; catches every exception.
    unsafe { rx_is_tracing() != 0 }
}

/// Set autograd's grad mode on this thread; returns whether it was enabled.
pub(crate) fn set_grad_enabled(enabled: bool) -> bool {
    // SAFETY: sets a thread-local flag; cannot fail.
    unsafe { rx_set_grad_enabled(i32::from(enabled)) != 0 }
}

/// Whether eager may call oneDNN for float32 CPU ops now (libtorch has it and
/// `torch.backends.mkldnn.enabled` is true); read on every call, since a program may switch it.
pub(crate) fn mkldnn_enabled() -> bool {
    // SAFETY: reads two flags of libtorch's global context; catches everything.
    unsafe { rx_mkldnn_enabled() != 0 }
}

/// Eager's exact GELU of `xs` on this host: each value as a one-element tensor with
/// `one_by_one`, else all as one contiguous tensor; `None` if libtorch raised.
pub(crate) fn probe_gelu(xs: &[f32], one_by_one: bool) -> Option<Vec<f32>> {
    let n = i64::try_from(xs.len()).ok()?;
    let mut ys = vec![0.0f32; xs.len()];
    // SAFETY: `xs` and `ys` are valid for `n` floats each; the shim catches every exception.
    let rc = unsafe { rx_probe_gelu(xs.as_ptr(), ys.as_mut_ptr(), n, i32::from(one_by_one)) };
    (rc == RX_OK).then_some(ys)
}

/// What the fused path knows about a tensor without asking libtorch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FastView {
    /// Not known: ask libtorch (`describe`).
    Unknown,
    /// Known to be outside the fused path (dtype, device, layout, strides, rank or emptiness).
    Outside,
    /// A float32 CPU contiguous non-empty tensor of rank <= 2 and its data address.
    F32(Shape, usize),
}

impl FastView {
    /// The fused path's view of a described tensor (inlined into each extraction, so that the
    /// view is built where it is stored rather than returned through memory and copied).
    #[inline(always)]
    pub(crate) fn of(m: &RxMeta) -> FastView {
        let fits = m.layout == LAYOUT_STRIDED
            && m.device_type == DEVICE_CPU
            && m.scalar_type == SCALAR_FLOAT
            && m.contiguous != 0
            && m.neg_or_conj == 0
            && (0..=2).contains(&m.rank)
            && m.numel > 0
            && !m.data.is_null();
        if !fits {
            return FastView::Outside;
        }
        let mut dims = [0usize; 2];
        let rank = usize::try_from(m.rank).unwrap_or(0).min(2);
        for (d, &s) in dims.iter_mut().zip(&m.sizes[..rank]) {
            match usize::try_from(s) {
                Ok(s) => *d = s,
                Err(_) => return FastView::Outside,
            }
        }
        match Shape::of(&dims[..rank]) {
            Some(shape) => FastView::F32(shape, m.data as usize),
            None => FastView::Outside,
        }
    }
}

//! The fused path: run a [`Program`] on the float32 CPU buffers of its tensor inputs, writing
//! results straight into freshly allocated output tensors (or, for an owned input, in place).
//!
//! The call first views every tensor input (float32, CPU, contiguous, non-empty), then plans it
//! ([`crate::fusion::plan`]); any input, shape or size outside the fused path's reach returns
//! `Ok(None)` before anything is written, and the generated code runs the per-site libtorch
//! path instead, with libtorch's own errors. `REXTIO_TORCH_PATH` forces a path: `fused` (every
//! call the program can express, regardless of the size guard), `per-op` (never fused), or
//! `auto` (default).

use super::eager_host;
use super::shim::{self, FastView};
use super::RxtTorchTensor;
use crate::fusion::{
    self, BinaryF, Dt, Input, Ins, Plan, Program, ProgramView, ReduceF, Role, Shape, Store, UnaryF,
};
use crate::kernels as k;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::PyResult;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::OnceLock;

/// Which path `fused` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathMode {
    /// Fused when the size guard allows it.
    Auto,
    /// Fused whenever the program can express the call.
    Fused,
    /// Never fused.
    PerOp,
}

/// The environment variable that forces a path.
pub const PATH_ENV: &str = "REXTIO_TORCH_PATH";

/// Matrix products above this many multiply-adds stay on libtorch in `auto` (its BLAS and
/// threads win there).
pub const AUTO_MAX_MACS: usize = 1 << 21;
/// Values above this many elements stay on libtorch in `auto` (it parallelises them).
pub const AUTO_MAX_NUMEL: usize = 1 << 18;

fn mode() -> PyResult<PathMode> {
    static MODE: OnceLock<Result<PathMode, String>> = OnceLock::new();
    let m = MODE.get_or_init(|| match std::env::var(PATH_ENV) {
        Err(std::env::VarError::NotPresent) => Ok(PathMode::Auto),
        Ok(v) => match v.trim() {
            "" | "auto" => Ok(PathMode::Auto),
            "fused" => Ok(PathMode::Fused),
            "per-op" => Ok(PathMode::PerOp),
            other => Err(format!(
                "rextio-torch: {PATH_ENV} must be `auto`, `fused` or `per-op`, not `{other}`"
            )),
        },
        Err(e) => Err(format!("rextio-torch: {PATH_ENV}: {e}")),
    });
    m.clone().map_err(PyValueError::new_err)
}

/// The path this process takes (`REXTIO_TORCH_PATH`).
pub fn path_mode() -> PyResult<PathMode> {
    mode()
}

/// The fused path's view of a tensor: cached when the boundary or a fused call made it, else
/// one shim call. `writable`: the call may overwrite it (an owned input).
fn view(t: &RxtTorchTensor, writable: bool) -> PyResult<Option<(Shape, *mut f32)>> {
    let v = match t.cached_view() {
        FastView::Unknown => FastView::of(&shim::describe(t.tensor(), writable)?),
        known => known,
    };
    Ok(match v {
        FastView::F32(shape, addr) => Some((shape, addr as *mut f32)),
        _ => None,
    })
}

/// Base pointers of values: f32 or i64 buffers.
#[derive(Clone, Copy)]
enum Buf {
    None,
    F32(*mut f32),
    I64(*mut i64),
}

/// Plans this thread made, by program and input shapes: a call whose shapes repeat (the common
/// case in serving) plans nothing.
struct PlanCache {
    entries: Vec<(usize, Vec<Option<Shape>>, Rc<Plan>)>,
    next: usize,
}

/// At most this many plans are kept per thread (oldest replaced first).
const PLAN_CACHE_SIZE: usize = 64;

impl PlanCache {
    fn get(
        &mut self,
        prog: usize,
        p: ProgramView<'_>,
        shapes: &[Option<Shape>],
    ) -> Option<Rc<Plan>> {
        if let Some((_, _, plan)) = self
            .entries
            .iter()
            .find(|(k, s, _)| *k == prog && s.as_slice() == shapes)
        {
            return Some(Rc::clone(plan));
        }
        let plan = Rc::new(fusion::plan(p, shapes)?);
        let entry = (prog, shapes.to_vec(), Rc::clone(&plan));
        if self.entries.len() < PLAN_CACHE_SIZE {
            self.entries.push(entry);
        } else {
            let slot = self.next % PLAN_CACHE_SIZE;
            self.entries[slot] = entry;
            self.next = slot + 1;
        }
        Some(plan)
    }
}

/// Buffers a call reuses from the previous call on its thread.
#[derive(Default)]
struct Scratch {
    shapes: Vec<Option<Shape>>,
    bufs: Vec<Buf>,
    out_bufs: Vec<Buf>,
    temps: Vec<Vec<f32>>,
}

thread_local! {
    static PLANS: RefCell<PlanCache> = const {
        RefCell::new(PlanCache {
            entries: Vec::new(),
            next: 0,
        })
    };
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Run `prog` fused, or `Ok(None)` when the per-site path must run instead.
pub fn fused<const N: usize>(
    prog: &Program,
    tensors: &[&RxtTorchTensor],
    scalars: &[f64],
) -> PyResult<Option<[RxtTorchTensor; N]>> {
    let mode = mode()?;
    if mode == PathMode::PerOp {
        return Ok(None);
    }
    let p = prog.view();
    if p.outputs.len() != N {
        return Ok(None);
    }
    if let Some(done) = activation_in_place::<N>(p, mode, tensors)? {
        return Ok(Some(done));
    }
    // A nested call on this thread (none exists today) would find the scratch busy: it then
    // takes the per-site path rather than sharing buffers.
    SCRATCH.with(|scratch| {
        let Ok(mut scratch) = scratch.try_borrow_mut() else {
            return Ok(None);
        };
        fused_with(&mut scratch, prog, p, mode, tensors, scalars)
    })
}

/// The commonest region in a loop body, one activation overwriting an owned value in place
/// (`h = h.relu()`), without a plan or scratch buffers: `Ok(None)` when `p` is not that program
/// (the general path then runs, and declines what it declines).
fn activation_in_place<const N: usize>(
    p: ProgramView<'_>,
    mode: PathMode,
    tensors: &[&RxtTorchTensor],
) -> PyResult<Option<[RxtTorchTensor; N]>> {
    let ([Input::Tensor { slot, owned: true }], [Ins::Unary { f, t: 0 }], [1], 1) =
        (p.inputs, p.ins, p.outputs, N)
    else {
        return Ok(None);
    };
    let Some(t) = tensors.get(usize::from(*slot)) else {
        return Ok(None);
    };
    let Some((shape, ptr)) = view(t, true)? else {
        return Ok(None);
    };
    let n = shape.numel();
    if mode == PathMode::Auto && n > AUTO_MAX_NUMEL {
        return Ok(None);
    }
    let Some(gelu) = GeluFor::of(*f == UnaryF::Gelu && n == 1, *f == UnaryF::Gelu && n > 1) else {
        return Ok(None);
    };
    let f = unary(*f, gelu.of_numel(n));
    let addr = ptr as usize;
    let run = move || {
        // SAFETY: `view` checked a float32 contiguous buffer of `n` elements owned by the
        // region (an owned temporary nothing else observes), alive for the whole call.
        let dst = unsafe { std::slice::from_raw_parts_mut(addr as *mut f32, n) };
        k::unary_inplace(f, dst);
    };
    // The general path counts the value twice (operand and result) as its work.
    run_kernels(n.saturating_mul(2), run);
    Ok(Some(std::array::from_fn(|_| (*t).clone())))
}

fn fused_with<const N: usize>(
    scratch: &mut Scratch,
    prog: &Program,
    p: ProgramView<'static>,
    mode: PathMode,
    tensors: &[&RxtTorchTensor],
    scalars: &[f64],
) -> PyResult<Option<[RxtTorchTensor; N]>> {
    let n_in = p.inputs.len();
    let Scratch {
        shapes,
        bufs,
        out_bufs,
        temps,
    } = scratch;
    shapes.clear();
    bufs.clear();
    bufs.resize(n_in + p.ins.len(), Buf::None);
    for (i, input) in p.inputs.iter().enumerate() {
        match *input {
            Input::Tensor { slot, owned } => {
                let Some(t) = tensors.get(usize::from(slot)) else {
                    return Ok(None);
                };
                let Some((shape, ptr)) = view(t, owned)? else {
                    return Ok(None);
                };
                shapes.push(Some(shape));
                bufs[i] = Buf::F32(ptr);
            }
            Input::Scalar { slot } => {
                if usize::from(slot) >= scalars.len() {
                    return Ok(None);
                }
                shapes.push(None);
            }
            Input::Unused => shapes.push(None),
        }
    }
    let key = std::ptr::from_ref(prog) as usize;
    let Some(plan) = PLANS.with(|c| {
        c.try_borrow_mut()
            .ok()
            .and_then(|mut c| c.get(key, p, shapes))
    }) else {
        return Ok(None);
    };
    let plan: &Plan = &plan;
    if plan.any_empty || !layer_norm_sizes_match(p, plan, scalars)? {
        return Ok(None);
    }
    if mode == PathMode::Auto && (plan.macs > AUTO_MAX_MACS || plan.max_numel > AUTO_MAX_NUMEL) {
        return Ok(None);
    }
    let Some(gelu) = GeluFor::of_plan(p, plan) else {
        return Ok(None);
    };
    // Outputs: fresh tensors, or the owned input they overwrite in place.
    let mut outs: [Option<RxtTorchTensor>; N] = [const { None }; N];
    out_bufs.clear();
    for ((o, &v), out) in p.outputs.iter().enumerate().zip(outs.iter_mut()) {
        match plan.output_alias.get(o).copied().flatten() {
            Some(iv) => {
                let Some(Input::Tensor { slot, .. }) = p.inputs.get(usize::from(iv)) else {
                    return Err(internal("an output aliases a non-tensor input"));
                };
                let Some(t) = tensors.get(usize::from(*slot)) else {
                    return Err(internal("an output aliases a missing input"));
                };
                *out = Some((*t).clone());
                out_bufs.push(bufs[usize::from(iv)]);
            }
            None => {
                let (shape, dt) = plan.shapes[usize::from(v)];
                let mut sizes = [0i64; 2];
                for (s, &d) in sizes.iter_mut().zip(shape.sizes()) {
                    *s = i64::try_from(d).map_err(|_| internal("a size overflows int64"))?;
                }
                let code = match dt {
                    Dt::F32 => shim::SCALAR_FLOAT,
                    Dt::I64 => shim::SCALAR_INT64,
                };
                let (t, ptr) = shim::empty_cpu(&sizes[..usize::from(shape.rank)], code)?;
                if ptr.is_null() {
                    return Err(internal("an output tensor has no storage"));
                }
                let (buf, fast) = match dt {
                    Dt::F32 => (Buf::F32(ptr.cast()), FastView::F32(shape, ptr as usize)),
                    Dt::I64 => (Buf::I64(ptr.cast()), FastView::Outside),
                };
                out_bufs.push(buf);
                *out = Some(RxtTorchTensor::with_view(t, fast));
            }
        }
    }
    if temps.len() < plan.temps.len() {
        temps.resize_with(plan.temps.len(), Vec::new);
    }
    for (t, &n) in temps.iter_mut().zip(&plan.temps) {
        if t.len() < n {
            t.resize(n, 0.0);
        }
    }
    for (v, st) in plan.store.iter().enumerate().skip(n_in) {
        bufs[v] = match *st {
            Store::Temp(t) => match temps.get_mut(t) {
                Some(b) => Buf::F32(b.as_mut_ptr()),
                None => return Err(internal("a temporary is missing")),
            },
            Store::Output(o) => out_bufs[o],
            Store::Input(iv) => bufs[usize::from(iv)],
            Store::Scalar => Buf::None,
        };
    }
    // SAFETY: every buffer pointer above is valid for its value's element count for the rest
    // of this call: inputs are live borrowed tensors (contiguous, float32, checked by `view`),
    // outputs are tensors owned by `outs`, temporaries are this thread's scratch buffers (at
    // least as long as the plan asks, not resized while the job runs), and none of them is
    // resized. The plan gives an instruction a destination distinct from its operands unless it
    // is marked in place, and in-place instructions only touch their destination slice.
    let job = Job {
        p,
        plan,
        bufs,
        scalars,
        gelu,
    };
    run_kernels(plan.work, move || job.run())?;
    if outs.iter().any(Option::is_none) {
        return Err(internal("an output was not produced"));
    }
    // Every slot is `Some` (checked above); the undefined tensor is never built.
    Ok(Some(outs.map(|o| {
        o.unwrap_or_else(|| RxtTorchTensor::from_tensor(tch::Tensor::new()))
    })))
}

/// Calls doing at least this much work (multiply-adds plus elements) release the GIL while the
/// kernels run; below it, releasing and re-taking the GIL would cost more than it frees. At 2^12
/// (about a microsecond of kernels against ~0.1 µs to release and re-take an uncontended GIL)
/// two Python threads calling the bench's `classify` at batch 128 went from 0.5-0.9x to
/// 0.85-1.64x of one thread's rate on this 2-core machine, with single-thread ratios unchanged;
/// at 2^15 the loop-body regions kept the GIL and hand-offs cost more than they freed.
pub const GIL_RELEASE_WORK: usize = 1 << 12;

/// Run a call's kernels: without the GIL from `GIL_RELEASE_WORK` units of work (other Python
/// threads run meanwhile, so a threaded server scales), with it below. Inside a body run by
/// [`super::run_body`] the GIL, once released, stays released until the body ends (one hand-off
/// per call rather than one per region); elsewhere it is released around these kernels only.
fn run_kernels<T: Send>(work: usize, kernels: impl FnOnce() -> T + Send) -> T {
    if work < GIL_RELEASE_WORK || super::release_for_body() {
        kernels()
    } else {
        pyo3::Python::attach(|py| py.detach(kernels))
    }
}

/// One planned call, runnable without the GIL.
struct Job<'a> {
    p: ProgramView<'a>,
    plan: &'a Plan,
    bufs: &'a [Buf],
    scalars: &'a [f64],
    gelu: GeluFor,
}

// SAFETY: the buffers a job points into belong to this call (borrowed input tensors, the output
// tensors and temporaries it owns) and are only touched by the job while it runs; it reads no
// Python object.
unsafe impl Send for Job<'_> {}

impl Job<'_> {
    fn run(self) -> PyResult<()> {
        // SAFETY: see the call site in `fused`: every buffer is valid for its value's shape and
        // the plan only shares buffers along in-place chains.
        unsafe { execute(self.p, self.plan, self.bufs, self.scalars, self.gelu) }
    }
}

/// The value of scalar input `v`.
fn scalar_of(p: ProgramView<'_>, scalars: &[f64], v: u16) -> PyResult<f64> {
    let Some(Input::Scalar { slot }) = p.inputs.get(usize::from(v)).copied() else {
        return Err(internal("a scalar operand is not a scalar input"));
    };
    scalars
        .get(usize::from(slot))
        .copied()
        .ok_or_else(|| internal("a scalar operand is missing"))
}

/// Whether every layer norm's normalised size is its input's last dim; otherwise the per-site
/// path runs and libtorch raises eager's error.
fn layer_norm_sizes_match(p: ProgramView<'_>, plan: &Plan, scalars: &[f64]) -> PyResult<bool> {
    for i in p.ins {
        if let Ins::LayerNorm { x, n, .. } = *i {
            let last = plan.shapes[usize::from(x)].0.matrix().1;
            if scalar_of(p, scalars, n)? != last as f64 {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

fn internal(what: &str) -> pyo3::PyErr {
    PyRuntimeError::new_err(format!(
        "rextio-torch: internal error in the fused path: {what}"
    ))
}

/// # Safety
/// See the call site: `bufs[v]` points at `plan.shapes[v].numel()` elements of the value's type,
/// distinct buffers do not overlap, and buffers are only shared along the plan's in-place
/// chains.
unsafe fn execute(
    p: ProgramView<'_>,
    plan: &Plan,
    bufs: &[Buf],
    scalars: &[f64],
    gelu: GeluFor,
) -> PyResult<()> {
    let shape = |v: u16| plan.shapes[usize::from(v)].0;
    let src = |v: u16| -> PyResult<&[f32]> {
        match bufs[usize::from(v)] {
            // SAFETY: see the function's contract.
            Buf::F32(p) => Ok(unsafe { std::slice::from_raw_parts(p, shape(v).numel()) }),
            _ => Err(internal("an operand has no float32 buffer")),
        }
    };
    let n_in = p.inputs.len();
    // Whether value `v` is read by nothing after instruction `j` and is not an output.
    let dead_after = |v: usize, j: usize| {
        !p.outputs.iter().any(|&o| usize::from(o) == v)
            && p.ins[j + 1..]
                .iter()
                .all(|i| !fusion::operands(i).any(|u| usize::from(u) == v))
    };
    let mut skip = false;
    for (j, i) in p.ins.iter().enumerate() {
        if std::mem::take(&mut skip) {
            continue;
        }
        let v = n_in + j;
        let (out_shape, _) = plan.shapes[v];
        let n = out_shape.numel();
        let in_place = plan.in_place.get(j).copied().unwrap_or(false);
        // softmax over rows whose only reader is an argmax over the same rows: labels only.
        if let (
            Ins::Softmax {
                t,
                dim: 1,
                log: false,
            },
            Some(&Ins::Argmax { t: pt, dim: 1, .. }),
        ) = (*i, p.ins.get(j + 1))
        {
            if usize::from(pt) == v && dead_after(v, j + 1) && shape(t).rank == 2 {
                let Buf::I64(d) = bufs[v + 1] else {
                    return Err(internal("argmax has no int64 destination"));
                };
                let (m, c) = shape(t).matrix();
                // SAFETY: see the function's contract.
                let dst = unsafe { std::slice::from_raw_parts_mut(d, m) };
                k_err(k::softmax_argmax_rows(src(t)?, m, c, dst))?;
                skip = true;
                continue;
            }
        }
        if let Ins::Argmax { t, dim, .. } = *i {
            let Buf::I64(d) = bufs[v] else {
                return Err(internal("argmax has no int64 destination"));
            };
            // SAFETY: see the function's contract.
            let dst = unsafe { std::slice::from_raw_parts_mut(d, n) };
            let (m, c) = shape(t).matrix();
            k_err(if dim == 1 {
                k::argmax_rows(src(t)?, m, c, dst)
            } else {
                k::argmax_cols(src(t)?, m, c, dst)
            })?;
            continue;
        }
        let Buf::F32(d) = bufs[v] else {
            return Err(internal("a result has no float32 destination"));
        };
        // SAFETY: see the function's contract.
        let dst = unsafe { std::slice::from_raw_parts_mut(d, n) };
        match *i {
            Ins::Linear { x, w, b } => {
                let (m, kk) = shape(x).matrix();
                let nn = shape(w).dims[0];
                let bias = match b {
                    Some(b) => Some(src(b)?),
                    None => None,
                };
                // An activation applied in place to this result right after: fuse it into the
                // store.
                let epilogue = match p.ins.get(j + 1) {
                    Some(&Ins::Unary { f, t })
                        if usize::from(t) == v && plan.in_place.get(j + 1) == Some(&true) =>
                    {
                        epilogue(f, gelu.of_numel(n))
                    }
                    _ => None,
                };
                match epilogue {
                    Some(e) => {
                        k_err(k::linear_fused(src(x)?, m, kk, src(w)?, nn, bias, e, dst))?;
                        skip = true;
                    }
                    None => k_err(k::linear(src(x)?, m, kk, src(w)?, nn, bias, dst))?,
                }
            }
            Ins::Matmul { a, b } => {
                let (m, kk) = shape(a).matrix();
                let nn = shape(b).dims[1];
                k_err(k::matmul(src(a)?, m, kk, src(b)?, nn, dst))?;
            }
            Ins::Unary { f, t } => {
                if in_place {
                    k::unary_inplace(unary(f, gelu.of_numel(n)), dst);
                } else {
                    k_err(k::unary(unary(f, gelu.of_numel(n)), src(t)?, dst))?;
                }
            }
            Ins::Binary { f, a, b } => {
                let Some((_, ra, rb)) = fusion::broadcast(shape(a), shape(b)) else {
                    return Err(internal("an elementwise operand no longer broadcasts"));
                };
                let (m, c) = out_shape.matrix();
                let rhs = operand(rb, src(b)?)?;
                if in_place {
                    k_err(k::binary_inplace(binary(f), m, c, dst, rhs))?;
                } else {
                    let lhs = operand(ra, src(a)?)?;
                    k_err(k::binary(binary(f), m, c, lhs, rhs, dst))?;
                }
            }
            Ins::Scalar { f, t, s, rev } => {
                let Some(Input::Scalar { slot }) = p.inputs.get(usize::from(s)).copied() else {
                    return Err(internal("a scalar operand is not a scalar input"));
                };
                let Some(&sv) = scalars.get(usize::from(slot)) else {
                    return Err(internal("a scalar operand is missing"));
                };
                // Eager casts a Python scalar to the tensor's dtype before the operation.
                let sv = k::Operand::Scalar(sv as f32);
                let (m, c) = out_shape.matrix();
                match (in_place, rev) {
                    (true, false) => k_err(k::binary_inplace(binary(f), m, c, dst, sv))?,
                    (false, false) => k_err(k::binary(
                        binary(f),
                        m,
                        c,
                        k::Operand::Full(src(t)?),
                        sv,
                        dst,
                    ))?,
                    (true, true) => {
                        return Err(internal("`scalar op tensor` is never planned in place"))
                    }
                    (false, true) => k_err(k::binary(
                        binary(f),
                        m,
                        c,
                        sv,
                        k::Operand::Full(src(t)?),
                        dst,
                    ))?,
                }
            }
            Ins::Softmax { t, dim, log } => {
                let s = shape(t);
                let (m, c) = s.matrix();
                let by_rows = s.rank == 1 || dim == 1;
                k_err(match (by_rows, log) {
                    (true, false) => k::softmax_rows(src(t)?, m, c, dst),
                    (true, true) => k::log_softmax_rows(src(t)?, m, c, dst),
                    (false, false) => k::softmax_cols(src(t)?, m, c, dst),
                    (false, true) => k::log_softmax_cols(src(t)?, m, c, dst),
                })?;
            }
            Ins::Reduce { f, t, dim, .. } => {
                let (m, c) = shape(t).matrix();
                k_err(reduce(f, dim == 1, src(t)?, m, c, dst))?;
            }
            Ins::LayerNorm { x, w, b, eps, .. } => {
                let (m, c) = shape(x).matrix();
                let eps = match eps {
                    Some(e) => scalar_of(p, scalars, e)?,
                    None => 1e-5,
                };
                let w = match w {
                    Some(w) => Some(src(w)?),
                    None => None,
                };
                let b = match b {
                    Some(b) => Some(src(b)?),
                    None => None,
                };
                // ATen casts eps to the input's accumulation type (float for float32).
                k_err(k::layer_norm_rows(src(x)?, m, c, w, b, eps as f32, dst))?;
            }
            Ins::Argmax { .. } => {}
        }
    }
    Ok(())
}

/// The GELU edges of one call: eager's answers on the disputed inputs for a GELU of one element
/// and of more (see [`eager_host`]), probed only where the call has such a GELU.
#[derive(Clone, Copy)]
struct GeluFor {
    one: k::GeluEdges,
    many: k::GeluEdges,
}

impl GeluFor {
    /// The edges for GELUs of one element (`one`) and of more (`many`) as eager answers now, or
    /// `None` when eager on this host answers in a way the kernels cannot reproduce.
    fn of(one: bool, many: bool) -> Option<GeluFor> {
        // Unused when not asked for.
        let unused = k::GeluEdges::PRODUCT_FORM;
        Some(GeluFor {
            one: if one {
                eager_host::gelu_edges(1)?
            } else {
                unused
            },
            many: if many {
                eager_host::gelu_edges(2)?
            } else {
                unused
            },
        })
    }

    /// [`GeluFor::of`] for the GELUs `plan` runs.
    fn of_plan(p: ProgramView<'_>, plan: &Plan) -> Option<GeluFor> {
        let (mut one, mut many) = (false, false);
        for (j, i) in p.ins.iter().enumerate() {
            if let Ins::Unary {
                f: UnaryF::Gelu, ..
            } = i
            {
                let n = plan.shapes[p.inputs.len() + j].0.numel();
                one |= n == 1;
                many |= n > 1;
            }
        }
        GeluFor::of(one, many)
    }

    /// The edges for a GELU of `n` elements.
    fn of_numel(self, n: usize) -> k::GeluEdges {
        if n > 1 {
            self.many
        } else {
            self.one
        }
    }
}

fn unary(f: UnaryF, gelu: k::GeluEdges) -> k::Unary {
    match f {
        UnaryF::Relu => k::Unary::Relu,
        UnaryF::Sigmoid => k::Unary::Sigmoid,
        UnaryF::Tanh => k::Unary::Tanh,
        UnaryF::Abs => k::Unary::Abs,
        UnaryF::Neg => k::Unary::Neg,
        UnaryF::Exp => k::Unary::Exp,
        UnaryF::Log => k::Unary::Log,
        UnaryF::Sqrt => k::Unary::Sqrt,
        UnaryF::Gelu => k::Unary::Gelu(gelu),
    }
}

fn epilogue(f: UnaryF, gelu: k::GeluEdges) -> Option<k::Epilogue> {
    Some(match f {
        UnaryF::Relu => k::Epilogue::Relu,
        UnaryF::Tanh => k::Epilogue::Tanh,
        UnaryF::Sigmoid => k::Epilogue::Sigmoid,
        UnaryF::Gelu => k::Epilogue::Gelu(gelu),
        _ => return None,
    })
}

fn binary(f: BinaryF) -> k::Binary {
    match f {
        BinaryF::Add => k::Binary::Add,
        BinaryF::Sub => k::Binary::Sub,
        BinaryF::Mul => k::Binary::Mul,
        BinaryF::Div => k::Binary::Div,
    }
}

fn operand(role: Role, x: &[f32]) -> PyResult<k::Operand<'_>> {
    Ok(match role {
        Role::Full => k::Operand::Full(x),
        Role::Row => k::Operand::Row(x),
        Role::Col => k::Operand::Col(x),
        Role::Single => match x.first() {
            Some(&v) => k::Operand::Scalar(v),
            None => return Err(internal("a broadcast operand is empty")),
        },
    })
}

fn reduce(
    f: ReduceF,
    rows: bool,
    x: &[f32],
    m: usize,
    c: usize,
    dst: &mut [f32],
) -> Result<(), k::KernelError> {
    match (f, rows) {
        (ReduceF::Sum, true) => k::sum_rows(x, m, c, dst),
        (ReduceF::Mean, true) => k::mean_rows(x, m, c, dst),
        (ReduceF::Amax, true) => k::amax_rows(x, m, c, dst),
        (ReduceF::Amin, true) => k::amin_rows(x, m, c, dst),
        (ReduceF::Sum, false) => k::sum_cols(x, m, c, dst),
        (ReduceF::Mean, false) => k::mean_cols(x, m, c, dst),
        (ReduceF::Amax, false) => k::amax_cols(x, m, c, dst),
        (ReduceF::Amin, false) => k::amin_cols(x, m, c, dst),
    }
}

fn k_err(r: Result<(), k::KernelError>) -> PyResult<()> {
    r.map_err(|e| internal(&format!("kernel rejected its operands: {e}")))
}

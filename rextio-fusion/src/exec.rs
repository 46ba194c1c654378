//! Running a [`Program`] on a backend's tensors: view every tensor input's float32 buffer,
//! [`plan`] the call from the input shapes, allocate the outputs once through the backend, and
//! run the kernels over the planned buffers.
//!
//! What is the backend's own goes through [`Host`]: how it views its tensors' memory, how it
//! allocates outputs, the GELU edges its eager answers on this host, how it runs kernels (with
//! or without Python's GIL) and how an internal error reaches the user. Anything outside the
//! fused path's reach (an input that is not a float32 contiguous CPU buffer, a shape the plan
//! declines, a size above the backend's [`Limits`]) returns `Ok(None)` before anything is
//! written, and the backend runs its per-op path instead.

use crate::ir::{operands, Input, Ins, Program, ProgramView, ReduceF, UnaryF, V};
use crate::kernels as k;
use crate::plan::{broadcast, plan, Dt, Layout, Plan, Role, Shape, Store};
use std::cell::RefCell;
use std::rc::Rc;

/// Which path a backend takes, as its environment variable says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathMode {
    /// Fused when the backend's [`Limits`] allow it.
    Auto,
    /// Fused whenever the program can express the call.
    Fused,
    /// Never fused.
    PerOp,
}

impl PathMode {
    /// The mode environment variable `var` asks for (`auto` when unset or empty), or the message
    /// of the error to raise (prefixed with `who`, the backend).
    pub fn from_env(var: &str, who: &str) -> Result<PathMode, String> {
        match std::env::var(var) {
            Err(std::env::VarError::NotPresent) => Ok(PathMode::Auto),
            Ok(v) => match v.trim() {
                "" | "auto" => Ok(PathMode::Auto),
                "fused" => Ok(PathMode::Fused),
                "per-op" => Ok(PathMode::PerOp),
                other => Err(format!(
                    "{who}: {var} must be `auto`, `fused` or `per-op`, not `{other}`"
                )),
            },
            Err(e) => Err(format!("{who}: {var}: {e}")),
        }
    }

    /// The [`run`] limits of this mode, with `auto` as the backend's `auto` bounds: `None` when
    /// the call is never fused (`per-op`), `Some(None)` for a forced `fused`.
    pub fn limits(self, auto: Limits) -> Option<Option<Limits>> {
        match self {
            PathMode::PerOp => None,
            PathMode::Fused => Some(None),
            PathMode::Auto => Some(Some(auto)),
        }
    }
}

/// A backend's choice of path: the environment variable that forces one (read once per
/// process) and the bounds of its `auto` mode.
#[derive(Debug)]
pub struct PathPolicy {
    var: &'static str,
    who: &'static str,
    auto: Limits,
    mode: std::sync::OnceLock<Result<PathMode, String>>,
}

impl PathPolicy {
    /// The policy of backend `who`, forced by `var`, whose `auto` mode fuses calls whose matrix products are
    /// each of at most `max_macs` multiply-adds and `max_numel` elements per value.
    pub const fn new(
        var: &'static str,
        who: &'static str,
        max_macs: usize,
        max_numel: usize,
    ) -> Self {
        Self {
            var,
            who,
            auto: Limits {
                max_macs,
                max_numel,
            },
            mode: std::sync::OnceLock::new(),
        }
    }

    /// A policy whose mode is already read as `mode` (tests that must not touch the
    /// environment).
    #[cfg(test)]
    pub(crate) fn read_as(mode: Result<PathMode, String>, auto: Limits) -> Self {
        let policy = Self {
            var: "",
            who: "test",
            auto,
            mode: std::sync::OnceLock::new(),
        };
        let _ = policy.mode.set(mode);
        policy
    }

    /// The mode this process takes, or the message of the error to raise.
    pub fn mode(&self) -> Result<PathMode, String> {
        self.mode
            .get_or_init(|| PathMode::from_env(self.var, self.who))
            .clone()
    }

    /// The [`run`] limits of this process's mode (see [`PathMode::limits`]).
    pub fn limits(&self) -> Result<Option<Option<Limits>>, String> {
        Ok(self.mode()?.limits(self.auto))
    }

    /// [`run`] under this policy: `Ok(None)` (the per-op path runs) in `per-op` mode, when
    /// `host()` declines the call, or when the call's sizes exceed the mode's limits. `host` is
    /// made only when the mode may fuse; an unreadable mode is [`Host::setting_error`].
    pub fn run<H: Host, const N: usize>(
        &self,
        prog: &'static Program,
        tensors: &[&H::Tensor],
        scalars: &[f64],
        host: impl FnOnce() -> Result<Option<H>, H::Error>,
    ) -> Result<Option<[H::Tensor; N]>, H::Error> {
        let Some(limits) = self.limits().map_err(|e| H::setting_error(&e))? else {
            return Ok(None);
        };
        match host()? {
            Some(host) => run::<H, N>(&host, prog, tensors, scalars, limits),
            None => Ok(None),
        }
    }
}

/// Calls doing at least this much work (multiply-adds plus elements) should run their kernels
/// without the GIL ([`Host::run_kernels`]); below it, releasing and re-taking the GIL costs more
/// than it frees. At 2^12 (about a microsecond of kernels against ~0.1 µs to release and re-take
/// an uncontended GIL) two Python threads calling the bench's `classify` at batch 128 went from
/// 0.5-0.9x to 0.85-1.64x of one thread's rate on a 2-core machine, with single-thread ratios
/// unchanged; at 2^15 the loop-body regions kept the GIL and hand-offs cost more than they freed.
pub const GIL_RELEASE_WORK: usize = 1 << 12;

/// Below this much work a call keeps the GIL when no other Python thread exists to take it (the
/// backend asks the interpreter): releasing and re-taking it then costs about 0.1 µs and frees
/// nothing. From here (about 100 µs of kernels) it is released anyway, which bounds how long a
/// thread that registers during the call (one started from C) waits for the GIL.
pub const GIL_RELEASE_ALONE_WORK: usize = 1 << 19;

/// Sizes above which a backend's `auto` mode keeps a call on its per-op path (where its own
/// BLAS and threads win).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Multiply-adds of the call's largest matrix product.
    pub max_macs: usize,
    /// Elements of the call's largest value.
    pub max_numel: usize,
}

/// The GELU edges of one call (see [`k::GeluEdges`]): for a GELU of one element and of more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edges {
    /// GELUs of one element.
    pub gelu_one: k::GeluEdges,
    /// GELUs of more than one element.
    pub gelu_many: k::GeluEdges,
}

impl Edges {
    /// The edges for a GELU of `n` elements.
    pub fn gelu(self, n: usize) -> k::GeluEdges {
        if n > 1 {
            self.gelu_many
        } else {
            self.gelu_one
        }
    }
}

/// What the fused path needs from a backend.
pub trait Host {
    /// The backend's tensor in generated code.
    type Tensor;
    /// The backend's error (a Python exception).
    type Error;

    /// The shape and base pointer of `t`'s float32 contiguous CPU buffer, or `None` when `t` is
    /// not such a tensor (the call then declines). `writable`: the call may overwrite it.
    fn view(
        &self,
        t: &Self::Tensor,
        writable: bool,
    ) -> Result<Option<(Shape, *mut f32)>, Self::Error>;

    /// Another handle on `t` (an output that is an owned input overwritten in place).
    fn share(&self, t: &Self::Tensor) -> Self::Tensor;

    /// Whether `t`'s buffer may be overwritten where the program marks it owned (the host's
    /// analysis proved no other value reads it). A backend whose framework may share a buffer
    /// between tensors answers `false` unless it knows the buffer is this tensor's alone; the
    /// call then treats the input as borrowed.
    fn may_overwrite(&self, _t: &Self::Tensor) -> bool {
        true
    }

    /// A fresh contiguous CPU tensor of `shape` and `dt`, and the base pointer of its buffer.
    fn alloc(&self, shape: Shape, dt: Dt) -> Result<(Self::Tensor, *mut u8), Self::Error>;

    /// The GELU edges eager answers with on this host now, for GELUs of one element (when
    /// `one`) and of more (when `many`); `None` declines the call.
    fn edges(&self, one: bool, many: bool) -> Option<Edges>;

    /// Run `kernels` (`work`: multiply-adds plus elements), with or without the GIL.
    fn run_kernels<T: Send>(&self, work: usize, kernels: impl FnOnce() -> T + Send) -> T;

    /// An internal error (a bug in the fused path), as the backend raises it.
    fn internal(&self, what: &str) -> Self::Error;

    /// A setting the user got wrong (the path environment variable), as the backend raises it.
    fn setting_error(what: &str) -> Self::Error;
}

/// An internal error of the executor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecError(pub String);

#[cold]
#[inline(never)]
fn internal(what: &str) -> ExecError {
    ExecError(what.to_owned())
}

/// Base pointers of values: float32 or int64 buffers.
#[derive(Debug, Clone, Copy)]
pub enum Buf {
    /// A scalar or unused input.
    None,
    /// A float32 buffer.
    F32(*mut f32),
    /// An int64 buffer.
    I64(*mut i64),
}

/// Plans this thread made, by program and input shapes: a call whose shapes repeat (the common
/// case in serving) plans nothing.
struct PlanCache {
    entries: Vec<CachedPlan>,
    next: usize,
}

/// (program address, owned inputs treated as borrowed, input shapes) and the plan.
type CachedPlan = (usize, u64, Vec<Option<Shape>>, Rc<Plan>);

/// At most this many plans are kept per thread (oldest replaced first).
const PLAN_CACHE_SIZE: usize = 64;

impl PlanCache {
    fn get(
        &mut self,
        prog: usize,
        demoted: u64,
        p: ProgramView<'_>,
        shapes: &[Option<Shape>],
    ) -> Option<Rc<Plan>> {
        if let Some((_, _, _, plan)) = self
            .entries
            .iter()
            .find(|(k, d, s, _)| *k == prog && *d == demoted && s.as_slice() == shapes)
        {
            return Some(Rc::clone(plan));
        }
        let plan = Rc::new(plan(p, shapes)?);
        let entry = (prog, demoted, shapes.to_vec(), Rc::clone(&plan));
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
    /// The program's inputs with some owned ones treated as borrowed.
    inputs: Vec<Input>,
    shapes: Vec<Option<Shape>>,
    bufs: Vec<Buf>,
    out_bufs: Vec<Buf>,
    temps: Vec<Vec<f32>>,
    /// The tensor buffers of the plan's `enter` inputs (their values live in temporaries).
    entered: Vec<Buf>,
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

/// Run `prog` fused on `tensors` and `scalars` (the program's tensor and scalar inputs by slot),
/// or `Ok(None)` when the backend's per-op path must run instead. `limits`: `None` fuses every
/// call the program can express (a forced `fused` mode).
pub fn run<H: Host, const N: usize>(
    host: &H,
    prog: &'static Program,
    tensors: &[&H::Tensor],
    scalars: &[f64],
    limits: Option<Limits>,
) -> Result<Option<[H::Tensor; N]>, H::Error> {
    let p = prog.view();
    if p.outputs.len() != N {
        return Ok(None);
    }
    if let Some(done) = activation_in_place::<H, N>(host, p, limits, tensors)? {
        return Ok(Some(done));
    }
    // A nested call on this thread (none exists today) would find the scratch busy: it then
    // takes the per-op path rather than sharing buffers.
    SCRATCH.with(|scratch| {
        let Ok(mut scratch) = scratch.try_borrow_mut() else {
            return Ok(None);
        };
        run_with(host, &mut scratch, prog, p, limits, tensors, scalars)
    })
}

/// The commonest region in a loop body, one activation overwriting an owned value in place
/// (`h = h.relu()`), without a plan or scratch buffers: `Ok(None)` when `p` is not that program
/// (the general path then runs, and declines what it declines).
fn activation_in_place<H: Host, const N: usize>(
    host: &H,
    p: ProgramView<'_>,
    limits: Option<Limits>,
    tensors: &[&H::Tensor],
) -> Result<Option<[H::Tensor; N]>, H::Error> {
    let ([Input::Tensor { slot, owned: true }], [Ins::Unary { f, t: 0 }], [1], 1) =
        (p.inputs, p.ins, p.outputs, N)
    else {
        return Ok(None);
    };
    let Some(t) = tensors.get(usize::from(*slot)) else {
        return Ok(None);
    };
    if !host.may_overwrite(t) {
        return Ok(None);
    }
    let Some((shape, ptr)) = host.view(t, true)? else {
        return Ok(None);
    };
    let n = shape.numel();
    if limits.is_some_and(|l| n > l.max_numel) {
        return Ok(None);
    }
    let gelu = *f == UnaryF::Gelu;
    let Some(edges) = edges_for(host, gelu && n == 1, gelu && n > 1) else {
        return Ok(None);
    };
    let f = f.kernel(edges.gelu(n));
    let addr = ptr as usize;
    let run = move || {
        // SAFETY: `view` checked a float32 contiguous buffer of `n` elements owned by the
        // region (an owned temporary nothing else observes), alive for the whole call.
        let dst = unsafe { std::slice::from_raw_parts_mut(addr as *mut f32, n) };
        k::unary_inplace(f, dst);
    };
    // The general path counts the value twice (operand and result) as its work.
    host.run_kernels(n.saturating_mul(2), run);
    Ok(Some(std::array::from_fn(|_| host.share(t))))
}

/// The edges a call needs: unused placeholders when it has no GELU.
fn edges_for<H: Host>(host: &H, one: bool, many: bool) -> Option<Edges> {
    if one || many {
        host.edges(one, many)
    } else {
        let unused = k::GeluEdges::PRODUCT_FORM;
        Some(Edges {
            gelu_one: unused,
            gelu_many: unused,
        })
    }
}

/// One call on the general path, in steps: which owned inputs it may not write
/// ([`demotions`]), the inputs' views ([`view_inputs`]), the plan (cached per thread), whether
/// the plan may run on them ([`admits`]), the outputs ([`outputs`]), every value's buffer
/// ([`bind_values`]), then the kernels.
fn run_with<H: Host, const N: usize>(
    host: &H,
    scratch: &mut Scratch,
    prog: &'static Program,
    p: ProgramView<'static>,
    limits: Option<Limits>,
    tensors: &[&H::Tensor],
    scalars: &[f64],
) -> Result<Option<[H::Tensor; N]>, H::Error> {
    let Some(demoted) = demotions(host, p, tensors) else {
        return Ok(None);
    };
    let Scratch {
        inputs,
        shapes,
        bufs,
        out_bufs,
        temps,
        entered,
    } = scratch;
    let p = if demoted == 0 {
        p
    } else {
        inputs.clear();
        inputs.extend(p.inputs.iter().enumerate().map(|(i, &input)| match input {
            Input::Tensor { slot, .. } if demoted & (1 << i) != 0 => {
                Input::Tensor { slot, owned: false }
            }
            other => other,
        }));
        ProgramView {
            inputs,
            ins: p.ins,
            outputs: p.outputs,
        }
    };
    if !view_inputs(host, p, tensors, scalars, shapes, bufs)? {
        return Ok(None);
    }
    let key = std::ptr::from_ref(prog) as usize;
    let Some(plan) = PLANS.with(|c| {
        c.try_borrow_mut()
            .ok()
            .and_then(|mut c| c.get(key, demoted, p, shapes))
    }) else {
        return Ok(None);
    };
    let plan: &Plan = &plan;
    // SAFETY: `bufs` holds each tensor input's buffer, viewed above with the plan's shape.
    if !unsafe { admits(p, plan, scalars, limits, bufs) }.map_err(|e| host.internal(&e.0))? {
        return Ok(None);
    }
    let (one, many) = gelus(p, plan);
    let Some(edges) = edges_for(host, one, many) else {
        return Ok(None);
    };
    let outs: [Option<H::Tensor>; N] = outputs(host, p, plan, tensors, bufs, out_bufs)?;
    bind_values(plan, p.inputs.len(), bufs, out_bufs, temps, entered)
        .map_err(|e| host.internal(&e.0))?;
    // SAFETY: every buffer pointer above is valid for its value's element count for the rest
    // of this call: inputs are live borrowed tensors (contiguous, float32, checked by `view`),
    // outputs are tensors owned by `outs`, temporaries are this thread's scratch buffers (at
    // least as long as the plan asks, not resized while the job runs), and none of them is
    // resized. The plan gives an instruction a destination distinct from its operands unless it
    // is marked in place, and in-place instructions only touch their destination slice.
    let job = Run {
        p,
        plan,
        bufs,
        entered,
        out_bufs,
        scalars,
        edges,
    };
    let ran = host
        // SAFETY: see above.
        .run_kernels(plan.work, move || unsafe { job.execute() })
        .map_err(|e| host.internal(&e.0))?;
    if !ran {
        // An operand outside a `finite_only` op's domain: the outputs are dropped unseen and
        // the backend's per-op path answers with its own semantics.
        return Ok(None);
    }
    let mut done = Vec::with_capacity(N);
    for o in outs {
        match o {
            Some(t) => done.push(t),
            None => return Err(host.internal("an output was not produced")),
        }
    }
    match <[H::Tensor; N]>::try_from(done) {
        Ok(outs) => Ok(Some(outs)),
        Err(_) => Err(host.internal("the outputs do not match the program")),
    }
}

/// The owned inputs this call must not write, as a bit per input (`None` declines: a missing
/// tensor, or a demoted input past the 64th): those the host does not let it overwrite, and
/// all of them in a call that may decline after its run (an operand outside a `finite_only`
/// op's domain), which must leave nothing behind.
fn demotions<H: Host>(host: &H, p: ProgramView<'_>, tensors: &[&H::Tensor]) -> Option<u64> {
    let finite = needs_finite(p);
    let mut demoted = 0u64;
    for (i, input) in p.inputs.iter().enumerate() {
        if let Input::Tensor { slot, owned: true } = *input {
            let t = tensors.get(usize::from(slot))?;
            if finite || !host.may_overwrite(t) {
                if i >= 64 {
                    return None;
                }
                demoted |= 1 << i;
            }
        }
    }
    Some(demoted)
}

/// Each input's shape (`None` for scalars and unused inputs) into `shapes`, and each tensor
/// input's buffer into `bufs` (sized for every value); `false` when an input is missing or the
/// host cannot view it.
fn view_inputs<H: Host>(
    host: &H,
    p: ProgramView<'_>,
    tensors: &[&H::Tensor],
    scalars: &[f64],
    shapes: &mut Vec<Option<Shape>>,
    bufs: &mut Vec<Buf>,
) -> Result<bool, H::Error> {
    shapes.clear();
    bufs.clear();
    bufs.resize(p.inputs.len() + p.ins.len(), Buf::None);
    for (i, input) in p.inputs.iter().enumerate() {
        match *input {
            Input::Tensor { slot, owned } => {
                let Some(t) = tensors.get(usize::from(slot)) else {
                    return Ok(false);
                };
                let Some((shape, ptr)) = host.view(t, owned)? else {
                    return Ok(false);
                };
                shapes.push(Some(shape));
                bufs[i] = Buf::F32(ptr);
            }
            Input::Scalar { slot } => {
                if usize::from(slot) >= scalars.len() {
                    return Ok(false);
                }
                shapes.push(None);
            }
            Input::Unused => shapes.push(None),
        }
    }
    Ok(true)
}

/// Whether `plan` may run on these inputs: no empty value, layer norms over their inputs' last
/// dim, within `limits`, and layer norms of program inputs within their domain (checked before
/// anything runs, so a declined call has written nothing).
///
/// # Safety
/// `bufs[v]` points at `plan.shapes[v].numel()` floats for every tensor input `v`.
unsafe fn admits(
    p: ProgramView<'_>,
    plan: &Plan,
    scalars: &[f64],
    limits: Option<Limits>,
    bufs: &[Buf],
) -> Result<bool, ExecError> {
    if plan.any_empty || !layer_norm_sizes_match(p, plan, scalars)? {
        return Ok(false);
    }
    if let Some(l) = limits {
        if plan.largest_product > l.max_macs || plan.max_numel > l.max_numel {
            return Ok(false);
        }
    }
    // SAFETY: the function's contract.
    Ok(unsafe { input_layer_norms_fuse(p, plan, bufs) })
}

/// The call's outputs: fresh tensors, or the owned input an output overwrites in place; each
/// output's buffer goes to `out_bufs`.
fn outputs<H: Host, const N: usize>(
    host: &H,
    p: ProgramView<'_>,
    plan: &Plan,
    tensors: &[&H::Tensor],
    bufs: &[Buf],
    out_bufs: &mut Vec<Buf>,
) -> Result<[Option<H::Tensor>; N], H::Error> {
    let mut outs: [Option<H::Tensor>; N] = std::array::from_fn(|_| None);
    out_bufs.clear();
    for ((o, &v), out) in p.outputs.iter().enumerate().zip(outs.iter_mut()) {
        match plan.output_alias.get(o).copied().flatten() {
            Some(iv) => {
                let Some(Input::Tensor { slot, .. }) = p.inputs.get(usize::from(iv)) else {
                    return Err(host.internal("an output aliases a non-tensor input"));
                };
                let Some(t) = tensors.get(usize::from(*slot)) else {
                    return Err(host.internal("an output aliases a missing input"));
                };
                *out = Some(host.share(t));
                out_bufs.push(bufs[usize::from(iv)]);
            }
            None => {
                let (shape, dt) = plan.shapes[usize::from(v)];
                let (t, ptr) = host.alloc(shape, dt)?;
                if ptr.is_null() {
                    return Err(host.internal("an output tensor has no storage"));
                }
                out_bufs.push(match dt {
                    Dt::F32 => Buf::F32(ptr.cast()),
                    Dt::I64 => Buf::I64(ptr.cast()),
                });
                *out = Some(t);
            }
        }
    }
    Ok(outs)
}

/// Every computed value's buffer into `bufs`, as the plan stores it: a temporary of this
/// thread's scratch (grown to the plan's sizes), an output, an input it overwrites, or none;
/// and the plan's `enter` inputs moved to their temporaries, their tensors' buffers into
/// `entered`.
fn bind_values(
    plan: &Plan,
    n_in: usize,
    bufs: &mut [Buf],
    out_bufs: &[Buf],
    temps: &mut Vec<Vec<f32>>,
    entered: &mut Vec<Buf>,
) -> Result<(), ExecError> {
    if temps.len() < plan.temps.len() {
        temps.resize_with(plan.temps.len(), Vec::new);
    }
    for (t, &n) in temps.iter_mut().zip(&plan.temps) {
        if t.len() < n {
            t.resize(n, 0.0);
        }
    }
    entered.clear();
    for &v in &plan.enter {
        let v = usize::from(v);
        entered.push(bufs[v]);
        bufs[v] = match plan.store[v] {
            Store::Temp(t) => match temps.get_mut(t) {
                Some(b) => Buf::F32(b.as_mut_ptr()),
                None => return Err(internal("a temporary is missing")),
            },
            _ => return Err(internal("an entering input has no temporary")),
        };
    }
    for (v, st) in plan.store.iter().enumerate().skip(n_in) {
        bufs[v] = match *st {
            Store::Temp(t) => match temps.get_mut(t) {
                Some(b) => Buf::F32(b.as_mut_ptr()),
                None => return Err(internal("a temporary is missing")),
            },
            Store::Output(o) => match out_bufs.get(o) {
                Some(&b) => b,
                None => return Err(internal("an output buffer is missing")),
            },
            Store::Input(iv) => bufs[usize::from(iv)],
            Store::Scalar => Buf::None,
        };
    }
    Ok(())
}

/// Whether some instruction of `p` holds only on finite operands.
fn needs_finite(p: ProgramView<'_>) -> bool {
    p.ins.iter().any(|i| {
        matches!(
            i,
            Ins::Softmax {
                finite_only: true,
                ..
            } | Ins::Argmax {
                finite_only: true,
                ..
            }
        ) || matches!(*i, Ins::LayerNorm { x, .. } if usize::from(x) >= p.inputs.len())
    })
}

/// Whether every layer norm whose input is an input of the program can run fused (checked
/// before anything runs, so such a call declines with nothing written and its owned inputs
/// stay writable; a layer norm of a computed value is checked when it runs).
///
/// # Safety
/// `bufs[v]` points at `plan.shapes[v].numel()` floats for every tensor input `v`.
unsafe fn input_layer_norms_fuse(p: ProgramView<'_>, plan: &Plan, bufs: &[Buf]) -> bool {
    p.ins.iter().all(|i| match *i {
        Ins::LayerNorm { x, .. } if usize::from(x) < p.inputs.len() => {
            match bufs.get(usize::from(x)) {
                Some(Buf::F32(ptr)) => {
                    let len = plan.shapes[usize::from(x)].0.numel();
                    // SAFETY: see the function's contract.
                    layer_norm_domain(unsafe { std::slice::from_raw_parts(*ptr, len) })
                }
                _ => false,
            }
        }
        _ => true,
    })
}

/// The largest magnitude a layer norm's input may hold on the fused path. Beyond it eager's
/// row moments (ATen's Welford merge of per-lane moments, in float) overflow and answer NaN or
/// the bias depending on how lanes were merged, which a kernel of another shape cannot
/// reproduce; such a call declines and libtorch answers. (A row of 1e30 gives NaN in eager,
/// the bias here.) Below it both are the same moments up to rounding.
const LAYER_NORM_MAX_ABS: f32 = 4294967296.0; // 2^32

/// Whether every element of a layer norm's input is finite and within
/// [`LAYER_NORM_MAX_ABS`]: non-finite rows too are left to libtorch, whose merge decides them.
fn layer_norm_domain(x: &[f32]) -> bool {
    all_within(x, LAYER_NORM_MAX_ABS)
}

/// Whether every element is finite.
fn all_finite(x: &[f32]) -> bool {
    all_within(x, f32::MAX)
}

/// Whether every element's magnitude is at most `limit` (a positive finite float); NaN never
/// is. Compares magnitudes as bit patterns (for non-negative floats their order is the integer
/// order, and every NaN's pattern lies above infinity's), without a branch inside a block, so
/// the compiler vectorises it on any instruction set; it stops at the first block that fails.
/// (An element-by-element `all` stops at every element and stays scalar: at batch 128 it cost
/// a residual MLP about a twentieth of its time.)
fn all_within(x: &[f32], limit: f32) -> bool {
    const BLOCK: usize = 512;
    let bound = limit.to_bits();
    x.chunks(BLOCK).all(|block| {
        block.iter().fold(0u32, |over, v| {
            over | u32::from(v.to_bits() & 0x7fff_ffff > bound)
        }) == 0
    })
}

/// Whether `plan` has GELUs of one element, and of more.
fn gelus(p: ProgramView<'_>, plan: &Plan) -> (bool, bool) {
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
    (one, many)
}

/// The value of scalar input `v`.
fn scalar_of(p: ProgramView<'_>, scalars: &[f64], v: V) -> Result<f64, ExecError> {
    let Some(Input::Scalar { slot }) = p.inputs.get(usize::from(v)).copied() else {
        return Err(internal("a scalar operand is not a scalar input"));
    };
    scalars
        .get(usize::from(slot))
        .copied()
        .ok_or_else(|| internal("a scalar operand is missing"))
}

/// Whether every layer norm's normalised size is its input's last dim; otherwise the per-op
/// path runs and raises eager's error.
fn layer_norm_sizes_match(
    p: ProgramView<'_>,
    plan: &Plan,
    scalars: &[f64],
) -> Result<bool, ExecError> {
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

/// What a step of [`Run::execute`] did.
enum Step {
    /// Ran this many instructions.
    Ran(usize),
    /// Found an operand outside an instruction's domain: the call declines.
    Declined,
}

/// One planned call: its program, plan and buffers, runnable without the GIL.
///
/// Its running methods are `unsafe` with this contract: `bufs[v]` points at
/// `plan.shapes[v].numel()` elements of value `v`'s type for as long as the run lasts, distinct
/// buffers do not overlap, and buffers are only shared along the plan's in-place chains.
struct Run<'a> {
    p: ProgramView<'a>,
    plan: &'a Plan,
    bufs: &'a [Buf],
    /// The tensor buffers of `plan.enter`'s inputs, in order.
    entered: &'a [Buf],
    /// The output tensors' buffers.
    out_bufs: &'a [Buf],
    scalars: &'a [f64],
    edges: Edges,
}

// SAFETY: the buffers a run points into belong to this call (borrowed input tensors, the output
// tensors and temporaries it owns) and are only touched by the run while it runs; it reads no
// Python object.
unsafe impl Send for Run<'_> {}

impl Run<'_> {
    /// Runs the plan; `Ok(false)` when an operand of a `finite_only` instruction is not finite,
    /// or a layer norm's input is outside [`layer_norm_domain`] (the call then declines; nothing
    /// it wrote is seen).
    ///
    /// Each step runs one instruction, or a pair or triple a kernel does at once (a product
    /// with its bias and activation, a softmax read only by an argmax), and says how many it
    /// ran. In [`Layout::Cols`] the entering inputs are transposed into their temporaries first
    /// and the held outputs into their tensors last, and every step is [`Run::single`] (the
    /// pairs' kernels are row-major).
    ///
    /// # Safety
    /// The contract of [`Run`]; in [`Layout::Cols`] also `entered[i]` points at
    /// `plan.enter[i]`'s tensor and `out_bufs[o]` at output `o`'s, each of its value's element
    /// count.
    unsafe fn execute(&self) -> Result<bool, ExecError> {
        let cols = self.plan.layout == Layout::Cols;
        if cols {
            // SAFETY: the function's contract.
            unsafe { self.enter()? };
        }
        let mut j = 0;
        while j < self.p.ins.len() {
            // SAFETY: the function's contract is the steps'.
            let step = unsafe {
                if cols {
                    self.single(j)?
                } else {
                    match self.product_bias(j)? {
                        Some(step) => step,
                        None => match self.softmax_argmax(j)? {
                            Some(step) => step,
                            None => self.single(j)?,
                        },
                    }
                }
            };
            match step {
                Step::Ran(n) => j += n,
                Step::Declined => return Ok(false),
            }
        }
        if cols {
            // SAFETY: the function's contract.
            unsafe { self.leave()? };
        }
        Ok(true)
    }

    /// [`Layout::Cols`]: each entering input's tensor transposed into its temporary.
    ///
    /// # Safety
    /// As [`Run::execute`].
    unsafe fn enter(&self) -> Result<(), ExecError> {
        if self.entered.len() != self.plan.enter.len() {
            return Err(internal("an entering input has no buffer"));
        }
        for (&v, &from) in self.plan.enter.iter().zip(self.entered) {
            let (m, c) = self.shape(v).matrix();
            let Buf::F32(from) = from else {
                return Err(internal("an entering input has no float32 buffer"));
            };
            // SAFETY: see the contract; the temporary is distinct from the input's tensor.
            let (x, dst) = unsafe {
                (
                    std::slice::from_raw_parts(from.cast_const(), m * c),
                    self.dst(usize::from(v), m * c)?,
                )
            };
            k_err(k::transpose(x, m, c, dst))?;
        }
        Ok(())
    }

    /// [`Layout::Cols`]: each held output transposed into its tensor.
    ///
    /// # Safety
    /// As [`Run::execute`].
    unsafe fn leave(&self) -> Result<(), ExecError> {
        for &o in &self.plan.leave {
            let (Some(&v), Some(&Buf::F32(to))) = (self.p.outputs.get(o), self.out_bufs.get(o))
            else {
                return Err(internal("a held output has no float32 tensor"));
            };
            let (m, c) = self.shape(v).matrix();
            // SAFETY: see the contract; the output's tensor is distinct from its temporary.
            let (x, dst) = unsafe { (self.src(v)?, std::slice::from_raw_parts_mut(to, m * c)) };
            k_err(k::transpose(x, c, m, dst))?;
        }
        Ok(())
    }

    /// Whether a value of shape `s` is held transposed ([`Layout::Cols`], rank 2).
    fn held_transposed(&self, s: Shape) -> bool {
        self.plan.layout == Layout::Cols && s.rank == 2
    }

    /// The rows and columns a kernel sees of a value of shape `s`: its matrix, transposed
    /// where it is held so.
    fn held(&self, s: Shape) -> (usize, usize) {
        let (m, c) = s.matrix();
        if self.held_transposed(s) {
            (c, m)
        } else {
            (m, c)
        }
    }

    /// Whether an op over `dim` of a value of shape `s` (a vector: over its elements) runs
    /// along the rows of [`Run::held`]'s matrix (a `*_rows` kernel) rather than down its
    /// columns.
    fn along_rows(&self, s: Shape, dim: u8) -> bool {
        let last = s.rank != 2 || dim == 1;
        last != self.held_transposed(s)
    }

    #[inline(always)]
    fn shape(&self, v: V) -> Shape {
        self.plan.shapes[usize::from(v)].0
    }

    /// Value `v`'s elements.
    ///
    /// # Safety
    /// See [`Run`].
    #[inline(always)]
    unsafe fn src(&self, v: V) -> Result<&[f32], ExecError> {
        match self.bufs[usize::from(v)] {
            // SAFETY: see the contract.
            Buf::F32(p) => Ok(unsafe { std::slice::from_raw_parts(p, self.shape(v).numel()) }),
            _ => Err(internal("an operand has no float32 buffer")),
        }
    }

    /// Value `v`'s float32 destination of `n` elements.
    ///
    /// # Safety
    /// See [`Run`]; the caller writes it only while no operand slice aliases it (the plan gives
    /// an instruction a destination distinct from its operands unless it is in place).
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    unsafe fn dst(&self, v: usize, n: usize) -> Result<&mut [f32], ExecError> {
        match self.bufs[v] {
            // SAFETY: see the contract.
            Buf::F32(d) => Ok(unsafe { std::slice::from_raw_parts_mut(d, n) }),
            _ => Err(internal("a result has no float32 destination")),
        }
    }

    /// Value `v`'s int64 destination of `n` elements (an argmax's).
    ///
    /// # Safety
    /// As [`Run::dst`].
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    unsafe fn dst_i64(&self, v: usize, n: usize) -> Result<&mut [i64], ExecError> {
        match self.bufs[v] {
            // SAFETY: see the contract.
            Buf::I64(d) => Ok(unsafe { std::slice::from_raw_parts_mut(d, n) }),
            _ => Err(internal("argmax has no int64 destination")),
        }
    }

    /// Whether value `v` is read by nothing after instruction `j` and is not an output.
    fn dead_after(&self, v: usize, j: usize) -> bool {
        !self.p.outputs.iter().any(|&o| usize::from(o) == v)
            && self.p.ins[j + 1..]
                .iter()
                .all(|i| !operands(i).any(|u| usize::from(u) == v))
    }

    /// The activation applied in place to value `v` by instruction `j`, as a store epilogue.
    fn epilogue_at(&self, j: usize, v: usize, n: usize) -> Option<k::Epilogue> {
        match self.p.ins.get(j) {
            Some(&Ins::Unary { f, t })
                if usize::from(t) == v && self.plan.in_place.get(j) == Some(&true) =>
            {
                f.epilogue(self.edges.gelu(n))
            }
            _ => None,
        }
    }

    /// `a @ b` at `j` whose only reader adds a row vector to it (a bias), and maybe an
    /// activation applied in place to that sum right after: one product, its rows finished as
    /// stored, written straight to the sum's destination.
    ///
    /// # Safety
    /// See [`Run`].
    unsafe fn product_bias(&self, j: usize) -> Result<Option<Step>, ExecError> {
        let (p, plan) = (self.p, self.plan);
        let (
            Ins::Matmul { a, b },
            Some(&Ins::Binary {
                f: k::Binary::Add,
                a: pa,
                b: bias,
                ..
            }),
        ) = (p.ins[j], p.ins.get(j + 1))
        else {
            return Ok(None);
        };
        let v = p.inputs.len() + j;
        let out_shape = plan.shapes[v].0;
        let n = out_shape.numel();
        let (m, kk) = self.shape(a).matrix();
        let nn = self.shape(b).dims[1];
        let bs = self.shape(bias);
        let fits = usize::from(pa) == v
            && usize::from(bias) != v
            && self.dead_after(v, j + 1)
            && bs.rank == 1
            && bs.dims[0] == nn
            && plan.shapes[v + 1].0 == out_shape
            // The sum's buffer may be one an operand of the product just freed.
            && [a, b, bias]
                .iter()
                .all(|&o| plan.store[usize::from(o)] != plan.store[v + 1]);
        if !fits {
            return Ok(None);
        }
        let e = self.epilogue_at(j + 2, v + 1, n);
        // SAFETY: see the contract; the sum's buffer is distinct from the product's operands (or
        // is the product's own, which nothing else reads).
        unsafe {
            let dst = self.dst(v + 1, n)?;
            k_err(k::matmul_fused(
                self.src(a)?,
                m,
                kk,
                self.src(b)?,
                nn,
                Some(self.src(bias)?),
                e.unwrap_or(k::Epilogue::None),
                dst,
            ))?;
        }
        Ok(Some(Step::Ran(if e.is_some() { 3 } else { 2 })))
    }

    /// A softmax over rows at `j` whose only reader is an argmax over the same rows: labels
    /// only.
    ///
    /// # Safety
    /// See [`Run`].
    unsafe fn softmax_argmax(&self, j: usize) -> Result<Option<Step>, ExecError> {
        let p = self.p;
        let (
            Ins::Softmax {
                t,
                dim: 1,
                log: false,
                finite_only,
            },
            Some(&Ins::Argmax {
                t: pt,
                dim: 1,
                finite_only: argmax_finite,
                ..
            }),
        ) = (p.ins[j], p.ins.get(j + 1))
        else {
            return Ok(None);
        };
        let v = p.inputs.len() + j;
        if usize::from(pt) != v || !self.dead_after(v, j + 1) || self.shape(t).rank != 2 {
            return Ok(None);
        }
        // SAFETY: see the contract.
        let x = unsafe { self.src(t)? };
        if (finite_only || argmax_finite) && !all_finite(x) {
            return Ok(Some(Step::Declined));
        }
        let (m, c) = self.shape(t).matrix();
        // SAFETY: see the contract.
        let dst = unsafe { self.dst_i64(v + 1, m)? };
        k_err(k::softmax_argmax_rows(x, m, c, dst))?;
        Ok(Some(Step::Ran(2)))
    }

    /// Instruction `j` alone, or with the activation a linear stores as its epilogue, in the
    /// plan's layout: in [`Layout::Cols`] a matrix value of logical shape `[m, c]` is held as
    /// `[c, m]`, so each kernel runs on the transposed matrix ([`Run::held`]: a reduction over
    /// rows becomes one down columns, a row operand a column one, products and layer norms
    /// take their feature-major kernels); vectors and scalars are the same in either layout.
    ///
    /// # Safety
    /// See [`Run`].
    unsafe fn single(&self, j: usize) -> Result<Step, ExecError> {
        let (p, plan) = (self.p, self.plan);
        let i = p.ins[j];
        let v = p.inputs.len() + j;
        let out_shape = plan.shapes[v].0;
        let n = out_shape.numel();
        let in_place = plan.in_place.get(j).copied().unwrap_or(false);
        if let Ins::Argmax {
            t,
            dim,
            finite_only,
            ..
        } = i
        {
            // SAFETY: see the contract.
            let x = unsafe { self.src(t)? };
            if finite_only && !all_finite(x) {
                return Ok(Step::Declined);
            }
            // SAFETY: see the contract; an argmax's destination is none of its operands.
            let dst = unsafe { self.dst_i64(v, n)? };
            let s = self.shape(t);
            let (m, c) = self.held(s);
            k_err(if self.along_rows(s, dim) {
                k::argmax_rows(x, m, c, dst)
            } else {
                k::argmax_cols(x, m, c, dst)
            })?;
            return Ok(Step::Ran(1));
        }
        let cols = self.plan.layout == Layout::Cols;
        // SAFETY: see the contract.
        let src = |v: V| unsafe { self.src(v) };
        // SAFETY: see the contract; an operand shares this buffer only when the instruction
        // is planned in place, and then only its destination is written.
        let dst = unsafe { self.dst(v, n)? };
        match i {
            Ins::Linear { x, w, b } => {
                let (m, kk) = self.shape(x).matrix();
                let nn = self.shape(w).dims[0];
                let bias = match b {
                    Some(b) => Some(src(b)?),
                    None => None,
                };
                // An activation applied in place to this result right after: fused into the
                // store.
                let e = self.epilogue_at(j + 1, v, n);
                let ran = if e.is_some() { 2 } else { 1 };
                let e = e.unwrap_or(k::Epilogue::None);
                if cols {
                    k_err(k::linear_cols(src(x)?, kk, m, src(w)?, nn, bias, e, dst))?;
                } else {
                    k_err(k::linear_fused(src(x)?, m, kk, src(w)?, nn, bias, e, dst))?;
                }
                return Ok(Step::Ran(ran));
            }
            Ins::Matmul { .. } | Ins::Transpose { .. } if cols => {
                return Err(internal("a feature-major plan holds a matmul or transpose"));
            }
            Ins::Matmul { a, b } => {
                let (m, kk) = self.shape(a).matrix();
                let nn = self.shape(b).dims[1];
                k_err(k::matmul(src(a)?, m, kk, src(b)?, nn, dst))?;
            }
            Ins::Transpose { t } => {
                let (m, c) = self.shape(t).matrix();
                k_err(k::transpose(src(t)?, m, c, dst))?;
            }
            Ins::Unary { f, t } => {
                let f = f.kernel(self.edges.gelu(n));
                if in_place {
                    k::unary_inplace(f, dst);
                } else {
                    k_err(k::unary(f, src(t)?, dst))?;
                }
            }
            Ins::Binary { f, a, b, .. } => {
                let Some((_, ra, rb)) = broadcast(self.shape(a), self.shape(b)) else {
                    return Err(internal("an elementwise operand no longer broadcasts"));
                };
                // A result held transposed: a row operand spans its held columns.
                let (m, c) = self.held(out_shape);
                let role = |r: Role| match (self.held_transposed(out_shape), r) {
                    (true, Role::Row) => Role::Col,
                    (true, Role::Col) => Role::Row,
                    _ => r,
                };
                let rhs = operand(role(rb), src(b)?)?;
                if in_place {
                    k_err(k::binary_inplace(f, m, c, dst, rhs))?;
                } else {
                    let lhs = operand(role(ra), src(a)?)?;
                    k_err(k::binary(f, m, c, lhs, rhs, dst))?;
                }
            }
            Ins::Scalar { f, t, s, rev } => {
                // The scalar is cast to the tensor's dtype before the operation, as eager does.
                let sv = k::Operand::Scalar(scalar_of(p, self.scalars, s)? as f32);
                let (m, c) = out_shape.matrix();
                match (in_place, rev) {
                    (true, false) => k_err(k::binary_inplace(f, m, c, dst, sv))?,
                    (false, false) => {
                        k_err(k::binary(f, m, c, k::Operand::Full(src(t)?), sv, dst))?
                    }
                    (true, true) => {
                        return Err(internal("`scalar op tensor` is never planned in place"))
                    }
                    (false, true) => k_err(k::binary(f, m, c, sv, k::Operand::Full(src(t)?), dst))?,
                }
            }
            Ins::Softmax {
                t,
                dim,
                log,
                finite_only,
            } => {
                let x = src(t)?;
                if finite_only && !all_finite(x) {
                    return Ok(Step::Declined);
                }
                let s = self.shape(t);
                let (m, c) = self.held(s);
                k_err(match (self.along_rows(s, dim), log) {
                    (true, false) => k::softmax_rows(x, m, c, dst),
                    (true, true) => k::log_softmax_rows(x, m, c, dst),
                    (false, false) => k::softmax_cols(x, m, c, dst),
                    (false, true) => k::log_softmax_cols(x, m, c, dst),
                })?;
            }
            Ins::Reduce { f, t, dim, .. } => {
                let s = self.shape(t);
                let (m, c) = self.held(s);
                k_err(reduce(f, self.along_rows(s, dim), src(t)?, m, c, dst))?;
            }
            Ins::LayerNorm { x, w, b, eps, .. } => {
                let (m, c) = self.held(self.shape(x));
                // Held transposed: each column normalised.
                let down = self.held_transposed(self.shape(x));
                let eps = match eps {
                    Some(e) => scalar_of(p, self.scalars, e)?,
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
                let xs = src(x)?;
                // eps in the input's accumulation type (float for float32), as ATen casts it.
                let eps = eps as f32;
                if usize::from(x) < p.inputs.len() {
                    // A layer norm of a program input was checked before the run.
                    k_err(if down {
                        k::layer_norm_cols(xs, m, c, w, b, eps, dst)
                    } else {
                        k::layer_norm_rows(xs, m, c, w, b, eps, dst)
                    })?;
                } else {
                    // A computed input is checked by the kernel as it reads it (see
                    // [`layer_norm_domain`]); what it wrote before declining is never seen.
                    let lim = LAYER_NORM_MAX_ABS;
                    let within = k_err(if down {
                        k::layer_norm_cols_within(xs, m, c, w, b, eps, lim, dst)
                    } else {
                        k::layer_norm_rows_within(xs, m, c, w, b, eps, lim, dst)
                    })?;
                    if !within {
                        return Ok(Step::Declined);
                    }
                }
            }
            Ins::Argmax { .. } => {}
        }
        Ok(Step::Ran(1))
    }
}

#[inline(always)]
fn operand(role: Role, x: &[f32]) -> Result<k::Operand<'_>, ExecError> {
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

fn k_err<T>(r: Result<T, k::KernelError>) -> Result<T, ExecError> {
    r.map_err(|e| internal(&format!("kernel rejected its operands: {e}")))
}

#[cfg(test)]
mod domain_tests {
    use super::{all_finite, layer_norm_domain, LAYER_NORM_MAX_ABS};

    /// `n` zeros with `v` at `at`.
    fn with(n: usize, at: usize, v: f32) -> Vec<f32> {
        let mut x = vec![0.0; n];
        x[at] = v;
        x
    }

    #[test]
    fn the_domain_checks_see_every_special_value_in_every_block() {
        let above = f32::from_bits(LAYER_NORM_MAX_ABS.to_bits() + 1);
        let nans = [
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7f80_0001),
            f32::from_bits(0xffc0_1234),
        ];
        // Lengths below, at and past one block, and positions in the first and a later
        // (partial) block.
        for n in [1, 7, 512, 513, 1500] {
            for at in [0, n / 2, n - 1] {
                for v in [LAYER_NORM_MAX_ABS, -LAYER_NORM_MAX_ABS, -0.0, 1.5e-45] {
                    assert!(layer_norm_domain(&with(n, at, v)), "{v} at {at} of {n}");
                }
                for v in [above, -above, f32::INFINITY, f32::NEG_INFINITY, 1e30]
                    .into_iter()
                    .chain(nans)
                {
                    assert!(!layer_norm_domain(&with(n, at, v)), "{v} at {at} of {n}");
                }
                for v in [f32::MAX, f32::MIN, 1e30, -0.0] {
                    assert!(all_finite(&with(n, at, v)), "{v} at {at} of {n}");
                }
                for v in [f32::INFINITY, f32::NEG_INFINITY].into_iter().chain(nans) {
                    assert!(!all_finite(&with(n, at, v)), "{v} at {at} of {n}");
                }
            }
        }
        assert!(layer_norm_domain(&[]) && all_finite(&[]));
    }
}

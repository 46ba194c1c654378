//! The fused path: run a [`Program`] on the float32 CPU buffers of its tensor inputs, writing
//! results straight into freshly allocated output tensors (or, for an owned input, in place).
//!
//! The call first views every tensor input (float32, CPU, contiguous, non-empty), then plans it
//! ([`crate::fusion::plan`]); any input, shape or size outside the fused path's reach returns
//! `Ok(None)` before anything is written, and the generated code runs the per-site libtorch
//! path instead, with libtorch's own errors. `REXTIO_TORCH_PATH` forces a path: `fused` (every
//! call the program can express, regardless of the size guard), `per-op` (never fused), or
//! `auto` (default).

use super::{map_err, RxtTorchTensor};
use crate::fusion::{self, Dt, Input, Ins, Plan, Program, ProgramView, ReduceF, Shape, Store};
use adapter as k;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::PyResult;
use std::sync::OnceLock;
use tch::{Device, Kind, Tensor};

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

/// A float32 CPU contiguous non-empty tensor's shape and data pointer.
fn view(t: &Tensor) -> Option<(Shape, *mut f32)> {
    if t.device() != Device::Cpu || t.f_kind().ok()? != Kind::Float || !t.is_contiguous() {
        return None;
    }
    let sizes = t.size();
    let mut dims = [0usize; 2];
    if sizes.len() > 2 {
        return None;
    }
    for (d, &s) in dims.iter_mut().zip(&sizes) {
        *d = usize::try_from(s).ok()?;
    }
    let shape = Shape::of(&dims[..sizes.len()])?;
    if shape.numel() == 0 {
        return None;
    }
    let ptr = t.data_ptr().cast::<f32>();
    (!ptr.is_null()).then_some((shape, ptr))
}

/// Base pointers of values: f32 or i64 buffers.
#[derive(Clone, Copy)]
enum Buf {
    None,
    F32(*mut f32),
    I64(*mut i64),
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
    let n_in = p.inputs.len();
    let mut shapes = Vec::with_capacity(n_in);
    let mut bufs = vec![Buf::None; n_in + p.ins.len()];
    for (i, input) in p.inputs.iter().enumerate() {
        match *input {
            Input::Tensor { slot, .. } => {
                let Some(t) = tensors.get(usize::from(slot)) else {
                    return Ok(None);
                };
                let Some((shape, ptr)) = view(&t.0) else {
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
    let Some(plan) = fusion::plan(p, &shapes) else {
        return Ok(None);
    };
    if plan.shapes.iter().any(|(s, _)| s.numel() == 0) {
        return Ok(None);
    }
    if mode == PathMode::Auto
        && (plan.macs > AUTO_MAX_MACS
            || plan.shapes.iter().any(|(s, _)| s.numel() > AUTO_MAX_NUMEL))
    {
        return Ok(None);
    }
    // Outputs: fresh tensors, or the owned input they overwrite in place.
    let mut outs: Vec<RxtTorchTensor> = Vec::with_capacity(N);
    let mut out_bufs: Vec<Buf> = Vec::with_capacity(N);
    for (o, &v) in p.outputs.iter().enumerate() {
        match plan.output_alias.get(o).copied().flatten() {
            Some(iv) => {
                let Some(Input::Tensor { slot, .. }) = p.inputs.get(usize::from(iv)) else {
                    return Err(internal("an output aliases a non-tensor input"));
                };
                let Some(t) = tensors.get(usize::from(*slot)) else {
                    return Err(internal("an output aliases a missing input"));
                };
                outs.push(RxtTorchTensor(t.0.shallow_clone()));
                out_bufs.push(bufs[usize::from(iv)]);
            }
            None => {
                let (shape, dt) = plan.shapes[usize::from(v)];
                let sizes: Vec<i64> = shape
                    .sizes()
                    .iter()
                    .map(|&d| i64::try_from(d).unwrap_or(i64::MAX))
                    .collect();
                let kind = match dt {
                    Dt::F32 => Kind::Float,
                    Dt::I64 => Kind::Int64,
                };
                let t = Tensor::f_empty(&sizes, (kind, Device::Cpu)).map_err(map_err)?;
                let ptr = t.data_ptr();
                if ptr.is_null() {
                    return Err(internal("an output tensor has no storage"));
                }
                out_bufs.push(match dt {
                    Dt::F32 => Buf::F32(ptr.cast()),
                    Dt::I64 => Buf::I64(ptr.cast()),
                });
                outs.push(RxtTorchTensor(t));
            }
        }
    }
    let mut temps: Vec<Vec<f32>> = plan.temps.iter().map(|&n| vec![0.0f32; n]).collect();
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
    // outputs are tensors owned by `outs`, temporaries are owned by `temps`, and none of them is
    // resized. The plan gives an instruction a destination distinct from its operands unless it
    // is marked in place, and in-place instructions only touch their destination slice.
    unsafe { execute(p, &plan, &bufs, scalars) }?;
    drop(temps);
    let outs: [RxtTorchTensor; N] = outs
        .try_into()
        .map_err(|_| internal("the output count changed"))?;
    Ok(Some(outs))
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
unsafe fn execute(p: ProgramView<'_>, plan: &Plan, bufs: &[Buf], scalars: &[f64]) -> PyResult<()> {
    let shape = |v: u16| plan.shapes[usize::from(v)].0;
    let src = |v: u16| -> PyResult<&[f32]> {
        match bufs[usize::from(v)] {
            // SAFETY: see the function's contract.
            Buf::F32(p) => Ok(unsafe { std::slice::from_raw_parts(p, shape(v).numel()) }),
            _ => Err(internal("an operand has no float32 buffer")),
        }
    };
    let n_in = p.inputs.len();
    for (j, i) in p.ins.iter().enumerate() {
        let v = n_in + j;
        let (out_shape, _) = plan.shapes[v];
        let n = out_shape.numel();
        let in_place = plan.in_place.get(j).copied().unwrap_or(false);
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
                k_err(k::linear(src(x)?, m, kk, src(w)?, nn, bias, dst))?;
            }
            Ins::Matmul { a, b } => {
                let (m, kk) = shape(a).matrix();
                let nn = shape(b).dims[1];
                k_err(k::matmul(src(a)?, m, kk, src(b)?, nn, dst))?;
            }
            Ins::Unary { f, t } => {
                if in_place {
                    k_err(k::unary_inplace(f, dst))?;
                } else {
                    k_err(k::unary(f, src(t)?, dst))?;
                }
            }
            Ins::Binary { f, a, b } => {
                let (sa, sb) = (shape(a), shape(b));
                if sa == sb {
                    if in_place {
                        k_err(k::binary_same_inplace(f, dst, src(b)?))?;
                    } else {
                        k_err(k::binary_same(f, src(a)?, src(b)?, dst))?;
                    }
                } else if sa.rank == 2 {
                    let (m, c) = sa.matrix();
                    if in_place {
                        k_err(k::binary_row_inplace(f, dst, m, c, src(b)?))?;
                    } else {
                        k_err(k::binary_row(f, src(a)?, m, c, src(b)?, dst))?;
                    }
                } else {
                    // A vector on the left of a matrix: the plan only admits commuting ops.
                    let (m, c) = sb.matrix();
                    k_err(k::binary_row(f, src(b)?, m, c, src(a)?, dst))?;
                }
            }
            Ins::Scalar { f, t, s, rev } => {
                let Some(Input::Scalar { slot }) = p.inputs.get(usize::from(s)).copied() else {
                    return Err(internal("a scalar operand is not a scalar input"));
                };
                let Some(&sv) = scalars.get(usize::from(slot)) else {
                    return Err(internal("a scalar operand is missing"));
                };
                let sv = sv as f32;
                if in_place {
                    k_err(k::binary_scalar_inplace(f, dst, sv, rev))?;
                } else {
                    k_err(k::binary_scalar(f, src(t)?, sv, rev, dst))?;
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
            Ins::Argmax { .. } => {}
        }
    }
    Ok(())
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
    r.map_err(|e| internal(&format!("kernel rejected its operands: {e:?}")))
}

/// The kernels the fused path calls, as one narrow interface.
mod adapter {
    use crate::fusion::{BinaryF, UnaryF};

    /// Operands whose lengths do not match their dims.
    #[derive(Debug)]
    pub struct KernelError;

    type R = Result<(), KernelError>;

    fn check(ok: bool) -> R {
        if ok {
            Ok(())
        } else {
            Err(KernelError)
        }
    }

    fn un(f: UnaryF, x: f32) -> f32 {
        match f {
            UnaryF::Relu => {
                if x.is_nan() || x > 0.0 {
                    x
                } else {
                    0.0
                }
            }
            UnaryF::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            UnaryF::Tanh => x.tanh(),
            UnaryF::Abs => x.abs(),
            UnaryF::Neg => -x,
            UnaryF::Exp => x.exp(),
            UnaryF::Log => x.ln(),
            UnaryF::Sqrt => x.sqrt(),
            UnaryF::Gelu => {
                let xd = f64::from(x);
                (0.5 * xd * (1.0 + libm_erf(xd / std::f64::consts::SQRT_2))) as f32
            }
        }
    }

    fn libm_erf(x: f64) -> f64 {
        // Abramowitz-Stegun 7.1.26 is too coarse; use a series/continued fraction split.
        if x.is_nan() {
            return x;
        }
        let t = x.abs();
        let r = if t < 2.5 {
            let mut sum = t;
            let mut term = t;
            let x2 = t * t;
            let mut n = 0.0;
            loop {
                n += 1.0;
                term *= -x2 / n;
                let add = term / (2.0 * n + 1.0);
                sum += add;
                if add.abs() < 1e-17 {
                    break;
                }
            }
            sum * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            // erfc continued fraction.
            let mut f = 0.0;
            for k in (1..60).rev() {
                f = (k as f64 / 2.0) / (t + f);
            }
            1.0 - (-t * t).exp() / (std::f64::consts::PI.sqrt() * (t + f))
        };
        if x < 0.0 {
            -r
        } else {
            r
        }
    }

    fn bin(f: BinaryF, a: f32, b: f32) -> f32 {
        match f {
            BinaryF::Add => a + b,
            BinaryF::Sub => a - b,
            BinaryF::Mul => a * b,
            BinaryF::Div => a / b,
        }
    }

    pub fn linear(
        x: &[f32],
        m: usize,
        k: usize,
        w: &[f32],
        n: usize,
        b: Option<&[f32]>,
        out: &mut [f32],
    ) -> R {
        check(
            x.len() == m * k
                && w.len() == n * k
                && out.len() == m * n
                && b.is_none_or(|b| b.len() == n),
        )?;
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0f32;
                for q in 0..k {
                    acc += x[i * k + q] * w[j * k + q];
                }
                out[i * n + j] = acc + b.map_or(0.0, |b| b[j]);
            }
        }
        Ok(())
    }

    pub fn matmul(a: &[f32], m: usize, k: usize, b: &[f32], n: usize, out: &mut [f32]) -> R {
        check(a.len() == m * k && b.len() == k * n && out.len() == m * n)?;
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0f32;
                for q in 0..k {
                    acc += a[i * k + q] * b[q * n + j];
                }
                out[i * n + j] = acc;
            }
        }
        Ok(())
    }

    pub fn unary(f: UnaryF, x: &[f32], out: &mut [f32]) -> R {
        check(x.len() == out.len())?;
        for (o, &v) in out.iter_mut().zip(x) {
            *o = un(f, v);
        }
        Ok(())
    }

    pub fn unary_inplace(f: UnaryF, x: &mut [f32]) -> R {
        for v in x.iter_mut() {
            *v = un(f, *v);
        }
        Ok(())
    }

    pub fn binary_same(f: BinaryF, a: &[f32], b: &[f32], out: &mut [f32]) -> R {
        check(a.len() == b.len() && a.len() == out.len())?;
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            *o = bin(f, x, y);
        }
        Ok(())
    }

    pub fn binary_same_inplace(f: BinaryF, a: &mut [f32], b: &[f32]) -> R {
        check(a.len() == b.len())?;
        for (x, &y) in a.iter_mut().zip(b) {
            *x = bin(f, *x, y);
        }
        Ok(())
    }

    pub fn binary_row(
        f: BinaryF,
        a: &[f32],
        m: usize,
        n: usize,
        row: &[f32],
        out: &mut [f32],
    ) -> R {
        check(a.len() == m * n && row.len() == n && out.len() == m * n)?;
        for i in 0..m {
            for j in 0..n {
                out[i * n + j] = bin(f, a[i * n + j], row[j]);
            }
        }
        Ok(())
    }

    pub fn binary_row_inplace(f: BinaryF, a: &mut [f32], m: usize, n: usize, row: &[f32]) -> R {
        check(a.len() == m * n && row.len() == n)?;
        for i in 0..m {
            for j in 0..n {
                a[i * n + j] = bin(f, a[i * n + j], row[j]);
            }
        }
        Ok(())
    }

    pub fn binary_scalar(f: BinaryF, a: &[f32], s: f32, rev: bool, out: &mut [f32]) -> R {
        check(a.len() == out.len())?;
        for (o, &x) in out.iter_mut().zip(a) {
            *o = if rev { bin(f, s, x) } else { bin(f, x, s) };
        }
        Ok(())
    }

    pub fn binary_scalar_inplace(f: BinaryF, a: &mut [f32], s: f32, rev: bool) -> R {
        for x in a.iter_mut() {
            *x = if rev { bin(f, s, *x) } else { bin(f, *x, s) };
        }
        Ok(())
    }

    fn softmax_line(x: &[f32], stride: usize, n: usize, out: &mut [f32], log: bool, base: usize) {
        let mut max = f32::NEG_INFINITY;
        let mut nan = false;
        for j in 0..n {
            let v = x[base + j * stride];
            if v.is_nan() {
                nan = true;
            }
            if v > max {
                max = v;
            }
        }
        if nan {
            max = f32::NAN;
        }
        let mut sum = 0.0f32;
        for j in 0..n {
            let e = (x[base + j * stride] - max).exp();
            sum += e;
            out[base + j * stride] = e;
        }
        for j in 0..n {
            let o = &mut out[base + j * stride];
            if log {
                *o = x[base + j * stride] - max - sum.ln();
            } else {
                *o /= sum;
            }
        }
    }

    pub fn softmax_rows(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> R {
        check(x.len() == m * n && out.len() == m * n)?;
        for i in 0..m {
            softmax_line(x, 1, n, out, false, i * n);
        }
        Ok(())
    }

    pub fn log_softmax_rows(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> R {
        check(x.len() == m * n && out.len() == m * n)?;
        for i in 0..m {
            softmax_line(x, 1, n, out, true, i * n);
        }
        Ok(())
    }

    pub fn softmax_cols(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> R {
        check(x.len() == m * n && out.len() == m * n)?;
        for j in 0..n {
            softmax_line(x, n, m, out, false, j);
        }
        Ok(())
    }

    pub fn log_softmax_cols(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> R {
        check(x.len() == m * n && out.len() == m * n)?;
        for j in 0..n {
            softmax_line(x, n, m, out, true, j);
        }
        Ok(())
    }

    fn fold(
        x: &[f32],
        m: usize,
        n: usize,
        rows: bool,
        out: &mut [f32],
        f: impl Fn(&mut dyn Iterator<Item = f32>) -> f32,
    ) -> R {
        check(x.len() == m * n && out.len() == if rows { m } else { n })?;
        if rows {
            for i in 0..m {
                out[i] = f(&mut x[i * n..(i + 1) * n].iter().copied());
            }
        } else {
            for j in 0..n {
                out[j] = f(&mut (0..m).map(|i| x[i * n + j]));
            }
        }
        Ok(())
    }

    fn sum(it: &mut dyn Iterator<Item = f32>) -> f32 {
        it.fold(0.0, |a, b| a + b)
    }

    fn amax(it: &mut dyn Iterator<Item = f32>) -> f32 {
        it.fold(f32::NEG_INFINITY, |a, b| {
            if a.is_nan() || b.is_nan() {
                f32::NAN
            } else if b > a {
                b
            } else {
                a
            }
        })
    }

    fn amin(it: &mut dyn Iterator<Item = f32>) -> f32 {
        it.fold(f32::INFINITY, |a, b| {
            if a.is_nan() || b.is_nan() {
                f32::NAN
            } else if b < a {
                b
            } else {
                a
            }
        })
    }

    pub fn sum_rows(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> R {
        fold(x, m, n, true, out, sum)
    }
    pub fn mean_rows(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> R {
        fold(x, m, n, true, out, |it| sum(it) / n as f32)
    }
    pub fn amax_rows(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> R {
        fold(x, m, n, true, out, amax)
    }
    pub fn amin_rows(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> R {
        fold(x, m, n, true, out, amin)
    }
    pub fn sum_cols(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> R {
        fold(x, m, n, false, out, sum)
    }
    pub fn mean_cols(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> R {
        fold(x, m, n, false, out, |it| sum(it) / m as f32)
    }
    pub fn amax_cols(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> R {
        fold(x, m, n, false, out, amax)
    }
    pub fn amin_cols(x: &[f32], m: usize, n: usize, out: &mut [f32]) -> R {
        fold(x, m, n, false, out, amin)
    }

    fn arg(it: &mut dyn Iterator<Item = f32>) -> i64 {
        let mut best = f32::NEG_INFINITY;
        let mut idx = 0i64;
        for (i, v) in it.enumerate() {
            if best.is_nan() {
                break;
            }
            if i == 0 || v.is_nan() || v > best {
                best = v;
                idx = i as i64;
            }
        }
        idx
    }

    pub fn argmax_rows(x: &[f32], m: usize, n: usize, out: &mut [i64]) -> R {
        check(x.len() == m * n && out.len() == m)?;
        for i in 0..m {
            out[i] = arg(&mut x[i * n..(i + 1) * n].iter().copied());
        }
        Ok(())
    }

    pub fn argmax_cols(x: &[f32], m: usize, n: usize, out: &mut [i64]) -> R {
        check(x.len() == m * n && out.len() == n)?;
        for j in 0..n {
            out[j] = arg(&mut (0..m).map(|i| x[i * n + j]));
        }
        Ok(())
    }
}

//! Elementwise kernels: unary ops and broadcast binary ops, one pass each.

use super::math::{erf_v, exp_v, gelu_v, log_v, relu_v, sigmoid_v, silu_v, tanh_v};
use super::simd::Simd;
use super::{check_len, checked_len, dispatch, Kernel, KernelError};

/// A unary elementwise op, with torch's float32 semantics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unary {
    /// `torch.relu` (`clamp_min(x, 0)`): `relu(-0) = -0`, `relu(NaN) = NaN`.
    Relu,
    /// `torch.tanh`; see [`super::tanh`] for the error bound.
    Tanh,
    /// `torch.sigmoid`; see [`super::sigmoid`].
    Sigmoid,
    /// `torch.exp`; see [`super::exp`].
    Exp,
    /// `torch.log`; see [`super::log`].
    Log,
    /// `torch.neg` (flips the sign bit, also of zeros and NaN).
    Neg,
    /// `torch.abs` (clears the sign bit: `abs(-0) = +0`).
    Abs,
    /// `torch.sqrt` (correctly rounded; `sqrt(-0) = -0`, negative → NaN).
    Sqrt,
    /// `torch.square` (`x * x`).
    Square,
    /// `torch.erf`; see [`super::erf`].
    Erf,
    /// `F.gelu(x)` (erf form), computed as `0.5x + 0.5x·erf(x/√2)` in one multiply-add like
    /// torch's vectorised kernel: `gelu(-0) = +0`, `gelu(x) = +0` for `x ≲ -5.6`,
    /// `gelu(-inf) = NaN`. Absolute error ≤ 1.5e-7·max(1, |x|) (tests assert it).
    Gelu,
    /// `F.silu(x)` as torch computes it, `x / (1 + e^-x)`: `silu(-inf) = NaN`,
    /// `silu(x) = -0` once `e^-x` overflows. Relative error ≤ 3.0e-7 (tests assert it).
    Silu,
}

impl Unary {
    /// Every op (for tests and tables).
    pub const ALL: [Unary; 12] = [
        Unary::Relu,
        Unary::Tanh,
        Unary::Sigmoid,
        Unary::Exp,
        Unary::Log,
        Unary::Neg,
        Unary::Abs,
        Unary::Sqrt,
        Unary::Square,
        Unary::Erf,
        Unary::Gelu,
        Unary::Silu,
    ];
}

/// Binds `$f` to the per-vector closure of `$op` and evaluates `$body` (so the match on the op
/// sits outside the loops).
macro_rules! with_unary {
    ($s:expr, $op:expr, $f:ident => $body:expr) => {{
        let s = $s;
        match $op {
            Unary::Relu => {
                let $f = |v| relu_v(s, v);
                $body
            }
            Unary::Tanh => {
                let $f = |v| tanh_v(s, v);
                $body
            }
            Unary::Sigmoid => {
                let $f = |v| sigmoid_v(s, v);
                $body
            }
            Unary::Exp => {
                let $f = |v| exp_v(s, v);
                $body
            }
            Unary::Log => {
                let $f = |v| log_v(s, v);
                $body
            }
            Unary::Neg => {
                let $f = |v| s.neg(v);
                $body
            }
            Unary::Abs => {
                let $f = |v| s.abs(v);
                $body
            }
            Unary::Sqrt => {
                let $f = |v| s.sqrt(v);
                $body
            }
            Unary::Square => {
                let $f = |v| s.mul(v, v);
                $body
            }
            Unary::Erf => {
                let $f = |v| erf_v(s, v);
                $body
            }
            Unary::Gelu => {
                let $f = |v| gelu_v(s, v);
                $body
            }
            Unary::Silu => {
                let $f = |v| silu_v(s, v);
                $body
            }
        }
    }};
}

/// `op` applied to one vector (for epilogues, where the match runs once per tile).
#[inline(always)]
pub(crate) fn unary_v<S: Simd>(s: S, op: Unary, v: S::V) -> S::V {
    with_unary!(s, op, f => f(v))
}

/// `dst[i] = f(src[i])`; `src.len() == dst.len()`.
#[inline(always)]
pub(crate) fn map<S: Simd>(s: S, src: &[f32], dst: &mut [f32], f: impl Fn(S::V) -> S::V) {
    let l = S::LANES;
    let mut sc = src.chunks_exact(l);
    let mut dc = dst.chunks_exact_mut(l);
    for (a, d) in (&mut sc).zip(&mut dc) {
        s.store(d, f(s.load(a)));
    }
    let (a, d) = (sc.remainder(), dc.into_remainder());
    if !a.is_empty() {
        s.store_partial(d, f(s.load_partial(a, 0.0)));
    }
}

/// `x[i] = f(x[i])`.
#[inline(always)]
pub(crate) fn map_inplace<S: Simd>(s: S, x: &mut [f32], f: impl Fn(S::V) -> S::V) {
    let mut c = x.chunks_exact_mut(S::LANES);
    for d in &mut c {
        let v = s.load(d);
        s.store(d, f(v));
    }
    let d = c.into_remainder();
    if !d.is_empty() {
        let v = s.load_partial(d, 0.0);
        s.store_partial(d, f(v));
    }
}

/// `dst[i] = op(src[i])`, in one pass. Errors when the lengths differ.
pub fn unary(op: Unary, src: &[f32], dst: &mut [f32]) -> Result<(), KernelError> {
    check_len("dst", dst.len(), src.len())?;
    struct K<'a>(Unary, &'a [f32], &'a mut [f32]);
    impl Kernel for K<'_> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(op, src, dst) = self;
            with_unary!(s, op, f => map(s, src, dst, f))
        }
    }
    dispatch(K(op, src, dst));
    Ok(())
}

/// `x[i] = op(x[i])`, in one pass.
pub fn unary_inplace(op: Unary, x: &mut [f32]) {
    struct K<'a>(Unary, &'a mut [f32]);
    impl Kernel for K<'_> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(op, x) = self;
            with_unary!(s, op, f => map_inplace(s, x, f))
        }
    }
    dispatch(K(op, x));
}

/// A binary elementwise op, with torch's float32 semantics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binary {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b` (IEEE: `x/0 = ±inf`, `0/0 = NaN`).
    Div,
    /// `torch.maximum`: NaN if either operand is NaN; on `±0` ties the second operand, as
    /// torch's vectorised path answers (its scalar tail answers the first).
    Max,
    /// `torch.minimum`: as [`Binary::Max`].
    Min,
}

impl Binary {
    /// Every op (for tests and tables).
    pub const ALL: [Binary; 6] = [
        Binary::Add,
        Binary::Sub,
        Binary::Mul,
        Binary::Div,
        Binary::Max,
        Binary::Min,
    ];
}

macro_rules! with_binary {
    ($s:expr, $op:expr, $f:ident => $body:expr) => {{
        let s = $s;
        match $op {
            Binary::Add => {
                let $f = |a, b| s.add(a, b);
                $body
            }
            Binary::Sub => {
                let $f = |a, b| s.sub(a, b);
                $body
            }
            Binary::Mul => {
                let $f = |a, b| s.mul(a, b);
                $body
            }
            Binary::Div => {
                let $f = |a, b| s.div(a, b);
                $body
            }
            // `max(a, b)` already returns `b` when `b` is NaN; NaN in `a` is put back.
            Binary::Max => {
                let $f = |a, b| s.select(s.is_nan(a), a, s.max(a, b));
                $body
            }
            Binary::Min => {
                let $f = |a, b| s.select(s.is_nan(a), a, s.min(a, b));
                $body
            }
        }
    }};
}

/// One operand of a broadcast binary op on an `m×n` result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operand<'a> {
    /// An `m×n` matrix (`m·n` elements).
    Full(&'a [f32]),
    /// One row of `n` elements repeated for every row (torch shape `[n]` or `[1, n]`, e.g. a
    /// bias).
    Row(&'a [f32]),
    /// One column of `m` elements repeated across every row (torch shape `[m, 1]`).
    Col(&'a [f32]),
    /// A scalar.
    Scalar(f32),
}

impl Operand<'_> {
    fn check(&self, what: &'static str, m: usize, n: usize) -> Result<(), KernelError> {
        match self {
            Operand::Full(a) => check_len(what, a.len(), checked_len(m, n)?),
            Operand::Row(a) => check_len(what, a.len(), n),
            Operand::Col(a) => check_len(what, a.len(), m),
            Operand::Scalar(_) => Ok(()),
        }
    }

    /// Whether the operand is the same for every row once flattened (full or scalar).
    fn flat(&self) -> bool {
        matches!(self, Operand::Full(_) | Operand::Scalar(_))
    }

    /// The operand's part of row `i` of an `n`-wide result.
    #[inline(always)]
    fn row(&self, i: usize, n: usize) -> RowArg<'_> {
        match *self {
            Operand::Full(a) => RowArg::Slice(&a[i * n..(i + 1) * n]),
            Operand::Row(a) => RowArg::Slice(a),
            Operand::Col(a) => RowArg::Splat(a[i]),
            Operand::Scalar(x) => RowArg::Splat(x),
        }
    }
}

#[derive(Clone, Copy)]
enum RowArg<'a> {
    Slice(&'a [f32]),
    Splat(f32),
}

/// `out = f(a, b)` over one row.
#[inline(always)]
fn zip_row<S: Simd>(
    s: S,
    a: RowArg<'_>,
    b: RowArg<'_>,
    out: &mut [f32],
    f: impl Fn(S::V, S::V) -> S::V,
) {
    match (a, b) {
        (RowArg::Slice(a), RowArg::Slice(b)) => {
            let l = S::LANES;
            let (mut ac, mut bc, mut oc) = (
                a.chunks_exact(l),
                b.chunks_exact(l),
                out.chunks_exact_mut(l),
            );
            for ((x, y), o) in (&mut ac).zip(&mut bc).zip(&mut oc) {
                s.store(o, f(s.load(x), s.load(y)));
            }
            let (x, y, o) = (ac.remainder(), bc.remainder(), oc.into_remainder());
            if !o.is_empty() {
                s.store_partial(o, f(s.load_partial(x, 0.0), s.load_partial(y, 0.0)));
            }
        }
        (RowArg::Slice(a), RowArg::Splat(y)) => {
            let y = s.splat(y);
            super::elementwise::map(s, a, out, |x| f(x, y));
        }
        (RowArg::Splat(x), RowArg::Slice(b)) => {
            let x = s.splat(x);
            super::elementwise::map(s, b, out, |y| f(x, y));
        }
        (RowArg::Splat(x), RowArg::Splat(y)) => {
            let v = f(s.splat(x), s.splat(y));
            let mut oc = out.chunks_exact_mut(S::LANES);
            for o in &mut oc {
                s.store(o, v);
            }
            s.store_partial(oc.into_remainder(), v);
        }
    }
}

/// `x = f(x, b)` over one row.
#[inline(always)]
fn zip_row_inplace<S: Simd>(s: S, x: &mut [f32], b: RowArg<'_>, f: impl Fn(S::V, S::V) -> S::V) {
    match b {
        RowArg::Slice(b) => {
            let l = S::LANES;
            let (mut xc, mut bc) = (x.chunks_exact_mut(l), b.chunks_exact(l));
            for (o, y) in (&mut xc).zip(&mut bc) {
                let v = f(s.load(o), s.load(y));
                s.store(o, v);
            }
            let (o, y) = (xc.into_remainder(), bc.remainder());
            if !o.is_empty() {
                let v = f(s.load_partial(o, 0.0), s.load_partial(y, 0.0));
                s.store_partial(o, v);
            }
        }
        RowArg::Splat(y) => {
            let y = s.splat(y);
            map_inplace(s, x, |v| f(v, y));
        }
    }
}

/// `out = lhs op rhs` for an `m×n` result, with either operand broadcast ([`Operand`]), in one
/// pass. Errors when a slice's length does not match its role.
pub fn binary(
    op: Binary,
    m: usize,
    n: usize,
    lhs: Operand<'_>,
    rhs: Operand<'_>,
    out: &mut [f32],
) -> Result<(), KernelError> {
    let len = checked_len(m, n)?;
    lhs.check("lhs", m, n)?;
    rhs.check("rhs", m, n)?;
    check_len("out", out.len(), len)?;
    if len == 0 {
        return Ok(());
    }
    // Operands that do not depend on the row go as one long row.
    let (rows, cols) = if lhs.flat() && rhs.flat() {
        (1, len)
    } else {
        (m, n)
    };
    struct K<'a>(
        Binary,
        usize,
        usize,
        Operand<'a>,
        Operand<'a>,
        &'a mut [f32],
    );
    impl Kernel for K<'_> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(op, rows, cols, lhs, rhs, out) = self;
            with_binary!(s, op, f => {
                for (i, o) in out.chunks_exact_mut(cols).take(rows).enumerate() {
                    zip_row(s, lhs.row(i, cols), rhs.row(i, cols), o, f);
                }
            })
        }
    }
    dispatch(K(op, rows, cols, lhs, rhs, out));
    Ok(())
}

/// `x = x op rhs` for an `m×n` matrix `x` (the output aliases the left operand), in one pass.
pub fn binary_inplace(
    op: Binary,
    m: usize,
    n: usize,
    x: &mut [f32],
    rhs: Operand<'_>,
) -> Result<(), KernelError> {
    let len = checked_len(m, n)?;
    check_len("x", x.len(), len)?;
    rhs.check("rhs", m, n)?;
    if len == 0 {
        return Ok(());
    }
    let (rows, cols) = if rhs.flat() { (1, len) } else { (m, n) };
    struct K<'a>(Binary, usize, usize, &'a mut [f32], Operand<'a>);
    impl Kernel for K<'_> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(op, rows, cols, x, rhs) = self;
            with_binary!(s, op, f => {
                for (i, o) in x.chunks_exact_mut(cols).take(rows).enumerate() {
                    zip_row_inplace(s, o, rhs.row(i, cols), f);
                }
            })
        }
    }
    dispatch(K(op, rows, cols, x, rhs));
    Ok(())
}

//! Elementwise kernels: unary ops and broadcast binary ops, one pass each.

use super::math::{
    elu_exp_minus_one_v, elu_v, erf_v, exp_v, gelu_v, log_v, relu_v, sigmoid_v, silu_v, tanh_v,
    GeluEdges,
};
use super::simd::Simd;
use super::{check_len, checked_len, dispatch, Kernel, KernelError};

/// A unary elementwise op, with torch's float32 semantics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unary {
    /// `torch.relu` (`clamp_min(x, 0)`): `relu(-0) = -0`, `relu(NaN) = NaN`.
    Relu,
    /// TensorFlow's `Relu`: as [`Unary::Relu`] except that every zero result is `+0`
    /// (`relu(-0) = +0`).
    ReluPlusZero,
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
    /// `torch.sqrt`: correctly rounded (torch's own AVX2 kernel is 1 ulp off on some inputs);
    /// `sqrt(-0) = -0`, negative → NaN.
    Sqrt,
    /// `torch.square` (`x * x`).
    Square,
    /// `torch.erf`; see [`super::erf`].
    Erf,
    /// `F.gelu(x)` (erf form), `0.5x + 0.5x·erf(x/√2)` in one multiply-add, with the special
    /// values eager's implementations disagree on (`gelu(-0)`, the zeros of `x ≲ -5.6`,
    /// `gelu(+inf)`) answered as [`GeluEdges`] says; `gelu(-inf) = gelu(NaN) = NaN` always.
    /// `erf(x/√2)` is a short rational function of `x` here for `|x| < 3`, and from `|x| = 3` on
    /// the value comes from `erfc` instead (see `math::gelu_v`), not from [`super::erf`]:
    /// absolute error 1.5e-7·max(1, |x|) with FMA, 1.9e-7·max(1, |x|) portable (bound
    /// 2.5e-7·max(1, |x|); measured over every 16th float in [-10, 10] and the bound test's
    /// sweeps). The error is absolute in the negative tail too, as eager's (whose relative error
    /// there reaches 0.57 near `x = -5.5`); the values stay negative down to eager's last one.
    Gelu(GeluEdges),
    /// `F.silu(x)` as torch computes it, `x / (1 + e^-x)`: `silu(-inf) = NaN`,
    /// `silu(x) = -0` once `e^-x` overflows. Relative error 1.5e-7 (bound 2e-7).
    Silu,
    /// `F.elu(x)` (alpha 1) as torch computes it: `x` for `x ≥ 0`, `expm1(x)` below; see
    /// [`super::elu`].
    Elu,
    /// TensorFlow's `Elu`: `e^x - 1` where `x < 0` (as TensorFlow computes it, `exp(x) - 1`, so
    /// tiny negative inputs give `+0`), else `x` unchanged. Absolute error 6.0e-8 (bound 1.2e-7)
    /// against that formula with a correctly rounded float32 `exp`, on every ISA.
    EluExpMinusOne,
}

impl Unary {
    /// Every op (for tests and tables; GELU with torch's own kernel's edges).
    pub const ALL: [Unary; 15] = [
        Unary::Relu,
        Unary::ReluPlusZero,
        Unary::Tanh,
        Unary::Sigmoid,
        Unary::Exp,
        Unary::Log,
        Unary::Neg,
        Unary::Abs,
        Unary::Sqrt,
        Unary::Square,
        Unary::Erf,
        Unary::Gelu(GeluEdges::PRODUCT_FORM),
        Unary::Silu,
        Unary::Elu,
        Unary::EluExpMinusOne,
    ];

    /// The discriminant of a fieldless op, for [`UnaryOp`] (GELU has its own [`GeluOp`]).
    const fn code(self) -> u8 {
        match self {
            Unary::Relu => 0,
            Unary::Tanh => 1,
            Unary::Sigmoid => 2,
            Unary::Exp => 3,
            Unary::Log => 4,
            Unary::Neg => 5,
            Unary::Abs => 6,
            Unary::Sqrt => 7,
            Unary::Square => 8,
            Unary::Erf => 9,
            Unary::Silu => 10,
            Unary::Gelu(_) => 11,
            Unary::ReluPlusZero => 12,
            Unary::Elu => 13,
            Unary::EluExpMinusOne => 14,
        }
    }
}

/// A function of one vector: a closure stand-in whose `apply` is `#[inline(always)]`. (A closure
/// cannot be marked so; one LLVM leaves outlined is compiled without the ISA's target features,
/// and then every intrinsic in it becomes a call.)
pub(crate) trait VFn1<S: Simd>: Copy {
    fn apply(self, s: S, v: S::V) -> S::V;
}

/// A function of two vectors, as [`VFn1`].
pub(crate) trait VFn2<S: Simd>: Copy {
    fn apply(self, s: S, a: S::V, b: S::V) -> S::V;
}

/// [`Unary`] op `OP` (its discriminant) as a [`VFn1`], so the op is chosen at compile time.
#[derive(Clone, Copy)]
pub(crate) struct UnaryOp<const OP: u8>;

/// [`Unary::Gelu`] with its edges as a [`VFn1`] (the edges are loop invariants).
#[derive(Clone, Copy)]
pub(crate) struct GeluOp(pub GeluEdges);

impl<S: Simd> VFn1<S> for GeluOp {
    #[inline(always)]
    fn apply(self, s: S, v: S::V) -> S::V {
        gelu_v(s, v, self.0)
    }
}

impl<S: Simd, const OP: u8> VFn1<S> for UnaryOp<OP> {
    #[inline(always)]
    fn apply(self, s: S, v: S::V) -> S::V {
        const RELU: u8 = Unary::Relu.code();
        const TANH: u8 = Unary::Tanh.code();
        const SIGMOID: u8 = Unary::Sigmoid.code();
        const EXP: u8 = Unary::Exp.code();
        const LOG: u8 = Unary::Log.code();
        const NEG: u8 = Unary::Neg.code();
        const ABS: u8 = Unary::Abs.code();
        const SQRT: u8 = Unary::Sqrt.code();
        const ERF: u8 = Unary::Erf.code();
        const SILU: u8 = Unary::Silu.code();
        const RELU_PLUS_ZERO: u8 = Unary::ReluPlusZero.code();
        const ELU: u8 = Unary::Elu.code();
        const ELU_EXP_MINUS_ONE: u8 = Unary::EluExpMinusOne.code();
        match OP {
            RELU => relu_v(s, v),
            TANH => tanh_v(s, v),
            SIGMOID => sigmoid_v(s, v),
            EXP => exp_v(s, v),
            LOG => log_v(s, v),
            NEG => s.neg(v),
            ABS => s.abs(v),
            SQRT => s.sqrt(v),
            ERF => erf_v(s, v),
            SILU => silu_v(s, v),
            ELU => elu_v(s, v),
            ELU_EXP_MINUS_ONE => elu_exp_minus_one_v(s, v),
            // `-0 + +0 = +0`; every other result of relu is unchanged by adding zero.
            RELU_PLUS_ZERO => s.add(relu_v(s, v), s.zero()),
            _ => s.mul(v, v), // Square
        }
    }
}

/// Binds `$f` to the [`UnaryOp`] of `$op` and evaluates `$body` (so the match on the op sits
/// outside the loops).
macro_rules! with_unary {
    ($op:expr, $f:ident => $body:expr) => {
        with_unary!(@arms $op, $f, $body;
            Relu ReluPlusZero Tanh Sigmoid Exp Log Neg Abs Sqrt Square Erf Silu Elu EluExpMinusOne)
    };
    (@arms $op:expr, $f:ident, $body:expr; $($v:ident)*) => {
        match $op {
            $(Unary::$v => {
                let $f = UnaryOp::<{ Unary::$v.code() }>;
                $body
            })*
            Unary::Gelu(edges) => {
                let $f = GeluOp(edges);
                $body
            }
        }
    };
}

/// What [`with_unary`] binds, usable on every flavour (a [`VFn1`] for each `S`), so that a
/// [`Kernel`] can carry it into a frame of its own.
pub(crate) trait AnyUnary: Copy {
    fn on<S: Simd>(self, s: S, v: S::V) -> S::V;
}

impl<const OP: u8> AnyUnary for UnaryOp<OP> {
    #[inline(always)]
    fn on<S: Simd>(self, s: S, v: S::V) -> S::V {
        VFn1::<S>::apply(self, s, v)
    }
}

impl AnyUnary for GeluOp {
    #[inline(always)]
    fn on<S: Simd>(self, s: S, v: S::V) -> S::V {
        VFn1::<S>::apply(self, s, v)
    }
}

/// An [`AnyUnary`] as the [`VFn1`] of one flavour.
#[derive(Clone, Copy)]
struct On<F>(F);

impl<S: Simd, F: AnyUnary> VFn1<S> for On<F> {
    #[inline(always)]
    fn apply(self, s: S, v: S::V) -> S::V {
        self.0.on(s, v)
    }
}

/// `dst[i] = op(src[i])` (`src.len() == dst.len()`), each op's loop in a frame of its own (see
/// [`Kernel`]: one frame holding every op's inlined math is hundreds of KiB unoptimised).
#[inline(always)]
pub(crate) fn map_op<S: Simd>(s: S, op: Unary, src: &[f32], dst: &mut [f32]) {
    struct K<'a, F>(F, &'a [f32], &'a mut [f32]);
    impl<F: AnyUnary> Kernel for K<'_, F> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(f, src, dst) = self;
            map(s, src, dst, On(f));
        }
    }
    with_unary!(op, f => s.call(K(f, src, dst)))
}

/// `x[i] = op(x[i])`, as [`map_op`].
#[inline(always)]
pub(crate) fn map_op_inplace<S: Simd>(s: S, op: Unary, x: &mut [f32]) {
    struct K<'a, F>(F, &'a mut [f32]);
    impl<F: AnyUnary> Kernel for K<'_, F> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(f, x) = self;
            map_inplace(s, x, On(f));
        }
    }
    with_unary!(op, f => s.call(K(f, x)))
}

/// `x[r·ld + c] = op(x[r·ld + c])` for `r < rows`, `j0 ≤ c < j0 + cols`: an activation over a
/// strip of columns of a row-major matrix (a product's epilogue), in one frame for the whole
/// strip. One frame per row cost about 20 ns a row in calls and loop-invariant set-up, more than
/// the math itself on a 32-column strip.
#[inline(always)]
pub(crate) fn map_op_strip<S: Simd>(
    s: S,
    op: Unary,
    x: &mut [f32],
    rows: usize,
    ld: usize,
    j0: usize,
    cols: usize,
) {
    struct K<'a, F>(F, &'a mut [f32], usize, usize, usize, usize);
    impl<F: AnyUnary> Kernel for K<'_, F> {
        type Out = ();
        #[inline(always)]
        fn run<S: Simd>(self, s: S) {
            let K(f, x, rows, ld, j0, cols) = self;
            if ld == 0 {
                return;
            }
            if j0 == 0 && cols == ld {
                // Whole rows: one contiguous run. Row by row, a narrow row's masked store
                // shares a vector's span with the next row's masked load, which then waits
                // for it (measured: 20 ns a row for 5 columns).
                let len = rows.saturating_mul(ld).min(x.len());
                map_inplace(s, &mut x[..len], On(f));
                return;
            }
            for row in x.chunks_mut(ld).take(rows) {
                if let Some(strip) = row.get_mut(j0..j0 + cols) {
                    map_inplace(s, strip, On(f));
                }
            }
        }
    }
    with_unary!(op, f => s.call(K(f, x, rows, ld, j0, cols)))
}

/// `x ↦ f(x, v)`.
#[derive(Clone, Copy)]
pub(crate) struct WithRhs<F, V>(pub F, pub V);

impl<S: Simd, F: VFn2<S>> VFn1<S> for WithRhs<F, S::V> {
    #[inline(always)]
    fn apply(self, s: S, x: S::V) -> S::V {
        self.0.apply(s, x, self.1)
    }
}

/// `x ↦ f(v, x)`.
#[derive(Clone, Copy)]
pub(crate) struct WithLhs<F, V>(pub F, pub V);

impl<S: Simd, F: VFn2<S>> VFn1<S> for WithLhs<F, S::V> {
    #[inline(always)]
    fn apply(self, s: S, x: S::V) -> S::V {
        self.0.apply(s, self.1, x)
    }
}

/// `dst[i] = f(src[i])`; `src.len() == dst.len()`.
#[inline(always)]
pub(crate) fn map<S: Simd>(s: S, src: &[f32], dst: &mut [f32], f: impl VFn1<S>) {
    let l = S::LANES;
    // Two vectors per step: their long dependency chains (a polynomial) interleave.
    let mut sc2 = src.chunks_exact(2 * l);
    let mut dc2 = dst.chunks_exact_mut(2 * l);
    for (a, d) in (&mut sc2).zip(&mut dc2) {
        // One `apply` in the source (an unoptimised frame holds one copy of the math); the
        // optimiser unrolls the pair.
        let mut y = [s.zero(); 2];
        for (k, y) in y.iter_mut().enumerate() {
            *y = f.apply(s, s.load(&a[k * l..]));
        }
        for (k, &y) in y.iter().enumerate() {
            s.store(&mut d[k * l..], y);
        }
    }
    // The last vector and the partial one share one copy of the math too.
    for (a, d) in sc2
        .remainder()
        .chunks(l)
        .zip(dc2.into_remainder().chunks_mut(l))
    {
        s.store_partial(d, f.apply(s, s.load_partial(a, 0.0)));
    }
}

/// `x[i] = f(x[i])`.
#[inline(always)]
pub(crate) fn map_inplace<S: Simd>(s: S, x: &mut [f32], f: impl VFn1<S>) {
    let l = S::LANES;
    // Two vectors per step, as in `map`; the loads through `opaque`, so that an op ending in a
    // `select` of its input is stored whole (see [`Simd::opaque`]).
    let mut c2 = x.chunks_exact_mut(2 * l);
    for d in &mut c2 {
        let mut y = [s.zero(); 2];
        for (k, y) in y.iter_mut().enumerate() {
            *y = f.apply(s, s.opaque(s.load(&d[k * l..])));
        }
        for (k, &y) in y.iter().enumerate() {
            s.store(&mut d[k * l..], y);
        }
    }
    for d in c2.into_remainder().chunks_mut(l) {
        let v = s.load_partial(d, 0.0);
        s.store_partial(d, f.apply(s, v));
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
            map_op(s, op, src, dst);
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
            map_op_inplace(s, op, x);
        }
    }
    dispatch(K(op, x));
}

/// A binary elementwise op, with torch's float32 semantics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
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

/// [`Binary`] op `OP` (its discriminant) as a [`VFn2`].
#[derive(Clone, Copy)]
pub(crate) struct BinaryOp<const OP: u8>;

/// `a + b`.
pub(crate) const OP_ADD: BinaryOp<{ Binary::Add as u8 }> = BinaryOp;
/// `a - b`.
pub(crate) const OP_SUB: BinaryOp<{ Binary::Sub as u8 }> = BinaryOp;
/// `a * b`.
pub(crate) const OP_MUL: BinaryOp<{ Binary::Mul as u8 }> = BinaryOp;
/// `a / b`.
pub(crate) const OP_DIV: BinaryOp<{ Binary::Div as u8 }> = BinaryOp;
/// NaN-propagating maximum.
pub(crate) const OP_MAX: BinaryOp<{ Binary::Max as u8 }> = BinaryOp;
/// NaN-propagating minimum.
pub(crate) const OP_MIN: BinaryOp<{ Binary::Min as u8 }> = BinaryOp;

impl<S: Simd, const OP: u8> VFn2<S> for BinaryOp<OP> {
    #[inline(always)]
    fn apply(self, s: S, a: S::V, b: S::V) -> S::V {
        const ADD: u8 = Binary::Add as u8;
        const SUB: u8 = Binary::Sub as u8;
        const MUL: u8 = Binary::Mul as u8;
        const DIV: u8 = Binary::Div as u8;
        const MAX: u8 = Binary::Max as u8;
        match OP {
            ADD => s.add(a, b),
            SUB => s.sub(a, b),
            MUL => s.mul(a, b),
            DIV => s.div(a, b),
            // `max(a, b)` already returns `b` when `b` is NaN; NaN in `a` is put back.
            MAX => s.select(s.is_nan(a), a, s.max(a, b)),
            _ => s.select(s.is_nan(a), a, s.min(a, b)), // Min
        }
    }
}

macro_rules! with_binary {
    ($op:expr, $f:ident => $body:expr) => {
        with_binary!(@arms $op, $f, $body; Add Sub Mul Div Max Min)
    };
    (@arms $op:expr, $f:ident, $body:expr; $($v:ident)*) => {
        match $op {
            $(Binary::$v => {
                let $f = BinaryOp::<{ Binary::$v as u8 }>;
                $body
            })*
        }
    };
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
fn zip_row<S: Simd>(s: S, a: RowArg<'_>, b: RowArg<'_>, out: &mut [f32], f: impl VFn2<S>) {
    match (a, b) {
        (RowArg::Slice(a), RowArg::Slice(b)) => {
            let l = S::LANES;
            let (mut ac, mut bc, mut oc) = (
                a.chunks_exact(l),
                b.chunks_exact(l),
                out.chunks_exact_mut(l),
            );
            for ((x, y), o) in (&mut ac).zip(&mut bc).zip(&mut oc) {
                s.store(o, f.apply(s, s.load(x), s.load(y)));
            }
            let (x, y, o) = (ac.remainder(), bc.remainder(), oc.into_remainder());
            if !o.is_empty() {
                s.store_partial(
                    o,
                    f.apply(s, s.load_partial(x, 0.0), s.load_partial(y, 0.0)),
                );
            }
        }
        (RowArg::Slice(a), RowArg::Splat(y)) => {
            map(s, a, out, WithRhs(f, s.splat(y)));
        }
        (RowArg::Splat(x), RowArg::Slice(b)) => {
            map(s, b, out, WithLhs(f, s.splat(x)));
        }
        (RowArg::Splat(x), RowArg::Splat(y)) => {
            let v = f.apply(s, s.splat(x), s.splat(y));
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
fn zip_row_inplace<S: Simd>(s: S, x: &mut [f32], b: RowArg<'_>, f: impl VFn2<S>) {
    match b {
        RowArg::Slice(b) => {
            let l = S::LANES;
            let (mut xc, mut bc) = (x.chunks_exact_mut(l), b.chunks_exact(l));
            for (o, y) in (&mut xc).zip(&mut bc) {
                // `opaque`: stored whole, as in `map_inplace`.
                let v = f.apply(s, s.opaque(s.load(o)), s.load(y));
                s.store(o, v);
            }
            let (o, y) = (xc.into_remainder(), bc.remainder());
            if !o.is_empty() {
                let v = f.apply(s, s.load_partial(o, 0.0), s.load_partial(y, 0.0));
                s.store_partial(o, v);
            }
        }
        RowArg::Splat(y) => {
            map_inplace(s, x, WithRhs(f, s.splat(y)));
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
            with_binary!(op, f => {
                // The common broadcast (a matrix and a row, as `x - mean`) walks rows without
                // re-deciding the operands' kinds or re-checking bounds per row.
                if let (Operand::Full(a), Operand::Row(b)) = (lhs, rhs) {
                    for (x, o) in a.chunks_exact(cols).zip(out.chunks_exact_mut(cols)).take(rows) {
                        zip_row(s, RowArg::Slice(x), RowArg::Slice(b), o, f);
                    }
                } else {
                    for (i, o) in out.chunks_exact_mut(cols).take(rows).enumerate() {
                        zip_row(s, lhs.row(i, cols), rhs.row(i, cols), o, f);
                    }
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
            with_binary!(op, f => {
                if let Operand::Row(b) = rhs {
                    for o in x.chunks_exact_mut(cols).take(rows) {
                        zip_row_inplace(s, o, RowArg::Slice(b), f);
                    }
                } else {
                    for (i, o) in x.chunks_exact_mut(cols).take(rows).enumerate() {
                        zip_row_inplace(s, o, rhs.row(i, cols), f);
                    }
                }
            })
        }
    }
    dispatch(K(op, rows, cols, x, rhs));
    Ok(())
}

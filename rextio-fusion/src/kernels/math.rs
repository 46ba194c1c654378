//! Vectorised transcendental functions (one algorithm for every lane and every flavour, so an
//! element's result does not depend on its position or on the length of the slice).
//!
//! Error bounds: the figures on each function are the maxima measured against an f64 reference
//! over every 16th float of the function's domain (`math_errors_over_all_floats`, an ignored
//! test), on AVX2+FMA and on the portable flavour (no FMA); the normal test suite asserts the
//! stated bounds over a dense sweep on every ISA present. AVX-512 runs the same fused
//! operations lane by lane as AVX2, so its elementwise results are the same bits (every unary
//! op over every 64th float of [-120, 120], both signs, and the special values, on a Zen 5
//! host: no difference). Every
//! function also stayed within `rtol 1e-5, atol 1e-6` of torch 2.13's float32 results (and
//! matched its NaN, infinities and signed zeros) on 2.4 million inputs per op.

// The coefficients are written as published/fitted (more digits than f32 holds); each literal
// rounds to the f32 the error measurements were made with.
#![allow(clippy::excessive_precision)]

use super::elementwise::{unary, Unary};
use super::simd::Simd;
use super::KernelError;

/// `e^x`, elementwise (`dst[i] = exp(src[i])`); `src` and `dst` have the same length.
///
/// Cody–Waite reduction `x = n ln2 + r`, `|r| ≤ ln2/2`, Cephes' degree-5 polynomial for
/// `(e^r - 1 - r)/r²`, and a two-step scale by `2^n` so that results in the subnormal range are
/// rounded once, as torch's (Sleef) are.
///
/// Maximum error: relative 8.3e-8 (bound 1.0e-7, under 1 ulp) for normal results; 0.75 of the
/// smallest subnormal (bound 1) for subnormal ones. Edges as torch:
/// `exp(±0) = 1`, `exp(-inf) = 0`, `exp(+inf) = +inf`, NaN → NaN, overflow to `+inf` above
/// `ln(f32::MAX) ≈ 88.7228`, gradual underflow to subnormals and then `0` below `≈ -103.97`.
pub fn exp(src: &[f32], dst: &mut [f32]) -> Result<(), KernelError> {
    unary(Unary::Exp, src, dst)
}

/// Natural logarithm, elementwise.
///
/// Exponent/mantissa split with the mantissa in `[√½, √2)` and Cephes' degree-8 polynomial for
/// `log(1 + f)`; subnormal inputs are scaled by `2^23` first.
///
/// Maximum error: absolute 4.6e-8 (bound 6e-8) where `|log x| < 1`, relative 8.0e-8 (bound
/// 1.0e-7) elsewhere, subnormal inputs included. Edges as torch: `log(±0) = -inf`,
/// `log(x < 0) = NaN`, `log(+inf) = +inf`, NaN → NaN.
pub fn log(src: &[f32], dst: &mut [f32]) -> Result<(), KernelError> {
    unary(Unary::Log, src, dst)
}

/// Hyperbolic tangent, elementwise.
///
/// An odd rational `x·P(x²)/Q(x²)` of degrees 3/3 in `x²` for `|x| < 4`; from there on `1 -
/// 2w/(1 + w)` with `w = e^(-2|x|)` from a short `2^f` polynomial (no division), computed only
/// for vectors holding such a lane, with `|x|` clamped to 9.1: from 9.0109 on (where tanh
/// rounds to ±1 in f32) the result is exactly ±1, as eager's; `tanh(x) = x` for `|x| < 0.0004`.
///
/// Maximum error, absolute and relative (for `|x| ≥ 2^-10`), both the common form's: 2.6e-7
/// with FMA (AVX2, AVX-512) and 3.1e-7 portable over every 16th float of [-10, 10] (bound 4e-7);
/// for `|x| ≥ 4` within 3.1e-8 (half an ulp below 1 is 3.0e-8; bound 6e-8). The result never
/// exceeds 1 in magnitude.
/// (libm's `tanhf` is about 30x slower.) Edges as torch: `tanh(±0) = ±0`, `tanh(±inf) = ±1`, NaN → NaN.
pub fn tanh(src: &[f32], dst: &mut [f32]) -> Result<(), KernelError> {
    unary(Unary::Tanh, src, dst)
}

/// Logistic sigmoid `1 / (1 + e^-x)`, elementwise, computed with that formula as torch does.
///
/// Maximum error: absolute 8.9e-8 (bound 1e-7); relative 1.5e-7 (bound 1.6e-7) where the
/// result is normal and `x > -88`. Edges as torch: `sigmoid(+inf) = 1`, `sigmoid(-inf) = 0`,
/// `sigmoid(x) = 0` once `e^-x` overflows (`x < -88.72`), NaN → NaN.
pub fn sigmoid(src: &[f32], dst: &mut [f32]) -> Result<(), KernelError> {
    unary(Unary::Sigmoid, src, dst)
}

/// torch's ELU with alpha 1 (`F.elu`), elementwise: `x` for `x ≥ 0`, `e^x - 1` below, computed
/// without cancellation near zero.
///
/// Maximum error: relative 1.41e-7 portable, 1.36e-7 with FMA (bound 2e-7) where the result
/// is normal, largest just below `-ln2/2` where `e^x - 1` takes over. Edges as torch:
/// `elu(±0) = ±0`, `elu(-inf) = -1`, `elu(+inf) = +inf`, NaN → NaN, negative denormals pass.
pub fn elu(src: &[f32], dst: &mut [f32]) -> Result<(), KernelError> {
    unary(Unary::Elu, src, dst)
}

/// Error function, elementwise.
///
/// `x·P(x²)` (degree 6 in `x²`, a minimax fit) for `|x| < 1`; `1 - e^(-x²)·R(|x| - 2.5)`
/// (degree 8, fitted so `erfc` is accurate in absolute terms) for `1 ≤ |x| ≤ 4`, with `|x|`
/// clamped to 4 (where erf rounds to ±1).
///
/// Maximum error: absolute 1.35e-7 with FMA and 1.51e-7 portable (bound 1.6e-7); relative
/// 1.8e-7 (bound 2e-7) for `1e-30 ≤ |x| < 1`. Edges as torch: `erf(±0) = ±0`,
/// `erf(±inf) = ±1`, NaN → NaN.
pub fn erf(src: &[f32], dst: &mut [f32]) -> Result<(), KernelError> {
    unary(Unary::Erf, src, dst)
}

// ---------------------------------------------------------------------------------------------
// Vector bodies.

/// `min(max(x, lo), hi)` with NaN passing through.
#[inline(always)]
fn clamp<S: Simd>(s: S, x: S::V, lo: f32, hi: f32) -> S::V {
    // `min(a, b)` / `max(a, b)` return `b` on NaN, so NaN in `x` survives both.
    s.max(s.splat(lo), s.min(s.splat(hi), x))
}

/// Horner evaluation of `c[0]·x^(n-1) + … + c[n-1]`.
#[inline(always)]
fn horner<S: Simd, const N: usize>(s: S, x: S::V, c: [f32; N]) -> S::V {
    let mut y = s.splat(c[0]);
    for &ci in &c[1..] {
        y = s.mul_add(y, x, s.splat(ci));
    }
    y
}

const MAGIC_ROUND: f32 = 12_582_912.0; // 1.5 * 2^23: adding it rounds to an integer.

/// `z` rounded to the nearest integer (`|z| < 2^22`), as a float and as lane integers.
#[inline(always)]
fn round_split<S: Simd>(s: S, z: S::V) -> (S::V, S::I) {
    let t = s.add(z, s.splat(MAGIC_ROUND));
    let n = s.sub(t, s.splat(MAGIC_ROUND));
    (n, s.isub(s.to_bits(t), s.to_bits(s.splat(MAGIC_ROUND))))
}

/// `2^n` for lane integers `n` where it is a normal float (`-126 ≤ n ≤ 127`).
#[inline(always)]
fn pow2_normal<S: Simd>(s: S, n: S::I) -> S::V {
    s.bitcast_f32(s.shl23(s.iadd(n, s.isplat(127))))
}

/// Cephes' degree-5 polynomial for `(e^r - 1 - r)/r²` on `|r| ≤ ln2/2` ([`exp_v`], [`expm1_v`]).
const EXP_POLY: [f32; 6] = [
    1.987_569_15e-4,
    1.398_199_950_7e-3,
    8.333_451_907_3e-3,
    4.166_579_589_4e-2,
    1.666_666_545_9e-1,
    5.000_000_120_1e-1,
];

/// `e^x = 2^n · e^r` split for [`exp_v`] and [`exp_normal_v`]: `n = round(x / ln 2)` (as lane
/// integers) and `e^r` for the remainder `|r| ≤ ln2/2`, by Cephes' polynomial.
#[inline(always)]
fn exp_parts<S: Simd>(s: S, x: S::V) -> (S::V, S::I) {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // Cephes' split of ln 2: `n·C1` is exact for |n| < 2^15.
    const C1: f32 = 0.693_359_375;
    const C2: f32 = -2.121_944_4e-4;
    let (n, ni) = round_split(s, s.mul(x, s.splat(LOG2E)));
    let r = s.mul_add(n, s.splat(-C1), x);
    let r = s.mul_add(n, s.splat(-C2), r);
    let z = s.mul(r, r);
    let p = horner(s, r, EXP_POLY);
    (s.add(s.mul_add(p, z, r), s.splat(1.0)), ni)
}

/// `e^x` per lane.
#[inline(always)]
pub(crate) fn exp_v<S: Simd>(s: S, x: S::V) -> S::V {
    // Beyond these the result is +inf / 0 anyway; clamping keeps `n` in [-150, 128].
    let (p, ni) = exp_parts(s, clamp(s, x, -104.0, 89.0));
    // 2^n = 2^n1 · 2^n2 with both halves normal, so subnormal results round once.
    let n1 = s.sra1(ni);
    let n2 = s.isub(ni, n1);
    let (s1, s2) = (pow2_normal(s, n1), pow2_normal(s, n2));
    s.mul(s.mul(p, s1), s2)
}

/// `e^x` per lane for `x` in [-87, 88] (or NaN), where `2^n` is a normal float: [`exp_v`]
/// without its clamp and with `2^n` applied in one step, which rounds where [`exp_v`]'s second
/// step does (only for a subnormal result), so the bits are [`exp_v`]'s.
#[inline(always)]
pub(crate) fn exp_normal_v<S: Simd>(s: S, x: S::V) -> S::V {
    let (p, ni) = exp_parts(s, x);
    s.mul(p, pow2_normal(s, ni))
}

/// `ln x` per lane.
#[inline(always)]
pub(crate) fn log_v<S: Simd>(s: S, x: S::V) -> S::V {
    const SQRTHF: f32 = std::f32::consts::FRAC_1_SQRT_2;
    let tiny = s.lt(x, s.splat(f32::MIN_POSITIVE));
    let xs = s.select(tiny, s.mul(x, s.splat(8_388_608.0)), x);
    let bits = s.to_bits(xs);
    let e = s.isub(
        s.iand(s.shr23(bits), s.isplat(0xff)),
        s.iselect(tiny, s.isplat(126 + 23), s.isplat(126)),
    );
    let m = s.bitcast_f32(s.ior(s.iand(bits, s.isplat(0x007f_ffff)), s.isplat(0x3f00_0000)));
    let one = s.splat(1.0);
    let small = s.lt(m, s.splat(SQRTHF));
    let ef = s.sub(s.i2f(e), s.select(small, one, s.zero()));
    let f = s.sub(s.select(small, s.add(m, m), m), one);
    let z = s.mul(f, f);
    let p = horner(
        s,
        f,
        [
            7.037_683_629_2e-2,
            -1.151_461_031_0e-1,
            1.167_699_874_0e-1,
            -1.242_014_084_6e-1,
            1.424_932_278_7e-1,
            -1.666_805_766_5e-1,
            2.000_071_476_5e-1,
            -2.499_999_399_3e-1,
            3.333_333_117_4e-1,
        ],
    );
    let y = s.mul(s.mul(p, f), z);
    let y = s.mul_add(ef, s.splat(-2.121_944_4e-4), y);
    let y = s.mul_add(z, s.splat(-0.5), y);
    let r = s.mul_add(ef, s.splat(0.693_359_375), s.add(f, y));
    // Edges: log(±0) = -inf, log(+inf) = +inf, log(<0) = NaN, NaN stays.
    let r = s.select(s.eq(x, s.zero()), s.splat(f32::NEG_INFINITY), r);
    let r = s.select(s.eq(x, s.splat(f32::INFINITY)), x, r);
    let r = s.select(s.lt(x, s.zero()), s.splat(f32::NAN), r);
    s.select(s.is_nan(x), x, r)
}

/// `tanh x = x·P(x²)/Q(x²)` on `|x| < TANH_NEAR` (the common form of [`tanh_v`]): a minimax fit
/// of the relative error (7e-9 in exact arithmetic, 2.3e-7 in f32; highest degree first, `P(0)
/// = Q(0) = 1`, every coefficient positive).
const TANH_NEAR_P: [f32; 4] = [5.810_798e-6, 2.603_396_8e-3, 1.264_06e-1, 1.0];
const TANH_NEAR_Q: [f32; 4] = [1.808_938_8e-4, 2.251_665_7e-2, 4.597_392_4e-1, 1.0];

/// Below this `|x|`, [`tanh_v`] takes its short rational; from it on, the one for every `x`.
const TANH_NEAR: f32 = 4.0;

/// `tanh x` per lane. Arguments of ordinary size (`|x| < 4`) take a rational of degrees 3 and 3
/// in `x²` (six multiply-adds, no clamps); a vector holding a larger `|x|` also computes the
/// wide form from `e^(-2|x|)` ([`tanh_wide_v`]) and takes it for those lanes only, so each
/// lane's result is its own. Measured in one process on an AVX2 host
/// (Zen 3), tanh over 6144 values of [-2.5, 2.5]: 2.9 -> 1.7-1.8 µs.
#[inline(always)]
pub(crate) fn tanh_v<S: Simd>(s: S, x: S::V) -> S::V {
    let x2 = s.mul(x, x);
    // `Q ≥ 1`; `|r| < 1` on the range, and NaN passes through.
    let r = s.div(
        s.mul(x, horner(s, x2, TANH_NEAR_P)),
        horner(s, x2, TANH_NEAR_Q),
    );
    let t = s.abs(x);
    // NaN compares false: it keeps the common form, which keeps it NaN.
    let wide = s.ge(t, s.splat(TANH_NEAR));
    let r = if s.bitmask(wide) == 0 {
        r
    } else {
        s.select(wide, tanh_wide_v(s, x), r)
    };
    // Tiny arguments: tanh x = x to within half an ulp (also keeps subnormals exact).
    s.select(s.lt(t, s.splat(4e-4)), x, r)
}

/// From this `|x|` on `tanh x` rounds to ±1 in f32 (`1 - tanh x < 2^-25` from 9.0109 on): the
/// wide form clamps `|x|` here, so its exponent stays in range and every larger `x`
/// (infinities included) comes out exactly ±1, as eager's.
const TANH_ONE: f32 = 9.1;

/// `2^f` for `|f| ≤ 1/2`: a minimax fit of the relative error (2.6e-6, highest degree first),
/// all [`tanh_wide_v`] needs of `e^(-2|x|)`, whose error it scales by less than 7e-4.
const TANH_EXP2_P: [f32; 5] = [
    9.570_099_4e-3,
    5.591_786_3e-2,
    2.402_474_4e-1,
    6.931_218e-1,
    9.999_993e-1,
];

/// `tanh x` for `|x| ≥ TANH_NEAR` (any `x` gives a finite result of its sign; NaN stays):
/// `1 - 2w/(1 + w)` with `w = e^(-2|x|)` and `x`'s sign, as `1 + 2w(w - 1)` (the terms
/// dropped are below `2w³ < 8e-11`, as `w < 3.4e-4`). `w`'s error (2.6e-6 relative, see
/// [`TANH_EXP2_P`]) moves the result by less than 2e-9, and the last multiply-add rounds once:
/// within 3e-8 of `tanh x` (half an ulp below 1), no division. Eigen's rational, used before,
/// was 2.6e-7 off and gave 1 - 3e-7 from its clamp at 7.905 on, where eager gives ±1.
#[inline(always)]
fn tanh_wide_v<S: Simd>(s: S, x: S::V) -> S::V {
    let one = s.splat(1.0);
    // `min` keeps a NaN `x` (see [`clamp`]).
    let t = s.min(s.splat(TANH_ONE), s.abs(x));
    // `w = 2^z` for `z = -2t·log2(e)` in [-26.3, -11.5]: `2^n · 2^f` for `n = round(z)`, a
    // normal float.
    let z = s.mul(t, s.splat(-2.0 * std::f32::consts::LOG2_E));
    let (n, ni) = round_split(s, z);
    let w = s.mul(horner(s, s.sub(z, n), TANH_EXP2_P), pow2_normal(s, ni));
    // Below 1 and positive: the sign is `x`'s alone.
    with_sign_of(s, s.mul_add(s.add(w, w), s.sub(w, one), one), x)
}

/// `1 / (1 + e^-x)` per lane.
#[inline(always)]
pub(crate) fn sigmoid_v<S: Simd>(s: S, x: S::V) -> S::V {
    let one = s.splat(1.0);
    s.div(one, s.add(one, exp_v(s, s.neg(x))))
}

/// `e^x - 1` per lane without cancellation near 0: for `|x| < ln2/2` it is [`exp_v`]'s
/// `r + r²·P(r)` with `r = x` (no `+ 1` to take away again), elsewhere `e^x - 1`. `expm1(-0)` is
/// `+0` here; callers that need the sign of zero keep `x` for zeros.
#[inline(always)]
pub(crate) fn expm1_v<S: Simd>(s: S, x: S::V) -> S::V {
    let near = s.mul_add(horner(s, x, EXP_POLY), s.mul(x, x), x);
    let far = s.sub(exp_v(s, x), s.splat(1.0));
    s.select(s.lt(s.abs(x), s.splat(0.346_573_6)), near, far)
}

/// torch's ELU (alpha 1): `x` for `x ≥ 0` (so `elu(-0) = -0`), `expm1(x)` below, NaN → NaN.
#[inline(always)]
pub(crate) fn elu_v<S: Simd>(s: S, x: S::V) -> S::V {
    s.select(s.ge(x, s.zero()), x, expm1_v(s, x))
}

/// TensorFlow's ELU: `e^x - 1` where `x < 0`, else `x` itself (TensorFlow computes `exp(x) - 1`,
/// so `elu(-1e-8) = +0`; under flushed denormals a denormal `x` is not below zero and comes back
/// as it came).
#[inline(always)]
pub(crate) fn elu_exp_minus_one_v<S: Simd>(s: S, x: S::V) -> S::V {
    s.select(s.lt(x, s.zero()), s.sub(exp_v(s, x), s.splat(1.0)), x)
}

/// `x / (1 + e^-x)` per lane (torch's SiLU formula: `-inf → NaN`, large negative → `-0`).
#[inline(always)]
pub(crate) fn silu_v<S: Simd>(s: S, x: S::V) -> S::V {
    s.div(x, s.add(s.splat(1.0), exp_v(s, s.neg(x))))
}

/// `erf x` per lane.
#[inline(always)]
pub(crate) fn erf_v<S: Simd>(s: S, x: S::V) -> S::V {
    let one = s.splat(1.0);
    let ax = s.abs(x);
    // |x| < 1: x·P(x²).
    let x2 = s.mul(x, x);
    let pa = horner(
        s,
        x2,
        [
            7.853_861_259_694_839e-5,
            -8.010_193_849_912_611e-4,
            5.188_327_746_678_531e-3,
            -2.685_381_199_237_058e-2,
            1.128_358_515_090_988_9e-1,
            -3.761_262_582_460_517e-1,
            1.128_379_165_726_877_1,
        ],
    );
    let small = s.mul(x, pa);
    if s.bitmask(s.ge(ax, one)) == 0 {
        return small;
    }
    // 1 <= |x|: 1 - e^(-x²)·R(|x| - 2.5), |x| clamped to 4 (NaN passes the clamp).
    let a = s.min(s.splat(4.0), ax);
    let r = horner(
        s,
        s.sub(a, s.splat(2.5)),
        [
            1.068_439_207_368_016e-4,
            2.250_665_149_094_721_6e-4,
            5.433_269_510_519_423e-4,
            -6.611_158_838_012_617e-4,
            2.302_501_768_580_356e-3,
            -8.132_255_136_089_435e-3,
            2.491_462_434_916_197e-2,
            -7.434_218_683_177_361e-2,
            2.108_076_055_650_947e-1,
        ],
    );
    // `-a²` lies in [-16, -1] (or is NaN), so `e^-a²` is normal.
    let erfc = s.mul(exp_normal_v(s, s.neg(s.mul(a, a))), r);
    let big = s.sub(one, erfc);
    let big = s.select(s.lt(x, s.zero()), s.neg(big), big);
    s.select(s.lt(ax, one), small, big)
}

/// How GELU answers the inputs on which eager PyTorch's implementations disagree. Every other
/// input (and `gelu(-inf) = gelu(NaN) = NaN`) has one answer everywhere.
///
/// Measured on float32 CPU tensors: torch's own kernel evaluates `x·0.5·(1 + erf(x/√2))` and
/// answers [`GeluEdges::PRODUCT_FORM`]; oneDNN (which eager calls for contiguous tensors of
/// more than one element) answers [`GeluEdges::SUM_FORM`] with its AVX2 and SSE4.1 code and
/// `-0`, `-0`, NaN with its AVX-512 code. The runtime finds out which applies on its host (see
/// rextio-torch's `runtime::eager_host`); the kernels take it as data, so every instruction set
/// answers the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GeluEdges {
    /// `gelu(-0)` is `-0` (else `+0`).
    pub neg_zero_keeps_sign: bool,
    /// A negative `x` whose result rounds to zero (`x ≲ -5.6`) gives `-0` (else `+0`).
    pub underflow_is_negative: bool,
    /// `gelu(+inf)` is NaN (else `+inf`).
    pub pos_inf_is_nan: bool,
}

impl GeluEdges {
    /// `x·0.5·(1 + erf(x/√2))`: `-0`, `-0`, `+inf`.
    pub const PRODUCT_FORM: GeluEdges = GeluEdges {
        neg_zero_keeps_sign: true,
        underflow_is_negative: true,
        pos_inf_is_nan: false,
    };
    /// `0.5x + 0.5x·erf(x/√2)`: `+0`, `+0`, `+inf`.
    pub const SUM_FORM: GeluEdges = GeluEdges {
        neg_zero_keeps_sign: false,
        underflow_is_negative: false,
        pos_inf_is_nan: false,
    };
}

/// `v` with `x`'s sign bit added (`copysign(v, x)` for a non-negative `v`).
#[inline(always)]
fn with_sign_of<S: Simd>(s: S, v: S::V, x: S::V) -> S::V {
    s.bitcast_f32(s.ior(s.to_bits(v), s.iand(s.to_bits(x), s.isplat(i32::MIN))))
}

/// The first `|x|` (as an f32) from which the exact `erf(x/√2)` rounds to ±1 in f32
/// (`erfc(x/√2) < 2^-25`): from it on [`gelu_v`] answers `x` above zero and a zero below, as
/// eager's `0.5x·(1 + erf(x/√2))` does (its own first zero is at -5.54304 on its oneDNN path).
const GELU_LIMIT: f32 = 5.542_594;

/// `erfc(t/√2) = P(t - 4.25)` on `3 ≤ t ≤ 5.5426`, the only lanes that use it: a minimax fit
/// of the absolute error (1.9e-8 in exact arithmetic; the values run from 2.7e-3 down to
/// 3.0e-8, and the f32 evaluation, with or without FMA, stays above 1.1e-8 on every float of
/// the range, so `0.5x·c` is below -3e-8 for every negative `x` there: never zero, never
/// positive). `t - 4.25` is exact on the range (Sterbenz).
/// Highest degree first.
const GELU_ERFC_P: [f32; 9] = [
    5.978_442_5e-6,
    -3.443_503e-5,
    9.423_485e-5,
    -1.758_515_3e-4,
    2.522_197_6e-4,
    -2.712_088e-4,
    2.033_181_7e-4,
    -9.546_285_6e-5,
    2.135_885_2e-5,
];
/// The centre of [`GELU_ERFC_P`]'s range.
const GELU_ERFC_MID: f32 = 4.25;

/// `erf(x/√2) = x·P(x²)/Q(x²)` on `|x| < 3` (the common form of [`gelu_v`]): a minimax fit of
/// the absolute error (1.6e-8 in exact arithmetic, 2.4e-7 in f32 with Horner's scheme;
/// coefficients highest degree first, `Q(0) = 1`, `Q`'s positive).
///
/// The range is what makes it short. A fit to the whole `|x| < GELU_LIMIT` needs degrees 7 and 4
/// for an error of the same order, and its eleven multiply-adds kept the division from
/// overlapping them:
/// measured in one process on an AVX2 host (Zen 3), GELU over 12288 values of [-2.5, 2.5] took
/// 3.79 ns per vector with that fit and 2.59 with this one. Lanes with `|x| ≥ 3` take the
/// `erfc` form, which they needed on the negative side anyway.
const GELU_ERF_P: [f32; 5] = [
    8.943_608e-7,
    -1.099_612_1e-5,
    6.301_238e-3,
    3.926_937e-2,
    7.978_847e-1,
];
const GELU_ERF_Q: [f32; 4] = [7.136_611e-4, 1.887_580_8e-2, 2.158_846_1e-1, 1.0];

/// From this `|x|` on, [`gelu_v`] takes the `erfc` form (see [`gelu_tails_v`]).
const GELU_TAIL: f32 = 3.0;

/// [`GELU_ERF_P`] halved (exact: a power of two), so that `0.5x·erf(x/√2) = x²·(P/2)/Q`.
const GELU_ERF_HALF_P: [f32; 5] = {
    let mut p = GELU_ERF_P;
    let mut i = 0;
    while i < p.len() {
        p[i] *= 0.5;
        i += 1;
    }
    p
};

/// `(P/2)(x²)/Q(x²)` of the rational `erf(x/√2) = x·P(x²)/Q(x²)` (absolute error 2.4e-7 on
/// `|x| < GELU_TAIL`), given `x²`: `0.5x·erf(x/√2)` is `x²` times it, in the multiply-add that
/// adds `0.5x`, a multiply and a rounding fewer than `0.5x · (x·P/Q)`. Positive on
/// `|x| < GELU_TAIL`.
#[inline(always)]
fn gelu_half_erf_ratio_v<S: Simd>(s: S, x2: S::V) -> S::V {
    s.div(horner(s, x2, GELU_ERF_HALF_P), horner(s, x2, GELU_ERF_Q))
}

/// [`gelu_v`]'s lanes with `|x| ≥ 3` (`big`) in place of the common form `y` (every zero `+0`),
/// given `0.5x`.
#[inline(always)]
fn gelu_tails_v<S: Simd>(s: S, x: S::V, hx: S::V, big: S::M, y: S::V) -> S::V {
    let zero = s.zero();
    let t = s.abs(x);
    // `|x| ≥ 3`, where the common form's rational does not reach: with `c = erfc(t/√2)` from a
    // polynomial (absolute error 1.9e-8), `gelu = 0.5x·c` below zero and `x - 0.5x·c` above,
    // both to an absolute error under 1e-7·|x| (eager's contract, see [`gelu_v`]). From the
    // limit on, `erf` is ±1 in f32 and `c` 0 (whatever the polynomial made of those lanes).
    let far = s.ge(t, s.splat(GELU_LIMIT));
    let c = horner(s, s.sub(t, s.splat(GELU_ERFC_MID)), GELU_ERFC_P);
    // Never zero below the limit (see [`GELU_ERFC_P`]), so no zero's sign to settle here.
    let below = s.mul(hx, c);
    let above = s.mul_add(s.neg(hx), c, x);
    let tail = s.select(s.lt(x, zero), below, above);
    // From the limit on, `x` above zero (`+inf` included) and `+0` below (NaN at `-inf`), as
    // `0.5x + 0.5x·(±1)` gives.
    let tail = s.select(
        far,
        s.mul_add(hx, with_sign_of(s, s.splat(1.0), x), hx),
        tail,
    );
    // Each lane's form depends on its own value only, never on its neighbours'.
    s.select(big, tail, y)
}

/// GELU (erf form) per lane: `0.5x + 0.5x·erf(x/√2)` as eager writes it. For `|x| < 3`,
/// `erf(x/√2)` is one short rational function (no branch, no `e^x`: [`erf_v`] computes both of
/// its pieces for any vector mixing `|x| < 1` with larger values, which trained activations
/// nearly always are). From `|x| = 3` on, lanes take `0.5x·erfc(|x|/√2)` below zero and
/// `x - 0.5x·erfc(x/√2)` above, with `erfc` a polynomial of `|x|` (no `e^x`, no division).
///
/// The error is absolute, relative to `max(1, |x|)`, everywhere, as eager's: both of its
/// implementations compute `1 + erf(x/√2)` and lose the negative tail's digits to cancelling
/// (measured against float64: relative error 9e-4 at `x ≈ -4`, 0.57 near `x = -5.5`, while
/// the absolute error stays under 1e-7). Keeping those digits would cost an `e^x` and a
/// division per vector that reaches the tail, a third of the vectors of activations of
/// standard deviation 1.5, for a precision eager does not have.
///
/// Zeros come out `+0`; then their signs and `gelu(+inf)` follow `edges`, with only selects and
/// bit operations, the same on every instruction set. From [`GELU_LIMIT`] on, `erf` is ±1:
/// `gelu(x) = x` above (`+inf` included), `+0` below and NaN at `-inf`, as eager. NaN stays NaN.
///
/// A vector computes the `erfc` form, the limit and the edges only when one of its lanes needs
/// them (`|x| ≥ 3`, or a zero result where `edges` give zeros a sign): for activations of
/// ordinary size the rational and one multiply-add are all the work.
#[inline(always)]
pub(crate) fn gelu_v<S: Simd>(s: S, x: S::V, edges: GeluEdges) -> S::V {
    let hx = s.mul(x, s.splat(0.5));
    let x2 = s.mul(x, x);
    // The common form, `0.5x + 0.5x·erf(x/√2)` as `0.5x + x²·(P/2)/Q` in one multiply-add: a
    // zero sum is `+0` (`x²·(P/2)/Q` is never `-0`).
    let y = s.mul_add(x2, gelu_half_erf_ratio_v(s, x2), hx);
    // NaN compares false everywhere: it takes the common form, which keeps it NaN.
    let big = s.ge(s.abs(x), s.splat(GELU_TAIL));
    let mut odd = big;
    if edges.neg_zero_keeps_sign || edges.underflow_is_negative {
        odd = s.mor(odd, s.eq(y, s.zero()));
    }
    if s.bitmask(odd) == 0 {
        return y;
    }
    let y = if s.bitmask(big) == 0 {
        y
    } else {
        gelu_tails_v(s, x, hx, big, y)
    };
    gelu_edges_v(s, x, y, edges)
}

/// `y = gelu(x)` with every zero `+0` and `gelu(+inf) = +inf`, corrected to `edges`.
#[inline(always)]
fn gelu_edges_v<S: Simd>(s: S, x: S::V, mut y: S::V, edges: GeluEdges) -> S::V {
    if edges.neg_zero_keeps_sign || edges.underflow_is_negative {
        // Where `y` is zero, `copysign(0, x)`.
        let signed_zero = with_sign_of(s, y, x);
        let y_zero = s.eq(y, s.zero());
        if edges.neg_zero_keeps_sign && edges.underflow_is_negative {
            // Both: every zero takes `x`'s sign (a zero from a positive `x` keeps its own, as
            // `x`'s sign bit is clear), one select instead of two.
            y = s.select(y_zero, signed_zero, y);
        } else if edges.neg_zero_keeps_sign {
            y = s.select(s.mand(y_zero, s.eq(x, s.zero())), signed_zero, y);
        } else if edges.underflow_is_negative {
            y = s.select(s.mand(y_zero, s.lt(x, s.zero())), signed_zero, y);
        }
    }
    if edges.pos_inf_is_nan {
        y = s.select(s.eq(x, s.splat(f32::INFINITY)), s.splat(f32::NAN), y);
    }
    y
}

/// `max(0, x)` per lane as torch's `clamp_min(x, 0)`: `relu(-0) = -0`, NaN stays.
#[inline(always)]
pub(crate) fn relu_v<S: Simd>(s: S, x: S::V) -> S::V {
    // `max(a, b)` returns `b` on NaN or equality.
    s.max(s.zero(), x)
}

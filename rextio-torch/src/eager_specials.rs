//! Eager behaviour that depends on the host, found out on the host the code runs on.
//!
//! Native results must equal eager's where they run, and for one native op eager's own answer
//! on special values depends on the host: exact `F.gelu` on a float32 CPU tensor. libtorch calls
//! oneDNN for it when libtorch was built with oneDNN, the program has not turned it off
//! (`torch.backends.mkldnn.enabled = False`) and the tensor is contiguous with more than one
//! element (libtorch's `use_mkldnn`); otherwise it runs its own kernel. Measured with torch
//! 2.13.0:
//!
//! | eager path | gelu(-0) | gelu(-9.76) | gelu(+inf) | gelu(-inf) |
//! | --- | --- | --- | --- | --- |
//! | oneDNN, AVX-512 code | -0 | -0 | NaN | NaN |
//! | oneDNN, AVX2 or SSE4.1 code (`ONEDNN_MAX_CPU_ISA=AVX2`, or an AVX2 CPU) | +0 | +0 | +inf | NaN |
//! | torch's own kernel (one element, or oneDNN off) | -0 | -0 | +inf | NaN |
//!
//! So the fused path makes the same decision libtorch makes, on every call (the switch can
//! change between calls), and takes each path's answers from a probe (`runtime::eager_host`): the first time a path is
//! needed in a process, eager GELU runs through libtorch on a vector of the disputed inputs
//! (oneDNN's path: one contiguous tensor with each input at several vector lanes and in the
//! tail; torch's path: one-element tensors), and the answers become the kernels'
//! [`k::GeluEdges`]. The probe then runs the native kernel with those edges on the same inputs
//! and on ordinary values and keeps the edges only if every answer agrees with eager's
//! (specials bit for bit, other values within certify's tolerance). A probe that disagrees,
//! fails, or sees an answer outside this model yields `None`, and the fused path declines the
//! call: the per-op path runs libtorch's own GELU, which is eager.
//!
//! Every other native op was audited for the same kind of dependence: with `ONEDNN_VERBOSE=1`
//! on an AVX-512 host, of torch's float32 linear, matmul, softmax, log_softmax, layer_norm,
//! gelu, silu and tanh only GELU reaches oneDNN; the rest run libtorch's own kernels (or
//! MKL/BLAS for products, whose answers differ between hosts only in rounding, within the
//! tolerance, never in special values).

use rextio_fusion::kernels as k;

/// The inputs whose answers differ between eager's paths.
pub const DISPUTED: [f32; 5] = [-0.0, -9.76, -20.0, -1e30, f32::INFINITY];
/// Inputs every path must answer alike (checked, not derived): `-inf`, NaN, `+0`, tiny and
/// ordinary values.
const AGREED: [f32; 11] = [
    f32::NEG_INFINITY,
    f32::NAN,
    0.0,
    1e-45,
    -1e-45,
    -1.0,
    1.0,
    -3.0,
    3.0,
    0.5,
    -5.0,
];

/// The probe's inputs: the disputed ones, then the agreed ones.
pub fn probe_values() -> Vec<f32> {
    DISPUTED.iter().chain(&AGREED).copied().collect()
}

/// Certify's tolerance for ordinary values.
const RTOL: f32 = 1e-5;
const ATOL: f32 = 1e-6;

/// The edges eager's answers `ys` on `xs` show, if they fit the model and the native kernel
/// with those edges reproduces every answer.
pub fn edges_of(xs: &[f32], ys: &[f32]) -> Option<k::GeluEdges> {
    if xs.len() != ys.len() {
        return None;
    }
    // One answer per distinct input (bitwise), or the path is not deterministic enough to model.
    let answer = |x: f32| -> Option<f32> {
        let mut it = xs
            .iter()
            .zip(ys)
            .filter(|(a, _)| a.to_bits() == x.to_bits())
            .map(|(_, y)| *y);
        let first = it.next()?;
        it.all(|y| y.to_bits() == first.to_bits() || (y.is_nan() && first.is_nan()))
            .then_some(first)
    };
    let zero_sign = |y: f32| (y == 0.0).then_some(y.is_sign_negative());
    let neg_zero_keeps_sign = zero_sign(answer(-0.0)?)?;
    let underflow_is_negative = zero_sign(answer(-9.76)?)?;
    let pos_inf = answer(f32::INFINITY)?;
    let pos_inf_is_nan = if pos_inf.is_nan() {
        true
    } else if pos_inf == f32::INFINITY {
        false
    } else {
        return None;
    };
    let edges = k::GeluEdges {
        neg_zero_keeps_sign,
        underflow_is_negative,
        pos_inf_is_nan,
    };
    let mut native = vec![0.0f32; xs.len()];
    k::unary(k::Unary::Gelu(edges), xs, &mut native).ok()?;
    xs.iter()
        .zip(ys)
        .zip(&native)
        .all(|((&x, &e), &n)| agrees(x, e, n))
        .then_some(edges)
}

/// Whether the native answer `n` to `x` is eager's `e` as certify compares them: specials
/// (NaN, infinities, zeros with their sign, and every disputed input) exactly, other values
/// within tolerance.
fn agrees(x: f32, e: f32, n: f32) -> bool {
    if e.is_nan() || n.is_nan() {
        return e.is_nan() && n.is_nan();
    }
    if e.is_infinite() || e == 0.0 || DISPUTED.iter().any(|d| d.to_bits() == x.to_bits()) {
        return e.to_bits() == n.to_bits();
    }
    (n - e).abs() <= ATOL + RTOL * e.abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAN: f32 = f32::NAN;
    const INF: f32 = f32::INFINITY;

    /// Eager's answers in torch 2.13.0's three observed behaviours, on `probe_values()`.
    fn answers(zero: f32, pos_inf: f32) -> Vec<f32> {
        vec![
            zero,
            zero,
            zero,
            zero,
            pos_inf,
            NAN,
            NAN,
            0.0,
            0.0,
            zero,
            -0.158_655_28,
            0.841_344_7,
            -0.004_049_71,
            2.995_950_2,
            0.345_731_14,
            -1.490_116_1e-6,
        ]
    }

    #[test]
    fn each_observed_eager_behaviour_gives_its_edges() {
        let xs = probe_values();
        assert_eq!(
            edges_of(&xs, &answers(-0.0, NAN)),
            Some(k::GeluEdges {
                neg_zero_keeps_sign: true,
                underflow_is_negative: true,
                pos_inf_is_nan: true,
            })
        );
        assert_eq!(
            edges_of(&xs, &answers(0.0, INF)),
            Some(k::GeluEdges::SUM_FORM)
        );
        assert_eq!(
            edges_of(&xs, &answers(-0.0, INF)),
            Some(k::GeluEdges::PRODUCT_FORM)
        );
    }

    #[test]
    fn answers_outside_the_model_give_none() {
        let xs = probe_values();
        // gelu(+inf) neither +inf nor NaN.
        assert_eq!(edges_of(&xs, &answers(0.0, 1.0)), None);
        // gelu(-0) not a zero.
        let mut ys = answers(0.0, INF);
        ys[0] = 1e-30;
        assert_eq!(edges_of(&xs, &ys), None);
        // The underflowing inputs disagree on the sign of zero.
        let mut ys = answers(0.0, INF);
        ys[2] = -0.0;
        assert_eq!(edges_of(&xs, &ys), None);
        // gelu(-inf) not NaN.
        let mut ys = answers(0.0, INF);
        ys[5] = 0.0;
        assert_eq!(edges_of(&xs, &ys), None);
        // An ordinary value off by more than the tolerance.
        let mut ys = answers(0.0, INF);
        ys[11] = 0.8414;
        assert_eq!(edges_of(&xs, &ys), None);
        // Two copies of one input answered differently (vector body and tail disagree).
        let mut xs2 = xs.clone();
        xs2.extend_from_slice(&xs);
        let mut ys2 = answers(0.0, INF);
        ys2.extend(answers(-0.0, INF));
        assert_eq!(edges_of(&xs2, &ys2), None);
        // Lengths that differ.
        assert_eq!(edges_of(&xs, &ys[..3]), None);
    }
}

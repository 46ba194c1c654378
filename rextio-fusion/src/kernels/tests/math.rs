//! Error bounds of the vectorised math over dense sweeps, and torch's edge values.

// torch's results are written as Python printed them: the f64 digits of the f32 value.
#![allow(clippy::excessive_precision)]

use super::super::{elu, erf, exp, log, sigmoid, tanh, unary, GeluEdges, Unary};
use super::{close, each_isa, erf_f64, same};

/// An order-preserving integer key of a float (`-0` and `+0` adjacent).
fn key(x: f32) -> i64 {
    let b = i64::from(x.to_bits() & 0x7fff_ffff);
    if x.is_sign_negative() {
        -b - 1
    } else {
        b
    }
}

fn from_key(k: i64) -> f32 {
    if k < 0 {
        -f32::from_bits((-k - 1) as u32)
    } else {
        f32::from_bits(k as u32)
    }
}

/// About `count` floats from `lo` to `hi`, evenly spaced in bit-pattern order (so every binade
/// gets its share, down to the subnormals), plus both ends.
fn sweep(lo: f32, hi: f32, count: usize) -> Vec<f32> {
    let (a, b) = (key(lo), key(hi));
    let step = ((b - a) / count as i64).max(1);
    let mut v: Vec<f32> = (0..)
        .map(|i| a + i * step)
        .take_while(|&k| k <= b)
        .map(from_key)
        .collect();
    v.push(hi);
    v
}

/// Every float from `lo` to `hi` (keep the range small).
fn all_between(lo: f32, hi: f32) -> Vec<f32> {
    (key(lo)..=key(hi)).map(from_key).collect()
}

#[derive(Debug, Default, Clone, Copy)]
struct Errors {
    max_abs: f64,
    at_abs: f32,
    max_rel: f64,
    at_rel: f32,
}

/// The largest absolute error (where `abs_if`) and relative error (where `rel_if`) of `op`
/// against `reference` over `xs`, skipping points whose reference is not finite.
fn measure(
    op: Unary,
    xs: &[f32],
    reference: impl Fn(f64) -> f64,
    abs_if: impl Fn(f32, f64) -> bool,
    rel_if: impl Fn(f32, f64) -> bool,
) -> Errors {
    let mut ys = vec![0.0; xs.len()];
    unary(op, xs, &mut ys).unwrap();
    let mut e = Errors::default();
    for (&x, &y) in xs.iter().zip(&ys) {
        let want = reference(f64::from(x));
        if !want.is_finite() || (want as f32).is_infinite() {
            // Beyond f32's range the result must be the infinity the reference rounds to.
            assert!(want.is_nan() || y == want as f32, "{op:?}({x:e}) = {y}");
            continue;
        }
        let abs = (f64::from(y) - want).abs();
        assert!(!abs.is_nan(), "{op:?}({x:e}) = {y} (want {want})");
        if abs_if(x, want) && abs > e.max_abs {
            e.max_abs = abs;
            e.at_abs = x;
        }
        if rel_if(x, want) && want != 0.0 {
            let rel = abs / want.abs();
            if rel > e.max_rel {
                e.max_rel = rel;
                e.at_rel = x;
            }
        }
    }
    e
}

const MIN_NORMAL: f64 = f32::MIN_POSITIVE as f64;
/// The smallest subnormal, 2^-149.
const MIN_SUB: f64 = 1.401_298_464_324_817e-45;

fn yes(_: f32, _: f64) -> bool {
    true
}

/// Sweep points for a function over `[lo, hi]`: a coarse sweep of the range and every float of
/// `[-dense, dense]`'s stride-16 neighbourhood around the critical region.
fn points(lo: f32, hi: f32) -> Vec<f32> {
    let mut xs = sweep(lo, hi, 1 << 19);
    xs.extend(sweep(-2.0, 2.0, 1 << 18));
    xs
}

/// The documented bounds (see the doc comments of `exp`, `log`, `tanh`, `sigmoid`, `erf` and of
/// `Unary::Gelu`/`Unary::Silu`), asserted on every ISA.
#[test]
fn math_error_bounds_hold_on_every_isa() {
    each_isa(|isa| {
        let mut report = Vec::new();
        // exp: relative for normal results, at most one subnormal unit below.
        let xs = points(-110.0, 90.0);
        let e = measure(
            Unary::Exp,
            &xs,
            f64::exp,
            |_, w| w < MIN_NORMAL,
            |_, w| w >= MIN_NORMAL,
        );
        report.push(("exp", e));
        assert!(e.max_rel <= 1.0e-7, "{isa:?} exp {e:?}");
        assert!(e.max_abs <= MIN_SUB, "{isa:?} exp subnormal {e:?}");

        // log: absolute where |log x| < 1, relative elsewhere; all positive floats.
        let mut xs = sweep(f32::from_bits(1), f32::MAX, 1 << 19);
        xs.extend(sweep(0.3, 3.0, 1 << 18));
        xs.extend(all_between(0.999, 1.001));
        let e = measure(
            Unary::Log,
            &xs,
            f64::ln,
            |_, w| w.abs() < 1.0,
            |_, w| w.abs() >= 1.0,
        );
        report.push(("log", e));
        assert!(
            e.max_abs <= 6.0e-8 && e.max_rel <= 1.0e-7,
            "{isa:?} log {e:?}"
        );

        // tanh: absolute everywhere, relative from 2^-10.
        let mut xs = points(-20.0, 20.0);
        xs.extend(sweep(-0.0005, 0.0005, 1 << 18));
        let e = measure(Unary::Tanh, &xs, f64::tanh, yes, |x, _| {
            x.abs() >= 1.0 / 1024.0
        });
        report.push(("tanh", e));
        assert!(
            e.max_abs <= 4.0e-7 && e.max_rel <= 4.0e-7,
            "{isa:?} tanh {e:?}"
        );
        // The wide form alone (`|x| ≥ 4`): within 6e-8 (half an ulp below 1 is 3e-8), and
        // exactly ±1 wherever tanh rounds to ±1 in f32 (from 9.0109 on, infinities included).
        let xs: Vec<f32> = points(-40.0, 40.0)
            .into_iter()
            .filter(|x| x.abs() >= 4.0)
            .collect();
        let e = measure(Unary::Tanh, &xs, f64::tanh, yes, yes);
        report.push(("tanh-wide", e));
        assert!(
            e.max_abs <= 6.0e-8 && e.max_rel <= 6.0e-8,
            "{isa:?} tanh, |x| >= 4 {e:?}"
        );
        let ones = [9.011, 9.5, 20.0, 1e30, f32::MAX, f32::INFINITY];
        let xs: Vec<f32> = ones.iter().flat_map(|&x| [x, -x]).collect();
        let mut ys = vec![0.0; xs.len()];
        unary(Unary::Tanh, &xs, &mut ys).unwrap();
        for (x, y) in xs.iter().zip(&ys) {
            assert_eq!(*y, x.signum(), "{isa:?} tanh({x:e}) rounds to ±1");
        }

        // sigmoid: relative where the result is normal.
        let xs = points(-100.0, 100.0);
        let sig = |x: f64| 1.0 / (1.0 + (-x).exp());
        let e = measure(Unary::Sigmoid, &xs, sig, yes, |x, w| {
            w >= MIN_NORMAL && x > -88.0
        });
        report.push(("sigmoid", e));
        assert!(
            e.max_rel <= 1.6e-7 && e.max_abs <= 1.0e-7,
            "{isa:?} sigmoid {e:?}"
        );

        // erf: absolute everywhere, relative for 1e-30 <= |x| < 1.
        let xs = points(-8.0, 8.0);
        let e = measure(Unary::Erf, &xs, erf_f64, yes, |x, _| {
            (1e-30..1.0).contains(&x.abs())
        });
        report.push(("erf", e));
        assert!(
            e.max_abs <= 1.6e-7 && e.max_rel <= 2.0e-7,
            "{isa:?} erf {e:?}"
        );

        // gelu: absolute error relative to max(1, |x|), densest where erf(x/√2) nears ±1.
        let mut xs = points(-20.0, 20.0);
        xs.extend(sweep(-6.0, -3.0, 1 << 18));
        xs.extend(sweep(3.0, 6.0, 1 << 18));
        let gelu = |x: f64| 0.5 * x * (1.0 + erf_f64(x / std::f64::consts::SQRT_2));
        let mut ys = vec![0.0; xs.len()];
        unary(Unary::Gelu(GeluEdges::PRODUCT_FORM), &xs, &mut ys).unwrap();
        let (worst, at) = xs
            .iter()
            .zip(&ys)
            .map(|(&x, &y)| {
                let xd = f64::from(x);
                ((f64::from(y) - gelu(xd)).abs() / xd.abs().max(1.0), x)
            })
            .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
        report.push((
            "gelu",
            Errors {
                max_abs: worst,
                at_abs: at,
                ..Default::default()
            },
        ));
        assert!(worst <= 2.5e-7, "{isa:?} gelu {worst:e}");

        // gelu's negative tail, down to eager's last nonzero value: the error is absolute, as
        // eager's (checked above), but the values stay negative, never zero or positive, so a
        // zero's sign is only ever the edges' business. Relative error reported for reference.
        let xs = sweep(-5.54, -3.0, 1 << 18);
        let mut ys = vec![0.0; xs.len()];
        unary(Unary::Gelu(GeluEdges::SUM_FORM), &xs, &mut ys).unwrap();
        for (&x, &y) in xs.iter().zip(&ys) {
            assert!(y < 0.0, "{isa:?} gelu({x:e}) = {y:e}");
        }
        let e = measure(
            Unary::Gelu(GeluEdges::PRODUCT_FORM),
            &xs,
            gelu,
            |_, _| false,
            yes,
        );
        report.push(("gelu-tail", e));

        // silu: relative (down to -88, below which torch's formula gives -0).
        let xs = points(-100.0, 100.0);
        let silu = |x: f64| x / (1.0 + (-x).exp());
        let e = measure(
            Unary::Silu,
            &xs,
            silu,
            |_, _| false,
            |x, w| x > -88.0 && w.abs() >= MIN_NORMAL,
        );
        report.push(("silu", e));
        assert!(e.max_rel <= 2.0e-7, "{isa:?} silu {e:?}");

        // elu (torch's): relative where the result is normal, through the switch at ln2/2.
        let mut xs = points(-110.0, 20.0);
        xs.extend(sweep(-0.36, -0.33, 1 << 16));
        xs.extend(sweep(-1e-3, 0.0, 1 << 16));
        let elu = |x: f64| if x >= 0.0 { x } else { x.exp_m1() };
        let e = measure(
            Unary::Elu,
            &xs,
            elu,
            |_, _| false,
            |_, w| w.abs() >= MIN_NORMAL,
        );
        report.push(("elu", e));
        assert!(e.max_rel <= 2.0e-7, "{isa:?} elu {e:?}");

        // elu (TensorFlow's `exp(x) - 1`): absolute against that formula with a correctly
        // rounded float32 exp (both round e^x once; the subtraction of 1 is exact near zero).
        let xs = points(-110.0, 20.0);
        let tf_elu = |x: f64| {
            if x < 0.0 {
                f64::from((x.exp() as f32) - 1.0)
            } else {
                x
            }
        };
        let e = measure(Unary::EluExpMinusOne, &xs, tf_elu, yes, |_, _| false);
        report.push(("elu-tf", e));
        assert!(e.max_abs <= 1.2e-7, "{isa:?} elu-tf {e:?}");

        for (name, e) in report {
            println!(
                "{:>9} {name:>8}: max abs {:.3e} (x = {:e}), max rel {:.3e} (x = {:e})",
                isa.name(),
                e.max_abs,
                e.at_abs,
                e.max_rel,
                e.at_rel
            );
        }
    });
}

/// One torch edge table: inputs and what `torch.<op>(torch.tensor(inputs))` returned (float32,
/// both through torch's vectorised body and its scalar tail unless noted).
fn check_edges(op: Unary, table: &[(f32, f32)]) {
    each_isa(|isa| {
        // Both as a full vector and as a ragged tail.
        for pad in [0, 1, 17] {
            let xs: Vec<f32> = table
                .iter()
                .map(|e| e.0)
                .chain(std::iter::repeat_n(0.5, pad))
                .collect();
            let mut ys = vec![0.0; xs.len()];
            unary(op, &xs, &mut ys).unwrap();
            for (&(x, want), &got) in table.iter().zip(&ys) {
                let ok = if want.is_nan() || want.is_infinite() || want == 0.0 {
                    same(got, want)
                } else {
                    close(got, f64::from(want), 1e-5, 1e-6)
                };
                assert!(ok, "{isa:?} {op:?}({x:e}) = {got:e}, torch gives {want:e}");
            }
        }
    });
}

const NAN: f32 = f32::NAN;
const INF: f32 = f32::INFINITY;

#[test]
fn relu_edges_match_torch() {
    // torch.relu(torch.tensor([-0.0, 0.0, nan, inf, -inf, -1.0]))
    check_edges(
        Unary::Relu,
        &[
            (-0.0, -0.0),
            (0.0, 0.0),
            (NAN, NAN),
            (INF, INF),
            (-INF, 0.0),
            (-1.0, 0.0),
        ],
    );
}

#[test]
fn relu_plus_zero_edges_match_tensorflow() {
    // tf.nn.relu(tf.constant([-0.0, 0.0, nan, inf, -inf, -1.0])) on TensorFlow 2.21
    check_edges(
        Unary::ReluPlusZero,
        &[
            (-0.0, 0.0),
            (0.0, 0.0),
            (NAN, NAN),
            (INF, INF),
            (-INF, 0.0),
            (-1.0, 0.0),
        ],
    );
}

#[test]
fn tanh_edges_match_torch() {
    check_edges(
        Unary::Tanh,
        &[
            (-0.0, -0.0),
            (0.0, 0.0),
            (NAN, NAN),
            (INF, 1.0),
            (-INF, -1.0),
            (-1.0, -0.761_594_176_292_419_4),
            (9.0, 0.999_999_94),
            (-8.0, -0.999_999_76),
            (20.0, 1.0),
            (-20.0, -1.0),
            (1e-30, 1e-30),
        ],
    );
}

#[test]
fn sigmoid_edges_match_torch() {
    check_edges(
        Unary::Sigmoid,
        &[
            (-0.0, 0.5),
            (0.0, 0.5),
            (NAN, NAN),
            (INF, 1.0),
            (-INF, 0.0),
            (-1.0, 0.268_941_432_237_625_1),
            (-100.0, 0.0),
            (-88.0, 6.054_601_485_195_952e-39),
            (-87.0, 1.645_811_453_754_393_7e-38),
            (100.0, 1.0),
        ],
    );
}

#[test]
fn exp_edges_match_torch() {
    check_edges(
        Unary::Exp,
        &[
            (-0.0, 1.0),
            (0.0, 1.0),
            (NAN, NAN),
            (INF, INF),
            (-INF, 0.0),
            (-1.0, 0.367_879_450_321_197_5),
            (-100.0, 3.783_505_853_677_006e-44),
            (-104.0, 0.0),
            (-103.0, 1.401_298_464_324_817e-45),
            (88.8, INF),
            (88.7, 3.325_976_864_406_685e38),
            (-87.5, 9.982_351_397_596_697e-39),
        ],
    );
    // Subnormal results are rounded once: exactly torch's values above.
    each_isa(|isa| {
        let mut y = [0.0; 3];
        exp(&[-100.0, -103.0, -87.5], &mut y).unwrap();
        assert_eq!(
            y,
            [
                3.783_505_853_677_006e-44,
                1.401_298_464_324_817e-45,
                9.982_351_397_596_697e-39
            ],
            "{isa:?}"
        );
    });
}

#[test]
fn log_edges_match_torch() {
    check_edges(
        Unary::Log,
        &[
            (-0.0, -INF),
            (0.0, -INF),
            (NAN, NAN),
            (INF, INF),
            (-INF, NAN),
            (-1.0, NAN),
            (1e-40, -92.103_408_813_476_56),
            (-1e-40, NAN),
            (1.0, 0.0),
        ],
    );
}

#[test]
fn sqrt_abs_neg_square_edges_match_torch() {
    let v = [-0.0, 0.0, NAN, INF, -INF, -1.0];
    check_edges(
        Unary::Sqrt,
        &v.map(|x| (x, [-0.0, 0.0, NAN, INF, NAN, NAN][key_of(x, &v)])),
    );
    check_edges(
        Unary::Abs,
        &v.map(|x| (x, [0.0, 0.0, NAN, INF, INF, 1.0][key_of(x, &v)])),
    );
    check_edges(
        Unary::Neg,
        &v.map(|x| (x, [0.0, -0.0, NAN, -INF, INF, 1.0][key_of(x, &v)])),
    );
    check_edges(
        Unary::Square,
        &v.map(|x| (x, [0.0, 0.0, NAN, INF, INF, 1.0][key_of(x, &v)])),
    );
}

/// The index of `x` in `v` (bitwise, so `-0`, `+0` and NaN are told apart).
fn key_of(x: f32, v: &[f32]) -> usize {
    v.iter().position(|y| y.to_bits() == x.to_bits()).unwrap()
}

#[test]
fn gelu_edges_follow_the_edges_asked_for() {
    // Every combination of the three edges, on every ISA: the values eager's implementations
    // agree on are the same in all of them (torch 2.13.0: -1 -> -0.15865529, -5 -> -1.49e-6).
    for neg_zero_keeps_sign in [false, true] {
        for underflow_is_negative in [false, true] {
            for pos_inf_is_nan in [false, true] {
                let edges = GeluEdges {
                    neg_zero_keeps_sign,
                    underflow_is_negative,
                    pos_inf_is_nan,
                };
                let sign = |neg: bool| if neg { -0.0 } else { 0.0 };
                check_edges(
                    Unary::Gelu(edges),
                    &[
                        (-0.0, sign(neg_zero_keeps_sign)),
                        (0.0, 0.0),
                        (1e-45, 0.0),
                        (-1e-45, sign(underflow_is_negative)),
                        (NAN, NAN),
                        (INF, if pos_inf_is_nan { NAN } else { INF }),
                        (-INF, NAN),
                        (-1.0, -0.158_655_285_835_266_1),
                        (-10.0, sign(underflow_is_negative)),
                        (-9.76, sign(underflow_is_negative)),
                        (-1e30, sign(underflow_is_negative)),
                        (-5.0, -1.490_116_119_384_765_6e-6),
                        (3.0, 2.995_950_222_015_381),
                    ],
                );
            }
        }
    }
}

#[test]
fn gelu_edge_presets_are_what_their_formulas_give() {
    // The two named presets are what the formulas they are named after give in f32 (evaluated
    // here in plain scalar Rust, independently of the kernels).
    let product = |x: f32| x * 0.5 * (1.0 + erf_f32_scalar(x * std::f32::consts::FRAC_1_SQRT_2));
    let sum = |x: f32| {
        let h = 0.5 * x;
        h.mul_add(erf_f32_scalar(x * std::f32::consts::FRAC_1_SQRT_2), h)
    };
    for (edges, f) in [
        (GeluEdges::PRODUCT_FORM, &product as &dyn Fn(f32) -> f32),
        (GeluEdges::SUM_FORM, &sum),
    ] {
        assert!(same(
            f(-0.0),
            if edges.neg_zero_keeps_sign { -0.0 } else { 0.0 }
        ));
        assert!(same(
            f(-10.0),
            if edges.underflow_is_negative {
                -0.0
            } else {
                0.0
            }
        ));
        assert_eq!(f(INF).is_nan(), edges.pos_inf_is_nan);
    }
}

/// `erf` of an f32 through f64, for the preset test's scalar formulas (exact at the edges it
/// is used on: `erf(±0) = ±0`, ±1 beyond |x| = 6 and at ±inf).
fn erf_f32_scalar(x: f32) -> f32 {
    if x.is_infinite() {
        return x.signum();
    }
    if x == 0.0 {
        return x;
    }
    erf_f64(f64::from(x)) as f32
}

#[test]
fn silu_edges_match_torch() {
    check_edges(
        Unary::Silu,
        &[
            (-0.0, -0.0),
            (0.0, 0.0),
            (NAN, NAN),
            (INF, INF),
            (-INF, NAN),
            (-1.0, -0.268_941_432_237_625_1),
            (-100.0, -0.0),
            (-90.0, -0.0),
        ],
    );
}

#[test]
fn elu_edges_match_torch() {
    check_edges(
        Unary::Elu,
        &[
            (-0.0, -0.0),
            (0.0, 0.0),
            (NAN, NAN),
            (INF, INF),
            (-INF, -1.0),
            (-1e-8, -1e-8),
            (-1e-40, -1e-40),
            (-1.0, -0.632_120_558_828_557_7),
            (-20.0, -1.0),
            (-1e30, -1.0),
            (3.0, 3.0),
        ],
    );
    // Near zero the result is x itself to the bit, denormals included (torch's expm1).
    each_isa(|isa| {
        let xs = [-1e-8f32, -1e-40, -1e-20, -f32::from_bits(1)];
        let mut ys = [0.0; 4];
        unary(Unary::Elu, &xs, &mut ys).unwrap();
        assert_eq!(ys.map(f32::to_bits), xs.map(f32::to_bits), "{isa:?}");
    });
}

#[test]
fn elu_exp_minus_one_edges_match_tensorflow() {
    check_edges(
        Unary::EluExpMinusOne,
        &[
            (-0.0, -0.0),
            (0.0, 0.0),
            (NAN, NAN),
            (INF, INF),
            (-INF, -1.0),
            // TensorFlow 2.21: exp(-1e-8) rounds to 1, so elu(-1e-8) = +0.
            (-1e-8, 0.0),
            (-1.0, -0.632_120_558_828_557_7),
            (-20.0, -1.0),
            (-1e30, -1.0),
            (3.0, 3.0),
        ],
    );
}

#[test]
fn erf_edges_match_torch() {
    check_edges(
        Unary::Erf,
        &[
            (-0.0, -0.0),
            (0.0, 0.0),
            (NAN, NAN),
            (INF, 1.0),
            (-INF, -1.0),
            (-1.0, -0.842_700_779_438_018_8),
            (1e-5, 1.128_379_153_669_811_8e-5),
            (1e-3, 0.001_128_378_789_871_931),
            (0.1, 0.112_462_915_480_136_87),
            (4.0, 1.0),
            (-3.9, -1.0),
        ],
    );
}

/// The public slice functions are the `Unary` ops, and check lengths.
#[test]
fn math_slice_functions_check_lengths() {
    let x = [0.5f32, -1.0, 2.0];
    let mut y = [0.0; 3];
    let mut z = [0.0; 3];
    for (f, op) in [
        (exp as fn(&[f32], &mut [f32]) -> _, Unary::Exp),
        (log, Unary::Log),
        (tanh, Unary::Tanh),
        (sigmoid, Unary::Sigmoid),
        (erf, Unary::Erf),
        (elu, Unary::Elu),
    ] {
        f(&x, &mut y).unwrap();
        unary(op, &x, &mut z).unwrap();
        assert_eq!(y.map(f32::to_bits), z.map(f32::to_bits));
        assert!(f(&x, &mut [0.0; 2]).is_err());
    }
}

/// The maximum errors over every 16th float of each function's whole domain (ignored: minutes
/// in a debug build; run with `--release --ignored --nocapture`). The documented bounds come
/// from this run.
#[test]
#[ignore = "slow; run in release with --ignored --nocapture"]
fn math_errors_over_all_floats() {
    let stride = std::env::var("REXTIO_KERNELS_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16u32);
    let all = |lo: f32, hi: f32| -> Vec<f32> {
        (key(lo)..=key(hi))
            .step_by(stride as usize)
            .map(from_key)
            .collect()
    };
    each_isa(|isa| {
        let mut rows = Vec::new();
        let xs = all(-104.0, 89.0);
        rows.push((
            "exp",
            measure(
                Unary::Exp,
                &xs,
                f64::exp,
                |_, w| w < MIN_NORMAL,
                |_, w| w >= MIN_NORMAL,
            ),
        ));
        let xs = all(0.0, f32::MAX);
        rows.push((
            "log",
            measure(
                Unary::Log,
                &xs,
                f64::ln,
                |_, w| w.abs() < 1.0,
                |_, w| w.abs() >= 1.0,
            ),
        ));
        let xs = all(-10.0, 10.0);
        rows.push((
            "tanh",
            measure(Unary::Tanh, &xs, f64::tanh, yes, |x, _| {
                x.abs() >= 1.0 / 1024.0
            }),
        ));
        let xs = all(-100.0, 100.0);
        let sig = |x: f64| 1.0 / (1.0 + (-x).exp());
        rows.push((
            "sigmoid",
            measure(Unary::Sigmoid, &xs, sig, yes, |x, w| {
                w >= MIN_NORMAL && x > -88.0
            }),
        ));
        let xs = all(-6.0, 6.0);
        rows.push((
            "erf",
            measure(Unary::Erf, &xs, erf_f64, yes, |x, _| {
                (1e-30..1.0).contains(&x.abs())
            }),
        ));
        let xs = all(-10.0, 10.0);
        let silu = |x: f64| x / (1.0 + (-x).exp());
        rows.push((
            "silu",
            measure(
                Unary::Silu,
                &xs,
                silu,
                |_, _| false,
                |_, w| w.abs() >= MIN_NORMAL,
            ),
        ));
        // gelu: absolute error over max(1, |x|), reported as "abs".
        let mut ys = vec![0.0; xs.len()];
        unary(Unary::Gelu(GeluEdges::PRODUCT_FORM), &xs, &mut ys).unwrap();
        let gelu = |x: f64| 0.5 * x * (1.0 + erf_f64(x / std::f64::consts::SQRT_2));
        let (worst, at) = xs
            .iter()
            .zip(&ys)
            .map(|(&x, &y)| {
                let xd = f64::from(x);
                ((f64::from(y) - gelu(xd)).abs() / xd.abs().max(1.0), x)
            })
            .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
        rows.push((
            "gelu",
            Errors {
                max_abs: worst,
                at_abs: at,
                ..Default::default()
            },
        ));
        for (name, e) in rows {
            println!(
                "{:>9} {name:>8} (1/{stride} of all floats): max abs {:.3e} (x = {:e}), max rel {:.3e} (x = {:e})",
                isa.name(),
                e.max_abs,
                e.at_abs,
                e.max_rel,
                e.at_rel
            );
        }
    });
}

/// Writes inputs and this crate's outputs for every `Unary` op and ISA to
/// `$REXTIO_KERNELS_DUMP/<isa>-<op>.f32` (inputs then outputs, little-endian), for comparison
/// with torch outside Rust. Ignored; does nothing without the variable.
#[test]
#[ignore = "writes files for an external comparison with torch"]
fn dump_for_torch_comparison() {
    let Some(dir) = std::env::var_os("REXTIO_KERNELS_DUMP") else {
        return;
    };
    let mut xs = sweep(-30.0, 30.0, 1 << 20);
    xs.extend(sweep(-3.0, 3.0, 1 << 20));
    xs.extend(sweep(-120.0, 120.0, 1 << 18));
    each_isa(|isa| {
        for op in Unary::ALL {
            let mut ys = vec![0.0; xs.len()];
            unary(op, &xs, &mut ys).unwrap();
            let bytes: Vec<u8> = xs.iter().chain(&ys).flat_map(|v| v.to_le_bytes()).collect();
            let path = std::path::Path::new(&dir).join(format!("{}-{op:?}.f32", isa.name()));
            std::fs::write(path, bytes).unwrap();
        }
    });
}

/// `exp_v` and `exp_normal_v` lane by lane over a slice (whole vectors only).
struct ExpBoth<'a>(&'a [f32]);

impl super::super::Kernel for ExpBoth<'_> {
    type Out = (Vec<f32>, Vec<f32>);
    #[inline(always)]
    fn run<S: super::super::simd::Simd>(self, s: S) -> (Vec<f32>, Vec<f32>) {
        let xs = self.0;
        let (mut full, mut normal) = (vec![0.0; xs.len()], vec![0.0; xs.len()]);
        for i in (0..xs.len() - xs.len() % S::LANES).step_by(S::LANES) {
            let x = s.load(&xs[i..]);
            s.store(&mut full[i..], super::super::math::exp_v(s, x));
            s.store(&mut normal[i..], super::super::math::exp_normal_v(s, x));
        }
        (full, normal)
    }
}

#[test]
fn exp_without_clamp_has_exps_bits_where_its_result_is_normal() {
    // erf's `e^-x²` (arguments in [-16, -1]) takes the shorter form; it must not change a bit.
    let mut xs = sweep(-87.0, 88.0, 1 << 20);
    xs.extend(all_between(-16.0, -15.999));
    xs.extend([f32::NAN, -0.0, 0.0, -87.0, 88.0]);
    xs.resize(xs.len().next_multiple_of(64), 1.0);
    each_isa(|isa| {
        let (full, normal) = super::super::dispatch(ExpBoth(&xs));
        for ((&x, &a), &b) in xs.iter().zip(&full).zip(&normal) {
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "{isa:?} exp({x:e}): {a:e} and {b:e}"
            );
        }
    });
}

/// `op` over `common` with one of `odd` after every 5 values (a different lane each vector,
/// cycling through `odd`): the results at the common values' places, in order.
fn beside_odd_lanes(op: Unary, common: &[f32], odd: &[f32]) -> Vec<f32> {
    let mut mixed = Vec::new();
    let mut at = Vec::new();
    for (i, chunk) in common.chunks(5).enumerate() {
        for &v in chunk {
            at.push(mixed.len());
            mixed.push(v);
        }
        mixed.push(odd[i % odd.len()]);
    }
    let mut ys = vec![0.0; mixed.len()];
    unary(op, &mixed, &mut ys).unwrap();
    at.into_iter().map(|i| ys[i]).collect()
}

/// tanh computes its wide form only for a vector holding an `|x| ≥ 4`; every lane's result is
/// still its own: values either side of that bound give the same bits whether their vector
/// holds only ordinary values or shares it with wide and special ones, on every ISA.
#[test]
fn tanh_of_a_lane_does_not_depend_on_its_neighbours() {
    let common: Vec<f32> = (0..2000).map(|i| -5.0 + i as f32 * 0.005_01).collect();
    let odd = [4.0, -4.5, 9.0, -20.0, INF, -INF, NAN, 1e-45, -0.0, 7.9];
    each_isa(|isa| {
        let mut alone = vec![0.0; common.len()];
        for (x, y) in common.iter().zip(alone.iter_mut()) {
            // Each value alone in its vector (the rest of it zeros).
            let mut one = [0.0f32; 16];
            one[0] = *x;
            let mut out = [0.0f32; 16];
            unary(Unary::Tanh, &one, &mut out).unwrap();
            *y = out[0];
        }
        let beside = beside_odd_lanes(Unary::Tanh, &common, &odd);
        for ((&x, &want), got) in common.iter().zip(&alone).zip(beside) {
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "{isa:?} tanh({x:e}) beside wide and special lanes"
            );
        }
    });
}

/// GELU computes its tail, limit and edge forms only for a vector holding a lane that needs
/// them; every lane's result is still its own: values of the common range give the same bits
/// whether their vector is all common or shares it with a lane of each special kind, for every
/// edge combination on every ISA.
#[test]
fn gelu_of_a_lane_does_not_depend_on_its_neighbours() {
    let common: Vec<f32> = (0..2000).map(|i| -3.0 + i as f32 * 0.004_27).collect();
    let odd = [-4.0, 6.0, 0.0, -0.0, INF, -INF, NAN, -1e-45, -20.0, 5.6];
    for bits in 0..8u8 {
        let edges = GeluEdges {
            neg_zero_keeps_sign: bits & 1 != 0,
            underflow_is_negative: bits & 2 != 0,
            pos_inf_is_nan: bits & 4 != 0,
        };
        each_isa(|isa| {
            let mut alone = vec![0.0; common.len()];
            unary(Unary::Gelu(edges), &common, &mut alone).unwrap();
            let beside = beside_odd_lanes(Unary::Gelu(edges), &common, &odd);
            for ((&x, &want), got) in common.iter().zip(&alone).zip(beside) {
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{isa:?} {edges:?} gelu({x:e}) beside special lanes"
                );
            }
        });
    }
}
